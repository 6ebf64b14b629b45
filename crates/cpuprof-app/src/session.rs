//! The state of a process that answers requests for others (`cpuprof mcp`): whether its
//! standard input and output carry a session, whether the request on this thread was given up,
//! and the profiles read so far (read once, answered many times).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use anyhow::Result;
use cpuprof_model::{Profile, ValueUnit};

/// Whether this process serves a session over its standard input and output (the MCP server):
/// no request reads or writes them.
static SERVING: AtomicBool = AtomicBool::new(false);

/// From now on, standard input and output are a session's: requests get neither, and profiles
/// are kept read ([`cached`]).
pub fn serve() {
    SERVING.store(true, Ordering::SeqCst);
}

/// Whether standard input and output carry a session.
pub fn serving() -> bool {
    SERVING.load(Ordering::SeqCst)
}

thread_local! {
    /// The cancel flag of the request on this thread ([`cancellable`]).
    static CANCEL: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Runs `work` as a request its caller may give up on: once `cancelled` is set, what it still
/// reads fails, which ends it.
pub fn cancellable<T>(cancelled: Arc<AtomicBool>, work: impl FnOnce() -> T) -> T {
    /// Puts back the flag this thread had when dropped (a panic's unwinding included).
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            CANCEL.with(|c| *c.borrow_mut() = before);
        }
    }
    let _restore = Restore(CANCEL.with(|c| c.borrow_mut().replace(cancelled)));
    work()
}

/// The cancel flag of the request on this thread.
pub fn cancelled() -> Option<Arc<AtomicBool>> {
    CANCEL.with(|c| c.borrow().clone())
}

/// What identifies a file's content for the session's cache, and how it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub path: PathBuf,
    pub len: u64,
    pub modified: Option<SystemTime>,
    /// The time of the inode's last change (ns): a rewrite that restores mtime changes it.
    changed: (i64, i64),
    inode: (u64, u64),
    reading: String,
}

impl Key {
    pub fn of(path: &Path, reading: &str) -> Option<Key> {
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
pub fn cached(path: &Path, reading: &str, read: impl FnOnce() -> Result<Profile>) -> Result<Profile> {
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
