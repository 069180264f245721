//! Connection pools for both backends and the macros that run one operation on either.

use crate::{StorageError, StorageResult};
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel::sqlite::SqliteConnection;
use diesel::Connection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use std::time::Duration;

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

#[derive(Clone)]
pub(crate) enum Pools {
    Sqlite(Pool<ConnectionManager<SqliteConnection>>),
    Postgres(Pool<ConnectionManager<PgConnection>>),
}

/// A pooled handle to the service's database; cheap to clone.
#[derive(Clone)]
pub struct Database {
    pub(crate) pools: Pools,
    pub(crate) url: std::sync::Arc<str>,
}

#[derive(Debug)]
struct SqlitePragmas;

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        // The busy timeout makes writers queue instead of failing while another connection holds
        // the write lock.
        conn.batch_execute("PRAGMA busy_timeout = 30000; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(diesel::r2d2::Error::QueryError)
    }
}

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
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = Pool::builder()
                .max_size(max)
                .connection_timeout(Duration::from_secs(10))
                .build(ConnectionManager::<PgConnection>::new(url))?;
            return Ok(Database { pools: Pools::Postgres(pool), url: url.into() });
        }
        let path = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .ok_or_else(|| StorageError::UnsupportedUrl(url_scheme(url)))?;
        if path.is_empty() {
            return Err(StorageError::UnsupportedUrl(url_scheme(url)));
        }
        if let Some(dir) = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StorageError::Migration(format!("{}: {e}", dir.display())))?;
        }
        // WAL lets readers run beside the single writer. The mode is stored in the file, so it is
        // set once here rather than racing from every pooled connection as the pool fills.
        SqliteConnection::establish(path)?.batch_execute("PRAGMA journal_mode = WAL;")?;
        let pool = Pool::builder()
            .max_size(max)
            .connection_timeout(Duration::from_secs(30))
            .connection_customizer(Box::new(SqlitePragmas))
            .build(ConnectionManager::<SqliteConnection>::new(path))?;
        Ok(Database { pools: Pools::Sqlite(pool), url: url.into() })
    }

    /// Applies every pending migration of this backend.
    pub fn migrate(&self) -> StorageResult<()> {
        let result = match &self.pools {
            Pools::Sqlite(pool) => pool.get()?.run_pending_migrations(SQLITE_MIGRATIONS).map(|_| ()),
            Pools::Postgres(pool) => pool.get()?.run_pending_migrations(POSTGRES_MIGRATIONS).map(|_| ()),
        };
        result.map_err(|e| StorageError::Migration(e.to_string()))
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
        match self.pools {
            Pools::Sqlite(_) => Backend::Sqlite,
            Pools::Postgres(_) => Backend::Postgres,
        }
    }
}

/// Runs `$body` in a write transaction on either backend. SQLite transactions begin `IMMEDIATE`,
/// taking the write lock up front, so a read-then-write never fails with `SQLITE_BUSY`.
macro_rules! write_tx {
    ($db:expr, |$conn:ident, $backend:ident| $body:expr) => {
        match &$db.pools {
            $crate::connection::Pools::Sqlite(pool) => {
                let mut pooled = pool.get()?;
                #[allow(unused_variables)]
                let $backend = $crate::Backend::Sqlite;
                pooled.immediate_transaction(|$conn| $body)
            }
            $crate::connection::Pools::Postgres(pool) => {
                let mut pooled = pool.get()?;
                #[allow(unused_variables)]
                let $backend = $crate::Backend::Postgres;
                diesel::Connection::transaction(&mut *pooled, |$conn| $body)
            }
        }
    };
}

/// Runs `$body` outside an explicit transaction on either backend.
macro_rules! read {
    ($db:expr, |$conn:ident| $body:expr) => {
        match &$db.pools {
            $crate::connection::Pools::Sqlite(pool) => {
                let $conn = &mut *pool.get()?;
                $body
            }
            $crate::connection::Pools::Postgres(pool) => {
                let $conn = &mut *pool.get()?;
                $body
            }
        }
    };
}

pub(crate) use {read, write_tx};

/// A read-only transaction that sees one snapshot of the database, for reports that read several
/// tables while others write.
pub(crate) trait Snapshot: Sized {
    /// Runs `f` inside the snapshot.
    fn snapshot<T, E: From<diesel::result::Error>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E>;
}

impl Snapshot for SqliteConnection {
    fn snapshot<T, E: From<diesel::result::Error>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        // A SQLite read transaction keeps the snapshot of its first read until it ends.
        self.transaction(f)
    }
}

impl Snapshot for PgConnection {
    fn snapshot<T, E: From<diesel::result::Error>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        self.build_transaction().repeatable_read().read_only().run(f)
    }
}

/// The scheme of a database URL, for errors: the rest may hold credentials.
fn url_scheme(url: &str) -> String {
    url.split_once(':').map_or("(none)", |(scheme, _)| scheme).chars().take(32).collect()
}
