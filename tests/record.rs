//! `cpuprof record -- COMMAND`: real Node processes, recorded and read back. What each profile
//! holds is checked with the independent oracle (fixtures/oracle/top.js) against what the
//! workload is built around; tick logs against `node --prof-process`.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{cpuprof, root};
use serde_json::Value;

/// The oracle's `top` of one profile (every row, idle left out as `top` leaves it out).
fn oracle(path: &Path) -> Value {
    let out = Command::new("node")
        .arg(root().join("fixtures/oracle/top.js"))
        .arg(path)
        .output()
        .expect("node runs the oracle");
    assert!(out.status.success(), "oracle on {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the oracle prints JSON")
}

/// A function's total in the oracle's rows (0 when it is not there).
fn total_of(report: &Value, name: &str) -> f64 {
    report["rows"].as_array().unwrap().iter().filter(|r| r["name"] == name).map(|r| r["total"].as_f64().unwrap()).sum()
}

/// The oracle's total of the samples that ran JavaScript or native code (not `(program)`,
/// `(garbage collector)`).
fn busy(report: &Value) -> f64 {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["name"].as_str().unwrap().starts_with('('))
        .map(|r| r["self"].as_f64().unwrap())
        .sum()
}

/// The profiles kept in `dir`, by file name.
fn kept(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_worker_thread_gives_a_profile_of_its_own_work() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("profiles");
    cpuprof()
        .args(["record", "-q", "-o"])
        .arg(&dir)
        .args(["--", "node", "fixtures/workloads/workers.js"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let files = kept(&dir);
    let names: Vec<String> = files.iter().map(|f| name(f)).collect();
    assert_eq!(names.len(), 4, "the main thread and three workers: {names:?}");
    // workers.js starts its workers in this order, so thread ids 1, 2, 3 run these.
    let expected =
        [("main", "mainSpin"), ("worker-1", "hashStrings"), ("worker-2", "sortNumbers"), ("worker-3", "countPrimes")];
    for (thread, function) in expected {
        let file = files.iter().find(|f| name(f).ends_with(&format!(".{thread}.cpuprofile"))).unwrap_or_else(|| {
            panic!("no profile of the {thread} thread among {names:?}");
        });
        assert!(name(file).starts_with("workers."), "named by the script: {}", name(file));
        let report = oracle(file);
        let share = total_of(&report, function) / busy(&report);
        assert!(share > 0.5, "{thread}: {function} holds {:.0}% of the busy time", share * 100.0);
        for (_, other) in expected.iter().filter(|(_, f)| *f != function) {
            assert!(total_of(&report, other) <= 0.0, "{thread}'s profile has {other}, another thread's work");
        }
    }
}

#[test]
fn a_forked_child_process_gives_a_profile_and_the_merged_top_is_the_sum_of_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let (svg, page) = (tmp.path().join("flame.svg"), tmp.path().join("page.html"));
    let out = cpuprof()
        .args(["record", "--all", "--format", "json", "-o"])
        .arg(&dir)
        .arg("--flamegraph")
        .arg(&svg)
        .arg("--report")
        .arg(&page)
        .args(["--", "node", "fixtures/workloads/busy-server.js", "--for", "1500", "--child"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let files = kept(&dir);
    assert_eq!(files.len(), 2, "the process and its forked child: {files:?}");
    let reports: Vec<Value> = files.iter().map(|f| oracle(f)).collect();
    // The flame graph and the page are of the two profiles merged: both processes' work.
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("childSpin") && svg.contains("busyHash"), "the flame graph holds both processes");
    let page = std::fs::read_to_string(&page).unwrap();
    assert!(page.contains("childSpin") && page.contains("busyHash") && page.contains("2 profiles, merged"));
    // The child (forked with --as-child) runs childSpin; its parent never does.
    let child = reports.iter().filter(|r| total_of(r, "childSpin") > 0.5 * busy(r)).count();
    let parent = reports.iter().filter(|r| total_of(r, "childSpin") <= 0.0 && total_of(r, "busyHash") > 0.5 * busy(r));
    assert_eq!((child, parent.count()), (1, 1), "one profile for each process");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 profiles kept in") && stderr.contains("2 processes"), "{stderr}");
    assert!(stderr.contains("--as-child"), "each profile named by its process's command line: {stderr}");

    // The printed top is of both: each function's self and total the sum of the oracle's.
    // On stdout, the command's own lines first (busy-server's "ready", "done"), then top.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = &stdout[stdout.find('{').expect("top's JSON after the command's output")..];
    let printed: Value = serde_json::from_str(json).expect("record --format json prints top's JSON");
    let mut expected: BTreeMap<(String, String, String, String), (f64, f64)> = BTreeMap::new();
    for report in &reports {
        for row in report["rows"].as_array().unwrap() {
            let key =
                (row["name"].to_string(), row["file"].to_string(), row["line"].to_string(), row["column"].to_string());
            let sums = expected.entry(key).or_default();
            sums.0 += row["self"].as_f64().unwrap();
            sums.1 += row["total"].as_f64().unwrap();
        }
    }
    let rows = printed["rows"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len(), "one row per function of either profile");
    for row in rows {
        let key =
            (row["name"].to_string(), row["file"].to_string(), row["line"].to_string(), row["column"].to_string());
        let (self_ns, total_ns) = expected[&key];
        assert_eq!((row["self"].as_f64().unwrap(), row["total"].as_f64().unwrap()), (self_ns, total_ns), "{key:?}");
    }
    assert_eq!(printed["inputs"].as_array().map(Vec::len), Some(2), "each profile's own total is shown");

    // And it is `top` of `cpuprof merge` of the kept files.
    let merged = tmp.path().join("merged.cpuprofile");
    cpuprof().arg("merge").args(&files).arg("-o").arg(&merged).assert().success();
    let out = cpuprof().args(["top", "--all", "--format", "json"]).arg(&merged).output().unwrap();
    let of_merge: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fields = |rows: &Value| -> Vec<(String, String, String, String)> {
        let mut all: Vec<_> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["name"].to_string(), r["file"].to_string(), r["self"].to_string(), r["total"].to_string()))
            .collect();
        all.sort();
        all
    };
    assert_eq!(fields(&printed["rows"]), fields(&of_merge["rows"]));
}

/// Whether a child of process `pid` has `word` in its command line (from /proc).
fn child_runs(pid: u32, word: &str) -> bool {
    let children = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten().flat_map(|task| {
        std::fs::read_to_string(task.path().join("children"))
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    });
    children.into_iter().any(|child| {
        std::fs::read(format!("/proc/{child}/cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(word))
    })
}

/// A process started by a test, killed when the test ends however it ends.
struct Running(std::process::Child);

impl Running {
    /// Its exit status, which must come within `limit`.
    fn wait_at_most(&mut self, limit: Duration, what: &str) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < limit, "{what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sigint_to_record_stops_a_server_and_its_profile_is_kept_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kept");
    let mut record = Running(
        Command::new(assert_cmd::cargo::cargo_bin("cpuprof"))
            .current_dir(root())
            .args(["record", "-n", "5", "-o"])
            .arg(&dir)
            .args(["--", "node", "fixtures/workloads/busy-server.js", "--worker"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdout = BufReader::new(record.0.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("ready "), "the server starts: {line:?}");
    std::thread::sleep(Duration::from_secs(1));
    let pid = rustix::process::Pid::from_raw(record.0.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = record.wait_at_most(Duration::from_secs(30), "record ends after SIGINT");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(record.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "the server's status: ended by SIGINT. stderr: {stderr}");
    let files = kept(&dir);
    assert_eq!(files.len(), 2, "the main thread's and the worker's profiles: {files:?}");
    for file in &files {
        let report = oracle(file);
        assert!(total_of(&report, "busyHash") > 0.5 * busy(&report), "{}", file.display());
    }
    assert!(rest.contains("busyHash"), "top of them is printed: {rest}");
}

#[test]
fn duration_stops_the_command_as_asked_and_that_is_success() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("one.cpuprofile");
    let started = Instant::now();
    let (svg, page) = (tmp.path().join("flame.svg"), tmp.path().join("page.html"));
    let out = cpuprof()
        .args(["record", "-q", "--duration", "1s", "--interval", "500us", "-o"])
        .arg(&file)
        .arg("--flamegraph")
        .arg(&svg)
        .arg("--report")
        .arg(&page)
        .args(["--", "node", "fixtures/workloads/busy-server.js"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("stopping it after 1s"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(15));
    let report = oracle(&file);
    assert!(total_of(&report, "busyHash") > 0.5 * busy(&report));
    // The interval asked for: the median step between samples (V8 samples no faster than asked,
    // and late under load; the default is 1 ms).
    let profile: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut steps: Vec<i64> = profile["timeDeltas"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
    steps.sort_unstable();
    let median = steps[steps.len() / 2];
    assert!((400..900).contains(&median), "median step {median} µs for --interval 500us");
    // The flame graph and the page are those of the kept profile.
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("<svg") && svg.contains("busyHash"), "the flame graph names the hot function");
    let page = std::fs::read_to_string(&page).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("busyHash"), "the report holds the profile");
}

#[test]
fn a_tick_log_is_recorded_with_prof_and_read_as_node_prof_process_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("logs");
    cpuprof()
        .args(["record", "-q", "--prof", "-o"])
        .arg(&dir)
        .args(["--", "node", "fixtures/workloads/busy-server.js", "--for", "1200"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let files = kept(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].extension().and_then(|e| e.to_str()), Some("log"));
    let processed = Command::new("node").arg("--prof-process").arg(&files[0]).output().unwrap();
    let text = String::from_utf8_lossy(&processed.stdout);
    let first_js = text.lines().skip_while(|l| !l.starts_with(" [JavaScript]:")).nth(2).unwrap_or_default();
    assert!(first_js.contains("busyHash"), "node --prof-process's hottest JS: {first_js:?}");
    let out = cpuprof().args(["top", "--format", "json"]).arg(&files[0]).output().unwrap();
    let top: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = top["rows"].as_array().unwrap().iter().find(|r| r["kind"] == "js").unwrap();
    assert!(first["name"].as_str().unwrap().contains("busyHash"), "{first}");
}

#[test]
fn the_commands_exit_status_and_node_options_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let out = cpuprof()
        .env("NODE_OPTIONS", "--title=recorded-title")
        .args(["record", "-q", "-o"])
        .arg(tmp.path())
        .args(["--", "node", "-e", "console.log(process.title); process.exit(5)"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "recorded-title", "the user's NODE_OPTIONS still apply");
    assert_eq!(kept(tmp.path()).len(), 1, "the profile is kept whatever the status");
}

#[test]
fn what_cannot_be_recorded_is_said_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    // Not a Node program: nothing recorded is a failure of record's own.
    let out = cpuprof()
        .args(["record", "-o"])
        .arg(tmp.path().join("x"))
        .args(["--", "sh", "-c", "exit 0"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing was recorded"), "{stderr}");
    assert!(!tmp.path().join("x").exists(), "no empty directory is left");
    // A program that does not exist.
    let out = cpuprof().args(["record", "--", "no-such-program-here"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run `no-such-program-here`"));
    // Outputs that could not be written are refused before the command runs.
    std::fs::write(tmp.path().join("app.js"), "console.log('ran')").unwrap();
    let refusals: [&[&str]; 4] = [
        &["--report", "app.js"],
        &["-o", "a.cpuprofile", "--flamegraph", "a.cpuprofile"],
        &["--flamegraph", "no/such/dir/f.svg"],
        &["--duration", "0s"],
    ];
    for options in refusals {
        let out = cpuprof()
            .current_dir(tmp.path())
            .arg("record")
            .args(options)
            .args(["--", "node", "app.js"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{options:?}");
        assert!(out.stdout.is_empty(), "{options:?}: the command did not run");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1, "{options:?}");
    }
    assert_eq!(std::fs::read_to_string(tmp.path().join("app.js")).unwrap(), "console.log('ran')");
    // No command at all, and a tick log of what is not node: usage.
    assert_eq!(cpuprof().args(["record"]).output().unwrap().status.code(), Some(2));
    let out = cpuprof().args(["record", "--prof", "--", "npm", "test"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

#[test]
fn duration_and_signals_reach_node_under_a_wrapper_and_a_second_signal_kills_a_busy_program() {
    let tmp = tempfile::tempdir().unwrap();
    // `sh -c` stands for npm and other wrappers: the node under it is stopped too, and writes.
    let dir = tmp.path().join("wrapped");
    let started = Instant::now();
    let out = cpuprof()
        .args(["record", "-q", "--duration", "1s", "-o"])
        .arg(&dir)
        .args(["--", "sh", "-c", "node fixtures/workloads/busy-server.js; echo after"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Stopped by the SIGINT, not killed 10 s later (which says so), nor waited for by the timeout.
    assert!(!stderr.contains("killed"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(25), "the timeout, not the duration, ended it");
    assert_eq!(kept(&dir).len(), 1);

    // A program busy in synchronous code cannot see the first SIGINT; the second kills it.
    let busy = tmp.path().join("spin.js");
    std::fs::write(&busy, "for (;;) {}\n").unwrap();
    let mut record = Running(
        Command::new(assert_cmd::cargo::cargo_bin("cpuprof"))
            .current_dir(root())
            .args(["record", "-q", "-o"])
            .arg(tmp.path().join("spun"))
            .arg("--")
            .arg("node")
            .arg(&busy)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = rustix::process::Pid::from_raw(record.0.id() as i32).unwrap();
    // The program runs once record's child is node at spin.js (its command line says so): a
    // signal before that would stop record before its program started.
    let started = Instant::now();
    while !child_runs(record.0.id(), "spin.js") {
        assert!(started.elapsed() < Duration::from_secs(20), "node never ran spin.js");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(record.0.try_wait().unwrap().is_none(), "one SIGINT waits for the program");
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = record.wait_at_most(Duration::from_secs(10), "the second SIGINT ends it");
    let mut stderr = String::new();
    std::io::Read::read_to_string(record.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a second signal") && stderr.contains("was killed (signal 9)"), "{stderr}");
}

#[test]
fn a_process_left_running_can_still_start_node_after_the_recording() {
    // A daemon the command leaves behind keeps NODE_OPTIONS, which names the preload: node must
    // still start once the recording is over (and the process is not profiled).
    let tmp = tempfile::tempdir().unwrap();
    let saved = tmp.path().join("env.txt");
    let script = format!(
        "require('fs').writeFileSync({:?}, JSON.stringify({{o: process.env.NODE_OPTIONS, d: process.env.CPUPROF_RECORD_DIR}}))",
        saved.to_str().unwrap()
    );
    cpuprof()
        .args(["record", "-q", "-o"])
        .arg(tmp.path().join("p"))
        .args(["--", "node", "-e", &script])
        .assert()
        .success();
    let env: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let recording = env["d"].as_str().unwrap();
    assert!(!Path::new(recording).exists(), "the recording's directory is removed");
    let out = Command::new("node")
        .env("NODE_OPTIONS", env["o"].as_str().unwrap())
        .env("CPUPROF_RECORD_DIR", recording)
        .args(["-e", "console.log('started')"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "started");
}

#[test]
fn a_stray_word_in_node_options_does_not_stop_the_recording() {
    // Node splits NODE_OPTIONS at spaces (single quotes are not quotes) and stops reading it at
    // the first word that is not an option: `app'` here. The preload must come before it.
    let tmp = tempfile::tempdir().unwrap();
    let out = cpuprof()
        .env("NODE_OPTIONS", "--title='my app'")
        .args(["record", "-q", "-o"])
        .arg(tmp.path())
        .args(["--", "node", "-e", "console.log(process.title)"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "'my", "node read the user's option as node reads it");
    assert_eq!(kept(tmp.path()).len(), 1);

    // A Node process that loaded the preload and wrote nothing (killed) is told apart from a
    // command that started no Node process with cpuprof's NODE_OPTIONS.
    let out = cpuprof()
        .args(["record", "-q", "-o"])
        .arg(tmp.path().join("killed"))
        .args(["--", "node", "-e", "process.kill(process.pid, 'SIGKILL')"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 Node process started under it but wrote no profile"), "{stderr}");
    let out = cpuprof()
        .args(["record", "-q", "-o"])
        .arg(tmp.path().join("env"))
        .args(["--", "env", "-u", "NODE_OPTIONS", "node", "-e", ""])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no Node process loaded cpuprof's preload"), "{stderr}");
}

#[test]
fn outputs_that_name_a_file_the_command_reads_are_refused() {
    // A file the command is given as `--flag=FILE`, and the script node resolves `app` and a
    // directory to, are the command's too: record would replace them after it ran.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("app.js"), "console.log('ran')").unwrap();
    std::fs::write(tmp.path().join("data.cpuprofile"), "{}").unwrap();
    std::fs::create_dir(tmp.path().join("lib")).unwrap();
    std::fs::write(tmp.path().join("lib/index.js"), "console.log('ran')").unwrap();
    let refusals: [&[&str]; 4] = [
        &["-o", "data.cpuprofile", "--", "node", "app.js", "--input=data.cpuprofile"],
        &["--report", "app.js", "--", "node", "app"],
        &["--flamegraph", "./app.js", "--", "node", "./app"],
        &["--report", "lib/index.js", "--", "node", "lib"],
    ];
    for options in refusals {
        let out = cpuprof().current_dir(tmp.path()).arg("record").args(options).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{options:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{options:?}: the command did not run");
        assert!(stderr.contains("which the command is given"), "{options:?}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(tmp.path().join("app.js")).unwrap(), "console.log('ran')");
    assert_eq!(std::fs::read_to_string(tmp.path().join("lib/index.js")).unwrap(), "console.log('ran')");
    assert_eq!(std::fs::read_to_string(tmp.path().join("data.cpuprofile")).unwrap(), "{}");
}

/// The preload `record` names in `NODE_OPTIONS` when run with `XDG_CACHE_HOME=cache`.
fn preload_used(cache: &Path) -> PathBuf {
    let tmp = tempfile::tempdir().unwrap();
    let out = cpuprof()
        .env("XDG_CACHE_HOME", cache)
        .args(["record", "-q", "-o"])
        .arg(tmp.path().join("p"))
        .args(["--", "node", "-e", "console.log(process.env.NODE_OPTIONS)"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let options = String::from_utf8_lossy(&out.stdout).into_owned();
    let quoted = options.trim().strip_prefix("--require \"").and_then(|o| o.split('"').next());
    PathBuf::from(quoted.unwrap_or_else(|| panic!("no --require first: {options}")))
}

#[test]
#[allow(clippy::print_stderr)] // the skipped part is said
fn a_preload_in_a_cache_directory_others_can_touch_is_not_used() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let tmp = tempfile::tempdir().unwrap();
    // In a cache directory of the user's own, the preload is kept there.
    let own = tmp.path().join("own");
    let preload = preload_used(&own);
    assert_eq!(preload.parent(), Some(own.join("cpuprof").as_path()), "{}", preload.display());
    let bytes = std::fs::read(&preload).unwrap();
    let file_name = preload.file_name().unwrap().to_owned();

    // Its directory writable by others: not used (the recording's own directory is).
    std::fs::set_permissions(own.join("cpuprof"), std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(!preload_used(&own).starts_with(&own), "a preload in a directory others can write is used");
    std::fs::set_permissions(own.join("cpuprof"), std::fs::Permissions::from_mode(0o700)).unwrap();
    // A symbolic link in its place, to a byte-identical copy: not followed.
    let elsewhere = tmp.path().join("elsewhere.js");
    std::fs::write(&elsewhere, &bytes).unwrap();
    std::fs::remove_file(&preload).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &preload).unwrap();
    let used = preload_used(&own);
    assert!(!std::fs::symlink_metadata(&used).unwrap().file_type().is_symlink(), "{}", used.display());

    // A shared cache directory (sticky, as /tmp) where another user made `cpuprof/` first and put a
    // byte-identical preload in it: not used, and not replaced. That needs a second user: root
    // runs the other user's part with setpriv.
    let other_user = rustix::process::geteuid().is_root()
        && Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success());
    if !other_user {
        eprintln!("skipped the other user's part: it needs root and setpriv");
        return;
    }
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o644)).unwrap();
    let planted = shared.join("cpuprof").join(&file_name);
    let status = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
            "mkdir \"$1\" && cp \"$2\" \"$3\"",
            "sh",
        ])
        .arg(shared.join("cpuprof"))
        .arg(&elsewhere)
        .arg(&planted)
        .status()
        .unwrap();
    assert!(status.success(), "the other user plants a preload");
    let used = preload_used(&shared);
    assert!(!used.starts_with(&shared), "another user's preload is used: {}", used.display());
    assert_eq!(std::fs::read(&planted).unwrap(), bytes);
    assert_eq!(std::fs::metadata(&planted).unwrap().uid(), 65534, "it is left as it was");
}
