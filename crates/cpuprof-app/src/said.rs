//! The warnings a run says: each goes to stderr and is kept, so that the run's report (JSON
//! `warnings`, the page, an MCP answer) carries every one stderr got, in the order said.
//!
//! A run is the command line's one run, or one MCP call ([`collect`]). Its list is shared with
//! the threads that read its inputs through [`Said::current`] taken on the run's own thread.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cpuprof_model::{Meta, Warning};

/// The warnings one run has said.
#[derive(Clone, Default)]
pub struct Said(Arc<Mutex<Vec<String>>>);

/// Where warnings are said as they come (the front end's stderr), besides being kept.
static SINK: OnceLock<fn(&str)> = OnceLock::new();

/// Says every warning with `sink` as it comes (the first call sets it, for the process).
pub fn on_warning(sink: fn(&str)) {
    let _ = SINK.set(sink);
}

/// Says `message` as a warning of the run on this thread: with the front end's sink, and kept
/// for the run's report.
pub fn warn(message: &str) {
    Said::current().warn(message);
}

/// The command line's run: its warnings, whichever thread says them.
static PROCESS: OnceLock<Said> = OnceLock::new();

thread_local! {
    /// The run on this thread when it is not the command line's (an MCP call).
    static RUN: RefCell<Option<Said>> = const { RefCell::new(None) };
    /// What this thread says while it reads one of several inputs read at once ([`held`]).
    static HELD: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

impl Said {
    /// The list of the run on this thread.
    pub fn current() -> Said {
        RUN.with(|r| r.borrow().clone()).unwrap_or_else(|| PROCESS.get_or_init(Said::default).clone())
    }

    /// Says `message` on stderr and keeps it (or holds it, in [`held`]).
    pub fn warn(&self, message: &str) {
        if HELD.with(|h| h.borrow_mut().as_mut().map(|held| held.push(message.to_owned()))).is_none() {
            self.warn_now(message);
        }
    }

    /// Says `message` on stderr and keeps it, even within [`held`]: for held warnings said in
    /// their order (on a thread that may be inside another input's [`held`], by work stealing).
    pub fn warn_now(&self, message: &str) {
        if let Some(sink) = SINK.get() {
            sink(message);
        }
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(message.to_owned());
    }

    /// Every warning said so far, in order.
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// Runs `run` as a run of its own on this thread: what it says is kept apart from other runs'
/// and returned with its result.
pub fn collect<T>(run: impl FnOnce() -> T) -> (T, Vec<String>) {
    let said = Said::default();
    let result = within(&said, run);
    (result, said.all())
}

/// Puts back this thread's run when dropped, a panic's unwinding included (an MCP server
/// lives on after a call that panicked, and so do rayon's threads).
struct RestoreRun(Option<Said>);

impl Drop for RestoreRun {
    fn drop(&mut self) {
        let before = self.0.take();
        RUN.with(|r| *r.borrow_mut() = before);
    }
}

/// Runs `work` on this thread as part of the run `said` belongs to (a worker thread's part of
/// it): what it says goes to that run.
pub fn within<T>(said: &Said, work: impl FnOnce() -> T) -> T {
    let _restore = RestoreRun(RUN.with(|r| r.borrow_mut().replace(said.clone())));
    work()
}

/// What a piece of work gave, with the warnings it said, held ([`held`]).
pub type Held<T> = (T, Vec<String>);

/// Runs `work` (the reading of one of several inputs read at once) with what it says held, not
/// said: the caller says each input's in the inputs' order, so that stderr and the report list
/// them the same way whichever thread finished first.
pub fn held<T>(work: impl FnOnce() -> T) -> Held<T> {
    /// Puts back the holding this thread had (none, or an enclosing [`held`]'s) when dropped,
    /// a panic's unwinding included: a thread left holding would drop every later warning.
    struct Restore(Option<Vec<String>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            HELD.with(|h| *h.borrow_mut() = before);
        }
    }
    let restore = Restore(HELD.with(|h| h.borrow_mut().replace(Vec::new())));
    let result = work();
    let held = HELD.with(|h| h.borrow_mut().take()).unwrap_or_default();
    drop(restore);
    (result, held)
}

/// Every warning this run has said so far.
pub fn said() -> Vec<String> {
    Said::current().all()
}

/// `meta` with the warnings of its report: every one this run has said so far (the reader's,
/// each after its input's name, and the command's), for the reports that list `meta.warnings`.
pub fn settle(meta: &mut Meta) {
    meta.warnings = said().into_iter().map(Warning::new).collect();
}

/// A copy of `meta` [`settle`]d, for a report whose profile is borrowed.
pub fn settled(meta: &Meta) -> Meta {
    let mut meta = meta.clone();
    settle(&mut meta);
    meta
}
