//! Small named values the deployment keeps, such as the generated URL-signing secret.

use crate::connection::read;
use crate::schema::settings;
use crate::{Database, StorageResult};
use diesel::prelude::*;

impl Database {
    /// Returns the setting `name`, storing `make()` first if it has none. Concurrent first calls
    /// agree on one value: the first insert wins and everyone reads it back.
    pub fn setting_or_insert(&self, name: &str, make: impl Fn() -> String) -> StorageResult<String> {
        read!(self, |conn| {
            diesel::insert_into(settings::table)
                .values((settings::name.eq(name), settings::value.eq(make())))
                .on_conflict_do_nothing()
                .execute(conn)?;
            Ok(settings::table.find(name).select(settings::value).first(conn)?)
        })
    }
}
