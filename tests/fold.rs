//! `cpuprof collapse` against the independent oracle's folding (`fixtures/oracle/top.js --fold`,
//! SPEC.md §8) on every recorded and edge `.cpuprofile`, byte for byte.

use crate::common;

use std::process::Command;

use common::{cpuprof, files, root};

const OPTION_SETS: &[&[&str]] = &[
    &[],
    &["--by", "file"],
    &["--by", "package"],
    &["--weight", "time"],
    &["--weight", "samples"],
    &["--include-idle"],
    &["--by", "package", "--weight", "samples", "--include-idle"],
];

/// The oracle's folded text for every (file, options) pair, from one node process.
fn oracle_folds(jobs: &[(String, &[&str])]) -> Vec<String> {
    let script = r"
        const { foldFile, formatFold } = require('./fixtures/oracle/top.js');
        const jobs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
        const out = jobs.map(([file, args]) => {
          // collapse writes sample counts unless asked for time.
          const options = { by: 'function', weight: 'samples', includeIdle: false };
          for (let i = 0; i < args.length; i++) {
            if (args[i] === '--by') options.by = args[++i];
            else if (args[i] === '--weight') options.weight = args[++i];
            else if (args[i] === '--include-idle') options.includeIdle = true;
          }
          return formatFold(foldFile(file, options));
        });
        process.stdout.write(JSON.stringify(out));
    ";
    let input = serde_json::to_string(&jobs.iter().map(|(f, a)| (f.clone(), a.to_vec())).collect::<Vec<_>>()).unwrap();
    let mut child = Command::new("node")
        .args(["-e", script])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node must be installed to run the oracle");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "oracle failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

#[test]
fn collapse_equals_the_oracle_on_every_fixture() {
    let mut fixtures = files("fixtures/cpuprofile", &[".cpuprofile", ".cpuprofile.gz"]);
    fixtures.extend(files("fixtures/edge", &[".cpuprofile"]));
    let jobs: Vec<(String, &[&str])> =
        fixtures.iter().flat_map(|f| OPTION_SETS.iter().map(move |o| (f.clone(), *o))).collect();
    let expected = oracle_folds(&jobs);
    let mut failures = Vec::new();
    for ((fixture, options), theirs) in jobs.iter().zip(&expected) {
        let out = cpuprof().args(["collapse", fixture]).args(*options).output().unwrap();
        assert!(out.status.success(), "{fixture} {options:?}: {}", String::from_utf8_lossy(&out.stderr));
        let ours = String::from_utf8(out.stdout).unwrap();
        if ours != *theirs {
            let first = ours.lines().zip(theirs.lines()).position(|(a, b)| a != b);
            failures.push(format!(
                "{fixture} {options:?}: {} vs {} lines, first difference at line {first:?}",
                ours.lines().count(),
                theirs.lines().count()
            ));
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

/// Whether a folded label is one a `--hide` regex takes out.
type IsHidden = fn(&str) -> bool;

/// `--hide` against the oracle's folding with the hidden frames struck out by hand: each stack
/// loses the frames whose label matches, equal stacks add up, and a stack with nothing left is
/// `(hidden)`; no sample is lost.
#[test]
fn hide_takes_frames_out_of_stacks_and_keeps_their_samples() {
    // (regex for cpuprof, whether a label is hidden by it: its file or its name)
    let rules: [(&str, IsHidden); 3] = [
        ("^node:", |label| label.rsplit_once(' ').is_some_and(|(_, file)| file.starts_with("node:"))),
        ("^roundMoney$", |label| label == "roundMoney" || label.starts_with("roundMoney ")),
        ("^main$|^handleRequest$", |label| {
            let name = label.split_once(' ').map_or(label, |(name, _)| name);
            name == "main" || name == "handleRequest"
        }),
    ];
    let fixtures = ["fixtures/cpuprofile/money.cpuprofile", "fixtures/cpuprofile/money-i100.cpuprofile"];
    let jobs: Vec<(String, &[&str])> = fixtures.iter().map(|f| ((*f).to_owned(), &[][..])).collect();
    let folds = oracle_folds(&jobs);
    for (fixture, fold) in fixtures.iter().zip(&folds) {
        for (regex, hidden) in rules {
            let mut expected = std::collections::BTreeMap::<String, u64>::new();
            for line in fold.lines() {
                let (stack, count) = line.rsplit_once(' ').unwrap();
                let kept: Vec<&str> = stack.split(';').filter(|label| !hidden(label)).collect();
                let stack = if kept.is_empty() { "(hidden)".to_owned() } else { kept.join(";") };
                *expected.entry(stack).or_default() += count.parse::<u64>().unwrap();
            }
            let out = cpuprof().args(["collapse", fixture, "--hide", regex]).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let mut ours = std::collections::BTreeMap::<String, u64>::new();
            for line in String::from_utf8(out.stdout).unwrap().lines() {
                let (stack, count) = line.rsplit_once(' ').unwrap();
                *ours.entry(stack.to_owned()).or_default() += count.parse::<u64>().unwrap();
            }
            assert!(expected.len() < fold.lines().count(), "{fixture} {regex}: the rule hides nothing");
            assert_eq!(ours, expected, "{fixture} --hide {regex}");
        }
    }
    // `top --help`'s example: --ignore '^node:' leaves nothing (every stack passes through node's
    // loader); --hide keeps the handler's samples, with the same total as without it.
    let total_of = |args: &[&str]| -> Option<u64> {
        let out = cpuprof().args(["top", fixtures[0], "--all", "--format", "json"]).args(args).output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = report["rows"].as_array().unwrap();
        rows.iter().find(|r| r["name"] == "handleRequest").map(|r| r["total"].as_u64().unwrap())
    };
    assert_eq!(total_of(&["--focus", "handleRequest", "--ignore", "^node:"]), None);
    let whole = total_of(&[]).unwrap();
    assert_eq!(total_of(&["--focus", "handleRequest", "--hide", "^node:"]), Some(whole));
}
