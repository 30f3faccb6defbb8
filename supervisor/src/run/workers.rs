//! Threads that carry out the calls the notification loop hands over (network calls,
//! which may block), kept for a while after each call.
//!
//! A fresh thread per call cost a loopback connect some fifteen system calls (its stack's
//! mapping and guard page, signal stack, robust list, rseq, name, affinity, and the same
//! undone at its end) and the wake-up of a task the scheduler had never placed. A thread
//! that has finished its call waits here for the next one instead, and ends after
//! [`KEEP`] without one, so an idle session holds none.
//!
//! Performance only: a worker runs each call exactly as a fresh thread did. It holds
//! nothing of a call it ran before: the calls take the target's credentials only for the
//! length of an operation and give them back ([`super::acting::act_as`]; a thread that
//! takes other credentials for good is a thread of its own that ends with its call), and
//! a call that changes its thread for good (a unix `bind` chroots it, changes its
//! directory and puts it under a Landlock domain) retires it ([`retire_this_thread`]): the
//! thread ends with that call. A call is never queued behind another: it goes to a worker
//! that is waiting, or to a new thread.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// How long a worker waits for another call before it ends.
const KEEP: Duration = Duration::from_secs(10);

type Job = Box<dyn FnOnce() + Send + 'static>;

struct Pool {
    state: Mutex<State>,
    ready: Condvar,
}

#[derive(Default)]
struct State {
    /// Workers waiting for a call.
    idle: usize,
    /// Calls handed to waiting workers and not yet taken: never more than `idle`, so each
    /// has a worker of its own.
    queue: VecDeque<Job>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        ready: Condvar::new(),
    })
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A job never runs under the lock, so a poisoned lock holds consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs `job` on a waiting worker, or on a new thread named `name` when none waits. An
/// error means no thread could be started (the supervisor or its user at a limit): the job
/// was dropped without running, and the caller answers the call itself.
pub fn run(name: &str, job: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let pool = pool();
    let job: Job = Box::new(job);
    {
        let mut state = pool.lock();
        if state.idle > state.queue.len() {
            state.queue.push_back(job);
            pool.ready.notify_one();
            return Ok(());
        }
    }
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            job();
            work(pool);
        })
        .map(drop)
}

thread_local! {
    /// This thread was changed for good by the call it runs: it takes no other.
    static RETIRED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the current thread as changed for good (its root, working directory, Landlock
/// domain): if it is a worker, it ends when its call returns instead of taking another.
/// To be called before the change.
pub fn retire_this_thread() {
    RETIRED.set(true);
}

/// A worker's life after its first call: takes calls until none comes for [`KEEP`].
fn work(pool: &'static Pool) {
    if RETIRED.get() {
        return;
    }
    let mut state = pool.lock();
    loop {
        if let Some(job) = state.queue.pop_front() {
            drop(state);
            job();
            if RETIRED.get() {
                return;
            }
            state = pool.lock();
            continue;
        }
        state.idle += 1;
        let (guard, waited) = pool
            .ready
            .wait_timeout_while(state, KEEP, |s| s.queue.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        state = guard;
        state.idle -= 1;
        // A call queued as the wait timed out is still taken: it was counted on this
        // worker.
        if waited.timed_out() && state.queue.is_empty() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    #[test]
    fn every_job_runs_once_and_workers_are_reused() {
        let ran = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        let mut threads = std::collections::HashSet::new();
        for _ in 0..50 {
            let (ran, tx) = (ran.clone(), tx.clone());
            super::run("fence-test-worker", move || {
                ran.fetch_add(1, Ordering::SeqCst);
                tx.send(std::thread::current().id()).unwrap();
            })
            .unwrap();
            // One at a time: the worker of the first job takes every later one.
            threads.insert(rx.recv().unwrap());
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(ran.load(Ordering::SeqCst), 50);
        assert!(
            threads.len() < 50,
            "no worker was reused: {}",
            threads.len()
        );
    }

    #[test]
    fn a_retired_thread_takes_no_other_job() {
        let (tx, rx) = mpsc::channel();
        let first = tx.clone();
        super::run("fence-test-worker", move || {
            super::retire_this_thread();
            first.send(std::thread::current().id()).unwrap();
        })
        .unwrap();
        let retired = rx.recv().unwrap();
        for _ in 0..20 {
            std::thread::sleep(std::time::Duration::from_millis(1));
            let tx = tx.clone();
            super::run("fence-test-worker", move || {
                tx.send(std::thread::current().id()).unwrap();
            })
            .unwrap();
            assert_ne!(rx.recv().unwrap(), retired);
        }
    }

    #[test]
    fn a_blocked_job_never_holds_another() {
        // Jobs that wait for each other: each must get a thread of its own, or the first
        // would wait forever.
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..8 {
            let (rx, done) = (release_rx.clone(), done_tx.clone());
            super::run("fence-test-worker", move || {
                let _ = rx
                    .lock()
                    .unwrap()
                    .recv_timeout(std::time::Duration::from_secs(5));
                done.send(()).unwrap();
            })
            .unwrap();
        }
        let last = done_tx.clone();
        super::run("fence-test-worker", move || last.send(()).unwrap()).unwrap();
        // The last job runs while the eight wait.
        done_rx
            .recv_timeout(std::time::Duration::from_secs(2))
            .expect("a job waited behind blocked ones");
        for _ in 0..8 {
            release_tx.send(()).unwrap();
        }
        for _ in 0..8 {
            done_rx
                .recv_timeout(std::time::Duration::from_secs(5))
                .unwrap();
        }
    }
}
