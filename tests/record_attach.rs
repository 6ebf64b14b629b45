//! `cpuprof record --pid PID` and `--url URL`: attaching to running Node processes, real ones
//! (fixtures/workloads/busy-server.js), over their inspector.
//!
//! Every process started here is killed when its guard drops, even when an assertion fails.
//! No test uses Node's default inspector port (9229): each process is started with
//! `--inspect-port=<a free port>`, the port SIGUSR1 opens its inspector on (the flag does not
//! open it), or with `--inspect=127.0.0.1:0`, so the tests run in parallel with each other and
//! with anything else on the machine.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

const BUSY_SERVER: &str = "fixtures/workloads/busy-server.js";

/// V8 options for busy-server, so that each of its functions keeps a frame of its own. On its
/// own, V8 inlines busyHash into its caller and compiles its loop on stack; and the code it
/// optimized before the profiler started has its time partly given to the caller (onTick, or
/// workerSpin in the worker, took busyHash's self time in about a third of attaches on node
/// 20; a profile recorded from the start, with --cpu-prof, shows it too). The tests check
/// what cpuprof does, not V8's luck.
const KEEP_FRAMES: [&str; 2] = ["--no-turbo-inlining", "--no-use-osr"];

/// A process started by a test, killed (and reaped) when dropped.
struct Guard {
    child: Child,
    pid: u32,
    /// Its standard error so far (node prints the inspector's URL there).
    stderr: Arc<Mutex<String>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Guard {
    /// Whether it is still running (not exited, not killed).
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// How it ended, when it has: "exit status: 1", "signal: 9 (SIGKILL)".
    fn ended(&mut self) -> String {
        match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            Ok(None) => "still running".to_owned(),
            Err(e) => e.to_string(),
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Waits until its standard error has a line containing `needle`; that line.
    fn stderr_line(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(line) = self.stderr().lines().find(|l| l.contains(needle)) {
                return line.to_owned();
            }
            assert!(Instant::now() < deadline, "no {needle:?} on the process's stderr: {}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Starts `program args` from the repository root, its output read on threads (so that no
/// pipe fills up); with `ready`, waits for its `ready <pid>` line.
fn start(program: &str, args: &[&str], ready: bool) -> Guard {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(common::root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let stderr = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err_pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let (lines, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // Once nobody listens any more, the rest is drained all the same.
            let _ = lines.send(line);
        }
    });
    let pid = child.id();
    let guard = Guard { child, pid, stderr };
    if ready {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{program} {args:?} printed no `ready` line; stderr: {}", guard.stderr()));
        assert_eq!(line, format!("ready {pid}"), "stderr: {}", guard.stderr());
    }
    guard
}

/// `node KEEP_FRAMES NODE_ARGS busy-server.js ARGS`, started and ready.
fn busy_server(node_args: &[&str], args: &[&str]) -> Guard {
    let all: Vec<&str> =
        KEEP_FRAMES.iter().chain(node_args).copied().chain([BUSY_SERVER]).chain(args.iter().copied()).collect();
    start("node", &all, true)
}

/// A TCP port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// Whether something accepts connections on 127.0.0.1:`port`.
fn listening(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

/// Whether `pid` holds a listening TCP socket on `port` (its fds against /proc/PID/net/tcp*).
fn pid_listens_on(pid: u32, port: u16) -> bool {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter_map(|t| Some(t.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    ["tcp", "tcp6"].iter().any(|table| {
        std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default().lines().skip(1).any(|row| {
            let f: Vec<&str> = row.split_whitespace().collect();
            let local_port = f.get(1).and_then(|a| a.rsplit(':').next()).and_then(|p| u16::from_str_radix(p, 16).ok());
            f.get(3) == Some(&"0A")
                && local_port == Some(port)
                && f.get(9).is_some_and(|i| inodes.iter().any(|x| x == i))
        })
    })
}

/// The inspector's target list at 127.0.0.1:`port`, read with a plain HTTP request (node
/// answers in HTTP/1.0 with a Content-Length, and keeps the connection open).
fn json_list(port: u16) -> Option<Value> {
    let mut stream =
        TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        response.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&response);
        let Some((head, body)) = text.split_once("\r\n\r\n") else { continue };
        let length = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
        })?;
        if body.len() >= length {
            return serde_json::from_str(body).ok();
        }
    }
}

/// `cpuprof record ARGS`, with a deadline so that nothing hangs.
fn record(args: &[&str]) -> std::process::Output {
    common::cpuprof().arg("record").args(args).timeout(Duration::from_secs(90)).output().expect("cpuprof runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a successful run, showing its output when it was not.
fn assert_ok(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Asserts a failed run (exit status 1) whose standard error is one line containing every one
/// of `needles`.
fn assert_refused(out: &std::process::Output, needles: &[&str]) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stdout: {}\nstderr: {stderr}", text(&out.stdout));
    assert_eq!(stderr.trim_end().lines().count(), 1, "stderr is one line: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "stderr lacks {needle:?}: {stderr}");
    }
}

/// `cpuprof top FILE --format json`.
fn top(file: &Path) -> Value {
    let out = common::cpuprof().arg("top").arg(file).args(["--format", "json", "--all"]).output().expect("top runs");
    assert_ok(&out, &format!("top {}", file.display()));
    serde_json::from_slice(&out.stdout).expect("top prints JSON")
}

/// The function with the most self time of a profile.
fn hottest(file: &Path) -> String {
    let report = top(file);
    let rows = report["rows"].as_array().expect("rows");
    let best = rows
        .iter()
        .max_by_key(|r| r["self"].as_i64().unwrap_or(0))
        .unwrap_or_else(|| panic!("{} has no rows: {report}", file.display()));
    best["name"].as_str().expect("name").to_owned()
}

/// The total time of a function in a profile (0 when it is not there), and the most self
/// time any function has.
fn total_and_most_self(file: &Path, name: &str) -> (i64, i64) {
    let report = top(file);
    let rows = report["rows"].as_array().expect("rows");
    let total = rows.iter().filter(|r| r["name"] == name).map(|r| r["total"].as_i64().unwrap_or(0)).sum();
    let most = rows.iter().map(|r| r["self"].as_i64().unwrap_or(0)).max().unwrap_or(0);
    (total, most)
}

/// The `.cpuprofile` files of a directory, sorted.
fn profiles_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpuprofile"))
        .collect();
    out.sort();
    out
}

/// Waits a little for a condition that follows an event in another process.
fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    condition()
}

#[test]
fn profiles_the_main_thread_and_the_worker() {
    let port = free_port();
    let inspect_port = format!("--inspect-port={port}");
    let mut server = busy_server(&[&inspect_port], &["--worker"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let out_dir = dir.path().join("profiles");
    let pid = server.pid.to_string();
    let out = record(&["--pid", &pid, "--duration", "2s", "-q", "-o", out_dir.to_str().expect("utf-8")]);
    assert_ok(&out, "record --pid");

    let files = profiles_in(&out_dir);
    assert_eq!(files.len(), 2, "one profile per thread: {files:?}\nstderr: {}", text(&out.stderr));
    let name = |p: &PathBuf| p.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let main = files.iter().find(|p| name(p).contains("main")).unwrap_or_else(|| panic!("no main profile: {files:?}"));
    let worker =
        files.iter().find(|p| name(p).contains("worker")).unwrap_or_else(|| panic!("no worker profile: {files:?}"));
    // The main thread runs busyHash; the worker runs workerSpin (which calls busyHash): its busy
    // time is under workerSpin, and none of the main thread's is. A sample of the worker's
    // hottest function was once seen outside workerSpin (1.0240 s of it, 1.0229 s under
    // workerSpin), as when V8 records a stack without its caller: 5% of it is allowed.
    assert_eq!(hottest(main), "busyHash", "{}", main.display());
    assert_eq!(total_and_most_self(main, "workerSpin").0, 0, "the main thread's profile has workerSpin");
    let (spin, most) = total_and_most_self(worker, "workerSpin");
    assert!(
        most > 0 && spin >= most - most / 20,
        "the worker's hottest function ({most} ns) is not under workerSpin ({spin} ns)"
    );
    // The files are .cpuprofile JSON: nodes, samples and time deltas, 2 s of them.
    let profile: Value = serde_json::from_slice(&std::fs::read(main).expect("read")).expect("JSON");
    assert!(profile["nodes"].as_array().is_some_and(|n| !n.is_empty()), "nodes");
    let samples = profile["samples"].as_array().map_or(0, Vec::len);
    assert_eq!(samples, profile["timeDeltas"].as_array().map_or(0, Vec::len));
    let span_us = profile["endTime"].as_i64().unwrap_or(0) - profile["startTime"].as_i64().unwrap_or(0);
    assert!((1_800_000..10_000_000).contains(&span_us), "profiled for {span_us} µs, not about 2 s");
    assert!(server.alive(), "the process runs on");
}

#[test]
fn leaves_the_process_as_it_found_it() {
    let port = free_port();
    let inspect_port = format!("--inspect-port={port}");
    let mut server = busy_server(&[&inspect_port], &[]);
    let pid = server.pid.to_string();
    assert!(!listening(port), "the inspector is closed to begin with");
    let dir = tempfile::tempdir().expect("temp dir");
    for round in 1..=2 {
        let file = dir.path().join(format!("round-{round}.cpuprofile"));
        let out = record(&["--pid", &pid, "--duration", "1s", "-q", "-o", file.to_str().expect("utf-8")]);
        assert_ok(&out, &format!("attach number {round}"));
        // cpuprof opened the inspector on the port the process was started with, and closed it.
        assert!(
            server.stderr().matches(&format!("Debugger listening on ws://127.0.0.1:{port}/")).count() == round,
            "the inspector opened on port {port}: {}",
            server.stderr()
        );
        assert!(
            eventually(|| !pid_listens_on(server.pid, port)),
            "process still listens on {port} after round {round}"
        );
        assert!(!listening(port), "port {port} still accepts connections after round {round}");
        // The process is unharmed: alive, and still at work (the profile shows it).
        if !server.alive() {
            // Let the reader thread take what it printed last (a fatal error's report).
            std::thread::sleep(Duration::from_millis(500));
            panic!("the process died in round {round} ({}): {}", server.ended(), server.stderr());
        }
        assert_eq!(hottest(&file), "busyHash", "round {round}");
    }
}

#[test]
fn refuses_a_process_that_is_not_node_and_leaves_it_alive() {
    let mut sleeper = start("sleep", &["30"], false);
    // `sleep` is running once it has exec'd: its /proc entry says so.
    assert!(eventually(
        || std::fs::read_to_string(format!("/proc/{}/comm", sleeper.pid)).is_ok_and(|c| c.trim() == "sleep")
    ));
    let pid = sleeper.pid.to_string();
    let out = record(&["--pid", &pid, "--duration", "1s", "-q"]);
    assert_refused(&out, &[&format!("process {pid}"), "not a Node process"]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(sleeper.alive(), "sleep was killed");
}

#[test]
fn a_missing_process_is_no_such_process() {
    // Process ids are below pid_max.
    let pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max").expect("pid_max").trim().to_owned();
    let out = record(&["--pid", &pid_max, "--duration", "1s", "-q"]);
    assert_refused(&out, &["no such process", &pid_max]);
}

#[test]
fn refuses_node_whose_inspector_signal_is_off_and_leaves_it_alive() {
    // `--disable-sigusr1` (node 22.14+, 23.7+) leaves SIGUSR1 uncaught. An older node refuses
    // the flag; a program that takes SIGUSR1 over and lets it go does the same to it (Node's
    // handler is replaced by libuv's, whose removal restores the default: death).
    let disabled = Command::new("node")
        .args(["--disable-sigusr1", "-e", ""])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut server = if disabled {
        busy_server(&["--disable-sigusr1"], &[])
    } else {
        start(
            "node",
            &[
                "-e",
                "process.on('SIGUSR1', () => {}); process.removeAllListeners('SIGUSR1'); \
                 setInterval(() => {}, 1000); console.log(`ready ${process.pid}`);",
            ],
            true,
        )
    };
    let pid = server.pid.to_string();
    let out = record(&["--pid", &pid, "--duration", "1s", "-q"]);
    assert_refused(&out, &[&format!("process {pid}"), "does not catch SIGUSR1"]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(server.alive(), "node was killed: {}", server.stderr());
}

#[test]
fn an_open_inspector_is_used_and_stays_open() {
    let mut server = busy_server(&["--inspect=127.0.0.1:0"], &[]);
    let line = server.stderr_line("Debugger listening on ws://");
    let ws = line.split_whitespace().find(|w| w.starts_with("ws://")).expect("the URL").to_owned();
    let port: u16 =
        ws.trim_start_matches("ws://127.0.0.1:").split('/').next().and_then(|p| p.parse().ok()).expect("port");
    let dir = tempfile::tempdir().expect("temp dir");
    // By its WebSocket URL, by its HTTP address, and by pid (the port found in /proc).
    let http = format!("http://127.0.0.1:{port}");
    let pid = server.pid.to_string();
    let ways: [(&str, &str); 3] = [("--url", &ws), ("--url", &http), ("--pid", &pid)];
    for (i, (flag, value)) in ways.into_iter().enumerate() {
        let file = dir.path().join(format!("{i}.cpuprofile"));
        let out = record(&[flag, value, "--duration", "1s", "-q", "-o", file.to_str().expect("utf-8")]);
        assert_ok(&out, &format!("record {flag} {value}"));
        assert_eq!(hottest(&file), "busyHash", "{flag} {value}");
        // Not cpuprof's to close: it is still open, with the same target.
        let list = json_list(port).unwrap_or_else(|| panic!("the inspector closed after {flag} {value}"));
        assert!(list.to_string().contains(ws.trim_start_matches("ws://")), "{list}");
        assert!(server.alive(), "{}", server.stderr());
    }
}

#[test]
fn a_busy_inspector_port_is_reported() {
    // Something else holds the port the process's inspector would open on.
    let holder = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = holder.local_addr().expect("addr").port();
    let inspect_port = format!("--inspect-port={port}");
    let mut server = busy_server(&[&inspect_port], &[]);
    let pid = server.pid.to_string();
    let out = record(&["--pid", &pid, "--duration", "1s", "-q"]);
    assert_refused(&out, &[&format!("process {pid}"), &format!("port {port} is busy")]);
    assert!(server.stderr().contains("address already in use"), "{}", server.stderr());
    assert!(server.alive(), "{}", server.stderr());
    drop(holder);
}

#[test]
fn a_target_busy_at_attach_has_its_inspector_closed_once_its_loop_turns() {
    // SIGUSR1 asks node to open its inspector twice: at once from within the running
    // JavaScript, and when the event loop turns. The second request, pending while the
    // program is busy, must not open the inspector again after cpuprof closed it.
    // The program is busy from its start until something schedules a callback (cpuprof's
    // close, evaluated in the busy code by the inspector), then 300 ms more; at most 20 s.
    let script = "let scheduled = false;
        for (const name of ['setTimeout', 'setImmediate']) {
          const original = globalThis[name];
          globalThis[name] = function (...args) { scheduled = true; return original.apply(this, args); };
        }
        setInterval(() => {}, 1000);
        console.log(`ready ${process.pid}`);
        const cap = Date.now() + 20000;
        let until = Infinity;
        while (Date.now() < Math.min(cap, until)) { if (scheduled && until === Infinity) until = Date.now() + 300; }
        setTimeout(() => process.stderr.write('turned\\n'), 100);";
    let port = free_port();
    let inspect_port = format!("--inspect-port={port}");
    let mut server = start("node", &[&inspect_port, "-e", script], true);
    let pid = server.pid.to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("busy.cpuprofile");
    let out = record(&["--pid", &pid, "--duration", "300ms", "-q", "-o", file.to_str().expect("utf-8")]);
    assert_ok(&out, "record --pid of a busy process");
    assert!(text(&out.stderr).contains("closed the inspector"), "{}", text(&out.stderr));
    server.stderr_line("turned");
    assert!(
        eventually(|| !pid_listens_on(server.pid, port)),
        "the inspector is open again after the loop turned: {}",
        server.stderr()
    );
    assert!(server.alive(), "{}", server.stderr());
}

#[test]
fn a_program_that_listens_for_sigusr1_itself_is_named_as_the_likely_cause() {
    // Its listener replaces Node's handler: the signal reaches the program, not the inspector.
    // Nothing in /proc tells this handler from Node's, so it is found out after the signal.
    let port = free_port();
    let inspect_port = format!("--inspect-port={port}");
    let mut server = start(
        "node",
        &[
            &inspect_port,
            "-e",
            "process.on('SIGUSR1', () => process.stderr.write('got SIGUSR1\\n')); \
             setInterval(() => {}, 1000); console.log(`ready ${process.pid}`);",
        ],
        true,
    );
    let pid = server.pid.to_string();
    let out = record(&["--pid", &pid, "--duration", "1s", "-q"]);
    assert_refused(&out, &[&format!("process {pid}"), "did not open", "listen for SIGUSR1 itself"]);
    server.stderr_line("got SIGUSR1");
    assert!(!listening(port));
    assert!(server.alive(), "{}", server.stderr());
}
