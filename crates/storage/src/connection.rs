//! The connection pool over either backend, and the transactions every operation runs in.

use crate::live_tasks::{LiveTasks, NotedChanges};
use crate::shared_counts::SharedCounts;
use crate::{is_connection_loss, StorageError, StorageResult};
use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::pg::PgConnection;
use diesel::r2d2::R2D2Connection;
use diesel::sqlite::SqliteConnection;
use diesel::Connection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use r2d2::Pool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");
const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Which database engine a [`Database`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// A connection to either backend. Every query is written once against it: diesel's query builder
/// renders it for the backend underneath, and the few statements that must differ are rendered by
/// [`crate::dialect`].
#[derive(diesel::MultiConnection)]
pub(crate) enum AnyConnection {
    Postgres(PgConnection),
    Sqlite(SqliteConnection),
}

/// Runs `$query` (an expression over `$conn`) on the backend's own connection type rather than on
/// [`AnyConnection`], for the statements on a hot path (a poll's reads). diesel caches a prepared
/// statement by its query's type when the type alone says what the SQL is; a query run through
/// `MultiConnection` does not say, so its SQL is rebuilt as the cache's key on every call, which
/// costs more than the statement itself on SQLite.
macro_rules! on_native_connection {
    ($any:expr, |$conn:ident| $query:expr) => {
        match $any {
            $crate::connection::AnyConnection::Sqlite($conn) => $query,
            $crate::connection::AnyConnection::Postgres($conn) => $query,
        }
    };
}
pub(crate) use on_native_connection;

impl AnyConnection {
    /// The backend underneath.
    pub(crate) fn backend(&self) -> Backend {
        match self {
            AnyConnection::Postgres(_) => Backend::Postgres,
            AnyConnection::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Runs `f` in a transaction opened by `begin` (an SQL `BEGIN ...` of this backend), committed
    /// when `f` succeeds and rolled back when it fails.
    fn transaction_from<T, E>(&mut self, begin: &str, f: impl FnOnce(&mut Self) -> Result<T, E>) -> Result<T, E>
    where
        E: From<diesel::result::Error>,
    {
        match self {
            AnyConnection::Postgres(conn) => AnsiTransactionManager::begin_transaction_sql(conn, begin)?,
            AnyConnection::Sqlite(conn) => AnsiTransactionManager::begin_transaction_sql(conn, begin)?,
        }
        match f(self) {
            Ok(value) => {
                <Self as Connection>::TransactionManager::commit_transaction(self)?;
                Ok(value)
            }
            Err(error) => {
                // The error that ended the transaction is the one worth reporting; a failed
                // rollback leaves the connection broken, and the pool discards it.
                let _ = <Self as Connection>::TransactionManager::rollback_transaction(self);
                Err(error)
            }
        }
    }
}

/// How long a connection on which a statement just succeeded is handed out again without a ping.
/// A ping is a round trip to the server: on a poll it doubled the trips. A connection lost since
/// (a database restart) fails one statement; every connection whose last success came before that
/// loss is then pinged before its next use.
const TRUSTED_AFTER_SUCCESS: Duration = Duration::from_secs(1);

/// A pooled connection and what the pool knows of its health.
pub(crate) struct PooledConnection {
    conn: AnyConnection,
    /// When a statement last succeeded on it (or it was opened or pinged).
    succeeded_at: Instant,
    /// A statement found the connection gone: the pool discards it.
    lost: bool,
    /// The session setups already run on it (see [`Database::run_after_setup`]).
    set_up: Vec<&'static str>,
    /// On SQLite, the task changes its statements made (see `live_tasks`), and the schema (see
    /// [`Database::schema`]) its triggers that note them were made for (0: none yet).
    task_changes: Option<(Arc<NotedChanges>, u64)>,
}

impl std::ops::Deref for PooledConnection {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for PooledConnection {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

impl PooledConnection {
    /// Records how a statement (or a transaction of them) ended; see [`PooledConnection::record`].
    fn record_query<T>(&mut self, losses: &Losses, result: &diesel::QueryResult<T>) {
        self.record(losses, result.as_ref().map(|_| ()).map_err(is_connection_loss));
    }

    /// Records how a use of the connection ended: `Ok(())` when it succeeded, `Err(lost)` when it
    /// failed, `lost` when the error says the connection is gone. A lost (or broken) connection is
    /// discarded by the pool, which then pings its other connections before their next use.
    fn record(&mut self, losses: &Losses, outcome: Result<(), bool>) {
        match outcome {
            Ok(()) => self.succeeded_at = Instant::now(),
            Err(lost) => {
                self.lost |= lost || self.conn.is_broken();
                if self.lost {
                    losses.record();
                }
            }
        }
    }
}

/// When a connection of a pool was last found gone, so that the pool pings the others.
#[derive(Debug)]
pub(crate) struct Losses {
    /// The origin of `last_micros`.
    origin: Instant,
    /// Microseconds after `origin` (0: never).
    last_micros: AtomicU64,
}

impl Losses {
    fn new() -> Losses {
        Losses { origin: Instant::now(), last_micros: AtomicU64::new(0) }
    }

    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.origin).as_micros()).unwrap_or(u64::MAX).max(1)
    }

    fn record(&self) {
        self.last_micros.store(self.micros(Instant::now()), Ordering::Relaxed);
    }

    /// Whether `conn` may be handed out without a ping: a statement succeeded on it a moment ago,
    /// and no connection of the pool has been found gone since.
    fn trust(&self, conn: &PooledConnection) -> bool {
        let loss = self.last_micros.load(Ordering::Relaxed);
        conn.succeeded_at.elapsed() < TRUSTED_AFTER_SUCCESS && (loss == 0 || self.micros(conn.succeeded_at) > loss)
    }
}

/// Opens connections of one backend for the pool.
#[derive(Debug)]
pub(crate) struct Connector {
    backend: Backend,
    /// A PostgreSQL URL, or a SQLite file's path.
    target: String,
    losses: Arc<Losses>,
}

impl r2d2::ManageConnection for Connector {
    type Connection = PooledConnection;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<PooledConnection, Self::Error> {
        let mut conn = self.open()?;
        let task_changes = match &mut conn {
            AnyConnection::Sqlite(sqlite) => {
                let noted = Arc::new(NotedChanges::default());
                NotedChanges::register(sqlite, noted.clone()).map_err(diesel::r2d2::Error::QueryError)?;
                Some((noted, 0))
            }
            AnyConnection::Postgres(_) => None,
        };
        Ok(PooledConnection { conn, succeeded_at: Instant::now(), lost: false, set_up: Vec::new(), task_changes })
    }

    fn is_valid(&self, conn: &mut PooledConnection) -> Result<(), Self::Error> {
        if self.losses.trust(conn) {
            return Ok(());
        }
        conn.conn.ping().map_err(diesel::r2d2::Error::QueryError)?;
        conn.succeeded_at = Instant::now();
        Ok(())
    }

    fn has_broken(&self, conn: &mut PooledConnection) -> bool {
        std::thread::panicking() || conn.lost || conn.conn.is_broken()
    }
}

impl Connector {
    fn open(&self) -> Result<AnyConnection, diesel::r2d2::Error> {
        match self.backend {
            Backend::Postgres => connect_postgres(&self.target)
                .map(AnyConnection::Postgres)
                .map_err(diesel::r2d2::Error::ConnectionError),
            Backend::Sqlite => {
                let mut conn =
                    SqliteConnection::establish(&self.target).map_err(diesel::r2d2::Error::ConnectionError)?;
                // The busy timeout makes writers queue instead of failing while another connection
                // holds the write lock.
                conn.batch_execute(
                    "PRAGMA busy_timeout = 30000; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
                )
                .map_err(diesel::r2d2::Error::QueryError)?;
                Ok(AnyConnection::Sqlite(conn))
            }
        }
    }
}

/// How long a request waits for a PostgreSQL connection (a free one from the pool, or a new one
/// while the server is away) before it is answered 503.
const POSTGRES_CONNECTION_TIMEOUT: Duration = Duration::from_secs(3);

/// The PostgreSQL advisory lock held while migrations are applied (any number unique to them).
const MIGRATION_LOCK: i64 = 0x6d65_6469_615f_6d69;

/// A pooled handle to the service's database; cheap to clone.
#[derive(Clone)]
pub struct Database {
    pool: Pool<Connector>,
    /// Shared with the pool's connector.
    losses: Arc<Losses>,
    backend: Backend,
    pub(crate) url: std::sync::Arc<str>,
    /// Verified keys, while a listener keeps them true (see [`Database::cache_verified_keys`]).
    pub(crate) key_cache: std::sync::Arc<crate::key_cache::KeyCache>,
    /// On SQLite, the count of key changes every process of the file shares (`shared_counts`); `None`
    /// on PostgreSQL, or if it could not be mapped.
    pub(crate) key_epoch: Option<Arc<SharedCounts>>,
    /// Ended tasks polls read, once [`Database::cache_ended_tasks`] has started keeping them.
    pub(crate) ended_tasks: Arc<crate::ended_tasks::EndedTasks>,
    /// On SQLite, tasks still queued or running that polls read, and the shared counts of task
    /// changes that say whether they still hold; `None` on PostgreSQL, or if the counts could not
    /// be mapped.
    pub(crate) live_tasks: Option<Arc<LiveTasks>>,
    /// Counts the schemas this pool has seen: one more after each run of migrations, whose
    /// tables may be new (a connection's temporary triggers are made again for them).
    schema: Arc<AtomicU64>,
    /// Tells this pool (and its clones) apart from other pools of the process, so that submits
    /// share a transaction only with those of the same pool (see `Database::submit_task`).
    pub(crate) instance: u64,
}

/// The shared count of key changes of the SQLite database at `path`. Without it this process
/// caches no keys, and its key changes reach other processes' caches only as their entries lapse
/// (within a second): worth a warning.
fn open_key_epoch(path: &str) -> Option<Arc<SharedCounts>> {
    match SharedCounts::open(std::path::Path::new(path), "keys", 1) {
        Ok(epoch) => Some(Arc::new(epoch)),
        Err(error) => {
            tracing::warn!(%error, path, "the count of key changes beside the database could not be mapped");
            None
        }
    }
}

/// The live tasks of the SQLite database at `path` (see `live_tasks`). Without their shared counts
/// this process keeps no live tasks, and the task changes it makes reach other processes' polls
/// only as their entries lapse (within a second): worth a warning.
fn open_live_tasks(path: &str) -> Option<Arc<LiveTasks>> {
    match LiveTasks::open(std::path::Path::new(path)) {
        Ok(live) => Some(Arc::new(live)),
        Err(error) => {
            tracing::warn!(%error, path, "the counts of task changes beside the database could not be mapped");
            None
        }
    }
}

/// A connection taken from the pool for one use. When the use ends (and with it any transaction
/// it ran), the task changes its statements made are counted for every process's polls.
pub(crate) struct Checkout<'a> {
    pooled: r2d2::PooledConnection<Connector>,
    live_tasks: Option<&'a LiveTasks>,
}

impl std::ops::Deref for Checkout<'_> {
    type Target = PooledConnection;
    fn deref(&self) -> &PooledConnection {
        &self.pooled
    }
}

impl std::ops::DerefMut for Checkout<'_> {
    fn deref_mut(&mut self) -> &mut PooledConnection {
        &mut self.pooled
    }
}

impl Drop for Checkout<'_> {
    fn drop(&mut self) {
        if let (Some(live), Some((noted, _))) = (self.live_tasks, &self.pooled.task_changes) {
            live.publish(noted);
        }
    }
}

/// The next pool's [`Database::instance`].
static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(0);

impl Database {
    /// Opens a pool for `url` (`sqlite://PATH`, `sqlite:PATH` or `postgres://...`) and applies
    /// pending migrations. For SQLite the file's directory is created when missing.
    pub fn connect(url: &str, max_connections: u32) -> StorageResult<Database> {
        let database = Self::open(url, max_connections)?;
        database.migrate()?;
        Ok(database)
    }

    fn open(url: &str, max_connections: u32) -> StorageResult<Database> {
        let max = max_connections.max(1);
        let backend = Self::backend_of_url(url).ok_or_else(|| StorageError::UnsupportedUrl(url_scheme(url)))?;
        let (target, connection_timeout) = match backend {
            // Short, so a request that meets a database restart is answered 503 within seconds
            // (a restart shorter than this is ridden out), not held for as long as a client waits.
            Backend::Postgres => (url.to_string(), POSTGRES_CONNECTION_TIMEOUT),
            Backend::Sqlite => {
                let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or_default();
                if path.is_empty() {
                    return Err(StorageError::UnsupportedUrl(url_scheme(url)));
                }
                if let Some(dir) = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| StorageError::Migration(format!("{}: {e}", dir.display())))?;
                }
                // WAL lets readers run beside the single writer. The mode is stored in the file, so
                // it is set once here rather than racing from every pooled connection as the pool
                // fills.
                SqliteConnection::establish(path)?.batch_execute("PRAGMA journal_mode = WAL;")?;
                (path.to_string(), Duration::from_secs(30))
            }
        };
        let key_epoch = (backend == Backend::Sqlite).then(|| open_key_epoch(&target)).flatten();
        let live_tasks = (backend == Backend::Sqlite).then(|| open_live_tasks(&target)).flatten();
        let losses = Arc::new(Losses::new());
        let pool = Pool::builder().max_size(max).connection_timeout(connection_timeout).build(Connector {
            backend,
            target,
            losses: losses.clone(),
        })?;
        Ok(Database {
            pool,
            losses,
            backend,
            url: url.into(),
            key_cache: Default::default(),
            key_epoch,
            ended_tasks: Default::default(),
            live_tasks,
            schema: Arc::new(AtomicU64::new(1)),
            instance: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// A connection from the pool, waiting for one (see [`Checkout`]).
    fn checkout(&self) -> StorageResult<Checkout<'_>> {
        Ok(self.prepare(self.pool.get()?))
    }

    /// A connection from the pool if one is idle (see [`Checkout`]).
    fn try_checkout(&self) -> Option<Checkout<'_>> {
        self.pool.try_get().map(|conn| self.prepare(conn))
    }

    /// On SQLite, makes the connection's triggers that note task changes, for the schema
    /// migrations left (a new database's connections open before its tasks table exists); not
    /// when there are no shared counts to publish the changes to.
    fn prepare(&self, mut conn: r2d2::PooledConnection<Connector>) -> Checkout<'_> {
        let schema = self.schema.load(Ordering::Acquire);
        let pooled = &mut *conn;
        let changes = pooled.task_changes.as_mut().filter(|_| self.live_tasks.is_some());
        if let (Some((_, watched)), AnyConnection::Sqlite(sqlite)) = (changes, &mut pooled.conn) {
            if *watched != schema && sqlite.batch_execute(crate::live_tasks::TRIGGERS).is_ok() {
                *watched = schema;
            }
        }
        Checkout { pooled: conn, live_tasks: self.live_tasks.as_deref() }
    }

    /// Applies every pending migration of this backend.
    pub fn migrate(&self) -> StorageResult<()> {
        let mut pooled = self.checkout()?;
        let result = match &mut pooled.conn {
            AnyConnection::Sqlite(conn) => conn.run_pending_migrations(SQLITE_MIGRATIONS).map(|_| ()),
            AnyConnection::Postgres(conn) => {
                // Processes started together (a deploy's api-servers and workers) take turns: the
                // first applies the migrations, the others then find nothing pending.
                conn.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))?;
                let applied = conn.run_pending_migrations(POSTGRES_MIGRATIONS).map(|_| ());
                conn.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))?;
                applied
            }
        };
        pooled.record(&self.losses, result.as_ref().map(|_| ()).map_err(|_| true));
        self.schema.fetch_add(1, Ordering::AcqRel);
        result.map_err(|e| StorageError::Migration(e.to_string()))
    }

    /// Whether the database answers and has every migration this release knows applied: the
    /// number of migrations still pending (0 when ready). Fails when no connection can be had.
    pub fn pending_migrations(&self) -> StorageResult<usize> {
        let mut pooled = self.checkout()?;
        let pending = match &mut pooled.conn {
            AnyConnection::Sqlite(conn) => conn.pending_migrations(SQLITE_MIGRATIONS).map(|m| m.len()),
            AnyConnection::Postgres(conn) => conn.pending_migrations(POSTGRES_MIGRATIONS).map(|m| m.len()),
        };
        // The harness's error does not say whether the connection was lost: a failure is taken
        // as one, so that the next readiness check gets a pinged connection.
        pooled.record(&self.losses, pending.as_ref().map(|_| ()).map_err(|_| true));
        pending.map_err(|e| StorageError::Migration(e.to_string()))
    }

    /// The backend a URL selects, if it is one of ours.
    pub fn backend_of_url(url: &str) -> Option<Backend> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Backend::Postgres)
        } else if url.starts_with("sqlite:") {
            Some(Backend::Sqlite)
        } else {
            None
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The database file, on SQLite; `None` on PostgreSQL.
    pub fn sqlite_file(&self) -> Option<std::path::PathBuf> {
        let path = self.url.strip_prefix("sqlite://").or_else(|| self.url.strip_prefix("sqlite:"))?;
        Some(std::path::PathBuf::from(path))
    }

    /// Runs `f` on a pooled connection if one is idle now, without waiting for one.
    pub(crate) fn read_if_idle<T>(
        &self,
        f: impl FnOnce(&mut AnyConnection) -> diesel::QueryResult<T>,
    ) -> Option<StorageResult<T>> {
        let mut conn = self.try_checkout()?;
        Some(Self::run_read(&mut conn, &self.losses, f))
    }

    /// Runs `f` on a pooled connection, outside an explicit transaction.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&mut AnyConnection) -> diesel::QueryResult<T>) -> StorageResult<T> {
        let mut conn = self.checkout()?;
        Self::run_read(&mut conn, &self.losses, f)
    }

    fn run_read<T>(
        conn: &mut PooledConnection,
        losses: &Losses,
        f: impl FnOnce(&mut AnyConnection) -> diesel::QueryResult<T>,
    ) -> StorageResult<T> {
        let result = f(&mut conn.conn);
        conn.record_query(losses, &result);
        Ok(result?)
    }

    /// Runs `f` on a pooled connection outside an explicit transaction (each statement its own),
    /// after `setup` has run once on that connection: statements that create what lives as long
    /// as the session, such as a function in `pg_temp`.
    pub(crate) fn run_after_setup<T>(
        &self,
        setup: &'static str,
        f: impl FnOnce(&mut AnyConnection) -> diesel::QueryResult<T>,
    ) -> StorageResult<T> {
        let mut conn = self.checkout()?;
        if !conn.set_up.iter().any(|done| std::ptr::eq(*done, setup)) {
            let created = conn.conn.batch_execute(setup);
            conn.record_query(&self.losses, &created);
            created?;
            conn.set_up.push(setup);
        }
        let result = Self::run_read(&mut conn, &self.losses, f);
        // A statement may fail for want of what the setup made (a pooler or a `DISCARD` dropped
        // it while the connection stayed): the connection's next use runs the setup again.
        if result.is_err() {
            conn.set_up.retain(|done| !std::ptr::eq(*done, setup));
        }
        result
    }

    /// Runs `f` in a write transaction (see [`Database::transaction`]).
    pub(crate) fn write<T>(&self, f: impl FnOnce(&mut AnyConnection) -> diesel::QueryResult<T>) -> StorageResult<T> {
        self.transaction(|conn| f(conn).map_err(StorageError::from))
    }

    /// Runs `f` in a write transaction whose error type is the caller's. SQLite transactions begin
    /// `IMMEDIATE`, taking the write lock up front, so a read-then-write never fails with
    /// `SQLITE_BUSY`.
    pub(crate) fn transaction<T, E>(&self, f: impl FnOnce(&mut AnyConnection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<diesel::result::Error> + From<StorageError>,
    {
        let mut conn = self.checkout()?;
        let begin = match conn.backend() {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres => "BEGIN",
        };
        let result = conn.conn.transaction_from(begin, f);
        // The caller's error type says nothing of the connection; a lost one is left broken by
        // diesel (its transaction state unknown), which `record` looks at.
        conn.record(&self.losses, result.as_ref().map(|_| ()).map_err(|_| false));
        result
    }

    /// Runs `f` in a read-only transaction that sees one snapshot of the database, for reports
    /// that read several tables while others write.
    pub(crate) fn snapshot<T>(&self, f: impl FnOnce(&mut AnyConnection) -> diesel::QueryResult<T>) -> StorageResult<T> {
        let mut conn = self.checkout()?;
        // A SQLite read transaction keeps the snapshot of its first read until it ends.
        let begin = match conn.backend() {
            Backend::Sqlite => "BEGIN",
            Backend::Postgres => "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        };
        let result = conn.conn.transaction_from(begin, f);
        conn.record_query(&self.losses, &result);
        Ok(result?)
    }
}

/// Connects to PostgreSQL at `url`. A libpq built with GSSAPI tries GSSAPI encryption first
/// unless told otherwise, which loads Kerberos, and Kerberos aborts the process when it exits
/// while another thread is still connecting (a pool refilling during an outage). The libpq
/// compiled in has no GSSAPI, and the service authenticates with passwords or trust, so GSSAPI
/// encryption is off unless the URL asks for it with `gssencmode`. Likewise a
/// server on this machine (loopback, or a Unix socket) is reached without TLS unless the URL sets
/// `sslmode`: TLS protects nothing there, and OpenSSL's clean-up at exit crashes a thread that is
/// still negotiating it.
pub(crate) fn connect_postgres(url: &str) -> diesel::ConnectionResult<PgConnection> {
    PgConnection::establish(&postgres_url(url))
}

/// `url` with the connection settings every connection of the service uses added where the URL
/// does not set them: no GSSAPI negotiation, and no TLS to a server on this machine.
pub(crate) fn postgres_url(url: &str) -> String {
    let mut settings = Vec::new();
    if !url.contains("gssencmode=") {
        settings.push("gssencmode=disable");
    }
    if !url.contains("sslmode=") && is_local_server(url) {
        settings.push("sslmode=disable");
    }
    if settings.is_empty() {
        return url.to_string();
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{}", settings.join("&"))
}

/// Whether a PostgreSQL URL names a server on this machine: a loopback host, or none (a Unix
/// socket).
pub(crate) fn is_local_server(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else { return false };
    match parsed.host() {
        None => true,
        // `postgres:` is not a scheme the URL standard knows, so its addresses come as names.
        Some(url::Host::Domain(name)) => {
            name == "localhost"
                || name.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|a| a.is_loopback())
        }
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
    }
}

/// The scheme of a database URL, for errors: the rest may hold credentials.
fn url_scheme(url: &str) -> String {
    url.split_once(':').map_or("(none)", |(scheme, _)| scheme).chars().take(32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_servers_on_this_machine_skip_tls() {
        for local in
            ["postgres://u@127.0.0.1:5432/db", "postgres://u@localhost/db", "postgres://u@[::1]/db", "postgres:///db"]
        {
            assert!(is_local_server(local), "{local}");
        }
        for remote in ["postgres://u@db.example.com/db", "postgres://u@10.0.0.5/db", "not a url"] {
            assert!(!is_local_server(remote), "{remote}");
        }
    }

    /// What `run_after_setup` makes lives as long as the session; the claim's function is made
    /// this way. A `DISCARD TEMP` (run by a pooler between clients, or by hand) drops it while the
    /// connection stays: the next statement that needs it fails once, and the one after makes it
    /// again.
    #[test]
    fn a_session_function_dropped_by_discard_is_made_again() {
        static SETUP: &str = "CREATE FUNCTION pg_temp.answer() RETURNS integer LANGUAGE sql AS 'SELECT 42'";
        let test = crate::test_support::TestDatabase::postgres().expect("a test database");
        // One connection, so that every call below meets the one the discard ran on.
        let db = Database::connect(&test.url, 1).expect("a pool of one");
        let call = |conn: &mut AnyConnection| conn.batch_execute("SELECT pg_temp.answer()");
        db.run_after_setup(SETUP, call).expect("made and called");
        // `CREATE FUNCTION` fails when the function exists, so this shows the setup ran once.
        db.run_after_setup(SETUP, call).expect("called again without being made again");
        db.read(|conn| conn.batch_execute("DISCARD TEMP")).expect("the discard");
        assert!(db.run_after_setup(SETUP, call).is_err(), "the function is gone after the discard");
        db.run_after_setup(SETUP, call).expect("made again after the failure, and called");
    }
}
