//! Legacy `.cpuprofile` files: the call tree as one nested `head` object instead of a flat
//! `nodes` array. V8's CPU profile API wrote them before 2016, and tools built on it kept
//! writing them later: Node.js ≤ 10 through `v8-profiler` (a 2018 Node 10.11 file has one),
//! `cpuprofilify`, Chrome ≤ 57's "Save profile".
//!
//! Read as DevTools' `CPUProfileDataModel` reads them (`_compatibilityConversionHeadToNodes`,
//! `_normalizeTimestamps`):
//! - nodes in depth-first order (children in listed order); a node's frame is its `callFrame`
//!   when it has one, else its flat `functionName`, `url`, `scriptId`, `lineNumber`,
//!   `columnNumber`, whose line and column are 1-based (0 = unknown);
//! - `startTime` and `endTime` are in **seconds** (tools wrote numbers or numeric strings);
//!   `timestamps` are absolute, in µs, one per sample, or one more (the end of the last sample);
//! - with `samples` but no `timestamps`, samples are spread evenly over `startTime..endTime`;
//! - with neither, each node's `hitCount` stands for that many samples, spread evenly too.
//!
//! The tree is walked with an explicit stack (legacy trees nest one JSON object per frame, so
//! a deep stack is a deeply nested value). A `head` whose nodes have `selfSize` is a sampling
//! heap profile, and is refused as one.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::Deserialize;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::json_scan::Number;
use crate::v8_tree::{relative_span, strip_position, LossyStr, NodeSpec, RawCallFrame, ScriptId, Tree};

/// What a sampling heap profile (`.heapprofile`) is refused with.
pub(crate) const HEAP_PROFILE: &str = "this is a V8 sampling heap profile (`.heapprofile`: bytes allocated per call \
     tree node, not CPU time), which cpuprof does not read; record a CPU profile instead (`node --cpu-prof`, or \
     DevTools' Performance panel)";

/// The `head` tree, flattened: nodes in depth-first order, each with its parent's position.
pub(crate) struct LegacyTree {
    nodes: Vec<(NodeSpec<'static>, Option<u64>)>,
    /// The `id` of each node as the file wrote it (real files repeat ids: cpuprofilify writes
    /// `0` for its root and the root's first child).
    ids: Vec<Option<u64>>,
    /// `hitCount` of each node.
    pub(crate) hits: Vec<u64>,
    /// Where `head` starts, for errors about the tree.
    pub(crate) span: Span,
}

/// One node being read: what its keys have said so far.
#[derive(Default)]
struct Pending {
    parent: Option<usize>,
    id: Option<u64>,
    call_frame: Option<RawCallFrame<'static>>,
    function_name: Option<String>,
    url: Option<String>,
    script_id: Option<ScriptId<'static>>,
    line: Option<i64>,
    column: Option<i64>,
    hits: u64,
    ticks: Vec<(u32, u32)>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Loose {
    Int(i64),
    Float(f64),
    Text(String),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct LineTick {
    line: i64,
    #[serde(rename = "hitCount", alias = "ticks")]
    hits: i64,
}

/// A number, or a string holding one (cpuprofilify writes `"lineNumber": "487"` and
/// `"startTime": "181012.12024"`); `None` for anything else.
fn loose_number(value: &[u8]) -> Option<Number> {
    match serde_json::from_slice::<Loose>(value).ok()? {
        Loose::Int(i) => Some(Number::Int(i)),
        Loose::Float(f) => Some(Number::Float(f)),
        Loose::Text(t) => {
            let t = t.trim();
            t.parse::<i64>()
                .map(Number::Int)
                .ok()
                .or_else(|| t.parse::<f64>().ok().filter(|f| f.is_finite()).map(Number::Float))
        }
        Loose::Other(_) => None,
    }
}

/// A number from a JSON string (`"181012.12024"`), as DevTools' arithmetic on it would take it.
pub(crate) fn number_in_string(value: &[u8]) -> Option<Number> {
    loose_number(value)
}

/// Seconds (legacy `startTime`/`endTime`) → ns, `None` beyond ±2^62 ns.
pub(crate) fn seconds_ns(number: Number) -> Option<i64> {
    const LIMIT: i64 = cpuprof_model::defaults::TIME_LIMIT_NS;
    let ns = match number {
        Number::Int(s) => s.checked_mul(1_000_000_000)?,
        Number::Float(f) => {
            let ns = (f * 1e9).round();
            if ns.is_nan() || ns.abs() >= LIMIT as f64 {
                return None;
            }
            ns as i64
        }
    };
    (ns.abs() < LIMIT).then_some(ns)
}

/// An open container of `head`: a node whose keys are being read, or a node's `children`.
enum Open {
    Node(usize),
    Children(usize),
}

/// A cursor over the bytes of `head`, which the scanner has already checked to be JSON.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes.get(self.at) {
            if !b.is_ascii_whitespace() {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// From an opening quote to just past the closing one.
    fn string(&mut self) -> (usize, usize) {
        let start = self.at;
        self.at += 1;
        while let Some(&b) = self.bytes.get(self.at) {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'"' => break,
                _ => {}
            }
        }
        (start, self.at.min(self.bytes.len()))
    }

    /// One value, skipped by counting brackets (no recursion): its byte range.
    fn value(&mut self) -> (usize, usize) {
        self.peek();
        let start = self.at;
        let mut depth = 0usize;
        while let Some(&b) = self.bytes.get(self.at) {
            match b {
                b'"' => {
                    self.string();
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' | b',' if depth == 0 => break,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        break;
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
        (start, self.at.min(self.bytes.len()))
    }
}

/// Reads the `head` tree from its bytes (`span` is where it starts in the file).
pub(crate) fn read_head(raw: &[u8], span: Span, origin: &Origin, max_nodes: usize) -> Result<LegacyTree, ParseError> {
    let error_at = |at: usize, kind: ParseErrorKind| {
        let before = raw.get(..at).unwrap_or(raw);
        let line = memchr::memchr_iter(b'\n', before).count() as u64 + 1;
        let column = (at - before.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)) as u64 + 1;
        kind.at(origin, relative_span(span, line, column))
    };
    let mut c = Cursor { bytes: raw, at: 0 };
    let mut pending: Vec<Pending> = Vec::new();
    // Open containers: a node whose keys are being read, or the `children` of a node.
    let mut open: Vec<Open> = Vec::new();
    let start_node = |c: &mut Cursor<'_>, parent: Option<usize>, pending: &mut Vec<Pending>, open: &mut Vec<Open>| {
        if !c.eat(b'{') {
            let what = if parent.is_some() { "a node object in `children`" } else { "an object" };
            return Err(error_at(c.at, ParseErrorKind::Invalid(format!("`head` must hold {what}").into())));
        }
        if pending.len() >= max_nodes {
            return Err(ParseErrorKind::too_many("`head`", max_nodes, "nodes").at(origin, span));
        }
        open.push(Open::Node(pending.len()));
        pending.push(Pending { parent, ..Pending::default() });
        Ok(())
    };
    start_node(&mut c, None, &mut pending, &mut open)?;
    while let Some(top) = open.last() {
        match *top {
            Open::Node(p) => {
                if c.eat(b'}') {
                    open.pop();
                    continue;
                }
                c.eat(b',');
                c.peek();
                let (ks, ke) = c.string();
                let key = raw.get(ks + 1..ke.saturating_sub(1)).unwrap_or_default();
                c.eat(b':');
                c.peek();
                let value_at = c.at;
                if key == b"children" {
                    if !c.eat(b'[') {
                        let kind =
                            ParseErrorKind::Invalid("a legacy node's `children` must be an array of nodes".into());
                        return Err(error_at(value_at, kind));
                    }
                    if !c.eat(b']') {
                        open.push(Open::Children(p));
                        start_node(&mut c, Some(p), &mut pending, &mut open)?;
                    }
                    continue;
                }
                let (vs, ve) = c.value();
                let value = raw.get(vs..ve).unwrap_or_default();
                let node = &mut pending[p];
                let json = |e: serde_json::Error| {
                    error_at(value_at, ParseErrorKind::Json(format!("in `head`: {}", strip_position(&e))))
                };
                match key {
                    b"selfSize" => return Err(ParseErrorKind::Unsupported(HEAP_PROFILE).at(origin, span)),
                    b"id" => match loose_number(value) {
                        Some(Number::Int(id)) if id >= 0 => node.id = Some(id as u64),
                        _ => {
                            let kind = ParseErrorKind::Invalid(
                                format!(
                                    "a node id must be a non-negative integer, found {}",
                                    String::from_utf8_lossy(value)
                                )
                                .into(),
                            );
                            return Err(error_at(value_at, kind));
                        }
                    },
                    b"hitCount" => match loose_number(value) {
                        Some(Number::Int(h)) if h >= 0 => node.hits = h as u64,
                        _ => {
                            let kind = ParseErrorKind::Invalid(
                                format!(
                                    "`hitCount` must be a non-negative integer, found {}",
                                    String::from_utf8_lossy(value)
                                )
                                .into(),
                            );
                            return Err(error_at(value_at, kind));
                        }
                    },
                    b"callFrame" => {
                        let frame: RawCallFrame<'_> = serde_json::from_slice(value).map_err(json)?;
                        node.call_frame = Some(frame.into_owned());
                    }
                    b"functionName" => {
                        node.function_name =
                            Some(serde_json::from_slice::<LossyStr<'_>>(value).map_err(json)?.0.into_owned());
                    }
                    b"url" => {
                        node.url = Some(serde_json::from_slice::<LossyStr<'_>>(value).map_err(json)?.0.into_owned());
                    }
                    b"scriptId" => {
                        node.script_id = Some(match serde_json::from_slice::<ScriptId<'_>>(value).map_err(json)? {
                            ScriptId::Text(t) => ScriptId::Text(Cow::Owned(t.into_owned())),
                            ScriptId::Number(n) => ScriptId::Number(n),
                        });
                    }
                    // 1-based; anything but a number (or a numeric string) is unknown.
                    b"lineNumber" | b"columnNumber" => {
                        let n = match loose_number(value) {
                            Some(Number::Int(n)) => Some(n),
                            _ => None,
                        };
                        if key == b"lineNumber" {
                            node.line = n;
                        } else {
                            node.column = n;
                        }
                    }
                    // `lineTicks` (legacy) and `positionTicks`: hits per 1-based line.
                    b"lineTicks" | b"positionTicks" => {
                        let ticks: Vec<LineTick> = serde_json::from_slice(value).map_err(json)?;
                        node.ticks = ticks
                            .iter()
                            .filter_map(|t| Some((u32::try_from(t.line).ok()?, u32::try_from(t.hits).ok()?)))
                            .collect();
                    }
                    _ => {}
                }
            }
            Open::Children(p) => {
                if c.eat(b']') {
                    open.pop();
                    continue;
                }
                c.eat(b',');
                start_node(&mut c, Some(p), &mut pending, &mut open)?;
            }
        }
    }
    let mut nodes = Vec::with_capacity(pending.len());
    let mut ids = Vec::with_capacity(pending.len());
    let mut hits = Vec::with_capacity(pending.len());
    for node in pending {
        // DevTools: `node.callFrame || {functionName, scriptId, url, lineNumber - 1, columnNumber - 1}`.
        let call_frame = match node.call_frame {
            Some(frame) => frame,
            None => RawCallFrame::from_parts(
                node.function_name.unwrap_or_default(),
                node.script_id.unwrap_or_default(),
                node.url.unwrap_or_default(),
                node.line.map_or(-1, |l| l.saturating_sub(1)),
                node.column.map_or(-1, |c| c.saturating_sub(1)),
            ),
        };
        // Positions stand in for ids in the tree: real files repeat ids.
        let spec = NodeSpec { id: nodes.len() as u64, call_frame, ticks: node.ticks, deopt_reason: None };
        nodes.push((spec, node.parent.map(|p| p as u64)));
        ids.push(node.id);
        hits.push(node.hits);
    }
    Ok(LegacyTree { nodes, ids, hits, span })
}

impl LegacyTree {
    /// The tree, its nodes' ids being their positions.
    pub(crate) fn tree(self, origin: &Origin) -> Result<(Tree, Vec<u64>), ParseError> {
        let span = self.span;
        Ok((Tree::from_parents(self.nodes, origin, span)?, self.hits))
    }

    /// Sample node ids (as the file wrote them) → positions. An id that several nodes share
    /// is an error only when a sample names it.
    pub(crate) fn positions(&self, samples: &[u64], origin: &Origin, span: Span) -> Result<Vec<u64>, ParseError> {
        let mut by_id: FxHashMap<u64, (u64, usize)> = FxHashMap::default();
        for (position, id) in self.ids.iter().enumerate() {
            if let Some(id) = id {
                by_id.entry(*id).and_modify(|e| e.1 += 1).or_insert((position as u64, 1));
            }
        }
        let mut out = Vec::with_capacity(samples.len());
        for (index, id) in samples.iter().enumerate() {
            match by_id.get(id) {
                Some((position, 1)) => out.push(*position),
                Some((_, shared)) => {
                    let message = format!("sample {index} refers to node id {id}, which {shared} nodes of `head` have");
                    return Err(ParseErrorKind::Invalid(message.into()).at(origin, span));
                }
                None => return Err(ParseErrorKind::UnknownNode { index, id: *id }.at(origin, span)),
            }
        }
        Ok(out)
    }
}
