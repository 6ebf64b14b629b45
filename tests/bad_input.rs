//! Every malformed file in `fixtures/bad/` gives its one-line message (the sibling
//! `.err.txt`, checked by hand when written), exit code 1, and no output; nothing panics.
//! `CPUPROF_BLESS=1` rewrites missing or changed messages (never set in CI).

use crate::common;

use common::{cpuprof, files, root};

#[test]
fn bad_fixtures_fail_with_their_message() {
    let bad = files(
        "fixtures/bad",
        &[".cpuprofile", ".gz", ".log", ".folded", ".json", ".pb", ".heapprofile", ".prof", ".zip"],
    );
    assert!(bad.len() >= 15, "{bad:?}");
    let update = std::env::var_os("CPUPROF_BLESS").is_some();
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
            Err(_) => failures.push(format!("{input}: no {input}.err.txt (CPUPROF_BLESS=1 writes it)")),
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

/// The libraries' errors name the setting to change, never a flag: the CLI adds the flag.
#[test]
fn errors_that_a_setting_would_fix_name_its_flag() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["fixtures/bad/no-profile.trace.json", "--input-format", "cpuprofile"],
            ": this is a Chrome trace (`traceEvents`), not a .cpuprofile; read it with --input-format trace or auto\n",
        ),
        (&["fixtures/pprof/handmade.pb.gz", "--sample-type", "nosuch"], ": no sample type `nosuch`; the file has "),
        (
            &["fixtures/cpuprofile/money.cpuprofile", "--max-input-size", "1KB"],
            " exceeds the limit of 1000 bytes (--max-input-size raises it)\n",
        ),
    ];
    for (args, expected) in cases {
        let out = cpuprof().arg("top").args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with("cpuprof: error: ") && stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let out = cpuprof().args(["top", "fixtures/pprof/handmade.pb.gz", "--sample-type", "nosuch"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).ends_with("; choose one with --sample-type\n"));
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
    // The fuzz targets of scripts/fuzz.sh, named as --input-format names the formats.
    const TARGETS: [&str; 8] =
        ["cpuprofile", "ticklog", "pprof", "trace", "folded", "perf-script", "preprocess", "auto"];
    let found = files("fixtures/fuzz", &[""]);
    assert!(!found.is_empty());
    for file in found {
        let name = file.rsplit('/').next().unwrap();
        let format = TARGETS
            .into_iter()
            .find(|target| name.strip_prefix(target).is_some_and(|rest| rest.starts_with('-')))
            .unwrap_or_else(|| panic!("{name} is named after no fuzz target ({})", TARGETS.join(", ")));
        let out = cpuprof().args(["top", &file, "--input-format", format, "--format", "json"]).output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        if out.status.success() {
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(report["duration_ns"].as_i64().unwrap_or(0) >= 0, "{file}: {}", report["duration_ns"]);
        }
    }
}

/// Every command that writes a file (`-o`, `--flamegraph`): it refuses to write over one of its
/// inputs (a usage error, exit 2; the input untouched), and a run that fails on a bad input leaves an existing
/// output as it was, with no temporary file beside it.
#[test]
fn every_file_output_is_safe() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = d.join("a.cpuprofile");
    std::fs::copy(root().join("fixtures/cpuprofile/money.cpuprofile"), &good).unwrap();
    let bad = root().join("fixtures/bad/truncated.cpuprofile");
    let out = d.join("out.file");
    let (good, bad, out) = (good.to_str().unwrap(), bad.to_str().unwrap(), out.to_str().unwrap());
    let original = std::fs::read(good).unwrap();
    // (command, its output flag): the inputs are appended.
    let commands: [&[&str]; 7] = [
        &["top", "-o"],
        &["collapse", "-o"],
        &["flamegraph", "-o"],
        &["convert", "--output-format", "pprof", "-o"],
        &["merge", "--output-format", "cpuprofile", "-o"],
        &["diff", "-o"],
        &["diff", "--flamegraph"],
    ];
    for command in commands {
        let two_inputs = matches!(command[0], "diff" | "merge");
        // Over an input: refused, input untouched.
        let mut args = command.to_vec();
        args.push(good);
        args.push(good);
        if two_inputs {
            args.push(good);
        }
        let run = cpuprof().args(&args).output().unwrap();
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
        assert!(
            String::from_utf8_lossy(&run.stderr).contains("refusing to write the output over the input"),
            "{args:?}"
        );
        assert_eq!(std::fs::read(good).unwrap(), original, "{args:?} changed its input");

        // A failed run: the previous output stays, nothing else appears.
        std::fs::write(out, "previous\n").unwrap();
        let mut args = command.to_vec();
        args.push(out);
        args.push(if two_inputs { good } else { bad });
        if two_inputs {
            args.push(bad);
        }
        cpuprof().args(&args).assert().code(1);
        assert_eq!(std::fs::read_to_string(out).unwrap(), "previous\n", "{args:?}");
        let mut names: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["a.cpuprofile", "out.file"], "{args:?}: no temporary file left");
    }
}

/// A usage error is one `cpuprof: error:` line that quotes the argument escaped, whether clap
/// found it (a typed flag, an unknown argument) or cpuprof did: a value holding
/// `\n::error::` would start a GitHub Actions command line of a CI log.
#[test]
fn usage_errors_quote_values_escaped_on_one_line() {
    let f = "fixtures/cpuprofile/blocks.cpuprofile";
    let hostile = "5\n::error::x\u{202e}";
    let shown = "5\\n::error::x\\u{202e}";
    let cases: [&[&str]; 10] = [
        &["top", f, "-n", hostile],
        &["top", f, "--format", hostile],
        &["top", f, "--max-input-size", hostile],
        &["top", f, "--by", hostile],
        &["top", f, "--weight", hostile],
        &["top", f, &format!("--{hostile}")],
        &["top", f, "--from", hostile],
        &["timeline", f, "--bucket", hostile],
        &["diff", f, "--base-window", hostile, "--new-window", "1s.."],
        &["diff", f, f, "--fail-on", hostile],
    ];
    for args in cases {
        let out = cpuprof().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("cpuprof: error: ") && stderr.ends_with('\n'), "{args:?}: {stderr}");
        assert!(stderr.contains(shown), "{args:?}: {stderr}");
    }
    // With nothing to escape, clap's message is kept (its tips after a `;`), without its
    // usage block.
    let out = cpuprof().args(["top", f, "--limit", "x"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cpuprof: error: invalid value 'x' for '--limit <N>': invalid digit found in string\n"
    );
    let out = cpuprof().args(["top"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cpuprof: error: the following required arguments were not provided: <FILE>...\n"
    );
    // Help is not an error.
    cpuprof().args(["top", "--help"]).assert().success();
}
