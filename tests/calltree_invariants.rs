//! Issue 19, invariants of the call-tree views on generated profiles: random call trees (wide; a
//! small pool of functions, so recursion, direct and indirect, everywhere; a chain of 2500+ frames
//! with long runs of direct recursion and indirect cycles), many samples, written as `.cpuprofile`
//! files by a deterministic generator (below; a seed gives the same file every time). For each, the
//! JSON of `cpuprof tree` (top-down, bottom-up, pruned, `--collapse-recursion`), `callers` and
//! `callees --depth 3` and `collapse` must satisfy what the contract (issue 19) promises:
//!
//! - top-down: a child's total ≤ its parent's; children's totals + self = total; the roots' totals
//!   sum to `top`'s total; per function, the self of its nodes sums to `top`'s self and the total
//!   of its outermost nodes (no ancestor of the same function) to `top`'s total;
//! - bottom-up: the roots are `top --all`'s rows (self and total per function); below, a child's
//!   total ≤ its parent's and the children sum to at most the parent; no node below a root is the
//!   root's function; the root's children are the function's callers;
//! - callers: their totals sum exactly to the function's total, `(root)` included; callees: their
//!   totals + the function's self = its total; the function is never one of its own entries;
//!   deeper levels are the bottom-up tree's deeper nodes and never exceed their parent;
//! - `--min-percent`/`--max-depth`: the shown tree is the full tree cut where the contract says,
//!   and `pruned` holds exactly what was cut (shown children + pruned + self = total; a bottom-up
//!   tree's first level is cut by self and its `pruned` sums self);
//! - `--collapse-recursion`: no function twice on any path; per root (and per function) the totals
//!   are those of the uncollapsed tree.
//!
//! Besides the invariants, `collapse`'s folded stacks (cpuprof's folding, which tests/fold.rs and
//! tests/folded.rs check against the oracle) are read back here and the trees, callers and callees
//! are recomputed from them by the contract's rules (prefix tree of the stacks; outermost occurrence
//! read upwards; innermost occurrence read downwards; Firefox's collapse of recursion), and must
//! equal cpuprof's exactly.
//!
//! The trees' JSON nests 2500+ levels deep, past serde_json's recursion limit (128), so it is read
//! by the small parser below, on a thread with a large stack.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use common::cpuprof;
use serde_json::{Map, Number, Value};

// ---------------------------------------------------------------------------------------------
// The generator

/// splitmix64: small, deterministic, good enough for shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `percent`/100.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// What kind of tree to generate.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// Many functions (recursion rare), wide fan-out, depth up to 20.
    Wide,
    /// Eight functions, depth up to 80: recursion, direct and indirect, on most paths; some
    /// siblings share a call frame (which a prefix tree merges).
    Tangled,
    /// A chain of 2500+ frames under `main`: runs of direct recursion, indirect cycles of 2-4
    /// functions, random stretches; small subtrees hang off it.
    Deep,
}

/// Special functions of the generator (indices into the function table).
const ROOT: usize = 0;
const PROGRAM: usize = 1;
const GC: usize = 2;
const IDLE: usize = 3;
const FIRST_JS: usize = 4;

/// A generated `.cpuprofile`.
fn generate(seed: u64, shape: Shape) -> String {
    let mut rng = Rng(seed);
    let pool = match shape {
        Shape::Wide => 300,
        Shape::Tangled => 8,
        Shape::Deep => 10,
    };
    // (functionName, url, lineNumber, columnNumber). Two js functions share a name in different
    // files (`handle`), so name alone does not identify a function.
    let mut funcs: Vec<(String, String, i64, i64)> = vec![
        ("(root)".into(), String::new(), -1, -1),
        ("(program)".into(), String::new(), -1, -1),
        ("(garbage collector)".into(), String::new(), -1, -1),
        ("(idle)".into(), String::new(), -1, -1),
    ];
    for i in 0..pool {
        let name = if i == 1 || i == 2 { "handle".to_owned() } else { format!("f{i}") };
        funcs.push((name, format!("file:///gen/m{}.js", i % 7), (i * 3 + 1) as i64, (i % 5 * 4 + 2) as i64));
    }
    let js = |rng: &mut Rng| FIRST_JS + rng.below(pool);
    // Nodes: (function, parent, depth, children).
    let mut nodes: Vec<(usize, usize, usize, Vec<usize>)> = vec![(ROOT, 0, 0, Vec::new())];
    let add = |nodes: &mut Vec<(usize, usize, usize, Vec<usize>)>, parent: usize, func: usize| -> usize {
        let id = nodes.len();
        let depth = nodes[parent].2 + 1;
        nodes.push((func, parent, depth, Vec::new()));
        nodes[parent].3.push(id);
        id
    };
    for meta in [PROGRAM, GC, IDLE] {
        add(&mut nodes, 0, meta);
    }
    // Nodes the samples may land on, each with a weight.
    let mut targets: Vec<(usize, usize)> = vec![(1, 300), (2, 300), (3, 500)];
    match shape {
        Shape::Wide | Shape::Tangled => {
            let (count, max_depth, dup) = match shape {
                Shape::Wide => (3000, 20, false),
                _ => (3000, 80, true),
            };
            for _ in 0..4 {
                let f = js(&mut rng);
                if !nodes[0].3.iter().any(|&c| nodes[c].0 == f) {
                    add(&mut nodes, 0, f);
                }
            }
            while nodes.len() < count {
                let last = nodes.len() - 1;
                let parent = if rng.chance(55) && nodes[last].0 >= FIRST_JS {
                    last
                } else {
                    let p = 4 + rng.below(nodes.len() - 4);
                    if shape_is_wide(shape) && rng.chance(30) {
                        0
                    } else {
                        p
                    }
                };
                if nodes[parent].2 >= max_depth {
                    continue;
                }
                let f = js(&mut rng);
                let taken = nodes[parent].3.iter().any(|&c| nodes[c].0 == f);
                if taken && !(dup && rng.chance(10)) {
                    continue;
                }
                add(&mut nodes, parent, f);
            }
            for i in 4..nodes.len() {
                let w = if rng.chance(3) { 200 } else { 1 + rng.below(10) };
                targets.push((i, w));
            }
        }
        Shape::Deep => {
            // main, then every function once (so all are shallow and everything below recurses).
            let mut at = add(&mut nodes, 0, FIRST_JS);
            for f in FIRST_JS + 1..FIRST_JS + pool {
                at = add(&mut nodes, at, f);
            }
            let mut chain = Vec::new();
            while chain.len() < 2500 {
                match rng.below(3) {
                    0 => {
                        let f = js(&mut rng);
                        let n = rng.range(50, 400);
                        chain.extend(std::iter::repeat_n(f, n));
                    }
                    1 => {
                        let k = rng.range(2, 4);
                        let mut cycle: Vec<usize> = Vec::new();
                        while cycle.len() < k {
                            let f = js(&mut rng);
                            if !cycle.contains(&f) {
                                cycle.push(f);
                            }
                        }
                        for _ in 0..rng.range(20, 100) {
                            chain.extend(&cycle);
                        }
                    }
                    _ => {
                        for _ in 0..rng.range(5, 30) {
                            chain.push(js(&mut rng));
                        }
                    }
                }
            }
            let mut chain_nodes = Vec::new();
            for f in chain {
                at = add(&mut nodes, at, f);
                chain_nodes.push(at);
            }
            // Sample points along the chain (the deepest one included), with small subtrees.
            let mut points: Vec<usize> = (0..60).map(|_| chain_nodes[rng.below(chain_nodes.len())]).collect();
            points.push(at);
            for (k, &p) in points.iter().enumerate() {
                targets.push((p, 20 + rng.below(100)));
                if k % 2 == 0 {
                    let mut under = p;
                    for _ in 0..rng.range(1, 6) {
                        let f = js(&mut rng);
                        if nodes[under].3.iter().any(|&c| nodes[c].0 == f) {
                            continue;
                        }
                        under = add(&mut nodes, under, f);
                        targets.push((under, 5 + rng.below(40)));
                    }
                }
            }
            // The shallow part too.
            for i in 4..4 + pool {
                targets.push((i, 30));
            }
        }
    }
    // Samples.
    let count = match shape {
        Shape::Deep => 12_000,
        _ => 25_000,
    };
    let sum: usize = targets.iter().map(|t| t.1).sum();
    let mut samples = Vec::with_capacity(count);
    let mut hits = vec![0u64; nodes.len()];
    for _ in 0..count {
        let mut r = rng.below(sum);
        let node = targets
            .iter()
            .find(|t| {
                if r < t.1 {
                    true
                } else {
                    r -= t.1;
                    false
                }
            })
            .expect("a target")
            .0;
        samples.push(node);
        hits[node] += 1;
    }
    // JSON, shaped as node 20 writes it; ids are not positions.
    let id = |i: usize| i * 3 + 1;
    let mut out = String::from("{\"nodes\":[");
    for (i, (f, _, _, children)) in nodes.iter().enumerate() {
        let (name, url, line, column) = &funcs[*f];
        let script = if url.is_empty() { 0 } else { 10 + f % 7 };
        if i > 0 {
            out.push(',');
        }
        write!(
            out,
            "{{\"id\":{},\"callFrame\":{{\"functionName\":\"{name}\",\"scriptId\":\"{script}\",\"url\":\"{url}\",\
             \"lineNumber\":{line},\"columnNumber\":{column}}},\"hitCount\":{}",
            id(i),
            hits[i]
        )
        .unwrap();
        if !children.is_empty() {
            let ids: Vec<String> = children.iter().map(|&c| id(c).to_string()).collect();
            write!(out, ",\"children\":[{}]", ids.join(",")).unwrap();
        }
        out.push('}');
    }
    let mut time = 1_000_000u64;
    let mut deltas = Vec::with_capacity(count);
    for k in 0..count {
        let d = if k == 0 { 3000 } else { 50 + rng.below(1950) as u64 };
        time += d;
        deltas.push(d.to_string());
    }
    let sample_ids: Vec<String> = samples.iter().map(|&s| id(s).to_string()).collect();
    write!(
        out,
        "],\"startTime\":1000000,\"endTime\":{},\"samples\":[{}],\"timeDeltas\":[{}]}}",
        time + 1000,
        sample_ids.join(","),
        deltas.join(",")
    )
    .unwrap();
    out
}

fn shape_is_wide(shape: Shape) -> bool {
    matches!(shape, Shape::Wide)
}

// ---------------------------------------------------------------------------------------------
// A JSON reader without a depth limit (recursive: run it on a thread with a large stack)

fn parse_json(text: &[u8]) -> Value {
    let mut at = 0;
    let value = parse_value(text, &mut at);
    skip_ws(text, &mut at);
    assert_eq!(at, text.len(), "trailing bytes after the JSON value");
    value
}

fn skip_ws(t: &[u8], at: &mut usize) {
    while *at < t.len() && t[*at].is_ascii_whitespace() {
        *at += 1;
    }
}

fn expect_byte(t: &[u8], at: &mut usize, b: u8) {
    skip_ws(t, at);
    assert_eq!(t.get(*at), Some(&b), "JSON: expected {:?} at byte {}", b as char, *at);
    *at += 1;
}

fn parse_value(t: &[u8], at: &mut usize) -> Value {
    skip_ws(t, at);
    match t.get(*at).copied() {
        Some(b'{') => {
            *at += 1;
            let mut map = Map::new();
            skip_ws(t, at);
            if t[*at] == b'}' {
                *at += 1;
                return Value::Object(map);
            }
            loop {
                skip_ws(t, at);
                let key = parse_string(t, at);
                expect_byte(t, at, b':');
                let value = parse_value(t, at);
                map.insert(key, value);
                skip_ws(t, at);
                *at += 1;
                match t[*at - 1] {
                    b',' => {}
                    b'}' => return Value::Object(map),
                    other => panic!("JSON: {:?} in an object at byte {}", other as char, *at - 1),
                }
            }
        }
        Some(b'[') => {
            *at += 1;
            let mut items = Vec::new();
            skip_ws(t, at);
            if t[*at] == b']' {
                *at += 1;
                return Value::Array(items);
            }
            loop {
                items.push(parse_value(t, at));
                skip_ws(t, at);
                *at += 1;
                match t[*at - 1] {
                    b',' => {}
                    b']' => return Value::Array(items),
                    other => panic!("JSON: {:?} in an array at byte {}", other as char, *at - 1),
                }
            }
        }
        Some(b'"') => Value::String(parse_string(t, at)),
        Some(b't') if t[*at..].starts_with(b"true") => {
            *at += 4;
            Value::Bool(true)
        }
        Some(b'f') if t[*at..].starts_with(b"false") => {
            *at += 5;
            Value::Bool(false)
        }
        Some(b'n') if t[*at..].starts_with(b"null") => {
            *at += 4;
            Value::Null
        }
        _ => {
            let start = *at;
            while *at < t.len() && matches!(t[*at], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                *at += 1;
            }
            let s = std::str::from_utf8(&t[start..*at]).unwrap();
            if let Ok(i) = s.parse::<i64>() {
                Value::Number(i.into())
            } else if let Ok(u) = s.parse::<u64>() {
                Value::Number(u.into())
            } else {
                let f: f64 = s.parse().unwrap_or_else(|_| panic!("JSON: bad value {s:?} at byte {start}"));
                Value::Number(Number::from_f64(f).expect("finite"))
            }
        }
    }
}

fn parse_string(t: &[u8], at: &mut usize) -> String {
    assert_eq!(t[*at], b'"', "JSON: expected a string at byte {}", *at);
    *at += 1;
    let mut out: Vec<u8> = Vec::new();
    let mut pending_high: Option<u32> = None;
    loop {
        let b = t[*at];
        *at += 1;
        match b {
            b'"' => return String::from_utf8(out).expect("UTF-8"),
            b'\\' => {
                let e = t[*at];
                *at += 1;
                let c = match e {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let hex = std::str::from_utf8(&t[*at..*at + 4]).unwrap();
                        let unit = u32::from_str_radix(hex, 16).expect("\\u hex");
                        *at += 4;
                        if (0xd800..0xdc00).contains(&unit) {
                            pending_high = Some(unit);
                            continue;
                        }
                        let code = match pending_high.take() {
                            Some(high) => 0x10000 + ((high - 0xd800) << 10) + (unit - 0xdc00),
                            None => unit,
                        };
                        char::from_u32(code).unwrap_or('\u{fffd}')
                    }
                    other => panic!("JSON: bad escape \\{}", other as char),
                };
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            _ => out.push(b),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running cpuprof

/// cpuprof with `args` (which must succeed), its JSON read without a depth limit.
fn run_json(args: &[&str]) -> Value {
    parse_json(&run_text(args))
}

/// cpuprof with `args` (which must succeed), its stdout.
fn run_text(args: &[&str]) -> Vec<u8> {
    let out = cpuprof().args(args).output().expect("cpuprof runs");
    assert!(out.status.success(), "cpuprof {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

// ---------------------------------------------------------------------------------------------
// Reading the JSON

/// A function's identity as the contract has it (name, file, line, column, kind).
fn key(v: &Value) -> String {
    format!("{} {} {} {} {}", v["name"], v["file"], v["line"], v["column"], v["kind"])
}

/// The frame `collapse` prints for a function: `name file:line`, or the name without a file.
fn frame(v: &Value) -> String {
    match (v["file"].as_str(), v["line"].as_i64()) {
        (Some(file), Some(line)) => format!("{} {file}:{line}", v["name"].as_str().unwrap()),
        (Some(file), None) => format!("{} {file}", v["name"].as_str().unwrap()),
        _ => v["name"].as_str().unwrap().to_owned(),
    }
}

fn int(v: &Value, field: &str) -> i64 {
    v[field].as_i64().unwrap_or_else(|| panic!("no integer {field} in {}", brief(v)))
}

fn children<'a>(v: &'a Value, field: &str) -> &'a [Value] {
    v[field].as_array().map_or(&[], Vec::as_slice)
}

/// A node without its children, for messages.
fn brief(v: &Value) -> String {
    let mut out = Map::new();
    if let Some(o) = v.as_object() {
        for (k, x) in o {
            let x = match x.as_array() {
                Some(a) => Value::String(format!("[{} entries]", a.len())),
                None => x.clone(),
            };
            out.insert(k.clone(), x);
        }
    }
    Value::Object(out).to_string()
}

/// Sort key of the contract's ties: name, file, line, column (None first).
fn tie(v: &Value) -> (String, Option<String>, Option<i64>, Option<i64>) {
    (
        v["name"].as_str().unwrap_or_default().to_owned(),
        v["file"].as_str().map(str::to_owned),
        v["line"].as_i64(),
        v["column"].as_i64(),
    )
}

/// Problems found, with a cap on how many are kept.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, p: String) {
        if self.0.len() < 40 {
            self.0.push(p);
        }
    }
    fn check(&mut self, ok: bool, p: impl FnOnce() -> String) {
        if !ok {
            self.add(p());
        }
    }
}

/// Checks the order of `list` by `field` descending, then [`tie`].
fn check_order(p: &mut Problems, list: &[Value], field: &str, what: &dyn Fn() -> String) {
    for pair in list.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (first, second) = (int(a, field), int(b, field));
        let ok = first > second || (first == second && tie(a) <= tie(b));
        p.check(ok, || format!("{}: order by {field}: {} before {}", what(), brief(a), brief(b)));
    }
}

/// Percentages: `*_pct` = 100 * value / denominator.
fn check_pct(p: &mut Problems, v: &Value, denominator: i64, what: &dyn Fn() -> String) {
    for (pct, field) in [("self_pct", "self"), ("total_pct", "total")] {
        let want = if denominator == 0 { 0.0 } else { 100.0 * int(v, field) as f64 / denominator as f64 };
        let got = v[pct].as_f64().unwrap_or(f64::NAN);
        p.check((got - want).abs() <= 1e-9 * want.abs().max(1.0), || {
            format!("{}: {pct} {got}, want {want} ({})", what(), brief(v))
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Folded stacks, and the contract's rules computed on them

/// `collapse` output: (stack root-first, weight).
fn folded(text: &[u8]) -> Vec<(Vec<String>, i64)> {
    String::from_utf8(text.to_vec())
        .expect("UTF-8")
        .lines()
        .map(|line| {
            let (stack, weight) = line.rsplit_once(' ').expect("`stack weight`");
            (stack.split(';').map(str::to_owned).collect(), weight.parse().expect("weight"))
        })
        .collect()
}

/// A prefix tree: label → (total, self, children).
#[derive(Default, Debug, PartialEq)]
struct Trie {
    total: i64,
    own: i64,
    children: BTreeMap<String, Trie>,
}

/// Where a path's weight counts as self.
#[derive(Clone, Copy, PartialEq)]
enum Own {
    /// Nowhere.
    No,
    /// At its last node (top-down: the leaf).
    End,
    /// At every node of the path below the trie's root (bottom-up: the leaf is the root's function).
    Along,
}

impl Trie {
    fn add(&mut self, path: &[String], weight: i64, own: Own) {
        let mut at = self;
        at.total += weight;
        for f in path {
            at = at.children.entry(f.clone()).or_default();
            at.total += weight;
            if own == Own::Along {
                at.own += weight;
            }
        }
        if own == Own::End {
            at.own += weight;
        }
    }
}

/// Firefox's collapse of recursion: a function seen again drops the frames since its first time.
fn collapse_recursion(stack: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in stack {
        match out.iter().position(|g| g == f) {
            Some(i) => out.truncate(i + 1),
            None => out.push(f.clone()),
        }
    }
    out
}

/// The top-down prefix tree of `stacks`.
fn top_down(stacks: &[(Vec<String>, i64)]) -> Trie {
    let mut t = Trie::default();
    for (s, w) in stacks {
        t.add(s, *w, Own::End);
    }
    t
}

/// The bottom-up tree of `stacks` (contract): per function, the upward paths from its outermost
/// occurrence, self where the stack's leaf is that function.
fn bottom_up(stacks: &[(Vec<String>, i64)]) -> Trie {
    let mut t = Trie::default();
    for (s, w) in stacks {
        let mut seen = BTreeSet::new();
        for (i, f) in s.iter().enumerate() {
            if seen.insert(f) {
                let path: Vec<String> = s[..=i].iter().rev().cloned().collect();
                t.add(&path, *w, if s.last() == Some(f) { Own::Along } else { Own::No });
            }
        }
    }
    t
}

/// Callees of `f` (contract): from its innermost occurrence downwards, `depth` levels; the trie's
/// `own` at the top is f's self.
fn callees_of(stacks: &[(Vec<String>, i64)], f: &str, depth: usize) -> Trie {
    let mut t = Trie::default();
    for (s, w) in stacks {
        if let Some(j) = s.iter().rposition(|g| g == f) {
            let below: Vec<String> = s[j + 1..].iter().take(depth).cloned().collect();
            t.add(&below, *w, Own::No);
            if j + 1 == s.len() {
                t.own += w;
            }
        }
    }
    t
}

/// Where a node is, for messages: the depth and the last few frames of its path.
fn at(what: &str, path: &[String]) -> String {
    let tail: Vec<&str> = path.iter().rev().take(3).rev().map(String::as_str).collect();
    let more = if path.len() > 3 { "… → " } else { "" };
    format!("{what} at depth {}: {more}{}", path.len(), tail.join(" → "))
}

/// Compares a cpuprof tree (`field` = "children", "callers" or "callees") with a trie, by frame
/// label: totals, self where `own` is set, and the same children.
fn compare_trie(p: &mut Problems, nodes: &[Value], field: &str, trie: &Trie, own: bool, what: &str) {
    compare_trie_at(p, nodes, field, trie, own, what, &mut Vec::new());
}

fn compare_trie_at(
    p: &mut Problems,
    nodes: &[Value],
    field: &str,
    trie: &Trie,
    own: bool,
    what: &str,
    path: &mut Vec<String>,
) {
    let mut ours: BTreeMap<String, &Value> = BTreeMap::new();
    for n in nodes {
        let label = if n["kind"] == "root" { "(root)".to_owned() } else { frame(n) };
        if ours.insert(label.clone(), n).is_some() {
            p.add(format!("{}: two entries {label:?}", at(what, path)));
        }
    }
    let want: BTreeSet<&String> = trie.children.keys().collect();
    let got: BTreeSet<&String> = ours.keys().collect();
    if want != got {
        let missing: Vec<_> = want.difference(&got).take(5).collect();
        let extra: Vec<_> = got.difference(&want).take(5).collect();
        p.add(format!(
            "{}: entries differ from the folded stacks': missing {missing:?}, extra {extra:?}",
            at(what, path)
        ));
        return;
    }
    for (label, n) in ours {
        let t = &trie.children[&label];
        path.push(label);
        p.check(int(n, "total") == t.total, || {
            format!("{}: total {}, folded stacks {}", at(what, path), int(n, "total"), t.total)
        });
        if own {
            p.check(int(n, "self") == t.own, || {
                format!("{}: self {}, folded stacks {}", at(what, path), int(n, "self"), t.own)
            });
        }
        compare_trie_at(p, children(n, field), field, t, own, what, path);
        path.pop();
    }
}

/// Callers of `f` as a trie: the bottom-up root's subtree, plus a `(root)` entry wherever the
/// upward path from f's outermost occurrence reaches the top within `depth` levels ("at every
/// level the part that reached the top of the stack is again an entry named `(root)`").
fn callers_of(stacks: &[(Vec<String>, i64)], f: &str, depth: usize) -> Trie {
    let mut t = Trie::default();
    for (s, w) in stacks {
        if let Some(i) = s.iter().position(|g| g == f) {
            let mut path: Vec<String> = s[..i].iter().rev().take(depth).cloned().collect();
            if i < depth {
                path.push("(root)".to_owned());
            }
            t.add(&path, *w, Own::No);
        }
    }
    t
}

// ---------------------------------------------------------------------------------------------
// The invariants

/// A walk that keeps only the path's functions as a set (cheaper on deep trees).
fn walk_sets<'a>(roots: &'a [Value], mut visit: impl FnMut(&'a Value, &BTreeMap<String, usize>)) {
    // Iterative DFS with an explicit path multiset, entered/left around each node.
    enum Step<'a> {
        Enter(&'a Value),
        Leave(String),
    }
    let mut on_path: BTreeMap<String, usize> = BTreeMap::new();
    let mut stack: Vec<Step<'a>> = roots.iter().rev().map(Step::Enter).collect();
    while let Some(step) = stack.pop() {
        match step {
            Step::Enter(n) => {
                visit(n, &on_path);
                let k = key(n);
                *on_path.entry(k.clone()).or_default() += 1;
                stack.push(Step::Leave(k));
                for c in children(n, "children").iter().rev() {
                    stack.push(Step::Enter(c));
                }
            }
            Step::Leave(k) => {
                let c = on_path.get_mut(&k).unwrap();
                *c -= 1;
                if *c == 0 {
                    on_path.remove(&k);
                }
            }
        }
    }
}

/// top-down, nothing pruned: sums, order, per-function numbers against `top`. With `collapsed`
/// (`--collapse-recursion`), the functions between a function and its recursive call leave those
/// stacks, so their outermost nodes may add up to less than `top`'s total; self stays (the leaf
/// function of a stack is never removed).
fn check_top_down(p: &mut Problems, tree: &Value, top: &Value, what: &str, collapsed: bool) {
    let roots = children(tree, "roots");
    let denominator = int(top, "total");
    p.check(tree["total"] == top["total"] && tree["samples"] == top["samples"], || {
        format!(
            "{what}: tree total/samples {}/{} vs top {}/{}",
            tree["total"], tree["samples"], top["total"], top["samples"]
        )
    });
    p.check(tree["view"] == "top-down", || format!("{what}: view {}", tree["view"]));
    p.check(tree.get("pruned").is_none(), || {
        format!("{what}: top-level pruned at --min-percent 0: {}", tree["pruned"])
    });
    let sum: i64 = roots.iter().map(|r| int(r, "total")).sum();
    let sum_samples: i64 = roots.iter().map(|r| int(r, "total_samples")).sum();
    p.check(sum == denominator, || format!("{what}: roots' totals sum to {sum}, top's total {denominator}"));
    p.check(sum_samples == int(top, "samples"), || {
        format!("{what}: roots' samples {sum_samples}, top's {}", top["samples"])
    });
    check_order(p, roots, "total", &|| format!("{what} roots"));
    let mut self_sum: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let mut outer_sum: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    walk_sets(roots, |n, on_path| {
        let k = key(n);
        let here = || format!("{what}: node {} (depth {})", brief(n), on_path.values().sum::<usize>() + 1);
        let kids = children(n, "children");
        let (total, own) = (int(n, "total"), int(n, "self"));
        p.check(n.get("pruned").is_none(), || format!("{}: pruned at --min-percent 0", here()));
        p.check(total > 0 && own <= total, || format!("{}: self {own} total {total}", here()));
        for field in ["total", "total_samples"] {
            let own_field = if field == "total" { "self" } else { "self_samples" };
            let s: i64 = kids.iter().map(|c| int(c, field)).sum();
            p.check(s + int(n, own_field) == int(n, field), || {
                format!("{}: children's {field} {s} + {own_field} {} != {}", here(), int(n, own_field), int(n, field))
            });
            for c in kids {
                p.check(int(c, field) <= int(n, field), || format!("{}: child {} has more {field}", here(), brief(c)));
            }
        }
        let distinct: BTreeSet<String> = kids.iter().map(key).collect();
        p.check(distinct.len() == kids.len(), || format!("{}: two children of one function", here()));
        check_order(p, kids, "total", &here);
        check_pct(p, n, denominator, &here);
        let e = self_sum.entry(k.clone()).or_default();
        e.0 += own;
        e.1 += int(n, "self_samples");
        if !on_path.contains_key(&k) {
            let e = outer_sum.entry(k).or_default();
            e.0 += total;
            e.1 += int(n, "total_samples");
        }
    });
    // Per function, against top's rows.
    let rows: BTreeMap<String, &Value> = children(top, "rows").iter().map(|r| (key(r), r)).collect();
    for (k, row) in &rows {
        let own = self_sum.get(k).copied().unwrap_or_default();
        let outer = outer_sum.get(k).copied().unwrap_or_default();
        p.check(own == (int(row, "self"), int(row, "self_samples")), || {
            format!("{what}: {k}: nodes' self sums to {own:?}, top's row {}", brief(row))
        });
        let want = (int(row, "total"), int(row, "total_samples"));
        let ok = if collapsed { outer.0 <= want.0 && outer.1 <= want.1 } else { outer == want };
        p.check(ok, || format!("{what}: {k}: outermost nodes' total sums to {outer:?}, top's row {}", brief(row)));
    }
    for k in outer_sum.keys() {
        p.check(rows.contains_key(k), || format!("{what}: {k} is in the tree, not in top"));
    }
}

/// bottom-up, nothing pruned: roots = top's rows; sums and monotonicity below.
fn check_bottom_up(p: &mut Problems, tree: &Value, top: &Value, what: &str) {
    let roots = children(tree, "roots");
    let denominator = int(top, "total");
    p.check(tree["view"] == "bottom-up", || format!("{what}: view {}", tree["view"]));
    p.check(tree["total"] == top["total"], || format!("{what}: total {} vs top {}", tree["total"], top["total"]));
    let rows = children(top, "rows");
    p.check(roots.len() == rows.len(), || format!("{what}: {} roots, top has {} rows", roots.len(), rows.len()));
    for (r, row) in roots.iter().zip(rows) {
        for field in ["name", "file", "line", "column", "kind", "self", "self_samples", "total", "total_samples"] {
            p.check(r[field] == row[field], || format!("{what}: root {} vs top row {}: {field}", brief(r), brief(row)));
        }
    }
    check_order(p, roots, "self", &|| format!("{what} roots"));
    for r in roots {
        let f = key(r);
        let mut stack: Vec<&Value> = vec![r];
        while let Some(n) = stack.pop() {
            let here = || format!("{what}: under {f}: node {}", brief(n));
            let kids = children(n, "children");
            p.check(n.get("pruned").is_none(), || format!("{}: pruned at --min-percent 0", here()));
            p.check(int(n, "self") <= int(n, "total"), || format!("{}: self > total", here()));
            for field in ["total", "total_samples", "self"] {
                let s: i64 = kids.iter().map(|c| int(c, field)).sum();
                p.check(s <= int(n, field), || format!("{}: children's {field} sum {s} > {}", here(), int(n, field)));
            }
            check_order(p, kids, "total", &here);
            check_pct(p, n, denominator, &here);
            for c in kids {
                p.check(key(c) != f, || format!("{}: the root's function below it", here()));
                p.check(int(c, "total") > 0, || format!("{}: child with total 0", here()));
                stack.push(c);
            }
        }
    }
}

/// A pruned tree (--min-percent `percent`, --max-depth `max_depth`) against the full one.
fn check_pruned(p: &mut Problems, full: &Value, cut: &Value, percent: f64, max_depth: Option<usize>, what: &str) {
    let denominator = int(full, "total");
    // (full children, cut children, cut's pruned, depth of the children, where)
    #[allow(clippy::type_complexity)]
    let mut work: Vec<(&[Value], &[Value], &Value, usize, String)> =
        vec![(children(full, "roots"), children(cut, "roots"), &cut["pruned"], 1, format!("{what}, roots"))];
    let top_down = full["view"] == "top-down";
    while let Some((all, kept, pruned, depth, here)) = work.pop() {
        let beyond = max_depth.is_some_and(|m| depth > m);
        // A bottom-up tree's first level (functions) is cut by self, and its `pruned` sums their
        // self, as their totals overlap (the contract's "Bottom-up first level").
        let by_self = depth == 1 && !top_down;
        let (total_key, samples_key) = if by_self { ("self", "self_samples") } else { ("total", "total_samples") };
        let shown = |n: &Value| (int(n, total_key) as f64) * 100.0 >= percent * denominator as f64;
        let want: Vec<&Value> = all.iter().filter(|n| !beyond && shown(n)).collect();
        let cut_off: Vec<&Value> = all.iter().filter(|n| beyond || !shown(n)).collect();
        let same = want.len() == kept.len() && want.iter().zip(kept).all(|(a, b)| key(a) == key(b));
        if !same {
            let w: Vec<String> = want.iter().take(6).map(|n| frame(n)).collect();
            let k: Vec<String> = kept.iter().take(6).map(frame).collect();
            p.add(format!("{here}: shown {} children {k:?}…, want {} {w:?}…", kept.len(), want.len()));
            continue;
        }
        let (nodes, total, samples) = (
            cut_off.len() as i64,
            cut_off.iter().map(|n| int(n, total_key)).sum::<i64>(),
            cut_off.iter().map(|n| int(n, samples_key)).sum::<i64>(),
        );
        if cut_off.is_empty() {
            p.check(pruned.is_null(), || format!("{here}: pruned {pruned} with nothing cut"));
        } else {
            let got = (pruned["nodes"].as_i64(), pruned["total"].as_i64(), pruned["total_samples"].as_i64());
            p.check(got == (Some(nodes), Some(total), Some(samples)), || {
                format!("{here}: pruned {pruned}, want nodes {nodes} total {total} total_samples {samples}")
            });
        }
        for (a, b) in want.iter().zip(kept) {
            for field in ["self", "self_samples", "total", "total_samples"] {
                p.check(a[field] == b[field], || {
                    format!("{here}: {} {field} {} vs full tree {}", frame(b), b[field], a[field])
                });
            }
            if top_down {
                let s: i64 = children(b, "children").iter().map(|c| int(c, "total")).sum();
                let pr = b["pruned"]["total"].as_i64().unwrap_or(0);
                p.check(s + pr + int(b, "self") == int(b, "total"), || {
                    format!(
                        "{here} → {}: shown {s} + pruned {pr} + self {} != total {}",
                        frame(b),
                        int(b, "self"),
                        int(b, "total")
                    )
                });
            }
            if max_depth.is_some_and(|m| depth >= m) {
                p.check(children(b, "children").is_empty(), || {
                    format!("{here} → {}: children at --max-depth", frame(b))
                });
            }
            work.push((
                children(a, "children"),
                children(b, "children"),
                &b["pruned"],
                depth + 1,
                format!("{what}, under {} at depth {depth}", frame(b)),
            ));
        }
    }
    if top_down {
        let s: i64 = children(cut, "roots").iter().map(|r| int(r, "total")).sum();
        let pr = cut["pruned"]["total"].as_i64().unwrap_or(0);
        p.check(s + pr == denominator, || format!("{what}: roots {s} + pruned {pr} != total {denominator}"));
    }
}

/// `callers`/`callees --depth 3` of the function `row`: sums, self-exclusion, nesting; the callers
/// against the bottom-up root's subtree.
fn check_callers_callees(
    p: &mut Problems,
    input: &str,
    opts: &[&str],
    row: &Value,
    bottom: &Value,
    stacks: &[(Vec<String>, i64)],
) {
    let name = row["name"].as_str().unwrap();
    let f = key(row);
    let args = |cmd: &'static str| -> Vec<String> {
        [cmd, name, input, "--depth", "3", "--format", "json"].iter().chain(opts).map(|s| (*s).to_owned()).collect()
    };
    let run = |cmd| {
        let a = args(cmd);
        run_json(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for (cmd, field) in [("callers", "callers"), ("callees", "callees")] {
        let report = run(cmd);
        let what = format!("{input} {}: {cmd} {name:?} --depth 3", opts.join(" "));
        let function = &report["function"];
        for k in ["name", "file", "line", "column", "kind", "self", "self_samples", "total", "total_samples"] {
            p.check(function[k] == row[k], || {
                format!("{what}: function {} vs top row {}: {k}", brief(function), brief(row))
            });
        }
        let (total, own) = (int(row, "total"), int(row, "self"));
        let entries = children(&report, field);
        let sum: i64 = entries.iter().map(|e| int(e, "total")).sum();
        let sum_samples: i64 = entries.iter().map(|e| int(e, "total_samples")).sum();
        if cmd == "callers" {
            p.check(sum == total, || format!("{what}: callers sum to {sum}, the function's total is {total}"));
            p.check(sum_samples == int(row, "total_samples"), || {
                format!("{what}: callers' samples sum to {sum_samples}")
            });
        } else {
            p.check(sum + own == total, || format!("{what}: callees {sum} + self {own} != total {total}"));
            p.check(sum_samples + int(row, "self_samples") == int(row, "total_samples"), || {
                format!("{what}: callees' samples {sum_samples} + self_samples != total_samples")
            });
        }
        check_order(p, entries, "total", &|| what.clone());
        // Nesting.
        let mut stack: Vec<(&Value, usize)> = entries.iter().map(|e| (e, 1)).collect();
        while let Some((e, depth)) = stack.pop() {
            let here = || format!("{what}: entry {} (level {depth})", brief(e));
            p.check(key(e) != f, || format!("{}: the function itself", here()));
            p.check(depth <= 3, || format!("{}: deeper than --depth 3", here()));
            let want_pct = 100.0 * int(e, "total") as f64 / total as f64;
            let got = e["pct"].as_f64().unwrap_or(f64::NAN);
            p.check((got - want_pct).abs() <= 1e-9 * want_pct.max(1.0), || {
                format!("{}: pct {got}, want {want_pct}", here())
            });
            let kids = children(e, field);
            let s: i64 = kids.iter().map(|c| int(c, "total")).sum();
            p.check(s <= int(e, "total"), || format!("{}: nested entries sum to {s}", here()));
            check_order(p, kids, "total", &here);
            for c in kids {
                stack.push((c, depth + 1));
            }
        }
        // Against the folded stacks, by the contract's rules.
        let fr = frame(row);
        let trie = if cmd == "callers" { callers_of(stacks, &fr, 3) } else { callees_of(stacks, &fr, 3) };
        compare_trie(p, entries, field, &trie, false, &format!("{what} (vs folded)"));
        if cmd == "callers" {
            // The callers without `(root)` are the bottom-up root's children, two levels down too.
            let root = children(bottom, "roots").iter().find(|r| key(r) == f);
            let Some(root) = root else {
                p.add(format!("{what}: no bottom-up root"));
                continue;
            };
            let mut pairs: Vec<(&[Value], &[Value], usize, String)> =
                vec![(children(root, "children"), entries, 1, what.clone())];
            while let Some((bu, ours, depth, here)) = pairs.pop() {
                let ours: Vec<&Value> = ours.iter().filter(|e| e["kind"] != "root").collect();
                let same = bu.len() == ours.len()
                    && bu.iter().zip(&ours).all(|(a, b)| key(a) == key(b) && a["total"] == b["total"]);
                if !same {
                    p.add(format!(
                        "{here}: callers {:?} vs bottom-up children {:?}",
                        ours.iter().map(|e| (frame(e), int(e, "total"))).collect::<Vec<_>>(),
                        bu.iter().map(|e| (frame(e), int(e, "total"))).collect::<Vec<_>>()
                    ));
                    continue;
                }
                if depth < 3 {
                    for (a, b) in bu.iter().zip(ours) {
                        pairs.push((
                            children(a, "children"),
                            children(b, "callers"),
                            depth + 1,
                            format!("{here} → {}", frame(b)),
                        ));
                    }
                }
            }
            let roots_entry: i64 = entries.iter().filter(|e| e["kind"] == "root").map(|e| int(e, "total")).sum();
            let kids: i64 = children(root, "children").iter().map(|c| int(c, "total")).sum();
            p.check(roots_entry == int(root, "total") - kids, || {
                format!(
                    "{what}: (root) entry {roots_entry}, bottom-up root total {} - children {kids}",
                    int(root, "total")
                )
            });
        }
    }
}

/// `--collapse-recursion`: no function twice on a path; totals per root and per function kept.
fn check_collapsed(p: &mut Problems, plain: &Value, collapsed: &Value, top: &Value, what: &str) {
    check_top_down(p, collapsed, top, what, true);
    walk_sets(children(collapsed, "roots"), |n, on_path| {
        p.check(!on_path.contains_key(&key(n)), || format!("{what}: {} again below itself", brief(n)));
    });
    let per_root = |t: &Value| -> BTreeMap<String, (i64, i64)> {
        children(t, "roots").iter().map(|r| (key(r), (int(r, "total"), int(r, "total_samples")))).collect()
    };
    let (a, b) = (per_root(plain), per_root(collapsed));
    p.check(a == b, || format!("{what}: roots' totals changed:\n  plain     {a:?}\n  collapsed {b:?}"));
}

// ---------------------------------------------------------------------------------------------
// The tests

/// `--min-percent`, `--max-depth`, and `--bottom-up` or nothing.
type CutOptions = (&'static str, Option<&'static str>, Option<&'static str>);

/// Generates a profile of `shape` from `seed` and checks everything on it; panics with the list
/// of problems.
fn check_generated(seed: u64, shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("gen-{shape:?}-{seed}.cpuprofile").to_lowercase());
    std::fs::write(&path, generate(seed, shape)).unwrap();
    // A copy to look at when it fails: CALLTREE_KEEP=DIR.
    if let Some(keep) = std::env::var_os("CALLTREE_KEEP") {
        std::fs::copy(&path, Path::new(&keep).join(path.file_name().unwrap())).unwrap();
    }
    let input = path.to_str().unwrap();
    let mut p = Problems::default();
    // The deep chain's top-down JSON is ~200 MB (2-space indentation, 2600 levels): once, in
    // samples, and its cut trees limited in depth; the weights in time are the other shapes' job.
    let (weights, cuts): (&[&str], [CutOptions; 4]) = match shape {
        Shape::Deep => (
            &["samples"],
            [
                ("2", Some("40"), None),
                ("0.5", Some("4"), None),
                ("1", Some("3"), Some("--bottom-up")),
                ("0", Some("6"), None),
            ],
        ),
        _ => (
            &["samples", "time"],
            [
                ("2", None, None),
                ("0.5", Some("4"), None),
                ("1", Some("3"), Some("--bottom-up")),
                ("0", Some("6"), None),
            ],
        ),
    };
    for &weight in weights {
        let what =
            format!("seed {seed} {shape:?} --weight {weight}{}", if weight == "time" { " --include-idle" } else { "" });
        // In time, (idle) is kept too.
        let opts: &[&str] =
            if weight == "time" { &["--weight", "time", "--include-idle"] } else { &["--weight", weight] };
        let w = [opts, &["--format", "json"]].concat();
        let top = run_json(&[&["top", "--all", input][..], &w].concat());
        let stacks = folded(&run_text(&[&["collapse", input][..], opts].concat()));
        let full = run_json(&[&["tree", input, "--min-percent", "0"][..], &w].concat());
        check_top_down(&mut p, &full, &top, &format!("{what}: tree --min-percent 0"), false);
        compare_trie(
            &mut p,
            children(&full, "roots"),
            "children",
            &top_down(&stacks),
            true,
            &format!("{what}: tree (vs folded)"),
        );
        let bottom = run_json(&[&["tree", input, "--bottom-up", "--min-percent", "0"][..], &w].concat());
        check_bottom_up(&mut p, &bottom, &top, &format!("{what}: tree --bottom-up --min-percent 0"));
        compare_trie(
            &mut p,
            children(&bottom, "roots"),
            "children",
            &bottom_up(&stacks),
            true,
            &format!("{what}: tree --bottom-up (vs folded)"),
        );
        for (percent, depth, extra) in cuts {
            let mut args = vec!["tree", input, "--min-percent", percent];
            if let Some(d) = depth {
                args.extend(["--max-depth", d]);
            }
            args.extend(extra);
            let cut = run_json(&[&args[..], &w].concat());
            let base = if extra.is_some() { &bottom } else { &full };
            check_pruned(
                &mut p,
                base,
                &cut,
                percent.parse().unwrap(),
                depth.map(|d| d.parse().unwrap()),
                &format!("{what}: {}", args[2..].join(" ")),
            );
        }
        let collapsed = run_json(&[&["tree", input, "--collapse-recursion", "--min-percent", "0"][..], &w].concat());
        check_collapsed(&mut p, &full, &collapsed, &top, &format!("{what}: tree --collapse-recursion --min-percent 0"));
        let mut recollapsed: Vec<(Vec<String>, i64)> =
            stacks.iter().map(|(s, w)| (collapse_recursion(s), *w)).collect();
        compare_trie(
            &mut p,
            children(&collapsed, "roots"),
            "children",
            &top_down(&recollapsed),
            true,
            &format!("{what}: tree --collapse-recursion (vs folded)"),
        );
        // `collapse --collapse-recursion` = the folded stacks collapsed here.
        let theirs = folded(&run_text(&[&["collapse", input, "--collapse-recursion"][..], opts].concat()));
        let sum = |v: &mut Vec<(Vec<String>, i64)>| -> BTreeMap<Vec<String>, i64> {
            let mut m = BTreeMap::new();
            for (s, w) in v.drain(..) {
                *m.entry(s).or_default() += w;
            }
            m
        };
        let (ours, theirs) = (sum(&mut recollapsed), sum(&mut theirs.clone()));
        if ours != theirs {
            let differ = ours.iter().filter(|(k, v)| theirs.get(*k) != Some(v)).count();
            p.add(format!("{what}: collapse --collapse-recursion: {differ} stacks differ from collapse's stacks collapsed by hand ({} vs {} stacks)", theirs.len(), ours.len()));
        }
        // callers/callees of a few functions: the hottest by self and by total, and the most
        // recursive (most nodes in the top-down tree), `handle` left out (two functions).
        let rows = children(&top, "rows");
        let mut nodes_per: BTreeMap<String, usize> = BTreeMap::new();
        walk_sets(children(&full, "roots"), |n, _| *nodes_per.entry(key(n)).or_default() += 1);
        let js: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "js" && r["name"] != "handle").collect();
        let mut picks: Vec<&Value> = Vec::new();
        picks.extend(js.first());
        picks.extend(js.iter().max_by_key(|r| (int(r, "total"), tie(r))));
        picks.extend(js.iter().max_by_key(|r| (nodes_per.get(&key(r)).copied().unwrap_or(0), tie(r))));
        picks.extend(js.get(js.len() / 2));
        picks.extend(rows.iter().find(|r| r["name"] == "(garbage collector)"));
        let mut done = BTreeSet::new();
        for row in picks {
            if done.insert(key(row)) {
                check_callers_callees(&mut p, input, opts, row, &bottom, &stacks);
            }
        }
        // --focus drops whole samples after the denominator is taken: the tree is the prefix tree
        // of `collapse --focus`'s stacks, its `total` still `top`'s. (Not on the deep chain, whose
        // top-down JSON is too large to read twice.)
        if let (Some(row), false) = (js.first(), matches!(shape, Shape::Deep)) {
            let focus = format!("^{}$", row["name"].as_str().unwrap());
            let tree = run_json(&[&["tree", input, "--min-percent", "0", "--focus", &focus][..], &w].concat());
            let kept = folded(&run_text(&[&["collapse", input, "--focus", &focus][..], opts].concat()));
            let here = format!("{what}: tree --min-percent 0 --focus {focus}");
            compare_trie(&mut p, children(&tree, "roots"), "children", &top_down(&kept), true, &here);
            p.check(tree["total"] == top["total"], || {
                format!("{here}: total {}, top's {}", tree["total"], top["total"])
            });
            let (sum, want) = (
                children(&tree, "roots").iter().map(|r| int(r, "total")).sum::<i64>(),
                kept.iter().map(|k| k.1).sum::<i64>(),
            );
            p.check(sum == want && sum < int(&top, "total"), || {
                format!("{here}: roots sum to {sum}, kept stacks {want}")
            });
        }
    }
    assert!(p.0.is_empty(), "{} problem(s) (the first 40):\n{}", p.0.len(), p.0.join("\n"));
}

/// Runs `f` on a thread with a stack large enough for the 2500-level JSON.
fn big_stack(f: impl FnOnce() + Send + 'static) {
    let t = std::thread::Builder::new().stack_size(512 << 20).spawn(f).unwrap();
    if let Err(e) = t.join() {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn wide_random_trees() {
    big_stack(|| check_generated(1, Shape::Wide));
}

#[test]
fn tangled_recursive_trees() {
    big_stack(|| check_generated(2, Shape::Tangled));
}

#[test]
fn deep_recursive_chains() {
    big_stack(|| check_generated(3, Shape::Deep));
}

/// The checks themselves catch what they are for: on the folded stacks of a hand-made tree,
/// the contract's rules give the numbers worked out by hand.
#[test]
fn the_rules_on_folded_stacks_give_the_hand_worked_numbers() {
    let s = |v: &[&str], w: i64| (v.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>(), w);
    // A→F→B→F→C 1, A→F 2, F→F→F 4, A→B 8
    let stacks = vec![s(&["A", "F", "B", "F", "C"], 1), s(&["A", "F"], 2), s(&["F", "F", "F"], 4), s(&["A", "B"], 8)];
    assert_eq!(collapse_recursion(&stacks[0].0), ["A", "F", "C"]);
    assert_eq!(collapse_recursion(&stacks[2].0), ["F"]);
    let up = callers_of(&stacks, "F", 3);
    assert_eq!(up.children["A"].total, 3);
    assert_eq!(up.children["(root)"].total, 4);
    assert_eq!(up.total, 7);
    // A→F (1 + 2): A is top-level, so a `(root)` entry one level up.
    assert_eq!(up.children["A"].children["(root)"].total, 3);
    let down = callees_of(&stacks, "F", 3);
    assert_eq!((down.total, down.own), (7, 6));
    assert_eq!(down.children.keys().collect::<Vec<_>>(), ["C"]);
    let bu = bottom_up(&stacks);
    // F: outermost occurrences: A→F (1 + 2), F at the top (4); self where the leaf is F: 2 + 4.
    assert_eq!((bu.children["F"].total, bu.children["F"].own), (7, 6));
    assert_eq!(bu.children["F"].children["A"].total, 3);
    assert_eq!(bu.children["B"].total, 9);
    assert_eq!(bu.children["C"].children["F"].children["B"].total, 1);
    let td = top_down(&stacks);
    assert_eq!((td.children["A"].total, td.children["A"].children["F"].own), (11, 2));
    assert_eq!(td.children["F"].children["F"].children["F"].own, 4);
    // The JSON reader, deeper than serde_json goes.
    big_stack(|| {
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        let mut v = &parse_json(deep.as_bytes());
        for _ in 0..5000 {
            v = &v[0];
        }
        assert_eq!(v, &Value::from(1));
        assert_eq!(
            parse_json(br#"{"a":"\u00e9\ud83d\udd25\n","b":[-1.5,2,null,true]}"#),
            serde_json::json!({"a":"é🔥\n","b":[-1.5,2,null,true]})
        );
    });
}

/// The checks fail on trees that break what they check: each mutation of cpuprof's (correct)
/// output of a generated profile must be reported.
#[test]
fn the_checks_catch_broken_trees() {
    big_stack(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gen-tangled-5.cpuprofile");
        std::fs::write(&path, generate(5, Shape::Tangled)).unwrap();
        let input = path.to_str().unwrap();
        let w = ["--weight", "samples", "--format", "json"];
        let top = run_json(&[&["top", "--all", input][..], &w].concat());
        let stacks = folded(&run_text(&["collapse", input, "--weight", "samples"]));
        let full = run_json(&[&["tree", input, "--min-percent", "0"][..], &w].concat());
        let bottom = run_json(&[&["tree", input, "--bottom-up", "--min-percent", "0"][..], &w].concat());
        let cut = run_json(&[&["tree", input, "--min-percent", "2"][..], &w].concat());
        let problems = |f: &dyn Fn(&mut Problems)| {
            let mut p = Problems::default();
            f(&mut p);
            p.0
        };
        let top_down_problems = |tree: &Value| {
            problems(&|p| {
                check_top_down(p, tree, &top, "mutated", false);
                compare_trie(p, children(tree, "roots"), "children", &top_down(&stacks), true, "mutated");
            })
        };
        // Unmutated: nothing.
        assert_eq!(top_down_problems(&full), Vec::<String>::new());
        assert_eq!(problems(&|p| check_bottom_up(p, &bottom, &top, "as is")), Vec::<String>::new());
        assert_eq!(problems(&|p| check_pruned(p, &full, &cut, 2.0, None, "as is")), Vec::<String>::new());
        // A node's total one more.
        let mut m = full.clone();
        *m.pointer_mut("/roots/0/children/0/total").unwrap() =
            Value::from(int(&m["roots"][0]["children"][0], "total") + 1);
        assert!(top_down_problems(&m).len() >= 2, "{:?}", top_down_problems(&m));
        // A sample moved from a child to its parent's self.
        let mut m = full.clone();
        let child = int(&m["roots"][0]["children"][0], "total");
        *m.pointer_mut("/roots/0/children/0/total").unwrap() = Value::from(child - 1);
        let own = int(&m["roots"][0], "self");
        *m.pointer_mut("/roots/0/self").unwrap() = Value::from(own + 1);
        assert!(!top_down_problems(&m).is_empty());
        // Two siblings swapped.
        let mut m = full.clone();
        m["roots"][0]["children"].as_array_mut().unwrap().swap(0, 1);
        assert!(!top_down_problems(&m).is_empty());
        // A bottom-up root left out; a bottom-up child with the root's function.
        let mut m = bottom.clone();
        m["roots"].as_array_mut().unwrap().remove(1);
        assert!(!problems(&|p| check_bottom_up(p, &m, &top, "mutated")).is_empty());
        let mut m = bottom.clone();
        let root = m["roots"][0].clone();
        let mut fake = root.clone();
        fake["children"] = Value::Array(Vec::new());
        fake["total"] = Value::from(1);
        fake["self"] = Value::from(0);
        m["roots"][0]["children"].as_array_mut().unwrap().push(fake);
        assert!(!problems(&|p| check_bottom_up(p, &m, &top, "mutated")).is_empty());
        // pruned off by one node.
        let mut m = cut.clone();
        let nodes = m["roots"][0]["pruned"]["nodes"].as_i64().expect("the first root of a 2% cut has pruned children");
        m["roots"][0]["pruned"]["nodes"] = Value::from(nodes + 1);
        assert!(!problems(&|p| check_pruned(p, &full, &m, 2.0, None, "mutated")).is_empty());
        // A tree with recursion passed off as collapsed.
        assert!(!problems(&|p| check_collapsed(p, &full, &full, &top, "mutated")).is_empty());
    });
}

/// More seeds of every shape, for a longer hunt: `cargo test --test tests calltree_invariants:: --
/// --ignored` (CALLTREE_SEEDS=FIRST-LAST picks them; default 10-14).
#[test]
#[ignore = "a longer hunt over more generated profiles"]
fn more_seeds() {
    let seeds = std::env::var("CALLTREE_SEEDS").unwrap_or_else(|_| "10-14".to_owned());
    let (first, last) = seeds.split_once('-').expect("CALLTREE_SEEDS=FIRST-LAST");
    let (first, last): (u64, u64) = (first.parse().unwrap(), last.parse().unwrap());
    let mut failed = Vec::new();
    for seed in first..=last {
        for shape in [Shape::Wide, Shape::Tangled, Shape::Deep] {
            let run = std::thread::Builder::new()
                .stack_size(512 << 20)
                .spawn(move || check_generated(seed, shape))
                .unwrap()
                .join();
            if let Err(e) = run {
                let message = e.downcast_ref::<String>().cloned().unwrap_or_default();
                failed.push(format!("seed {seed} {shape:?}:\n{message}"));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
