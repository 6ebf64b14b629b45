//! `cpuprof diff --explain` on a recorded pair where V8 inlines a function in NEW only
//! (`fixtures/inline/`, see its README; issue 19 §3): only `priceOrder` changed, it became small
//! enough for TurboFan to inline it into its caller `processBatch`, so in NEW its work shows as
//! `processBatch`'s self time. A plain diff ranks `processBatch` first as hotter; `--explain` must
//! say that the time moved from `priceOrder` into `processBatch`.
//!
//! The fixture's property is measured with the independent oracle (`fixtures/oracle/top.js`), never
//! with cpuprof's output.

mod common;

use common::{cpuprof, oracle};
use serde_json::Value;

const BASE: [&str; 3] =
    ["fixtures/inline/base.1.cpuprofile", "fixtures/inline/base.2.cpuprofile", "fixtures/inline/base.3.cpuprofile"];
const NEW: [&str; 3] =
    ["fixtures/inline/new.1.cpuprofile", "fixtures/inline/new.2.cpuprofile", "fixtures/inline/new.3.cpuprofile"];
/// Both sides were recorded from this path (record.sh copies base.js / new.js there).
const APP: &str = "/fixtures/inline/app.js";

/// The oracle's `top` row of the app's function `name` in `file` (None when it has no samples).
fn oracle_row(report: &Value, name: &str) -> Option<Value> {
    let mut rows = report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["name"] == name && r["file"].as_str().is_some_and(|f| f.ends_with(APP)));
    let row = rows.next().cloned();
    assert!(rows.next().is_none(), "two oracle rows named {name}");
    row
}

/// Mean per run of the oracle's `self` and `total` (ns) of the app's function `name`.
struct Means {
    self_ns: f64,
    total_ns: f64,
}

/// The oracle's `top` report of each file.
fn oracle_reports(files: &[&str]) -> Vec<Value> {
    files.iter().map(|f| oracle(&[f])).collect()
}

/// `self` of the app's function `name` in one oracle report (0 when it has no samples).
fn self_in(report: &Value, name: &str) -> f64 {
    oracle_row(report, name).map_or(0.0, |r| r["self"].as_f64().expect("self"))
}

fn oracle_means(reports: &[Value], name: &str) -> Means {
    let (mut self_ns, mut total_ns) = (0.0, 0.0);
    for report in reports {
        if let Some(row) = oracle_row(report, name) {
            self_ns += row["self"].as_f64().expect("self");
            total_ns += row["total"].as_f64().expect("total");
        }
    }
    let n = reports.len() as f64;
    Means { self_ns: self_ns / n, total_ns: total_ns / n }
}

fn diff(base: &[&str], new: &[&str], extra: &[&str]) -> std::process::Output {
    let out = cpuprof().args(["diff", "--base"]).args(base).arg("--new").args(new).args(extra).output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn diff_json(base: &[&str], new: &[&str], extra: &[&str]) -> Value {
    let out = diff(base, new, &[&["--all", "--format", "json"], extra].concat());
    serde_json::from_slice(&out.stdout).expect("diff prints JSON")
}

fn diff_row<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == name && r["file"].as_str().is_some_and(|f| f.ends_with(APP)))
        .unwrap_or_else(|| panic!("no diff row {name}"))
}

#[test]
fn the_fixture_moves_price_orders_self_time_into_process_batch() {
    let (base, new) = (oracle_reports(&BASE), oracle_reports(&NEW));
    let price = (oracle_means(&base, "priceOrder"), oracle_means(&new, "priceOrder"));
    let batch = (oracle_means(&base, "processBatch"), oracle_means(&new, "processBatch"));
    let lost = price.0.self_ns - price.1.self_ns;
    let gained = batch.1.self_ns - batch.0.self_ns;
    let numbers = format!(
        "priceOrder self {:.1} -> {:.1} ms, processBatch self {:.1} -> {:.1} ms, total {:.1} -> {:.1} ms",
        price.0.self_ns / 1e6,
        price.1.self_ns / 1e6,
        batch.0.self_ns / 1e6,
        batch.1.self_ns / 1e6,
        batch.0.total_ns / 1e6,
        batch.1.total_ns / 1e6
    );
    // BASE: priceOrder is a real, hot function (not inlined).
    assert!(price.0.self_ns > 0.3 * batch.0.total_ns.max(1.0), "{numbers}");
    // NEW: it nearly disappears ...
    assert!(price.1.self_ns < 0.1 * price.0.self_ns, "{numbers}");
    // ... and its caller's self grows by about what it lost ...
    assert!(gained >= 0.7 * lost, "{numbers}");
    // ... while the caller's total (which holds priceOrder's time either way) barely moves: the time
    // moved, it did not appear. (The slight real slowdown in new.js is ~7 % of it.)
    assert!((batch.1.total_ns - batch.0.total_ns).abs() < 0.2 * lost, "{numbers}");
    // In BASE, priceOrder's time is inside processBatch's total (it is called from there).
    assert!(batch.0.total_ns >= 0.95 * (price.0.self_ns + batch.0.self_ns), "{numbers}");
    // Every run shows it, not only the means.
    for (i, (b, n)) in base.iter().zip(&new).enumerate() {
        assert!(self_in(n, "priceOrder") < 0.1 * self_in(b, "priceOrder"), "{}", NEW[i]);
        assert!(self_in(n, "processBatch") > 10.0 * self_in(b, "processBatch"), "{}", NEW[i]);
    }
}

#[test]
fn plain_diff_shows_the_symptom_blaming_the_caller() {
    // What the new user saw: the caller ranks first as hotter, the changed function as cooler.
    let report = diff_json(&BASE, &NEW, &[]);
    assert_eq!(report["rows"][0]["name"], "processBatch", "{}", report["rows"][0]);
    assert_eq!(diff_row(&report, "processBatch")["verdict"], "hotter");
    let verdict = diff_row(&report, "priceOrder")["verdict"].as_str().unwrap().to_owned();
    assert!(matches!(verdict.as_str(), "cooler" | "gone"), "priceOrder {verdict}");
    // The per-run means are the oracle's.
    let (base, new) = (oracle_reports(&BASE), oracle_reports(&NEW));
    for (name, side, key) in [
        ("processBatch", &base, "base_self"),
        ("processBatch", &new, "new_self"),
        ("priceOrder", &base, "base_self"),
        ("priceOrder", &new, "new_self"),
    ] {
        let ours = diff_row(&report, name)[key].as_f64().unwrap();
        let theirs = oracle_means(side, name).self_ns;
        assert!((ours - theirs).abs() <= 1e-6 * theirs.max(1.0), "{name} {key}: cpuprof {ours} vs oracle {theirs}");
    }
}

// ---------------------------------------------------------------------------------------------
// `diff --explain` itself. Not on main yet: these tests are ignored until it lands.
// PROVISIONAL JSON SHAPE (adjust to the lead's contract when it exists; every assertion that
// depends on it is marked `PROVISIONAL`): each of the top N changed rows gets
//   "explain": {"callers": [...], "callees": [...],
//               "moved": [{"from": "priceOrder", "into": "processBatch", "weight": NS,
//                          "likely_inlined": true}]}
// and the table prints the sentence
//   time moved from priceOrder into processBatch (priceOrder likely inlined in NEW)
// ---------------------------------------------------------------------------------------------

/// PROVISIONAL: the sentence the table prints for the inlining case.
const SENTENCE: &str = "time moved from priceOrder into processBatch (priceOrder likely inlined in NEW)";

/// PROVISIONAL: the `moved` entries of a diff row's `explain`.
fn moved(row: &Value) -> Vec<Value> {
    row["explain"]["moved"].as_array().cloned().unwrap_or_default()
}

#[test]
#[ignore = "needs `cpuprof diff --explain` (issue 19 §3), not on main yet; JSON shape provisional"]
fn explain_names_the_moved_time_not_the_caller() {
    let lost = oracle_means(&oracle_reports(&BASE), "priceOrder").self_ns
        - oracle_means(&oracle_reports(&NEW), "priceOrder").self_ns;
    let report = diff_json(&BASE, &NEW, &["--explain"]);
    let batch = diff_row(&report, "processBatch");
    // PROVISIONAL: explain's shape.
    let explain = &batch["explain"];
    assert!(explain["callers"].is_array(), "{explain}");
    assert!(explain["callees"].is_array(), "{explain}");
    assert!(
        explain["callees"].as_array().unwrap().iter().any(|c| c["name"] == "priceOrder"),
        "priceOrder is processBatch's callee in BASE: {explain}"
    );
    let moved = moved(batch);
    let m = moved
        .iter()
        .find(|m| m["from"] == "priceOrder")
        .unwrap_or_else(|| panic!("processBatch's explain names no time moved from priceOrder: {explain}"));
    assert_eq!(m["into"], "processBatch", "{m}");
    assert_eq!(m["likely_inlined"], true, "{m}");
    // The moved weight is about what priceOrder lost per run (oracle: ~189 ms).
    let weight = m["weight"].as_f64().expect("weight");
    assert!((0.7 * lost..=1.3 * lost).contains(&weight), "moved {weight} ns vs oracle's priceOrder loss {lost} ns");
    // The explanation does not blame another caller/callee: nothing else moved into processBatch.
    assert_eq!(moved.len(), 1, "{explain}");

    // The table says it in words.
    let out = diff(&BASE, &NEW, &["--explain"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains(SENTENCE), "table without the sentence:\n{table}");
}

#[test]
#[ignore = "needs `cpuprof diff --explain` (issue 19 §3), not on main yet; JSON shape provisional"]
fn explain_only_explains_the_top_n_rows() {
    // PROVISIONAL: `--explain N` explains the N first changed rows; here the first is processBatch.
    let report = diff_json(&BASE, &NEW, &["--explain", "1"]);
    let explained: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("explain").is_some_and(|e| !e.is_null()))
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(explained, ["processBatch"]);
}

#[test]
#[ignore = "needs `cpuprof diff --explain` (issue 19 §3), not on main yet; JSON shape provisional"]
fn explain_claims_no_inlining_where_there_is_none() {
    // Controls: the same side against itself and the `fixtures/diff` pair (sibling functions
    // under `main` made faster or slower, nothing inlined) explain no moved time; this pair
    // reversed moves time the other way (from processBatch into priceOrder: priceOrder is
    // inlined in BASE there), so it must not claim the forward direction.
    let diff_base =
        ["fixtures/diff/base.1.cpuprofile", "fixtures/diff/base.2.cpuprofile", "fixtures/diff/base.3.cpuprofile"];
    let diff_new =
        ["fixtures/diff/new.1.cpuprofile", "fixtures/diff/new.2.cpuprofile", "fixtures/diff/new.3.cpuprofile"];
    for (base, new, reversed) in
        [(&BASE, &BASE, false), (&NEW, &NEW, false), (&diff_base, &diff_new, false), (&NEW, &BASE, true)]
    {
        let report = diff_json(base, new, &["--explain"]);
        for r in report["rows"].as_array().unwrap() {
            for m in moved(r) {
                // PROVISIONAL: field names.
                assert!(reversed, "{base:?} -> {new:?}: {} claims moved time {m}", r["name"]);
                assert!(
                    !(m["from"] == "priceOrder" && m["into"] == "processBatch"),
                    "reversed pair: time moved from processBatch into priceOrder, not back: {m}"
                );
            }
        }
        let table = String::from_utf8_lossy(&diff(base, new, &["--explain"]).stdout).into_owned();
        assert!(!table.contains(SENTENCE), "{base:?} -> {new:?}:\n{table}");
    }
}
