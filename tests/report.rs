//! `cpuprof report` (issue 22): the HTML page, opened in headless Chromium by
//! `tests/browser/check-report.js` (playwright-core, pinned in tests/browser/package-lock.json,
//! driving Debian's Chromium). The page computes its views itself; the check compares what it
//! shows with cpuprof's JSON commands for the same input: the header and category split with
//! `top`, the table with `top` (and `--sort total`), a function's callers and callees with
//! `callers`/`callees`, the search's matched weight with `top --focus`, and a range dragged on the
//! timeline with `top --from … --to …` at the range's ends. Without Chromium the browser part
//! says SKIPPED, except under CI, where that is a failure.

use crate::common;

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

/// Writes the report of `input` to `out`, the fixtures' scripts read from this checkout (they
/// were recorded at /work/main).
fn report(input: &str, out: &Path) {
    let scripts = format!("/work/main={}", common::root().display());
    cpuprof().args(["report", input, "--source-root", &scripts, "-o"]).arg(out).assert().success();
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
        // A tick log (with JIT records: the function view also says what V8 did, as `cpuprof
        // jit`); fixtures/ticklog/blocks.log's page is checked by spread_out_blocks_are_explained.
        "fixtures/jit/jit.log.gz",
        "fixtures/cpuprofile/packages.cpuprofile",
        "fixtures/cpuprofile/deep-recursion.cpuprofile",
        // 5,000 frames deep: laid out without recursion, drawn to a canvas's height.
        "fixtures/edge/deep-chain.cpuprofile",
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

/// The report's blocks table names where each block was spent as `blocks` does, and a block
/// that no frame holds the most of reads "(spread out)", explained on the page (the tick log of
/// the blocks workload has one at 5 ms).
#[test]
#[allow(clippy::print_stderr)]
fn spread_out_blocks_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("blocks.html");
    let input = "fixtures/ticklog/blocks.log";
    cpuprof().args(["report", input, "--min-block", "5ms", "-o"]).arg(&html).assert().success();
    let Some(out) = browser("blocks", &[html.as_os_str(), input.as_ref(), binary().as_os_str(), "5ms".as_ref()]) else {
        eprintln!("SKIPPED: no Chromium");
        return;
    };
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
}

/// Every name of tests/hostile.rs's set (and the recorded hostile-names workload) is shown as
/// text, in a profile's page and a comparison's: no element, handler, link or script comes from
/// the data.
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

    let names = serde_json::to_string(common::hostile::NAMES).unwrap();
    let (one, two) = (dir.path().join("h.cpuprofile"), dir.path().join("h2.cpuprofile"));
    std::fs::write(&one, common::hostile::hostile_cpuprofile(1).to_string()).unwrap();
    std::fs::write(&two, common::hostile::hostile_cpuprofile(2).to_string()).unwrap();
    let page = dir.path().join("names.html");
    report(one.to_str().unwrap(), &page);
    let diff_page = dir.path().join("names-diff.html");
    cpuprof().arg("diff").arg(&one).arg(&two).arg("--report").arg(&diff_page).assert().success();
    for html in [page, diff_page] {
        let out = browser("hostile", &[html.as_os_str(), names.as_ref()]).expect("Chromium ran above");
        assert!(
            out.status.success(),
            "{}:\n{}\n{}",
            html.display(),
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
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
        .args([
            "crates/cpuprof-report/assets/page.js",
            "crates/cpuprof-report/assets/report.js",
            "crates/cpuprof-report/assets/diff.js",
        ])
        .args(["tests/browser/check-report.js", "tests/browser/check-svg.js"])
        .args(["tests/browser/eslint.config.js"])
        .current_dir(root())
        .output()
        .expect("node runs eslint");
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// `cpuprof diff --report` of fixtures/diff: the page shows the changes the fixture was made
/// with (its README), each function's runs as `top` of each run says, its callers as `callers`
/// says, and the differential flame graph.
#[test]
#[allow(clippy::print_stderr)]
fn the_diff_page_shows_the_fixture_changes() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("diff.html");
    let base: Vec<String> = (1..=3).map(|i| format!("fixtures/diff/base.{i}.cpuprofile")).collect();
    let new: Vec<String> = (1..=3).map(|i| format!("fixtures/diff/new.{i}.cpuprofile")).collect();
    cpuprof()
        .arg("diff")
        .arg("--base")
        .args(&base)
        .arg("--new")
        .args(&new)
        .arg("--report")
        .arg(&html)
        .assert()
        .success();
    let sides = serde_json::json!({ "base": base, "new": new }).to_string();
    let shot = artifacts().join("diff.png");
    let Some(out) = browser("diff", &[html.as_os_str(), sides.as_ref(), binary().as_os_str(), shot.as_os_str()]) else {
        eprintln!("SKIPPED: no Chromium");
        return;
    };
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
}

/// `diff --report` never writes over an input, nor over another of its outputs.
#[test]
fn the_diff_page_refuses_inputs_and_shared_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.cpuprofile");
    std::fs::copy(root().join("fixtures/diff/base.1.cpuprofile"), &base).unwrap();
    let before = std::fs::read(&base).unwrap();
    let new = root().join("fixtures/diff/new.1.cpuprofile");
    let over_input = cpuprof().arg("diff").arg(&base).arg(&new).arg("--report").arg(&base).assert().failure();
    assert!(String::from_utf8_lossy(&over_input.get_output().stderr)
        .contains("refusing to write the output over the input"));
    assert_eq!(std::fs::read(&base).unwrap(), before, "the input was changed");
    let page = dir.path().join("d.html");
    for flag in ["-o", "--flamegraph"] {
        let shared =
            cpuprof().arg("diff").arg(&base).arg(&new).arg("--report").arg(&page).arg(flag).arg(&page).assert().code(2);
        assert!(
            String::from_utf8_lossy(&shared.get_output().stderr).contains("refusing to write two outputs"),
            "{flag}"
        );
    }
    assert!(!page.exists(), "written though refused");
}

/// The embedded data of the page at `html`.
fn page_data(html: &Path) -> serde_json::Value {
    let page = std::fs::read_to_string(html).unwrap();
    let data = &page[page.find("id=\"data\">").unwrap() + "id=\"data\">".len()..];
    serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap()
}

/// A profile whose second sample is 10¹² µs before its first (a −10¹² µs delta) has sample
/// times: `timeline` cuts it into buckets, and the report must have the same buckets, not fall
/// back to one untimed bucket (issue 52.17).
#[test]
fn report_and_timeline_agree_on_a_timed_profile() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("negative.cpuprofile");
    let frame = |name: &str| serde_json::json!({"functionName": name, "scriptId": "1", "url": "file:///a.js", "lineNumber": 0, "columnNumber": 0});
    let profile = serde_json::json!({
        "nodes": [
            {"id": 1, "callFrame": frame("(root)"), "children": [2, 3]},
            {"id": 2, "callFrame": frame("work")},
            {"id": 3, "callFrame": frame("other")},
        ],
        "startTime": 0, "endTime": 3000,
        "samples": [2, 3, 2, 3],
        "timeDeltas": [1000, -1_000_000_000_000i64, 1_000_000_000_001i64, 1000],
    });
    std::fs::write(&input, profile.to_string()).unwrap();
    let out = cpuprof().arg("timeline").arg(&input).args(["--bucket", "1ms", "--format", "json"]).assert().success();
    let line: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let buckets = line["buckets"].as_array().unwrap();
    assert!(buckets.len() > 1, "timeline: {line}");
    let html = dir.path().join("negative.html");
    report(input.to_str().unwrap(), &html);
    let data = page_data(&html);
    assert_eq!(data["timed"], true, "the report has no timeline where `timeline` has one");
    // 3 ms cut into 1 ms buckets, as the timeline's: the samples fall in the same ones.
    assert_eq!(data["bucket_ns"], 1_000_000);
    let samples: Vec<i64> = buckets.iter().map(|b| b["samples"].as_i64().unwrap()).collect();
    let page: Vec<i64> = data["buckets"]["samples"].as_array().unwrap().iter().map(|s| s.as_i64().unwrap()).collect();
    assert_eq!(page, samples);
    assert_eq!(page.iter().sum::<i64>(), 4);
}

/// A `.cpuprofile` with one function per `(name, url)`, each with `samples` samples 1 ms apart.
fn named_cpuprofile(functions: &[(&str, &str)], samples: usize) -> serde_json::Value {
    let mut nodes = vec![serde_json::json!({
        "id": 1,
        "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1},
        "children": (2..functions.len() + 2).collect::<Vec<_>>(),
    })];
    for (i, (name, url)) in functions.iter().enumerate() {
        nodes.push(serde_json::json!({
            "id": i + 2,
            "callFrame": {"functionName": name, "scriptId": "1", "url": url, "lineNumber": i, "columnNumber": 0},
        }));
    }
    let ids: Vec<usize> = (0..functions.len() * samples).map(|k| k % functions.len() + 2).collect();
    serde_json::json!({
        "nodes": nodes,
        "startTime": 0,
        "endTime": ids.len() * 1000,
        "timeDeltas": vec![1000; ids.len()],
        "samples": ids,
    })
}

/// Names with bidi overrides, isolates, zero-width characters and controls show as the tables
/// show them (escapes written here by hand), each isolated in a <bdi>: `bidi\u202eevil\u202c.js`
/// must not read `bidilive.js`, nor a location reorder the facts line it starts (issue 52.5).
#[test]
#[allow(clippy::print_stderr)]
fn bidi_and_invisible_names_show_escaped_and_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        ("bidi\u{202e}evil\u{202c}.js", "bidi\\u{202e}evil\\u{202c}.js"),
        ("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}"),
        ("iso\u{2066}late\u{2069}d", "iso\\u{2066}late\\u{2069}d"),
        ("line\nbreak\ttab", "line\\nbreak\\ttab"),
        ("\u{5e9}\u{5dc}\u{5d5}\u{5dd} 42", "\u{5e9}\u{5dc}\u{5d5}\u{5dd} 42"),
        ("plain", "plain"),
    ];
    let urls =
        ["file:///src/\u{202e}sj.live", "file:///src/\u{200f}rtl.js", "file:///src/a.js", "", "file:///src/b.js", ""];
    let functions: Vec<(&str, &str)> = names.iter().zip(urls).map(|((n, _), u)| (*n, u)).collect();
    // The input's own name, shown in the heading, has an override too.
    let input = dir.path().join("in\u{202e}put.cpuprofile");
    std::fs::write(&input, named_cpuprofile(&functions, 3).to_string()).unwrap();
    let html = dir.path().join("names.html");
    report(input.to_str().unwrap(), &html);
    let pairs = serde_json::to_string(&names).unwrap();
    let Some(out) = browser("names", &[html.as_os_str(), pairs.as_ref()]) else {
        eprintln!("SKIPPED: no Chromium");
        return;
    };
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
}

/// Three functions with 5 MB names: the page is ready, and opens a function, in under a second
/// (a label is fitted to its frame without measuring the whole name; a table shows a name cut)
/// (issue 52.11).
#[test]
#[allow(clippy::print_stderr)]
fn megabyte_names_load_in_under_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let long: Vec<String> = (0..3).map(|i| format!("{i}{}", "m".repeat(5 << 20))).collect();
    let functions: Vec<(&str, &str)> = long.iter().map(|n| (n.as_str(), "file:///a.js")).collect();
    let input = dir.path().join("long.cpuprofile");
    std::fs::write(&input, named_cpuprofile(&functions, 2).to_string()).unwrap();
    let html = dir.path().join("long.html");
    report(input.to_str().unwrap(), &html);
    let Some(out) = browser("quick", &[html.as_os_str(), "1000".as_ref()]) else {
        eprintln!("SKIPPED: no Chromium");
        return;
    };
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
}

#[test]
fn durations_read_the_same_on_the_page_and_in_the_terminal() {
    // page.js's formatNs (run by node, cut from the page's script) and the tables' format_ns on
    // the same values: the edges of every unit and of its digits, and 3,000 values spread over
    // every magnitude up to 2^53 ns (where JavaScript's numbers stop being exact), both signs.
    let script = std::fs::read_to_string(root().join("crates/cpuprof-report/assets/page.js")).expect("page.js");
    let start = script.find("const NS_UNITS").expect("page.js defines NS_UNITS");
    let function = script[start..].find("function formatNs").expect("page.js defines formatNs") + start;
    let end = script[function..].find("\n}\n").expect("formatNs ends") + function + 3;
    let mut values: Vec<i64> = vec![0, 1, 999, 1_000, 1_005, 9_995, 99_950, 999_499, 999_500, 1_125_000];
    for unit in [1_000_i64, 1_000_000, 1_000_000_000, 60_000_000_000, 3_600_000_000_000] {
        for m in [1, 10, 100] {
            for edge in [m * unit - unit / 200 - 1, m * unit - unit / 200, m * unit - 1, m * unit] {
                values.push(edge);
            }
        }
        values.extend([60 * unit - unit / 20, 1_000 * unit - unit / 2]);
    }
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..3_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let magnitude = (state % 54) as u32;
        values.push(i64::try_from((state >> 11) % (1_u64 << magnitude).max(1)).expect("below 2^53"));
    }
    values.extend(values.clone().iter().map(|v| -v));
    let list = values.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let program = format!("{}\nconsole.log([{list}].map(formatNs).join(\"\\n\"));", &script[start..end]);
    let out = Command::new("node").args(["-e", &program]).output().expect("node runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = String::from_utf8(out.stdout).expect("utf-8");
    let differ: Vec<String> = values
        .iter()
        .zip(page.lines())
        .filter(|(ns, shown)| cpuprof_render::time::format_ns(**ns) != **shown)
        .map(|(ns, shown)| format!("{ns}: page {shown:?}, terminal {:?}", cpuprof_render::time::format_ns(*ns)))
        .collect();
    assert_eq!(page.lines().count(), values.len());
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        values.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}
