//! Issue 21: tables fit the terminal. In a real terminal (tmux, 80 and 200 columns) a `top`
//! row and a `diff` row are one line each at 80 columns and nothing is cut at 200; a pipe gets
//! whole names, or fits `COLUMNS` when it is set.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{cpuprof, root};
use unicode_width::UnicodeWidthStr;

const TOP: &[&str] = &["top", "fixtures/cpuprofile/packages.cpuprofile", "-n", "8"];
const DIFF: &[&str] =
    &["diff", "fixtures/cpuprofile/auth-sync.cpuprofile", "fixtures/cpuprofile/auth-async.cpuprofile", "-n", "6"];

/// The table rows (between the header rule and the bottom border) of a report.
fn rows(screen: &str) -> Vec<&str> {
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines.iter().position(|l| l.starts_with('╞')).expect("a table") + 1;
    let end = lines.iter().rposition(|l| l.starts_with('└')).expect("the table's end");
    lines[start..end].to_vec()
}

/// What `cpuprof ARGS` shows in a tmux window `width` columns wide; `None` without tmux
/// (outside CI: SKIPPED).
fn in_terminal(args: &[&str], width: usize) -> Option<String> {
    in_terminal_at(&root(), args, width)
}

/// [`in_terminal`] with the screen's colours and attributes kept (as escape sequences), and
/// `env` set for the command.
fn in_terminal_styled(args: &[&str], width: usize, env: &str) -> Option<String> {
    run_in_terminal(&root(), args, width, env, true)
}

/// [`in_terminal`] in the directory `dir`.
fn in_terminal_at(dir: &Path, args: &[&str], width: usize) -> Option<String> {
    run_in_terminal(dir, args, width, "", false)
}

/// Runs in terminals so far: each gets its own tmux server.
static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[allow(clippy::print_stderr)] // the skip message
fn run_in_terminal(dir: &Path, args: &[&str], width: usize, env: &str, styled: bool) -> Option<String> {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "tmux is required in CI (.ci/run installs it)");
        eprintln!("SKIPPED: tmux is not installed");
        return None;
    }
    let bin = assert_cmd::cargo::cargo_bin("cpuprof");
    // Each run has its own tmux server (its own socket): with one shared server, a test that
    // kills the last session stops the server while another test's `new-session` is
    // connecting to it ("server exited unexpectedly").
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let session = format!("cpuprof-{}-{run}-{width}-{}", std::process::id(), args[0]);
    let done = std::env::temp_dir().join(format!("{session}.done"));
    let _ = std::fs::remove_file(&done);
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    // The report, then a marker file; the window stays until it is read.
    let script = format!(
        "cd '{}' && env -u COLUMNS -u NO_COLOR {env} '{}' {}; touch '{}'; sleep 30",
        dir.display(),
        bin.display(),
        quoted.join(" "),
        done.display()
    );
    let status = Command::new("tmux")
        .args(["-L", &session, "-f", "/dev/null", "new-session", "-d", "-s", &session])
        .args(["-x", &width.to_string(), "-y", "60"])
        .arg(script)
        .env_remove("TMUX")
        .status()
        .expect("tmux");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !Path::new(&done).exists() {
        assert!(Instant::now() < deadline, "cpuprof did not finish in the terminal");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut capture = vec!["-L", &session, "capture-pane", "-p", "-t", &session];
    if styled {
        capture.push("-e");
    }
    let screen = Command::new("tmux").args(&capture).output().expect("capture");
    let _ = Command::new("tmux").args(["-L", &session, "kill-server"]).status();
    let _ = std::fs::remove_file(&done);
    Some(String::from_utf8(screen.stdout).expect("utf-8"))
}

/// The same report through a pipe, whole.
fn piped(args: &[&str], columns: Option<usize>) -> String {
    let mut cmd = cpuprof();
    if let Some(c) = columns {
        cmd.env("COLUMNS", c.to_string());
    }
    String::from_utf8(cmd.args(args).output().expect("run").stdout).expect("utf-8")
}

/// Each whole row's function name (its first cell after the numbers that is a known name).
fn names_in(rows: &[&str], names: &[&str]) -> usize {
    rows.iter().filter(|r| names.iter().any(|n| r.contains(&format!(" {n} ")))).count()
}

#[test]
fn top_and_diff_rows_fit_80_columns_and_are_whole_at_200() {
    let top_names = ["appChecksum", "renderRow", "fastHash", "formatCents", "(garbage collector)"];
    let diff_names = ["pbkdf2", "pbkdf2Sync", "auditEntry"];
    for (args, names) in [(TOP, &top_names[..]), (DIFF, &diff_names[..])] {
        let whole = piped(args, None);
        let whole_rows = rows(&whole);
        // A pipe gets every location whole, even the 100-character ones.
        assert!(whole_rows.iter().all(|r| !r.contains('…')), "{whole}");
        let Some(narrow) = in_terminal(args, 80) else { return };
        let narrow_rows = rows(&narrow);
        // One screen line per row: as many rows as through the pipe, each within 80 columns,
        // each naming its function whole.
        assert_eq!(narrow_rows.len(), whole_rows.len(), "{narrow}");
        assert!(narrow_rows.iter().all(|r| r.width() <= 80), "{narrow}");
        assert_eq!(names_in(&narrow_rows, names), names_in(&whole_rows, names), "{narrow}");
        // The same through a pipe that asks for 80 columns.
        let asked = piped(args, Some(80));
        assert!(rows(&asked).iter().all(|r| r.width() <= 80), "{asked}");
        // At 200 columns nothing is cut: the rows are the pipe's.
        let wide = in_terminal(args, 200).expect("tmux");
        assert_eq!(rows(&wide), whole_rows, "{wide}");
    }
}

#[test]
fn wide_never_cuts() {
    let mut args = TOP.to_vec();
    args.push("--wide");
    assert_eq!(rows(&piped(&args, Some(60))), rows(&piped(TOP, None)));
}

#[test]
fn a_flame_graph_for_a_terminal_goes_to_a_file_beside_the_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(root().join("fixtures/cpuprofile/packages.cpuprofile"), dir.path().join("app.cpuprofile"))
        .expect("copy");
    let Some(screen) = in_terminal_at(dir.path(), &["flamegraph", "app.cpuprofile"], 120) else { return };
    assert!(!screen.contains("<svg") && !screen.contains("<?xml"), "{screen}");
    assert!(screen.contains("flame graph written to app.svg"), "{screen}");
    let svg = std::fs::read_to_string(dir.path().join("app.svg")).expect("app.svg");
    assert!(svg.contains("<svg") && svg.contains("appChecksum"));
    // Piped, it is still stdout (and no file is written).
    std::fs::remove_file(dir.path().join("app.svg")).expect("remove");
    let out = cpuprof().current_dir(dir.path()).args(["flamegraph", "app.cpuprofile"]).output().expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
    assert!(!dir.path().join("app.svg").exists());
}

#[test]
fn colour_on_a_terminal_only_and_never_with_no_color() {
    // appChecksum is the user's code: orange (256-colour 208); locations are dim.
    let Some(screen) = in_terminal_styled(TOP, 120, "") else { return };
    let row = screen.lines().find(|l| l.contains("appChecksum")).expect("the appChecksum row");
    assert!(row.contains("38;5;208m"), "{row:?}");
    assert!(row.contains("\u{1b}[2m"), "{row:?}");
    let plain = in_terminal_styled(TOP, 120, "NO_COLOR=1").expect("tmux");
    assert!(!plain.contains("38;5;"), "{plain:?}");
    assert!(!piped(TOP, None).contains('\u{1b}'));
}

/// Every command's `--help` examples are whole commands at 80 columns: none is wrapped in its
/// middle (a long one continues on a line of its own after `\`).
#[test]
fn help_examples_are_not_wrapped_at_80_columns() {
    let commands = [
        "top",
        "tree",
        "callers",
        "callees",
        "explain",
        "diff",
        "flamegraph",
        "collapse",
        "convert",
        "merge",
        "timeline",
        "blocks",
    ];
    for command in commands {
        let out = cpuprof().env("COLUMNS", "80").args([command, "--help"]).output().expect("run");
        let help = String::from_utf8(out.stdout).expect("utf-8");
        let examples = help.split("EXAMPLES:\n").nth(1).unwrap_or_else(|| panic!("{command}: no EXAMPLES"));
        let mut continued = false;
        for line in examples.lines().take_while(|l| !l.trim().is_empty()) {
            assert!(line.width() <= 80, "{command}: {line:?}");
            assert!(continued || line.starts_with("  cpuprof "), "{command}: a wrapped example: {line:?}");
            continued = line.ends_with('\\');
        }
    }
}

#[test]
fn every_table_fits_80_100_and_200_columns_without_a_blank_name() {
    // Issue 51: blocks was 175 columns and timeline's table 122 at 80; a deep tree blanked its
    // names (`   → … → handleOrders`); header lines ran past the width.
    let commands: &[&[&str]] = &[
        &["top", "fixtures/cpuprofile/periodic.cpuprofile", "-n", "8"],
        &["top", "fixtures/ticklog/phases.log", "-n", "8"],
        &["tree", "fixtures/cpuprofile/deep-recursion.cpuprofile"],
        &["blocks", "fixtures/ticklog/blocks.log"],
        &["blocks", "fixtures/cpuprofile/blocks.cpuprofile", "--from", "700ms", "--to", "1.6s"],
        &["timeline", "fixtures/cpuprofile/blocks.cpuprofile", "--format", "table"],
        &["timeline", "fixtures/ticklog/phases.log", "--format", "table"],
        &["callers", "roundMoney", "fixtures/cpuprofile/money.cpuprofile"],
        DIFF,
    ];
    for args in commands {
        for width in [80, 100, 200] {
            let Some(screen) = in_terminal(args, width) else { return };
            let asked = piped(args, Some(width));
            for line in asked.lines() {
                assert!(line.width() <= width, "{args:?} at {width}: {}-column line {line:?}\n{asked}", line.width());
                // A tree's line after its guides starts with a name, never a separator.
                let text = line.trim_start_matches(|c: char| " │├└─…0123456789.%µmsn".contains(c));
                assert!(!text.starts_with('→') && !text.starts_with('←'), "{args:?} at {width}: {line:?}");
            }
            // The terminal shows the same lines (tmux would wrap a longer one).
            assert!(screen.lines().all(|l| l.width() <= width), "{args:?} at {width}\n{screen}");
        }
    }
}
