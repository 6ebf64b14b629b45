//! `cpuprof top` on the forms of Chrome trace that other tools write (issue 18), derived from
//! node's recorded `fixtures/trace/money.trace.json.gz` by `fixtures/trace/variants.js` into
//! `fixtures/trace/variants/`: every profile of every variant against the independent oracle
//! (`fixtures/oracle/trace-to-cpuprofile.js`, then `fixtures/oracle/top.js`); the variants that
//! only change the form against the recorded trace itself; and their warnings.

use crate::common;

use std::process::Command;

use common::{cpuprof, files, oracle, report_differences, root};
use serde_json::Value;

const OPTION_SETS: &[&[&str]] =
    &[&[], &["--by", "file"], &["--by", "line"], &["--weight", "samples"], &["--include-idle"], &["--sort", "total"]];

const RECORDED: &str = "fixtures/trace/money.trace.json.gz";

/// `cpuprof top --all --format json`, and its warnings.
fn ours(input: &str, options: &[&str]) -> Value {
    let out = cpuprof().args(["top", input, "--all", "--format", "json"]).args(options).output().expect("run cpuprof");
    assert!(out.status.success(), "cpuprof failed on {input} {options:?}: {}", String::from_utf8_lossy(&out.stderr));
    let mut report: Value = serde_json::from_slice(&out.stdout).expect("cpuprof prints JSON");
    // The reader's warnings name the input first, as stderr does: the messages are after it.
    for warning in report["warnings"].as_array_mut().expect("warnings") {
        let message =
            warning.as_str().expect("a warning").strip_prefix(&format!("{input}: ")).expect("the input first");
        *warning = Value::from(message);
    }
    report
}

fn warnings(report: &Value) -> Vec<String> {
    report["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_owned()).collect()
}

/// The oracle's profiles of `trace`: (PID:ID, tid, samples, nodes).
fn profiles(trace: &str) -> Vec<(String, String, usize, usize)> {
    let out = Command::new("node")
        .args(["fixtures/oracle/trace-to-cpuprofile.js", trace, "--list"])
        .current_dir(root())
        .output()
        .expect("node must be installed to run the oracle");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let value = |i: usize| fields[i].split_once('=').unwrap().1.to_owned();
            (fields[0].to_owned(), value(1), value(2).parse().unwrap(), value(3).parse().unwrap())
        })
        .collect()
}

fn oracle_cpuprofile(trace: &str, key: &str, dir: &std::path::Path) -> String {
    let out = Command::new("node")
        .args(["fixtures/oracle/trace-to-cpuprofile.js", trace, key])
        .current_dir(root())
        .output()
        .expect("node must be installed to run the oracle");
    assert!(
        out.status.success(),
        "trace-to-cpuprofile failed on {trace} {key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join(format!("{}.{}.cpuprofile", trace.replace('/', "_"), key.replace(':', "_")));
    std::fs::write(&path, out.stdout).unwrap();
    path.to_string_lossy().into_owned()
}

fn variants() -> Vec<String> {
    let variants = files("fixtures/trace/variants", &[".json.gz"]);
    let names: Vec<&str> = variants.iter().filter_map(|v| v.rsplit('/').next()).collect();
    assert_eq!(
        names,
        ["children.json.gz", "chrome141.json.gz", "pushbased.json.gz", "sampled.json.gz", "unchunked.json.gz"]
    );
    variants
}

#[test]
fn every_profile_of_every_variant_matches_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for trace in &variants() {
        for (key, _, samples, nodes) in profiles(trace) {
            if samples == 0 && nodes == 0 {
                continue;
            }
            let expected = oracle_cpuprofile(trace, &key, dir.path());
            for options in OPTION_SETS {
                let theirs = oracle(&[&[expected.as_str()], *options].concat());
                let ours = ours(trace, &[&["--profile", key.as_str()], *options].concat());
                assert_eq!(ours["format"], "trace", "{trace}");
                let diffs = report_differences(&ours, &theirs, &[]);
                if !diffs.is_empty() {
                    failures.push(format!("{trace} {key} {options:?}:\n  {}", diffs.join("\n  ")));
                }
                compared += 1;
            }
        }
    }
    // children 1 profile, chrome141 2 (and an empty one), pushbased 2, sampled 2, unchunked 2.
    assert_eq!(compared, 9 * OPTION_SETS.len());
    assert!(failures.is_empty(), "{} mismatches with the oracle:\n{}", failures.len(), failures.join("\n"));
}

/// The report without what names the input.
fn body(mut report: Value) -> Value {
    let object = report.as_object_mut().unwrap();
    object.remove("source");
    object.remove("warnings");
    report
}

#[test]
fn a_change_of_form_reads_as_the_recorded_trace() {
    let pid = profiles(RECORDED)[0].0.split(':').next().unwrap().to_owned();
    let cases = [
        ("children.json.gz", "0x1", "0x1"),
        ("pushbased.json.gz", "0x1", "0x1"),
        ("pushbased.json.gz", "0x2", "0x2"),
        ("unchunked.json.gz", "775", "0x1"),
        ("unchunked.json.gz", "776", "0x2"),
    ];
    for (variant, id, recorded_id) in cases {
        let variant = format!("fixtures/trace/variants/{variant}");
        for options in OPTION_SETS {
            // A `CpuProfile` event has no `lines`: no line hits, so `--by line` differs.
            if variant.contains("unchunked") && options.contains(&"line") {
                continue;
            }
            let ours = body(ours(&variant, &[&["--profile", &format!("{pid}:{id}")], *options].concat()));
            let recorded = body(ours_of(RECORDED, recorded_id, options));
            assert_eq!(ours, recorded, "{variant} {id} {options:?}");
        }
    }
}

fn ours_of(trace: &str, id: &str, options: &[&str]) -> Value {
    ours(trace, &[&["--profile", id], options].concat())
}

#[test]
fn sampled_stacks_read_as_the_recorded_tree() {
    // Hermes' frames have a name (`fn(url:line:col)`) and nothing else: the rows differ in
    // their names, not in their numbers.
    let numbers = |report: &Value| {
        let mut rows: Vec<(i64, i64, i64, i64)> = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let n = |k: &str| r[k].as_i64().unwrap();
                (n("self_samples"), n("total_samples"), n("self"), n("total"))
            })
            .collect();
        rows.sort_unstable();
        rows
    };
    let sampled = ours("fixtures/trace/variants/sampled.json.gz", &[]);
    let recorded = ours_of(RECORDED, "0x1", &[]);
    assert_eq!(
        (sampled["samples"].clone(), sampled["total"].clone()),
        (recorded["samples"].clone(), recorded["total"].clone())
    );
    assert_eq!(numbers(&sampled), numbers(&recorded));
    assert!(sampled["rows"][0]["name"].as_str().unwrap().contains("money.js:"), "{}", sampled["rows"][0]);
    // The JavaScript thread (mqt_js) is the main thread, though the other one started first.
    let w = warnings(&sampled);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("trace holds 2 CPU profiles (") && w[0].contains(":7695 (main thread);"), "{w:?}");
}

#[test]
fn main_threads_are_told_by_their_thread_name() {
    let list = profiles("fixtures/trace/variants/unchunked.json.gz");
    let (main, worker) = (&list[0], &list[1]);
    assert_eq!((main.1.as_str(), worker.1.as_str()), ("775", "776"));
    assert!(worker.2 > main.2, "{list:?}");
    let report = ours("fixtures/trace/variants/unchunked.json.gz", &[]);
    let w = warnings(&report);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].ends_with(&format!("read {} (main thread); choose with --profile", main.0)), "{w:?}");
    assert_eq!(report["samples"], ours_of(RECORDED, "0x1", &[])["samples"]);
}

#[test]
fn chrome141_empty_chunks_and_lost_parents() {
    let trace = "fixtures/trace/variants/chrome141.json.gz";
    let list = profiles(trace);
    let empty = &list.iter().find(|p| p.0.ends_with(":0x3")).unwrap().0;
    let key = &list.iter().find(|p| p.0.ends_with(":0x1")).unwrap().0;
    let report = ours(trace, &["--profile", key]);
    let w = warnings(&report);
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(w[0], format!("CPU profile {empty} of this trace is empty: no nodes or samples; skipped"));
    let (nodes, samples) = w[1]
        .strip_prefix("dropped ")
        .and_then(|rest| {
            rest.split_once(&format!(" nodes of CPU profile {key} whose parent never appears in the trace"))
        })
        .and_then(|(nodes, rest)| Some((nodes, rest.split_once("and the ")?.1.split_once(' ')?.0)))
        .unwrap_or_else(|| panic!("{w:?}"));
    let (nodes, samples): (usize, usize) = (nodes.parse().unwrap(), samples.parse().unwrap());
    assert!(nodes > 0 && samples > 0, "{w:?}");
    // The samples kept: those of the recorded profile, less the emptied chunk's and those dropped.
    let recorded = ours_of(RECORDED, "0x1", &["--include-idle"])["samples"].as_u64().unwrap() as usize;
    let kept = ours(trace, &["--profile", key, "--include-idle"])["samples"].as_u64().unwrap() as usize;
    assert!(kept + samples < recorded, "{kept} + {samples} vs {recorded}");
    let out = cpuprof().args(["top", trace, "--profile", empty]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("cpuprof: error: {trace}: CPU profile {empty} of this trace is empty: no nodes or samples\n")
    );
}
