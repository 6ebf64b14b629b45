//! `cpuprof tree`, `callers`, `callees` and `explain` (issue 19) end to end, against the
//! independent JavaScript oracle `fixtures/oracle/calltree.js` (SPEC.md §9, written from Chrome
//! DevTools' Top-Down / Bottom-Up trees and the contract, on top of `top.js`'s samples, weights
//! and function keys): every recorded profile under several option sets, every number compared;
//! the oracle checked against `top.js` and against a tiny profile worked out by hand; and the
//! contract's sums checked on cpuprof's own output.

use crate::common;

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use common::{cpuprof, files, root};
use serde_json::Value;

// ---------------------------------------------------------------- running both sides

/// Runs the oracle on `fixture` with several argument lists at once (one node process per file).
fn oracle_batch(fixture: &str, requests: &[Vec<String>]) -> Vec<Value> {
    let requests: Vec<Value> = requests.iter().map(|r| serde_json::json!(r)).collect();
    oracle_requests(fixture, &requests)
}

/// Runs the oracle on `fixture` with several --batch requests (see calltree.js's batchRequest).
fn oracle_requests(fixture: &str, requests: &[Value]) -> Vec<Value> {
    let mut child = Command::new("node")
        .args(["fixtures/oracle/calltree.js", fixture, "--batch"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node must be installed to run the oracle");
    let input = serde_json::to_vec(requests).expect("requests as JSON");
    // The oracle reads all of its input before it writes anything: no deadlock.
    child.stdin.take().expect("stdin").write_all(&input).expect("write the requests");
    let out = child.wait_with_output().expect("oracle runs");
    assert!(out.status.success(), "oracle failed on {fixture}: {}", String::from_utf8_lossy(&out.stderr));
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).expect("oracle prints JSON");
    assert_eq!(results.len(), requests.len());
    for (request, result) in requests.iter().zip(&results) {
        assert!(result.get("error").is_none(), "oracle refused {fixture} {request:?}: {}", result["error"]);
    }
    results
}

fn oracle_one(fixture: &str, request: &[&str]) -> Value {
    oracle_batch(fixture, &[request.iter().map(|s| (*s).to_owned()).collect()]).remove(0)
}

/// `cpuprof ARGS --format json`, asked of the library ([`common::library_json`]): the exit code
/// the command line would give, the JSON (Null on an error) and the error.
fn ours(args: &[&str]) -> (i32, Value, String) {
    match common::library_json(args) {
        Ok(json) => (0, json, String::new()),
        Err((code, error)) => (code, Value::Null, error),
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

// ---------------------------------------------------------------- comparing JSON

/// Every difference between cpuprof's JSON and the oracle's: same keys, same array lengths, the
/// same strings and integers exactly, `*_pct` / `pct` within 1e-9. Paths name the nodes.
fn differences(ours: &Value, theirs: &Value) -> Vec<String> {
    let mut out = Vec::new();
    // `warnings` are messages for people (what stderr said), not numbers an oracle computes.
    let mut ours = ours.clone();
    if let Some(object) = ours.as_object_mut() {
        object.remove("warnings");
    }
    diff_into(&ours, theirs, "", "", &mut out);
    out
}

fn is_pct(key: &str) -> bool {
    key == "pct" || key.ends_with("_pct")
}

fn label(v: &Value, index: usize) -> String {
    match (v.get("name").and_then(Value::as_str), v.get("line")) {
        (Some(name), Some(line)) if !line.is_null() => format!("[{index} {name}:{line}]"),
        (Some(name), _) => format!("[{index} {name}]"),
        _ => format!("[{index}]"),
    }
}

fn diff_into(a: &Value, b: &Value, key: &str, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                out.push(format!("{path}: cpuprof has no \"{k}\" (oracle: {})", short(&y[k])));
            }
            for k in x.keys().filter(|k| !y.contains_key(*k)) {
                out.push(format!("{path}: cpuprof has \"{k}\" = {}, the oracle has none", short(&x[k])));
            }
            for (k, v) in x {
                if let Some(w) = y.get(k) {
                    diff_into(v, w, k, &format!("{path}.{k}"), out);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                let names = |v: &[Value]| v.iter().enumerate().map(|(i, e)| label(e, i)).collect::<Vec<_>>().join(" ");
                out.push(format!(
                    "{path}: {} entries vs oracle {}\n      cpuprof: {}\n      oracle:  {}",
                    x.len(),
                    y.len(),
                    names(x),
                    names(y)
                ));
            }
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff_into(v, w, key, &format!("{path}{}", label(w, i)), out);
            }
        }
        (Value::Number(p), Value::Number(q)) if is_pct(key) => {
            let (p, q) = (p.as_f64().unwrap_or(f64::NAN), q.as_f64().unwrap_or(f64::NAN));
            if (p - q).abs() > 1e-9 || p.is_nan() {
                out.push(format!("{path}: cpuprof {p} vs oracle {q}"));
            }
        }
        _ => {
            if a != b {
                out.push(format!("{path}: cpuprof {} vs oracle {}", short(a), short(b)));
            }
        }
    }
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 160 {
        format!("{}…", text.chars().take(160).collect::<String>())
    } else {
        text
    }
}

/// Records the differences of one comparison (at most 25 lines of them) under a heading.
fn record(failures: &mut Vec<String>, heading: &str, diffs: &[String]) {
    if diffs.is_empty() {
        return;
    }
    let mut text = format!("{heading}: {} difference(s)", diffs.len());
    for d in diffs.iter().take(25) {
        let _ = write!(text, "\n    {d}");
    }
    failures.push(text);
}

// ---------------------------------------------------------------- fixtures and options

/// Every recorded profile (and the legacy ones, which top.js reads).
fn recorded() -> Vec<String> {
    let mut fixtures = files("fixtures/cpuprofile", &[".cpuprofile", ".cpuprofile.gz"]);
    assert!(fixtures.len() >= 15, "expected the recorded fixtures, found {fixtures:?}");
    fixtures.extend(files("fixtures/diff", &[".cpuprofile"]));
    fixtures.extend(files("fixtures/cpuprofile/legacy", &[".cpuprofile"]));
    fixtures
}

/// The tree option sets of the comparison; `focus` is a regex naming the hottest function.
fn tree_option_sets(focus: Option<&str>) -> Vec<Vec<String>> {
    let mut sets: Vec<Vec<String>> = [
        &[][..],
        &["--min-percent", "0"],
        &["--bottom-up"],
        &["--bottom-up", "--min-percent", "0", "--max-depth", "3"],
        &["--weight", "samples"],
        &["--include-idle"],
        &["--min-percent", "0.5", "--max-depth", "4"],
        &["--bottom-up", "--weight", "samples", "--min-percent", "2"],
    ]
    .iter()
    .map(|s| strings(s))
    .collect();
    if let Some(focus) = focus {
        sets.push(strings(&["--focus", focus]));
        sets.push(strings(&["--bottom-up", "--min-percent", "0", "--max-depth", "8", "--focus", focus]));
        sets.push(strings(&["--min-percent", "0", "--ignore", focus]));
    }
    sets
}

/// What the comparisons ask about, from one oracle run: the functions whose callers/callees they
/// ask for (the oracle's 5 hottest by total whose `name@file:line` pattern names one function,
/// its 3 hottest by self, and 3 with an `@` in their file), every ambiguous pattern met on the way (cpuprof must refuse those
/// with exit 2), a `--focus` regex matching exactly the name of the hottest named function by
/// self, and top.js's rows.
struct Picked {
    unique: Vec<Value>,
    ambiguous: Vec<Value>,
    focus: Option<String>,
    top: Value,
}

fn pick_functions(fixture: &str) -> Picked {
    let lists = oracle_batch(
        fixture,
        &[strings(&["hottest", "1000000"]), strings(&["hottest", "3", "--sort", "self"]), strings(&["top"])],
    );
    let mut unique: Vec<Value> = Vec::new();
    let mut ambiguous = Vec::new();
    for f in lists[0].as_array().expect("hottest") {
        if unique.len() == 5 {
            break;
        }
        if f["pattern_matches"] == 1 {
            unique.push(f.clone());
        } else {
            ambiguous.push(f.clone());
        }
    }
    for f in lists[1].as_array().expect("hottest") {
        if f["pattern_matches"] == 1 && !unique.iter().any(|u| u["key"] == f["key"]) {
            unique.push(f.clone());
        }
    }
    // And up to 3 whose file holds an `@` (scoped packages, pnpm's `name@version` folders): the
    // `@` of name@file:line must not be confused with them.
    let at_in_file = lists[0]
        .as_array()
        .expect("hottest")
        .iter()
        .filter(|f| f["row"]["file"].as_str().is_some_and(|file| file.contains('@')))
        .filter(|f| f["pattern_matches"] == 1 && !unique.iter().any(|u| u["key"] == f["key"]))
        .take(3)
        .cloned()
        .collect::<Vec<_>>();
    unique.extend(at_in_file);
    let top = lists[2].clone();
    let focus = list(&top, "rows")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .find(|n| *n != "(anonymous)")
        .map(|name| format!("^{}$", regex::escape(name)));
    Picked { unique, ambiguous, focus, top }
}

// ---------------------------------------------------------------- cpuprof against the oracle

/// `cpuprof ARGS --format json`: the exit code, stdout as text, stderr.
fn ours_text(args: &[&str]) -> (i32, String, String) {
    let out = cpuprof().args(args).args(["--format", "json"]).output().expect("run cpuprof");
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap_or_else(|e| format!("(not UTF-8: {e})"));
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

/// Runs cpuprof for each (heading, cpuprof arguments, oracle request) and has the oracle compare
/// the outputs with its own and check the contract's sums on them, in one node process: the trees
/// nest deeper than serde_json reads (a recorded deep-recursion tree is ~1000 nodes deep).
fn compare_with_oracle(fixture: &str, runs: &[(String, Vec<String>, Vec<String>)], failures: &mut Vec<String>) {
    let mut requests = Vec::new();
    let mut headings = Vec::new();
    for (heading, args, request) in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = ours_text(&args);
        if code != 0 {
            failures.push(format!("{heading}: cpuprof exit {code}: {stderr}"));
            continue;
        }
        requests.push(serde_json::json!({"args": request, "ours": stdout}));
        headings.push(heading);
    }
    let results = oracle_requests(fixture, &requests);
    for (heading, result) in headings.iter().zip(&results) {
        record(failures, heading, &texts(result, "differences"));
        record(failures, &format!("{heading} (the contract's sums on cpuprof's output)"), &texts(result, "invariants"));
    }
}

/// Profiles whose whole tree is too deep to print indented: cpuprof's JSON indents each level, so
/// its size grows with the square of the depth (751 MB, 910 KB of it not spaces, for the 5000-deep
/// chain). They are compared down to depth 100 (`--max-depth 100` where no depth is given).
const TOO_DEEP_TO_INDENT: &[&str] = &["fixtures/edge/deep-chain.cpuprofile"];

fn compare_trees(fixture: &str, failures: &mut Vec<String>) {
    let runs: Vec<(String, Vec<String>, Vec<String>)> = tree_option_sets(pick_functions(fixture).focus.as_deref())
        .into_iter()
        .map(|mut set| {
            if TOO_DEEP_TO_INDENT.contains(&fixture) && !set.iter().any(|o| o == "--max-depth") {
                set.extend(strings(&["--max-depth", "100"]));
            }
            let heading = format!("{fixture} tree {set:?}");
            let args = [strings(&["tree", fixture]), set.clone()].concat();
            (heading, args, [strings(&["tree"]), set].concat())
        })
        .collect();
    compare_with_oracle(fixture, &runs, failures);
}

fn compare_relations(fixture: &str, failures: &mut Vec<String>) {
    let picked = pick_functions(fixture);
    assert!(!picked.unique.is_empty() || fixture.starts_with("fixtures/edge/"), "{fixture}: no function to ask about");
    let mut runs = Vec::new();
    for f in &picked.unique {
        let key = f["key"].as_str().expect("key");
        let pattern = f["pattern"].as_str().expect("pattern");
        for command in ["callers", "callees", "explain"] {
            for depth in ["1", "3"] {
                runs.push((
                    format!("{fixture} {command} {pattern:?} --depth {depth}"),
                    strings(&[command, pattern, fixture, "--depth", depth]),
                    strings(&[command, key, "--depth", depth]),
                ));
            }
        }
    }
    compare_with_oracle(fixture, &runs, failures);
    for f in &picked.ambiguous {
        let pattern = f["pattern"].as_str().expect("pattern");
        let (code, _, stderr) = ours_text(&["callers", pattern, fixture]);
        if code != 2 {
            failures.push(format!(
                "{fixture} callers {pattern:?}: {} distinct functions match by the oracle, cpuprof exit {code} (expected 2): {stderr}",
                f["pattern_matches"]
            ));
        }
    }
}

/// Runs `check` on every recorded fixture, two at a time (CI has two cores), and gathers the
/// failures.
fn for_each_fixture(fixtures: &[String], check: fn(&str, &mut Vec<String>)) -> Vec<String> {
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(fixture) = fixtures.get(i) else { break };
                let mut mine = Vec::new();
                check(fixture, &mut mine);
                failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend(mine);
            });
        }
    });
    let mut failures = failures.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    failures.sort();
    failures
}

/// A list of strings in a batch result (`differences`, `invariants`).
fn texts(result: &Value, key: &str) -> Vec<String> {
    list(result, key).iter().map(|d| d.as_str().expect("text").to_owned()).collect()
}

#[test]
fn cpuprof_trees_match_the_oracle_on_every_recorded_profile() {
    let failures = for_each_fixture(&recorded(), compare_trees);
    assert!(failures.is_empty(), "{} disagreement(s) with the oracle:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn cpuprof_callers_callees_and_explain_match_the_oracle_on_every_recorded_profile() {
    let failures = for_each_fixture(&recorded(), compare_relations);
    assert!(failures.is_empty(), "{} disagreement(s) with the oracle:\n{}", failures.len(), failures.join("\n"));
}

/// The hand-made unusual-but-valid profiles of fixtures/edge (a 5000-deep chain, a parentless
/// node that is not `(root)`, duplicate siblings, two functions that print alike, no samples, …):
/// the same comparisons as on the recordings.
#[test]
fn cpuprof_matches_the_oracle_on_edge_profiles() {
    let fixtures = files("fixtures/edge", &[".cpuprofile"]);
    assert!(fixtures.len() >= 10, "expected the edge profiles, found {fixtures:?}");
    let failures = for_each_fixture(&fixtures, |fixture, failures| {
        compare_trees(fixture, failures);
        compare_relations(fixture, failures);
    });
    assert!(failures.is_empty(), "{} disagreement(s) with the oracle:\n{}", failures.len(), failures.join("\n"));
}

fn int(v: &Value, key: &str) -> i64 {
    v[key].as_i64().unwrap_or_else(|| panic!("{key} is not an integer in {}", short(v)))
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

// ---------------------------------------------------------------- the oracle checked on its own

/// The oracle against top.js on every recorded profile: top-down roots' totals sum to top's
/// total (no sample sits on `(root)` itself in a real file), top-down nodes' sums hold; the
/// bottom-up roots are exactly top's rows, in top's order, with the same numbers; and the
/// contract's sums hold on its callers/callees. Needs no cpuprof tree.
#[test]
fn oracle_agrees_with_top_js() {
    let failures = for_each_fixture(&recorded(), oracle_self_check);
    assert!(failures.is_empty(), "{} oracle self-check failure(s):\n{}", failures.len(), failures.join("\n"));
}

const SELF_CHECK_OPTIONS: [&[&str]; 3] = [&[], &["--weight", "samples"], &["--include-idle"]];

fn oracle_self_check(fixture: &str, failures: &mut Vec<String>) {
    let picked = pick_functions(fixture);
    let mut requests = Vec::new();
    for options in SELF_CHECK_OPTIONS {
        let args = |extra: &[&str]| [strings(extra), strings(options)].concat();
        let full = |extra: &[&str]| serde_json::json!({"args": args(extra), "check": true});
        requests.extend([
            serde_json::json!(args(&["top"])),
            // --max-depth 1: the roots alone (whole trees nest deeper than serde_json reads).
            serde_json::json!(args(&["tree", "--min-percent", "0", "--max-depth", "1"])),
            serde_json::json!(args(&["tree", "--bottom-up", "--min-percent", "0", "--max-depth", "1"])),
            full(&["tree"]),
            full(&["tree", "--bottom-up", "--min-percent", "3", "--max-depth", "4"]),
            // Whole trees (a 500-deep chain's bottom-up tree has 125,000 nodes: once per file).
            full(&["tree", "--min-percent", "0"]),
            full(&if options.is_empty() {
                vec!["tree", "--bottom-up", "--min-percent", "0"]
            } else {
                vec!["tree", "--bottom-up", "--max-depth", "6"]
            }),
        ]);
    }
    for f in &picked.unique {
        let args = strings(&["explain", f["key"].as_str().unwrap(), "--depth", "2"]);
        requests.push(serde_json::json!(args));
        requests.push(serde_json::json!({"args": args, "check": true}));
    }
    let results = oracle_requests(fixture, &requests);
    let (trees, explains) = results.split_at(7 * SELF_CHECK_OPTIONS.len());
    for (options, (group, group_requests)) in SELF_CHECK_OPTIONS.iter().zip(trees.chunks(7).zip(requests.chunks(7))) {
        let heading = format!("{fixture} {options:?}");
        let (top, down, up) = (&group[0], &group[1], &group[2]);
        for key in ["unit", "total", "samples"] {
            if down[key] != top[key] || up[key] != top[key] {
                failures.push(format!("{heading}: {key} {} / {} vs top.js {}", down[key], up[key], top[key]));
            }
        }
        let roots: i64 = list(down, "roots").iter().map(|r| int(r, "total")).sum();
        if roots != int(top, "total") {
            failures.push(format!("{heading}: top-down roots sum to {roots}, top.js total {}", top["total"]));
        }
        let samples: i64 = list(down, "roots").iter().map(|r| int(r, "total_samples")).sum();
        if samples != int(top, "samples") {
            failures.push(format!("{heading}: top-down roots count {samples} samples, top.js {}", top["samples"]));
        }
        for (request, result) in group_requests.iter().zip(group).skip(3) {
            record(
                failures,
                &format!("{fixture} oracle {}: the contract's sums", request["args"]),
                &texts(result, "invariants"),
            );
        }
        // Bottom-up roots (children cut by --max-depth 1) are top's rows, in top's order.
        let rows: Vec<Value> = list(up, "roots")
            .iter()
            .map(|r| {
                let mut r = r.clone();
                let o = r.as_object_mut().expect("a node");
                o.remove("children");
                o.remove("pruned");
                r
            })
            .collect();
        record(
            failures,
            &format!("{heading} bottom-up roots vs top.js rows"),
            &differences(&Value::from(rows), &top["rows"]),
        );
    }
    for (f, pair) in picked.unique.iter().zip(explains.chunks(2)) {
        record(
            failures,
            &format!("{fixture} oracle explain {}: the contract's sums", f["pattern"]),
            &texts(&pair[1], "invariants"),
        );
        // The function's row is the oracle's `hottest` row, and top.js's.
        record(failures, &format!("{fixture} oracle explain row"), &differences(&pair[0]["function"], &f["row"]));
        let same = |r: &&Value| ["name", "file", "line", "column", "kind"].iter().all(|k| r[*k] == f["row"][*k]);
        match list(&picked.top, "rows").iter().find(same) {
            Some(row) => record(failures, &format!("{fixture} oracle row vs top.js"), &differences(&f["row"], row)),
            None => failures.push(format!("{fixture}: top.js has no row {}", f["row"])),
        }
    }
}

// ---------------------------------------------------------------- a profile worked out by hand

/// Functions A, F, B, C (file:///t/rec.js) and (program). Stacks, (root) left out, with their
/// time weights in µs (deltas 1, 10, 20, 40, 80, 160, 320: each sample weighs the next delta;
/// the last the mean interval, floor(630 / 6) = 105):
///   s0 A→F→B→F      10   (indirect recursion)
///   s1 A→F→B→F→C    20
///   s2 A→F→F        40   (direct recursion)
///   s3 A→F→B        80
///   s4 B→F         160   (B top-level)
///   s5 A→F         320
///   s6 (program)   105   (last sample: the (program) fix-up does not touch it)
/// Total 735 µs, 7 samples.
const HAND_MADE: &str = r#"{
  "nodes": [
    {"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "hitCount": 0, "children": [2, 8, 9]},
    {"id": 2, "callFrame": {"functionName": "A", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 0, "columnNumber": 0}, "hitCount": 0, "children": [3]},
    {"id": 3, "callFrame": {"functionName": "F", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 1, "columnNumber": 0}, "hitCount": 1, "children": [4, 7]},
    {"id": 4, "callFrame": {"functionName": "B", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 2, "columnNumber": 0}, "hitCount": 1, "children": [5]},
    {"id": 5, "callFrame": {"functionName": "F", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 1, "columnNumber": 0}, "hitCount": 1, "children": [6]},
    {"id": 6, "callFrame": {"functionName": "C", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 3, "columnNumber": 0}, "hitCount": 1, "children": []},
    {"id": 7, "callFrame": {"functionName": "F", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 1, "columnNumber": 0}, "hitCount": 1, "children": []},
    {"id": 8, "callFrame": {"functionName": "(program)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "hitCount": 1, "children": []},
    {"id": 9, "callFrame": {"functionName": "B", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 2, "columnNumber": 0}, "hitCount": 0, "children": [10]},
    {"id": 10, "callFrame": {"functionName": "F", "scriptId": "1", "url": "file:///t/rec.js", "lineNumber": 1, "columnNumber": 0}, "hitCount": 1, "children": []}
  ],
  "startTime": 1000,
  "endTime": 2000,
  "samples": [5, 6, 7, 4, 10, 3, 8],
  "timeDeltas": [1, 10, 20, 40, 80, 160, 320]
}"#;

/// A tree as one line per node, indented: `name self/total (self_samples/total_samples)` in µs,
/// then `pruned N total/samples` lines.
fn outline(tree: &Value) -> String {
    fn walk(nodes: &[Value], pruned: Option<&Value>, depth: usize, out: &mut String) {
        for n in nodes {
            let _ = writeln!(
                out,
                "{}{} {}/{} ({}/{})",
                "  ".repeat(depth),
                n["name"].as_str().unwrap_or("?"),
                int(n, "self") / 1000,
                int(n, "total") / 1000,
                n["self_samples"],
                n["total_samples"]
            );
            walk(list(n, "children"), n.get("pruned"), depth + 1, out);
        }
        if let Some(p) = pruned {
            let _ = writeln!(
                out,
                "{}pruned {} {}/{}",
                "  ".repeat(depth),
                p["nodes"],
                int(p, "total") / 1000,
                p["total_samples"]
            );
        }
    }
    let mut out = String::new();
    walk(list(tree, "roots"), tree.get("pruned"), 0, &mut out);
    out
}

/// Callers or callees as one line per entry, indented: `name total (samples) pct`.
fn entries_outline(entries: &[Value], key: &str) -> String {
    fn walk(entries: &[Value], key: &str, depth: usize, out: &mut String) {
        for e in entries {
            let _ = writeln!(
                out,
                "{}{} {} ({}) {:.4}",
                "  ".repeat(depth),
                e["name"].as_str().unwrap_or("?"),
                int(e, "total") / 1000,
                e["total_samples"],
                e["pct"].as_f64().unwrap_or(f64::NAN)
            );
            if let Some(nested) = e.get(key).and_then(Value::as_array) {
                if nested.is_empty() {
                    let _ = writeln!(out, "{}-", "  ".repeat(depth + 1));
                }
                walk(nested, key, depth + 1, out);
            }
        }
    }
    let mut out = String::new();
    walk(entries, key, 0, &mut out);
    out
}

const HAND_TOP_DOWN: &str = "\
A 0/470 (0/5)
  F 320/470 (1/5)
    B 80/110 (1/3)
      F 10/30 (1/2)
        C 20/20 (1/1)
    F 40/40 (1/1)
B 0/160 (0/1)
  F 160/160 (1/1)
(program) 105/105 (1/1)
";

/// --min-percent 5: 5 % of 735 is 36.75, so A→F→B→F (30) is cut; A→F→F (40) stays.
const HAND_TOP_DOWN_5: &str = "\
A 0/470 (0/5)
  F 320/470 (1/5)
    B 80/110 (1/3)
      pruned 1 30/2
    F 40/40 (1/1)
B 0/160 (0/1)
  F 160/160 (1/1)
(program) 105/105 (1/1)
";

/// --max-depth 2: depth-2 nodes keep no children; A→F's two go to `pruned`.
const HAND_TOP_DOWN_DEPTH_2: &str = "\
A 0/470 (0/5)
  F 320/470 (1/5)
    pruned 2 150/4
B 0/160 (0/1)
  F 160/160 (1/1)
(program) 105/105 (1/1)
";

/// Bottom-up, from each function's outermost occurrence. F: in s0..s5 (630), self in s0, s2,
/// s4, s5 (530); its outermost occurrence is under A in all but s4 (under B). DevTools would
/// put s0's and s2's self (inner occurrences) on F←B←F←A and F←F←A (SPEC.md §9 step 4).
/// B: s0, s1, s3 under F←A (110, self s3 80), s4 top-level (160: no child).
/// C: only s1, read upwards C←F←B←F←A. Roots by self: F 530, (program) 105, B 80, C 20, A 0.
/// At --min-percent 0 every function is a root.
const HAND_BOTTOM_UP_0: &str = "\
F 530/630 (4/6)
  A 370/470 (3/5)
  B 160/160 (1/1)
(program) 105/105 (1/1)
B 80/270 (1/4)
  F 80/110 (1/3)
    A 80/110 (1/3)
C 20/20 (1/1)
  F 20/20 (1/1)
    B 20/20 (1/1)
      F 20/20 (1/1)
        A 20/20 (1/1)
A 0/470 (0/5)
";

/// At the default --min-percent 1 (7.35 µs) roots are cut by their self (the contract's
/// "bottom-up first level"): A (self 0, total 470) goes to `pruned`, summed by self (0, 0 samples).
const HAND_BOTTOM_UP: &str = "\
F 530/630 (4/6)
  A 370/470 (3/5)
  B 160/160 (1/1)
(program) 105/105 (1/1)
B 80/270 (1/4)
  F 80/110 (1/3)
    A 80/110 (1/3)
C 20/20 (1/1)
  F 20/20 (1/1)
    B 20/20 (1/1)
      F 20/20 (1/1)
        A 20/20 (1/1)
pruned 1 0/0
";

/// Callers of B: top-level in s4 → `(root)` 160; under F 110 (F←A). 160 + 110 = 270. Every level
/// has its `(root)` entry: A (s0, s1, s3) is top-level, so A's callers are `(root)` 110. With
/// --depth 3 the entries of levels 1 and 2 have their lists (a `(root)` entry an empty one, `-`);
/// the third level's have none.
const HAND_CALLERS_B: &str = "\
(root) 160 (1) 59.2593
  -
F 110 (3) 40.7407
  A 110 (3) 40.7407
    (root) 110 (3) 40.7407
";

/// Callees of F from its innermost occurrence: s1 → C (20), s3 → B (80); s0, s2, s4, s5 end in F
/// (self 530). 80 + 20 + 530 = 630, and F is never its own callee.
const HAND_CALLEES_F: &str = "\
B 80 (1) 12.6984
  -
C 20 (1) 3.1746
  -
";

/// Callees of A (depth 3): everything below it passes through F (470); under F: B (s0, s1, s3:
/// 110), F (s2: 40); under A→F→B: F (s0, s1: 30), on the third level, so without a list (C, s1's
/// leaf, is below it); A→F→F has an empty one: nothing below it.
const HAND_CALLEES_A: &str = "\
F 470 (5) 100.0000
  B 110 (3) 23.4043
    F 30 (2) 6.3830
  F 40 (1) 8.5106
    -
";

fn hand_made_file() -> tempfile::TempPath {
    let mut file = tempfile::Builder::new().suffix(".cpuprofile").tempfile().expect("temp file");
    file.write_all(HAND_MADE.as_bytes()).expect("write");
    file.into_temp_path()
}

/// How a case's output is read into the text it is compared with.
type Reader = fn(&Value) -> String;

fn callers_outline(v: &Value) -> String {
    entries_outline(list(v, "callers"), "callers")
}

fn callees_outline(v: &Value) -> String {
    entries_outline(list(v, "callees"), "callees")
}

/// What every side must print on the hand-made profile: (request, how to read it, expected).
fn hand_made_cases() -> Vec<(Vec<&'static str>, Reader, &'static str)> {
    vec![
        (vec!["tree"], outline, HAND_TOP_DOWN),
        (vec!["tree", "--min-percent", "0"], outline, HAND_TOP_DOWN),
        (vec!["tree", "--min-percent", "5"], outline, HAND_TOP_DOWN_5),
        (vec!["tree", "--max-depth", "2"], outline, HAND_TOP_DOWN_DEPTH_2),
        (vec!["tree", "--bottom-up"], outline, HAND_BOTTOM_UP),
        (vec!["tree", "--bottom-up", "--min-percent", "0"], outline, HAND_BOTTOM_UP_0),
        (vec!["callers", "B", "--depth", "3"], callers_outline, HAND_CALLERS_B),
        (vec!["callees", "F", "--depth", "2"], callees_outline, HAND_CALLEES_F),
        (vec!["callees", "A", "--depth", "3"], callees_outline, HAND_CALLEES_A),
    ]
}

#[test]
fn oracle_on_a_profile_worked_out_by_hand() {
    let path = hand_made_file();
    let file = path.to_str().expect("utf-8 temp path");
    let mut failures = Vec::new();
    for (request, read, expected) in hand_made_cases() {
        let got = oracle_one(file, &request);
        assert_eq!(got["total"], 735_000, "{request:?}");
        assert_eq!(got["samples"], 7, "{request:?}");
        let text = read(&got);
        if text != expected {
            failures.push(format!("oracle {request:?}:\n--- expected\n{expected}--- oracle\n{text}"));
        }
    }
    // explain = callers + callees, with F's `top` row.
    let explain = oracle_one(file, &["explain", "F", "--depth", "1"]);
    assert_eq!(
        (int(&explain["function"], "self"), int(&explain["function"], "total")),
        (530_000, 630_000),
        "{explain}"
    );
    assert_eq!(list(&explain, "callers").len(), 2);
    assert_eq!(list(&explain, "callees").len(), 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cpuprof_on_a_profile_worked_out_by_hand() {
    let path = hand_made_file();
    let file = path.to_str().expect("utf-8 temp path");
    let mut failures = Vec::new();
    for (request, read, expected) in hand_made_cases() {
        let args: Vec<&str> = match request[0] {
            "tree" => [&["tree", file][..], &request[1..]].concat(),
            command => [&[command, request[1], file][..], &request[2..]].concat(),
        };
        let (code, json, stderr) = ours(&args);
        if code != 0 {
            failures.push(format!("cpuprof {args:?}: exit {code}: {stderr}"));
            continue;
        }
        let text = read(&json);
        if text != expected {
            failures.push(format!("cpuprof {request:?}:\n--- expected\n{expected}--- cpuprof\n{text}"));
        }
        // And everything else the same as the oracle (names, files, kinds, pct, pruned).
        record(
            &mut failures,
            &format!("cpuprof {request:?} vs oracle"),
            &differences(&json, &oracle_one(file, &request)),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
