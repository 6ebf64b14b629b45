//! `cpuprof flamegraph` and `cpuprof collapse` end to end: SVG goldens (inferno's
//! deterministic, pretty-printed output; `CPUPROF_BLESS=1` rewrites them after a deliberate
//! change, to be reviewed in the diff), time windows, tick logs, and the output rules.

use crate::common;

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

/// The differential flame graph colours a function as `diff`'s table judges it (one verdict,
/// every view): fixtures/diff's README changes (doubledWork and addedWork grew, halvedWork and
/// removedWork shrank) red and blue, and every function the table calls unchanged — or new or
/// gone within the noise — neutral grey, whatever its frames' own change (slightlySlowerWork
/// runs 1.2× as long, not a significant change over three runs a side).
#[test]
fn differential_colours_follow_the_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diff.svg");
    let base: Vec<String> = (1..=3).map(|i| format!("fixtures/diff/base.{i}.cpuprofile")).collect();
    let new: Vec<String> = (1..=3).map(|i| format!("fixtures/diff/new.{i}.cpuprofile")).collect();
    let out = cpuprof()
        .arg("diff")
        .arg("--base")
        .args(&base)
        .arg("--new")
        .args(&new)
        .args(["--all", "--format", "json", "--flamegraph"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The table's judgement per `name file` (what a differential frame is labelled).
    let mut judged: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for row in table["rows"].as_array().unwrap() {
        let label = match row["file"].as_str() {
            Some(file) if row["kind"].as_str() == Some("js") => format!("{} {file}", row["name"].as_str().unwrap()),
            _ => row["name"].as_str().unwrap().to_owned(),
        };
        let verdict =
            if row["significant"].as_bool().unwrap() { row["verdict"].as_str().unwrap() } else { "unchanged" };
        judged.insert(label, verdict);
    }
    for (name, verdict) in
        [("doubledWork", "hotter"), ("addedWork", "new"), ("halvedWork", "cooler"), ("removedWork", "gone")]
    {
        let label = format!("{name} /work/main/fixtures/diff/app.js");
        assert_eq!(judged.get(&label).copied(), Some(verdict), "{label}: the fixture's README says {verdict}");
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    let frame =
        regex::Regex::new(r#"<title>([^<]*) \([^<(]*\)</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)""#).unwrap();
    let marks = regex::Regex::new(r" \((new|gone)\)| \[total [^\]]*\]").unwrap();
    let (mut coloured, mut frames) = (std::collections::BTreeSet::new(), 0);
    for c in frame.captures_iter(&text) {
        frames += 1;
        let label = marks.replace_all(&c[1], "").into_owned();
        let [r, g, b] = [2, 3, 4].map(|i| c[i].parse::<i32>().unwrap());
        let shade = if r > g + 60 && r > b + 60 {
            "red"
        } else if b > r + 60 && b > g + 40 {
            "blue"
        } else if r == g && g == b {
            "grey"
        } else {
            "other"
        };
        let expected = match judged.get(&label).copied() {
            Some("hotter" | "new") => "red",
            Some("cooler" | "gone") => "blue",
            // The table's unchanged rows, inferno's `all` and the `(only in base)` root.
            _ => "grey",
        };
        assert_eq!(shade, expected, "{label}: rgb({r},{g},{b}), the table says {:?}", judged.get(&label));
        if shade != "grey" {
            coloured.insert(label.split(' ').next().unwrap().to_owned());
        }
    }
    assert!(frames > 20, "{frames} frames read from the SVG");
    let coloured: Vec<&str> = coloured.iter().map(String::as_str).collect();
    assert_eq!(coloured, ["addedWork", "doubledWork", "halvedWork", "removedWork"]);
}
