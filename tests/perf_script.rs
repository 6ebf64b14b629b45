//! Linux `perf script` text as input: the recorded `fixtures/perf/fib.perf-script.txt`
//! (`bash fixtures/record.sh perf-fib`: perf record -g of node 20 --perf-basic-prof) is
//! recognised, its JIT frames are JavaScript functions with file, line, column (and tier with
//! --split-tiers), and what is not perf script is refused in one line.

use crate::common;

use common::cpuprof;
use serde_json::Value;

const FIB: &str = "fixtures/perf/fib.perf-script.txt";

fn top(args: &[&str]) -> Value {
    let out =
        cpuprof().args(["top", FIB, "--all", "--format", "json", "--weight", "samples"]).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "no warnings: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn recorded_node_profile_reads_with_javascript_functions() {
    let report = top(&[]);
    assert_eq!(report["format"], "perf-script");
    // `grep -c '^node ' fixtures/perf/fib.perf-script.txt`: one sample per event.
    assert_eq!(report["samples"], 165);
    let rows = report["rows"].as_array().unwrap();
    let fib: Vec<&Value> = rows.iter().filter(|r| r["name"] == "fib").collect();
    assert_eq!(fib.len(), 1, "the tiers of fib are one function: {fib:?}");
    assert_eq!(fib[0]["kind"], "js");
    assert!(fib[0]["file"].as_str().unwrap().ends_with("fixtures/perf/fib.js"), "{}", fib[0]);
    assert_eq!((fib[0]["line"].as_u64(), fib[0]["column"].as_u64()), (Some(5), Some(13)));
    // `grep -c 'JS:[~^+*]fib ' …` counts the frame lines; the oracle test checks the numbers.
    assert!(fib[0]["self_samples"].as_i64().unwrap() > 0);
    let kinds: std::collections::BTreeSet<&str> = rows.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    // Builtins_CEntry… (node's embedded builtins), RegExp: (perf map), the process name.
    for kind in ["js", "native", "builtin", "regexp", "other"] {
        assert!(kinds.contains(kind), "{kind} not among {kinds:?}");
    }
    let node = rows.iter().find(|r| r["name"] == "node").unwrap();
    assert_eq!(node["total_samples"], 165, "the process name is the root of every stack");
}

#[test]
fn split_tiers_keeps_v8_tiers_apart() {
    let report = top(&["--split-tiers"]);
    // JSON names the function plainly and gives its tier apart (the table shows `*fib`).
    let fib: Vec<&Value> = report["rows"].as_array().unwrap().iter().filter(|r| r["name"] == "fib").collect();
    assert!(!fib.is_empty(), "{report}");
    assert!(fib.iter().all(|r| r["tier"].is_string()), "{fib:?}");
}

#[test]
fn what_is_not_perf_script_is_refused_in_one_line() {
    let out =
        cpuprof().args(["top", "fixtures/folded/simple.folded", "--input-format", "perf-script"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cpuprof: error: fixtures/folded/simple.folded:1:1: expected a perf script event line \
         (`COMMAND PID TIME: [PERIOD] EVENT:`)\n"
    );
}

/// The time of each sample of `FIB`, in ns after the first, read from the event lines by a
/// reader of our own: a line that starts a sample (not blank, not indented, not `#`) holds
/// `SECONDS.MICROS:` after the pid.
fn header_times() -> Vec<i64> {
    let text = std::fs::read_to_string(common::root().join(FIB)).unwrap();
    let mut times = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with(['#', ' ', '\t']) {
            continue;
        }
        let word = line.split_whitespace().find(|w| w.ends_with(':') && w.contains('.')).expect("a time");
        let (seconds, fraction) = word.trim_end_matches(':').split_once('.').unwrap();
        let fraction = format!("{fraction:0<9}");
        times.push(seconds.parse::<i64>().unwrap() * 1_000_000_000 + fraction.parse::<i64>().unwrap());
    }
    let first = *times.iter().min().unwrap();
    times.iter().map(|t| t - first).collect()
}

/// perf script prints a time on every sample's line: the samples make a timeline, whose
/// buckets and windows hold the samples the header times put there.
#[test]
fn sample_times_make_a_timeline_windows_and_blocks() {
    let times = header_times();
    assert_eq!(times.len(), 165);
    for buckets in ["4", "7"] {
        let out = cpuprof().args(["timeline", FIB, "--format", "json", "--buckets", buckets]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = report["buckets"].as_array().unwrap();
        assert_eq!(rows.len().to_string(), buckets);
        for row in rows {
            let (start, end) = (row["start_ns"].as_i64().unwrap(), row["end_ns"].as_i64().unwrap());
            let expected = times.iter().filter(|t| (start..end).contains(*t)).count();
            assert_eq!(row["samples"].as_u64(), Some(expected as u64), "{start}..{end}");
        }
    }
    for (from, to, from_ns, to_ns) in [("100ms", "200ms", 100_000_000, 200_000_000), ("0ms", "50ms", 0, 50_000_000)] {
        let report = top(&["--from", from, "--to", to]);
        let expected = times.iter().filter(|t| (from_ns..to_ns).contains(*t)).count();
        assert_eq!(report["samples"].as_u64(), Some(expected as u64), "{from}..{to}");
    }
    let out = cpuprof().args(["blocks", FIB, "--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!report["blocks"].as_array().unwrap().is_empty(), "{report}");
}
