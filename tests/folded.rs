//! Folded stacks as input: `cpuprof collapse --weight samples` of recorded profiles, read back
//! by `cpuprof top --weight samples`, gives the original's functions and sample counts (names,
//! files and lines: folded stacks carry no columns, so functions that differ only by column
//! merge); hostile names survive the round trip; malformed files (`fixtures/bad/*.folded`)
//! give their one-line messages. Hand-made files of what other tools write (`fixtures/folded/`:
//! comment headers, bad lines, fractions, UTF-16) give the per-function counts of an independent
//! count from the format (`fixtures/oracle/folded-count.js`) and one warning each.

use crate::common;

use std::collections::BTreeMap;

use common::cpuprof;
use serde_json::Value;

const FIXTURES: &[&str] = &[
    "money",
    "slugify",
    "same-name",
    "packages",
    "anon-arrows",
    "regex-backtrack",
    "deep-recursion",
    "hostile-names",
    "control-names",
    "workers.t1",
];

fn top(input: &str, options: &[&str]) -> Value {
    let out = cpuprof()
        .args(["top", input, "--all", "--format", "json", "--weight", "samples"])
        .args(options)
        .output()
        .expect("run cpuprof");
    assert!(out.status.success(), "cpuprof failed on {input}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cpuprof prints JSON")
}

/// Writes `cpuprof collapse --weight samples FIXTURE` into `dir`; returns its path.
fn collapse(fixture: &str, dir: &std::path::Path) -> String {
    let out = cpuprof().args(["collapse", fixture, "--weight", "samples"]).output().unwrap();
    assert!(out.status.success(), "{fixture}: {}", String::from_utf8_lossy(&out.stderr));
    let path = dir.join(format!("{}.folded", fixture.replace('/', "_")));
    std::fs::write(&path, out.stdout).unwrap();
    path.to_string_lossy().into_owned()
}

type Key = (String, Option<String>, Option<u64>);

/// (name, file, line) → (self samples, total samples, how many rows merged into it).
fn by_function(report: &Value) -> BTreeMap<Key, (i64, i64, usize)> {
    let mut out: BTreeMap<Key, (i64, i64, usize)> = BTreeMap::new();
    for r in report["rows"].as_array().unwrap() {
        let key = (r["name"].as_str().unwrap().to_owned(), r["file"].as_str().map(str::to_owned), r["line"].as_u64());
        let entry = out.entry(key).or_default();
        entry.0 += r["self_samples"].as_i64().unwrap();
        entry.1 = r["total_samples"].as_i64().unwrap();
        entry.2 += 1;
    }
    out
}

#[test]
fn collapse_then_top_equals_top() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for stem in FIXTURES {
        let fixture = format!("fixtures/cpuprofile/{stem}.cpuprofile");
        let folded = collapse(&fixture, dir.path());
        let (original, read_back) = (top(&fixture, &[]), top(&folded, &[]));
        assert_eq!(read_back["format"], "folded");
        for key in ["total", "samples"] {
            if original[key] != read_back[key] {
                failures.push(format!("{stem}: {key} {} vs {}", original[key], read_back[key]));
            }
        }
        let (expected, actual) = (by_function(&original), by_function(&read_back));
        if expected.keys().collect::<Vec<_>>() != actual.keys().collect::<Vec<_>>() {
            let missing: Vec<_> = expected.keys().filter(|k| !actual.contains_key(*k)).collect();
            let extra: Vec<_> = actual.keys().filter(|k| !expected.contains_key(*k)).collect();
            failures.push(format!("{stem}: functions differ; missing {missing:?}, extra {extra:?}"));
            continue;
        }
        for (key, (self_samples, total_samples, merged)) in &expected {
            let (our_self, our_total, _) = actual[key];
            // A total over rows that merged is not the sum of theirs: compare it only for unmerged ones.
            if *self_samples != our_self || (*merged == 1 && *total_samples != our_total) {
                failures.push(format!(
                    "{stem}: {key:?}: self {self_samples} total {total_samples} vs read back {our_self} {our_total}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn hostile_names_survive_the_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for stem in ["hostile-names", "control-names"] {
        let folded = collapse(&format!("fixtures/cpuprofile/{stem}.cpuprofile"), dir.path());
        let report = top(&folded, &[]);
        names.extend(report["rows"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_owned()));
    }
    for name in [
        "semi;colon",
        "with space",
        "new\nline",
        "tab\there",
        "<script>alert(1)</script>",
        "back\\slash",
        "say \"hi\" it's",
        "rtl\u{202e}evil.js",
        "(program)",
        "esc\u{1b}[31m\u{1}ctl",
        "HTTP/1.1 200",
        "RegExp: ^(a+)+ 200",
    ] {
        assert!(names.iter().any(|n| n == name), "{name:?} not among {names:?}");
    }
}

/// The files of `fixtures/folded/` (and the recorded perf script) against the oracle, function
/// by function: self and total samples.
#[test]
fn other_tools_folded_files_match_the_oracle() {
    let mut files = common::files("fixtures/folded", &[".folded"]);
    assert!(files.len() >= 9, "{files:?}");
    files.push("fixtures/perf/fib.perf-script.txt:perf".to_owned());
    let out = std::process::Command::new("node")
        .arg("fixtures/oracle/compare-folded.js")
        .arg(env!("CARGO_BIN_EXE_cpuprof"))
        .args(&files)
        .current_dir(common::root())
        .output()
        .expect("node runs the oracle");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(report.lines().filter(|l| l.starts_with("ok ")).count(), files.len(), "{report}");
}

/// What is skipped or rounded is said once per file, counted; the UTF-16 files read as their
/// UTF-8 original.
#[test]
fn skipped_and_rounded_lines_get_one_counted_warning() {
    let cases = [
        ("austin-header.folded", "skipped 5 comment lines"),
        (
            "bad-lines.folded",
            "skipped 4 malformed lines (the first, line 2 column 15: expected a count (a number) as the last word \
             of the line, after the stack)",
        ),
        (
            "fractional.folded",
            "3 lines have counts with a fraction (the first, line 1: 2.5); profiles hold whole numbers, so they are \
             rounded half up: together 6.24 read as 6",
        ),
        ("negative-count.folded", "skipped 1 malformed line (the first, line 2 column 35: a count cannot be negative)"),
        ("missing-count.folded", "skipped 1 malformed line (the first, line 3 column 1: expected a count (a number) as the last word of the line, after the stack)"),
    ];
    for (file, warning) in cases {
        let input = format!("fixtures/folded/{file}");
        let out = cpuprof().args(["top", &input]).output().unwrap();
        assert!(out.status.success(), "{file}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), format!("cpuprof: warning: {input}: {warning}\n"));
    }
    let utf8 = top("fixtures/folded/simple.folded", &[]);
    for file in ["simple-utf16-le.folded", "simple-utf16-be.folded"] {
        let utf16 = top(&format!("fixtures/folded/{file}"), &[]);
        assert_eq!(utf16["rows"], utf8["rows"], "{file}");
        assert_eq!(utf16["samples"], 10);
    }
    assert!(utf8["rows"].as_array().unwrap().iter().any(|r| r["name"] == "\u{1f600} emoji"), "{utf8}");
}
