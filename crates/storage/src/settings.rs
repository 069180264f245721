//! Small named values the deployment keeps, such as the generated URL-signing secret.

use crate::dialect;
use crate::schema::settings;
use crate::{Database, StorageResult};
use diesel::prelude::*;
use diesel::sql_types::Text;

impl Database {
    /// Returns the setting `name`, storing `make()` first if it has none. Concurrent first calls
    /// agree on one value: the first insert wins and everyone reads it back.
    pub fn setting_or_insert(&self, name: &str, make: impl Fn() -> String) -> StorageResult<String> {
        self.read(|conn| {
            // `ON CONFLICT DO NOTHING` is the same on both backends, but diesel renders it only for
            // one at a time.
            dialect::sql_query(conn, "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING")
                .bind::<Text, _>(name)
                .bind::<Text, _>(make())
                .execute(conn)?;
            settings::table.find(name).select(settings::value).first(conn)
        })
    }
}
