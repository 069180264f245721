//! Attempt limits of the console (sign-in, sign-up, resets) on SQLite and PostgreSQL: a growing
//! delay slows every further try of one subject more, and parallel tries never pass a limit.

use std::time::Duration;
use storage::test_support::{TestDatabase, BACKENDS};
use storage::{now_millis, GrowingDelay};

#[test]
fn each_try_past_the_free_ones_waits_longer() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).unwrap_or_else(|e| panic!("{backend:?} database unavailable: {e}"));
        let db = &test_db.db;
        let subject = storage::new_id("sign-in:owner@example.com@203.0.113.9");
        let delay = GrowingDelay { subject: &subject, free: 2, first_ms: 300, longest_ms: 1_200 };
        let count = || db.count_attempt(&[], 0, 86_400_000, Some(delay)).unwrap();
        assert!(count().is_ok() && count().is_ok(), "{backend:?}: the free tries");
        // The third waits 300 ms after the second, the fourth 600 ms after the third, then the
        // waits stop growing at 1.2 s.
        for wait_ms in [300, 600, 1_200, 1_200] {
            let refused = count().expect_err("too soon");
            assert_eq!(refused.subject, subject);
            let left = refused.until - now_millis();
            assert!(left > wait_ms - 150 && left <= wait_ms, "{backend:?}: {left} ms left of {wait_ms}");
            std::thread::sleep(Duration::from_millis(u64::try_from(left).unwrap() + 20));
            assert!(count().is_ok(), "{backend:?}: counted after {wait_ms} ms");
        }
        // Another subject is not slowed.
        let other = storage::new_id("sign-in:owner@example.com@198.51.100.4");
        let fresh = GrowingDelay { subject: &other, ..delay };
        assert!(db.count_attempt(&[], 0, 86_400_000, Some(fresh)).unwrap().is_ok());
        db.clear_attempts(&subject).unwrap();
        assert!(count().is_ok(), "{backend:?}: the owner's success clears them");
    }
}

#[test]
fn waits_double_up_to_the_longest() {
    let delay = GrowingDelay { subject: "s", free: 5, first_ms: 30_000, longest_ms: 3_600_000 };
    let waits: Vec<i64> = (0..14).map(|tries| delay.wait_after(tries)).collect();
    assert_eq!(&waits[..5], &[0; 5]);
    assert_eq!(&waits[5..9], &[30_000, 60_000, 120_000, 240_000]);
    assert_eq!(waits[12], 3_600_000, "capped at an hour");
    assert_eq!(delay.wait_after(i64::MAX), 3_600_000);
}

/// An attempt removes only its own subjects' old rows (through their index); the sweep removes
/// the rest by time, so no attempt scans the whole table inside its write transaction.
#[test]
fn an_attempt_forgets_only_its_own_subjects_and_the_sweep_the_rest() {
    for backend in BACKENDS {
        let test_db = TestDatabase::new(backend).unwrap_or_else(|e| panic!("{backend:?} database unavailable: {e}"));
        let db = &test_db.db;
        let (first, second) = (storage::new_id("sign-up:203.0.113.0/24"), storage::new_id("sign-up:198.51.100.0/24"));
        // Whether `subject` has an attempt on record (a refusal counts nothing).
        let recorded = |subject: &str| db.count_attempt(&[(subject, 1)], 0, 86_400_000, None).unwrap().is_err();
        assert!(db.count_attempt(&[(&first, 10)], 0, 86_400_000, None).unwrap().is_ok());
        std::thread::sleep(Duration::from_millis(30));
        // The second subject's attempt keeps 10 ms of history: the first subject's older row stays.
        assert!(db.count_attempt(&[(&second, 10)], 0, 10, None).unwrap().is_ok());
        assert!(recorded(&first), "{backend:?}: another subject's attempt left it alone");
        std::thread::sleep(Duration::from_millis(30));
        // Its own next attempt with the same 10 ms removes its old row.
        assert!(db.count_attempt(&[(&second, 10)], 0, 10, None).unwrap().is_ok());
        assert!(db.count_attempt(&[(&second, 2)], 0, 86_400_000, None).unwrap().is_ok(), "{backend:?}: one left");
        assert!(db.forget_attempts_before(now_millis() + 1).unwrap() >= 3, "{backend:?}");
        assert!(!recorded(&first), "{backend:?}: swept");
    }
}
