//! What scripts and agents read: every warning stderr gets is in the JSON `warnings` too; every
//! format a command's `--help` offers, it renders; a diff of a profile with itself flags nothing.

use crate::common;

use common::cpuprof;
use serde_json::Value;

const MONEY: &str = "fixtures/cpuprofile/money.cpuprofile";
const BLOCKS: &str = "fixtures/cpuprofile/blocks.cpuprofile";
const TICKS: &str = "fixtures/ticklog/blocks.log";
const PPROF: &str = "fixtures/pprof/ddpprof-wall.pb.gz";

/// The warnings a run wrote to stderr, as its lines say them (after `cpuprof: warning: `).
fn stderr_warnings(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("cpuprof: warning: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_warning_on_stderr_is_in_the_json_warnings() {
    // Each command in JSON on inputs that make it warn: options for another format (said by
    // the reader, on the parser's thread for several inputs), nothing left after the filters,
    // one run per side, different formats compared, blocks of profiles without times, and what
    // timeline and blocks say after reading.
    let cases: &[&[&str]] = &[
        &["top", TICKS, "--profile", "0x1"],
        &["top", MONEY, BLOCKS, "--sample-type", "cpu"],
        &["top", MONEY, "--focus", "^no such function$"],
        &["tree", MONEY, "--sample-type", "cpu"],
        &["tree", MONEY, "--focus", "^no such function$", "--split-tiers"],
        &["callers", "roundMoney", MONEY, "--sample-type", "cpu"],
        &["callees", "roundMoney", MONEY, "--profile", "1"],
        &["explain", "roundMoney", MONEY, "--symbols", "fixtures"],
        &["diff", MONEY, MONEY],
        &["diff", MONEY, TICKS, "--sample-type", "cpu"],
        &["diff", PPROF, PPROF, "--blocks"],
        &["timeline", BLOCKS, "--sample-type", "cpu"],
        &["blocks", BLOCKS, "--split-tiers", "--min", "20ms"],
        // Said after reading: no idle samples, nothing in the recording.
        &["blocks", MONEY],
        &["timeline", "fixtures/edge/no-samples.cpuprofile"],
    ];
    for args in cases {
        let out = cpuprof().args(*args).args(["--format", "json"]).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let said = stderr_warnings(&out.stderr);
        assert!(!said.is_empty(), "{args:?} warns on stderr");
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        let warnings: Vec<&str> = json["warnings"]
            .as_array()
            .unwrap_or_else(|| panic!("{args:?}: no `warnings` in {json}"))
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        for line in &said {
            assert!(warnings.contains(&line.as_str()), "{args:?}: {line:?} is on stderr, not in {warnings:?}");
        }
        assert_eq!(warnings.len(), said.len(), "{args:?}: the JSON says what stderr says, no more");
    }
}

#[test]
fn a_profile_diffed_with_itself_flags_nothing_and_says_one_run_is_one_run() {
    for input in [MONEY, TICKS, "fixtures/diff/base.1.cpuprofile"] {
        for extra in [&[][..], &["--normalize", "share"], &["--sort", "total"]] {
            let out = cpuprof()
                .args(["diff", input, input, "--fail-on", "self:+0%", "--fail-on", "total:+0%", "--format", "json"])
                .args(extra)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{input} {extra:?}: {}", String::from_utf8_lossy(&out.stderr));
            let json: Value = serde_json::from_slice(&out.stdout).unwrap();
            let rows = json["rows"].as_array().unwrap();
            assert!(!rows.is_empty());
            for row in rows {
                assert_eq!(row["significant"], false, "{input} {extra:?}: {row}");
                assert_eq!(row["verdict"], "unchanged", "{input} {extra:?}: {row}");
            }
            if extra.is_empty() {
                let warnings = json["warnings"].to_string();
                assert!(warnings.contains("one run per side"), "{input}: {warnings}");
            }
        }
    }
}

#[test]
fn a_diff_side_without_samples_is_bad_input() {
    for args in [
        &["diff", "fixtures/edge/no-samples.cpuprofile", MONEY][..],
        &["diff", MONEY, "fixtures/edge/no-samples.cpuprofile", "--fail-on", "self:+5%"],
        &["diff", MONEY, MONEY, "--focus", "^no such function$"],
    ] {
        let out = cpuprof().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no samples to compare"), "{args:?}");
    }
}

/// The values `--format` takes, as `cpuprof COMMAND -h` lists them.
pub(crate) fn help_formats(command: &str) -> Vec<String> {
    let out = cpuprof().args([command, "-h"]).output().unwrap();
    // Lines wrap anywhere in the list: read it as one line.
    let help = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    let at = help.find("--format <FORMAT>").unwrap_or_else(|| panic!("{command} -h lists --format"));
    let rest = &help[at..];
    let from = rest.find("[possible values: ").expect("--format lists its values") + "[possible values: ".len();
    let to = rest[from..].find(']').unwrap() + from;
    rest[from..to].split(", ").map(str::to_owned).collect()
}

#[test]
fn every_format_a_command_offers_it_renders() {
    let cases: &[(&str, &[&str])] = &[
        ("top", &[MONEY]),
        ("tree", &[MONEY]),
        ("callers", &["roundMoney", MONEY]),
        ("callees", &["roundMoney", MONEY]),
        ("explain", &["roundMoney", MONEY]),
        ("diff", &["fixtures/diff/base.1.cpuprofile", "fixtures/diff/new.1.cpuprofile"]),
        ("blocks", &[BLOCKS]),
        ("timeline", &[BLOCKS]),
    ];
    for (command, args) in cases {
        let formats = help_formats(command);
        assert!(formats.len() >= 4, "{command}: {formats:?}");
        for format in &formats {
            let out = cpuprof().arg(command).args(*args).args(["--format", format]).output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{command} --format {format} is offered: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!out.stdout.is_empty(), "{command} --format {format}");
        }
    }
    // What each renders, and no more: GitHub annotations are diff's, the brief is top's.
    assert_eq!(help_formats("tree"), ["table", "json", "csv", "markdown"]);
    assert_eq!(help_formats("top"), ["table", "json", "csv", "markdown", "brief"]);
    assert_eq!(help_formats("diff"), ["table", "json", "csv", "markdown", "github"]);
    assert_eq!(help_formats("record"), help_formats("top"), "record prints top");
}

#[test]
fn an_ambiguous_pattern_lists_each_candidate_on_its_line_with_a_pattern_that_names_it() {
    // (pattern, profile, how many functions it matches: top's rows by that name and place).
    let cases = [
        ("handle", "fixtures/cpuprofile/same-name.cpuprofile", "handle", None),
        // Two arrows on one line: only the column tells them apart.
        ("(anonymous)@workers.js:53", "fixtures/cpuprofile/workers.main.cpuprofile", "(anonymous)", Some(53)),
    ];
    for (pattern, profile, name, line) in cases {
        let top: Value = serde_json::from_slice(
            &cpuprof().args(["top", profile, "--all", "--format", "json"]).output().unwrap().stdout,
        )
        .unwrap();
        let mut expected: Vec<&str> = top["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["name"] == name && line.is_none_or(|l| r["line"] == l) && r["total_samples"] != 0)
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        expected.sort_unstable();
        assert!(expected.len() >= 2, "{pattern}: {expected:?}");

        let out = cpuprof().args(["callers", pattern, profile]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{pattern}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(
            lines[0].starts_with(&format!("cpuprof: error: {pattern}: {} functions match", expected.len())),
            "{stderr}"
        );
        if line.is_some() {
            assert!(lines[0].contains("add the column"), "{stderr}");
        }
        let choices: Vec<&str> = lines[1..].iter().filter_map(|l| l.strip_prefix("cpuprof:   #")).collect();
        assert_eq!(choices.len(), expected.len(), "one candidate a line: {stderr}");
        assert_eq!(lines.len(), expected.len() + 1, "{stderr}");
        let mut named = Vec::new();
        for choice in choices {
            let (_, rest) = choice.split_once(' ').unwrap();
            let (paste, _) = rest.split_once("  (").unwrap();
            assert!(
                paste.starts_with(&format!("{name}@")) && paste.matches(':').count() >= 2,
                "name@file:line:col: {paste}"
            );
            let out = cpuprof().args(["callers", paste, profile, "--format", "json"]).output().unwrap();
            assert!(out.status.success(), "{paste}: {}", String::from_utf8_lossy(&out.stderr));
            let json: Value = serde_json::from_slice(&out.stdout).unwrap();
            named.push(json["function"]["id"].as_str().unwrap().to_owned());
        }
        named.sort_unstable();
        assert_eq!(named, expected, "{pattern}: each pasted pattern names its candidate, and only it");
    }
}

#[test]
fn inputs_read_at_once_are_warned_about_in_their_order() {
    // Several inputs are read in parallel by top, merge and diff; what each reading says comes
    // in the inputs' order, on stderr and in the JSON, however the threads finish (it came in
    // the order they finished: runs of one command line differed).
    let inputs = [
        "fixtures/folded/negative-count.folded",
        "fixtures/folded/missing-count.folded",
        "fixtures/folded/garbage-count.folded",
        "fixtures/folded/fractional.folded",
        "fixtures/folded/bad-lines.folded",
        "fixtures/folded/austin-header.folded",
    ];
    let out_file = tempfile::tempdir().unwrap();
    let merged = out_file.path().join("merged.cpuprofile");
    let merged = merged.to_str().unwrap();
    let mut top = vec!["top", "--format", "json"];
    top.extend(inputs);
    let mut merge = vec!["merge", "-o", merged];
    merge.extend(inputs);
    let mut diff = vec!["diff", "--format", "json", "--base"];
    diff.extend(&inputs[..3]);
    diff.push("--new");
    diff.extend(&inputs[3..]);
    // An input that cannot be read stops top and merge there: the inputs before it are warned
    // about, in order, and none after it (whether one had been read depended on timing).
    let mut broken: Vec<&str> = inputs.to_vec();
    broken.insert(2, "fixtures/no-such-profile.folded");
    for command in [["top", "--format"], ["merge", "-o"]] {
        let mut args: Vec<&str> = command.to_vec();
        args.push(if command[0] == "top" { "json" } else { merged });
        args.extend(&broken);
        let out = cpuprof().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let said = stderr_warnings(&out.stderr);
        let named: Vec<usize> =
            said.iter().filter_map(|w| inputs.iter().position(|input| w.starts_with(input))).collect();
        assert_eq!(named, [0, 1], "{args:?}: {said:#?}");
    }
    for args in [&top, &merge, &diff] {
        for _ in 0..4 {
            let out = cpuprof().args(args.iter()).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            let said = stderr_warnings(&out.stderr);
            let named: Vec<usize> =
                said.iter().filter_map(|w| inputs.iter().position(|input| w.starts_with(input))).collect();
            assert_eq!(named, (0..inputs.len()).collect::<Vec<_>>(), "{args:?}: {said:#?}");
            if args[0] != "merge" {
                let report: Value = serde_json::from_slice(&out.stdout).unwrap();
                let json: Vec<String> =
                    report["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_owned()).collect();
                assert_eq!(json, said, "{args:?}");
            }
        }
    }
}
