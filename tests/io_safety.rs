//! cpuprof never harms the files it reads or writes (issue 16, items 6 to 8): an output that is
//! the input however it is named (stdin, `/dev/stdin`, a hard link, a redirected stdout) is
//! refused; Ctrl-C, SIGTERM and SIGHUP leave no temporary file; a dangling symlink is followed;
//! two outputs to one place are refused; a stdout that cannot be written is a failure.

use crate::common;

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::root;

const FIXTURE: &str = "fixtures/cpuprofile/money.cpuprofile";

/// `cpuprof` in `dir`, as a plain command (for stdin and stdout of our own).
fn cpuprof_in(dir: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("cpuprof"));
    cmd.current_dir(dir).stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

/// A folder holding a copy of the fixture as `app.cpuprofile`.
fn folder_with_profile() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(FIXTURE), dir.path().join("app.cpuprofile")).unwrap();
    dir
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Runs `cmd`, which must exit with `code`, saying `message` on stderr.
fn assert_exit(cmd: &mut Command, code: i32, message: &str) {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{cmd:?}: {stderr}");
    assert!(stderr.contains(message), "{cmd:?}: expected {message:?} in {stderr}");
}

#[test]
fn an_output_that_is_the_input_however_named_is_refused() {
    let dir = folder_with_profile();
    let d = dir.path();
    let input = d.join("app.cpuprofile");
    let original = std::fs::read(&input).unwrap();
    std::fs::hard_link(&input, d.join("hard.cpuprofile")).unwrap();
    let refused = "refusing to write the output over the input";
    let stdin = || File::open(&input).unwrap();

    // `cpuprof top - -o app.cpuprofile < app.cpuprofile`, and `convert`, and /dev/stdin.
    for args in [
        &["top", "-", "-o", "app.cpuprofile"][..],
        &["convert", "-", "-o", "app.cpuprofile"],
        &["convert", "-", "-o", "hard.cpuprofile"],
        &["merge", "-", "-o", "app.cpuprofile"],
        &["flamegraph", "-", "-o", "hard.cpuprofile"],
        &["top", "/dev/stdin", "-o", "app.cpuprofile"],
    ] {
        assert_exit(cpuprof_in(d).args(args).stdin(stdin()), 2, refused);
    }
    // A hard link of the input, named as an output.
    assert_exit(cpuprof_in(d).args(["top", "app.cpuprofile", "-o", "hard.cpuprofile"]), 2, refused);
    assert_exit(
        cpuprof_in(d).args(["diff", "app.cpuprofile", "app.cpuprofile", "--flamegraph", "hard.cpuprofile"]),
        2,
        refused,
    );
    // `cpuprof top app.cpuprofile >> app.cpuprofile`: stdout is the input.
    let append = || std::fs::OpenOptions::new().append(true).open(&input).unwrap();
    assert_exit(cpuprof_in(d).args(["top", "app.cpuprofile"]).stdout(append()), 2, refused);
    assert_exit(cpuprof_in(d).args(["top", "-"]).stdin(stdin()).stdout(append()), 2, refused);
    assert_eq!(std::fs::read(&input).unwrap(), original, "the input is untouched");
    assert_eq!(names(d), ["app.cpuprofile", "hard.cpuprofile"], "nothing else was written");

    // Stdin from a file that is not the output: written as usual.
    assert_exit(cpuprof_in(d).args(["top", "-", "-o", "top.txt"]).stdin(stdin()), 0, "");
    assert!(std::fs::read_to_string(d.join("top.txt")).unwrap().starts_with("<stdin> · cpuprofile"));
}

/// Waits until `count` temporary files are in `dir`, as long as `child` runs.
fn wait_for_temporary_files(dir: &Path, count: usize, child: &mut std::process::Child) {
    // A generous bound for a slow machine: the files appear before any input is read.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let temporary = names(dir).iter().filter(|n| n.starts_with(".cpuprof-")).count();
        if temporary == count {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("cpuprof ended ({status}) with {temporary} temporary file(s) in {:?}", names(dir));
        }
        assert!(Instant::now() < deadline, "no {count} temporary file(s) within a minute: {:?}", names(dir));
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn signals_leave_no_temporary_file() {
    // The outputs' temporary files exist from the start of the run: with stdin held open and
    // empty, cpuprof waits for its input with them in place, where a signal finds them.
    let commands: [&[&str]; 3] = [
        &["convert", "-", "-o", "out.pb.gz"],
        &["flamegraph", "-", "-o", "flame.svg"],
        &["diff", "-", "new.cpuprofile", "-o", "diff.txt", "--flamegraph", "diff.svg"],
    ];
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        for args in commands {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            std::fs::copy(root().join(FIXTURE), d.join("new.cpuprofile")).unwrap();
            let mut child = cpuprof_in(d).args(args).stdin(Stdio::piped()).spawn().unwrap();
            let outputs = args.iter().filter(|a| a.contains('.') && **a != "new.cpuprofile").count();
            wait_for_temporary_files(d, outputs, &mut child);
            let kill = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
            assert!(kill.success());
            // Stdin stays open until cpuprof has ended: the signal alone ends it.
            let stdin = child.stdin.take();
            let status = child.wait().unwrap();
            drop(stdin);
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            assert_eq!(status.code(), Some(code), "SIG{signal} {args:?}: {stderr}");
            assert_eq!(names(d), ["new.cpuprofile"], "SIG{signal} {args:?}: no temporary file, no output");
        }
    }
}

#[test]
fn a_dangling_symlink_is_followed_and_two_outputs_need_two_places() {
    let dir = folder_with_profile();
    let d = dir.path();
    // A link to a file not there yet, in a folder that is: the file is created, the link stays.
    std::os::unix::fs::symlink("reports/top.csv", d.join("link.csv")).unwrap();
    std::fs::create_dir(d.join("reports")).unwrap();
    assert_exit(cpuprof_in(d).args(["top", "app.cpuprofile", "--format", "csv", "-o", "link.csv"]), 0, "");
    assert!(std::fs::symlink_metadata(d.join("link.csv")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(d.join("reports/top.csv")).unwrap().starts_with("name,file,line"));
    // A link into a folder that is not there: an error, nothing made.
    std::os::unix::fs::symlink("nowhere/top.csv", d.join("lost.csv")).unwrap();
    assert_exit(
        cpuprof_in(d).args(["top", "app.cpuprofile", "-o", "lost.csv"]),
        1,
        "cannot write lost.csv (a symlink to nowhere/top.csv)",
    );
    assert!(!d.join("nowhere").exists());

    // Two outputs, one place: the same name, a link to it, both stdout.
    std::fs::write(d.join("old.svg"), "old\n").unwrap();
    std::os::unix::fs::symlink("old.svg", d.join("same.svg")).unwrap();
    for (output, flamegraph) in
        [("x.svg", "x.svg"), ("old.svg", "same.svg"), ("link.csv", "reports/top.csv"), ("-", "-")]
    {
        let args = ["diff", "app.cpuprofile", "app.cpuprofile", "-o", output, "--flamegraph", flamegraph];
        assert_exit(cpuprof_in(d).args(args), 2, "refusing to write two outputs to");
    }
    let diff = ["diff", "app.cpuprofile", "app.cpuprofile"];
    assert_exit(cpuprof_in(d).args(diff).args(["--flamegraph", "-"]), 2, "two outputs to standard output");
    // Stdout a pipe, and /dev/stdout that pipe; stdout redirected to the file named.
    let mut piped = cpuprof_in(d);
    piped.args(diff).args(["--flamegraph", "/dev/stdout"]).stdout(Stdio::piped());
    assert_exit(&mut piped, 2, "refusing to write two outputs to /dev/stdout");
    let redirected = File::create(d.join("old.svg.txt")).unwrap();
    assert_exit(cpuprof_in(d).args(diff).args(["--flamegraph", "old.svg.txt"]).stdout(redirected), 2, "two outputs to");
    std::fs::remove_file(d.join("old.svg.txt")).unwrap();
    // Devices take any number of outputs.
    assert_exit(cpuprof_in(d).args(diff).args(["-o", "/dev/null", "--flamegraph", "/dev/null"]), 0, "");
    assert!(!d.join("x.svg").exists());
    assert_eq!(std::fs::read_to_string(d.join("old.svg")).unwrap(), "old\n");
    assert_eq!(names(d), ["app.cpuprofile", "link.csv", "lost.csv", "old.svg", "reports", "same.svg"]);
}

#[test]
fn a_stdout_that_cannot_be_written_is_a_failure() {
    // File descriptor 1 open for reading only: every write fails (EBADF), and the run with it.
    let dir = folder_with_profile();
    std::fs::write(dir.path().join("other.txt"), "other\n").unwrap();
    let read_only = File::open(dir.path().join("other.txt")).unwrap();
    assert_exit(cpuprof_in(dir.path()).args(["top", "app.cpuprofile"]).stdout(read_only), 1, "cannot write to stdout");
    // A reader that goes away (`| head`) is not a failure: tests/top.rs, a_closed_pipe_ends_quietly.
}
