//! Throw-away databases for tests: a fresh SQLite file or a fresh PostgreSQL database per test,
//! migrated and removed again on drop.
//!
//! PostgreSQL is reached through `TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`); each test database is created beside it.

use crate::{new_id, Backend, Database, StorageResult};
use diesel::connection::SimpleConnection;
use std::path::PathBuf;

/// Server used for PostgreSQL test databases unless `TEST_DATABASE_URL` says otherwise.
pub const DEFAULT_TEST_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A migrated database that disappears when dropped.
pub struct TestDatabase {
    /// The database.
    pub db: Database,
    /// The URL it was opened with, for processes started by the test.
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Directory(PathBuf),
    PostgresDatabase { admin_url: String, name: String },
}

impl TestDatabase {
    /// A fresh database on `backend`.
    pub fn new(backend: Backend) -> StorageResult<TestDatabase> {
        match backend {
            Backend::Sqlite => Self::sqlite(),
            Backend::Postgres => Self::postgres(),
        }
    }

    /// A fresh SQLite file in its own temporary directory.
    pub fn sqlite() -> StorageResult<TestDatabase> {
        let dir = std::env::temp_dir().join(new_id("media-test"));
        let url = format!("sqlite://{}", dir.join("test.db").display());
        let db = Database::connect(&url, 8)?;
        Ok(TestDatabase { db, url, cleanup: Cleanup::Directory(dir) })
    }

    /// A fresh PostgreSQL database on the test server.
    pub fn postgres() -> StorageResult<TestDatabase> {
        let admin_url = std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_TEST_POSTGRES_URL.to_string());
        let name = new_id("media_test");
        crate::connection::connect_postgres(&admin_url)?.batch_execute(&format!("CREATE DATABASE {name}"))?;
        let url = match admin_url.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{name}"),
            None => format!("{admin_url}/{name}"),
        };
        let db = Database::connect(&url, 16)?;
        Ok(TestDatabase { db, url, cleanup: Cleanup::PostgresDatabase { admin_url, name } })
    }
}

impl TestDatabase {
    /// Simulates a database outage (PostgreSQL only; a no-op on SQLite): refuses new connections
    /// and ends the open ones, or, with `reachable`, lets connections in again.
    pub fn set_reachable(&self, reachable: bool) -> StorageResult<()> {
        let Cleanup::PostgresDatabase { admin_url, name } = &self.cleanup else {
            return Ok(());
        };
        let mut admin = crate::connection::connect_postgres(admin_url)?;
        admin.batch_execute(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS {reachable}"))?;
        if !reachable {
            admin.batch_execute(&format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()"
            ))?;
        }
        Ok(())
    }

    /// Makes `db`'s cache of verified keys trust an entry for `lifetime` rather than a second, so
    /// that a test sees the change notifications alone keep it true.
    pub fn hold_verified_keys_for(db: &Database, lifetime: std::time::Duration) {
        db.key_cache.set_lifetime(lifetime);
    }

    /// Forgets the provider's request recorded on a task and keeps it waiting, as if the
    /// api-server had stopped between the provider's acceptance and its record (the window a
    /// provider's callback closes).
    pub fn forget_submission(&self, task_id: &str) -> StorageResult<bool> {
        use crate::schema::tasks;
        use diesel::prelude::*;
        let updated = self.db.write(|conn| {
            diesel::update(tasks::table.find(task_id))
                .set((tasks::provider_handle.eq(None::<String>), tasks::lease_expires_at.eq(i64::MAX / 2)))
                .execute(conn)
        })?;
        Ok(updated == 1)
    }

    /// Forgets that the newest migration was applied (its schema stays), as a database an older
    /// release migrated would look to this one; or records it again.
    pub fn set_newest_migration_recorded(&self, recorded: bool) -> StorageResult<()> {
        use diesel::connection::SimpleConnection;
        let statement = if recorded {
            "UPDATE __diesel_schema_migrations SET version = substr(version, 2) WHERE version LIKE 'x%'"
        } else {
            "UPDATE __diesel_schema_migrations SET version = 'x' || version \
             WHERE version = (SELECT MAX(version) FROM __diesel_schema_migrations)"
        };
        self.db.write(|conn| conn.batch_execute(statement))
    }

    /// Moves a finished task's end `days` into the past, as if that much time had gone by.
    pub fn age_task(&self, task_id: &str, days: i64) -> StorageResult<bool> {
        use crate::schema::tasks;
        use diesel::prelude::*;
        let updated = self.db.write(|conn| {
            diesel::update(tasks::table.find(task_id))
                .set(tasks::finished_at.eq(tasks::finished_at - days * 86_400_000))
                .execute(conn)
        })?;
        Ok(updated == 1)
    }

    /// Stores a setting as earlier versions did (the generated download-signing key).
    pub fn put_setting(&self, name: &str, value: &str) -> StorageResult<()> {
        use crate::schema::settings;
        use diesel::prelude::*;
        self.db.write(|conn| {
            diesel::insert_into(settings::table)
                .values((settings::name.eq(name), settings::value.eq(value)))
                .execute(conn)
        })?;
        Ok(())
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        match &self.cleanup {
            Cleanup::Directory(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Cleanup::PostgresDatabase { admin_url, name } => {
                if let Ok(mut conn) = crate::connection::connect_postgres(admin_url) {
                    let _ = conn.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
                }
            }
        }
    }
}

/// Both backends, for tests that must hold on each.
pub const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];
