//! Verified API keys, remembered for at most [`KEY_CACHE_TTL`] so that a client polling many times a
//! second costs one key lookup a second, not one per request. A key revoked, rotated or given new
//! rates through this process is forgotten at once; through another process (another api-server,
//! the admin command) it stops working here within the TTL. Only keys that verified are kept, so
//! guessing secrets cannot fill it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::Caller;

/// Longest a verified key is trusted without looking at its row again.
pub(crate) const KEY_CACHE_TTL: Duration = Duration::from_secs(1);

/// Most keys remembered; past it the cache starts again empty (a second of lookups).
const MAX_KEYS: usize = 65_536;

#[derive(Default)]
pub(crate) struct KeyCache {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Secret hash to the caller it verified as, and when.
    keys: HashMap<String, (Caller, Instant)>,
    /// Bumped by every [`KeyCache::forget_all`]: a lookup that began before it is not stored.
    generation: u64,
}

impl KeyCache {
    /// The caller `secret_hash` verified as within the TTL, if any; and the generation to hand
    /// back to [`KeyCache::remember`] after looking the key up.
    pub(crate) fn get(&self, secret_hash: &str) -> (Option<Caller>, u64) {
        let state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let fresh = state.keys.get(secret_hash).filter(|(_, at)| at.elapsed() < KEY_CACHE_TTL);
        (fresh.map(|(caller, _)| caller.clone()), state.generation)
    }

    /// Remembers a key verified by a lookup that began at `generation`, unless keys were forgotten
    /// since (the lookup may have read the row before a revocation).
    pub(crate) fn remember(&self, secret_hash: String, caller: &Caller, generation: u64) {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.generation != generation {
            return;
        }
        if state.keys.len() >= MAX_KEYS {
            state.keys.clear();
        }
        state.keys.insert(secret_hash, (caller.clone(), Instant::now()));
    }

    /// Forgets every key: one was revoked, rotated or re-rated.
    pub(crate) fn forget_all(&self) {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.keys.clear();
        state.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(id: &str) -> Caller {
        Caller { key_id: id.into(), account_id: "acct".into(), rates: Default::default() }
    }

    #[test]
    fn a_key_is_kept_for_the_ttl_and_forgotten_on_demand() {
        let cache = KeyCache::default();
        let (none, generation) = cache.get("h1");
        assert!(none.is_none());
        cache.remember("h1".into(), &caller("k1"), generation);
        assert_eq!(cache.get("h1").0, Some(caller("k1")));
        cache.forget_all();
        assert!(cache.get("h1").0.is_none());
    }

    #[test]
    fn a_lookup_that_began_before_a_revocation_is_not_stored() {
        let cache = KeyCache::default();
        let (_, generation) = cache.get("h1");
        cache.forget_all();
        cache.remember("h1".into(), &caller("k1"), generation);
        assert!(cache.get("h1").0.is_none());
    }

    #[test]
    fn an_entry_older_than_the_ttl_is_not_used() {
        let cache = KeyCache::default();
        let (_, generation) = cache.get("h1");
        cache.remember("h1".into(), &caller("k1"), generation);
        cache.state.lock().unwrap().keys.get_mut("h1").unwrap().1 -= KEY_CACHE_TTL;
        assert!(cache.get("h1").0.is_none());
    }
}
