//! Empty profiles (no samples, or none left after the filters): every command that reports
//! exits 0 with one warning and a valid, empty output (docs/conventions.md, "Empty profiles"). `diff` is
//! the exception: there is nothing to compare (tests/diff.rs).

use crate::common;

use common::cpuprof;

const EMPTY: &str = "fixtures/edge/no-samples.cpuprofile";

fn run(args: &[&str]) -> (Vec<u8>, String) {
    let out = cpuprof().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one warning: {stderr}");
    assert!(stderr.starts_with("cpuprof: warning: ") && stderr.contains("no samples"), "{args:?}: {stderr}");
    (out.stdout, stderr)
}

#[test]
fn every_command_warns_and_writes_an_empty_output() {
    let (json, _) = run(&["top", EMPTY, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!((json["samples"].as_i64(), json["rows"].as_array().map(Vec::len)), (Some(0), Some(0)));

    let (page, _) = run(&["report", EMPTY, "-o", "-"]);
    assert!(String::from_utf8(page).unwrap().contains("data-kind=\"profile\""));

    let (folded, _) = run(&["collapse", EMPTY]);
    assert!(folded.is_empty());

    let (svg, _) = run(&["flamegraph", EMPTY, "--title", "a <b> & \"c\""]);
    let svg = String::from_utf8(svg).unwrap();
    let mut reader = quick_xml::Reader::from_str(&svg);
    while reader.read_event().expect("the SVG is well-formed XML") != quick_xml::events::Event::Eof {}
    assert!(svg.contains("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"), "the title, escaped: {svg}");
    assert!(svg.contains(">no samples to draw</text>"), "{svg}");

    let dir = tempfile::tempdir().unwrap();
    for (name, magic) in [("e.pb.gz", &b"\x1f\x8b"[..]), ("e.cpuprofile", b"{"), ("e.folded", b"")] {
        let out = dir.path().join(name);
        run(&["convert", EMPTY, "-o", out.to_str().unwrap()]);
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(magic), "{name}");
        // What was written reads back as an empty profile (the empty folded file aside: an
        // empty input is not a profile).
        if !magic.is_empty() {
            run(&["top", out.to_str().unwrap()]);
        }
    }
}

#[test]
fn filters_that_leave_nothing_are_an_empty_profile_too() {
    let file = "fixtures/cpuprofile/money.cpuprofile";
    let (svg, stderr) = run(&["flamegraph", file, "--from", "3600s"]);
    assert!(stderr.contains("after the filters"), "{stderr}");
    assert!(String::from_utf8(svg).unwrap().contains("no samples to draw"));
    run(&["collapse", file, "--from", "3600s"]);
    // The report's page (to stdout) says so too, for a window and for a focus matching nothing.
    for args in [&["--from", "3600s"][..], &["--focus", "no-such-function"]] {
        let (page, stderr) = run(&[&["report", file, "-o", "-"][..], args].concat());
        assert!(stderr.contains("after the filters"), "{args:?}: {stderr}");
        assert!(String::from_utf8(page).unwrap().starts_with("<!DOCTYPE html>"), "{args:?}");
    }
}
