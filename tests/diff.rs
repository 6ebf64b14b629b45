//! `cpuprof diff` on real before/after recordings (`fixtures/diff/`, see its README): one
//! function made ~2× slower, one ~1.2× slower, one 2× faster, one removed, one added, one
//! untouched, three runs per side, and the functions moved to other lines.

mod common;

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
    // A threshold nothing crosses passes.
    let out = cpuprof().args(["diff", BASE[0], NEW[0], "--fail-on", "self:+50pp", "-o", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Bad rules are usage errors.
    let out = cpuprof().args(["diff", BASE[0], NEW[0], "--fail-on", "self:2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
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
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert!(table[0].contains("function") && table[0].contains("verdict"));
    assert!(table[1].contains("doubledWork") && table[1].ends_with("| hotter |"), "{}", table[1]);
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
    assert!(out.stdout.is_empty() && String::from_utf8_lossy(&out.stderr).contains("sample counts"));
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
