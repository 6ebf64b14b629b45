//! Every malformed file in `fixtures/bad/` gives its one-line message (the sibling
//! `.err.txt`, checked by hand when written), exit code 1, and no output; nothing panics.
//! `UPDATE_EXPECT=1` rewrites missing or changed messages (never set in CI).

mod common;

use common::{cpuprof, files, root};

#[test]
fn bad_fixtures_fail_with_their_message() {
    let bad = files("fixtures/bad", &[".cpuprofile", ".gz", ".log", ".folded", ".json", ".pb"]);
    assert!(bad.len() >= 15, "{bad:?}");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for input in &bad {
        let out = cpuprof().args(["top", input]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let expected_path = root().join(format!("{input}.err.txt"));
        if out.status.code() != Some(1) || !out.stdout.is_empty() {
            failures.push(format!(
                "{input}: exit {:?}, stdout {} bytes, stderr {stderr}",
                out.status.code(),
                out.stdout.len()
            ));
            continue;
        }
        if stderr.lines().count() != 1 || !stderr.starts_with(&format!("cpuprof: error: {input}")) {
            failures.push(format!("{input}: not a one-line error naming the file: {stderr}"));
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == stderr => {}
            _ if update => std::fs::write(&expected_path, &stderr).unwrap(),
            Ok(expected) => failures.push(format!("{input}:\n  expected {expected}  actual   {stderr}")),
            Err(_) => failures.push(format!("{input}: no {input}.err.txt (UPDATE_EXPECT=1 writes it)")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_failed_run_leaves_the_output_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.txt");
    std::fs::write(&out, "previous report\n").unwrap();
    cpuprof().args(["top", "fixtures/bad/truncated.cpuprofile", "-o"]).arg(&out).assert().code(1);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous report\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left behind");
}

#[test]
fn missing_file_is_an_io_error() {
    let out = cpuprof().args(["top", "fixtures/does-not-exist.cpuprofile"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("cpuprof: error: cannot open fixtures/does-not-exist.cpuprofile: "), "{stderr}");
}

#[test]
fn empty_profile_is_a_report_not_an_error() {
    let out = cpuprof().args(["top", "fixtures/edge/no-samples.cpuprofile"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no samples"));
}

#[test]
fn fuzz_regressions_end_cleanly() {
    // Inputs the fuzzers (fuzz/, scripts/fuzz.sh) or their harness found: each is read or
    // refused, never a crash. Names start with the fuzz target (the input format).
    let found = files("fixtures/fuzz", &[""]);
    assert!(!found.is_empty());
    for file in found {
        let format = file.rsplit('/').next().unwrap().split('-').next().unwrap();
        let out = cpuprof().args(["top", &file, "--input-format", format, "--format", "json"]).output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        if out.status.success() {
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(report["duration_ns"].as_i64().unwrap_or(0) >= 0, "{file}: {}", report["duration_ns"]);
        }
    }
}
