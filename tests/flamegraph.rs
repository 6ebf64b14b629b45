//! `cpuprof flamegraph` and `cpuprof collapse` end to end: SVG goldens (inferno's
//! deterministic, pretty-printed output; `CPUPROF_BLESS=1` rewrites them after a deliberate
//! change, to be reviewed in the diff), time windows, tick logs, and the output rules.

mod common;

use common::{cpuprof, root};

const GOLDEN: &[(&str, &str, &[&str])] = &[
    ("slugify", "fixtures/cpuprofile/slugify.cpuprofile", &[]),
    ("hostile-names", "fixtures/cpuprofile/hostile-names.cpuprofile", &[]),
    ("control-names", "fixtures/cpuprofile/control-names.cpuprofile", &[]),
    ("money-package-reverse", "fixtures/cpuprofile/money.cpuprofile", &["--by", "package", "--reverse"]),
    (
        "money-inverted-samples",
        "fixtures/cpuprofile/money.cpuprofile",
        &["--inverted", "--weight", "samples", "--width", "800"],
    ),
    ("packages-focus", "fixtures/cpuprofile/packages.cpuprofile", &["--focus", "node_modules", "--title", "focus"]),
];

#[test]
fn svgs_match_their_goldens() {
    let bless = std::env::var_os("CPUPROF_BLESS").is_some();
    let mut failures = Vec::new();
    for (name, input, args) in GOLDEN {
        let out = cpuprof().args(["flamegraph", input, "--pretty-xml"]).args(*args).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let path = root().join(format!("fixtures/golden/{name}.svg"));
        match std::fs::read(&path) {
            Ok(expected) if expected == out.stdout => {}
            _ if bless => std::fs::write(&path, &out.stdout).unwrap(),
            Ok(expected) => {
                let (ours, theirs) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&expected));
                let line = ours.lines().zip(theirs.lines()).position(|(a, b)| a != b);
                failures.push(format!("{name}: differs from {} (first at line {line:?})", path.display()));
            }
            Err(_) => failures.push(format!("{name}: no {} (CPUPROF_BLESS=1 writes it)", path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn collapse(args: &[&str]) -> Vec<(String, i64)> {
    let out = cpuprof().arg("collapse").args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (frames, w) = l.rsplit_once(' ').unwrap();
            (frames.to_owned(), w.parse().unwrap())
        })
        .collect()
}

fn total(lines: &[(String, i64)]) -> i64 {
    lines.iter().map(|(_, w)| *w).sum()
}

#[test]
fn time_windows_split_the_profile() {
    let file = "fixtures/cpuprofile/money.cpuprofile";
    let whole = total(&collapse(&[file, "--weight", "samples"]));
    let early = total(&collapse(&[file, "--weight", "samples", "--to", "300ms"]));
    let late = total(&collapse(&[file, "--weight", "samples", "--from", "300ms"]));
    assert!(early > 0 && late > 0, "{early} {late}");
    assert_eq!(early + late, whole);
    let nothing = cpuprof().args(["flamegraph", file, "--from", "3600s"]).output().unwrap();
    // An empty window is an empty profile: a warning and an SVG saying so (tests/empty_profiles.rs).
    assert_eq!(nothing.status.code(), Some(0), "an empty window is not an error");
    assert!(String::from_utf8_lossy(&nothing.stderr).contains("no samples"), "but it is reported");
    let backwards = cpuprof().args(["collapse", file, "--from", "2s", "--to", "1s"]).output().unwrap();
    assert_eq!(backwards.status.code(), Some(2));
    let bad = cpuprof().args(["collapse", file, "--from", "soon"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn tick_logs_fold_into_ticks() {
    let log = "fixtures/ticklog/json-roundtrip.log";
    let lines = collapse(&[log]);
    let top = cpuprof().args(["top", log, "--format", "json"]).output().unwrap();
    let top: serde_json::Value = serde_json::from_slice(&top.stdout).unwrap();
    assert_eq!(total(&lines), top["samples"].as_i64().unwrap(), "collapse counts every tick once");
    let svg = cpuprof().args(["flamegraph", log]).output().unwrap();
    let svg = String::from_utf8(svg.stdout).unwrap();
    assert!(svg.contains(" ticks, 100%)"), "tick logs are counted in ticks");
}

/// A light leaf called from many places is heavy in the reversed graph: nothing of it may be
/// merged away before inferno reverses the stacks.
#[test]
fn reversed_graphs_keep_leaves_called_from_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("r.svg");
    cpuprof()
        .args(["flamegraph", "fixtures/cpuprofile/control-names.cpuprofile", "--reverse", "-o"])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    // Every sample of the regexp ends in it, called from one place; in the reversed graph it is
    // a bottom frame with its whole weight.
    assert!(text.contains("<title>RegExp: ^(a+)+\u{a0}200 ("), "the regexp is a frame of its own");
    assert!(!text.contains('\u{1b}'), "no control character reaches the SVG");
}

#[test]
fn hostile_names_stay_one_frame_each() {
    let lines = collapse(&["fixtures/cpuprofile/hostile-names.cpuprofile"]);
    for (frames, _) in &lines {
        assert!(!frames.contains('\n') && !frames.contains('\r'), "{frames:?}");
    }
    assert!(
        lines.iter().any(|(f, _)| f.contains("a\u{ff1b}b") || f.contains('\u{ff1b}')),
        "a `;` in a name is escaped"
    );
}

#[test]
fn a_failed_run_leaves_no_svg_and_never_overwrites_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("flame.svg");
    std::fs::write(&target, "old").unwrap();
    let out = cpuprof().args(["flamegraph", "fixtures/bad/truncated.cpuprofile", "-o"]).arg(&target).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "old", "the old file is untouched");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left behind");

    let input = dir.path().join("in.cpuprofile");
    std::fs::copy(root().join("fixtures/cpuprofile/money.cpuprofile"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = cpuprof().arg("flamegraph").arg(&input).arg("-o").arg(&input).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&input).unwrap(), before);
}
