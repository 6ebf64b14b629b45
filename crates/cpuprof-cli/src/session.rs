//! The state of a process that runs commands for others (`cpuprof mcp`): whether its standard
//! input and output carry a session, the runs under way with what each printed and wrote, and
//! the profiles read so far.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use anyhow::Result;
use cpuprof_model::{Profile, ValueUnit};

/// Whether this process serves MCP (`cpuprof mcp`): its standard input and output carry the
/// protocol, so no command reads or writes them.
static SERVING: AtomicBool = AtomicBool::new(false);

/// Runs of commands in this process, numbered (0: the command line's one run).
static RUNS: AtomicU64 = AtomicU64::new(1);

/// The captured runs under way.
static LIVE: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Whether run `number` is under way (the command line's always is).
pub(crate) fn live(number: u64) -> bool {
    number == 0 || LIVE.lock().unwrap_or_else(PoisonError::into_inner).contains(&number)
}

/// The cancel flag of the captured run on this thread.
pub(crate) fn cancelled() -> Option<Arc<AtomicBool>> {
    RUN.with(|r| r.borrow().as_ref().and_then(|(_, c)| c.cancelled.clone()))
}

thread_local! {
    /// The run of a command on this thread (see [`captured`]): its number, what it wrote to
    /// standard output, and the files it wrote.
    static RUN: RefCell<Option<(u64, Captured)>> = const { RefCell::new(None) };
}

/// What a command run by [`captured`] wrote.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    /// The bytes a JSON report keeps to (`None`: the whole report): it is cut as it is made.
    pub(crate) budget: Option<usize>,
    /// Set when the run's caller gave up on it (an MCP call cancelled, the session closed):
    /// what it still reads fails, which ends the run.
    pub(crate) cancelled: Option<Arc<AtomicBool>>,
    /// What would have gone to standard output.
    pub(crate) stdout: Vec<u8>,
    /// The files written, as named.
    pub(crate) files: Vec<PathBuf>,
}

/// From now on, standard input and output are the MCP session's: commands get neither.
pub(crate) fn serve() {
    SERVING.store(true, Ordering::SeqCst);
}

/// Whether standard input and output carry an MCP session.
pub(crate) fn serving() -> bool {
    SERVING.load(Ordering::SeqCst)
}

/// Runs a command on this thread with what it would print kept instead, and the files it
/// writes listed. Its outputs are claimed apart from other runs' (see `Output::new`).
/// With a `budget`, a JSON report is written within it (see [`json_format`]); `cancelled`
/// stops the run's reading once set.
pub(crate) fn captured<T>(
    budget: Option<usize>,
    cancelled: Option<Arc<AtomicBool>>,
    run: impl FnOnce() -> T,
) -> (T, Captured) {
    let number = RUNS.fetch_add(1, Ordering::SeqCst);
    RUN.with(|r| *r.borrow_mut() = Some((number, Captured { budget, cancelled, ..Captured::default() })));
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).push(number);
    let result = run();
    let captured = RUN.with(|r| r.borrow_mut().take()).map(|(_, c)| c).unwrap_or_default();
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).retain(|n| *n != number);
    (result, captured)
}

/// The format a JSON report is rendered in: the whole document, or within the byte budget of
/// the captured run on this thread.
pub(crate) fn json_format() -> cpuprof_render::Format {
    match RUN.with(|r| r.borrow().as_ref().and_then(|(_, c)| c.budget)) {
        Some(budget) => cpuprof_render::Format::JsonWithin(budget),
        None => cpuprof_render::Format::Json,
    }
}

/// The number of the run on this thread (0: the command line's).
pub(crate) fn run_number() -> u64 {
    RUN.with(|r| r.borrow().as_ref().map_or(0, |(n, _)| *n))
}

/// Adds to what this thread's captured run wrote; false when no run is captured.
pub(crate) fn capture(add: impl FnOnce(&mut Captured)) -> bool {
    RUN.with(|r| r.borrow_mut().as_mut().map(|(_, c)| add(c)).is_some())
}

/// What identifies a file's content for the session's cache, and how it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) path: PathBuf,
    pub(crate) len: u64,
    pub(crate) modified: Option<SystemTime>,
    /// The time of the inode's last change (ns): a rewrite that restores mtime changes it.
    changed: (i64, i64),
    inode: (u64, u64),
    reading: String,
}

impl Key {
    pub(crate) fn of(path: &Path, reading: &str) -> Option<Key> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(Key {
            path: path.canonicalize().ok()?,
            len: meta.len(),
            modified: meta.modified().ok(),
            changed: (meta.ctime(), meta.ctime_nsec()),
            inode: (meta.dev(), meta.ino()),
            reading: reading.to_owned(),
        })
    }
}

/// The profiles a session has read, the most recently used last.
struct Profiles {
    entries: Mutex<Vec<(Key, Arc<Profile>)>>,
}

/// How many profiles a session keeps read.
const KEPT_PROFILES: usize = 4;

/// The profile at `path` read with `reading` (the reading options, as text), from the session's
/// cache when the file is unchanged; else read by `read` (whole, with its times, so that any
/// later question can be answered from it) and kept.
pub(crate) fn cached(path: &Path, reading: &str, read: impl FnOnce() -> Result<Profile>) -> Result<Profile> {
    static PROFILES: Profiles = Profiles { entries: Mutex::new(Vec::new()) };
    let Some(key) = Key::of(path, reading) else { return read() };
    let kept = {
        let mut entries = PROFILES.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.iter().position(|(k, _)| *k == key).map(|at| {
            let entry = entries.remove(at);
            let profile = Arc::clone(&entry.1);
            entries.push(entry);
            profile
        })
    };
    // Copied outside the lock: other calls need not wait for it.
    if let Some(profile) = kept {
        return Ok(Profile::clone(&profile));
    }
    let profile = read()?;
    // Kept under the key it was read as only if that is still what the file is.
    if Key::of(path, reading).as_ref() != Some(&key) {
        anyhow::bail!("{}: the file changed while it was read", path.display());
    }
    // The rows' sums a reader leaves to the timeline: found once here, not by every copy.
    if let Some(k) = profile.value_index(ValueUnit::Count).or_else(|| profile.value_index(ValueUnit::Nanoseconds)) {
        let _ = profile.samples.values(k);
    }
    let mut entries = PROFILES.entries.lock().unwrap_or_else(PoisonError::into_inner);
    entries.retain(|(k, _)| k.path != key.path || k.reading != key.reading);
    entries.push((key, Arc::new(profile.clone())));
    if entries.len() > KEPT_PROFILES {
        entries.remove(0);
    }
    Ok(profile)
}
