//! Flame graphs in a real browser. `cpuprof flamegraph` writes SVGs of recorded profiles,
//! hostile names included, and `tests/browser/check-svg.js` opens each in headless Chromium:
//! it renders (a screenshot that is not blank), inferno's search finds the frames it should
//! (checked against the frames' own titles), and no script from a frame name runs.
//! Chromium comes from Debian (`.ci/run` installs it); without it the test says SKIPPED, except
//! under CI, where that is a failure.

use crate::common;

use common::{cpuprof, root};

/// Runs the browser check; `None` when no Chromium is installed (outside CI).
fn check(svg: &std::path::Path, args: &[&str]) -> Option<std::process::Output> {
    let mut all: Vec<&std::ffi::OsStr> = vec![svg.as_os_str()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    // A loaded 2-core machine (the suite's other tests, the report's own Chromium checks) has
    // taken Chromium past 30 s, and once hung it for good on a page that renders in a second
    // elsewhere: each run gets 40 s and the check starts a hung one again (three tries in all).
    all.extend(["--timeout", "40"].map(std::ffi::OsStr::new));
    common::browser_check("tests/browser/check-svg.js", &all)
}

fn flamegraph(input: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let svg = dir.join(format!("{}.svg", input.rsplit('/').next().unwrap()));
    cpuprof().args(["flamegraph", input, "-o"]).arg(&svg).assert().success();
    svg
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn flame_graphs_render_search_and_stay_inert() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            "fixtures/cpuprofile/hostile-names.cpuprofile",
            &["--search", "<script>", "--expect-match", "--expect-text", "<script>alert(1)</script>"],
        ),
        ("fixtures/cpuprofile/slugify.cpuprofile", &["--search", "^rehash ", "--expect-match"]),
        // Control characters (not allowed in XML) and names ending in a number.
        ("fixtures/cpuprofile/control-names.cpuprofile", &["--search", "HTTP/1\\.1", "--expect-match"]),
        ("fixtures/cpuprofile/slugify.cpuprofile", &["--search", "no such frame", "--expect-no-match"]),
        ("fixtures/ticklog/pbkdf2-login.log", &["--search", "PBKDF2", "--expect-match"]),
        // Zoomed in, every label is its frame's name then a short location, cut from the right.
        (
            "fixtures/cpuprofile/packages.cpuprofile",
            &["--zoom", "renderRow ", "--expect-label-start", "renderRow main.js:13"],
        ),
        ("fixtures/cpuprofile/hostile-names.cpuprofile", &["--zoom", "main "]),
    ];
    for (input, args) in cases {
        let svg = flamegraph(input, dir.path());
        let Some(out) = check(&svg, args) else {
            eprintln!("SKIPPED: no Chromium (install the Debian package chromium, or set CHROMIUM)");
            return;
        };
        assert!(
            out.status.success(),
            "{input} {args:?}:\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // The check can fail: an SVG whose frame name was not escaped is caught running its payload.
    let negative = root().join("tests/browser/fixtures/unescaped-negative.svg");
    let out = check(&negative, &[]).expect("Chromium was found above");
    assert!(!out.status.success(), "the unescaped SVG passed the browser check");
    assert!(String::from_utf8_lossy(&out.stderr).contains("a payload ran"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The slugify workload spends its time re-hashing: in its flame graph the hashing frames
/// are the widest under `main`.
#[test]
fn the_hashing_frames_are_the_widest_in_slugify() {
    let out = cpuprof().args(["collapse", "fixtures/cpuprofile/slugify.cpuprofile"]).output().unwrap();
    let folded = String::from_utf8(out.stdout).unwrap();
    let mut under_main: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (frames, weight) = line.rsplit_once(' ').unwrap();
        let frames: Vec<&str> = frames.split(';').collect();
        if let Some(i) = frames.iter().position(|f| f.starts_with("main ")) {
            if let Some(child) = frames.get(i + 1) {
                *under_main.entry((*child).to_owned()).or_default() += weight.parse::<i64>().unwrap();
            }
        }
    }
    let widest = under_main.iter().max_by_key(|(_, w)| **w).map(|(f, _)| f.as_str()).unwrap();
    assert!(widest.starts_with("rehash "), "widest under main: {widest} in {under_main:?}");
}
