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
