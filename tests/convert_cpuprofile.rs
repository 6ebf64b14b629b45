//! `cpuprof convert … -o X.cpuprofile`, checked by the independent DevTools oracle
//! (`fixtures/oracle/top.js`) reading what cpuprof writes: a .cpuprofile comes back as it
//! was, a tick log or folded file as `cpuprof top` reports it, a merge as the sum of its parts.
//! (pprof and trace inputs are checked in `pprof.rs` and `trace.rs` against their own oracles.)

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{cpuprof, files, oracle, report_differences};
use serde_json::Value;

const OPTION_SETS: &[&[&str]] =
    &[&[], &["--by", "line"], &["--by", "package"], &["--weight", "samples", "--include-idle"], &["--include-idle"]];

/// Converts `input` to `dir/name`; returns the path and the warnings.
fn convert(input: &str, dir: &Path, name: &str, args: &[&str]) -> (PathBuf, String) {
    let written = dir.join(name);
    let out = cpuprof().args(["convert", input, "-o"]).arg(&written).args(args).output().unwrap();
    assert!(out.status.success(), "convert {input}: {}", String::from_utf8_lossy(&out.stderr));
    (written, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn with_path<'a>(path: &'a Path, options: &[&'a str]) -> Vec<&'a str> {
    [&[path.to_str().unwrap()], options].concat()
}

#[test]
fn cpuprofiles_come_back_as_devtools_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = files("fixtures/cpuprofile", &[".cpuprofile", ".cpuprofile.gz"]);
    inputs.extend(files("fixtures/edge", &[".cpuprofile"]));
    inputs.extend(files("fixtures/trace", &[".cpuprofile"]));
    assert!(inputs.len() > 30, "{inputs:?}");
    let mut failures = Vec::new();
    for input in &inputs {
        let (written, notes) = convert(input, dir.path(), "out.cpuprofile", &[]);
        // An empty profile is written with a warning (docs/conventions.md, "Empty profiles").
        let empty = input.ends_with("no-samples.cpuprofile") && notes.contains("no samples");
        assert!(notes.is_empty() || empty, "{input}: {notes}");
        for options in OPTION_SETS {
            let theirs = oracle(&[&[input.as_str()], *options].concat());
            let mut ours = oracle(&with_path(&written, options));
            // A recording that ends before it starts is given its real length.
            if theirs["duration_ns"].as_i64().is_some_and(|d| d < 0) {
                ours["duration_ns"] = theirs["duration_ns"].clone();
            }
            let diffs = report_differences(&ours, &theirs, &[]);
            if !diffs.is_empty() {
                failures.push(format!("{input} {options:?}:\n  {}", diffs.join("\n  ")));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

type Rows = BTreeMap<(String, String, i64, i64), [i64; 4]>;

/// (name, file, line, column) → (self, self samples, total, total samples), kinds aside: a
/// .cpuprofile cannot tell C++ from other native code.
fn rows(report: &Value) -> Rows {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let number = |v: &Value| v.as_i64().unwrap_or(-1);
    let mut out = Rows::new();
    for r in report["rows"].as_array().expect("rows") {
        let key = (text(&r["name"]), text(&r["file"]), number(&r["line"]), number(&r["column"]));
        let value = [number(&r["self"]), number(&r["self_samples"]), number(&r["total"]), number(&r["total_samples"])];
        assert!(out.insert(key.clone(), value).is_none(), "two rows {key:?}");
    }
    out
}

fn top(input: &str, options: &[&str]) -> Value {
    let out = cpuprof().args(["top", input, "--all", "--format", "json"]).args(options).output().unwrap();
    assert!(out.status.success(), "top {input}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn tick_logs_convert_to_the_numbers_top_reports() {
    let dir = tempfile::tempdir().unwrap();
    let logs = files("fixtures/ticklog", &[".log"]);
    assert!(logs.len() >= 10, "{logs:?}");
    for log in &logs {
        let (written, notes) = convert(log, dir.path(), "log.cpuprofile", &[]);
        assert!(!notes.contains("mean interval"), "{log}: {notes}");
        for options in [&[][..], &["--include-idle", "--weight", "samples"]] {
            let ours = top(log, options);
            let theirs = oracle(&with_path(&written, options));
            assert_eq!((&ours["total"], &ours["samples"]), (&theirs["total"], &theirs["samples"]), "{log} {options:?}");
            assert_eq!(rows(&ours), rows(&theirs), "{log} {options:?}");
        }
    }
    // What the format cannot hold is said.
    let (_, notes) = convert("fixtures/ticklog/gc-heavy.log", dir.path(), "gc.cpuprofile", &[]);
    assert!(notes.contains("during GC"), "{notes}");
    assert!(notes.contains("a .cpuprofile has no kinds for them"), "{notes}");
}

#[test]
fn aggregated_profiles_convert_with_their_totals() {
    let dir = tempfile::tempdir().unwrap();
    // Folded stacks: counts only, each sample written as V8's default 1 ms interval.
    let out =
        cpuprof().args(["collapse", "fixtures/cpuprofile/money.cpuprofile", "--weight", "samples"]).output().unwrap();
    assert!(out.status.success());
    let folded = dir.path().join("money.folded");
    std::fs::write(&folded, &out.stdout).unwrap();
    let (written, notes) = convert(folded.to_str().unwrap(), dir.path(), "folded.cpuprofile", &[]);
    assert!(notes.contains("each sample is written as 1000 µs"), "{notes}");
    let ours = rows(&top(folded.to_str().unwrap(), &["--weight", "samples"]));
    let theirs = rows(&oracle(&with_path(&written, &["--weight", "samples"])));
    let counts = |r: Rows| r.into_iter().map(|(k, v)| (k, [v[1], v[3]])).collect::<BTreeMap<_, _>>();
    assert_eq!(counts(ours), counts(theirs));
    let time = rows(&oracle(&with_path(&written, &[])));
    assert!(time.values().all(|v| v[0] == v[1] * 1_000_000 && v[2] == v[3] * 1_000_000), "1 ms per sample");

    // A lone `(program)` sample between two stacks under one top-level frame would be given
    // to the first by DevTools (it takes it for a failed stack walk): the writer keeps it apart.
    let lone = dir.path().join("lone-program.folded");
    std::fs::write(&lone, "main;a 5\n(program) 1\nmain;b 5\n").unwrap();
    let (written, _) = convert(lone.to_str().unwrap(), dir.path(), "lone.cpuprofile", &[]);
    let theirs = oracle(&with_path(&written, &["--weight", "samples"]));
    let program = theirs["rows"].as_array().unwrap().iter().find(|r| r["name"] == "(program)");
    assert_eq!(program.map(|r| &r["self"]), Some(&Value::from(1)), "{theirs}");

    // A merge of workers, stack by stack with `(program)` first and the last sample lasting
    // DevTools' mean: per-function self time and samples are the sums of the parts'.
    let parts = [
        "fixtures/cpuprofile/workers.main.cpuprofile",
        "fixtures/cpuprofile/workers.t1.cpuprofile",
        "fixtures/cpuprofile/workers.t2.cpuprofile",
        "fixtures/cpuprofile/workers.t3.cpuprofile",
    ];
    let merged = dir.path().join("workers.cpuprofile");
    let out = cpuprof().arg("merge").args(parts).arg("-o").arg(&merged).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("mean interval"));
    let mut expected: BTreeMap<_, [i64; 2]> = BTreeMap::new();
    for part in parts {
        for (key, v) in rows(&oracle(&[part, "--include-idle"])) {
            let sum = expected.entry(key).or_default();
            sum[0] += v[0];
            sum[1] += v[1];
        }
    }
    let got: BTreeMap<_, [i64; 2]> =
        rows(&oracle(&with_path(&merged, &["--include-idle"]))).into_iter().map(|(k, v)| (k, [v[0], v[1]])).collect();
    let nonzero = |m: BTreeMap<_, [i64; 2]>| m.into_iter().filter(|(_, v)| *v != [0, 0]).collect::<BTreeMap<_, _>>();
    assert_eq!(nonzero(got), nonzero(expected));
}

#[test]
fn output_is_deterministic_gzipped_by_name_and_can_go_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let input = "fixtures/ticklog/eval.log";
    let (a, _) = convert(input, dir.path(), "a.cpuprofile", &[]);
    let (b, _) = convert(input, dir.path(), "b.cpuprofile", &[]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let (gz, _) = convert(input, dir.path(), "c.cpuprofile.gz", &[]);
    let bytes = std::fs::read(&gz).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    assert_eq!(oracle(&with_path(&gz, &[]))["rows"], oracle(&with_path(&a, &[]))["rows"]);
    // `--to` was once an alias of `--output-format`; it is the end of a time window now.
    let out = cpuprof().args(["convert", input, "-o", "-", "--output-format", "cpuprofile"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, std::fs::read(&a).unwrap());
    // The written file is what node writes: the keys DevTools reads, in node's order.
    let text = String::from_utf8(out.stdout).unwrap();
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("no {key}"));
    let order = ["nodes", "startTime", "endTime", "samples", "timeDeltas"].map(at);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["nodes"][0]["callFrame"]["functionName"], "(root)");
}

#[test]
fn order_devtools_would_rewrite_is_given_up_and_huge_profiles_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Two equal sibling nodes `a`: DevTools tells them apart and keeps the `(program)` sample
    // between them; cpuprof merges them, so the same order would make DevTools move it.
    let siblings = dir.path().join("siblings.cpuprofile");
    let meta = r#""scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1"#;
    let a = r#""functionName":"a","scriptId":"1","url":"file:///a.js","lineNumber":0,"columnNumber":0"#;
    std::fs::write(
        &siblings,
        format!(
            r#"{{"nodes":[{{"id":1,"callFrame":{{"functionName":"(root)",{meta}}},"children":[2,3,4]}},
            {{"id":2,"callFrame":{{{a}}}}},{{"id":3,"callFrame":{{{a}}}}},
            {{"id":4,"callFrame":{{"functionName":"(program)",{meta}}}}}],
            "startTime":0,"endTime":5000,"samples":[2,4,3,2],"timeDeltas":[0,1000,1000,1000]}}"#
        ),
    )
    .unwrap();
    let (written, notes) = convert(siblings.to_str().unwrap(), dir.path(), "out.cpuprofile", &[]);
    assert!(notes.contains("the sample order is not kept"), "{notes}");
    for options in [&[][..], &["--weight", "samples", "--include-idle"]] {
        let theirs = oracle(&with_path(&siblings, options));
        let ours = oracle(&with_path(&written, options));
        assert_eq!(rows(&ours), rows(&theirs), "{options:?}");
    }

    // A top-level `(program)` is written before a nested one: DevTools takes only the top-level
    // one for `(program)`, so a sample of it after a nested one would be moved.
    let nested = dir.path().join("nested.folded");
    std::fs::write(&nested, "main;(program) 2\n(program) 1\nmain;x 2\n").unwrap();
    let (written, _) = convert(nested.to_str().unwrap(), dir.path(), "nested.cpuprofile", &[]);
    let json: Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    let listed = json["nodes"].as_array().unwrap();
    let program = listed[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|id| listed.iter().any(|n| n["id"] == **id && n["callFrame"]["functionName"] == "(program)"))
        .unwrap();
    let samples = json["samples"].as_array().unwrap();
    // Its samples lead (the first is never moved, nor one after a `(program)`) or end the list.
    for i in 1..samples.len() - 1 {
        assert!(samples[i] != *program || samples[i - 1] == *program, "{samples:?}");
    }

    // One entry per sample: a few bytes that claim 10^8 samples are refused, not written.
    let huge = dir.path().join("huge.folded");
    std::fs::write(&huge, "a;b 100000000\n").unwrap();
    let out = cpuprof()
        .args(["convert", huge.to_str().unwrap(), "-o"])
        .arg(dir.path().join("h.cpuprofile"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a .cpuprofile lists each one"));
    assert!(!dir.path().join("h.cpuprofile").exists());
}
