//! pprof in and out, checked with an independent decoder: the npm package `pprof-format`
//! (`fixtures/oracle/pprof/pprof-top.js`, installed by `npm ci` there) reads what cpuprof writes,
//! and the files other tools wrote (`fixtures/pprof/`) are read as that decoder reads them.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use common::{cpuprof, files, root};
use serde_json::Value;

/// The oracle's report of a pprof file.
fn decoded(file: &std::path::Path, args: &[&str]) -> Value {
    common::npm_ci("fixtures/oracle/pprof");
    let out = Command::new("node")
        .arg("fixtures/oracle/pprof/pprof-top.js")
        .arg(file)
        .args(args)
        .current_dir(root())
        .output()
        .expect("node runs the pprof oracle");
    assert!(
        out.status.success(),
        "pprof oracle failed on {}: {} (run `npm ci` in fixtures/oracle/pprof)",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the oracle prints JSON")
}

/// `cpuprof top --all --include-idle --format json` of `input`.
fn top(input: &str, args: &[&str]) -> Value {
    let out = cpuprof()
        .args(["top", "--all", "--include-idle", "--format", "json", input])
        .args(args)
        .output()
        .expect("cpuprof runs");
    assert!(out.status.success(), "top {input}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// pprof files written by other tools (and one by hand), with a sample type each reads by.
const OTHER_TOOLS: [(&str, &str); 6] = [
    ("fixtures/pprof/ddpprof-wall.pb.gz", "wall"),
    ("fixtures/pprof/ddpprof-wall-lines.pb.gz", "wall"),
    ("fixtures/pprof/ddpprof-wall-cpu-labels.pb.gz", "cpu"),
    ("fixtures/pprof/ddpprof-wall-cpu-labels.pb.gz", "wall"),
    ("fixtures/pprof/google-pprof-wall.pb.gz", "wall"),
    ("fixtures/pprof/handmade.pb.gz", "cpu"),
];

type Totals = BTreeMap<(String, String, i64), (i64, i64)>;

/// (name, file, line) → (self, total) of `top`'s rows. pprof functions have no column, so
/// rows that differ only by column are summed (self) and their total is unknown (-1).
fn top_rows(report: &Value) -> Totals {
    let mut rows = Totals::new();
    for row in report["rows"].as_array().expect("rows") {
        let key = (
            row["name"].as_str().unwrap_or_default().to_owned(),
            row["file"].as_str().unwrap_or_default().to_owned(),
            row["line"].as_i64().unwrap_or(0),
        );
        let value = (row["self"].as_i64().expect("self"), row["total"].as_i64().expect("total"));
        rows.entry(key).and_modify(|v| *v = (v.0 + value.0, -1)).or_insert(value);
    }
    rows
}

/// Whether `ours` (with unknown totals) agrees with `theirs`.
fn agrees(ours: (i64, i64), theirs: (i64, i64)) -> bool {
    ours.0 == theirs.0 && (ours.1 == -1 || ours.1 == theirs.1)
}

/// The same from the oracle, for value column `column`, without `(root)` (never a `top` row)
/// and functions that carry no weight.
fn oracle_rows(report: &Value, column: usize) -> Totals {
    let mut rows = Totals::new();
    for f in report["functions"].as_array().expect("functions") {
        let name = f["name"].as_str().unwrap_or_default().to_owned();
        let file = f["filename"].as_str().unwrap_or_default().to_owned();
        let (own, total) = (f["self"][column].as_i64().expect("self"), f["total"][column].as_i64().expect("total"));
        if (name == "(root)" && file.is_empty()) || (own == 0 && total == 0) {
            continue;
        }
        let key = (name, file, f["start_line"].as_i64().unwrap_or(0));
        assert!(rows.insert(key.clone(), (own, total)).is_none(), "oracle: two functions {key:?}");
    }
    rows
}

#[test]
fn what_cpuprof_writes_decodes_to_the_same_totals() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = files("fixtures/cpuprofile", &[".cpuprofile"]);
    inputs.extend(["fixtures/ticklog/money.log".to_owned()]);
    for input in &inputs {
        if !root().join(input).exists() {
            continue;
        }
        let pb = dir.path().join("out.pb.gz");
        let out = cpuprof().args(["convert", input, "-o"]).arg(&pb).output().unwrap();
        assert!(out.status.success(), "convert {input}: {}", String::from_utf8_lossy(&out.stderr));
        let ours = top_rows(&top(input, &[]));
        // Same-named functions of one file at one line differ by column only: pprof has no
        // column, so the decoder sums them; compare the rest.
        let report = decoded(&pb, &[]);
        let types: Vec<&str> =
            report["sample_types"].as_array().unwrap().iter().map(|t| t["type"].as_str().unwrap()).collect();
        assert_eq!(types[0], "samples", "{input}");
        assert!(types[1] == "wall" || types[1] == "cpu", "{input}: {types:?}");
        assert_eq!(report["sample_index"], 1, "{input}: the time is the default sample type");
        let theirs = oracle_rows(&report, 1);
        assert_eq!(ours.len(), theirs.len(), "{input}: function count\nours {ours:?}\ntheirs {theirs:?}");
        for (key, value) in &ours {
            assert!(
                theirs.get(key).is_some_and(|t| agrees(*value, *t)),
                "{input}: {key:?} {value:?} {:?}",
                theirs.get(key)
            );
        }
        let total: i64 = ours.values().map(|v| v.0).sum();
        assert_eq!(report["totals"][1].as_i64(), Some(total), "{input}: total time");
    }
}

#[test]
fn pprof_round_trips_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (dir.path().join("a.pb.gz"), dir.path().join("b.pb"), dir.path().join("c.pb.gz"));
    let input = "fixtures/cpuprofile/money.cpuprofile";
    for (from, to) in [(input, &a), (a.to_str().unwrap(), &b), (input, &c)] {
        let args: Vec<&str> = if to == &b { vec!["--uncompressed"] } else { vec![] };
        let out = cpuprof().args(["convert", from, "-o"]).arg(to).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // A pprof wall profile stays wall.
    let wall = dir.path().join("wall.pb.gz");
    let out = cpuprof().args(["convert", "fixtures/pprof/ddpprof-wall.pb.gz", "-o"]).arg(&wall).output().unwrap();
    assert!(out.status.success());
    assert_eq!(decoded(&wall, &[])["sample_types"][1]["type"], "wall");
    // The same input gives the same bytes.
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
    // pprof → model → pprof keeps what pprof holds.
    let (first, second) = (decoded(&a, &[]), decoded(&b, &[]));
    for field in ["sample_types", "period_type", "period", "duration_nanos", "totals", "functions"] {
        assert_eq!(first[field], second[field], "{field}");
    }
    // And `top` of the pprof equals `top` of the original.
    let original = top_rows(&top(input, &[]));
    let via_pprof = top_rows(&top(a.to_str().unwrap(), &[]));
    assert_eq!(original, via_pprof);
    assert_eq!(top(a.to_str().unwrap(), &[])["format"], "pprof");
}

#[test]
fn pprof_files_from_other_tools_read_as_the_decoder_reads_them() {
    for (file, sample_type) in OTHER_TOOLS {
        let report = decoded(&root().join(file), &["--sample-type", sample_type, "--prune"]);
        let column = report["sample_types"].as_array().unwrap().iter().position(|t| t["type"] == sample_type).unwrap();
        let unit = report["sample_types"][column]["unit"].as_str().unwrap();
        let scale = match unit {
            "nanoseconds" => 1,
            "microseconds" => 1000,
            other => panic!("{file}: unit {other}"),
        };
        let theirs: Totals =
            oracle_rows(&report, column).into_iter().map(|(k, (s, t))| (k, (s * scale, t * scale))).collect();
        let ours = top_rows(&top(file, &["--sample-type", sample_type]));
        assert_eq!(ours.len(), theirs.len(), "{file} {sample_type}\nours {ours:?}\ntheirs {theirs:?}");
        for (key, value) in &theirs {
            assert!(
                ours.get(key).is_some_and(|o| agrees(*o, *value)),
                "{file} {sample_type}: {key:?} {value:?} {:?}",
                ours.get(key)
            );
        }
    }
}

#[test]
fn merged_totals_are_the_sums_of_the_parts() {
    let dir = tempfile::tempdir().unwrap();
    let parts = [
        "fixtures/cpuprofile/workers.main.cpuprofile",
        "fixtures/cpuprofile/workers.t1.cpuprofile",
        "fixtures/cpuprofile/workers.t2.cpuprofile",
        "fixtures/cpuprofile/workers.t3.cpuprofile",
    ];
    let merged = dir.path().join("workers.pb.gz");
    let out = cpuprof().arg("merge").args(parts).arg("-o").arg(&merged).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut expected_self: BTreeMap<(String, String, i64), i64> = BTreeMap::new();
    let (mut expected_total, mut expected_samples) = (0, 0);
    for part in parts {
        let report = top(part, &[]);
        expected_samples += report["samples"].as_i64().unwrap();
        let rows = top_rows(&report);
        for (key, (own, _)) in rows {
            *expected_self.entry(key).or_default() += own;
            expected_total += own;
        }
    }
    let report = decoded(&merged, &[]);
    assert_eq!(report["totals"][1].as_i64(), Some(expected_total));
    let merged_self: BTreeMap<_, _> = oracle_rows(&report, 1).into_iter().map(|(k, (s, _))| (k, s)).collect();
    let expected_self: BTreeMap<_, _> = expected_self.into_iter().filter(|(_, s)| *s != 0).collect();
    let merged_self: BTreeMap<_, _> = merged_self.into_iter().filter(|(_, s)| *s != 0).collect();
    assert_eq!(merged_self, expected_self);
    // Folded output of the same merge adds up too (in samples: folded weights are counts).
    let folded = dir.path().join("workers.folded");
    let out = cpuprof().arg("merge").args(parts).arg("-o").arg(&folded).output().unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&folded).unwrap();
    let sum: i64 = text.lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<i64>().unwrap()).sum();
    assert_eq!(sum, expected_samples);
}

#[test]
fn convert_needs_a_known_target_and_reports_bad_pprof() {
    let out =
        cpuprof().args(["convert", "fixtures/cpuprofile/money.cpuprofile", "-o", "/tmp/x.unknown"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot tell the format"));
    // Protobuf-looking garbage: a clear error, exit 1.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pb");
    std::fs::write(&bad, [0x0a, 0xff, 0xff, 0x01, 0x02]).unwrap();
    let out = cpuprof().args(["top"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("invalid pprof"), "{stderr}");
    // An unknown sample type lists the ones there are.
    let out = cpuprof().args(["top", "fixtures/pprof/handmade.pb.gz", "--sample-type", "alloc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("samples/count, cpu/nanoseconds"));
    // Options of another format are not ignored quietly.
    let input = "fixtures/cpuprofile/money.cpuprofile";
    let cases = [
        (&["--sample-type", "cpu"][..], "pprof"),
        (&["--profile", "0x1"], "trace"),
        (&["--split-tiers"], "ticklog, preprocess or perf-script"),
        (&["--symbols", "fixtures"], "ticklog"),
    ];
    for (args, format) in cases {
        let option = args[0];
        let out = cpuprof().args(["top", input]).args(args).output().unwrap();
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = format!("{input}: {option} is for {format} input and was ignored: this is cpuprofile");
        assert!(stderr.contains(&expected), "{stderr}");
    }
}

/// Per-function (self, total) as DevTools reads a `.cpuprofile` (the `top.js` oracle).
fn devtools_rows(cpuprofile: &std::path::Path, args: &[&str]) -> Totals {
    let mut all = vec![cpuprofile.to_str().unwrap(), "--include-idle"];
    all.extend(args);
    // The decoder leaves out functions without weight; so does this.
    top_rows(&common::oracle(&all)).into_iter().filter(|(_, v)| *v != (0, 0)).collect()
}

#[test]
fn pprof_files_become_cpuprofiles_that_devtools_reads_to_the_same_totals() {
    // Aggregated stacks, so the writer orders the samples itself and must give the last one
    // DevTools' mean interval: checked by two independent readers, the pprof decoder on the
    // input and the DevTools oracle on the output.
    let dir = tempfile::tempdir().unwrap();
    for (file, sample_type) in OTHER_TOOLS {
        let written = dir.path().join("out.cpuprofile");
        let out = cpuprof().args(["convert", file, "--sample-type", sample_type, "-o"]).arg(&written).output().unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let notes = String::from_utf8_lossy(&out.stderr);
        let report = decoded(&root().join(file), &["--sample-type", sample_type, "--prune"]);
        let types = report["sample_types"].as_array().unwrap();
        let column = types.iter().position(|t| t["type"] == sample_type).unwrap();
        let scale = if types[column]["unit"] == "microseconds" { 1000 } else { 1 };
        let expected = |column: usize, scale: i64| -> Totals {
            // pprof functions have no column: rows that differ by column only are one here.
            oracle_rows(&report, column).into_iter().map(|(k, (s, t))| (k, (s * scale, t * scale))).collect()
        };
        let time = devtools_rows(&written, &[]);
        assert_eq!(time, expected(column, scale), "{file} {sample_type}: time");
        // Counts too, unless the file has time without samples (each written as one sample,
        // and said so).
        let counts = types.iter().position(|t| t["unit"] == "count").unwrap();
        let samples = devtools_rows(&written, &["--weight", "samples"]);
        if notes.contains("time but no samples") {
            assert_ne!(samples, expected(counts, 1), "{file}: the note is true");
        } else {
            assert_eq!(samples, expected(counts, 1), "{file} {sample_type}: samples");
        }
        assert!(!notes.contains("mean interval"), "{file}: {notes}");
    }
}

/// Inputs are merged as they are read, with the columns of the first; an input without the
/// first's time column makes the merge one of counts only, whichever comes first (the oracle
/// reads the sample types and totals). The counts add up either way.
#[test]
fn a_merge_has_a_time_column_only_when_every_input_has_one() {
    let dir = tempfile::tempdir().unwrap();
    let timed = "fixtures/cpuprofile/workers.t1.cpuprofile";
    let counted = "fixtures/folded/simple.folded";
    let samples = |input: &str| top(input, &[])["samples"].as_i64().unwrap();
    let expected = samples(timed) + samples(counted);
    for (name, inputs) in [("timed-first", [timed, counted]), ("counted-first", [counted, timed])] {
        let merged = dir.path().join(format!("{name}.pb.gz"));
        let out = cpuprof().arg("merge").args(inputs).arg("-o").arg(&merged).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let report = decoded(&merged, &[]);
        let types: Vec<&str> =
            report["sample_types"].as_array().unwrap().iter().map(|t| t["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["samples"], "{name}");
        assert_eq!(report["totals"][0].as_i64(), Some(expected), "{name}");
    }
    // Every input timed: the time column is there, and holds both inputs' time.
    let merged = dir.path().join("both-timed.pb.gz");
    let parts = [timed, "fixtures/cpuprofile/workers.t2.cpuprofile"];
    let out = cpuprof().arg("merge").args(parts).arg("-o").arg(&merged).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = decoded(&merged, &[]);
    assert_eq!(report["sample_types"].as_array().unwrap().len(), 2);
    let time = |input: &str| top(input, &[])["total"].as_i64().unwrap();
    assert_eq!(report["totals"][1].as_i64(), Some(time(parts[0]) + time(parts[1])));
}

/// An input unlike the first (no time column) makes `merge` read every input again, keeping
/// only what waits for its turn in memory: inputs that cannot be read twice (stdin, a pipe) are
/// kept from the first read, and each input's warnings are said once.
#[test]
fn a_merge_read_twice_takes_stdin_once_and_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    let timed = "fixtures/cpuprofile/workers.t1.cpuprofile";
    let counted = "fixtures/folded/simple.folded";
    let samples = |input: &str| top(input, &[])["samples"].as_i64().unwrap();
    let merged = dir.path().join("stdin.pb.gz");
    // `--sample-type` is for pprof input: each input gets a warning that it was ignored.
    let out = cpuprof()
        .args(["merge", "-", counted, "--sample-type", "cpu", "-o"])
        .arg(&merged)
        .write_stdin(std::fs::read(root().join(timed)).unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("--sample-type is for pprof input and was ignored").count(), 2, "{stderr}");
    let report = decoded(&merged, &[]);
    let types: Vec<&str> =
        report["sample_types"].as_array().unwrap().iter().map(|t| t["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["samples"]);
    assert_eq!(report["totals"][0].as_i64(), Some(samples(timed) + samples(counted)));

    // A pipe (bash's process substitution) is read once too, and gives the file's bytes.
    let from_files = dir.path().join("files.pb.gz");
    cpuprof().args(["merge", timed, counted, "-o"]).arg(&from_files).assert().success();
    let piped = dir.path().join("piped.pb.gz");
    let bin = assert_cmd::cargo::cargo_bin("cpuprof");
    let script = format!("exec \"$0\" merge <(cat {timed}) {counted} -o \"$1\"");
    let out = Command::new("bash").arg("-c").arg(script).arg(&bin).arg(&piped).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&piped).unwrap(), std::fs::read(&from_files).unwrap());
}

/// Of several inputs that cannot be read, the error is the first one's in the order given,
/// however the threads happen to finish.
#[test]
fn a_merge_reports_the_first_bad_input() {
    let good = "fixtures/cpuprofile/workers.t1.cpuprofile";
    let (first_bad, second_bad) = ("fixtures/bad/truncated.cpuprofile", "fixtures/bad/garbage.pb");
    for _ in 0..3 {
        let out = cpuprof()
            .args(["merge", good, first_bad, good, second_bad, "--output-format", "pprof", "-o", "/dev/null"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("truncated.cpuprofile") && !stderr.contains("garbage.pb"), "{stderr}");
    }
}

#[test]
fn top_of_several_reports_the_first_bad_input() {
    let good = "fixtures/cpuprofile/workers.t1.cpuprofile";
    let (first_bad, second_bad) = ("fixtures/bad/truncated.cpuprofile", "fixtures/bad/garbage.pb");
    for _ in 0..3 {
        let out = cpuprof().args(["top", good, first_bad, good, second_bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("truncated.cpuprofile") && !stderr.contains("garbage.pb"), "{stderr}");
    }
}

/// Per leaf function name, the number of Sample records whose leaf it is, and the records in all,
/// counted by `pprof-format` (the oracle's decoder) one record at a time.
fn records_by_leaf(file: &str) -> (BTreeMap<String, i64>, i64) {
    common::npm_ci("fixtures/oracle/pprof");
    let script = r"
        const fs = require('fs'), zlib = require('zlib');
        const { Profile } = require('./fixtures/oracle/pprof/node_modules/pprof-format');
        let bytes = fs.readFileSync(process.argv[1]);
        if (bytes[0] === 0x1f) bytes = zlib.gunzipSync(bytes);
        const p = Profile.decode(bytes);
        const name = (id) => {
          const loc = p.location.find((l) => Number(l.id) === Number(id));
          const fn = p.function.find((f) => Number(f.id) === Number(loc.line[0].functionId));
          return p.stringTable.strings[Number(fn.name)];
        };
        const leaves = {};
        for (const s of p.sample) leaves[name(s.locationId[0])] = (leaves[name(s.locationId[0])] || 0) + 1;
        console.log(JSON.stringify({ leaves, records: p.sample.length }));
    ";
    let out = Command::new("node").args(["-e", script, file]).current_dir(root()).output().expect("node runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let leaves = report["leaves"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())).collect();
    (leaves, report["records"].as_i64().unwrap())
}

/// Pyroscope's JFR conversions have `wall/nanoseconds` alone with period 1, records that each
/// hold many samples, and a timestamp in `duration_nanos`: the samples are the records (not
/// the wall time in ns, which reads as 1,540,000,000 samples), and the duration is the end
/// minus the start where duration_nanos is the end, else unknown, said in both channels.
#[test]
fn time_only_pprof_with_period_1_counts_its_records_and_no_epoch_duration() {
    for (file, duration) in
        [("fixtures/pprof/jfr-wall-base.pb.gz", Some(10_000_000_000i64)), ("fixtures/pprof/jfr-wall-new.pb.gz", None)]
    {
        let (leaves, records) = records_by_leaf(file);
        let oracle = decoded(&root().join(file), &[]);
        let out = cpuprof().args(["top", "--all", "--format", "json", file]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["samples"].as_i64(), Some(records), "{file}: samples are the records");
        assert_eq!(report["total"], oracle["totals"][0], "{file}: wall ns as the decoder sums them");
        let self_samples: BTreeMap<String, i64> = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["self_samples"].as_i64() != Some(0))
            .map(|r| (r["name"].as_str().unwrap().to_owned(), r["self_samples"].as_i64().unwrap()))
            .collect();
        assert_eq!(self_samples, leaves, "{file}: records per leaf");
        assert_eq!(report["duration_ns"].as_i64(), duration, "{file}: {}", report["duration_ns"]);
        assert!(report["interval_ns"].is_null(), "{file}: a period of 1 ns is no sampling interval");
        let warnings: Vec<&str> = report["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
        let stderr = String::from_utf8_lossy(&out.stderr);
        for wanted in ["sample counts are records, not samples taken", "duration_nanos ("] {
            assert!(warnings.iter().any(|w| w.contains(wanted)), "{file}: {wanted:?} in {warnings:?}");
            assert!(stderr.contains(wanted), "{file}: {wanted:?} in {stderr}");
        }
    }
}

/// Two such files where one function takes 40 ms more: 40,000,000 more "samples" in counts
/// made of nanoseconds, which a binomial test calls certain; in records it cannot be tested,
/// and diff says so rather than calling it hotter.
#[test]
fn diff_claims_no_significance_on_record_counts() {
    let (base, new) = ("fixtures/pprof/jfr-wall-base.pb.gz", "fixtures/pprof/jfr-wall-new.pb.gz");
    let out = cpuprof().args(["diff", "--format", "json", base, new]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["tested"], false, "{report}");
    let rows = report["rows"].as_array().unwrap();
    let hash_map = rows.iter().find(|r| r["name"] == "java.util.HashMap.get").expect("HashMap.get");
    assert_eq!(hash_map["self_delta"].as_f64(), Some(40_000_000.0), "{hash_map}");
    assert!(rows.iter().all(|r| r["significant"] == false && r["verdict"] == "unchanged"), "{report}");
    assert!(
        report["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("counts sample records")),
        "{report}"
    );
    let out = cpuprof().args(["diff", base, new, "--fail-on", "self:+1pp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fail-on: a profile counts sample records"));
}
