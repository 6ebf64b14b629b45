//! Attaching to a running Node process over its inspector.
//!
//! Node opens its inspector when it receives SIGUSR1: on 127.0.0.1:9229, or on the port it
//! was started with (`--inspect-port`). [`attach`] finds the inspector of a process when it is
//! open (among the TCP ports the process listens on, read from `/proc`), else opens it with
//! SIGUSR1 — only after making sure the process catches that signal, which kills a process
//! that does not — then finds its target over the inspector's HTTP `/json/list` and speaks the
//! DevTools protocol over its WebSocket: `Profiler.enable`, `Profiler.setSamplingInterval`,
//! `Profiler.start`, a wait, `Profiler.stop`, `Profiler.disable`, for the main thread and for
//! each worker thread (through Node's `NodeWorker` domain). It leaves the process as it found
//! it: an inspector it opened is closed again (`require('inspector').close()`, run from a timer).
//!
//! Only loopback addresses are used, unless an inspector URL names another host.
//! Opening an inspector by pid needs Linux's `/proc`.

mod cdp;
mod procfs;

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use cdp::{CallError, ConnectError, Key, ListError, ListedTarget, Session, WorkerEvent};
use procfs::{Listener, Reach};

/// Node's default inspector port.
pub const DEFAULT_INSPECT_PORT: u16 = 9229;

/// How long the inspector has to open after SIGUSR1.
const OPEN_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a command may take (a thread runs inspector commands between JavaScript
/// statements, so a busy thread answers late, not never).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `Profiler.stop` may take: the profile is built and serialized on the thread.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a worker thread may take to start profiling before it is left out.
const WORKER_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the inspector's port may take to close after it was told to before cpuprof says
/// that it waits for it.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one `/json/list` request may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one of a process's other ports (not known to be its inspector's) may take to answer.
const PROBE_TIMEOUT: Duration = Duration::from_millis(300);
/// At most this many of a process's other listening ports are asked whether they are its
/// inspector (after the inspector ports it is known to use).
const MAX_PROBES: usize = 16;

/// The expression that closes an inspector cpuprof opened, evaluated in the main thread with
/// the command-line API (which gives Node's `require`).
///
/// `require('inspector').close()` called right away, in the evaluation, ends the session
/// that asked for it before it answers (node 20: the connection just closes, no reply); from
/// a timer it runs after the answer is sent, and then closes the listening socket and every
/// connection (the port is closed a few milliseconds later; the process prints "Debugger
/// ending on ws://…" on its standard error). A later SIGUSR1 opens the inspector again, with
/// a new target id.
///
/// SIGUSR1 asks node to open its inspector twice: from within running JavaScript (which opens
/// it when the program is busy) and from the event loop's poll phase. The second request waits
/// while the program is busy, and a close run from a timer would run before it (timers come
/// first when the loop turns), and the inspector would open again for good. So the timer sets
/// an immediate, which runs after that poll phase: the pending request has found the
/// inspector open and done nothing.
const CLOSE_INSPECTOR: &str = "(r => { setTimeout(() => setImmediate(() => r('inspector').close()), 0); })(require)";

/// How long a closed inspector is watched for opening again (a start request it had pending).
const REOPEN_WATCH: Duration = Duration::from_millis(300);
/// How many times an inspector that opens again is closed again before cpuprof gives up.
const CLOSE_ROUNDS: usize = 3;

/// What to attach to and how to profile it.
#[derive(Debug, Clone)]
pub struct AttachOptions {
    /// The process to attach to. Its inspector is opened with SIGUSR1 when it is not open.
    /// Not used when [`AttachOptions::url`] is given. Default: none.
    pub pid: Option<u32>,
    /// The port the process's inspector listens on, or opens on. Default: found from the
    /// process's listening sockets and its options, else Node's 9229.
    pub inspect_port: Option<u16>,
    /// The URL of an inspector that is already open: `ws://HOST:PORT/ID` (a target's
    /// WebSocket), or `http://HOST:PORT` (its target list is read); `HOST:PORT` is taken as
    /// the latter. It may name any host (a forwarded port). Default: none.
    pub url: Option<String>,
    /// The sampling interval (rounded to whole microseconds). Default: 1 ms, as V8's.
    pub interval: Duration,
    /// How long to profile. Default: `None`, until `stop` is set.
    pub duration: Option<Duration>,
}

impl Default for AttachOptions {
    fn default() -> Self {
        AttachOptions { pid: None, inspect_port: None, url: None, interval: Duration::from_millis(1), duration: None }
    }
}

/// The profile of one thread.
#[derive(Debug, Clone)]
pub struct AttachedProfile {
    /// "main thread", or "worker 1 (file:///…/x.js)".
    pub label: String,
    /// Node's `threadId` of the thread: 0 for the main thread, the worker's id for a worker.
    pub thread_id: Option<u64>,
    /// The `.cpuprofile` JSON: the `profile` of `Profiler.stop`'s result, byte for byte as the
    /// inspector sent it.
    pub json: Vec<u8>,
}

/// What an attachment recorded.
#[derive(Debug, Clone, Default)]
pub struct Attached {
    /// One profile per thread profiled; the main thread's first (when it could be had).
    pub profiles: Vec<AttachedProfile>,
    /// What the user should know: threads that could not be profiled, an inspector that
    /// could not be closed again.
    pub notes: Vec<String>,
    /// Whether cpuprof opened the inspector (and closed it again).
    pub opened_inspector: bool,
}

/// Why an attachment failed. Each message is one line that names the process, port or URL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttachError {
    #[error("nothing to attach to: give a process id or the URL of an open inspector")]
    NoTarget,
    #[error("no such process: {pid}")]
    NoSuchProcess { pid: u32 },
    #[error(
        "not permitted to signal process {pid} or read its open files: it belongs to another user, or is protected \
         (attach as its user, or as root)"
    )]
    PermissionDenied { pid: u32 },
    #[error("process {pid} has exited (a zombie its parent has not reaped)")]
    Exited { pid: u32 },
    #[error(
        "process {pid} ({name}) is not a Node process: {}",
        if *catches_sigusr1 {
            "SIGUSR1 would not open an inspector in it, so it was not sent"
        } else {
            "it does not catch SIGUSR1, which would kill it, so the signal was not sent"
        }
    )]
    NotNode { pid: u32, name: String, catches_sigusr1: bool },
    #[error(
        "Node process {pid} does not catch SIGUSR1, so the signal would kill it instead of opening its inspector \
         (it runs with its inspector signal disabled, --disable-sigusr1, or its program replaced Node's handler); \
         the signal was not sent: start it with its inspector open (node --inspect) and attach by the inspector's URL"
    )]
    SignalNotCaught { pid: u32 },
    #[error("cannot send SIGUSR1 to process {pid}: {detail}")]
    Signal { pid: u32, detail: String },
    #[error("process {pid} exited after it was sent SIGUSR1 (to open its inspector)")]
    DiedOnSignal { pid: u32 },
    #[error(
        "process {pid} was sent SIGUSR1 but its inspector did not open within {} s (expected on port {port}): its program may listen for SIGUSR1 itself (process.on('SIGUSR1'), which takes the signal from Node's inspector and cannot be seen from outside before it is sent), or its main thread is blocked in a synchronous call (it opens the inspector when the call returns, and it then stays open); its standard error may say more",
        OPEN_TIMEOUT.as_secs()
    )]
    InspectorDidNotOpen { pid: u32, port: u16 },
    #[error(
        "the inspector of process {pid} cannot open: port {port} is busy (another process listens on it; \
         Node gives up with \"address already in use\" on its standard error): start the process with another inspector port"
    )]
    PortBusy { pid: u32, port: u16 },
    #[error(
        "the inspector of process {pid} listens on {addr}, not on a loopback address: only loopback inspectors are \
         attached to by pid; give its URL to connect to it there"
    )]
    NotLoopback { pid: u32, addr: SocketAddr },
    #[error("cannot read {path}: {detail}")]
    Proc { path: String, detail: String },
    #[error("invalid inspector URL {url}: {reason} (expected ws://HOST:PORT/ID or http://HOST:PORT)")]
    BadUrl { url: String, reason: String },
    #[error("no inspector answers at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("{url} is not a Node inspector: {detail}")]
    NotInspector { url: String, detail: String },
    #[error("the inspector at {url} lists no target to attach to (another debugger may hold it)")]
    NoTargets { url: String },
    #[error(
        "{who}: the inspector refused the WebSocket connection{}: its target id is unknown (the id changes each time \
         the inspector opens; its http://HOST:PORT address gives the current one), or another debugger holds it",
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
    )]
    Refused { who: String, status: Option<u16> },
    #[error("{who}: cannot connect to {url}: {detail}")]
    Connect { who: String, url: String, detail: String },
    #[error("{who}: {method} failed: {detail}")]
    Command { who: String, method: String, detail: String },
    #[error(
        "{who} did not answer {method} within {seconds} s: its main thread may be blocked in a long synchronous call"
    )]
    Timeout { who: String, method: String, seconds: u64 },
    #[error("{who}: the inspector connection closed while {during} (did the process exit?)")]
    ConnectionLost { who: String, during: String },
    #[error("interrupted before profiling started")]
    Interrupted,
}

/// Attaches to a process's inspector (opening it if need be), profiles its threads for
/// `options.duration` or until `stop` is set (it is read every 50 ms), and detaches, leaving
/// the process as it was. `on_progress` is told what happens, one line at a time.
pub fn attach(
    options: &AttachOptions,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&str),
) -> Result<Attached, AttachError> {
    let endpoint = match (&options.url, options.pid) {
        (Some(url), _) => endpoint_of_url(url)?,
        (None, Some(pid)) => endpoint_of_pid(pid, options.inspect_port, on_progress)?,
        (None, None) => return Err(AttachError::NoTarget),
    };
    let mut session = match connect(&endpoint) {
        Ok(session) => session,
        Err(e) => {
            if let (Some(pid), Some(listener)) = (endpoint.pid, endpoint.opened) {
                on_progress(&format!(
                    "the inspector of process {pid} stays open on {}: it could not be connected to",
                    loopback_addr(&listener).unwrap_or(endpoint.addr)
                ));
            }
            return Err(e);
        }
    };
    on_progress(&format!("connected to {}", endpoint.ws_url()));
    let mut notes = Vec::new();
    let outcome = record(&mut session, &endpoint, options, stop, on_progress, &mut notes);
    match (endpoint.pid, endpoint.opened) {
        (Some(pid), Some(listener)) => {
            let addr = loopback_addr(&listener).unwrap_or(endpoint.addr);
            // A program that ended on its own is expected to be gone; one that ends while its
            // inspector is being closed is said, as cpuprof promises to leave it running.
            let program_ended = session.finished();
            match close_inspector(session, pid, &listener, stop, on_progress) {
                Ok(true) => on_progress(&format!("closed the inspector of process {pid} again")),
                Ok(false) if program_ended => on_progress(&format!("detached; process {pid} has exited")),
                Ok(false) => {
                    let note = format!("process {pid} ended while cpuprof was closing its inspector");
                    // As below: with no profile, the notes are not shown.
                    if outcome.is_err() {
                        on_progress(&note);
                    }
                    notes.push(note);
                }
                Err(why) => {
                    let note = format!("the inspector of process {pid} stays open on {addr}: {why}");
                    if outcome.is_err() {
                        on_progress(&note);
                    }
                    notes.push(note);
                }
            }
        }
        _ => session.close(),
    }
    outcome.map(|profiles| Attached { profiles, notes, opened_inspector: endpoint.opened.is_some() })
}

/// Where the inspector's WebSocket is.
#[derive(Debug)]
struct Endpoint {
    /// The addresses to try, in order (a host name may resolve to several).
    addrs: Vec<SocketAddr>,
    /// The address the target list came from, or the first of `addrs`.
    addr: SocketAddr,
    /// The WebSocket's path: `/<target id>`.
    path: String,
    /// "process 1234" or "the inspector at ws://…", for messages.
    who: String,
    pid: Option<u32>,
    /// The inspector's listening socket, when cpuprof opened it.
    opened: Option<Listener>,
}

impl Endpoint {
    fn ws_url(&self) -> String {
        format!("ws://{}{}", self.addr, self.path)
    }
}

/// The endpoint an inspector URL names.
fn endpoint_of_url(text: &str) -> Result<Endpoint, AttachError> {
    let bad = |reason: &str| AttachError::BadUrl { url: text.to_owned(), reason: reason.to_owned() };
    let with_scheme = if text.contains("://") { text.to_owned() } else { format!("http://{text}") };
    let url = url::Url::parse(&with_scheme).map_err(|e| bad(&e.to_string()))?;
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d.to_owned(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => return Err(bad("no host")),
    };
    let port = url.port().unwrap_or(DEFAULT_INSPECT_PORT);
    let addrs: Vec<SocketAddr> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| AttachError::Unreachable { url: text.to_owned(), detail: format!("cannot resolve {host}: {e}") })?
        .collect();
    let first = *addrs.first().ok_or_else(|| bad("its host resolves to no address"))?;
    match url.scheme() {
        "ws" => {
            if url.path().len() <= 1 {
                return Err(bad("no target id in its path"));
            }
            let mut path = url.path().to_owned();
            if let Some(query) = url.query() {
                path = format!("{path}?{query}");
            }
            Ok(Endpoint { addrs, addr: first, path, who: format!("the inspector at {text}"), pid: None, opened: None })
        }
        "http" => {
            let mut last = None;
            for addr in &addrs {
                match cdp::list_targets(*addr, LIST_TIMEOUT) {
                    Ok(targets) => {
                        let path =
                            pick_target(&targets).ok_or_else(|| AttachError::NoTargets { url: text.to_owned() })?;
                        let who = format!("the inspector at ws://{addr}{path}");
                        return Ok(Endpoint { addrs: vec![*addr], addr: *addr, path, who, pid: None, opened: None });
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(match last {
                Some(ListError::NotInspector(detail)) => AttachError::NotInspector { url: text.to_owned(), detail },
                Some(ListError::Unreachable(detail)) => AttachError::Unreachable { url: text.to_owned(), detail },
                None => bad("its host resolves to no address"),
            })
        }
        "wss" | "https" => Err(bad("TLS is not supported; forward the inspector's port and use ws:// or http://")),
        other => Err(bad(&format!("unknown scheme {other}:"))),
    }
}

/// The WebSocket path of the target to profile: a `node` target if there is one, else the
/// first that has a WebSocket.
fn pick_target(targets: &[ListedTarget]) -> Option<String> {
    let with_ws = || targets.iter().filter_map(|t| t.web_socket_debugger_url.as_deref().map(|u| (t, u)));
    let (_, ws) = with_ws().find(|(t, _)| t.kind == "node").or_else(|| with_ws().next())?;
    // Only the path is taken: the WebSocket is reached where the list was, whatever host the
    // list names (0.0.0.0, a host name).
    let url = url::Url::parse(ws).ok()?;
    let mut path = url.path().to_owned();
    if let Some(query) = url.query() {
        path = format!("{path}?{query}");
    }
    Some(path)
}

/// The address to reach a listening socket at, if it is on a loopback address (or on every
/// address).
fn loopback_addr(listener: &Listener) -> Option<SocketAddr> {
    let ip = match listener.ip {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V4(ip) if ip.is_loopback() => IpAddr::V4(ip),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_loopback() => IpAddr::V6(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) if v4.is_loopback() || v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            _ => return None,
        },
        IpAddr::V4(_) => return None,
    };
    Some(SocketAddr::new(ip, listener.port))
}

/// Finds the inspector of `pid`, opening it with SIGUSR1 when it is not open.
fn endpoint_of_pid(
    pid: u32,
    inspect_port: Option<u16>,
    on_progress: &mut dyn FnMut(&str),
) -> Result<Endpoint, AttachError> {
    if !std::path::Path::new("/proc/self/status").is_file() {
        return Err(AttachError::Proc {
            path: "/proc".to_owned(),
            detail: "attaching by pid needs Linux's /proc; open the inspector another way and attach by its URL"
                .to_owned(),
        });
    }
    match procfs::reach(pid) {
        Reach::Ok => {}
        Reach::Missing => return Err(AttachError::NoSuchProcess { pid }),
        Reach::Denied => return Err(AttachError::PermissionDenied { pid }),
    }
    let info = procfs::process_info(pid).map_err(|e| proc_error(pid, "status", &e))?;
    if info.zombie {
        return Err(AttachError::Exited { pid });
    }
    // Nothing is sent to a process that is not Node, not even a request to its ports.
    if !info.looks_like_node() {
        return Err(AttachError::NotNode { pid, name: info.name(), catches_sigusr1: info.catches_sigusr1 });
    }
    let listeners = procfs::listeners(pid).map_err(|e| proc_error(pid, "fd", &e))?;
    let configured = info.configured_port();
    let mut preferred: Vec<u16> = Vec::new();
    for port in [inspect_port, configured, Some(DEFAULT_INSPECT_PORT)].into_iter().flatten() {
        if !preferred.contains(&port) {
            preferred.push(port);
        }
    }
    let who = format!("process {pid}");

    // An inspector that is open already: among the ports it listens on, those it is known to
    // use for its inspector first.
    let mut ordered: Vec<Listener> = Vec::new();
    for port in &preferred {
        ordered.extend(listeners.iter().filter(|l| l.port == *port));
    }
    let others = listeners.iter().filter(|l| !preferred.contains(&l.port)).take(MAX_PROBES);
    ordered.extend(others);
    for listener in &ordered {
        let Some(addr) = loopback_addr(listener) else { continue };
        let timeout = if preferred.contains(&listener.port) { LIST_TIMEOUT } else { PROBE_TIMEOUT };
        if let Ok(targets) = cdp::list_targets(addr, timeout) {
            if let Some(path) = pick_target(&targets) {
                on_progress(&format!("the inspector of process {pid} is open on {addr}"));
                return Ok(Endpoint { addrs: vec![addr], addr, path, who, pid: Some(pid), opened: None });
            }
        }
    }
    // An inspector on another address (`--inspect=192.168.1.5:9229`) is left alone.
    if let Some(remote) = ordered.iter().find(|l| preferred.contains(&l.port) && loopback_addr(l).is_none()) {
        return Err(AttachError::NotLoopback { pid, addr: SocketAddr::new(remote.ip, remote.port) });
    }

    // SIGUSR1 kills a process that does not catch it: a non-Node process, or a Node process
    // whose inspector signal is disabled.
    if !info.catches_sigusr1 {
        return Err(if info.looks_like_node() {
            AttachError::SignalNotCaught { pid }
        } else {
            AttachError::NotNode { pid, name: info.name(), catches_sigusr1: false }
        });
    }
    let before: HashSet<u64> = listeners.iter().map(|l| l.inode).collect();
    procfs::send_sigusr1(pid).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => AttachError::PermissionDenied { pid },
        std::io::ErrorKind::NotFound => AttachError::NoSuchProcess { pid },
        _ if e.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error()) => AttachError::NoSuchProcess { pid },
        _ => AttachError::Signal { pid, detail: e.to_string() },
    })?;

    let expected = inspect_port.or(configured).unwrap_or(DEFAULT_INSPECT_PORT);
    let deadline = Instant::now() + OPEN_TIMEOUT;
    loop {
        std::thread::sleep(cdp::POLL);
        if !matches!(procfs::reach(pid), Reach::Ok) {
            return Err(AttachError::DiedOnSignal { pid });
        }
        let now = procfs::listeners(pid).map_err(|e| proc_error(pid, "fd", &e))?;
        let mut new: Vec<Listener> = now.into_iter().filter(|l| !before.contains(&l.inode)).collect();
        new.sort_by_key(|l| (!preferred.contains(&l.port), l.port));
        for listener in &new {
            let Some(addr) = loopback_addr(listener) else {
                // Opened, but where it is not attached to: it stays open, as the process
                // was told to have it.
                return Err(AttachError::NotLoopback { pid, addr: SocketAddr::new(listener.ip, listener.port) });
            };
            if let Ok(targets) = cdp::list_targets(addr, LIST_TIMEOUT) {
                if let Some(path) = pick_target(&targets) {
                    on_progress(&format!("sent SIGUSR1 to {pid}; inspector on {addr}"));
                    return Ok(Endpoint {
                        addrs: vec![addr],
                        addr,
                        path,
                        who,
                        pid: Some(pid),
                        opened: Some(*listener),
                    });
                }
            }
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    let busy = procfs::namespace_listeners(pid)
        .map_err(|e| proc_error(pid, "net/tcp", &e))?
        .iter()
        .any(|l| l.port == expected && !before.contains(&l.inode));
    Err(if busy {
        AttachError::PortBusy { pid, port: expected }
    } else {
        AttachError::InspectorDidNotOpen { pid, port: expected }
    })
}

fn proc_error(pid: u32, what: &str, e: &std::io::Error) -> AttachError {
    match e.kind() {
        std::io::ErrorKind::NotFound => AttachError::NoSuchProcess { pid },
        std::io::ErrorKind::PermissionDenied => AttachError::PermissionDenied { pid },
        _ => AttachError::Proc { path: format!("/proc/{pid}/{what}"), detail: e.to_string() },
    }
}

/// Opens the WebSocket.
fn connect(endpoint: &Endpoint) -> Result<Session, AttachError> {
    let mut last = None;
    for addr in &endpoint.addrs {
        match Session::connect(*addr, &endpoint.path, COMMAND_TIMEOUT) {
            Ok(session) => return Ok(session),
            Err(ConnectError::Refused(status)) => {
                return Err(AttachError::Refused { who: endpoint.who.clone(), status });
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    let (addr, detail) = match last {
        Some((addr, ConnectError::Tcp(io))) => (*addr, cdp::describe_io(&io)),
        Some((addr, ConnectError::Handshake(s))) => (*addr, s),
        _ => (endpoint.addr, "no address to connect to".to_owned()),
    };
    Err(AttachError::Connect { who: endpoint.who.clone(), url: format!("ws://{addr}{}", endpoint.path), detail })
}

/// A thread being profiled.
struct Thread {
    label: String,
    /// Node's `threadId`.
    id: Option<u64>,
    /// The `NodeWorker` session of a worker; `None` for the main thread.
    session: Option<String>,
    /// Whether it is still there (a worker that ended is not).
    alive: bool,
}

/// Profiles every thread: the main thread must be profiled, a worker that cannot be is left
/// out with a note.
fn record(
    session: &mut Session,
    endpoint: &Endpoint,
    options: &AttachOptions,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&str),
    notes: &mut Vec<String>,
) -> Result<Vec<AttachedProfile>, AttachError> {
    let who = endpoint.who.as_str();
    let fail =
        |method: &str, e: CallError, timeout: Duration, during: &str| call_error(who, method, e, timeout, during);
    // Workers are announced by `NodeWorker.attachedToWorker`, the ones already running before
    // the reply. A target that is not Node (no such domain) has none.
    match session.call(
        None,
        "NodeWorker.enable",
        &json!({ "waitForDebuggerOnStart": false }),
        Instant::now() + COMMAND_TIMEOUT,
    ) {
        Ok(_) | Err(CallError::Remote(_)) => {}
        Err(e) => return Err(fail("NodeWorker.enable", e, COMMAND_TIMEOUT, "starting")),
    }
    // A program that finishes while a debugger is connected does not exit: Node waits for the
    // debugger to disconnect, and says so with `NodeRuntime.waitingForDisconnect` when asked.
    // Profiling then stops, so that the process is not held.
    match session.call(
        None,
        "NodeRuntime.notifyWhenWaitingForDisconnect",
        &json!({ "enabled": true }),
        Instant::now() + COMMAND_TIMEOUT,
    ) {
        Ok(_) | Err(CallError::Remote(_)) => {}
        Err(e) => return Err(fail("NodeRuntime.notifyWhenWaitingForDisconnect", e, COMMAND_TIMEOUT, "starting")),
    }
    if stop.load(Ordering::Relaxed) {
        return Err(AttachError::Interrupted);
    }
    let interval_us = options.interval.as_micros().clamp(1, i32::MAX as u128) as u64;
    let mut threads = vec![Thread { label: "main thread".to_owned(), id: Some(0), session: None, alive: true }];
    start_profiling(session, None, interval_us, COMMAND_TIMEOUT)
        .map_err(|(method, e)| fail(method, e, COMMAND_TIMEOUT, "starting the profiler"))?;
    handle_worker_events(session, &mut threads, interval_us, on_progress, notes, false, stop);
    let span = options.duration.map_or_else(|| "until stopped".to_owned(), |d| format!("for {}", human(d)));
    on_progress(&format!("profiling {} thread(s) {span}", threads.len()));

    let end = options.duration.map(|d| Instant::now() + d);
    let stopped = || stop.load(Ordering::Relaxed) || end.is_some_and(|end| Instant::now() >= end);
    while !stopped() {
        if let Err(e) = session.pump() {
            return Err(fail("reading the inspector's messages", e, COMMAND_TIMEOUT, "profiling"));
        }
        handle_worker_events(session, &mut threads, interval_us, on_progress, notes, true, stop);
        if session.finished() {
            on_progress("the program has finished (Node waits for the debugger to disconnect)");
            break;
        }
    }

    on_progress("stopping the profiler");
    let deadline = Instant::now() + STOP_TIMEOUT;
    let mut sent = Vec::new();
    for (index, thread) in threads.iter().enumerate().filter(|(_, t)| t.alive) {
        match session.send(thread.session.as_deref(), "Profiler.stop", &json!({})) {
            Ok(key) => sent.push((index, key)),
            Err(e) => return Err(fail("Profiler.stop", e, STOP_TIMEOUT, "stopping the profiler")),
        }
    }
    let mut profiles = Vec::new();
    let mut main_error = None;
    for (index, key) in &sent {
        let thread = &threads[*index];
        match session.wait(key, deadline).and_then(|reply| profile_of(&reply)) {
            Ok(json) => profiles.push(AttachedProfile { label: thread.label.clone(), thread_id: thread.id, json }),
            Err(e) if thread.session.is_none() => main_error = Some(e),
            Err(e) => notes.push(format!("{} could not be profiled: Profiler.stop failed: {e}", thread.label)),
        }
    }
    // Leave the threads as they were: the profiler off, the workers detached. Answers are
    // waited for (briefly) so that they are handled before the connection goes.
    if !session.is_closed() && !matches!(main_error, Some(CallError::Timeout)) {
        let deadline = Instant::now() + WORKER_TIMEOUT;
        let mut keys = Vec::new();
        for thread in threads.iter().filter(|t| t.alive) {
            keys.extend(session.send(thread.session.as_deref(), "Profiler.disable", &json!({})).ok());
        }
        keys.extend(session.send(None, "NodeWorker.disable", &json!({})).ok());
        for key in &keys {
            if session.wait(key, deadline).is_err() {
                break;
            }
        }
    }
    match main_error {
        None => Ok(profiles),
        Some(e) if profiles.is_empty() => Err(fail("Profiler.stop", e, STOP_TIMEOUT, "stopping the profiler")),
        Some(e) => {
            notes.insert(0, format!("the main thread could not be profiled: Profiler.stop failed: {e}"));
            Ok(profiles)
        }
    }
}

/// Sends `Profiler.enable`, `Profiler.setSamplingInterval` and `Profiler.start` to a thread,
/// then waits for their answers.
fn start_profiling(
    session: &mut Session,
    thread: Option<&str>,
    interval_us: u64,
    timeout: Duration,
) -> Result<(), (&'static str, CallError)> {
    let deadline = Instant::now() + timeout;
    let commands = [
        ("Profiler.enable", json!({})),
        ("Profiler.setSamplingInterval", json!({ "interval": interval_us })),
        ("Profiler.start", json!({})),
    ];
    let mut keys: Vec<(&'static str, Key)> = Vec::new();
    for (method, params) in commands {
        keys.push((method, session.send(thread, method, &params).map_err(|e| (method, e))?));
    }
    for (method, key) in &keys {
        session.wait(key, deadline).map_err(|e| (*method, e))?;
    }
    Ok(())
}

/// Starts profiling the workers announced, and marks those that ended. A worker announced and
/// gone again before it could be asked (short-lived workers, started and ended faster than they
/// are attached to) is left out; none is started once profiling is to stop.
#[allow(clippy::too_many_arguments)]
fn handle_worker_events(
    session: &mut Session,
    threads: &mut Vec<Thread>,
    interval_us: u64,
    on_progress: &mut dyn FnMut(&str),
    notes: &mut Vec<String>,
    late: bool,
    stop: &AtomicBool,
) {
    let mut events = Vec::new();
    while let Some(event) = session.next_event() {
        events.push(event);
    }
    let gone: HashSet<String> = events
        .iter()
        .filter_map(|e| match e {
            WorkerEvent::Detached { session_id } => Some(session_id.clone()),
            WorkerEvent::Attached { .. } => None,
        })
        .collect();
    for event in events {
        match event {
            WorkerEvent::Attached { session_id, .. } if gone.contains(&session_id) => {}
            WorkerEvent::Attached { .. } if stop.load(Ordering::Relaxed) => {}
            WorkerEvent::Attached { session_id, worker_id, url } => {
                let label =
                    if url.is_empty() { format!("worker {worker_id}") } else { format!("worker {worker_id} ({url})") };
                match start_profiling(session, Some(&session_id), interval_us, WORKER_TIMEOUT) {
                    Ok(()) => {
                        if late {
                            on_progress(&format!("{label} started; profiling it too"));
                        }
                        threads.push(Thread {
                            label,
                            id: worker_id.parse().ok(),
                            session: Some(session_id),
                            alive: true,
                        });
                    }
                    Err((method, e)) => notes.push(format!("{label} could not be profiled: {method} failed: {e}")),
                }
            }
            WorkerEvent::Detached { session_id } => {
                if let Some(thread) = threads.iter_mut().find(|t| t.session.as_deref() == Some(session_id.as_str())) {
                    if thread.alive {
                        thread.alive = false;
                        notes.push(format!("{} ended before profiling stopped; its profile is lost", thread.label));
                    }
                }
            }
        }
    }
}

/// The `profile` of a `Profiler.stop` result, as sent.
fn profile_of(reply: &RawValue) -> Result<Vec<u8>, CallError> {
    #[derive(Deserialize)]
    struct Stopped<'a> {
        #[serde(borrow)]
        profile: &'a RawValue,
    }
    let stopped: Stopped<'_> = serde_json::from_str(reply.get())
        .map_err(|e| CallError::Broken(format!("Profiler.stop's result has no profile: {e}")))?;
    Ok(stopped.profile.get().as_bytes().to_vec())
}

fn call_error(who: &str, method: &str, e: CallError, timeout: Duration, during: &str) -> AttachError {
    match e {
        CallError::Timeout => {
            AttachError::Timeout { who: who.to_owned(), method: method.to_owned(), seconds: timeout.as_secs() }
        }
        CallError::Closed => AttachError::ConnectionLost { who: who.to_owned(), during: during.to_owned() },
        other => AttachError::Command { who: who.to_owned(), method: method.to_owned(), detail: other.to_string() },
    }
}

/// Closes the inspector cpuprof opened, waits for its port to close, and makes sure it stays
/// closed: one that opens again (a start request the process had pending) is closed again.
/// Whether the process is still there.
fn close_inspector(
    session: Session,
    pid: u32,
    listener: &Listener,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&str),
) -> Result<bool, String> {
    if session.finished() {
        // Its program has ended: it exits, and its inspector with it, when the session goes.
        session.close();
        return wait_closed(pid, listener, stop, on_progress);
    }
    let mut session = Some(session);
    let mut listener = *listener;
    for _ in 0..CLOSE_ROUNDS {
        let current = if let Some(current) = session.take() {
            current
        } else {
            let addr = loopback_addr(&listener).ok_or("it opened again where it cannot be reached")?;
            let targets = cdp::list_targets(addr, LIST_TIMEOUT)
                .map_err(|_| "it opened again and its targets cannot be listed".to_owned())?;
            let path = pick_target(&targets).ok_or("it opened again with no target")?;
            Session::connect(addr, &path, COMMAND_TIMEOUT)
                .map_err(|_| "it opened again and cannot be connected to".to_owned())?
        };
        evaluate_close(current)?;
        // The close runs from a timer of the main thread: as soon as its event loop turns.
        if !wait_closed(pid, &listener, stop, on_progress)? {
            return Ok(false);
        }
        match reopened(pid, listener.port) {
            None => return Ok(true),
            Some(again) => {
                on_progress(&format!(
                    "the inspector of process {pid} opened again (a start it had pending); closing it again"
                ));
                listener = again;
            }
        }
    }
    Err(format!("it opened again after being closed {CLOSE_ROUNDS} times"))
}

/// Evaluates [`CLOSE_INSPECTOR`] in the main thread, then leaves the session.
fn evaluate_close(mut session: Session) -> Result<(), String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Evaluated {
        exception_details: Option<serde_json::Value>,
    }
    let reply = session.call(
        None,
        "Runtime.evaluate",
        &json!({ "expression": CLOSE_INSPECTOR, "includeCommandLineAPI": true }),
        Instant::now() + COMMAND_TIMEOUT,
    );
    session.close();
    let reply = reply.map_err(|e| format!("closing it failed: {e}"))?;
    let evaluated: Evaluated = serde_json::from_str(reply.get()).map_err(|e| format!("closing it failed: {e}"))?;
    if let Some(details) = evaluated.exception_details {
        let text = details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("an exception");
        return Err(format!("closing it failed: {}", text.lines().next().unwrap_or_default()));
    }
    Ok(())
}

/// A listening socket of `pid` on `port` within [`REOPEN_WATCH`]: the inspector opened again.
fn reopened(pid: u32, port: u16) -> Option<Listener> {
    let deadline = Instant::now() + REOPEN_WATCH;
    loop {
        if let Some(listener) = procfs::listeners(pid).ok()?.into_iter().find(|l| l.port == port) {
            return Some(listener);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(cdp::POLL);
    }
}

/// Waits for the inspector's listening socket to close (or the process to exit); whether the
/// process is still there. A main thread that is busy closes it only when its event loop
/// turns: cpuprof waits for that (saying so after [`CLOSE_TIMEOUT`]) rather than leave the
/// port open, unless `stop` is set while it waits (a Ctrl-C).
fn wait_closed(
    pid: u32,
    listener: &Listener,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&str),
) -> Result<bool, String> {
    let said = Instant::now() + CLOSE_TIMEOUT;
    let stopped_before = stop.load(Ordering::Relaxed);
    let mut waiting = false;
    loop {
        match procfs::listeners(pid) {
            Ok(now) if now.iter().any(|l| l.inode == listener.inode) => {}
            // An exited process that is not reaped yet holds no sockets either.
            Ok(_) => return Ok(procfs::process_info(pid).is_ok_and(|p| !p.zombie)),
            Err(_) => return Ok(false),
        }
        if !stopped_before && stop.load(Ordering::Relaxed) {
            return Err("it was told to close, but cpuprof was interrupted before its event loop turned \
                 (its main thread is busy; it closes when the loop next turns)"
                .to_owned());
        }
        if !waiting && Instant::now() >= said {
            waiting = true;
            on_progress(&format!(
                "process {pid} is busy: its inspector closes when its event loop next turns; waiting for that \
                 (Ctrl-C leaves it open)"
            ));
        }
        std::thread::sleep(cdp::POLL);
    }
}

/// "2 s", "1.5 s", "250 ms".
fn human(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        if d.subsec_millis() == 0 {
            format!("{} s", d.as_secs())
        } else {
            format!("{} s", (d.as_secs_f64() * 1000.0).round() / 1000.0)
        }
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(human(Duration::from_secs(2)), "2 s");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human(Duration::from_millis(250)), "250 ms");
    }

    #[test]
    fn urls_are_checked() {
        let err = |u: &str| endpoint_of_url(u).expect_err(u).to_string();
        assert!(err("wss://127.0.0.1:9229/x").contains("TLS is not supported"), "{}", err("wss://127.0.0.1:9229/x"));
        assert!(err("ws://127.0.0.1:9229/").contains("no target id"));
        assert!(err("ftp://127.0.0.1/x").contains("unknown scheme"));
        let ok = endpoint_of_url("ws://[::1]:9300/abc").expect("a ws URL");
        assert_eq!(ok.addr, "[::1]:9300".parse().unwrap());
        assert_eq!(ok.path, "/abc");
        assert_eq!(endpoint_of_url("ws://127.0.0.1/abc").expect("no port").addr.port(), DEFAULT_INSPECT_PORT);
    }

    #[test]
    fn targets_are_picked_by_kind() {
        let list: Vec<ListedTarget> = serde_json::from_str(
            r#"[{"type":"other","webSocketDebuggerUrl":"ws://127.0.0.1:1/a"},
                {"type":"node","webSocketDebuggerUrl":"ws://0.0.0.0:1/b"},
                {"type":"node"}]"#,
        )
        .unwrap();
        assert_eq!(pick_target(&list).as_deref(), Some("/b"));
        assert_eq!(pick_target(&list[..1]).as_deref(), Some("/a"));
        assert_eq!(pick_target(&list[2..]), None);
    }

    #[test]
    fn only_loopback_listeners_are_reached() {
        let at = |ip: &str| loopback_addr(&Listener { ip: ip.parse().unwrap(), port: 9229, inode: 1 });
        assert_eq!(at("127.0.0.1"), Some("127.0.0.1:9229".parse().unwrap()));
        assert_eq!(at("0.0.0.0"), Some("127.0.0.1:9229".parse().unwrap()));
        assert_eq!(at("::"), Some("[::1]:9229".parse().unwrap()));
        assert_eq!(at("::ffff:127.0.0.1"), Some("127.0.0.1:9229".parse().unwrap()));
        assert_eq!(at("192.168.1.5"), None);
        assert_eq!(at("fe80::1"), None);
    }

    #[test]
    fn nothing_to_attach_to() {
        let stop = AtomicBool::new(false);
        let err = attach(&AttachOptions::default(), &stop, &mut |_| {}).unwrap_err();
        assert!(matches!(err, AttachError::NoTarget));
    }
}
