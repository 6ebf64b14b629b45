//! Issue 19, second oracle: `go tool pprof -peek REGEX` and `-tree` (Debian's `golang-go`) run on
//! the pprof that `cpuprof convert` writes. For the hottest functions of each fixture, their
//! flat/cum and the weights of their caller and callee edges must equal what
//! `cpuprof callers` / `cpuprof callees --format json` report (`function`'s self/total, each
//! entry's total), in samples (`--weight samples` against `-sample_index=samples`) and in time
//! (ns against `-sample_index=1`, the `cpu/nanoseconds` type `convert` writes second, `-unit=ns`).
//! Without `go` the tests say SKIPPED (`.ci/run` installs it), as tests/go_pprof.rs does.
//!
//! How pprof counts (internal/graph/graph.go, `newGraph`): per sample it walks the stack from the
//! root to the leaf; every node on it gets the sample in its cum once, the leaf node in its flat,
//! and every edge parent→child between two adjacent frames gets the sample once — except an edge
//! from a node to itself, which is skipped. So for a function F that appears at most once per
//! stack, the caller edges into F and the callee edges out of F split F's samples exactly as the
//! contract's callers (outermost occurrence of F, read upwards) and callees (innermost occurrence,
//! read downwards) do. For a recursive F they do not, so recursive functions are left out here
//! (tests/calltree_invariants.rs covers recursion): with direct recursion pprof drops the F→F edge
//! and with indirect recursion (F→G→F) one sample adds to two caller edges (X→F and G→F) and two
//! callee edges (F→G and F→Y), so pprof's caller edges sum to more than F's cum, where the
//! contract's sum to F's total exactly.
//!
//! pprof's node is a function *name and file* (`-filefunctions`; the file cleaned as Go's
//! `filepath.Clean` does), cpuprof's a function (name, file, line, column, kind): so only functions
//! that are alone under their label in `cpuprof top` are chosen, "recursion" is judged by label
//! (two functions of one label nested on one stack would make a self-edge for pprof), and cpuprof's
//! caller/callee entries are summed per label before comparing (exact: for a non-recursive F each
//! sample goes to one caller and at most one callee).
//!
//! The `(root)` caller: the contract gives the samples where F's outermost occurrence is
//! top-level to one caller entry named `(root)` (kind "root"). pprof has no such caller of its
//! own; `convert` of a `.cpuprofile` (or anything with V8's `(root)` frame) keeps that frame, so
//! pprof shows a caller labelled `(root)`, and the entry must equal that edge; where the pprof file
//! has no `(root)` frame (folded stacks), pprof shows no caller for those samples, and the entry must
//! equal F's cum minus the sum of pprof's caller edges.
//!
//! The functions are chosen from pprof's `-top` (by flat, and by cum with `-cum`), not from cpuprof;
//! recursion is read from pprof's `-traces` (a label twice in one trace).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{clean, cpuprof, go};
use serde_json::Value;

/// One of pprof's sample types and the matching cpuprof weight.
#[derive(Clone, Copy, Debug)]
struct Weight {
    /// `-sample_index=…` for go tool pprof.
    sample_index: &'static str,
    /// `--weight …` for cpuprof (whose `self`/`total` are then in that unit).
    weight: &'static str,
}

const SAMPLES: Weight = Weight { sample_index: "samples", weight: "samples" };
const TIME: Weight = Weight { sample_index: "1", weight: "time" };

/// Runs `go tool pprof` with `args` on `file` in weight `w`, nothing dropped; stdout.
fn go_pprof(go: &Path, file: &Path, w: Weight, args: &[&str]) -> String {
    let out = Command::new(go)
        .args(["tool", "pprof", "-filefunctions", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"])
        // -symbolize=none: names as written (pprof would strip C++ argument lists).
        .args(["-symbolize=none", "-unit=ns", &format!("-sample_index={}", w.sample_index)])
        .args(args)
        .arg(file)
        .output()
        .expect("go runs");
    assert!(
        out.status.success(),
        "go tool pprof {args:?} {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("go tool pprof writes UTF-8")
}

/// A number as pprof prints it (`12`, `534325000ns`), rounded to an integer.
fn number(s: &str, line: &str) -> i64 {
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let value: f64 = digits.parse().unwrap_or_else(|_| panic!("go tool pprof value {s:?} in {line:?}"));
    assert!((value - value.round()).abs() < 1e-6, "go tool pprof value {s:?} is not whole in {line:?}");
    value.round() as i64
}

/// A label without pprof's inlining marks (cpuprof has inlined functions as frames too).
fn label(s: &str) -> String {
    [" (inline)", " (partial-inline)"].iter().fold(s, |l, tag| l.strip_suffix(tag).unwrap_or(l)).to_owned()
}

/// `-top` (or `-top -cum`): labels with (flat, cum), in pprof's order.
fn go_top(go: &Path, file: &Path, w: Weight, cum: bool) -> Vec<(String, i64, i64)> {
    let args: &[&str] = if cum { &["-top", "-cum"] } else { &["-top"] };
    let text = go_pprof(go, file, w, args);
    let mut rows = Vec::new();
    let mut table = false;
    for line in text.lines() {
        if line.trim_start().starts_with("flat ") {
            table = true;
            continue;
        }
        if !table {
            continue;
        }
        // flat flat% sum% cum cum% label (the label may hold spaces)
        let mut rest = line.trim_start();
        let mut fields = Vec::new();
        for _ in 0..5 {
            let end = rest.find(' ').unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = rest[end..].trim_start();
        }
        rows.push((label(rest), number(fields[0], line), number(fields[3], line)));
    }
    assert!(table, "no table in go tool pprof -top's output:\n{text}");
    rows
}

/// Labels that appear twice in one stack, from `-traces` (recursion, as pprof sees it).
fn go_recursive(go: &Path, file: &Path) -> BTreeSet<String> {
    let text = go_pprof(go, file, SAMPLES, &["-traces"]);
    let mut recursive = BTreeSet::new();
    let mut stack: BTreeSet<String> = BTreeSet::new();
    let mut traces = 0;
    for line in text.lines() {
        if line.starts_with("-----------+") {
            stack.clear();
            traces += 1;
            continue;
        }
        if traces == 0 {
            continue; // the header
        }
        // The first line of a trace: "     COUNT   label"; then "             label".
        let rest = line.trim_start();
        let rest = match rest.split_once("   ") {
            Some((count, l)) if line.len() - rest.len() < 12 && !count.is_empty() => l,
            _ => rest,
        };
        let l = label(rest.trim_start());
        if !stack.insert(l.clone()) {
            recursive.insert(l);
        }
    }
    assert!(traces > 1, "no traces in go tool pprof -traces's output:\n{text}");
    recursive
}

/// A node of pprof's `-tree` / `-peek` output.
#[derive(Debug, Default, PartialEq)]
struct Peek {
    flat: i64,
    cum: i64,
    callers: BTreeMap<String, i64>,
    callees: BTreeMap<String, i64>,
}

/// Parses `-tree` or `-peek` output: blocks between `---+---` rulers, each with the caller lines
/// (`weight pct% |   label`) above the node's line (`flat flat% sum% cum cum% | label`) and the
/// callee lines below it.
fn parse_peek(text: &str) -> BTreeMap<String, Peek> {
    let mut nodes = BTreeMap::new();
    let mut blocks: Vec<Vec<&str>> = vec![Vec::new()];
    for line in text.lines() {
        if line.starts_with("-----") && line.contains('+') {
            blocks.push(Vec::new());
        } else if line.contains('|') {
            blocks.last_mut().expect("a block").push(line);
        }
    }
    // The first block is the header (`Type: …`, no `|` lines); the second the column titles.
    for lines in blocks.iter().filter(|b| !b.is_empty() && !b.iter().any(|l| l.contains("calls calls%"))) {
        let mut node: Option<(String, Peek)> = None;
        let mut callers = BTreeMap::new();
        for line in lines {
            let (numbers, name) = line.split_once('|').expect("a `|`");
            let fields: Vec<&str> = numbers.split_whitespace().collect();
            match (fields.len(), &mut node) {
                (5, None) => {
                    let name = name.strip_prefix(' ').unwrap_or_else(|| panic!("node line {line:?}"));
                    let peek = Peek { flat: number(fields[0], line), cum: number(fields[3], line), ..Peek::default() };
                    node = Some((label(name), peek));
                }
                (2, n) => {
                    let name = label(name.strip_prefix("   ").unwrap_or_else(|| panic!("edge line {line:?}")));
                    let edges = match n {
                        None => &mut callers,
                        Some((_, peek)) => &mut peek.callees,
                    };
                    let previous = edges.insert(name.clone(), number(fields[0], line));
                    assert!(previous.is_none(), "edge {name:?} twice in {lines:#?}");
                }
                _ => panic!("unexpected line {line:?} in a go tool pprof block {lines:#?}"),
            }
        }
        let (name, mut peek) = node.unwrap_or_else(|| panic!("no node line in {lines:#?}"));
        peek.callers = callers;
        let previous = nodes.insert(name.clone(), peek);
        assert!(previous.is_none(), "node {name:?} twice");
    }
    nodes
}

/// pprof's label of a cpuprof row or entry: `name file` (file cleaned), or `name` without a file.
fn label_of(row: &Value) -> String {
    let name = row["name"].as_str().unwrap_or_default();
    let name = if name.is_empty() { "(anonymous)" } else { name };
    let file = clean(row["file"].as_str().unwrap_or_default());
    if file.is_empty() {
        name.to_owned()
    } else {
        format!("{name} {file}")
    }
}

/// Runs cpuprof with `args`; (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = cpuprof().args(args).output().expect("cpuprof runs");
    (out.status.code().unwrap_or(-1), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Runs cpuprof with `args`, which must succeed; its JSON.
fn json(args: &[&str]) -> Value {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "cpuprof {args:?}: {stderr}");
    serde_json::from_slice(&stdout).unwrap_or_else(|e| panic!("cpuprof {args:?}: not JSON ({e})"))
}

/// `cpuprof callers|callees` of the function `row` of `input` in weight `w`, JSON. The pattern is
/// the exact name, or `name@file:line` when the name is ambiguous (exit 2, as the contract says).
fn callers_or_callees(command: &str, input: &str, row: &Value, w: Weight) -> Value {
    let name = row["name"].as_str().expect("name");
    let common = ["--format", "json", "--include-idle", "--weight", w.weight];
    let (code, stdout, stderr) = run(&[&[command, name, input][..], &common].concat());
    let report = match code {
        0 => serde_json::from_slice(&stdout).expect("JSON"),
        2 => {
            let file = row["file"].as_str().unwrap_or_default();
            let pattern = match row["line"].as_i64() {
                Some(line) => format!("{name}@{file}:{line}"),
                None => format!("{name}@{file}"),
            };
            json(&[&[command, &pattern, input][..], &common].concat())
        }
        _ => panic!("cpuprof {command} {name:?} {input}: exit {code}: {stderr}"),
    };
    for key in ["name", "file", "line", "column", "kind"] {
        assert_eq!(report["function"][key], row[key], "{command} {name:?} {input}: picked another function");
    }
    report
}

/// cpuprof's entries summed per pprof label (`(root)` entries under `(root)`).
fn entries_by_label(entries: &Value, total_key: &str) -> BTreeMap<String, i64> {
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    for entry in entries.as_array().expect("entries") {
        let l = if entry["kind"] == "root" { "(root)".to_owned() } else { label_of(entry) };
        *out.entry(l).or_default() += entry[total_key].as_i64().expect("total");
    }
    out
}

/// Converts `input` to pprof in `dir`.
fn convert(input: &str, dir: &Path) -> PathBuf {
    let pb = dir.join(format!("{}.pb.gz", input.rsplit('/').next().unwrap()));
    let out = cpuprof().args(["convert", input, "-o"]).arg(&pb).output().unwrap();
    assert!(out.status.success(), "convert {input}: {}", String::from_utf8_lossy(&out.stderr));
    pb
}

/// Up to `flat` + `cum` of the hottest functions of `pb` by pprof's `-top` (by flat, then by cum),
/// each alone under its label in cpuprof's `top` and not recursive: label → cpuprof's top row.
fn hottest(go: &Path, pb: &Path, top: &Value, flat: usize, cum: usize) -> BTreeMap<String, Value> {
    let recursive = go_recursive(go, pb);
    let mut rows: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for row in top["rows"].as_array().expect("rows") {
        rows.entry(label_of(row)).or_default().push(row);
    }
    let eligible = |l: &String| {
        l != "(root)"
            && !recursive.contains(l)
            && rows.get(l).is_some_and(|r| r.len() == 1)
            // One line of pprof's text each.
            && !l.contains('\n')
    };
    let mut chosen = BTreeMap::new();
    for (by_cum, count) in [(false, flat), (true, cum)] {
        let mut taken = 0;
        for (l, _, _) in go_top(go, pb, SAMPLES, by_cum) {
            if taken == count {
                break;
            }
            if eligible(&l) {
                taken += 1;
                chosen.insert(l.clone(), rows[&l][0].clone());
            }
        }
    }
    chosen
}

/// What differs between cpuprof's callers/callees of `row` and pprof's node `peek` (nothing: empty).
fn differences(
    input: &str,
    source: &str,
    w: Weight,
    row: &Value,
    peek: &Peek,
    up: &Value,
    down: &Value,
) -> Vec<String> {
    let mut out = Vec::new();
    let what = format!("{input} {} (go tool pprof {source}, --weight {})", label_of(row), w.weight);
    for report in [up, down] {
        let f = &report["function"];
        let (s, t) = (f["self"].as_i64(), f["total"].as_i64());
        if (s, t) != (Some(peek.flat), Some(peek.cum)) {
            out.push(format!(
                "{what}: cpuprof self {s:?} total {t:?}, go tool pprof flat {} cum {}",
                peek.flat, peek.cum
            ));
        }
    }
    // Callers: pprof's edges, plus the samples without a caller in pprof (the `(root)` entry).
    let mut theirs = peek.callers.clone();
    let arriving: i64 = theirs.values().sum();
    if !theirs.contains_key("(root)") && arriving != peek.cum {
        theirs.insert("(root)".to_owned(), peek.cum - arriving);
    }
    let ours = entries_by_label(&up["callers"], "total");
    if ours != theirs {
        out.push(format!("{what}: callers\n  cpuprof        {ours:?}\n  go tool pprof  {theirs:?}"));
    }
    let ours = entries_by_label(&down["callees"], "total");
    if ours != peek.callees {
        out.push(format!("{what}: callees\n  cpuprof        {ours:?}\n  go tool pprof  {:?}", peek.callees));
    }
    // pprof's own sums, which the choice of non-recursive functions promises.
    let out_sum: i64 = peek.callees.values().sum();
    if arriving > peek.cum || peek.flat + out_sum != peek.cum {
        out.push(format!(
            "{what}: go tool pprof's edges do not add up (callers {arriving}, callees {out_sum} + flat {} vs cum {}): recursive?",
            peek.flat, peek.cum
        ));
    }
    out
}

/// Compares, for the hottest functions of `input`, cpuprof's callers/callees with go tool pprof's
/// `-tree` and `-peek` in samples and in time; returns how many functions were compared.
fn compare(go: &Path, input: &str, dir: &Path) -> usize {
    let pb = convert(input, dir);
    let top = json(&["top", "--all", "--include-idle", "--format", "json", input]);
    let chosen = hottest(go, &pb, &top, 5, 3);
    let mut problems = Vec::new();
    let weights = if top["unit"] == "ns" { vec![SAMPLES, TIME] } else { vec![SAMPLES] };
    for w in weights {
        let tree = parse_peek(&go_pprof(go, &pb, w, &["-tree"]));
        // One -peek for all of them: `^label$` alternatives (pprof matches the label).
        let regex = chosen.keys().map(|l| format!("^{}$", regex::escape(l))).collect::<Vec<_>>().join("|");
        let peek = parse_peek(&go_pprof(go, &pb, w, &["-peek", &regex]));
        assert_eq!(
            peek.keys().collect::<BTreeSet<_>>(),
            chosen.keys().collect::<BTreeSet<_>>(),
            "{input}: go tool pprof -peek {regex:?} shows other nodes"
        );
        for (l, row) in &chosen {
            // `callers` and `callees` in samples; `explain` (both lists in one report) in time.
            let (up, down) = if w.weight == "samples" {
                (callers_or_callees("callers", input, row, w), callers_or_callees("callees", input, row, w))
            } else {
                let both = callers_or_callees("explain", input, row, w);
                (both.clone(), both)
            };
            for (source, nodes) in [("-tree", &tree), ("-peek", &peek)] {
                let node = nodes.get(l).unwrap_or_else(|| panic!("{input}: {l:?} not in go tool pprof {source}"));
                problems.extend(differences(input, source, w, row, node, &up, &down));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    chosen.len()
}

/// Compares the hottest functions of each of `inputs` (at least 5 each).
#[allow(clippy::print_stderr)] // the skip message and the counts
fn compare_all(inputs: &[&str]) {
    let Some(go) = go() else {
        eprintln!("SKIPPED: no `go` (install the Debian package golang-go, or set GO)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut compared = Vec::new();
    for input in inputs {
        let n = compare(&go, input, dir.path());
        assert!(n >= 5, "{input}: only {n} functions compared");
        compared.push(format!("{input}: {n}"));
    }
    eprintln!("functions compared: {}", compared.join(", "));
}

// Three tests, so that the test harness runs them side by side.

#[test]
fn callers_and_callees_equal_go_tool_pprof_on_app_profiles() {
    compare_all(&[
        "fixtures/cpuprofile/money.cpuprofile",
        // Three functions named `handle` in three files: three pprof labels.
        "fixtures/cpuprofile/same-name.cpuprofile",
        "fixtures/cpuprofile/packages.cpuprofile",
        // No bootstrap frames: `main` is top-level, its caller `(root)`.
        "fixtures/cpuprofile/inspector-profile.cpuprofile",
    ]);
}

#[test]
fn callers_and_callees_equal_go_tool_pprof_on_library_heavy_profiles() {
    compare_all(&[
        "fixtures/cpuprofile/slugify.cpuprofile",
        "fixtures/cpuprofile/auth-sync.cpuprofile",
        "fixtures/cpuprofile/workers.t1.cpuprofile",
        // isEven/isOdd/fib are recursive (left out); their callers are not.
        "fixtures/cpuprofile/deep-recursion.cpuprofile",
    ]);
}

#[test]
fn callers_and_callees_equal_go_tool_pprof_on_other_formats() {
    compare_all(&[
        // No `(root)` frame in either: the top-level functions' `(root)` entries have no pprof edge.
        "fixtures/ticklog/regex-backtrack.log",
        "fixtures/pprof/hand.folded",
    ]);
}

/// The parser, on text go tool pprof printed for fixtures/pprof/hand.folded, and the counts of
/// that file's six lines done by hand: the oracle of the oracle.
#[test]
fn go_tool_pprof_peek_of_a_folded_file_is_read_as_counted_by_hand() {
    let Some(go) = go() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pb = convert("fixtures/pprof/hand.folded", dir.path());
    let nodes = parse_peek(&go_pprof(&go, &pb, SAMPLES, &["-tree"]));
    let map = |pairs: &[(&str, i64)]| pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect::<BTreeMap<_, _>>();
    // main;parse;tokenize 30 / main;parse 10 / main;render;layout 25 / main;render;layout;measure 5
    // / main;fib;fib;fib 7 / (program) 3: see fixtures/pprof/hand.folded. No `(root)` frame.
    let text = std::fs::read_to_string(common::root().join("fixtures/pprof/hand.folded")).unwrap();
    assert!(
        text.contains("main;parse;tokenize 30") && text.contains("main;fib;fib;fib 7"),
        "hand.folded changed:\n{text}"
    );
    assert_eq!(
        nodes["parse"],
        Peek { flat: 10, cum: 40, callers: map(&[("main", 40)]), callees: map(&[("tokenize", 30)]) }
    );
    assert_eq!(
        nodes["main"],
        Peek { flat: 0, cum: 77, callers: map(&[]), callees: map(&[("parse", 40), ("render", 30), ("fib", 7)]) }
    );
    // The self-edge fib→fib is not an edge for pprof.
    assert_eq!(nodes["fib"], Peek { flat: 7, cum: 7, callers: map(&[("main", 7)]), callees: map(&[]) });
    let recursive = go_recursive(&go, &pb);
    assert_eq!(recursive.into_iter().collect::<Vec<_>>(), ["fib"]);
}

/// The comparison reports what differs: a made-up pprof node and cpuprof reports that agree,
/// then one number off at a time. (The `(root)` entry of a top-level function without a
/// `(root)` frame in the pprof file is pprof's cum minus its caller edges.)
#[test]
fn differences_are_reported() {
    let map = |pairs: &[(&str, i64)]| pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect::<BTreeMap<_, _>>();
    let entry = |name: &str, kind: &str, total: i64| serde_json::json!({"name": name, "file": null, "line": null, "column": null, "kind": kind, "total": total});
    let row = serde_json::json!({"name": "parse", "file": null});
    let function = serde_json::json!({"self": 10, "total": 50});
    // parse: 40 samples through main, 10 with parse at the top of the stack (no pprof edge).
    let peek =
        Peek { flat: 10, cum: 50, callers: map(&[("main", 40)]), callees: map(&[("tokenize", 30), ("lex", 10)]) };
    let up =
        serde_json::json!({"function": function, "callers": [entry("main", "js", 40), entry("(root)", "root", 10)]});
    let down =
        serde_json::json!({"function": function, "callees": [entry("tokenize", "js", 30), entry("lex", "js", 10)]});
    assert_eq!(differences("x", "-tree", SAMPLES, &row, &peek, &up, &down), Vec::<String>::new());
    let mut wrong = up.clone();
    wrong["callers"][1]["total"] = 9.into();
    assert_eq!(differences("x", "-tree", SAMPLES, &row, &peek, &wrong, &down).len(), 1);
    let mut wrong = up.clone();
    wrong["callers"].as_array_mut().unwrap().pop();
    assert_eq!(differences("x", "-tree", SAMPLES, &row, &peek, &wrong, &down).len(), 1);
    let mut wrong = down.clone();
    wrong["callees"][0]["name"] = "tokenise".into();
    assert_eq!(differences("x", "-tree", SAMPLES, &row, &peek, &up, &wrong).len(), 1);
    let mut wrong = down.clone();
    wrong["function"]["self"] = 11.into();
    assert_eq!(differences("x", "-tree", SAMPLES, &row, &peek, &up, &wrong).len(), 1);
    // pprof's own edges not adding up (a recursive function slipped through) is reported too.
    let recursive = Peek { callers: map(&[("main", 40), ("parse2", 20)]), ..peek };
    assert!(!differences("x", "-tree", SAMPLES, &row, &recursive, &up, &down).is_empty());
}
