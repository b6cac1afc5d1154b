//! A call of a binding: read, resolved and run through the library's own call path
//! ([`palisade::Palisade::run_with`]), cancellable from the caller's thread at any point. It
//! runs either on a task of the bindings' own tokio runtime ([`start`], for callers that must
//! not wait: Node's event loop, an asyncio loop), or on the caller's own thread under that
//! runtime ([`run_here`], for a caller that waits anyway: Python's `run`), with no hand-off
//! between threads.

use crate::host::event_json;
use crate::outcome::failed;
use crate::request::{Prepared, Refused, Request};
use palisade::{Canceller, Outcome, Palisade, Policy, Script};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Called once when a call ends: its Outcome, or the caller's own mistake (a message the
/// binding throws as a `TypeError`).
pub type Done = Box<dyn FnOnce(Result<Outcome, String>) + Send>;

/// Called with each event of a call as JSON ([`crate::event_json`]), inside the call.
pub type OnEvent = Arc<dyn Fn(String) + Send + Sync>;

/// The runtime every call of the binding runs under: one worker thread per CPU, named
/// `palisade`, started on first use and kept for the life of the process. A worker that runs
/// out of work flushes the reports waiting for their batch ([`crate::Reports`]). A child made
/// by `fork` (after [`forked`]) has none of its parent's threads: it starts a runtime of its
/// own on first use, and leaves the parent's untouched.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    let forks = forks();
    if let Some((made_in, runtime)) = THIS_THREADS_RUNTIME.get()
        && made_in == forks
    {
        return runtime;
    }
    let mut runtimes = RUNTIMES.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = match *runtimes {
        Some((made_in, runtime)) if made_in == forks => runtime,
        // Kept for the life of the process: a parent's, in a child, is never dropped either
        // (its threads are not there to stop).
        _ => Box::leak(Box::new(
            tokio::runtime::Builder::new_multi_thread()
                .thread_name("palisade")
                .on_thread_park(crate::batch::on_idle)
                .enable_all()
                .build()
                .expect("the bindings' tokio runtime starts"),
        )),
    };
    *runtimes = Some((forks, runtime));
    THIS_THREADS_RUNTIME.set(Some((forks, runtime)));
    runtime
}

/// The runtime of the latest fork generation, and the [`forks`] it was made after.
type Runtimes = Option<(usize, &'static tokio::runtime::Runtime)>;
static RUNTIMES: Mutex<Runtimes> = Mutex::new(None);

thread_local! {
    /// The bindings' locks, held by the thread that is forking from [`before_fork`] until the
    /// fork is done: no other thread holds one in the child, where it would stay held.
    static HELD_OVER_FORK: std::cell::RefCell<Option<HeldOverFork>> =
        const { std::cell::RefCell::new(None) };

    /// The runtime this thread last asked for, and the [`forks`] it was made after: asking
    /// again costs no lock.
    static THIS_THREADS_RUNTIME: std::cell::Cell<Option<(usize, &'static tokio::runtime::Runtime)>> =
        const { std::cell::Cell::new(None) };
}

/// How many times the process has been forked since it loaded the binding ([`forked`]).
static FORKS: AtomicUsize = AtomicUsize::new(0);

/// The locks [`before_fork`] takes.
struct HeldOverFork {
    _runtimes: std::sync::MutexGuard<'static, Runtimes>,
    _hooks: std::sync::MutexGuard<'static, crate::batch::Hooks>,
}

/// Tell the binding that this thread is about to `fork` (Python's
/// `os.register_at_fork(before=…)`): it takes the bindings' locks (the runtime's, the idle
/// hooks'), so that the child does not start with one held by a thread it does not have. Then
/// [`after_fork_in_parent`] in the parent, [`forked`] in the child.
pub fn before_fork() {
    let runtimes = RUNTIMES.lock().unwrap_or_else(|e| e.into_inner());
    let hooks = crate::batch::lock_hooks();
    HELD_OVER_FORK.set(Some(HeldOverFork {
        _runtimes: runtimes,
        _hooks: hooks,
    }));
}

/// In the parent, after a fork: let go of the locks [`before_fork`] took.
pub fn after_fork_in_parent() {
    HELD_OVER_FORK.take();
}

/// Tell the binding that this process is a child `fork` has just made (Python's
/// `os.register_at_fork(after_in_child=…)`): the locks [`before_fork`] took are let go, its
/// next call starts a runtime of its own, and a `Palisade` built before the fork is refused
/// (its threads stayed with the parent).
pub fn forked() {
    HELD_OVER_FORK.take();
    FORKS.fetch_add(1, Ordering::SeqCst);
}

/// How many times the process has been forked since it loaded the binding.
pub fn forks() -> usize {
    FORKS.load(Ordering::Acquire)
}

/// A call: [`Call::cancel`] ends it as `cancelled`, before or after it has started.
#[derive(Clone, Default)]
pub struct Call {
    canceller: Canceller,
}

impl Call {
    /// End the call at once as `cancelled` (nothing, once it has ended).
    pub fn cancel(&self) {
        self.canceller.cancel();
    }
}

/// What a binding hands over to start a call.
pub struct Start {
    /// The request's JSON text ([`Request`]); None for a request with no keys of its own (all
    /// it says is held apart: the policy, the script, the input, the callback).
    pub request: Option<String>,
    /// The input's JSON text, given apart from the request: written by the binding from the
    /// caller's value, or the caller's own text. The sandbox reads it once, as it reads a Rust
    /// caller's input (invalid JSON is `invalid_input`); inside the request, the request's
    /// parser would read it first, and a copy of it would be made.
    pub input: Option<String>,
    /// A policy the binding holds as an object, in place of the request's `policy`.
    pub policy: Option<Arc<Policy>>,
    /// A script the binding holds as an object, in place of `source`/`file`.
    pub script: Option<Script>,
    /// The caller's event callback.
    pub on_event: Option<OnEvent>,
}

/// Read, resolve and run `start` under `palisade` on a task of the bindings' runtime, and
/// call `done` with its Outcome there; `call` cancels it. A call cancelled before it starts
/// (a Node caller's signal that had aborted already) ends as `cancelled` without running: a
/// `cancel` made after the start could come after the call's end.
pub fn start(palisade: &Palisade, start: Start, call: &Call, done: Done) {
    let (palisade, canceller) = (palisade.clone(), call.canceller.clone());
    runtime().spawn(async move {
        // The call's future (several KiB) is made and boxed here, on a worker of the runtime:
        // the caller's thread (Node's) writes a task of a few dozen words, not kilobytes
        // another core then reads.
        let running = Box::pin(run(palisade, start, canceller));
        done(running.await);
    });
}

/// Read, resolve and run `start` under `palisade` on this thread, under the bindings' runtime
/// (`Runtime::block_on`), while `watch` runs beside it (it may cancel `call`, and ends when
/// the call does): the Outcome, or the caller's mistake. The runtime's workers only
/// serve what the call waits on (timers, sockets). From inside the runtime (a call made by a
/// callback of another), the call runs on the workers, and this thread polls `watch` every
/// [`NESTED_WATCH`] until it ends.
pub fn run_here<W>(
    palisade: &Palisade,
    start: Start,
    call: &Call,
    watch: W,
) -> Result<Outcome, String>
where
    W: Future<Output = std::convert::Infallible>,
{
    // Boxed: the call's future (several KiB) is moved by pointer into `block_on` and its
    // layers, not copied at each.
    let running = Box::pin(run(palisade.clone(), start, call.canceller.clone()));
    if RUNNING_HERE.get() {
        // A call made from an event callback of a call this thread runs, whose `block_on`
        // would panic if entered again: the call goes to the runtime's workers.
        let (sender, outcome) = std::sync::mpsc::channel();
        runtime().spawn(async move {
            let _ = sender.send(running.await);
        });
        return wait_watching(&outcome, watch);
    }
    let _here = RunningHere::enter();
    runtime().block_on(async move {
        tokio::select! {
            biased;
            result = running => result,
            never = watch => match never {},
        }
    })
}

/// How often a call made from inside another's `block_on` polls its watch: the watch's own
/// timers cannot wake this thread, which waits for the call on a channel.
const NESTED_WATCH: std::time::Duration = std::time::Duration::from_millis(10);

/// The call's result from `outcome`, polling `watch` (in the runtime's context, which this
/// thread is in) every [`NESTED_WATCH`] meanwhile, as `block_on` would run it beside the call.
fn wait_watching<W>(
    outcome: &std::sync::mpsc::Receiver<Result<Outcome, String>>,
    watch: W,
) -> Result<Outcome, String>
where
    W: Future<Output = std::convert::Infallible>,
{
    use std::sync::mpsc::RecvTimeoutError;
    // Unconstrained: this poll is inside another task's, whose budget of operations the
    // watch's channel and timers would use up and never get back, after which each poll
    // would return at once without looking.
    let mut watch = std::pin::pin!(tokio::task::unconstrained(watch));
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        match outcome.recv_timeout(NESTED_WATCH) {
            Ok(result) => return result,
            Err(RecvTimeoutError::Timeout) => {
                // Pending for ever (its output is uninhabited): it only acts.
                let _ = watch.as_mut().poll(&mut context);
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err("the call ended without an outcome".to_owned());
            }
        }
    }
}

/// `request` prepared, its script's file read on a thread that is not one of the runtime's
/// workers: a regular file's on one of the runtime's blocking threads (which also looks what
/// the file is: a stat can wait, on a network mount), anything else (a FIFO, which waits for its
/// writer: `palisade run <(…)` reads one) on a thread of its own, which it keeps, if the call is
/// cancelled, until the read ends, and no other work waits for.
async fn read_off_workers(
    request: Request,
    policy: Option<Arc<Policy>>,
    script: Option<Script>,
    input: Option<String>,
) -> Result<Prepared, Refused> {
    let failed = |e: &dyn std::fmt::Display| {
        let detail = format!("reading the script failed: {e}");
        Err(Refused::call(palisade::Error::Internal { detail }, None))
    };
    let looked = tokio::task::spawn_blocking(move || {
        let regular = request
            .file
            .as_ref()
            .is_some_and(|path| std::fs::metadata(path).is_ok_and(|m| m.is_file()));
        let read = move || request.prepare(policy, script, input);
        if regular {
            Ok(read())
        } else {
            Err(Box::new(read))
        }
    })
    .await;
    let read = match looked {
        Ok(Ok(prepared)) => return prepared,
        Ok(Err(read)) => *read,
        Err(e) => return failed(&e),
    };
    let (sender, read_result) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("palisade-read".to_owned())
        .spawn(move || {
            let _ = sender.send(read());
        });
    if let Err(e) = spawned {
        return failed(&e);
    }
    read_result.await.unwrap_or_else(|e| failed(&e))
}

/// [`RUNNING_HERE`] set while held.
struct RunningHere;

impl RunningHere {
    fn enter() -> RunningHere {
        RUNNING_HERE.set(true);
        RunningHere
    }
}

impl Drop for RunningHere {
    fn drop(&mut self) {
        RUNNING_HERE.set(false);
    }
}

thread_local! {
    /// Whether this thread is in [`run_here`]'s `block_on`.
    static RUNNING_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The call itself: the request read and resolved, then run with `canceller`.
async fn run(palisade: Palisade, start: Start, canceller: Canceller) -> Result<Outcome, String> {
    let request = match &start.request {
        Some(text) => Request::parse(text),
        None => Ok(Request::default()),
    };
    let (policy, script, input) = (start.policy, start.script, start.input);
    let prepared = match request {
        // A script's file is read off the runtime's workers, which other calls share. The
        // call may be cancelled meanwhile; the read itself ends with a FIFO's writer.
        Ok(request) if request.file.is_some() => {
            tokio::select! {
                read = read_off_workers(request, policy, script, input) => read,
                () = canceller.cancelled() => return Ok(failed(palisade::Error::Cancelled, None)),
            }
        }
        request => request.and_then(|request| request.prepare(policy, script, input)),
    };
    let mut prepared = match prepared {
        Ok(prepared) => prepared,
        Err(Refused::Usage(message)) => return Err(message),
        Err(Refused::Call(error, policy)) => {
            return Ok(failed(*error, policy.as_deref()));
        }
    };
    if let Some(on_event) = start.on_event {
        prepared.options = prepared
            .options
            .on_event(move |event| on_event(event_json(&event)));
    }
    let options = prepared.options.canceller(&canceller);
    Ok(palisade
        .run_with(
            &prepared.policy,
            &prepared.script,
            &prepared.input,
            &options,
        )
        .await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Start `calls` calls of a script that logs and returns its input, each cancelled before
    /// it starts when `cancelled` says so; their outcomes in the order they end.
    fn outcomes(palisade: &Palisade, calls: usize, cancelled: bool) -> Vec<Outcome> {
        let (sender, receiver) = mpsc::channel();
        for i in 0..calls {
            let call = Call::default();
            if cancelled {
                call.cancel();
            }
            let given = Start {
                request: Some(r#"{"source": "export default (x) => (console.log(x), x)"}"#.into()),
                input: Some(i.to_string()),
                policy: None,
                script: None,
                on_event: None,
            };
            let sender = sender.clone();
            start(
                palisade,
                given,
                &call,
                Box::new(move |ended| {
                    sender.send(ended.expect("the request is valid")).unwrap();
                }),
            );
        }
        (0..calls).map(|_| receiver.recv().unwrap()).collect()
    }

    #[test]
    fn a_call_cancelled_before_it_starts_ends_cancelled_without_running() {
        let palisade = crate::build_with("{}", Vec::new(), |_| unreachable!()).unwrap();
        for outcome in outcomes(&palisade, 200, true) {
            assert!(matches!(outcome.result, Err(palisade::Error::Cancelled)));
            assert_eq!((outcome.receipt.fuel_used, outcome.logs.len()), (0, 0));
        }
        // The next calls run.
        let mut ran: Vec<String> = outcomes(&palisade, 20, false)
            .into_iter()
            .map(|outcome| outcome.result.expect("the call runs").get().to_owned())
            .collect();
        ran.sort_by_key(|output| output.parse::<u32>().unwrap());
        assert_eq!(ran, (0..20).map(|i| i.to_string()).collect::<Vec<_>>());
    }
}
