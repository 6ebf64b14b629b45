//! `cpuprof diff --explain` on a recorded pair where V8 inlines a function in NEW only
//! (`fixtures/inline/`, see its README; issue 19 §3): only `priceOrder` changed, it became small
//! enough for TurboFan to inline it into its caller `processBatch`, so in NEW its work shows as
//! `processBatch`'s self time. A plain diff ranks `processBatch` first as hotter; `--explain` must
//! say that the time moved from `priceOrder` into `processBatch`.
//!
//! The fixture's property is measured with the independent oracle (`fixtures/oracle/top.js`), never
//! with cpuprof's output.

use crate::common;

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
// `diff --explain` itself, as /work/notes/i19-contract.md defines it ("`cpuprof diff … --explain
// [N]`", landed on main at d5624b4): each explained row (the first N significant rows, N = 5 by
// default) gets `"explain": {"callers": [C], "callees": [C], "moved": [M]}`, C = {name, file, base,
// new, delta, base_samples, new_samples, p_value} (base/new per run), M = {from, from_file, into,
// into_file, weight, inlining, likely_inlined, text}; the table and Markdown add a section "where
// the changes came from" with M's sentence.
// ---------------------------------------------------------------------------------------------

/// The sentence for this fixture's inlining.
const SENTENCE: &str = "time moved from priceOrder into processBatch (priceOrder likely inlined in NEW)";

/// The `moved` entries of a diff row's `explain`.
fn moved(row: &Value) -> Vec<Value> {
    row["explain"]["moved"].as_array().cloned().unwrap_or_default()
}

/// The oracle's folded stacks of `file` (`node fixtures/oracle/top.js FILE --fold`): each stack as
/// its frames' function names (root first; the app's functions only by name when their url is
/// the app's, others as "name url") and its weight in ns.
fn oracle_fold(file: &str) -> Vec<(Vec<String>, f64)> {
    let out = std::process::Command::new("node")
        .args(["fixtures/oracle/top.js", file, "--fold"])
        .current_dir(common::root())
        .output()
        .expect("node must be installed to run the oracle");
    assert!(out.status.success(), "oracle --fold failed on {file}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|line| {
            let (stack, weight) = line.rsplit_once(' ').expect("folded line: STACK WEIGHT");
            let frames = stack
                .split(';')
                .map(|f| match f.split_once(' ') {
                    Some((name, loc)) if loc.rsplit_once(':').is_some_and(|(url, _)| url.ends_with(APP)) => {
                        name.to_owned()
                    }
                    _ => f.to_owned(),
                })
                .collect();
            (frames, weight.parse().expect("weight"))
        })
        .collect()
}

/// Per run mean of the weight of the stacks in which `child` is called directly by `parent`
/// (the child's total under that parent; recursion does not occur in this program).
fn under(files: &[&str], parent: &str, child: &str) -> f64 {
    let sum: f64 = files
        .iter()
        .flat_map(|f| oracle_fold(f))
        .filter(|(frames, _)| frames.windows(2).any(|w| w[0] == parent && w[1] == child))
        .map(|(_, w)| w)
        .sum();
    sum / files.len() as f64
}

fn close(ours: f64, theirs: f64) -> bool {
    (ours - theirs).abs() <= 1e-6 * theirs.abs().max(1.0)
}

fn explained(report: &Value) -> Vec<&str> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("explain").is_some())
        .map(|r| r["name"].as_str().unwrap())
        .collect()
}

#[test]
fn explain_names_the_moved_time_not_the_caller() {
    // Independent numbers: priceOrder's time under processBatch per run, each side.
    let (price_base, price_new) =
        (under(&BASE, "processBatch", "priceOrder"), under(&NEW, "processBatch", "priceOrder"));
    let batch_total = (
        oracle_means(&oracle_reports(&BASE), "processBatch").total_ns,
        oracle_means(&oracle_reports(&NEW), "processBatch").total_ns,
    );
    let report = diff_json(&BASE, &NEW, &["--explain"]);
    let batch = diff_row(&report, "processBatch");
    let explain = &batch["explain"];

    // The move is named, in the right direction, with the callee's loss as its weight.
    let moves = moved(batch);
    assert_eq!(moves.len(), 1, "one move into processBatch: {explain}");
    let m = &moves[0];
    assert_eq!(m["from"], "priceOrder", "{m}");
    assert_eq!(m["into"], "processBatch", "{m}");
    for key in ["from_file", "into_file"] {
        assert!(m[key].as_str().is_some_and(|f| f.ends_with(APP)), "{key}: {m}");
    }
    assert_eq!(m["inlining"], "inlined-in-new", "{m}");
    assert_eq!(m["likely_inlined"], true, "{m}");
    assert_eq!(m["text"], SENTENCE, "{m}");
    let weight = m["weight"].as_f64().expect("weight");
    assert!(close(weight, price_base - price_new), "moved {weight} ns vs oracle's loss {} ns", price_base - price_new);

    // The callee that lost the time, with the oracle's per-run numbers on both sides.
    let callees = explain["callees"].as_array().expect("callees");
    let c =
        callees.iter().find(|c| c["name"] == "priceOrder").unwrap_or_else(|| panic!("no callee priceOrder: {explain}"));
    assert!(close(c["base"].as_f64().unwrap(), price_base), "callee base {} vs oracle {price_base}", c["base"]);
    assert!(close(c["new"].as_f64().unwrap(), price_new), "callee new {} vs oracle {price_new}", c["new"]);
    // The caller (main) brings processBatch's whole total, which changed little: it is not blamed.
    let up = explain["callers"].as_array().expect("callers");
    let main = up.iter().find(|c| c["name"] == "main").unwrap_or_else(|| panic!("no caller main: {explain}"));
    assert!(
        close(main["base"].as_f64().unwrap(), batch_total.0),
        "caller base {} vs oracle {}",
        main["base"],
        batch_total.0
    );
    assert!(
        close(main["new"].as_f64().unwrap(), batch_total.1),
        "caller new {} vs oracle {}",
        main["new"],
        batch_total.1
    );

    // priceOrder's own row tells the same move (not "priceOrder got faster" alone).
    let price_moves = moved(diff_row(&report, "priceOrder"));
    assert!(price_moves.iter().any(|m| m["from"] == "priceOrder" && m["into"] == "processBatch"), "{price_moves:?}");

    // The table says it in words.
    let out = diff(&BASE, &NEW, &["--explain"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("where the changes came from"), "{table}");
    assert!(table.contains(SENTENCE), "table without the sentence:\n{table}");
}

#[test]
fn explain_n_explains_the_first_n_significant_rows() {
    // Two significant rows here (processBatch hotter, priceOrder cooler), in that rank order.
    assert_eq!(explained(&diff_json(&BASE, &NEW, &["--explain"])), ["processBatch", "priceOrder"]);
    assert_eq!(explained(&diff_json(&BASE, &NEW, &["--explain", "1"])), ["processBatch"]);
    // Without --explain, no row has the key.
    assert!(explained(&diff_json(&BASE, &NEW, &[])).is_empty());
}

#[test]
fn explain_claims_no_inlining_where_there_is_none() {
    // Controls: each side against itself and the `fixtures/diff` pair (sibling functions under
    // `main` made faster or slower, nothing inlined) explain no moved time; this pair reversed
    // moves time the other way (from processBatch into priceOrder: priceOrder is inlined in BASE
    // there), so it must not claim the forward direction.
    let diff_base =
        ["fixtures/diff/base.1.cpuprofile", "fixtures/diff/base.2.cpuprofile", "fixtures/diff/base.3.cpuprofile"];
    let diff_new =
        ["fixtures/diff/new.1.cpuprofile", "fixtures/diff/new.2.cpuprofile", "fixtures/diff/new.3.cpuprofile"];
    for (base, new, reversed) in
        [(&BASE, &BASE, false), (&NEW, &NEW, false), (&diff_base, &diff_new, false), (&NEW, &BASE, true)]
    {
        let report = diff_json(base, new, &["--explain"]);
        let mut moves = 0;
        for r in report["rows"].as_array().unwrap() {
            for m in moved(r) {
                moves += 1;
                assert!(reversed, "{base:?} -> {new:?}: {} claims moved time {m}", r["name"]);
                assert_eq!(m["from"], "processBatch", "reversed pair: {m}");
                assert_eq!(m["into"], "priceOrder", "reversed pair: {m}");
                assert_eq!(m["inlining"], "no-longer-inlined-in-new", "reversed pair: {m}");
            }
        }
        assert_eq!(moves > 0, reversed, "{base:?} -> {new:?}");
        let table = String::from_utf8_lossy(&diff(base, new, &["--explain"]).stdout).into_owned();
        assert!(!table.contains(SENTENCE), "{base:?} -> {new:?}:\n{table}");
    }
}

/// A `.cpuprofile` of `file:///app.js` with `stacks` (`name@line;…` → samples, 1 ms each) in a
/// shuffled order that `seed` fixes.
fn hand_profile(dir: &std::path::Path, name: &str, stacks: &[(&str, u64)], seed: u64) -> String {
    let mut nodes = vec![serde_json::json!({"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0",
        "url": "", "lineNumber": -1, "columnNumber": -1}, "children": []})];
    let mut ids: std::collections::HashMap<Vec<String>, usize> = std::collections::HashMap::from([(vec![], 1)]);
    let mut samples = Vec::new();
    for (stack, count) in stacks {
        let mut path: Vec<String> = Vec::new();
        for frame in stack.split(';') {
            let (function, line) = frame.split_once('@').unwrap();
            let parent = ids[&path];
            path.push(frame.to_owned());
            if !ids.contains_key(&path) {
                let id = nodes.len() + 1;
                nodes.push(serde_json::json!({"id": id, "callFrame": {"functionName": function, "scriptId": "1",
                    "url": "file:///app.js", "lineNumber": line.parse::<u32>().unwrap(), "columnNumber": 0},
                    "children": []}));
                nodes[parent - 1]["children"].as_array_mut().unwrap().push(id.into());
                ids.insert(path.clone(), id);
            }
        }
        samples.extend(std::iter::repeat_n(ids[&path], usize::try_from(*count).unwrap()));
    }
    // A fixed shuffle (xorshift), so that no stack's samples sit together.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..samples.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        samples.swap(i, usize::try_from(state % (i as u64 + 1)).unwrap());
    }
    let n = samples.len();
    let profile = serde_json::json!({"nodes": nodes, "startTime": 0, "endTime": n * 1000,
        "samples": samples, "timeDeltas": vec![1000; n]});
    let path = dir.join(name);
    std::fs::write(&path, profile.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn same_named_functions_of_one_file_are_never_taken_for_a_move() {
    // `g` (called by the anonymous function at line 11) is deleted in NEW; another anonymous
    // function of the same file, at line 51, got slower on its own by about as much. Nothing
    // was inlined: the caller of `g` did not change.
    let dir = tempfile::tempdir().unwrap();
    let base =
        [("main@1", 50), ("main@1;@10", 20), ("main@1;@10;g@30", 100), ("main@1;@50", 100), ("main@1;k@70", 300)];
    let new = [("main@1", 50), ("main@1;@10", 20), ("main@1;@50", 200), ("main@1;k@70", 300)];
    let jitter = |stacks: &[(&'static str, u64)], run: u64| -> Vec<(&'static str, u64)> {
        stacks.iter().enumerate().map(|(i, (s, c))| (*s, c + (run * 3 + i as u64) % 5)).collect()
    };
    let files = |side: &str, stacks: &[(&'static str, u64)]| -> Vec<String> {
        (0..3)
            .map(|run| hand_profile(dir.path(), &format!("{side}.{run}.cpuprofile"), &jitter(stacks, run), run + 1))
            .collect()
    };
    let (b, n) = (files("base", &base), files("new", &new));
    let (b, n): (Vec<&str>, Vec<&str>) =
        (b.iter().map(String::as_str).collect(), n.iter().map(String::as_str).collect());
    let report = diff_json(&b, &n, &["--explain"]);
    let explained = explained(&report);
    assert!(explained.contains(&"g"), "g's removal is explained: {explained:?}");
    for row in report["rows"].as_array().unwrap() {
        assert!(moved(row).is_empty(), "{} claims a move: {:?}", row["name"], moved(row));
    }
    // The same-named callers are told apart by their lines.
    let g = report["rows"].as_array().unwrap().iter().find(|r| r["name"] == "g").expect("g's row");
    let callers = g["explain"]["callers"].as_array().unwrap();
    assert_eq!(callers.len(), 1, "{callers:?}");
    assert_eq!((callers[0]["name"].as_str(), callers[0]["line"].as_u64()), (Some("(anonymous)"), Some(11)));
}
