//! Verified keys kept in memory, so that a request (a poll, most often) authenticates without
//! reading the database.
//!
//! The cache answers only while this process hears of key changes. Every change that can stop a
//! secret from working or change what it may do (revocation, a new secret, new rates) is
//! announced as it commits: on PostgreSQL by `NOTIFY media_keys_changed`, which a listening
//! connection hears; on SQLite by adding one to the count of key changes every process of the
//! database file shares (`shared_counts`), which the cache compares before each answer. Either way
//! each process then forgets every key it holds, and the process that made the change forgets
//! them at once, before its call returns. While the listening connection is down nothing is
//! cached, and an entry is trusted for one second at most in any case, so a revoked key stops
//! working within a second on every api-server even if an announcement were lost (a process
//! killed between its commit and its count, or a key changed by hand).

use crate::shared_counts::SharedCounts;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The identity behind a valid secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthenticatedKey {
    /// Key id.
    pub key_id: String,
    /// Account id.
    pub account_id: String,
    /// The key's own spending requests per minute, if set.
    pub submit_rate_per_minute: Option<i64>,
    /// The key's own other requests per minute, if set.
    pub read_rate_per_minute: Option<i64>,
}

/// Where every change to a key's authentication is announced.
pub(crate) const KEYS_CHANNEL: &str = "media_keys_changed";

/// How long a verified key is trusted without reading it again.
const ENTRY_LIFETIME: Duration = Duration::from_secs(1);
/// The most keys held; past it the cache starts again empty (a process serves far fewer live keys
/// in one second, and a flood of distinct valid secrets must not grow memory).
const MAX_ENTRIES: usize = 10_000;

/// The verified keys of one process (see the module's documentation).
#[derive(Default)]
pub(crate) struct KeyCache {
    state: Mutex<CacheState>,
}

struct CacheState {
    /// How long an entry is trusted: [`ENTRY_LIFETIME`] (tests lengthen it, to see notifications
    /// alone at work).
    lifetime: Duration,
    /// Whether key changes are being listened for; nothing is cached otherwise.
    listening: bool,
    /// On SQLite, the shared count of key changes and the value the entries were read under.
    epoch: Option<(Arc<SharedCounts>, u64)>,
    /// Counts the times the cache forgot everything, so that a key read before a change cannot be
    /// stored after it.
    generation: u64,
    /// Secret hash to the key it verified, and when.
    entries: HashMap<String, (AuthenticatedKey, Instant)>,
}

impl CacheState {
    /// Forgets every key, and moves the generation on so that no key read before is stored.
    fn forget(&mut self) {
        self.generation += 1;
        self.entries.clear();
    }
}

impl Default for CacheState {
    fn default() -> CacheState {
        CacheState { lifetime: ENTRY_LIFETIME, listening: false, epoch: None, generation: 0, entries: HashMap::new() }
    }
}

impl KeyCache {
    /// The key `secret_hash` verified less than the entries' lifetime ago ([`ENTRY_LIFETIME`]
    /// unless a test changed it), if it is held.
    pub(crate) fn get(&self, secret_hash: &str) -> Option<AuthenticatedKey> {
        let state = self.current();
        let (key, verified_at) = state.entries.get(secret_hash)?;
        (verified_at.elapsed() < state.lifetime).then(|| key.clone())
    }

    /// Where the cache stands before a key is read from the database, to pass to
    /// [`KeyCache::insert`]; `None` when nothing may be cached.
    pub(crate) fn generation(&self) -> Option<u64> {
        let state = self.current();
        state.listening.then_some(state.generation)
    }

    /// Holds `key`, read from the database when the cache stood at `generation`, unless a change
    /// was announced since.
    pub(crate) fn insert(&self, secret_hash: &str, key: &AuthenticatedKey, generation: u64, read_at: Instant) {
        let mut state = self.current();
        if !state.listening || state.generation != generation {
            return;
        }
        if state.entries.len() >= MAX_ENTRIES {
            state.entries.clear();
        }
        state.entries.insert(secret_hash.to_string(), (key.clone(), read_at));
    }

    /// Forgets every key: a key changed somewhere.
    pub(crate) fn forget_all(&self) {
        self.lock().forget();
    }

    /// Whether keys are being cached: the listener is connected.
    pub(crate) fn is_active(&self) -> bool {
        self.lock().listening
    }

    /// Trusts entries for `lifetime` from now on.
    #[cfg(feature = "test-support")]
    pub(crate) fn set_lifetime(&self, lifetime: Duration) {
        self.lock().lifetime = lifetime;
    }

    /// Starts or stops caching, as the listening connection comes up or goes down; either way
    /// what is held is forgotten, since changes made meanwhile were not heard.
    pub(crate) fn set_listening(&self, listening: bool) {
        let mut state = self.lock();
        state.listening = listening;
        state.epoch = None;
        state.forget();
    }

    /// Starts caching on SQLite, where key changes are counted in `epoch`.
    pub(crate) fn watch(&self, epoch: Arc<SharedCounts>) {
        let mut state = self.lock();
        let seen = epoch.current(0);
        state.epoch = Some((epoch, seen));
        state.listening = true;
        state.forget();
    }

    /// The state, with every key forgotten if the shared count moved since the entries were read.
    fn current(&self) -> std::sync::MutexGuard<'_, CacheState> {
        let mut state = self.lock();
        if let Some((epoch, seen)) = &mut state.epoch {
            let now = epoch.current(0);
            if now != *seen {
                *seen = now;
                state.forget();
            }
        }
        state
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheState> {
        // The state stays consistent even if a holder panicked: every change is one assignment.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> AuthenticatedKey {
        AuthenticatedKey {
            key_id: id.into(),
            account_id: "acct".into(),
            submit_rate_per_minute: None,
            read_rate_per_minute: None,
        }
    }

    #[test]
    fn holds_keys_only_while_listening_and_for_a_second() {
        let cache = KeyCache::default();
        assert_eq!(cache.generation(), None, "not listening: nothing may be cached");
        cache.set_listening(true);
        let generation = cache.generation().unwrap();
        cache.insert("h1", &key("k1"), generation, Instant::now());
        assert_eq!(cache.get("h1"), Some(key("k1")));
        cache.insert("h2", &key("k2"), generation, Instant::now() - ENTRY_LIFETIME);
        assert_eq!(cache.get("h2"), None, "an entry older than its lifetime is not trusted");
        cache.set_listening(false);
        assert_eq!(cache.get("h1"), None, "the connection went down: everything is forgotten");
        cache.insert("h1", &key("k1"), generation, Instant::now());
        assert_eq!(cache.get("h1"), None);
    }

    #[test]
    fn a_key_read_before_a_change_is_not_stored_after_it() {
        let cache = KeyCache::default();
        cache.set_listening(true);
        let before = cache.generation().unwrap();
        cache.forget_all();
        cache.insert("h1", &key("k1"), before, Instant::now());
        assert_eq!(cache.get("h1"), None);
        let after = cache.generation().unwrap();
        cache.insert("h1", &key("k1"), after, Instant::now());
        assert_eq!(cache.get("h1"), Some(key("k1")));
    }
}
