//! Running a command with every Node process it starts profiled.
//!
//! The command runs with `NODE_OPTIONS=--require <preload>` (the user's own `NODE_OPTIONS`
//! kept after it), which every Node process it starts, and each of their worker threads,
//! loads first: `assets/preload.js` profiles the thread in process and writes its profile
//! into a temporary directory when it ends (node 20 takes neither `--cpu-prof` nor `--prof` in
//! `NODE_OPTIONS`). A tick log (`--prof`) can only be asked of V8 on its command line, so it
//! needs a command that is `node` itself; the preload then only turns signals into exits.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Deserialize;

/// The preload, written into the recording's directory.
const PRELOAD: &str = include_str!("../assets/preload.js");

/// What to run and how to profile it.
#[derive(Debug, Clone)]
pub struct CommandOptions {
    /// The program (`node`, `npm`, `npx`, …), found on `PATH` as a shell finds it.
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The sampling interval.
    pub interval: Duration,
    /// A V8 tick log (`--prof`) instead of a `.cpuprofile` per thread.
    pub tick_log: bool,
    /// With a tick log: V8's deoptimizations in it too (`--log-deopt`).
    pub log_deopt: bool,
}

/// Why a recording could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot make a temporary directory for the profiles: {0}")]
    TempDir(std::io::Error),
    #[error(
        "a tick log (V8's --prof) is asked of node on its own command line, which `{0}` is not: run node directly \
         (NODE_OPTIONS does not take --prof)"
    )]
    TickLogNeedsNode(String),
    #[error("cannot read the profiles in {}: {source}", dir.display())]
    Collect { dir: PathBuf, source: std::io::Error },
}

/// A recording under way: the temporary directory the profiles are written into (removed
/// when this is dropped).
#[derive(Debug)]
pub struct Recording {
    dir: tempfile::TempDir,
    tick_log: bool,
}

/// One profile the command's processes wrote.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Where it is now, in the recording's directory.
    pub path: PathBuf,
    pub pid: u32,
    pub thread: Thread,
    /// The process's command line (`process.argv`; empty for a tick log).
    pub argv: Vec<String>,
    /// A file name that says which process and thread it was: `<script>.<pid>.main.cpuprofile`,
    /// `<script>.<pid>.worker-<id>.cpuprofile`, `node.<pid>.<isolate>.log`.
    pub file_name: String,
}

/// Which thread of its process a profile is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Thread {
    Main,
    /// A worker thread, by Node's thread id.
    Worker(u64),
    /// A tick log's isolate (its address, as V8 names the log).
    Isolate(String),
}

impl Recorded {
    /// `pid 123 main thread (node app.js)`: what the profile is of, for people.
    pub fn label(&self) -> String {
        let thread = match &self.thread {
            Thread::Main => "main thread".to_owned(),
            Thread::Worker(id) => format!("worker {id}"),
            Thread::Isolate(address) => format!("isolate {address}"),
        };
        let command = self.command_line();
        if command.is_empty() {
            format!("pid {} {thread}", self.pid)
        } else {
            format!("pid {} {thread} ({command})", self.pid)
        }
    }

    /// The process's command line, the program by its file name: `node app.js --port 80`.
    pub fn command_line(&self) -> String {
        let mut words = self.argv.iter();
        let Some(program) = words.next() else { return String::new() };
        let program =
            Path::new(program).file_name().map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
        std::iter::once(program).chain(words.cloned()).collect::<Vec<_>>().join(" ")
    }
}

/// `process.argv` and the rest the preload writes beside a profile.
#[derive(Deserialize)]
struct About {
    pid: u32,
    #[serde(rename = "threadId")]
    thread_id: u64,
    #[serde(default)]
    argv: Vec<String>,
    #[serde(rename = "startedMs", default)]
    started_ms: f64,
}

impl Recording {
    /// A recording of `options`' command: its directory made, and the command to spawn (the
    /// caller runs it, with the I/O and signals it chooses).
    pub fn prepare(options: &CommandOptions) -> Result<(Recording, Command), RecordError> {
        let dir = tempfile::Builder::new().prefix("cpuprof-record-").tempdir().map_err(RecordError::TempDir)?;
        let preload = install_preload(dir.path()).map_err(RecordError::TempDir)?;
        let mut command = Command::new(&options.program);
        let interval_us = options.interval.as_micros().clamp(1, u128::from(u32::MAX));
        if options.tick_log {
            if !is_node(&options.program) {
                return Err(RecordError::TickLogNeedsNode(options.program.to_string_lossy().into_owned()));
            }
            let mut log = OsString::from("--logfile=");
            log.push(dir.path().join("v8.log"));
            command.arg("--prof").arg(format!("--prof-sampling-interval={interval_us}")).arg(log);
            if options.log_deopt {
                command.arg("--log-deopt");
            }
            command.env("CPUPROF_RECORD_SIGNALS_ONLY", "1");
        }
        command.args(&options.args);
        command.env("CPUPROF_RECORD_DIR", dir.path());
        command.env("CPUPROF_RECORD_INTERVAL_US", interval_us.to_string());
        command.env("NODE_OPTIONS", node_options(std::env::var_os("NODE_OPTIONS").as_deref(), &preload));
        Ok((Recording { dir, tick_log: options.tick_log }, command))
    }

    /// Where the profiles are being written.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Keeps the directory and the profiles in it (when they could not be copied elsewhere):
    /// where it is.
    pub fn keep(self) -> PathBuf {
        self.dir.keep()
    }

    /// How many worker threads started and wrote no profile (stopped by `worker.terminate()`,
    /// or busy in synchronous code when their process exited): each leaves its marker.
    pub fn lost_workers(&self) -> usize {
        std::fs::read_dir(self.dir.path()).map_or(0, |entries| {
            entries.filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".live"))).count()
        })
    }

    /// How many Node processes loaded the preload (each main thread leaves a marker): when
    /// nothing was recorded, whether Node processes ran and wrote nothing, or none ran with it.
    pub fn loaded_processes(&self) -> usize {
        std::fs::read_dir(self.dir.path()).map_or(0, |entries| {
            entries.filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".loaded"))).count()
        })
    }

    /// The profiles written so far (all of them once the command has ended), in the order their
    /// threads started.
    pub fn collect(&self) -> Result<Vec<Recorded>, RecordError> {
        let dir = self.dir.path();
        let failed = |source| RecordError::Collect { dir: dir.to_owned(), source };
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(failed)? {
            let path = entry.map_err(failed)?.path();
            let Some(name) = path.file_name().and_then(OsStr::to_str) else { continue };
            if self.tick_log {
                if let Some(recorded) = tick_log(&path, name) {
                    found.push((0.0, recorded));
                }
            } else if let Some(stem) = name.strip_suffix(".cpuprofile") {
                // The preload writes the description first: a profile without one is not its.
                let Ok(text) = std::fs::read(dir.join(format!("{stem}.json"))) else { continue };
                let Ok(about) = serde_json::from_slice::<About>(&text) else { continue };
                let thread = if about.thread_id == 0 { Thread::Main } else { Thread::Worker(about.thread_id) };
                let script = script_name(&about.argv);
                let file_name = match &thread {
                    Thread::Worker(id) => format!("{script}.{}.worker-{id}.cpuprofile", about.pid),
                    _ => format!("{script}.{}.main.cpuprofile", about.pid),
                };
                found.push((about.started_ms, Recorded { path, pid: about.pid, thread, argv: about.argv, file_name }));
            }
        }
        found.sort_by(|(a, x), (b, y)| {
            a.total_cmp(b).then(x.pid.cmp(&y.pid)).then_with(|| thread_order(&x.thread).cmp(&thread_order(&y.thread)))
        });
        Ok(found.into_iter().map(|(_, recorded)| recorded).collect())
    }
}

/// `pid` and every process under it, parents before children (Linux's
/// `/proc/PID/task/TID/children`; only `pid` where that cannot be read): the processes a
/// terminal's Ctrl-C reaches when they run in the foreground, for a signal to reach them alike.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut tree = vec![pid];
    let mut next = 0;
    while next < tree.len() && tree.len() < 100_000 {
        let parent = tree[next];
        next += 1;
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else { continue };
        for task in tasks.flatten() {
            let Ok(children) = std::fs::read_to_string(task.path().join("children")) else { continue };
            for child in children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()) {
                if !tree.contains(&child) {
                    tree.push(child);
                }
            }
        }
    }
    tree
}

/// Writes the preload where it stays: processes the command leaves running (a daemon, a
/// detached child) keep `NODE_OPTIONS` and would fail to start node if the file named there
/// were gone. It goes into the user's cache directory, named by its content's hash, when that is
/// safe (see [`cached_preload`]); else into the recording's own directory.
fn install_preload(recording: &Path) -> std::io::Result<PathBuf> {
    let cache =
        std::env::var_os("XDG_CACHE_HOME").filter(|d| Path::new(d).is_absolute()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|h| Path::new(h).is_absolute()).map(|h| Path::new(&h).join(".cache"))
        });
    if let Some(path) = cache.and_then(|cache| cached_preload(&cache)) {
        return Ok(path);
    }
    let path = recording.join("preload.js");
    std::fs::write(&path, PRELOAD)?;
    Ok(path)
}

/// The preload in `<cache>/cpuprof/`, written there if need be, where no other user can put
/// code of theirs in its place (it runs in every Node process recorded, as the recording
/// user): `cpuprof/` is the user's and not writable by others, in a cache directory that is the
/// user's or root's and in which others cannot rename it (not writable by them, or sticky as
/// `/tmp`); the file is opened without following links, and must be the user's, not writable
/// by others, and hold the preload byte for byte. `None` where any of that fails.
fn cached_preload(cache: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let me = rustix::process::geteuid().as_raw();
    std::fs::create_dir_all(cache).ok()?;
    let parent = std::fs::metadata(cache).ok()?;
    if !(parent.uid() == me || parent.uid() == 0) || (parent.mode() & 0o022 != 0 && parent.mode() & 0o1000 == 0) {
        return None;
    }
    let dir = cache.join("cpuprof");
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o022 != 0 {
        return None;
    }
    let path = dir.join(format!("record-preload-{:016x}.js", fnv1a(PRELOAD.as_bytes())));
    if is_our_preload(&path, me) {
        return Some(path);
    }
    // Missing, or not as it should be (a link, another content): ours replaces it.
    let file = tempfile::Builder::new().prefix(".record-preload-").tempfile_in(&dir).ok()?;
    std::fs::write(file.path(), PRELOAD).ok()?;
    file.persist(&path).ok()?;
    is_our_preload(&path, me).then_some(path)
}

/// Whether `path` is, not through a link, a regular file of user `me`'s that others cannot
/// write and that holds the preload.
fn is_our_preload(path: &Path, me: u32) -> bool {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let flags = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    let Ok(mut file) = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path) else { return false };
    let Ok(meta) = file.metadata() else { return false };
    if !meta.is_file() || meta.uid() != me || meta.mode() & 0o022 != 0 || meta.len() != PRELOAD.len() as u64 {
        return false;
    }
    let mut bytes = Vec::with_capacity(PRELOAD.len());
    file.read_to_end(&mut bytes).is_ok() && bytes == PRELOAD.as_bytes()
}

/// FNV-1a, 64 bits: a name for the preload's version (not a defence: the file is checked byte for byte).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

fn thread_order(thread: &Thread) -> (u64, &str) {
    match thread {
        Thread::Main => (0, ""),
        Thread::Worker(id) => (*id, ""),
        Thread::Isolate(address) => (0, address),
    }
}

/// V8's name for a tick log: `isolate-<address>-<pid>-v8.log`.
fn tick_log(path: &Path, name: &str) -> Option<Recorded> {
    let rest = name.strip_prefix("isolate-")?.strip_suffix("-v8.log")?;
    let (address, pid) = rest.split_once('-')?;
    let pid = pid.parse().ok()?;
    let thread = Thread::Isolate(address.to_owned());
    Some(Recorded {
        path: path.to_owned(),
        pid,
        thread,
        argv: Vec::new(),
        file_name: format!("node.{pid}.{address}.log"),
    })
}

/// The script a process ran, for file names: `app` for `node /srv/app.js`, else `node`; only
/// characters that are safe in a file name on any system.
fn script_name(argv: &[String]) -> String {
    let script = argv.get(1).and_then(|s| Path::new(s).file_stem()).map(|s| s.to_string_lossy().into_owned());
    let safe: String =
        script.unwrap_or_default().chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_')).take(40).collect();
    // Not a leading `-`: the name would read as an option to the next command given it.
    let safe = safe.trim_start_matches('-').to_owned();
    if safe.is_empty() {
        "node".to_owned()
    } else {
        safe
    }
}

/// Whether `program` is a node binary (`node`, `/usr/bin/node`, `nodejs`, `node20`).
fn is_node(program: &OsStr) -> bool {
    Path::new(program).file_name().and_then(OsStr::to_str).is_some_and(|name| name.starts_with("node"))
}

/// The preload required, then the user's `NODE_OPTIONS`. Node splits `NODE_OPTIONS` at spaces
/// outside double quotes, in which `\` escapes the next character, and stops reading it at the
/// first word that is not an option (`--title='my app'` gives `app'`): the preload comes first
/// so that nothing in the user's options can leave it out.
fn node_options(user: Option<&OsStr>, preload: &Path) -> OsString {
    let path = preload.to_string_lossy();
    let quoted = path.replace('\\', "\\\\").replace('"', "\\\"");
    let mut options = OsString::from(format!("--require \"{quoted}\""));
    if let Some(user) = user.filter(|u| !u.is_empty()) {
        options.push(" ");
        options.push(user);
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_tree_holds_the_children() {
        let mut child = Command::new("sleep").arg("5").spawn().unwrap();
        let tree = process_tree(std::process::id());
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(tree[0], std::process::id());
        assert!(tree.contains(&child.id()), "{tree:?}");
    }

    #[test]
    fn node_options_keep_the_users_and_quote_the_preload() {
        let preload = Path::new("/tmp/a b/pre\"load.js");
        assert_eq!(node_options(None, preload), OsString::from("--require \"/tmp/a b/pre\\\"load.js\""));
        assert_eq!(
            node_options(Some(OsStr::new("--max-old-space-size=100")), preload),
            OsString::from("--require \"/tmp/a b/pre\\\"load.js\" --max-old-space-size=100")
        );
    }

    #[test]
    fn script_names_are_safe_file_names() {
        let argv = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(script_name(&argv(&["/usr/bin/node", "/srv/app.server.js"])), "appserver");
        assert_eq!(script_name(&argv(&["node"])), "node");
        assert_eq!(script_name(&argv(&["node", "../\n../x/"])), "x");
        assert_eq!(script_name(&argv(&["node", "\u{202e}"])), "node");
        assert_eq!(script_name(&argv(&["node", "-"])), "node");
        assert_eq!(script_name(&argv(&["node", "--help.js"])), "help");
        assert_eq!(script_name(&argv(&["node", "ünï cødé.js"])), "ünïcødé");
    }
}
