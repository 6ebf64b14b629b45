//! What `cpuprof convert` writes, read by a real pprof client: `go tool pprof` (Debian's
//! `golang-go`; `.ci/run` installs it, elsewhere the tests say SKIPPED without it). Its `-top`
//! per-function flat and cum values, in samples and in time, must equal `cpuprof top` of the
//! original profile.
//!
//! `go tool pprof -top -filefunctions` makes one row per function name and file (`name file`,
//! the file cleaned as Go's `filepath.Clean` does), where `cpuprof top` keeps functions of one
//! file apart by line and column. So cpuprof's rows are grouped by name and file: a group of one
//! row must match exactly; a group of several must have the sum of their flat values, and a
//! cum between the largest of theirs and their sum (a sample with two of them on its stack
//! counts once).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clean, cpuprof, go};
use serde_json::Value;

/// `go tool pprof -top` of `file` for `sample_index`: label → (flat, cum); times in ns, bytes in B.
fn go_top(go: &Path, file: &Path, sample_index: &str) -> BTreeMap<String, (i64, i64)> {
    let unit = match go_sample_types(go, file).iter().find(|(t, _)| t == sample_index).map(|(_, u)| u.as_str()) {
        Some("bytes") => "-unit=B",
        _ => "-unit=ns",
    };
    let out = Command::new(go)
        .args(["tool", "pprof", "-top", "-filefunctions", "-nodecount=1000000", "-nodefraction=0"])
        // -symbolize=none: names as written (pprof would strip C++ argument lists).
        .args(["-edgefraction=0", "-symbolize=none", unit, &format!("-sample_index={sample_index}")])
        .arg(file)
        .output()
        .expect("go runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "go tool pprof {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    let mut rows = BTreeMap::new();
    let mut table = false;
    for line in text.lines() {
        if line.trim_start().starts_with("flat ") {
            table = true;
            continue;
        }
        if !table {
            continue;
        }
        // flat flat% sum% cum cum% label
        let mut rest = line.trim_start();
        let mut fields = Vec::new();
        for _ in 0..5 {
            let end = rest.find(' ').unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = rest[end..].trim_start();
        }
        let value = |s: &str| -> i64 {
            let number = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            number.parse::<f64>().unwrap_or_else(|_| panic!("go tool pprof value {s:?} in {line:?}")).round() as i64
        };
        // pprof marks functions inlined into their callers; cpuprof has them as frames too.
        let label = [" (inline)", " (partial-inline)"].iter().fold(rest, |l, tag| l.strip_suffix(tag).unwrap_or(l));
        let previous = rows.insert(label.to_owned(), (value(fields[0]), value(fields[3])));
        assert!(previous.is_none(), "go tool pprof shows {label:?} twice");
    }
    assert!(table, "no table in go tool pprof's output:\n{text}");
    rows
}

/// The sample types of `file` as go tool pprof lists them (`-raw`): (type, unit).
fn go_sample_types(go: &Path, file: &Path) -> Vec<(String, String)> {
    let out = Command::new(go).args(["tool", "pprof", "-raw"]).arg(file).output().expect("go runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().skip_while(|l| *l != "Samples:").nth(1).unwrap_or_default();
    line.split_whitespace()
        .filter_map(|t| t.trim_end_matches("[dflt]").split_once('/'))
        .map(|(t, u)| (t.to_owned(), u.to_owned()))
        .collect()
}

/// `cpuprof top --all --include-idle --format json` of `input` with `args`.
fn top(input: &str, args: &[&str]) -> Value {
    let out = cpuprof()
        .args(["top", "--all", "--include-idle", "--format", "json", input])
        .args(args)
        .output()
        .expect("cpuprof runs");
    assert!(out.status.success(), "top {input}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Per label (`name file`), the (self, total) of each of `top`'s rows, for value `self_key`/`total_key`.
fn top_groups(report: &Value, self_key: &str, total_key: &str) -> BTreeMap<String, Vec<(i64, i64)>> {
    let mut groups: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    for row in report["rows"].as_array().expect("rows") {
        let name = row["name"].as_str().unwrap_or_default();
        let name = if name.is_empty() { "(anonymous)" } else { name };
        let file = clean(row["file"].as_str().unwrap_or_default());
        let label = if file.is_empty() { name.to_owned() } else { format!("{name} {file}") };
        let value = (row[self_key].as_i64().expect("self"), row[total_key].as_i64().expect("total"));
        groups.entry(label).or_default().push(value);
    }
    groups
}

/// What differs between `top`'s groups and go's rows (nothing: empty). Rows of go's with
/// nothing in them, and `(root)`, which `top` never shows, are left out.
fn differences(ours: &BTreeMap<String, Vec<(i64, i64)>>, theirs: &BTreeMap<String, (i64, i64)>) -> Vec<String> {
    let mut out = Vec::new();
    for (label, rows) in ours {
        let Some(&(flat, cum)) = theirs.get(label) else {
            out.push(format!("{label:?}: cpuprof {rows:?}, not in go tool pprof's output"));
            continue;
        };
        let own: i64 = rows.iter().map(|r| r.0).sum();
        let largest = rows.iter().map(|r| r.1).max().unwrap_or(0);
        let sum: i64 = rows.iter().map(|r| r.1).sum();
        let agrees = flat == own && if rows.len() == 1 { cum == sum } else { largest <= cum && cum <= sum };
        if !agrees {
            out.push(format!("{label:?}: cpuprof {rows:?}, go tool pprof flat {flat} cum {cum}"));
        }
    }
    for (label, value) in theirs {
        if !ours.contains_key(label) && *value != (0, 0) && label != "(root)" {
            out.push(format!("{label:?}: go tool pprof {value:?}, not a row of cpuprof's"));
        }
    }
    out
}

/// Compares `top` of `input` (read with `args`) with go's `-top` of `pprof`, in samples and,
/// when the report is in time, in ns. Returns how many labels were compared.
fn compare(go: &Path, input: &str, args: &[&str], pprof: &Path, count_index: &str, time_index: &str) -> usize {
    let samples = top(input, &[args, &["--weight", "samples"]].concat());
    let ours = top_groups(&samples, "self_samples", "total_samples");
    let problems = differences(&ours, &go_top(go, pprof, count_index));
    assert!(problems.is_empty(), "{input}, samples:\n{}", problems.join("\n"));
    let time = top(input, args);
    if time["unit"] == "ns" {
        let ours = top_groups(&time, "self", "total");
        let problems = differences(&ours, &go_top(go, pprof, time_index));
        assert!(problems.is_empty(), "{input}, time:\n{}", problems.join("\n"));
    }
    ours.len()
}

/// Converts `input` to pprof in `dir`.
fn convert(input: &str, dir: &Path) -> PathBuf {
    let pb = dir.join(format!("{}.pb.gz", input.rsplit('/').next().unwrap()));
    let out = cpuprof().args(["convert", input, "-o"]).arg(&pb).output().unwrap();
    assert!(out.status.success(), "convert {input}: {}", String::from_utf8_lossy(&out.stderr));
    pb
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn go_tool_pprof_reads_what_convert_writes_to_the_same_numbers() {
    let Some(go) = go() else {
        eprintln!("SKIPPED: no `go` (install the Debian package golang-go, or set GO)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        "fixtures/cpuprofile/money.cpuprofile",
        // Same-named functions of one file (go tool pprof shows them as one row).
        "fixtures/cpuprofile/anon-arrows.cpuprofile",
        "fixtures/cpuprofile/idle-timers.cpuprofile",
        "fixtures/ticklog/regex-backtrack.log",
        "fixtures/trace/money.trace.json.gz",
        "fixtures/pprof/hand.folded",
        // Minified: functions of one line told apart by their column only.
        "fixtures/sourcemap/app.min.cpuprofile",
        "fixtures/sourcemap/shapes/shapes.min.cpuprofile",
        // pprof to pprof.
        "fixtures/pprof/ddpprof-wall.pb.gz",
        "fixtures/pprof/handmade.pb.gz",
    ];
    for input in inputs {
        let pb = convert(input, dir.path());
        let compared = compare(&go, input, &[], &pb, "samples", "1");
        assert!(compared > 4, "{input}: {compared} functions compared");
    }
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn go_tool_pprof_agrees_with_hand_counts_of_a_folded_file() {
    let Some(go) = go() else {
        eprintln!("SKIPPED: no `go` (install the Debian package golang-go, or set GO)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pb = convert("fixtures/pprof/hand.folded", dir.path());
    // Counted by hand from the six lines of fixtures/pprof/hand.folded.
    let want: BTreeMap<String, (i64, i64)> = [
        ("tokenize", (30, 30)),
        ("layout", (25, 30)),
        ("parse", (10, 40)),
        ("fib", (7, 7)),
        ("measure", (5, 5)),
        ("(program)", (3, 3)),
        ("main", (0, 77)),
        ("render", (0, 30)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(go_top(&go, &pb, "samples"), want);
}

/// The columns `convert` writes (`Line.column`) come back: a minified bundle's functions that
/// share a name, a file and a line stay apart, and every row is as it was.
#[test]
fn columns_survive_a_round_trip_through_pprof() {
    let dir = tempfile::tempdir().unwrap();
    let input = "fixtures/sourcemap/shapes/shapes.min.cpuprofile";
    let pb = convert(input, dir.path());
    let rows = |report: Value| -> Vec<String> {
        let mut rows: Vec<String> = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} {} {} {} {} {}", r["name"], r["file"], r["line"], r["column"], r["self"], r["total"]))
            .collect();
        rows.sort();
        rows
    };
    let (before, after) = (rows(top(input, &[])), rows(top(pb.to_str().unwrap(), &[])));
    assert_eq!(before, after);
    // The case in point: two functions that differ by their column only.
    let keys: std::collections::BTreeSet<String> =
        before.iter().map(|r| r.split(' ').take(3).collect::<Vec<_>>().join(" ")).collect();
    assert!(keys.len() < before.len(), "{input} has no two functions on one line with one name");
}

/// The must-read pprof files of a corpus directory (`CPUPROF_CORPUS`, else /work/shared/corpus)
/// read as `go tool pprof` reads them, per sample type. Not in the repository (licenses differ):
/// `cargo test --test tests go_pprof:: -- --ignored` where the corpus is.
#[test]
#[ignore = "needs the corpus of real profiles"]
#[allow(clippy::print_stderr)] // the per-file numbers
fn corpus_pprof_files_read_as_go_tool_pprof_reads_them() {
    let Some(go) = go() else {
        eprintln!("SKIPPED: no `go`");
        return;
    };
    let corpus = std::env::var("CPUPROF_CORPUS").unwrap_or_else(|_| "/work/shared/corpus".to_owned());
    let files = [
        "gpprof-large.cpu",
        "gpprof-report-sample.cpu",
        "pyroscope-cpu-js.pb.gz",
        "pyroscope-cpu.pb.gz",
        "pyroscope-cpu_go_truncated_1.pb.gz",
        "pyroscope-go.cpu.labels.pprof",
        "pyroscope-nodejs-heap.pb.gz",
        "pyroscope-nodejs-wall.pb.gz",
        "pyroscope-profile_java",
        "pyroscope-profile_nodejs",
        "pyroscope-profile_rust",
        "pyroscope-profile_uncompressed",
        "pyroscope-pyspy-1.pb.gz",
        "speedscope-simple.prof",
    ];
    for name in files {
        let path = Path::new(&corpus).join("pprof").join(name);
        let input = path.to_str().unwrap();
        let types = go_sample_types(&go, &path);
        assert!(!types.is_empty(), "{name}: go tool pprof lists no sample types");
        for (ty, unit) in types {
            let ours = top_groups(&top(input, &["--sample-type", &ty]), "self", "total");
            let problems = differences(&ours, &go_top(&go, &path, &ty));
            assert!(problems.is_empty(), "{name} {ty}:\n{}", problems.join("\n"));
            let flat: i64 = ours.values().flatten().map(|r| r.0).sum();
            eprintln!("{name}: {ty}/{unit}: {} functions equal, flat sum {flat}", ours.len());
        }
    }
}
