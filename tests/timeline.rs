//! `cpuprof timeline`, `cpuprof blocks`, categories and the windows built on them, end to end:
//! every recorded `.cpuprofile` against the independent oracle (`fixtures/oracle/timeline.js`,
//! written from `fixtures/oracle/SPEC.md` §10-§12), and the planned content of the `phases`
//! and `blocks` workloads (their side files say what ran when, and what node's own
//! event-loop-delay histogram saw).

use crate::common;

use common::{cpuprof, files, oracle_script, root};
use serde_json::Value;

const ORACLE: &str = "fixtures/oracle/timeline.js";

/// `cpuprof ARGS --format json`, asked of the library ([`common::library_json`]): the oracle
/// checks the analysis, not the process.
fn ours(args: &[&str]) -> Value {
    common::library_json(args).unwrap_or_else(|(_, e)| panic!("cpuprof {args:?} failed: {e}"))
}

fn ours_text(args: &[&str]) -> String {
    let out = cpuprof().args(args).env("COLUMNS", "200").output().expect("run cpuprof");
    assert!(out.status.success(), "cpuprof {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn recorded() -> Vec<String> {
    let mut fixtures = files("fixtures/cpuprofile", &[".cpuprofile", ".cpuprofile.gz"]);
    assert!(fixtures.len() >= 17, "expected the recorded fixtures, found {fixtures:?}");
    // A header that ends before it starts: DevTools (and so the oracle) takes a negative length,
    // cpuprof the length the samples are spread over (tests/top.rs checks that one apart).
    fixtures.extend(
        files("fixtures/edge", &[".cpuprofile"])
            .into_iter()
            .filter(|f| !f.ends_with("no-deltas-end-before-start.cpuprofile")),
    );
    fixtures
}

/// The differences between two JSON values, as `path: ours vs theirs` lines (floats within 1e-9).
fn differences(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in b {
                differences(&format!("{path}.{key}"), a.get(key).unwrap_or(&Value::Null), value, out);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                out.push(format!("{path}: {} entries vs oracle {}", a.len(), b.len()));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(&format!("{path}[{i}]"), x, y, out);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.is_f64() || b.is_f64() => {
            let close = (a.as_f64().unwrap_or(f64::NAN) - b.as_f64().unwrap_or(f64::NAN)).abs() <= 1e-9;
            if !close {
                out.push(format!("{path}: cpuprof {a} vs oracle {b}"));
            }
        }
        (a, b) if a != b => out.push(format!("{path}: cpuprof {a} vs oracle {b}")),
        _ => {}
    }
}

fn compare(what: &str, ours: &Value, theirs: &Value, keys: &[&str], failures: &mut Vec<String>) {
    let mut diffs = Vec::new();
    for key in keys {
        differences(key, &ours[*key], &theirs[*key], &mut diffs);
    }
    if !diffs.is_empty() {
        diffs.truncate(12);
        failures.push(format!("{what}:\n  {}", diffs.join("\n  ")));
    }
}

#[test]
fn timelines_match_the_oracle_on_every_fixture() {
    let mut failures = Vec::new();
    for fixture in recorded() {
        for (options, oracle_options) in [
            (vec![], vec![]),
            (vec!["--bucket", "7777777ns"], vec!["--bucket-ns", "7777777"]),
            (vec!["--buckets", "7"], vec!["--buckets", "7"]),
            (vec!["--weight", "samples"], vec!["--weight", "samples"]),
        ] {
            let theirs = oracle_script(ORACLE, &[&[fixture.as_str(), "timeline"], oracle_options.as_slice()].concat());
            let ours = ours(&[&["timeline", fixture.as_str()], options.as_slice()].concat());
            compare(
                &format!("{fixture} {options:?}"),
                &ours,
                &theirs,
                &["unit", "bucket_ns", "buckets", "phases"],
                &mut failures,
            );
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn blocks_match_the_oracle_on_every_fixture() {
    let mut failures = Vec::new();
    for fixture in recorded() {
        for (min, min_ns) in [("0", "0"), ("50ms", "50000000"), ("5ms", "5000000")] {
            let theirs = oracle_script(ORACLE, &[fixture.as_str(), "blocks", "--min-ns", min_ns]);
            let ours = ours(&["blocks", fixture.as_str(), "--min", min, "--all"]);
            compare(
                &format!("{fixture} --min {min}"),
                &ours,
                &theirs,
                &["interval_ns", "min_ns", "idle_samples", "blocks", "summary"],
                &mut failures,
            );
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn categories_match_the_oracle_and_sum_to_the_whole() {
    let mut failures = Vec::new();
    for fixture in recorded() {
        for options in [&[][..], &["--include-idle"], &["--sort", "total"], &["--weight", "samples"]] {
            let theirs = oracle_script(ORACLE, &[&[fixture.as_str(), "categories", "--by-category"], options].concat());
            let ours = ours(&[&["top", fixture.as_str(), "--by", "category"], options].concat());
            let mut diffs = Vec::new();
            differences("summary.categories", &ours["summary"]["categories"], &theirs["categories"], &mut diffs);
            let columns = |v: &Value| -> Vec<Value> {
                v["rows"]
                    .as_array()
                    .expect("rows")
                    .iter()
                    .map(|r| {
                        serde_json::json!([
                            r["name"],
                            r["kind"],
                            r["self"],
                            r["self_samples"],
                            r["total"],
                            r["total_samples"]
                        ])
                    })
                    .collect()
            };
            differences("rows", &Value::Array(columns(&ours)), &Value::Array(columns(&theirs)), &mut diffs);
            if !diffs.is_empty() {
                failures.push(format!("{fixture} {options:?}:\n  {}", diffs.join("\n  ")));
            }
            // Every sample has one category: they add up to all of them.
            let sum: i64 = ours["summary"]["categories"]
                .as_object()
                .unwrap()
                .values()
                .map(|c| c["samples"].as_i64().unwrap())
                .sum();
            if sum != ours["summary"]["samples"].as_i64().unwrap() {
                failures.push(format!("{fixture}: categories hold {sum} samples of {}", ours["summary"]["samples"]));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn dependencies_are_split_from_the_app_as_the_workload_is_written() {
    // fixtures/workloads/packages: the app's functions in main.js, packages under node_modules
    // (npm, scoped, pnpm). A category's self time is the self time of the functions whose
    // files say so, row by row of `top`; and by hand: the hot functions fall where written.
    let fixture = "fixtures/cpuprofile/packages.cpuprofile";
    let report = ours(&["top", fixture, "--all"]);
    let mut by_file = std::collections::BTreeMap::<&str, i64>::new();
    for row in report["rows"].as_array().unwrap() {
        let file = row["file"].as_str().unwrap_or("");
        let category = match row["kind"].as_str().unwrap() {
            "gc" => "gc",
            "program" => "program",
            "native" => "native",
            _ if file.starts_with("node:") => "node",
            _ if file.contains("/node_modules/") => "dependencies",
            _ => "app",
        };
        *by_file.entry(category).or_default() += row["self"].as_i64().unwrap();
    }
    let rows = ours(&["top", fixture, "--by", "category"]);
    for row in rows["rows"].as_array().unwrap() {
        let name = row["name"].as_str().unwrap();
        assert_eq!(row["self"].as_i64().unwrap(), by_file.get(name).copied().unwrap_or(0), "{name}: {rows}");
    }
    let function = |name: &str| {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    assert!(function("fastHash")["file"].as_str().unwrap().contains("/node_modules/.pnpm/"));
    assert!(function("renderRow")["file"].as_str().unwrap().ends_with("/packages/main.js"));
    let cats = &report["summary"]["categories"];
    assert!(cats["dependencies"]["pct"].as_f64().unwrap() > 15.0, "{cats}");
    assert!(cats["app"]["pct"].as_f64().unwrap() > 30.0, "{cats}");
}

#[test]
fn hand_made_profiles_match_the_oracle() {
    // The oracle's own hand-made cases (a gap, an idle sample, a 2/3 majority chain, a
    // (program) root child skipped for the entry, ties, an empty bucket), written out by it.
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("node")
        .args([ORACLE, "--write-handmade"])
        .arg(dir.path())
        .current_dir(root())
        .output()
        .expect("node");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut failures = Vec::new();
    for name in ["A", "B"] {
        let file = dir.path().join(format!("handmade-{name}.cpuprofile"));
        let file = file.to_str().unwrap();
        let theirs = oracle_script(ORACLE, &[file, "blocks", "--min-ns", "0"]);
        let blocks = ours(&["blocks", file, "--min", "0", "--all"]);
        compare(
            &format!("{name} blocks"),
            &blocks,
            &theirs,
            &["interval_ns", "idle_samples", "blocks", "summary"],
            &mut failures,
        );
        let theirs = oracle_script(ORACLE, &[file, "timeline", "--bucket-ns", "10000000"]);
        let line = ours(&["timeline", file, "--bucket", "10ms"]);
        compare(&format!("{name} timeline"), &line, &theirs, &["bucket_ns", "buckets", "phases"], &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn json_file(path: &str) -> Value {
    serde_json::from_slice(&std::fs::read(root().join(path)).expect(path)).expect(path)
}

/// Where the tick log's clock (µs since V8's logger started) is on `process.hrtime`'s: the
/// side file's stamps around the one `code-creation` of `clockAnchor` bound it (to ~50 µs).
fn ticklog_offset_us(log: &str, side: &Value) -> i64 {
    let text = std::fs::read_to_string(root().join(log)).unwrap();
    let line =
        text.lines().find(|l| l.starts_with("code-creation,") && l.contains(",clockAnchor ")).expect("clockAnchor");
    let t: i64 = line.split(',').nth(3).unwrap().parse().unwrap();
    let (before, after) = (
        side["clock_anchor"]["before"]["hrtime_us"].as_i64().unwrap(),
        side["clock_anchor"]["after"]["hrtime_us"].as_i64().unwrap(),
    );
    (before + after) / 2 - t
}

/// The first tick's time in a tick log, µs on its clock: where cpuprof's recording starts.
fn first_tick_us(log: &str) -> i64 {
    let text = std::fs::read_to_string(root().join(log)).unwrap();
    text.lines().find(|l| l.starts_with("tick,")).and_then(|l| l.split(',').nth(2)).unwrap().parse().unwrap()
}

/// The planned blocks of fixtures/workloads/blocks.js, ns after the recording's start (from the
/// side file's stamps), with their entry and the function that ran them.
fn planned_blocks(side: &Value, recording_start_hrtime_us: i64) -> Vec<(String, &'static str, i64, i64)> {
    side["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let entry = if b["entry"] == "fs" { "wrapper" } else { "processTimers" };
            let start = (b["start"]["hrtime_us"].as_i64().unwrap() - recording_start_hrtime_us) * 1000;
            let length = (b["end"]["hrtime_us"].as_i64().unwrap() - b["start"]["hrtime_us"].as_i64().unwrap()) * 1000;
            (b["name"].as_str().unwrap().to_owned(), entry, start, length)
        })
        .collect()
}

/// Each planned block is found (at its time and length within a few sampling intervals), in its
/// entry and function; the longest agrees with node's event-loop-delay histogram within 5%.
fn check_planned_blocks(file: &str, side: &Value, start_hrtime_us: i64) -> Vec<i64> {
    let report = ours(&["blocks", file, "--min", "10ms", "--all"]);
    let interval = report["interval_ns"].as_i64().unwrap();
    let blocks = report["blocks"].as_array().unwrap();
    let mut lengths = Vec::new();
    for (name, entry, start, length) in planned_blocks(side, start_hrtime_us) {
        // The sampler can take its first sample of a block late and its last early, and a tick
        // is timed when it is written: three intervals each way.
        let slack = 3 * interval;
        let found = blocks
            .iter()
            .find(|b| (b["start_ns"].as_i64().unwrap() - start).abs() <= slack)
            .unwrap_or_else(|| panic!("{file}: no block starts near {start} ns ({name}): {report}"));
        let found_length = found["duration_ns"].as_i64().unwrap();
        assert!((found_length - length).abs() <= slack, "{file} {name}: {found_length} ns, planned {length} ns");
        assert_eq!(found["entry"]["name"], entry, "{file} {name}: {found}");
        // The JavaScript that blocked, in a tick log too (where builtins and C++ are frames).
        assert_eq!(found["common"]["name"], name.as_str(), "{file} {name}: {found}");
        lengths.push(found_length);
    }
    let max = report["summary"]["max_ns"].as_f64().unwrap();
    let eld = side["eld"]["max"].as_f64().unwrap();
    assert!((max - eld).abs() <= 0.05 * eld, "{file}: longest block {max} ns, event-loop delay max {eld} ns");
    lengths
}

#[test]
fn the_planned_blocks_are_found_in_both_recordings() {
    let side = json_file("fixtures/cpuprofile/blocks.side.json");
    let profile = json_file("fixtures/cpuprofile/blocks.cpuprofile");
    let from_cpuprofile =
        check_planned_blocks("fixtures/cpuprofile/blocks.cpuprofile", &side, profile["startTime"].as_i64().unwrap());
    let log = "fixtures/ticklog/blocks.log";
    let tick_side = json_file("fixtures/ticklog/blocks.side.json");
    let start = first_tick_us(log) + ticklog_offset_us(log, &tick_side);
    let from_ticklog = check_planned_blocks(log, &tick_side, start);
    // Two runs of the same plan (one run cannot give both: with --cpu-prof on, node 20's --prof
    // sampler takes 18 ticks in 2 s): each block as long in one as in the other, to a few intervals.
    for (a, b) in from_cpuprofile.iter().zip(&from_ticklog) {
        assert!((a - b).abs() <= 3_500_000, "{from_cpuprofile:?} vs {from_ticklog:?}");
    }
    // In the tick log, V8's builtins are frames: handleReport blocked, in JSON.parse (issue 51:
    // it said "blocked in Builtin_JsonParse", the .cpuprofile "handleReport").
    let report = ours(&["blocks", log]);
    let longest = report["blocks"].as_array().unwrap().iter().max_by_key(|b| b["duration_ns"].as_i64()).unwrap();
    assert_eq!(longest["common"]["name"], "handleReport", "{longest}");
    assert!(longest["native"]["name"].as_str().unwrap().contains("JsonParse"), "{longest}");
    let cpuprofile = ours(&["blocks", "fixtures/cpuprofile/blocks.cpuprofile"]);
    let longest = cpuprofile["blocks"].as_array().unwrap().iter().max_by_key(|b| b["duration_ns"].as_i64()).unwrap();
    assert_eq!((&longest["common"]["name"], &longest["native"]), (&Value::from("handleReport"), &Value::Null));
}

/// Without `--all`, the `-n` longest blocks are listed (ties: the earliest), in time order, and
/// the summary still counts every block.
#[test]
fn the_longest_blocks_are_listed_and_all_are_summed() {
    for fixture in recorded() {
        let all = ours(&["blocks", fixture.as_str(), "--min", "0", "--all"]);
        let every = all["blocks"].as_array().unwrap();
        for n in [1usize, 3, 20] {
            let some = ours(&["blocks", fixture.as_str(), "--min", "0", "-n", &n.to_string()]);
            assert_eq!(some["summary"], all["summary"], "{fixture} -n {n}");
            let mut longest: Vec<&Value> = every.iter().collect();
            longest.sort_by_key(|b| (std::cmp::Reverse(b["duration_ns"].as_i64()), b["start_ns"].as_i64()));
            longest.truncate(n);
            longest.sort_by_key(|b| b["start_ns"].as_i64());
            let listed: Vec<&Value> = some["blocks"].as_array().unwrap().iter().collect();
            assert_eq!(listed, longest, "{fixture} -n {n}");
        }
    }
}

#[test]
fn a_batch_job_is_one_block_and_says_so() {
    let out = cpuprof().args(["blocks", "fixtures/cpuprofile/money.cpuprofile", "--format", "json"]).output().unwrap();
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["idle_samples"], 0);
    assert!(report["note"].as_str().unwrap().contains("never waited"), "{report}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no idle samples"));
}

#[test]
fn phases_switch_where_the_workload_does() {
    let bucket = |report: &Value| report["bucket_ns"].as_i64().unwrap();
    let side = json_file("fixtures/cpuprofile/phases.side.json");
    let profile = json_file("fixtures/cpuprofile/phases.cpuprofile");
    let switch =
        (side["marks"]["switch"]["hrtime_us"].as_i64().unwrap() - profile["startTime"].as_i64().unwrap()) * 1000;
    let report = ours(&["timeline", "fixtures/cpuprofile/phases.cpuprofile"]);
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{phases:?}");
    assert_eq!(phases[0]["label"], "startup");
    assert_eq!(phases[1]["label"], "steady");
    assert!(
        (phases[1]["start_ns"].as_i64().unwrap() - switch).abs() <= bucket(&report),
        "{phases:?}, switch at {switch}"
    );

    let log = "fixtures/ticklog/phases.log";
    let tick_side = json_file("fixtures/ticklog/phases.side.json");
    let start = first_tick_us(log) + ticklog_offset_us(log, &tick_side);
    let switch = (tick_side["marks"]["switch"]["hrtime_us"].as_i64().unwrap() - start) * 1000;
    let report = ours(&["timeline", log]);
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{phases:?}");
    assert!(
        (phases[1]["start_ns"].as_i64().unwrap() - switch).abs() <= bucket(&report),
        "{phases:?}, switch at {switch}"
    );

    // --phase takes them as windows: what ran in each, and together the whole profile.
    let top =
        |args: &[&str]| ours(&[&["top", "fixtures/cpuprofile/phases.cpuprofile", "--include-idle"], args].concat());
    let (startup, steady, whole) = (top(&["--phase", "startup"]), top(&["--phase", "2"]), top(&[]));
    assert_eq!(
        startup["total"].as_i64().unwrap() + steady["total"].as_i64().unwrap(),
        whole["total"].as_i64().unwrap()
    );
    let hottest = |r: &Value| r["rows"][0]["name"].as_str().unwrap().to_owned();
    assert_eq!(hottest(&steady), "serveRequest");
    assert_eq!(hottest(&startup), "sievePrimes");
}

#[test]
fn a_server_idle_between_its_timers_is_one_steady_phase_at_any_bucket() {
    // fixtures/workloads/periodic.js: ~200 ms of start-up, then a timer every 60 ms working ~12 ms
    // and idle in between. Its idle gaps are not phases, whatever the buckets (issue 51: the
    // first phase was "startup · entry idle" and five phantoms followed).
    let side = json_file("fixtures/cpuprofile/periodic.side.json");
    let profile = json_file("fixtures/cpuprofile/periodic.cpuprofile");
    let start = profile["startTime"].as_i64().unwrap();
    // loadConfig returned: the module's top level ends right after (its last garbage collection).
    let switch = (side["marks"]["startup_end"]["hrtime_us"].as_i64().unwrap() - start) * 1000;
    for bucket in [None, Some("10ms"), Some("20ms"), Some("30ms"), Some("50ms"), Some("100ms")] {
        let mut args = vec!["timeline", "fixtures/cpuprofile/periodic.cpuprofile"];
        args.extend(bucket.map(|b| ["--bucket", b]).iter().flatten());
        let report = ours(&args);
        let phases = report["phases"].as_array().unwrap();
        let what = format!("--bucket {bucket:?}: {phases:?}, switch at {switch}");
        assert_eq!(phases.len(), 2, "{what}");
        assert_eq!(
            (phases[0]["label"].as_str(), phases[0]["entry"].as_str()),
            (Some("startup"), Some("(anonymous)")),
            "{what}"
        );
        assert_eq!(
            (phases[1]["label"].as_str(), phases[1]["entry"].as_str()),
            (Some("steady"), Some("processTimers")),
            "{what}"
        );
        let bucket_ns = report["bucket_ns"].as_i64().unwrap();
        assert!((phases[1]["start_ns"].as_i64().unwrap() - switch).abs() <= bucket_ns, "{what}");
    }
}

#[test]
fn a_tick_logs_startup_is_its_module_loading_at_any_bucket() {
    // A tick log's first buckets run node's C++ bootstrap: the startup is still the module's
    // loading, not "startup: a C++ function, phase 2: the module" at small buckets (a review).
    let log = "fixtures/ticklog/phases.log";
    let tick_side = json_file("fixtures/ticklog/phases.side.json");
    let start = first_tick_us(log) + ticklog_offset_us(log, &tick_side);
    let switch = (tick_side["marks"]["switch"]["hrtime_us"].as_i64().unwrap() - start) * 1000;
    for bucket in ["1ms", "5ms", "20ms", "60ms"] {
        let report = ours(&["timeline", log, "--bucket", bucket]);
        let phases = report["phases"].as_array().unwrap();
        let what = format!("--bucket {bucket}: {phases:?}");
        assert_eq!(phases.len(), 2, "{what}");
        assert_eq!(
            (phases[0]["label"].as_str(), phases[0]["entry"].as_str()),
            (Some("startup"), Some("(anonymous)")),
            "{what}"
        );
        assert!(
            (phases[1]["start_ns"].as_i64().unwrap() - switch).abs() <= 2 * report["bucket_ns"].as_i64().unwrap(),
            "{what}"
        );
    }
}

#[test]
fn no_bucket_holds_more_time_than_its_width() {
    // A sample lasts until the next: a 48 ms idle wait spreads over the buckets it spans (issue
    // 51: buckets showed 104-966% busy, and idle after the recording's end).
    for bucket in ["1ms", "10ms", "100ms"] {
        let report = ours(&["timeline", "fixtures/cpuprofile/periodic.cpuprofile", "--bucket", bucket]);
        let buckets = report["buckets"].as_array().unwrap();
        let width = report["bucket_ns"].as_i64().unwrap();
        for (k, b) in buckets.iter().enumerate().skip(1).take(buckets.len().saturating_sub(2)) {
            let time = b["busy"].as_i64().unwrap() + b["idle"].as_i64().unwrap();
            assert!(time <= width, "--bucket {bucket}: bucket {k} holds {time} ns of {width}");
        }
        let total: i64 = buckets.iter().map(|b| b["busy"].as_i64().unwrap() + b["idle"].as_i64().unwrap()).sum();
        let whole = ours(&["top", "fixtures/cpuprofile/periodic.cpuprofile", "--include-idle"]);
        assert_eq!(total, whole["total"].as_i64().unwrap(), "--bucket {bucket}");
    }
}

#[test]
fn blocks_cut_by_the_window_are_marked_and_counted_apart() {
    // The 300 ms blocks of fixtures/workloads/blocks.js start at ~593 ms and ~1.47 s; a window
    // from inside the first to inside the second cuts both (issue 51: a 203 ms block was shown
    // as a complete 164 ms one).
    let file = "fixtures/cpuprofile/blocks.cpuprofile";
    let whole = ours(&["blocks", file, "--all"]);
    let long: Vec<&Value> = whole["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["duration_ns"].as_i64().unwrap() > 250_000_000)
        .collect();
    assert_eq!(long.len(), 2, "{whole}");
    assert!(
        whole["blocks"].as_array().unwrap().iter().all(|b| b["cut"].is_null()),
        "the recording starts and ends idle"
    );
    assert_eq!(whole["summary"]["cut"], 0);
    let at = |b: &Value, k: &str| b[k].as_i64().unwrap();
    let from = at(long[0], "start_ns") + 100_000_000;
    let to = at(long[1], "start_ns") + 100_000_000;
    let (from_arg, to_arg) = (format!("{}us", from / 1000), format!("{}us", to / 1000));
    let cut = ours(&["blocks", file, "--all", "--from", &from_arg, "--to", &to_arg]);
    let blocks = cut["blocks"].as_array().unwrap();
    let (first, last) = (&blocks[0], &blocks[blocks.len() - 1]);
    assert_eq!(first["cut"], "start", "{cut}");
    assert_eq!(last["cut"], "end", "{cut}");
    assert!(blocks[1..blocks.len() - 1].iter().all(|b| b["cut"].is_null()), "{cut}");
    assert_eq!(cut["summary"]["cut"], 2);
    // The cut block ends where the whole one does (window times count from the window's start).
    let interval = at(&cut, "interval_ns");
    let whole_end = at(long[0], "start_ns") + at(long[0], "duration_ns");
    assert!(
        (from / 1000 * 1000 + at(first, "start_ns") + at(first, "duration_ns") - whole_end).abs() <= 2 * interval,
        "{cut}"
    );
    assert!(at(first, "duration_ns") < at(long[0], "duration_ns"));
    // The table marks them, and says how many there are.
    let table = ours_text(&["blocks", file, "--all", "--from", &from_arg, "--to", &to_arg]);
    assert!(table.contains("2 cut by the window's edge"), "{table}");
    assert_eq!(table.matches("≥ ").count(), 2 + 1, "{table}");
}

#[test]
fn between_takes_from_the_first_of_one_function_to_the_last_of_another() {
    let fixture = "fixtures/cpuprofile/phases.cpuprofile";
    let report = ours(&["top", fixture, "--between", "buildTables", "serveRequest", "--include-idle"]);
    let window = &report["window"];
    // buildTables runs first (after module loading), serveRequest last.
    assert!(window["from_ns"].as_i64().unwrap() > 0);
    let timeline = ours(&["timeline", fixture]);
    assert!(window["to_ns"].as_i64().unwrap() <= timeline["duration_ns"].as_i64().unwrap());
    assert!(report["rows"].as_array().unwrap().iter().any(|r| r["name"] == "sievePrimes"));
    // Reversed, there is no such stretch.
    let out = cpuprof().args(["top", fixture, "--between", "serveRequest", "buildTables"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cpuprof().args(["top", "fixtures/pprof/handmade.pb.gz", "--phase", "1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no timeline"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_window_against_itself_changes_nothing() {
    for args in [
        &["--base-window", "1s..2s", "--new-window", "1s..2s"][..],
        &["--base-phase", "steady", "--new-phase", "steady"],
    ] {
        let report = ours(&[&["diff", "fixtures/cpuprofile/phases.cpuprofile", "--all"], args].concat());
        let significant: Vec<&Value> =
            report["rows"].as_array().unwrap().iter().filter(|r| r["significant"] == true).collect();
        assert!(significant.is_empty(), "{args:?}: {significant:?}");
    }
    // The blocks of a window are measured as recorded (not on the per-second scale of the times).
    let report =
        ours(&["diff", "fixtures/cpuprofile/blocks.cpuprofile", "--base-window", "0s..1s", "--new-window", "1s.."]);
    let first = ours(&["blocks", "fixtures/cpuprofile/blocks.cpuprofile", "--to", "1s"]);
    let second = ours(&["blocks", "fixtures/cpuprofile/blocks.cpuprofile", "--from", "1s"]);
    assert_eq!(report["blocks"]["base"][0]["max_ns"], first["summary"]["max_ns"], "{}", report["blocks"]);
    assert_eq!(report["blocks"]["new"][0]["max_ns"], second["summary"]["max_ns"], "{}", report["blocks"]);
    assert_eq!(report["blocks"]["significant"], false, "{}", report["blocks"]);
    // Startup against the steady phase: the two phases' functions, per second of each.
    let report = ours(&["diff", "fixtures/cpuprofile/phases.cpuprofile", "--base-phase", "1", "--new-phase", "2"]);
    let row = |name: &str| report["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap().clone();
    assert_eq!(row("serveRequest")["verdict"], "new");
    assert_eq!(row("sievePrimes")["verdict"], "cooler");
}

/// A mistyped time or number is a usage error, not another value: Rust's float parser takes
/// `.1` (so `0s...1s` was the window from 0 to 100 ms), `1e3`, `5.`; `--phase +1` was phase 1.
#[test]
fn mistyped_times_are_usage_errors() {
    let blocks = "fixtures/cpuprofile/blocks.cpuprofile";
    let phases = "fixtures/cpuprofile/phases.cpuprofile";
    let cases: [(&[&str], &str, &str); 11] = [
        (&["diff", blocks, "--new-window", "1s.."], "--base-window", "0s...1s"),
        (&["top", blocks], "--from", ".5s"),
        (&["top", blocks], "--to", "1e0s"),
        (&["top", blocks], "--to", "50.%"),
        (&["top", phases], "--phase", "+1"),
        (&["timeline", blocks], "--bucket", ".1s"),
        (&["blocks", blocks], "--min", "1e2ms"),
        (&["diff", blocks, blocks], "--fail-on", "self:+1e1%"),
        (&["diff", blocks, blocks], "--min-delta", ".5ms"),
        (&["top", blocks], "--max-input-size", ".5G"),
        (&["flamegraph", blocks, "-o", "-"], "--min-width", "+0.5"),
    ];
    for (command, flag, typo) in cases {
        let out = cpuprof().args(command).args([flag, typo]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?} {flag} {typo}: {stderr}");
        assert!(out.stdout.is_empty(), "{command:?} {flag} {typo}");
        // Written as meant, each is read.
        let meant = match typo {
            "0s...1s" => "0s..1s",
            ".5s" => "0.5s",
            "1e0s" => "1s",
            "50.%" => "50%",
            "+1" => "1",
            ".1s" => "0.1s",
            "1e2ms" => "100ms",
            "self:+1e1%" => "self:+10%",
            ".5ms" => "0.5ms",
            ".5G" => "0.5G",
            _ => "0.5",
        };
        let out = cpuprof().args(command).args([flag, meant]).output().unwrap();
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(3),
            "{command:?} {flag} {meant}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A window is cut once, whatever transforms the profile goes through after it is read
/// (`--hide`, `--collapse-recursion`, source maps): the same samples as without them.
#[test]
fn a_window_survives_the_frame_transforms() {
    let f = "fixtures/cpuprofile/phases.cpuprofile";
    let windows: [&[&str]; 3] =
        [&["--from", "1.5s", "--to", "2s"], &["--from", "25%", "--to", "75%"], &["--from", "1s"]];
    for window in windows {
        let plain = ours(&[&["top", f], window].concat());
        assert!(plain["samples"].as_i64().unwrap() > 0, "{window:?}");
        for transform in [&["--hide", "zzz"][..], &["--source-maps"], &["--collapse-recursion"]] {
            let args: Vec<&str> = [&["top", f], window, transform].concat();
            if transform == ["--collapse-recursion"] {
                // top has no --collapse-recursion: the folded stacks carry it.
                let out = |extra: &[&str]| {
                    let o = cpuprof().args([&["collapse", f], window, extra].concat()).output().unwrap();
                    String::from_utf8(o.stdout)
                        .unwrap()
                        .lines()
                        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<i64>().unwrap())
                        .sum::<i64>()
                };
                assert_eq!(out(&["--collapse-recursion"]), out(&[]), "{window:?} --collapse-recursion");
                continue;
            }
            let transformed = ours(&args);
            assert_eq!(
                (&transformed["samples"], &transformed["total"], &transformed["window"]),
                (&plain["samples"], &plain["total"], &plain["window"]),
                "{window:?} {transform:?}"
            );
        }
    }
}
