//! Where the download-signing key comes from when `URL_SIGNING_SECRET` is not set. It is never
//! kept in the database, where whoever reads a backup, a replica or a dump could sign download
//! URLs for any output:
//! - on SQLite (one machine) it is generated once into `url-signing.key` beside the database
//!   file, readable by its owner only, where job processes cannot read it (their Landlock rules
//!   allow system files and their own inputs only);
//! - on PostgreSQL (many processes, many machines) it must come from the deployment's secret
//!   store, so the process refuses to start without it.
//!
//! A key an earlier version generated into the database's `settings` is moved to the file on
//! SQLite (so URLs already handed out stay valid), and on PostgreSQL named in the refusal so the
//! operator can move it to the secret store; once `URL_SIGNING_SECRET` holds it, the row is
//! removed.

use std::io::Write;
use std::path::{Path, PathBuf};
use storage::Database;

/// The name of the setting earlier versions kept the generated key in.
const LEGACY_SETTING: &str = "url_signing_secret";

/// The key file's name, beside the SQLite database file.
pub const KEY_FILE: &str = "url-signing.key";

/// Why no key could be had.
#[derive(Debug, thiserror::Error)]
pub enum SigningKeyError {
    /// On PostgreSQL the key must be configured.
    #[error(
        "URL_SIGNING_SECRET is required on PostgreSQL: every api-server and worker must sign download URLs \
         with the same key, kept in your secret store (at least 32 random characters, for example \
         `openssl rand -hex 32`), not in the database{legacy}"
    )]
    Required {
        /// What to do with a key an earlier version left in the database.
        legacy: String,
    },
    /// The key file could not be read or written.
    #[error("download-signing key file {path}: {error}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: String,
    },
    /// The database could not be read.
    #[error("download-signing key: {0}")]
    Database(String),
}

/// The key for a deployment that configured none (see the module's rules).
pub fn generated_key(db: &Database) -> Result<String, SigningKeyError> {
    let database = |e: storage::StorageError| SigningKeyError::Database(e.to_string());
    let legacy = db.setting(LEGACY_SETTING).map_err(database)?;
    let Some(database_file) = db.sqlite_file() else {
        let legacy = match legacy {
            Some(_) => format!(
                ". This database keeps a key an earlier version generated: to keep the download URLs \
                 already handed out valid, set URL_SIGNING_SECRET on every process to the value of \
                 `SELECT value FROM settings WHERE name = '{LEGACY_SETTING}'`; the row is then removed"
            ),
            None => String::new(),
        };
        return Err(SigningKeyError::Required { legacy });
    };
    let path = database_file.with_file_name(KEY_FILE);
    let key = read_or_create(&path, || legacy.clone().unwrap_or_else(|| hex::encode(rand::random::<[u8; 32]>())))?;
    if legacy.is_some() {
        db.remove_setting(LEGACY_SETTING).map_err(database)?;
        tracing::info!(file = %path.display(), "the download-signing key moved out of the database into its file");
    }
    Ok(key)
}

/// With `URL_SIGNING_SECRET` set: removes a generated key an earlier version left in the database
/// once the configured one is that same key; warns when it is another (the old URLs then fail).
pub fn forget_legacy_key(db: &Database, configured: &str) -> Result<(), SigningKeyError> {
    let database = |e: storage::StorageError| SigningKeyError::Database(e.to_string());
    match db.setting(LEGACY_SETTING).map_err(database)? {
        Some(legacy) if legacy == configured => {
            db.remove_setting(LEGACY_SETTING).map_err(database)?;
            tracing::info!("the download-signing key kept in the database was removed: URL_SIGNING_SECRET holds it");
        }
        Some(_) => tracing::warn!(
            "the database still keeps an old generated download-signing key, unlike URL_SIGNING_SECRET: download \
             URLs signed with it no longer work; remove it with `DELETE FROM settings WHERE name = '{LEGACY_SETTING}'`"
        ),
        None => {}
    }
    Ok(())
}

/// The key in `path`, or `make()` written there first (owner-only), atomically: processes
/// starting together agree on the first one written.
fn read_or_create(path: &Path, make: impl FnOnce() -> String) -> Result<String, SigningKeyError> {
    let failed = |error: std::io::Error| SigningKeyError::File { path: path.to_path_buf(), error: error.to_string() };
    match std::fs::read_to_string(path) {
        Ok(key) if !key.trim().is_empty() => return Ok(key.trim().to_string()),
        Ok(_) => return Err(failed(std::io::Error::other("the file is empty; remove it or set URL_SIGNING_SECRET"))),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(e)),
        Err(_) => {}
    }
    // Written whole to a scratch file, then linked into place: the link fails if another process
    // got there first, and no process ever reads a half-written key.
    let scratch =
        path.with_file_name(format!(".{KEY_FILE}.{}.{}", std::process::id(), hex::encode(rand::random::<[u8; 8]>())));
    let written = (|| {
        let mut file = owner_only().open(&scratch)?;
        file.write_all(make().as_bytes())?;
        file.sync_all()?;
        match std::fs::hard_link(&scratch, path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    })();
    let _ = std::fs::remove_file(&scratch);
    written.map_err(failed)?;
    std::fs::read_to_string(path).map(|key| key.trim().to_string()).map_err(failed)
}

/// Options that create a new file only its owner can read and write.
fn owner_only() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::test_support::TestDatabase;

    #[test]
    fn sqlite_keeps_the_key_in_an_owner_only_file_not_the_database() {
        let test_db = TestDatabase::sqlite().unwrap();
        let key = generated_key(&test_db.db).unwrap();
        assert_eq!(key.len(), 64);
        let path = test_db.db.sqlite_file().unwrap().with_file_name(KEY_FILE);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), key);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(test_db.db.setting(LEGACY_SETTING).unwrap(), None, "nothing in the database");
        assert_eq!(generated_key(&test_db.db).unwrap(), key, "the same key on the next start");
    }

    #[test]
    fn processes_starting_together_agree_on_one_key() {
        let test_db = TestDatabase::sqlite().unwrap();
        let keys: Vec<String> = std::thread::scope(|scope| {
            let starts: Vec<_> = (0..8).map(|_| scope.spawn(|| generated_key(&test_db.db).unwrap())).collect();
            starts.into_iter().map(|start| start.join().unwrap()).collect()
        });
        assert!(keys.iter().all(|key| key == &keys[0]), "{keys:?}");
    }

    #[test]
    fn a_key_an_earlier_version_kept_in_the_database_moves_to_the_file() {
        let test_db = TestDatabase::sqlite().unwrap();
        test_db.put_setting(LEGACY_SETTING, "an-earlier-generated-key-of-sixty-four-characters-0123456789abc").unwrap();
        let key = generated_key(&test_db.db).unwrap();
        assert_eq!(key, "an-earlier-generated-key-of-sixty-four-characters-0123456789abc", "old URLs stay valid");
        assert_eq!(test_db.db.setting(LEGACY_SETTING).unwrap(), None);
        assert_eq!(generated_key(&test_db.db).unwrap(), key);
    }

    #[test]
    fn postgres_refuses_to_generate_and_names_a_legacy_key() {
        let test_db = TestDatabase::postgres().unwrap();
        let refusal = generated_key(&test_db.db).unwrap_err().to_string();
        assert!(refusal.contains("URL_SIGNING_SECRET is required on PostgreSQL"), "{refusal}");
        assert!(!refusal.contains("earlier version"), "{refusal}");
        test_db.put_setting(LEGACY_SETTING, "old-key-from-the-database-0123456789").unwrap();
        let refusal = generated_key(&test_db.db).unwrap_err().to_string();
        assert!(refusal.contains("SELECT value FROM settings"), "{refusal}");
        assert!(!refusal.contains("old-key-from-the-database"), "the key itself is never printed: {refusal}");
        // Once configured with that key, the row goes; another key leaves it (with a warning).
        forget_legacy_key(&test_db.db, "another-key-0123456789-0123456789").unwrap();
        assert!(test_db.db.setting(LEGACY_SETTING).unwrap().is_some());
        forget_legacy_key(&test_db.db, "old-key-from-the-database-0123456789").unwrap();
        assert_eq!(test_db.db.setting(LEGACY_SETTING).unwrap(), None);
    }
}
