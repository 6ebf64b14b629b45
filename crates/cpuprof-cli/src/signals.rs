//! Temporary output files that Ctrl-C, SIGTERM and SIGHUP do not leave behind.
//!
//! Every temporary file is listed here while it exists. The first time one is made, a thread
//! starts that waits for those signals (signal-hook: its handler only wakes the thread, the
//! removal runs in ordinary code); on one it removes the listed files and ends the process with
//! 128 + the signal's number (130, 143, 129), as a shell reports a process killed by it.
//!
//! `record` changes what a signal does while it waits ([`Reaction`]): it forwards the signal to
//! the command it runs, or asks the profiling to stop; a second signal while stopping ends the
//! process as before.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, PoisonError};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::SignalsInfo;
use signal_hook::low_level::siginfo::Cause;
use tempfile::NamedTempFile;

/// The temporary files that exist now. Held while one is made, renamed or removed, so that the
/// signal thread sees each either listed or gone, and while the signal thread removes them and
/// ends the process, so that no rename happens after that.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The signal that arrived (0 for none), set in the signal handler itself.
static CAUGHT: AtomicUsize = AtomicUsize::new(0);

/// The exit status for a signal that arrived: a run that ends on its own after one (its input
/// cut short by the interruption, say) still ends as interrupted, whichever thread is first.
pub(crate) fn exit_status() -> Option<u8> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        signal => u8::try_from(128 + signal).ok(),
    }
}

/// What the signal thread does with a signal.
#[derive(Clone)]
pub(crate) enum Reaction {
    /// Remove the temporary files and end the process.
    Exit,
    /// Send it on to this process and the processes under it (the command `record` runs),
    /// unless the terminal sent it (Ctrl-C), which reaches them all already. A second signal
    /// kills them: a program busy in synchronous code does not see the first until its event
    /// loop turns.
    Forward { pid: u32, signals: u32 },
    /// Set this flag; a second signal ends the process ([`Reaction::Leave`]).
    Stop(Arc<AtomicBool>),
    /// End the process, saying that the process attached to may be left with its inspector open.
    Leave,
}

static REACTION: Mutex<Reaction> = Mutex::new(Reaction::Exit);

/// While the returned guard lives, signals get `reaction` instead of ending the process.
pub(crate) fn react(reaction: Reaction) -> ReactionGuard {
    watch_signals();
    *REACTION.lock().unwrap_or_else(PoisonError::into_inner) = reaction;
    ReactionGuard
}

/// Puts back the usual reaction (end the process) when dropped.
pub(crate) struct ReactionGuard;

impl Drop for ReactionGuard {
    fn drop(&mut self) {
        *REACTION.lock().unwrap_or_else(PoisonError::into_inner) = Reaction::Exit;
    }
}

/// Reacts to one signal as [`REACTION`] says; whether the process should end.
fn react_to(signal: i32, cause: Cause) -> bool {
    let mut reaction = REACTION.lock().unwrap_or_else(PoisonError::into_inner);
    match &mut *reaction {
        Reaction::Exit => true,
        Reaction::Forward { pid, signals } => {
            *signals += 1;
            if *signals > 1 {
                crate::say("a second signal: killing the recorded command and the processes under it (their profiles are lost)");
                for pid in cpuprof_record::command::process_tree(*pid) {
                    send(pid, rustix::process::Signal::KILL);
                }
            } else if !matches!(cause, Cause::Kernel) {
                for pid in cpuprof_record::command::process_tree(*pid) {
                    forward(pid, signal);
                }
            }
            // The command's exit status says how the run ended, not this signal.
            CAUGHT.store(0, Ordering::SeqCst);
            false
        }
        Reaction::Stop(flag) => {
            flag.store(true, Ordering::SeqCst);
            // Stopping is what the signal asks for: the run ends as it ends.
            CAUGHT.store(0, Ordering::SeqCst);
            *reaction = Reaction::Leave;
            false
        }
        Reaction::Leave => {
            crate::say(
                "a second signal: leaving at once; the process attached to may keep its inspector open \
                 (a debugger port on 127.0.0.1) until it ends",
            );
            true
        }
    }
}

/// Sends `signal` (its number) on to `pid`.
fn forward(pid: u32, signal: i32) {
    let signal = match signal {
        SIGINT => rustix::process::Signal::INT,
        SIGTERM => rustix::process::Signal::TERM,
        _ => rustix::process::Signal::HUP,
    };
    send(pid, signal);
}

/// Sends `signal` to `pid`: a process that is gone already is no error.
pub(crate) fn send(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// Starts the signal thread, once. Where signals cannot be watched the run goes on as before.
pub(crate) fn watch_signals() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        const WATCHED: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];
        for signal in WATCHED {
            let _ = signal_hook::flag::register_usize(signal, &CAUGHT, signal as usize);
        }
        let Ok(mut signals) = SignalsInfo::<WithOrigin>::new(WATCHED) else { return };
        let thread = std::thread::Builder::new().name("cpuprof-signals".to_owned()).spawn(move || {
            for origin in signals.forever() {
                if !react_to(origin.signal, origin.cause) {
                    continue;
                }
                let files = pending();
                for file in files.iter() {
                    if file.is_dir() {
                        let _ = std::fs::remove_dir_all(file);
                    } else {
                        let _ = std::fs::remove_file(file);
                    }
                }
                std::process::exit(128 + origin.signal);
            }
        });
        drop(thread);
    });
}

/// A temporary directory (its owner removes it when done) that those signals remove too, while
/// the returned guard lives.
pub(crate) fn remove_on_signal(dir: &Path) -> PendingDir {
    watch_signals();
    pending().push(dir.to_owned());
    PendingDir(dir.to_owned())
}

/// Keeps a directory listed for removal on a signal; unlists it when dropped.
pub(crate) struct PendingDir(PathBuf);

impl Drop for PendingDir {
    fn drop(&mut self) {
        pending().retain(|p| p != &self.0);
    }
}

/// A temporary file beside an output (`.cpuprof-XXXXXX`), removed when dropped, on those
/// signals, or renamed over the output by [`TempFile::persist`].
pub(crate) struct TempFile {
    file: Option<NamedTempFile>,
}

impl TempFile {
    pub(crate) fn new_in(dir: &Path) -> io::Result<TempFile> {
        watch_signals();
        let mut pending = pending();
        let file = tempfile::Builder::new().prefix(".cpuprof-").tempfile_in(dir)?;
        pending.push(file.path().to_owned());
        Ok(TempFile { file: Some(file) })
    }

    /// Writes all of `bytes`, then gives the file `permissions`.
    pub(crate) fn fill(&self, bytes: &[u8], permissions: std::fs::Permissions) -> io::Result<()> {
        let Some(file) = &self.file else { return Ok(()) };
        let mut file = file.as_file();
        file.write_all(bytes)?;
        file.flush()?;
        file.set_permissions(permissions)
    }

    /// Renames the file over `path`.
    pub(crate) fn persist(mut self, path: &Path) -> io::Result<()> {
        let mut pending = pending();
        let Some(file) = self.file.take() else { return Ok(()) };
        pending.retain(|p| p != file.path());
        // On failure the error holds the file, and dropping it removes it (the lock still held).
        file.persist(path).map(drop).map_err(|e| e.error)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let mut pending = pending();
            pending.retain(|p| p != file.path());
            drop(file);
        }
    }
}
