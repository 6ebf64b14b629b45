//! The runs of commands this process makes for others (`cpuprof mcp`), under way, with what
//! each printed and wrote. (Whether stdin and stdout carry a session, and the profiles read so
//! far, are `cpuprof_app::session`'s.)

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Runs of commands in this process, numbered (0: the command line's one run).
static RUNS: AtomicU64 = AtomicU64::new(1);

/// The captured runs under way.
static LIVE: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Whether run `number` is under way (the command line's always is).
pub(crate) fn live(number: u64) -> bool {
    number == 0 || LIVE.lock().unwrap_or_else(PoisonError::into_inner).contains(&number)
}

thread_local! {
    /// The run of a command on this thread (see [`captured`]): its number, what it wrote to
    /// standard output, and the files it wrote.
    static RUN: RefCell<Option<(u64, Captured)>> = const { RefCell::new(None) };
}

/// What a command run by [`captured`] wrote.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    /// What would have gone to standard output.
    pub(crate) stdout: Vec<u8>,
    /// The files written, as named.
    pub(crate) files: Vec<PathBuf>,
}

/// Runs a command on this thread with what it would print kept instead, and the files it
/// writes listed. Its outputs are claimed apart from other runs' (see `Output::new`).
/// `cancelled` stops the run's reading once set.
pub(crate) fn captured<T>(cancelled: Option<Arc<AtomicBool>>, run: impl FnOnce() -> T) -> (T, Captured) {
    let number = RUNS.fetch_add(1, Ordering::SeqCst);
    RUN.with(|r| *r.borrow_mut() = Some((number, Captured::default())));
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).push(number);
    let result = match cancelled {
        Some(cancelled) => cpuprof_app::session::cancellable(cancelled, run),
        None => run(),
    };
    let captured = RUN.with(|r| r.borrow_mut().take()).map(|(_, c)| c).unwrap_or_default();
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).retain(|n| *n != number);
    (result, captured)
}

/// The number of the run on this thread (0: the command line's).
pub(crate) fn run_number() -> u64 {
    RUN.with(|r| r.borrow().as_ref().map_or(0, |(n, _)| *n))
}

/// Adds to what this thread's captured run wrote; false when no run is captured.
pub(crate) fn capture(add: impl FnOnce(&mut Captured)) -> bool {
    RUN.with(|r| r.borrow_mut().as_mut().map(|(_, c)| add(c)).is_some())
}
