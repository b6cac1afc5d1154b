//! [`Reports`]: where the calls a binding started on the runtime's threads leave their reports
//! (events, outcomes) for the caller's one thread (Node's, an asyncio loop's), which is woken
//! to take them all at once.
//!
//! Waking that thread costs both sides a context switch, and it preempts a runtime thread
//! on a busy machine. So while many calls are in flight, a report does not wake the caller's
//! thread at once: it waits for a batch of [`BATCH`] reports, for the runtime's threads to run
//! out of work, or for [`FLUSH_AFTER`] at most, whichever comes first. With fewer than
//! [`DEFER_AT`] other calls in flight (a lone call, a few at once), a report wakes the caller's
//! thread at once, as before.

use crate::call::runtime;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// The reports that wake the caller's thread when they are not woken earlier.
pub const BATCH: u32 = 32;

/// A report waits for a batch only while at least this many other calls are in flight
/// (started and not ended, whether running or waiting).
pub const DEFER_AT: u32 = 16;

/// The longest a report waits for its batch (the runtime's timers tick each millisecond).
pub const FLUSH_AFTER: Duration = Duration::from_millis(1);

/// The reports of the calls of one caller's thread, queued as `Q` (its binding's form), and
/// the function that wakes that thread (which then calls [`Reports::take`]).
pub struct Reports<Q> {
    state: Mutex<State<Q>>,
    /// Calls started and not yet ended.
    running: AtomicU32,
    wake: Wake<Q>,
}

/// Wakes the caller's thread for the reports it is given: it may hold them until that thread
/// has taken them, for the calls' own holds end when their last report is posted (and the
/// caller may have dropped its own).
type Wake<Q> = Box<dyn Fn(Arc<Reports<Q>>) + Send + Sync>;

struct State<Q> {
    queued: Q,
    /// Reports queued since the caller's thread last took them.
    count: u32,
    /// Whether the caller's thread was woken for them.
    woken: bool,
    /// Batches taken so far: the one waiting is known by it to its timer.
    taken: u64,
    /// A taken queue the caller's thread has emptied and handed back ([`Reports::recycle`]):
    /// the next batch is written into its buffers, which have grown already.
    spare: Option<Q>,
}

impl<Q> State<Q> {
    /// Whether a flush for `batch` (None: for whatever waits) wakes the caller's thread:
    /// reports wait, it was not woken for them, and they are that batch's.
    fn flushes(&self, batch: Option<u64>) -> bool {
        self.count > 0 && !self.woken && batch.is_none_or(|batch| batch == self.taken)
    }
}

impl<Q: Default + Send + 'static> Reports<Q> {
    /// Reports that `wake` the caller's thread; they are flushed whenever a thread of the
    /// runtime runs out of work.
    pub fn new(wake: impl Fn(Arc<Self>) + Send + Sync + 'static) -> Arc<Self> {
        let reports = Arc::new(Self {
            state: Mutex::new(State {
                queued: Q::default(),
                count: 0,
                woken: false,
                taken: 0,
                spare: None,
            }),
            running: AtomicU32::new(0),
            wake: Box::new(wake),
        });
        let weak: Weak<dyn Flush> = Arc::downgrade(&reports) as Weak<dyn Flush>;
        let mut idle = lock_hooks();
        idle.retain(|hook| hook.strong_count() > 0);
        idle.push(weak);
        reports
    }

    /// A call started: it will post its outcome with `ended`.
    pub fn started(&self) {
        self.running.fetch_add(1, Ordering::Relaxed);
    }

    /// Queue a report with `write`; `ended` for a call's last one (its outcome).
    pub fn post(self: &Arc<Self>, ended: bool, write: impl FnOnce(&mut Q)) {
        let running = if ended {
            self.running
                .fetch_sub(1, Ordering::Relaxed)
                .saturating_sub(1)
        } else {
            self.running.load(Ordering::Relaxed)
        };
        let (wake, arm) = {
            let mut state = self.state.lock().expect("never poisoned");
            write(&mut state.queued);
            state.count += 1;
            if state.woken {
                (false, None)
            } else if state.count >= BATCH || running < DEFER_AT {
                state.woken = true;
                (true, None)
            } else {
                (false, (state.count == 1).then_some(state.taken))
            }
        };
        if wake {
            (self.wake)(self.clone());
        }
        if let Some(batch) = arm {
            // A timer that wakes the caller's thread for this batch at the latest. Once the
            // batch is taken, the timer itself flushes nothing: were it to flush the next
            // batch, that batch would be delivered after a few reports rather than a full one.
            // (A worker it woke from parking flushes what waits when it parks again.)
            let reports = Arc::downgrade(self);
            runtime().spawn(async move {
                tokio::time::sleep(FLUSH_AFTER).await;
                if let Some(reports) = reports.upgrade() {
                    reports.wake_for(Some(batch));
                }
            });
        }
    }

    /// Every queued report, leaving the queue empty: the caller's thread calls this when woken.
    pub fn take(&self) -> Q {
        let mut state = self.state.lock().expect("never poisoned");
        state.count = 0;
        state.woken = false;
        state.taken += 1;
        let next = state.spare.take().unwrap_or_default();
        std::mem::replace(&mut state.queued, next)
    }

    /// Hand back a queue [`Reports::take`] returned, once the caller's thread has emptied it,
    /// for a later batch to be written into: in a steady stream of calls, the runtime's threads
    /// then grow no new buffer for the batches, and the caller's thread frees none they grew
    /// (both sides would otherwise take the same allocator locks). One is kept, beside the
    /// queue being written; the binding bounds what it hands back.
    pub fn recycle(&self, emptied: Q) {
        let mut state = self.state.lock().expect("never poisoned");
        if state.spare.is_none() {
            state.spare = Some(emptied);
        }
    }
}

/// Waking the caller's thread for reports that wait.
pub(crate) trait Flush: Send + Sync {
    fn flush(self: Arc<Self>);
}

impl<Q> Reports<Q> {
    /// Wake the caller's thread for the reports waiting, if they are `batch`'s (None: any).
    fn wake_for(self: Arc<Self>, batch: Option<u64>) {
        let wake = {
            let mut state = self.state.lock().expect("never poisoned");
            let wake = state.flushes(batch);
            state.woken |= wake;
            wake
        };
        if wake {
            (self.wake)(self.clone());
        }
    }
}

impl<Q: Send> Flush for Reports<Q> {
    fn flush(self: Arc<Self>) {
        self.wake_for(None);
    }
}

/// The reports flushed when a runtime thread runs out of work.
pub(crate) type Hooks = Vec<Weak<dyn Flush>>;

static HOOKS: Mutex<Hooks> = Mutex::new(Vec::new());

/// The reports flushed when a runtime thread runs out of work, locked.
pub(crate) fn lock_hooks() -> MutexGuard<'static, Hooks> {
    HOOKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Flush every binding's waiting reports: a runtime thread is about to sleep.
pub(crate) fn on_idle() {
    for hook in lock_hooks().iter() {
        if let Some(hook) = hook.upgrade() {
            hook.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Reports of `u32`s whose wake-ups arrive on the receiver.
    fn reports() -> (Arc<Reports<Vec<u32>>>, mpsc::Receiver<()>) {
        let (woken, wakes) = mpsc::channel();
        let reports = Reports::new(move |_| {
            let _ = woken.send(());
        });
        (reports, wakes)
    }

    #[test]
    fn a_lone_call_wakes_the_callers_thread_at_once() {
        let (reports, wakes) = reports();
        reports.started();
        reports.post(false, |q| q.push(1));
        assert_eq!(wakes.try_recv(), Ok(()));
        reports.post(true, |q| q.push(2));
        assert!(wakes.try_recv().is_err(), "woken once a batch");
        assert_eq!(reports.take(), vec![1, 2]);
        assert!(reports.take().is_empty());
    }

    #[test]
    fn many_running_calls_report_in_batches() {
        let (reports, wakes) = reports();
        for _ in 0..DEFER_AT + BATCH {
            reports.started();
        }
        for n in 0..BATCH {
            reports.post(true, |q| q.push(n));
        }
        // However the batch was flushed (full, timer, idle runtime): one wake-up for it.
        assert_eq!(wakes.recv_timeout(Duration::from_secs(60)), Ok(()));
        assert!(wakes.try_recv().is_err(), "woken once a batch");
        assert_eq!(reports.take(), (0..BATCH).collect::<Vec<_>>());
    }

    #[test]
    fn a_recycled_queue_holds_a_later_batch() {
        let (reports, _wakes) = reports();
        reports.started();
        let kept = Vec::with_capacity(64);
        let buffer = kept.as_ptr();
        reports.recycle(kept);
        // One is kept: this one is dropped.
        reports.recycle(Vec::with_capacity(8));
        // The queue being written when the spare came back is taken first.
        assert!(reports.take().is_empty());
        reports.post(true, |q| q.push(2));
        let next = reports.take();
        assert_eq!(next, vec![2]);
        assert_eq!(
            next.as_ptr(),
            buffer,
            "written into the recycled queue's buffer"
        );
        assert_eq!(next.capacity(), 64);
    }

    #[test]
    fn a_batchs_timer_flushes_that_batch_only() {
        let mut state = State {
            queued: (),
            count: 0,
            woken: false,
            taken: 3,
            spare: None,
        };
        assert!(!state.flushes(Some(3)), "nothing waits");
        state.count = 1;
        assert!(state.flushes(Some(3)), "its batch waits");
        assert!(state.flushes(None), "an idle worker flushes whatever waits");
        assert!(
            !state.flushes(Some(2)),
            "a batch taken before: the timer does nothing"
        );
        state.woken = true;
        assert!(
            !state.flushes(Some(3)) && !state.flushes(None),
            "woken once a batch"
        );
    }

    #[test]
    fn a_waiting_report_is_flushed_without_a_batch() {
        let (reports, wakes) = reports();
        for _ in 0..=DEFER_AT {
            reports.started();
        }
        reports.post(true, |q| q.push(7));
        // The timer (or an idle runtime thread) wakes the caller's thread; the bound only
        // keeps a broken flush from hanging the test.
        assert_eq!(wakes.recv_timeout(Duration::from_secs(60)), Ok(()));
        assert_eq!(reports.take(), vec![7]);
    }
}
