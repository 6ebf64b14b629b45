//! `cpuprof collapse` against the independent oracle's folding (`fixtures/oracle/top.js --fold`,
//! SPEC.md §8) on every recorded and edge `.cpuprofile`, byte for byte.

mod common;

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
