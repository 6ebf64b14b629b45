//! `cpuprof diff` on real before/after recordings (`fixtures/diff/`, see its README): one
//! function made ~2× slower, one ~1.2× slower, one 2× faster, one removed, one added, one
//! untouched, three runs per side, and the functions moved to other lines.

use crate::common;

use common::cpuprof;
use serde_json::Value;

const BASE: [&str; 3] =
    ["fixtures/diff/base.1.cpuprofile", "fixtures/diff/base.2.cpuprofile", "fixtures/diff/base.3.cpuprofile"];
const NEW: [&str; 3] =
    ["fixtures/diff/new.1.cpuprofile", "fixtures/diff/new.2.cpuprofile", "fixtures/diff/new.3.cpuprofile"];

fn diff_json(base: &[&str], new: &[&str], extra: &[&str]) -> (Value, Option<i32>) {
    // (With one run per side, cpuprof warns on stderr; the JSON is on stdout.)
    let out = cpuprof()
        .args(["diff", "--all", "--format", "json", "--base"])
        .args(base)
        .arg("--new")
        .args(new)
        .args(extra)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), out.status.code())
}

fn row<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn the_constructed_changes_are_found_and_ranked() {
    let (report, _) = diff_json(&BASE, &NEW, &[]);
    let verdict = |name: &str| row(&report, name)["verdict"].as_str().unwrap().to_owned();
    assert_eq!(verdict("doubledWork"), "hotter");
    assert_eq!(verdict("addedWork"), "new");
    assert_eq!(verdict("halvedWork"), "cooler");
    assert_eq!(verdict("removedWork"), "gone");
    assert_eq!(verdict("untouchedWork"), "unchanged", "the untouched function is not flagged");
    // 1.2× over three runs each is at the edge of what these runs can show; it must never
    // come out as an improvement.
    assert!(matches!(verdict("slightlySlowerWork").as_str(), "hotter" | "unchanged"));
    // Moved functions still match: one row each, at their new lines.
    assert_eq!(report["rows"].as_array().unwrap().iter().filter(|r| r["name"] == "halvedWork").count(), 1);
    // The 2× and the new function lead; the drops follow the growths.
    let names: Vec<&str> = report["rows"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(&names[..2], ["doubledWork", "addedWork"]);
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert!(at("removedWork") > at("addedWork") && at("halvedWork") > at("addedWork"));
    let doubled = row(&report, "doubledWork");
    let ratio = doubled["self_ratio"].as_f64().unwrap();
    assert!((1.7..2.6).contains(&ratio), "doubledWork ratio {ratio}");
    assert_eq!(report["base"]["runs"], 3);
    assert_eq!(report["normalize"], "time");
}

#[test]
fn a_profile_against_itself_is_quiet() {
    for p in [BASE[0], "fixtures/cpuprofile/money.cpuprofile", "fixtures/ticklog/json-roundtrip.log"] {
        let (report, code) = diff_json(&[p], &[p], &["--fail-on", "self:+0pp", "--fail-on", "total:+0%"]);
        assert_eq!(code, Some(0), "{p}");
        for r in report["rows"].as_array().unwrap() {
            assert_eq!(r["verdict"], "unchanged", "{p}: {r}");
            assert_eq!(r["significant"], false, "{p}: {r}");
        }
    }
    let (report, _) = diff_json(&BASE, &BASE, &[]);
    assert!(report["rows"].as_array().unwrap().iter().all(|r| r["verdict"] == "unchanged"));
}

#[test]
fn the_gate_exits_3_on_a_regression_and_names_it() {
    let out = cpuprof()
        .args(["diff", "--base"])
        .args(BASE)
        .arg("--new")
        .args(NEW)
        .args(["--fail-on", "self:+5pp", "-o", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap();
    assert!(last.contains("doubledWork") && last.contains("addedWork"), "{last}");
    assert!(!last.contains("untouchedWork") && !last.contains("halvedWork"), "{last}");
    // Each says what crossed and by how much: `regression: doubledWork (…/app.js:N) self
    // +X ms/run (+Y.YYpp, Z.ZZ×), threshold self:+5pp; addedWork …`.
    let (report, _) = diff_json(&BASE, &NEW, &[]);
    let doubled = row(&report, "doubledWork");
    let expected =
        format!("doubledWork ({}:{}) self +", doubled["file"].as_str().unwrap(), doubled["line"].as_u64().unwrap());
    assert!(last.starts_with("cpuprof: regression: ") && last.contains(&expected), "{last}");
    let pp = format!("+{:.2}pp", doubled["self_delta_pp"].as_f64().unwrap());
    let ms = format!("{:.0}", doubled["self_delta"].as_f64().unwrap() / 1e6);
    assert!(last.contains(&format!("{pp}, ")) && last.contains(&format!("+{ms} ms/run")), "{last} ({pp}, {ms})");
    assert!(last.contains("×), threshold self:+5pp"), "{last}");
    // A threshold nothing crosses passes.
    let out = cpuprof().args(["diff", BASE[0], NEW[0], "--fail-on", "self:+50pp", "-o", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Bad rules are usage errors.
    let out = cpuprof().args(["diff", BASE[0], NEW[0], "--fail-on", "self:2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cpuprof: error: --fail-on self:2: expected METRIC:THRESHOLD such as self:+2pp, total:+20%, self:+5ms or block:+50ms\n"
    );
}

#[test]
fn markdown_reads_as_a_review_comment() {
    let out = cpuprof()
        .args(["diff", "--format", "markdown", "-n", "6", "--base"])
        .args(BASE)
        .arg("--new")
        .args(NEW)
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    let first = md.lines().next().unwrap();
    assert!(first.starts_with("**cpuprof diff**: ") && first.contains("hotter") && first.contains("gone"), "{first}");
    assert!(first.contains("first changes: `doubledWork` +"), "{first}");
    // The table is folded away under the summary; names and locations are code, not escaped text.
    assert!(md.contains("<details><summary>") && md.contains("</details>"), "{md}");
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert!(table[0].starts_with("| verdict | function | location | base | new | Δ | ratio | p |"), "{}", table[0]);
    assert!(table[1].starts_with("| ▲ **hotter** | `doubledWork` | `"), "{}", table[1]);
    assert!(!md.contains("\\:") && !md.contains("\\/"), "no needless escapes: {md}");
}

#[test]
fn the_differential_flame_graph_marks_growth_and_new_frames() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diff.svg");
    let out = cpuprof()
        .args(["diff", "-o", "/dev/null", "--flamegraph"])
        .arg(&svg)
        .arg("--base")
        .args(BASE)
        .arg("--new")
        .args(NEW)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    let title = |name: &str| {
        text.split("<title>").find(|t| t.starts_with(name)).map(|t| t.split("</title>").next().unwrap().to_owned())
    };
    // Frames are matched without lines, as functions moved: only the added one is new.
    let added = title("addedWork").unwrap();
    assert!(added.contains("(new)"), "{added}");
    let doubled = title("doubledWork").unwrap();
    assert!(!doubled.contains("(new)") && doubled.contains("; +"), "{doubled}");
    let halved = title("halvedWork").unwrap();
    assert!(halved.contains("; -"), "{halved}");
    // Callers carry their callees' growth: main ran doubledWork and addedWork.
    let main = title("main ").unwrap();
    assert!(main.contains("[total +"), "{main}");
    // The removed function is drawn, at its base width and all blue, under a root of its own.
    let gone = title("removedWork").unwrap();
    assert!(gone.contains("(gone)"), "{gone}");
    let width_and_change = |t: &str| -> (f64, f64) {
        let numbers = t.rsplit_once('(').unwrap().1;
        let (share, change) = numbers.split_once("%; ").unwrap();
        (share.rsplit(' ').next().unwrap().parse().unwrap(), change.trim_end_matches("%)").parse().unwrap())
    };
    let (width, change) = width_and_change(&gone);
    assert!(width > 5.0 && (width + change).abs() < 0.011, "{gone}");
    let tower = title("(only in base)").unwrap();
    assert!(width_and_change(&tower).0 >= width, "{tower}");
    let svg_frames = text.matches("<title>").count();
    assert!(svg_frames > 20);
}

#[test]
fn min_delta_and_one_run_per_side_are_explained() {
    // Below --min-delta nothing counts, new functions included, and the gate stays shut.
    let (report, code) = diff_json(&BASE, &NEW, &["--min-delta", "200ms", "--fail-on", "self:+1%"]);
    assert_eq!(code, Some(0));
    assert!(report["rows"].as_array().unwrap().iter().all(|r| r["significant"] == false));
    // One run per side accounts for sampling noise only, and says so.
    let out = cpuprof().args(["diff", BASE[0], NEW[0], "-o", "/dev/null"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("one run per side"));
}

#[test]
fn profiles_without_times_are_compared_by_sample_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (base, new) = (dir.path().join("base.folded"), dir.path().join("new.folded"));
    std::fs::write(&base, "main;hot 30\nmain;cold 20\n").unwrap();
    std::fs::write(&new, "main;hot 60\nmain;cold 20\n").unwrap();
    let (base, new) = (base.to_str().unwrap(), new.to_str().unwrap());
    let (report, _) = diff_json(&[base], &[new], &[]);
    assert_eq!(report["unit"], "samples");
    assert_eq!((report["base"]["total"].as_f64(), report["new"]["total"].as_f64()), (Some(50.0), Some(80.0)));
    let hot = row(&report, "hot");
    assert_eq!(
        (hot["base_self"].as_f64(), hot["new_self"].as_f64(), hot["verdict"].as_str()),
        (Some(30.0), Some(60.0), Some("hotter"))
    );

    // Against a profile with times, the times are set aside: both sides count samples.
    let money = "fixtures/cpuprofile/money.cpuprofile";
    let (mixed, _) = diff_json(&[money], &[new], &[]);
    let samples = common::oracle(&[money, "--weight", "samples"])["samples"].as_i64().unwrap();
    assert_eq!((mixed["unit"].as_str(), mixed["base"]["samples"].as_i64()), (Some("samples"), Some(samples)));
    assert_eq!(mixed["base"]["total"].as_f64(), Some(samples as f64), "busy amounts are counts too");

    let table = cpuprof().args(["diff", base, new]).output().unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("+30 samples") && table.contains("50 samples busy per run"), "{table}");
    assert!(!table.contains(" ns"), "no times: {table}");

    // A time threshold means nothing here: a usage error, before any output.
    let out = cpuprof().args(["diff", base, new, "--fail-on", "self:+5ms"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cpuprof: error: --fail-on self:+5ms: a profile has no times (folded stacks), so the comparison is by sample \
         counts: give a share (pp) or a ratio (%)\n"
    );
    let out = cpuprof().args(["diff", base, new, "--fail-on", "self:+10pp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cpuprof().args(["diff", base, new, "--min-delta", "2ms"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    // A minimum change in samples per run: hot's +30 is below 31, above 29.
    for (min_delta, verdict) in [("31", "unchanged"), ("29", "hotter")] {
        let (report, _) = diff_json(&[base], &[new], &["--min-delta", min_delta]);
        assert_eq!(row(&report, "hot")["verdict"], verdict, "--min-delta {min_delta}");
    }
    let csv = cpuprof().args(["diff", base, new, "--format", "csv"]).output().unwrap();
    let mut csv = csv::Reader::from_reader(&csv.stdout[..]);
    assert_eq!(csv.headers().unwrap().iter().next_back(), Some("unit"));
    assert!(csv.records().all(|r| r.unwrap().iter().next_back() == Some("samples")));

    // The differential flame graph draws them, in samples.
    let svg = dir.path().join("d.svg");
    let out = cpuprof().args(["diff", base, new, "--flamegraph", svg.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("<title>hot (60 samples, 75.00%; +"), "{svg}");
}

/// Folded stacks of `functions` with these counts, into `dir/name`.
fn folded_file(dir: &std::path::Path, name: &str, counts: &[(&str, u64)]) -> String {
    let text = counts.iter().fold(String::new(), |mut text, (f, n)| {
        text.push_str(&format!("main;{f} {n}\n"));
        text
    });
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn p_values(report: &Value) -> Vec<f64> {
    report["rows"].as_array().unwrap().iter().map(|r| r["p_value"].as_f64().unwrap()).collect()
}

#[test]
fn identical_sides_are_quiet_at_every_scale() {
    // statrs' binomial tails broke from 10⁷ samples: p = 0.43 for identical sides, negative
    // (and so "significant") from 2×10⁷, and +1 sample in 6×10⁸ tripped the gate.
    let dir = tempfile::tempdir().unwrap();
    for scale in [10u64, 1_000, 100_000, 10_000_000, 100_000_000, 1_000_000_000] {
        let counts = [("work", scale), ("other", 2 * scale), ("tiny", 1), ("mid", scale / 7 + 3)];
        let p = folded_file(dir.path(), "p.folded", &counts);
        let (report, code) = diff_json(&[&p], &[&p], &["--fail-on", "self:+0pp", "--fail-on", "total:+0%"]);
        assert_eq!(code, Some(0), "{scale}");
        for r in report["rows"].as_array().unwrap() {
            assert_eq!((r["significant"].as_bool(), r["p_value"].as_f64()), (Some(false), Some(1.0)), "{scale}: {r}");
        }
    }
    let b = folded_file(dir.path(), "b.folded", &[("work", 127_662_000), ("other", 300_000_000)]);
    let n = folded_file(dir.path(), "n.folded", &[("work", 127_662_000), ("other", 300_000_001)]);
    let out = cpuprof().args(["diff", &b, &n, "--fail-on", "self:+0%", "-o", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // A real change at that scale is still found: +0.1% of 3×10⁸ is 30 standard deviations.
    let n = folded_file(dir.path(), "n.folded", &[("work", 127_662_000), ("other", 300_300_000)]);
    let (report, code) = diff_json(&[&b], &[&n], &["--fail-on", "self:+0%"]);
    assert_eq!((code, row(&report, "other")["verdict"].as_str()), (Some(3), Some("hotter")));
    assert!(p_values(&report).iter().all(|p| (0.0..=1.0).contains(p)));
}

#[test]
fn p_values_are_probabilities_on_every_fixture_diff() {
    let (report, _) = diff_json(&BASE, &NEW, &[]);
    let (one, _) = diff_json(&BASE[..1], &NEW[..1], &["--sort", "total"]);
    for p in p_values(&report).into_iter().chain(p_values(&one)) {
        assert!((0.0..=1.0).contains(&p), "{p}");
    }
}

#[test]
fn collapse_writes_counts_that_diff_can_test() {
    let dir = tempfile::tempdir().unwrap();
    let money = "fixtures/cpuprofile/money.cpuprofile";
    // Sample counts by default, as every folded reader takes them: they add up to the
    // profile's samples (the oracle counts them from the JSON).
    let out = cpuprof().args(["collapse", money, "--include-idle"]).output().unwrap();
    assert!(out.status.success());
    let total: u64 = String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    let samples = common::oracle(&[money, "--weight", "samples", "--include-idle"])["samples"].as_u64().unwrap();
    assert_eq!(total, samples);
    let folded = dir.path().join("money.folded");
    std::fs::write(&folded, &out.stdout).unwrap();
    let folded = folded.to_str().unwrap();
    let (report, code) = diff_json(&[folded], &[folded], &["--fail-on", "self:+0pp"]);
    assert_eq!((code, report["tested"].as_bool()), (Some(0), Some(true)));

    // Times only on request, and read back as times they cannot be tested: no row is
    // significant, the report says so, and a gate is refused rather than passed.
    let out = cpuprof().args(["collapse", money, "--weight", "time"]).output().unwrap();
    let ns = dir.path().join("money-ns.folded");
    std::fs::write(&ns, &out.stdout).unwrap();
    let ns = ns.to_str().unwrap();
    let (report, _) = diff_json(&[ns], &[ns], &["--folded-weight", "time"]);
    assert_eq!((report["tested"].as_bool(), report["unit"].as_str()), (Some(false), Some("ns")));
    assert!(report["rows"].as_array().unwrap().iter().all(|r| r["significant"] == false));
    assert!(report["warnings"][0].as_str().unwrap().contains("without sample counts"), "{report}");
    // Against itself nothing grew: no regression to call, the gate passes.
    let out = cpuprof().args(["diff", ns, ns, "--folded-weight", "time", "--fail-on", "self:+2pp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // A stack that grew, untested: refused.
    let text = std::fs::read_to_string(ns).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let (stack, weight) = first.rsplit_once(' ').unwrap();
    let grown = dir.path().join("money-ns-grown.folded");
    std::fs::write(&grown, format!("{stack} {}\n{rest}", weight.parse::<u64>().unwrap() * 3)).unwrap();
    let grown = grown.to_str().unwrap();
    let out =
        cpuprof().args(["diff", ns, grown, "--folded-weight", "time", "--fail-on", "self:+2pp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(
            "cpuprof: error: --fail-on: a profile's weights are times without sample counts (folded stacks read with \
             --folded-weight time), so no change can be tested"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_empty_side_never_passes_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let busy = folded_file(dir.path(), "busy.folded", &[("work", 50), ("other", 20)]);
    let idle = dir.path().join("idle.folded");
    std::fs::write(&idle, "(root);(idle) 500\n").unwrap();
    let idle = idle.to_str().unwrap();
    let gate = ["--fail-on", "self:+2pp"];
    // Only idle on one side, a side filtered empty, and one empty run among several.
    let cases: Vec<Vec<&str>> = vec![
        vec![idle, &busy],
        vec![&busy, idle],
        vec![&busy, &busy, "--focus", "nothing-matches-this"],
        vec!["--base", &busy, idle, &busy, "--new", &busy, &busy, &busy],
    ];
    for case in cases {
        let out = cpuprof().arg("diff").args(&case).args(gate).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Bad input (exit 1): the command line is right for other files.
        assert_eq!(out.status.code(), Some(1), "{case:?}: {stderr}");
        assert!(stderr.contains("no samples to compare") && out.stdout.is_empty(), "{case:?}: {stderr}");
    }
    assert!(String::from_utf8_lossy(&cpuprof().args(["diff", idle, &busy]).output().unwrap().stderr)
        .contains("idle.folded"));
}

/// `text` with every `from` replaced by `to`, into `dir/name`.
fn rewritten(dir: &std::path::Path, name: &str, text: &str, from: &str, to: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn two_checkouts_of_one_program_pair_every_function() {
    // The same recording, as if made in /ci/base and in /ci/pr: before, every function was
    // new or gone and the gate tripped on all of them.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::root().join(BASE[0])).unwrap();
    let prefix = text.split("file://").nth(1).unwrap().split("fixtures/diff/").next().unwrap().to_owned();
    assert!(prefix.starts_with('/'), "{prefix}");
    let base = rewritten(dir.path(), "base.cpuprofile", &text, &prefix, "/ci/base/");
    let new = rewritten(dir.path(), "new.cpuprofile", &text, &prefix, "/ci/pr%20build/");
    let (report, code) = diff_json(&[&base], &[&new], &["--fail-on", "self:+0pp", "--fail-on", "total:+0%"]);
    assert_eq!(code, Some(0), "{report}");
    for r in report["rows"].as_array().unwrap() {
        assert_eq!((r["verdict"].as_str(), r["significant"].as_bool()), (Some("unchanged"), Some(false)), "{r}");
    }
    let moved = &report["moved_files"][0];
    assert_eq!(
        (moved["base"].as_str(), moved["new"].as_str()),
        (Some("/ci/base/fixtures/diff/app.js"), Some("/ci/pr build/fixtures/diff/app.js"))
    );
    assert_eq!(row(&report, "doubledWork")["file"], "/ci/pr build/fixtures/diff/app.js");
    // The differential flame graph pairs them the same way: nothing new, nothing gone.
    let svg = dir.path().join("d.svg");
    let out = cpuprof().args(["diff", &base, &new, "-o", "/dev/null", "--flamegraph"]).arg(&svg).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("doubledWork /ci/pr build/fixtures/diff/app.js"), "labels name the new side's files");
    assert!(!svg.contains("(new)") && !svg.contains("(gone)") && !svg.contains("/ci/base/"), "unpaired frames");

    // The roots that unambiguous scripts show pair the ambiguous ones too (lib/x.js and
    // vendor/lib/x.js end alike); an index.js at the root pairs beside node_modules' ones.
    let verdicts = |r: &Value| -> Vec<String> {
        r["rows"].as_array().unwrap().iter().map(|r| r["verdict"].as_str().unwrap().to_owned()).collect()
    };
    let text = "main /ci/base/index.js:1;work /ci/base/lib/x.js:5 40\nmain /ci/base/index.js:1;work /ci/base/vendor/lib/x.js:5 40\nmain /ci/base/index.js:1;dep /ci/base/node_modules/dep/index.js:1 30\n";
    let base = rewritten(dir.path(), "base.folded", text, "", "");
    let new = rewritten(dir.path(), "new.folded", text, "/ci/base/", "/ci/pr/");
    let (guessed, code) = diff_json(&[&base], &[&new], &["--fail-on", "self:+0pp"]);
    assert_eq!(code, Some(0));
    assert!(verdicts(&guessed).iter().all(|v| v == "unchanged"), "{guessed}");
    assert_eq!(guessed["moved_files"].as_array().unwrap().len(), 4, "{guessed}");
    // One checkout: a hot function in another folder's util.js is another function.
    let base = rewritten(dir.path(), "base.folded", "main /app/main.js:1;parse /app/cache/util.js:1 40\n", "", "");
    let new = rewritten(dir.path(), "new.folded", "main /app/main.js:1;parse /app/http/util.js:1 40\n", "", "");
    let (report, code) = diff_json(&[&base], &[&new], &["--fail-on", "self:+2pp"]);
    assert_eq!((code, report["moved_files"].as_array().unwrap().len()), (Some(3), 0), "{report}");
    // Where the sides also share a script at one path, one moved script is no evidence of
    // two checkouts: the roots say so.
    let text = "main /ci/base/app.js:1;tool /usr/lib/tool.js:1 40\n";
    let base = rewritten(dir.path(), "base.folded", text, "", "");
    let new = rewritten(dir.path(), "new.folded", text, "/ci/base/", "/ci/pr/");
    let (guessed, _) = diff_json(&[&base], &[&new], &[]);
    assert!(verdicts(&guessed).iter().any(|v| v == "new"), "{guessed}");
    let (rooted, code) = diff_json(
        &[&base],
        &[&new],
        &["--base-root", "/ci/base", "--new-root", "file:///ci/pr/", "--fail-on", "self:+0pp"],
    );
    assert_eq!(code, Some(0));
    assert!(verdicts(&rooted).iter().all(|v| v == "unchanged"), "{rooted}");
    assert_eq!(rooted["rows"].as_array().unwrap().len(), 2, "{rooted}");
}

#[test]
fn different_programs_are_called_out() {
    let dir = tempfile::tempdir().unwrap();
    let a = folded_file(dir.path(), "a.folded", &[("alpha", 50), ("beta", 50)]);
    let b = folded_file(dir.path(), "b.folded", &[("gamma", 50), ("delta", 50)]);
    let out = cpuprof().args(["diff", &a, &b, "-o", "/dev/null"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("share almost no functions"), "{stderr}");
    let out = cpuprof().args(["diff", &a, &a, "-o", "/dev/null"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("share almost no functions"));
}

/// Copies `from` (a folder) into `to`, recursively.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn recordings_from_two_checkout_folders_pair_every_function() {
    // fixtures/workloads/same-name (four scripts, three functions called `handle`) recorded now
    // by node from two copies, as CI checks out a base and a pull request. Whether two real
    // runs differ significantly depends on the machine; that every function pairs does not.
    let dir = tempfile::tempdir().unwrap();
    let mut profiles = Vec::new();
    for side in ["base", "pull request"] {
        let checkout = dir.path().join(side);
        copy_tree(&common::root().join("fixtures/workloads/same-name"), &checkout.join("app"));
        let status = std::process::Command::new("node")
            .args(["--cpu-prof", "--cpu-prof-dir=prof", "--no-turbo-inlining", "app/main.js"])
            .current_dir(&checkout)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("node records the workload");
        assert!(status.success());
        let prof = std::fs::read_dir(checkout.join("prof")).unwrap().next().unwrap().unwrap().path();
        profiles.push(prof.to_str().unwrap().to_owned());
    }
    let (report, _) = diff_json(&[&profiles[0]], &[&profiles[1]], &[]);
    let moved: Vec<&str> =
        report["moved_files"].as_array().unwrap().iter().map(|m| m["new"].as_str().unwrap()).collect();
    for script in ["app/main.js", "app/orders.js", "app/users.js", "app/lib/handler.js"] {
        assert!(moved.iter().any(|m| m.ends_with(&format!("/pull request/{script}"))), "{script}: {moved:?}");
    }
    let app_rows: Vec<&Value> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["file"].as_str().is_some_and(|f| f.contains("/app/")))
        .collect();
    assert!(app_rows.len() >= 4, "{report}");
    let unpaired = |r: &Value| matches!(r["verdict"].as_str(), Some("new" | "gone"));
    for r in &app_rows {
        assert!(r["file"].as_str().unwrap().contains("/pull request/app/"), "{r}");
        // A function sampled once in one recording and never in the other is new or gone by
        // rights (the module's top-level code, say); a function left unpaired would be sampled
        // on both sides, so as a new row and a gone row, or often.
        if unpaired(r) {
            let samples = |side: &str| r[format!("{side}_total_samples")].as_i64().unwrap();
            assert!(samples("base").max(samples("new")) < 5, "unpaired: {r}");
            let other = app_rows.iter().find(|o| {
                unpaired(o) && o["name"] == r["name"] && o["line"] == r["line"] && o["verdict"] != r["verdict"]
            });
            assert!(other.is_none(), "unpaired: {r} and {other:?}");
        }
    }
    assert_eq!(row(&report, "handle")["name"], "handle");
    assert_eq!(report["rows"].as_array().unwrap().iter().filter(|r| r["name"] == "handle").count(), 3);
}

/// One run by the oracle: self weight per (name, executing line), and each function's start line.
type RunLines = (std::collections::HashMap<(String, u64), i64>, std::collections::HashMap<String, u64>);

/// Self weight per (name, line) of one profile by the oracle (`fixtures/oracle/top.js --by
/// line`), and each function's start line (`--by function`).
fn oracle_lines(file: &str) -> RunLines {
    let run = |by: &str| -> Value {
        let out = std::process::Command::new("node")
            .args(["fixtures/oracle/top.js", file, "--by", by])
            .current_dir(common::root())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let key = |r: &Value| (r["name"].as_str().unwrap_or("").to_owned(), r["line"].as_u64().unwrap_or(0));
    let lines = run("line")["rows"].as_array().unwrap().iter().map(|r| (key(r), r["self"].as_i64().unwrap())).collect();
    let starts = run("function")["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["file"].as_str().is_some_and(|f| f.ends_with("/fixtures/diff/app.js")))
        .map(key)
        .collect();
    (lines, starts)
}

#[test]
fn by_line_compares_each_line_at_its_offset_into_its_function() {
    // The functions moved between the versions (see fixtures/diff/README.md): a line is the
    // same line when it sits at the same offset into the same function. Expected per-run means
    // come from the oracle's per-line self times of each run.
    let (report, _) = diff_json(&BASE, &NEW, &["--by", "line"]);
    let sides: Vec<Vec<_>> = [&BASE, &NEW].iter().map(|side| side.iter().map(|f| oracle_lines(f)).collect()).collect();
    let mean_at = |runs: &[RunLines], name: &str, offset: i64| {
        let total: i64 = runs
            .iter()
            .map(|(lines, starts)| {
                starts.get(name).map_or(0, |start| {
                    let line = u64::try_from(i64::try_from(*start).unwrap() + offset).unwrap();
                    lines.get(&(name.to_owned(), line)).copied().unwrap_or(0)
                })
            })
            .sum();
        total as f64 / runs.len() as f64
    };
    let mut compared = 0;
    for row in report["rows"].as_array().unwrap() {
        let name = row["name"].as_str().unwrap();
        if !row["file"].as_str().is_some_and(|f| f.ends_with("/fixtures/diff/app.js")) {
            continue;
        }
        // The row's line is the new side's (the base side's for gone lines).
        let side = if row["verdict"] == "gone" { &sides[0] } else { &sides[1] };
        let start = side[0].1.get(name).or_else(|| side[1].1.get(name)).copied().expect("the function's start");
        let offset = i64::try_from(row["line"].as_u64().unwrap()).unwrap() - i64::try_from(start).unwrap();
        for (key, runs) in [("base_self", &sides[0]), ("new_self", &sides[1])] {
            let want = mean_at(runs, name, offset);
            let got = row[key].as_f64().unwrap();
            assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "{name} +{offset} {key}: {got} vs oracle {want}");
        }
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} lines of app.js compared");
    // doubledWork's loop lines are hotter, each about 2× (its N doubled); removedWork's are gone.
    let rows = report["rows"].as_array().unwrap();
    let hotter_doubled = rows.iter().filter(|r| r["name"] == "doubledWork" && r["verdict"] == "hotter").count();
    assert!(hotter_doubled >= 2, "doubledWork's lines: {hotter_doubled} hotter");
    assert!(rows.iter().filter(|r| r["name"] == "removedWork").all(|r| r["verdict"] == "gone"));
}

#[test]
fn markdown_links_locations_to_their_source() {
    let template = "https://github.com/o/r/blob/abc123/{path}#L{line}";
    let out = cpuprof()
        // The folder the fixtures were recorded in, as they name it.
        .args(["diff", "--format", "markdown", "-n", "4", "--link", template])
        .args(["--base-root", "/work/main/fixtures/diff", "--new-root", "/work/main/fixtures/diff", "--base"])
        .args(BASE)
        .arg("--new")
        .args(NEW)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = String::from_utf8(out.stdout).unwrap();
    let row = md.lines().find(|l| l.starts_with("| ") && l.contains("`doubledWork`")).expect("the doubledWork row");
    assert!(row.contains("](https://github.com/o/r/blob/abc123/app.js#L62) |"), "{row}");
    // Not a web address: refused (exit 2), so no `javascript:` link is ever written.
    let bad = cpuprof()
        .args(["diff", "--format", "markdown", "--link", "javascript:alert(1)/{path}"])
        .args([BASE[0], NEW[0]])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_renamed_script_is_said_and_paired_by_map() {
    // money.js renamed money-v2.js between the versions (the same recording, its script's url
    // rewritten): every function is new or gone (issue 51: nothing said why), and --map pairs
    // them, leaving the comparison of a profile with itself.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::root().join("fixtures/cpuprofile/money.cpuprofile")).unwrap();
    assert!(text.contains("/workloads/money.js\""));
    let renamed = dir.path().join("renamed.cpuprofile");
    std::fs::write(&renamed, text.replace("/workloads/money.js\"", "/workloads/money-v2.js\"")).unwrap();
    let renamed = renamed.to_str().unwrap();
    let (report, code) = diff_json(&["fixtures/cpuprofile/money.cpuprofile"], &[renamed], &[]);
    assert_eq!(code, Some(0));
    let warnings: Vec<&str> = report["warnings"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(
        warnings.iter().any(|w| w.contains("money.js is gone") && w.contains("money-v2.js is new")),
        "{warnings:?}"
    );
    assert!(warnings.iter().any(|w| w.ends_with("--map money.js=money-v2.js")), "{warnings:?}");
    let verdicts: Vec<&Value> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"] == "roundMoney")
        .map(|r| &r["verdict"])
        .collect();
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert!(verdicts.contains(&&Value::from("gone")) && verdicts.contains(&&Value::from("new")), "{verdicts:?}");
    let (paired, code) =
        diff_json(&["fixtures/cpuprofile/money.cpuprofile"], &[renamed], &["--map", "money.js=money-v2.js"]);
    assert_eq!(code, Some(0));
    let warnings = paired["warnings"].to_string();
    assert!(!warnings.contains("renamed") && !warnings.contains("--map"), "{warnings}");
    let rows = paired["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["verdict"] == "unchanged" && r["significant"] == false), "{paired}");
    assert_eq!(row(&paired, "roundMoney")["base_self"], row(&paired, "roundMoney")["new_self"]);
    // A malformed pair, or one that names no script of its side, is a usage error saying why.
    for (map, says) in [("money.js", "expected OLD=NEW"), ("nosuch.js=money-v2.js", "no base script is nosuch.js")] {
        let out =
            cpuprof().args(["diff", "fixtures/cpuprofile/money.cpuprofile", renamed, "--map", map]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{map}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{map}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
