//! Group commit: callers that would each run a transaction on the same rows hand their work to
//! one of them, the leader, which runs it for all of them in one transaction and gives each its
//! own result. A burst of submits from one account then takes that account's row locks and pays
//! a commit once per batch instead of once per submit, while each submit is still checked against
//! the limits as the ones before it in the batch left them.
//!
//! Callers block (they run on blocking threads, like every storage call). Whoever arrives at an
//! idle group leads it; a leader whose own result is in serves no further batch and hands the
//! lead to the first caller still waiting, so no caller waits behind more than the batches ahead
//! of it. A batch may hand the lead on before it ends, once only its commit is left: the next
//! batch then starts meanwhile and waits for the rows at the database, not for the commit's
//! answer and a thread's wake-up (so at most two batches of a group are under way at once).

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

/// Most items run in one batch: one transaction records at most this many submits or ends.
pub const MAX_BATCH: usize = 64;

/// A caller's item, and where its answer goes.
struct Waiting<T, R> {
    item: T,
    reply: SyncSender<Turn<R>>,
}

/// What a waiting caller is told.
enum Turn<R> {
    /// Its item ran: the result.
    Done(R),
    /// The leader left with items still waiting: this caller leads now.
    Lead,
}

/// One group's queue.
struct Group<T, R> {
    waiting: VecDeque<Waiting<T, R>>,
    /// A caller is running batches for the group (or has been told to).
    led: bool,
}

/// Batches of items per group, each batch run by one of its callers (see the module's text).
pub(crate) struct GroupCommit<T, R> {
    groups: Mutex<HashMap<String, Group<T, R>>>,
}

impl<T, R> Default for GroupCommit<T, R> {
    fn default() -> Self {
        GroupCommit { groups: Mutex::new(HashMap::new()) }
    }
}

impl<T, R> GroupCommit<T, R> {
    /// Runs `item` in a batch of `group`'s items with `run`, which returns one result per item,
    /// in order, and returns this item's result. `run` may call the function it is given once
    /// nothing but its commit is left, to let the next batch start (see the module's text).
    /// `lost` makes the result of an item whose batch ended without one (`run` panicked, or
    /// returned too few).
    pub(crate) fn run(
        &self,
        group: &str,
        item: T,
        run: impl Fn(Vec<T>, &dyn Fn()) -> Vec<R>,
        lost: impl Fn() -> R,
    ) -> R {
        let (reply, turns) = sync_channel(1);
        let leads = {
            let mut groups = self.lock();
            let queue =
                groups.entry(group.to_string()).or_insert_with(|| Group { waiting: VecDeque::new(), led: false });
            queue.waiting.push_back(Waiting { item, reply });
            !std::mem::replace(&mut queue.led, true)
        };
        if !leads {
            match turns.recv() {
                Ok(Turn::Done(result)) => return result,
                Ok(Turn::Lead) => {}
                Err(_) => return lost(),
            }
        }
        self.lead(group, &turns, &run).unwrap_or_else(lost)
    }

    /// Runs batches of `group` until this caller's own result is in, then hands the lead on.
    fn lead(&self, group: &str, own: &Receiver<Turn<R>>, run: &impl Fn(Vec<T>, &dyn Fn()) -> Vec<R>) -> Option<R> {
        // Handing the lead on happens even when `run` panics, so the group never stalls.
        let leader = Leader { commit: self, group, handed_on: Cell::new(false) };
        loop {
            let batch: Vec<Waiting<T, R>> = {
                let mut groups = self.lock();
                let queue = groups.get_mut(group)?;
                let take = queue.waiting.len().min(MAX_BATCH);
                queue.waiting.drain(..take).collect()
            };
            let (items, replies): (Vec<T>, Vec<SyncSender<Turn<R>>>) =
                batch.into_iter().map(|waiting| (waiting.item, waiting.reply)).unzip();
            let results = run(items, &|| leader.hand_on());
            // A reply whose result is missing is dropped, and its caller reads that as lost.
            for (reply, result) in replies.into_iter().zip(results) {
                // The channel holds one message and nothing else is sent to a caller whose item
                // is in a batch, so this never blocks; a caller that went away is no matter.
                let _ = reply.try_send(Turn::Done(result));
            }
            match own.try_recv() {
                Ok(Turn::Done(result)) => {
                    leader.hand_on();
                    return Some(result);
                }
                // Another caller leads now: this one runs no further batch. (Its own item was
                // the first waiting when it took the lead, so it was in the batch just run.)
                _ if leader.handed_on.get() => return None,
                Ok(Turn::Lead) => {}
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    leader.hand_on();
                    return None;
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Group<T, R>>> {
        // The map is only edited under the lock in steps that cannot panic part-way.
        self.groups.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The lead of one group, handed on when dropped: to the first caller still waiting, or given
/// up when none is.
struct Leader<'a, T, R> {
    commit: &'a GroupCommit<T, R>,
    group: &'a str,
    /// The lead was handed on (at most once).
    handed_on: Cell<bool>,
}

impl<T, R> Leader<'_, T, R> {
    fn hand_on(&self) {
        if self.handed_on.replace(true) {
            return;
        }
        let mut groups = self.commit.lock();
        let Some(queue) = groups.get_mut(self.group) else { return };
        // The first waiting caller may have gone (a panic on its thread); try the next.
        while let Some(first) = queue.waiting.front() {
            if first.reply.try_send(Turn::Lead).is_ok() {
                return;
            }
            queue.waiting.pop_front();
        }
        groups.remove(self.group);
    }
}

impl<T, R> Drop for Leader<'_, T, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.hand_on();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    #[test]
    fn every_caller_gets_its_own_result_and_items_share_batches() {
        let commit = Arc::new(GroupCommit::<u32, u32>::default());
        let batches = Arc::new(AtomicUsize::new(0));
        let callers = 32;
        let start = Arc::new(Barrier::new(callers));
        let threads: Vec<_> = (0..callers as u32)
            .map(|n| {
                let (commit, batches, start) = (commit.clone(), batches.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let run = |items: Vec<u32>, _: &dyn Fn()| {
                        batches.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        items.into_iter().map(|item| item * 10).collect()
                    };
                    (n, commit.run("account", n, run, || u32::MAX))
                })
            })
            .collect();
        for thread in threads {
            let (n, result) = thread.join().expect("caller");
            assert_eq!(result, n * 10);
        }
        let batches = batches.load(Ordering::SeqCst);
        assert!(batches < callers, "{callers} callers ran {batches} batches: none were shared");
        assert!(commit.lock().is_empty(), "an idle group is forgotten");
    }

    #[test]
    fn a_batch_that_panics_fails_its_items_and_the_group_goes_on() {
        let commit = Arc::new(GroupCommit::<u32, Result<u32, ()>>::default());
        let run = |items: Vec<u32>, _: &dyn Fn()| {
            if items.contains(&13) {
                panic!("thirteen");
            }
            items.into_iter().map(Ok).collect()
        };
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commit.run("g", 13, run, || Err(()))));
        assert!(failed.is_err(), "the leader's own panic reaches it");
        assert_eq!(commit.run("g", 7, run, || Err(())), Ok(7), "the group is not stalled");
        assert!(commit.lock().is_empty());
    }

    #[test]
    fn a_batch_that_hands_on_early_overlaps_the_next_one_only() {
        let commit = Arc::new(GroupCommit::<u32, u32>::default());
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let waiting = |commit: &GroupCommit<u32, u32>| commit.lock().get("g").map_or(0, |group| group.waiting.len());
        let run = {
            let (commit, running, most) = (commit.clone(), running.clone(), most.clone());
            move |items: Vec<u32>, start_next: &dyn Fn()| {
                most.fetch_max(running.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                if items == [0] {
                    // The first batch, alone: it lets the next start once the others queue.
                    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                    while waiting(&commit) < 31 && std::time::Instant::now() < deadline {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    start_next();
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                running.fetch_sub(1, Ordering::SeqCst);
                items.into_iter().map(|item| item * 10).collect::<Vec<_>>()
            }
        };
        let first = {
            let (commit, run) = (commit.clone(), run.clone());
            std::thread::spawn(move || commit.run("g", 0, run, || u32::MAX))
        };
        while running.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let others: Vec<_> = (1..32u32)
            .map(|n| {
                let (commit, run) = (commit.clone(), run.clone());
                std::thread::spawn(move || (n, commit.run("g", n, run, || u32::MAX)))
            })
            .collect();
        assert_eq!(first.join().expect("first caller"), 0);
        for caller in others {
            let (n, result) = caller.join().expect("caller");
            assert_eq!(result, n * 10);
        }
        assert_eq!(most.load(Ordering::SeqCst), 2, "the second batch ran while the first finished, and no third");
        assert!(commit.lock().is_empty(), "an idle group is forgotten");
    }

    #[test]
    fn a_short_answer_reads_as_lost() {
        let commit = GroupCommit::<u32, Result<u32, ()>>::default();
        assert_eq!(commit.run("g", 1, |_, _| Vec::new(), || Err(())), Err(()));
    }
}
