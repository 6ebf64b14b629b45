//! Legacy `.cpuprofile` files (a nested `head` tree: Node ≤ 10 `v8-profiler`, cpuprofilify,
//! Chrome ≤ 57), hand-made in `fixtures/cpuprofile/legacy/` (make.py there). tests/top.rs checks
//! every one against the oracle (fixtures/oracle/legacy.js + top.js) under every option set;
//! here the counts worked out by hand from make.py, and what is said about them.

use crate::common;

use common::{cpuprof, oracle, report_differences};
use serde_json::Value;

const DIR: &str = "fixtures/cpuprofile/legacy";

fn top(fixture: &str, options: &[&str]) -> (Value, String) {
    let path = format!("{DIR}/{fixture}");
    let out = cpuprof().args(["top", &path, "--all", "--format", "json"]).args(options).output().unwrap();
    assert!(out.status.success(), "{path}: {}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// (name, line, self samples) of every row with self samples, sorted.
fn self_samples(report: &Value) -> Vec<(String, Option<i64>, i64)> {
    let mut rows: Vec<_> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["self_samples"].as_i64().unwrap() > 0)
        .map(|r| (r["name"].as_str().unwrap().to_owned(), r["line"].as_i64(), r["self_samples"].as_i64().unwrap()))
        .collect();
    rows.sort();
    rows
}

fn row(name: &str, line: Option<i64>, n: i64) -> (String, Option<i64>, i64) {
    (name.to_owned(), line, n)
}

#[test]
fn samples_with_timestamps_count_as_devtools_does() {
    // samples [6,6,7,2,8,6,5,3,4,2,7]: the (program) sample at 3 sits between render (7) and
    // its callee (8), both under `handle`: DevTools gives it to render. The one at 9 follows
    // the GC sample and stays. (idle) is left out by default. Lines are written 1-based.
    let (report, stderr) = top("legacy-timestamps.cpuprofile", &["--weight", "samples"]);
    assert_eq!(
        self_samples(&report),
        vec![
            row("(anonymous)", Some(31), 1),
            row("(garbage collector)", None, 1),
            row("(program)", None, 1),
            row("handle", Some(10), 1),
            row("parse", Some(20), 3),
            row("render", Some(30), 3),
        ]
    );
    assert_eq!(report["samples"], 10);
    assert!(stderr.is_empty(), "{stderr}");
    // 11 samples 1 ms apart from the first timestamp; the last lasts the mean interval.
    let (report, _) = top("legacy-timestamps.cpuprofile", &["--include-idle"]);
    assert_eq!(report["duration_ns"], 11_000_000);
    assert_eq!(report["total"], 11_000_000);
    // lineTicks are the legacy positionTicks: parse's 3 samples on lines 21 (2) and 23 (1).
    let (by_line, _) = top("legacy-timestamps.cpuprofile", &["--by", "line", "--weight", "samples"]);
    let parse: Vec<_> = self_samples(&by_line).into_iter().filter(|r| r.0 == "parse").collect();
    assert_eq!(parse, vec![row("parse", Some(21), 2), row("parse", Some(23), 1)]);
}

#[test]
fn an_extra_timestamp_is_the_end_of_the_last_sample() {
    // Node 10.11's v8-profiler: 5 samples, 6 timestamps 1.2 ms apart.
    let (report, _) = top("legacy-timestamps-end.cpuprofile", &["--weight", "samples"]);
    assert_eq!(self_samples(&report), vec![row("b", Some(6), 3), row("c", Some(10), 2)]);
    let (report, _) = top("legacy-timestamps-end.cpuprofile", &[]);
    assert_eq!(report["duration_ns"], 6_000_000);
}

#[test]
fn hit_counts_alone_are_the_samples_with_a_warning() {
    // hitCounts: (program) 1, tick 2 + 1 (two nodes of one function), work 4; 0.8 s in strings.
    let (report, stderr) = top("legacy-hitcount.cpuprofile", &["--weight", "samples"]);
    assert_eq!(
        self_samples(&report),
        vec![row("(program)", None, 1), row("tick", Some(12), 3), row("work", Some(40), 4)]
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("cpuprof: warning: ") && stderr.contains("8 samples are the nodes' `hitCount`s"),
        "{stderr}"
    );
    let (report, _) = top("legacy-hitcount.cpuprofile", &[]);
    assert_eq!(report["duration_ns"], 800_000_000);
    let work = report["rows"].as_array().unwrap().iter().find(|r| r["name"] == "work").unwrap();
    assert_eq!(work["self"], 400_000_000, "spread evenly: 100 ms a sample");
}

#[test]
fn samples_without_timestamps_and_nested_call_frames() {
    // Samples of nodes 11 (3) and 12 (2), two nodes of one function `fib`, spread evenly.
    let (report, _) = top("legacy-samples.cpuprofile", &["--weight", "samples"]);
    assert_eq!(self_samples(&report), vec![row("fib", Some(7), 5), row("v8::internal::Heap::Scavenge()", None, 1)]);
    // `callFrame` positions are 0-based: main at 1:10, loop at 5:3. The (program) sample between
    // two `loop` samples is DevTools' missing sample: loop gets all 4.
    let (report, _) = top("legacy-callframe.cpuprofile", &["--weight", "samples"]);
    assert_eq!(self_samples(&report), vec![row("loop", Some(5), 4)]);
    let main = report["rows"].as_array().unwrap().iter().find(|r| r["name"] == "main").unwrap();
    assert_eq!((main["line"].as_i64(), main["column"].as_i64()), (Some(1), Some(10)));
}

#[test]
fn a_deep_tree_is_read_without_recursion() {
    let path = format!("{DIR}/legacy-deep.cpuprofile");
    let out = cpuprof().args(["collapse", &path]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let depth = text.lines().map(|l| l.matches(';').count() + 1).max().unwrap();
    assert!(depth >= 500, "{depth}");
    let theirs = oracle(&[&path, "--weight", "samples"]);
    let (ours, _) = top("legacy-deep.cpuprofile", &["--weight", "samples"]);
    let diffs = report_differences(&ours, &theirs, &["format"]);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn hit_counts_are_bounded_by_the_size_of_the_file() {
    // One node claiming its hits: up to 2^20 from any file, beyond that 64 per byte of the file.
    let file = |hits: u64| {
        format!(
            r#"{{"head":{{"functionName":"(root)","url":"","lineNumber":0,"callUID":1,"id":1,"hitCount":0,"children":[{{"functionName":"f","url":"/a.js","lineNumber":1,"callUID":2,"id":2,"hitCount":{hits},"children":[]}}]}},"startTime":0,"endTime":1}}"#
        )
    };
    let run = |text: String| cpuprof().args(["top", "-", "--format", "json"]).write_stdin(text).output().unwrap();
    let ok = run(file(1 << 20));
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let report: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(report["samples"], 1 << 20);
    let refused = run(file(60_000_000));
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("`hitCount`s of `head`") && stderr.contains("1,048,576 samples"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
