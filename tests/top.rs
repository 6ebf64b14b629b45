//! `cpuprof top`: every fixture's JSON against the independent JavaScript oracle
//! (`fixtures/oracle/top.js`, which implements `fixtures/oracle/SPEC.md` separately), asked of
//! the library; and end to end, the table, formats, stdin and output-file behaviour.

use crate::common;

use common::{cpuprof, files, oracle, report_differences, root};
use serde_json::Value;

const OPTION_SETS: &[&[&str]] = &[
    &[],
    &["--by", "file"],
    &["--by", "package"],
    &["--by", "line"],
    &["--weight", "samples"],
    &["--include-idle"],
    &["--sort", "total"],
];

/// cpuprof's `top --all --format json` with `options`, asked of the library
/// ([`common::library_json`]): the oracle checks the analysis, not the process.
fn ours(fixture: &str, options: &[&str]) -> Value {
    common::library_json(&[&["top", fixture, "--all"][..], options].concat())
        .unwrap_or_else(|(_, e)| panic!("cpuprof failed on {fixture} {options:?}: {e}"))
}

#[test]
fn every_fixture_matches_the_oracle() {
    let mut fixtures = files("fixtures/cpuprofile", &[".cpuprofile", ".cpuprofile.gz"]);
    assert!(fixtures.len() >= 15, "expected the recorded fixtures, found {fixtures:?}");
    fixtures.extend(files("fixtures/edge", &[".cpuprofile"]));
    fixtures.extend(files("fixtures/cpuprofile/legacy", &[".cpuprofile"]));
    let mut failures = Vec::new();
    for fixture in &fixtures {
        for options in OPTION_SETS {
            let theirs = oracle(&[&[fixture.as_str()], *options].concat());
            let mut ours = ours(fixture, options);
            // A header that ends before it starts (edge/no-deltas-end-before-start): DevTools, and
            // so the oracle, subtracts; cpuprof gives the length the samples are spread over.
            if let Some(negative) = theirs["duration_ns"].as_i64().filter(|d| *d < 0) {
                assert_eq!(ours["duration_ns"], -negative, "{fixture}");
                ours["duration_ns"] = theirs["duration_ns"].clone();
            }
            assert!(!theirs["rows"].as_array().expect("rows").is_empty() || theirs["samples"] == 0);
            let diffs = report_differences(&ours, &theirs, &["format"]);
            if !diffs.is_empty() {
                failures.push(format!("{fixture} {options:?}:\n  {}", diffs.join("\n  ")));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches with the oracle:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn table_has_header_and_columns() {
    let out = cpuprof().args(["top", "fixtures/cpuprofile/money.cpuprofile", "-n", "3"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("fixtures/cpuprofile/money.cpuprofile · cpuprofile · "), "{first}");
    assert!(first.contains("samples") && first.contains("mean interval"), "{first}");
    // The second line: the category split (tests/timeline.rs checks its numbers against the oracle).
    let second = text.lines().nth(1).unwrap();
    assert!(second.starts_with("categories: app ") && second.contains(" gc "), "{second}");
    assert!(text.contains("self%") && text.contains("total%") && text.contains("location"));
    // The hottest function of this workload, checked against the oracle rather than pasted.
    let hottest = oracle(&["fixtures/cpuprofile/money.cpuprofile"])["rows"][0]["name"].as_str().unwrap().to_owned();
    assert_eq!(hottest, "roundMoney");
    assert!(text.lines().nth(5).unwrap().contains("roundMoney"), "{text}");
    assert!(text.contains("(3 of "), "{text}");
}

#[test]
fn gzip_and_stdin_read_the_same_profile() {
    let plain = ours("fixtures/cpuprofile/money.cpuprofile", &[]);
    let gz = ours("fixtures/cpuprofile/money.cpuprofile.gz", &[]);
    assert_eq!(plain["rows"], gz["rows"]);
    let bytes = std::fs::read(root().join("fixtures/cpuprofile/money.cpuprofile.gz")).unwrap();
    let out = cpuprof().args(["top", "-", "--all", "--format", "json"]).write_stdin(bytes).output().unwrap();
    assert!(out.status.success());
    let stdin: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stdin["source"], "<stdin>");
    assert_eq!(stdin["rows"], plain["rows"]);
}

#[test]
fn csv_and_markdown_carry_every_row_escaped() {
    let fixture = "fixtures/cpuprofile/hostile-names.cpuprofile";
    let rows = oracle(&[fixture])["rows"].as_array().unwrap().len();
    let csv = cpuprof().args(["top", fixture, "--all", "--format", "csv"]).output().unwrap();
    assert!(csv.status.success());
    let mut reader = csv::Reader::from_reader(&csv.stdout[..]);
    let names: Vec<String> = reader.records().map(|r| r.unwrap()[0].to_owned()).collect();
    assert_eq!(names.len(), rows);
    assert!(names.iter().any(|n| n == "new\nline"), "a newline survives CSV quoting: {names:?}");
    assert!(names.iter().any(|n| n == "semi;colon"));

    let md = cpuprof().args(["top", fixture, "--all", "--format", "markdown"]).output().unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), rows + 2, "header, rule, one line per row");
    for line in &table {
        // Unescaped pipes would add columns: every row has exactly 7 unescaped `|`.
        let cells = line.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 7, "{line}");
        assert!(!line.contains('\u{202e}'), "{line}");
        // Markup only inside a code span, where Markdown shows it as text.
        assert!(!line.contains("<script>") || line.contains("| `<script>alert(1)</script>` |"), "{line}");
    }
}

#[test]
fn output_file_is_written_and_inputs_are_protected() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("top.json");
    cpuprof()
        .args(["top", "fixtures/cpuprofile/money.cpuprofile", "--format", "json", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let json: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 20);

    let input = dir.path().join("copy.cpuprofile");
    std::fs::copy(root().join("fixtures/cpuprofile/money.cpuprofile"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let run = cpuprof().arg("top").arg(&input).arg("-o").arg(&input).output().unwrap();
    assert_eq!(run.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&run.stderr).contains("refusing to write the output over the input"));
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn usage_errors_exit_2() {
    for args in [&["top"][..], &["top", "x", "-n", "0"], &["top", "x", "--by", "nope"], &["top", "x", "--focus", "("]] {
        let out = cpuprof().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn focus_and_ignore_filter_whole_stacks() {
    let fixture = "fixtures/cpuprofile/money.cpuprofile";
    let all = ours(fixture, &[]);
    let focused = ours(fixture, &["--focus", "^handleRequest$"]);
    let rows = focused["rows"].as_array().unwrap();
    let handle = rows.iter().find(|r| r["name"] == "handleRequest").unwrap();
    // Every kept sample has handleRequest on its stack: its total is the sum of all self times.
    let self_sum: i64 = rows.iter().map(|r| r["self"].as_i64().unwrap()).sum();
    assert_eq!(handle["total"].as_i64().unwrap(), self_sum);
    let all_handle = all["rows"].as_array().unwrap().iter().find(|r| r["name"] == "handleRequest").unwrap().clone();
    assert_eq!(handle["total"], all_handle["total"]);
    assert_eq!(focused["total"], all["total"], "percentages stay relative to the whole profile");

    // --focus X and --ignore X split the counted samples in two.
    let ignored = ours(fixture, &["--ignore", "^handleRequest$"]);
    let ignored_rows = ignored["rows"].as_array().unwrap();
    assert!(ignored_rows.iter().all(|r| r["name"] != "handleRequest"));
    let ignored_sum: i64 = ignored_rows.iter().map(|r| r["self"].as_i64().unwrap()).sum();
    assert_eq!(self_sum + ignored_sum, all["total"].as_i64().unwrap());
}

#[test]
fn the_oracle_passes_its_own_hand_checked_cases() {
    let out =
        std::process::Command::new("node").arg("fixtures/oracle/selftest.js").current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn writing_to_a_device_leaves_it_a_device() {
    use std::os::unix::fs::FileTypeExt;
    cpuprof().args(["top", "fixtures/cpuprofile/money.cpuprofile", "-o", "/dev/null"]).assert().success();
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(meta.file_type().is_char_device(), "/dev/null must stay a device, not be replaced by a file");
}

#[test]
fn outputs_replace_through_symlinks_and_keep_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.csv");
    std::fs::write(&real, "old\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("real.csv", dir.path().join("link.csv")).unwrap();
    cpuprof()
        .args(["top", "fixtures/cpuprofile/money.cpuprofile", "--format", "csv", "-o"])
        .arg(dir.path().join("link.csv"))
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(dir.path().join("link.csv")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().starts_with("name,file,line"));
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `cpuprof top … | head -1`: the reader goes away; cpuprof stops with exit 0 and no message.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cpuprof"))
        .args(["top", "fixtures/cpuprofile/money.cpuprofile", "--all"])
        .current_dir(common::root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `startTime` and `endTime` of a recorded `.cpuprofile` (read here, not by cpuprof), µs.
fn recording(fixture: &str) -> (i64, i64) {
    let text = std::fs::read_to_string(root().join(fixture)).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    (v["startTime"].as_i64().unwrap(), v["endTime"].as_i64().unwrap())
}

#[test]
fn windows_match_the_oracle_and_split_the_profile_exactly() {
    // `--to T` and `--from T` split a profile with nothing lost or counted twice; each window's
    // rows equal the oracle's over the samples whose timestamps are in it.
    let fixtures = files("fixtures/cpuprofile", &[".cpuprofile"]);
    let mut failures = Vec::new();
    for fixture in &fixtures {
        let (start, end) = recording(fixture);
        let length_ns = (end - start) * 1000;
        let third = length_ns / 3;
        let ms = |ns: i64| format!("{}ms", ns as f64 / 1e6);
        // (cpuprof's window, the oracle's [from, to) in ns after startTime)
        let windows: Vec<(Vec<String>, Option<i64>, Option<i64>)> = vec![
            (vec!["--to".into(), ms(third)], None, Some(third)),
            (vec!["--from".into(), ms(third)], Some(third), None),
            (vec!["--from".into(), ms(third), "--to".into(), ms(2 * third)], Some(third), Some(2 * third)),
            (vec!["--from".into(), "-200ms".into()], Some(length_ns - 200_000_000), None),
            (vec!["--to".into(), "50%".into()], None, Some(length_ns / 2)),
        ];
        let mut totals = Vec::new();
        for (ours_args, from, to) in &windows {
            let mut oracle_args = vec![fixture.clone(), "--include-idle".to_owned()];
            if let Some(from) = from {
                oracle_args.extend(["--from-ns".to_owned(), from.to_string()]);
            }
            if let Some(to) = to {
                oracle_args.extend(["--to-ns".to_owned(), to.to_string()]);
            }
            let oracle_refs: Vec<&str> = oracle_args.iter().map(String::as_str).collect();
            let theirs = oracle(&oracle_refs);
            let mut args: Vec<&str> = ours_args.iter().map(String::as_str).collect();
            args.push("--include-idle");
            let ours = ours(fixture, &args);
            totals.push((ours["total"].as_i64().unwrap(), ours["samples"].as_i64().unwrap()));
            // The header describes the window (its length, not the recording's): the numbers and
            // rows are compared.
            let numbers = |v: &Value| serde_json::json!({"unit": v["unit"], "total": v["total"], "samples": v["samples"], "rows": v["rows"]});
            let diffs = report_differences(&numbers(&ours), &numbers(&theirs), &[]);
            if !diffs.is_empty() {
                failures.push(format!(
                    "{fixture} {ours_args:?}: total {} vs {}, samples {} vs {}\n  {}",
                    ours["total"],
                    theirs["total"],
                    ours["samples"],
                    theirs["samples"],
                    diffs.join("\n  ")
                ));
            }
        }
        let whole = ours(fixture, &["--include-idle"]);
        let sum = (totals[0].0 + totals[1].0, totals[0].1 + totals[1].1);
        if sum != (whole["total"].as_i64().unwrap(), whole["samples"].as_i64().unwrap()) {
            failures
                .push(format!("{fixture}: --to/--from the same time sum to {sum:?}, the whole is {}", whole["total"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Several inputs are merged: each function's self and total are the sums of the oracle's for
/// each input, the totals add up, and each input's part is listed.
#[test]
fn several_inputs_are_merged_with_each_ones_total() {
    let inputs = ["fixtures/cpuprofile/auth-sync.cpuprofile", "fixtures/cpuprofile/auth-async.cpuprofile"];
    let out = cpuprof().args(["top", "--all", "--format", "json"]).args(inputs).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let key = |r: &Value| format!("{}|{}|{}|{}", r["name"], r["file"], r["line"], r["column"]);
    let mut expected: std::collections::BTreeMap<String, (i64, i64)> = std::collections::BTreeMap::new();
    let mut total = 0;
    for (input, part) in inputs.iter().zip(ours["inputs"].as_array().expect("inputs")) {
        let theirs = oracle(&[input]);
        total += theirs["total"].as_i64().unwrap();
        assert_eq!(part["source"], *input);
        assert_eq!(part["total"], theirs["total"], "{input}");
        assert_eq!(part["samples"], theirs["samples"], "{input}");
        for r in theirs["rows"].as_array().unwrap() {
            let e = expected.entry(key(r)).or_default();
            e.0 += r["self"].as_i64().unwrap();
            e.1 += r["total"].as_i64().unwrap();
        }
    }
    assert_eq!(ours["total"].as_i64(), Some(total));
    let rows: std::collections::BTreeMap<String, (i64, i64)> = ours["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (key(r), (r["self"].as_i64().unwrap(), r["total"].as_i64().unwrap())))
        .collect();
    assert_eq!(rows, expected);
    // The table says each input's part.
    let table = cpuprof().arg("top").args(inputs).output().expect("run");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.starts_with("2 profiles, merged"), "{text}");
    assert!(inputs.iter().all(|i| text.contains(&format!("input {i}: "))), "{text}");
}

/// One spelling of a script in every output, whichever input named it (issue 21): V8 names
/// blocks.js by `file://` url in the `.cpuprofile`, node by path in the tick log of the same
/// workload; reports, data formats and folded stacks name it by path, `convert` to
/// `.cpuprofile` by url again (as V8 does), and `diff` of the two pairs its functions.
#[test]
fn scripts_on_disk_have_one_spelling_in_every_output() {
    let (profile, log) = ("fixtures/cpuprofile/blocks.cpuprofile", "fixtures/ticklog/blocks.log");
    let text = std::fs::read_to_string(root().join(profile)).unwrap();
    let url = text.split('"').find(|s| s.starts_with("file://") && s.ends_with("/blocks.js")).unwrap().to_owned();
    let path = url.strip_prefix("file://").unwrap();
    assert!(std::fs::read_to_string(root().join(log)).unwrap().contains(&format!("handleReport {path}:")));
    let run = |args: &[&str]| {
        let out = cpuprof().args(args).current_dir(root()).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for input in [profile, log] {
        for args in [
            &["top", input, "--format", "json"][..],
            &["top", input, "--format", "csv"],
            &["top", input, "--format", "markdown"],
            &["top", input, "--wide"],
            &["tree", input, "--format", "json"],
            &["callers", "handleReport", input, "--format", "json"],
            &["blocks", input, "--format", "json"],
            &["timeline", input, "--format", "json"],
            &["collapse", input],
            &["flamegraph", input, "-o", "-"],
        ] {
            let out = run(args);
            assert!(out.contains(path), "{args:?} names {path}");
            assert!(!out.contains("file://"), "{args:?} names a file:// url");
        }
        // A pattern may name the script either way.
        let (by_url, by_path) = (format!("handleReport@{url}:151"), format!("handleReport@{path}:151"));
        let callers = |pattern: &str| run(&["callers", pattern, input, "--format", "json"]);
        assert_eq!(callers(&by_url), callers(&by_path), "{input}");
        let converted = run(&["convert", input, "--output-format", "cpuprofile", "-o", "-"]);
        assert!(converted.contains(&format!("\"url\":\"{url}\"")), "convert of {input} names {url}");
    }
    // Folded stacks write a path with a space in it as its url, and read it back as the path.
    let dir = tempfile::tempdir().unwrap();
    let spaced = dir.path().join("spaced.cpuprofile");
    std::fs::write(&spaced, text.replace(&url, "file:///srv/my%20app%20/blocks.js")).unwrap();
    let folded = dir.path().join("spaced.folded");
    let spaced = spaced.to_str().unwrap();
    run(&["collapse", spaced, "-o", folded.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&folded).unwrap().contains("handleReport file:///srv/my%20app%20/blocks.js:151"));
    let files = |input: &str| -> Vec<(String, String)> {
        let top: Value =
            serde_json::from_str(&run(&["top", input, "--format", "json", "--weight", "samples"])).unwrap();
        top["rows"].as_array().unwrap().iter().map(|r| (r["name"].to_string(), r["file"].to_string())).collect()
    };
    assert_eq!(files(folded.to_str().unwrap()), files(spaced));
    assert!(files(spaced).contains(&("\"handleReport\"".into(), "\"/srv/my app /blocks.js\"".into())));
    let diff: Value = serde_json::from_str(&run(&["diff", profile, log, "--format", "json", "--all"])).unwrap();
    let rows: Vec<&Value> = diff["rows"].as_array().unwrap().iter().filter(|r| r["file"] == path).collect();
    // Sampled on both sides, so paired (a spelling apart would make each new and gone).
    for name in ["handleReport", "onConfigLoaded", "tickSmall"] {
        let row = rows.iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("{name} in {rows:?}"));
        assert!(row["verdict"] != "new" && row["verdict"] != "gone", "{row}");
    }
    let named = |verdict: &str| rows.iter().filter(|r| r["verdict"] == verdict).map(|r| &r["name"]).collect::<Vec<_>>();
    assert!(named("new").iter().all(|n| !named("gone").contains(n)), "{rows:?}");
}

#[test]
fn every_view_counts_the_same_samples_and_every_percentage_is_of_time() {
    // periodic: 72% of its samples are idle. The header, the JSON, the flame graph's title and a
    // tree all count the samples shown, and say how many idle ones are not (issue 51: the header
    // said 2,165 where the JSON and the flame graph said 577).
    let fixture = "fixtures/cpuprofile/periodic.cpuprofile";
    let json = ours(fixture, &[]);
    let shown = json["samples"].as_i64().unwrap();
    let all = json["summary"]["samples"].as_i64().unwrap();
    let idle = json["summary"]["idle"]["samples"].as_i64().unwrap();
    assert!(idle > 0 && shown + idle == all, "{json}");
    let with_commas = |n: i64| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let said = format!("{} samples ({} idle not shown)", with_commas(shown), with_commas(idle));
    let text = |args: &[&str]| {
        let out = cpuprof().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(text(&["top", fixture]).lines().next().unwrap().contains(&said), "top");
    assert!(text(&["tree", fixture]).lines().next().unwrap().contains(&said), "tree");
    assert!(text(&["flamegraph", fixture, "-o", "-"]).contains(&said), "flamegraph title");
    let included = ours(fixture, &["--include-idle"]);
    assert_eq!(included["samples"].as_i64().unwrap(), all);
    assert!(text(&["top", fixture, "--include-idle"])
        .lines()
        .next()
        .unwrap()
        .contains(&format!("{} samples ·", with_commas(all))));
    // One basis for every percentage: time. A .cpuprofile's GC summary and GC category are the
    // same samples, so the same share (40.5% by samples beside 43.9% by time before).
    for fixture in ["fixtures/cpuprofile/periodic.cpuprofile", "fixtures/cpuprofile/money.cpuprofile"] {
        let s = &ours(fixture, &[])["summary"];
        assert_eq!(s["gc"]["samples"], s["categories"]["gc"]["samples"], "{fixture}");
        let (a, b) = (s["gc"]["pct"].as_f64().unwrap(), s["categories"]["gc"]["pct"].as_f64().unwrap());
        assert!((a - b).abs() < 1e-9, "{fixture}: summary.gc.pct {a} vs categories.gc.pct {b}");
        let time = s["gc"]["total"].as_f64().unwrap() / s["total"].as_f64().unwrap() * 100.0;
        assert!((a - time).abs() < 1e-9, "{fixture}");
    }
}
