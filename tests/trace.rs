//! `cpuprof top` on Chrome trace-event files (`fixtures/trace/`, recorded by
//! `fixtures/trace/record.sh`): every trace against the independent oracle, which turns the
//! trace's profile into a `.cpuprofile` (`fixtures/oracle/trace-to-cpuprofile.js`) and then
//! computes `top` from it (`fixtures/oracle/top.js`); profile 0x1 against the `.cpuprofile`
//! node wrote in the same run; malformed traces (`fixtures/bad/*.trace.json`) against their
//! messages.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use common::{cpuprof, files, oracle, report_differences, root};
use serde_json::Value;

const OPTION_SETS: &[&[&str]] =
    &[&[], &["--by", "file"], &["--by", "line"], &["--weight", "samples"], &["--include-idle"], &["--sort", "total"]];

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

/// The oracle's `.cpuprofile` of one profile of `trace` (`None`: the default one), in `dir`.
fn oracle_cpuprofile(trace: &str, id: Option<&str>, dir: &std::path::Path) -> String {
    let out = Command::new("node")
        .arg("fixtures/oracle/trace-to-cpuprofile.js")
        .arg(trace)
        .args(id)
        .current_dir(root())
        .output()
        .expect("node must be installed to run the oracle");
    assert!(out.status.success(), "trace-to-cpuprofile failed on {trace}: {}", String::from_utf8_lossy(&out.stderr));
    let path = dir.join(format!("{}.{}.cpuprofile", trace.replace('/', "_"), id.unwrap_or("default")));
    std::fs::write(&path, out.stdout).unwrap();
    path.to_string_lossy().into_owned()
}

/// The `PID:ID` of every profile in `trace`, as the oracle lists them.
fn profile_keys(trace: &str) -> Vec<String> {
    let list = Command::new("node")
        .args(["fixtures/oracle/trace-to-cpuprofile.js", trace, "--list"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(list.status.success(), "{}", String::from_utf8_lossy(&list.stderr));
    String::from_utf8(list.stdout).unwrap().lines().map(|l| l.split(' ').next().unwrap().to_owned()).collect()
}

fn traces() -> Vec<String> {
    let traces = files("fixtures/trace", &[".json", ".json.gz"]);
    assert!(traces.len() >= 5, "expected the recorded traces, found {traces:?}");
    traces
}

#[test]
fn every_trace_matches_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for trace in &traces() {
        let expected = oracle_cpuprofile(trace, None, dir.path());
        for options in OPTION_SETS {
            let theirs = oracle(&[&[expected.as_str()], *options].concat());
            let ours = ours(trace, options);
            assert_eq!(ours["format"], "trace", "{trace}");
            assert!(!theirs["rows"].as_array().expect("rows").is_empty());
            let diffs = report_differences(&ours, &theirs, &[]);
            if !diffs.is_empty() {
                failures.push(format!("{trace} {options:?}:\n  {}", diffs.join("\n  ")));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches with the oracle:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_default_profile_is_named_in_a_warning() {
    for trace in traces().into_iter().filter(|t| !t.contains("chromium")) {
        let keys = profile_keys(&trace);
        // node's traces: 0x1 (--cpu-prof) and 0x2 (the tracing profiler), both on the main thread.
        assert_eq!(keys.len(), 2, "{keys:?}");
        let ours = ours(&trace, &[]);
        let warnings = ours["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let warning = warnings[0].as_str().unwrap();
        assert!(warning.starts_with("trace holds 2 CPU profiles ("), "{warning}");
        assert!(warning.ends_with("(main thread, most samples); choose with --profile"), "{warning}");
        for key in &keys {
            assert!(warning.contains(key.as_str()), "{warning} lacks {key}");
        }
    }
}

#[test]
fn every_profile_of_a_trace_can_be_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let trace = "fixtures/trace/money.trace.json.gz";
    for id in ["0x1", "0x2"] {
        let expected = oracle_cpuprofile(trace, Some(id), dir.path());
        let theirs = oracle(&[expected.as_str()]);
        let ours = ours(trace, &["--profile", id]);
        let diffs = report_differences(&ours, &theirs, &[]);
        assert!(diffs.is_empty(), "{trace} --profile {id}:\n  {}", diffs.join("\n  "));
        assert_eq!(ours["warnings"], serde_json::json!([]));
    }
    let out = cpuprof().args(["top", trace, "--profile", "0x7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no CPU profile `0x7` in this trace; it holds ")
            && stderr.contains(":0x2 with ")
            && stderr.ends_with("; choose with --profile\n"),
        "{stderr}"
    );
}

/// Self and total samples per function, with `file://` urls read as paths.
fn per_function(report: &Value) -> BTreeMap<String, (i64, i64)> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let file = r["file"].as_str().unwrap_or("");
            let file = file.strip_prefix("file://").unwrap_or(file);
            let key = format!("{} {file}:{}:{}", r["name"].as_str().unwrap(), r["line"], r["column"]);
            (key, (r["self_samples"].as_i64().unwrap(), r["total_samples"].as_i64().unwrap()))
        })
        .collect()
}

#[test]
fn profile_0x1_is_the_cpuprofile_of_the_same_run() {
    for stem in ["money", "regex-backtrack"] {
        let cpuprofile = ours(&format!("fixtures/trace/{stem}.cpuprofile"), &[]);
        for trace in [format!("fixtures/trace/{stem}.trace.json.gz"), format!("fixtures/trace/{stem}.array.json.gz")] {
            let from_trace = ours(&trace, &["--profile", "0x1"]);
            assert_eq!(per_function(&from_trace), per_function(&cpuprofile), "{trace}");
            for key in ["total", "samples", "duration_ns", "interval_ns"] {
                assert_eq!(from_trace[key], cpuprofile[key], "{trace} {key}");
            }
        }
    }
}

#[test]
fn traces_convert_to_cpuprofiles_with_the_oracles_numbers() {
    // Each profile of a trace, written as a .cpuprofile in its own sample order, reads (by
    // DevTools' rules, in the oracle) as the oracle's own conversion of that profile does.
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for trace in &traces() {
        let keys = profile_keys(trace);
        for id in std::iter::once(None).chain(keys.iter().map(|k| Some(k.as_str()))) {
            let expected = oracle_cpuprofile(trace, id, dir.path());
            let written = dir.path().join("written.cpuprofile");
            let out = cpuprof()
                .args(["convert", trace, "-o"])
                .arg(&written)
                .args(id.map(|id| ["--profile", id]).iter().flatten())
                .output()
                .unwrap();
            assert!(out.status.success(), "{trace}: {}", String::from_utf8_lossy(&out.stderr));
            for options in OPTION_SETS {
                let theirs = oracle(&[&[expected.as_str()], *options].concat());
                let ours = oracle(&[&[written.to_str().unwrap()], *options].concat());
                let diffs = report_differences(&ours, &theirs, &[]);
                if !diffs.is_empty() {
                    failures.push(format!("{trace} {id:?} {options:?}:\n  {}", diffs.join("\n  ")));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches with the oracle:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_chromium_performance_panel_trace_is_read() {
    // Recorded by fixtures/trace/record-chromium.js in the panel's "Save profile" layout:
    // metadata first, then tens of thousands of other events around the renderers' profiles
    // (the page's, and here one of Chromium's own chrome:// pages). Their numbers are checked
    // against the oracle with the other traces; this checks which one is read.
    let trace = "fixtures/trace/chromium-page.trace.json.gz";
    let keys = profile_keys(trace);
    let ours = ours(trace, &[]);
    assert_eq!(ours["format"], "trace");
    let warnings = ours["warnings"].as_array().unwrap();
    if keys.len() > 1 {
        let warning = warnings[0].as_str().unwrap();
        assert!(keys.iter().all(|k| warning.contains(k.as_str())), "{warning} vs {keys:?}");
    } else {
        assert!(warnings.is_empty(), "one profile: nothing to choose");
    }
    // The default is the page's profile.
    let rows = ours["rows"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no {name}"));
    assert!(row("roundMoney")["file"].as_str().unwrap().ends_with("fixtures/workloads/money.js"));
    assert!(row("checkInput")["file"].as_str().unwrap().ends_with("fixtures/trace/chromium/app.js"));
    assert!(row("RegExp: ^(a+)+b$")["self"].as_i64().unwrap() > 0);
    // The page waited 300 ms between its bursts.
    assert!(ours["summary"]["idle"]["total"].as_i64().unwrap() > 100_000_000, "{}", ours["summary"]);
}

/// The events of `trace` (the array itself, whether bare or under `traceEvents`) rearranged by
/// `permute`, written to `path` in the same layout.
fn permuted(trace: &str, path: &std::path::Path, permute: impl FnOnce(&mut Vec<Value>)) {
    let mut bytes = std::fs::read(root().join(trace)).unwrap();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut plain).unwrap();
        bytes = plain;
    }
    let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
    let events = if doc.is_array() { &mut doc } else { &mut doc["traceEvents"] };
    let Value::Array(events) = events else { panic!("{trace}: no events array") };
    permute(events);
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

/// A way to rearrange a trace's events.
type Permute = fn(&mut Vec<Value>);

/// Swaps each profile's chunks two by two (1st with 2nd, 3rd with 4th, …) where they stand.
fn swap_chunks(events: &mut [Value]) {
    let mut by_profile: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if e["name"] == "ProfileChunk" {
            by_profile.entry(format!("{}:{}", e["pid"], e["id"])).or_default().push(i);
        }
    }
    for positions in by_profile.values() {
        for pair in positions.chunks_exact(2) {
            events.swap(pair[0], pair[1]);
        }
    }
}

/// A Fisher–Yates shuffle driven by a fixed xorshift seed.
fn shuffle(events: &mut [Value]) {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in (1..events.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        events.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}

/// `top` (all rows, JSON, without the input's name) and `convert`'s `.cpuprofile` (every node,
/// sample and time delta) of one profile of `trace`.
fn read_out(trace: &str, profile: Option<&str>, dir: &std::path::Path) -> (Value, Vec<u8>) {
    let choose: Vec<&str> = profile.map(|p| vec!["--profile", p]).unwrap_or_default();
    let mut top = ours(trace, &choose);
    top.as_object_mut().unwrap().remove("source");
    let written = dir.join("order.cpuprofile");
    let out = cpuprof().args(["convert", trace, "-o"]).arg(&written).args(&choose).output().unwrap();
    assert!(out.status.success(), "{trace}: {}", String::from_utf8_lossy(&out.stderr));
    (top, std::fs::read(&written).unwrap())
}

#[test]
fn the_order_of_a_traces_events_does_not_change_its_profiles() {
    // Viewers sort a trace's events by `ts`, so any order is the same trace: reversed, each
    // profile's chunks swapped in pairs, and shuffled, every profile reads exactly as in the
    // recorded order (which `every_trace_matches_the_oracle` checks against the oracle): the same
    // rows, totals, warnings, and the same samples at the same times in the converted profile.
    let dir = tempfile::tempdir().unwrap();
    let permutations: [(&str, Permute); 3] =
        [("reversed", |e| e.reverse()), ("chunks swapped", |e| swap_chunks(e)), ("shuffled", |e| shuffle(e))];
    let mut failures = Vec::new();
    for trace in &traces() {
        let keys = profile_keys(trace);
        let profiles: Vec<Option<&str>> = std::iter::once(None).chain(keys.iter().map(|k| Some(k.as_str()))).collect();
        let expected: Vec<(Value, Vec<u8>)> = profiles.iter().map(|p| read_out(trace, *p, dir.path())).collect();
        for (name, permute) in permutations {
            let path = dir.path().join(format!("{}.json", name.replace(' ', "-")));
            permuted(trace, &path, permute);
            for (profile, expected) in profiles.iter().zip(&expected) {
                let (top, converted) = read_out(path.to_str().unwrap(), *profile, dir.path());
                if top != expected.0 {
                    let diffs = report_differences(&top, &expected.0, &["warnings"]);
                    failures.push(format!("{trace} {name} {profile:?}: top differs\n  {}", diffs.join("\n  ")));
                } else if converted != expected.1 {
                    failures.push(format!("{trace} {name} {profile:?}: the converted .cpuprofile differs"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} profiles changed with the order of events:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
