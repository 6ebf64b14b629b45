//! Shared helpers of the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// The `cpuprof` binary under test, run from the repository root.
pub(crate) fn cpuprof() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("cpuprof").expect("cpuprof binary");
    cmd.current_dir(root());
    cmd
}

/// Runs the independent JavaScript oracle (`fixtures/oracle/top.js`) with node.
pub(crate) fn oracle(args: &[&str]) -> serde_json::Value {
    let out = Command::new("node")
        .arg("fixtures/oracle/top.js")
        .args(args)
        .current_dir(root())
        .output()
        .expect("node must be installed to run the oracle");
    assert!(out.status.success(), "oracle failed on {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

/// Sorted paths of the files in `dir` (relative to the root) whose names end in one of `exts`.
pub(crate) fn files(dir: &str, exts: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root().join(dir))
        .expect("fixture folder")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|name| exts.iter().any(|e| name.ends_with(e)))
        .map(|name| format!("{dir}/{name}"))
        .collect();
    out.sort();
    out
}
