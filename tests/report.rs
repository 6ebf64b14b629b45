//! `cpuprof report` (issue 22): the HTML page, opened in headless Chromium by
//! `tests/browser/check-report.js` (playwright-core, pinned in tests/browser/package-lock.json,
//! driving Debian's Chromium). The page computes its views itself; the check compares what it
//! shows with cpuprof's JSON commands for the same input: the header and category split with
//! `top`, the table with `top` (and `--sort total`), a function's callers and callees with
//! `callers`/`callees`, the search's matched weight with `top --focus`, and a range dragged on the
//! timeline with `top --from … --to …` at the range's ends. Without Chromium the browser part
//! says SKIPPED, except under CI, where that is a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{cpuprof, npm_ci, root};

/// Runs the browser check in `mode` with `args`; `None` when no Chromium is installed (outside CI).
fn browser(mode: &str, args: &[&std::ffi::OsStr]) -> Option<std::process::Output> {
    npm_ci("tests/browser");
    let mut all: Vec<&std::ffi::OsStr> = vec![std::ffi::OsStr::new(mode)];
    all.extend(args);
    common::browser_check("tests/browser/check-report.js", &all)
}

fn report(input: &str, out: &Path) {
    cpuprof().args(["report", input, "-o"]).arg(out).assert().success();
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cpuprof"))
}

/// The artifacts kept from the browser run: the screenshots.
fn artifacts() -> PathBuf {
    let dir = root().join("target/test-artifacts/report");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[allow(clippy::print_stderr)] // the skip message
fn the_page_shows_what_the_commands_say() {
    let dir = tempfile::tempdir().unwrap();
    for input in [
        "fixtures/cpuprofile/blocks.cpuprofile",
        "fixtures/ticklog/blocks.log",
        "fixtures/cpuprofile/packages.cpuprofile",
        "fixtures/cpuprofile/deep-recursion.cpuprofile",
        // No sample times: one bucket, no timeline.
        "fixtures/pprof/handmade.pb.gz",
    ] {
        let name = input.rsplit('/').next().unwrap();
        let html = dir.path().join(format!("{name}.html"));
        report(input, &html);
        let shot = artifacts().join(format!("{name}.png"));
        let Some(out) = browser("profile", &[html.as_os_str(), input.as_ref(), binary().as_os_str(), shot.as_os_str()])
        else {
            eprintln!("SKIPPED: no Chromium (install the Debian package chromium, or set CHROMIUM)");
            return;
        };
        assert!(
            out.status.success(),
            "{input}:\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Every name of tests/hostile.rs's set (and the recorded hostile-names workload) is shown as
/// text: no element, handler, link or script comes from the data.
#[test]
#[allow(clippy::print_stderr)]
fn hostile_names_stay_text() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("hostile.html");
    report("fixtures/cpuprofile/hostile-names.cpuprofile", &html);
    let Some(out) = browser("hostile", &[html.as_os_str()]) else {
        eprintln!("SKIPPED: no Chromium");
        return;
    };
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
}

/// The page is one file: its only script and style are inline and named by hash in a policy
/// that allows no network access; the data block cannot be closed by a name.
#[test]
fn the_page_is_self_contained() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    report("fixtures/cpuprofile/hostile-names.cpuprofile", &html);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("default-src &#x27;none&#x27;"), "no CSP in the page");
    assert!(page.contains("connect-src &#x27;none&#x27;"));
    assert_eq!(page.matches("<script").count(), 2, "one data block and one script");
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"), "an external resource");
    let data = &page[page.find("id=\"data\">").unwrap()..];
    let data = &data[..data.find("</script>").unwrap()];
    assert!(!data[10..].contains('<'), "raw < in the data block");
}

/// Where the page goes: beside the input by default, never over an input, and standard input
/// needs -o.
#[test]
fn the_default_output_is_beside_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("app.cpuprofile");
    std::fs::copy(root().join("fixtures/cpuprofile/blocks.cpuprofile"), &input).unwrap();
    cpuprof().arg("report").arg(&input).assert().success();
    assert!(dir.path().join("app.report.html").is_file());
    let before = std::fs::read(&input).unwrap();
    let refused = cpuprof().arg("report").arg(&input).arg("-o").arg(&input).assert().failure();
    assert!(
        String::from_utf8_lossy(&refused.get_output().stderr).contains("refusing to write the output over the input")
    );
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input was changed");
    let out = cpuprof().args(["report", "-"]).write_stdin(before).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("needs -o"));
}

/// The page's own JavaScript and the browser checks pass ESLint (pinned in tests/browser).
#[test]
fn the_page_script_is_linted() {
    npm_ci("tests/browser");
    let out = Command::new("node")
        .args([
            "tests/browser/node_modules/eslint/bin/eslint.js",
            "--max-warnings",
            "0",
            "-c",
            "tests/browser/eslint.config.js",
        ])
        .args(["crates/cpuprof-report/assets/report.js", "tests/browser/check-report.js", "tests/browser/check-svg.js"])
        .args(["tests/browser/eslint.config.js"])
        .current_dir(root())
        .output()
        .expect("node runs eslint");
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}
