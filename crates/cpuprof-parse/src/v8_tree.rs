//! V8 call trees, as `.cpuprofile` files and Chrome trace events both hold them: the nodes
//! (`callFrame`, `positionTicks`), linked by children (`.cpuprofile`) or by parent (trace
//! events) into one [`Tree`]; the sample leaves as node positions; and the profile built from
//! them, with time attributed as DevTools does ([`crate::timeline`]).

use std::borrow::Cow;

use cpuprof_model::{
    Frame, Func, FuncKind, Profile, ProfileBuilder, SampleTimeline, SourceFormat, StackId, StrId, ValueType, Warning,
};
use rustc_hash::FxHashMap;
use serde::de::{DeserializeSeed, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::json_scan::Number;
use crate::timeline::Deltas;
use crate::timeline::{
    attribute_sums, sampled_nodes, sampled_without_walk, NodeIndex, NodeTimeline, Order, OwnedRoles, OwnedTimes,
};
use crate::ParseOptions;

#[derive(Deserialize)]
struct RawNode<'a> {
    id: u64,
    #[serde(rename = "callFrame", borrow)]
    call_frame: RawCallFrame<'a>,
    #[serde(default)]
    children: Vec<u64>,
    #[serde(rename = "positionTicks", default)]
    position_ticks: Vec<RawTick>,
    /// Why V8 would not optimize the function (DevTools' profiles; empty when it would).
    #[serde(rename = "deoptReason", borrow, default)]
    deopt_reason: LossyStr<'a>,
}

/// A node's `callFrame`, in `.cpuprofile` files and trace events alike (absent fields read as
/// DevTools reads them: empty url, position -1).
#[derive(Deserialize)]
pub(crate) struct RawCallFrame<'a> {
    #[serde(rename = "functionName", borrow, default)]
    function_name: LossyStr<'a>,
    #[serde(rename = "scriptId", default)]
    script_id: ScriptId<'a>,
    #[serde(borrow, default)]
    url: LossyStr<'a>,
    #[serde(rename = "lineNumber", default = "unknown_position")]
    line_number: i64,
    #[serde(rename = "columnNumber", default = "unknown_position")]
    column_number: i64,
}

impl RawCallFrame<'_> {
    /// The same frame, owning its strings (to outlive the bytes it was read from).
    pub(crate) fn into_owned(self) -> RawCallFrame<'static> {
        RawCallFrame {
            function_name: LossyStr(Cow::Owned(self.function_name.0.into_owned())),
            script_id: match self.script_id {
                ScriptId::Text(t) => ScriptId::Text(Cow::Owned(t.into_owned())),
                ScriptId::Number(n) => ScriptId::Number(n),
            },
            url: LossyStr(Cow::Owned(self.url.0.into_owned())),
            line_number: self.line_number,
            column_number: self.column_number,
        }
    }
}

impl RawCallFrame<'static> {
    /// A frame from its parts (legacy `.cpuprofile` nodes carry them flat); positions 0-based.
    pub(crate) fn from_parts(
        function_name: String,
        script_id: ScriptId<'static>,
        url: String,
        line_number: i64,
        column_number: i64,
    ) -> Self {
        RawCallFrame {
            function_name: LossyStr(Cow::Owned(function_name)),
            script_id,
            url: LossyStr(Cow::Owned(url)),
            line_number,
            column_number,
        }
    }

    /// A frame known only by its name (trace-event stack frames): no url or position. `js`
    /// frames read as JavaScript, the others as V8's meta and native frames do (a nonzero
    /// script id is what tells them apart).
    pub(crate) fn named(name: String, js: bool) -> RawCallFrame<'static> {
        RawCallFrame::from_parts(name, ScriptId::Number(if js { -1 } else { 0 }), String::new(), -1, -1)
    }
}

/// A JSON string that may hold lone UTF-16 surrogates (`"\ud800"`), which V8 never writes but
/// hand-made and third-party files do: they become U+FFFD instead of failing the whole file.
/// Borrowed from the input when it has no escapes.
#[derive(Default)]
pub(crate) struct LossyStr<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for LossyStr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = LossyStr<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(LossyStr(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LossyStr(Cow::Owned(v.to_owned())))
            }
            // serde_json hands strings with escapes over as bytes when asked for bytes, with
            // lone surrogates encoded WTF-8 style: the lossy conversion turns each into U+FFFD.
            fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(LossyStr(String::from_utf8_lossy(v)))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(LossyStr(Cow::Owned(String::from_utf8_lossy(v).into_owned())))
            }
        }
        deserializer.deserialize_bytes(Visitor)
    }
}

/// `"81"` in `.cpuprofile` files, `81` in trace events.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum ScriptId<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Number(i64),
}

impl Default for ScriptId<'_> {
    fn default() -> Self {
        ScriptId::Number(0)
    }
}

impl ScriptId<'_> {
    fn is_zero(&self) -> bool {
        match self {
            ScriptId::Text(s) => s == "0",
            ScriptId::Number(n) => *n == 0,
        }
    }
}

#[derive(Deserialize)]
struct RawTick {
    line: i64,
    ticks: i64,
}

fn unknown_position() -> i64 {
    -1
}

/// Sample leaves as node positions, in the narrowest type that fits the tree.
pub(crate) enum Leaves {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Leaves {
    pub(crate) fn len(&self) -> usize {
        match self {
            Leaves::Narrow(v) => v.len(),
            Leaves::Wide(v) => v.len(),
        }
    }

    /// Sample node ids as positions in `tree`; `span` locates the samples in errors.
    pub(crate) fn from_ids(ids: &[u64], tree: &Tree, origin: &Origin, span: Span) -> Result<Leaves, ParseError> {
        let mut leaves = Vec::with_capacity(ids.len());
        for (index, id) in ids.iter().enumerate() {
            match tree.position(*id) {
                Some(p) => leaves.push(p),
                None => return Err(ParseErrorKind::UnknownNode { index, id: *id }.at(origin, span)),
            }
        }
        Ok(if u16::try_from(tree.nodes.len()).is_ok() {
            Leaves::Narrow(leaves.into_iter().map(|p| p as u16).collect())
        } else {
            Leaves::Wide(leaves)
        })
    }

    /// The profile from `tree`, these leaves and their times.
    pub(crate) fn build(
        self,
        tree: &Tree,
        timing: Timing,
        source: &Source,
        origin: &Origin,
        options: &ParseOptions,
    ) -> Result<Profile, ParseError> {
        match self {
            Leaves::Narrow(samples) => build(tree, samples, timing, source, origin, options),
            Leaves::Wide(samples) => build(tree, samples, timing, source, origin, options),
        }
    }
}

/// What the pass over the samples found: which nodes are sampled, their sums left to the
/// timeline's first walk (with the samples' time order, and the mean interval), or the sums.
enum Passed {
    Later { order: Order, sampled: Vec<bool>, mean: i64 },
    Summed { sums: Vec<[i64; 2]>, interval: i64 },
}

/// What the input says about time (ns).
pub(crate) struct Timing {
    pub(crate) start_ns: Option<i64>,
    pub(crate) end_ns: Option<i64>,
    /// The per-sample deltas and where they are (for the length mismatch error).
    pub(crate) deltas: Option<(Deltas, Span)>,
}

/// What the profile says about where it came from.
pub(crate) struct Source {
    pub(crate) format: SourceFormat,
    /// Warnings for the user, in order.
    pub(crate) warnings: Vec<Warning>,
}

/// The profile from the tree, the sample leaves and their times.
fn build<N: NodeIndex + 'static>(
    tree: &Tree,
    samples: Vec<N>,
    timing: Timing,
    source: &Source,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let start_ns = timing.start_ns;
    let end_ns = timing.end_ns;
    let times = match timing.deltas {
        Some((deltas, span)) => {
            if deltas.len() != samples.len() {
                return Err(
                    ParseErrorKind::LengthMismatch { samples: samples.len(), deltas: deltas.len() }.at(origin, span)
                );
            }
            OwnedTimes::Deltas { start_ns: start_ns.unwrap_or(0), deltas }
        }
        None => OwnedTimes::Even { start_ns: start_ns.unwrap_or(0), end_ns: end_ns.unwrap_or(0) },
    };

    let value_types = vec![ValueType::SAMPLES, ValueType::WALL_NS];
    let mut b = ProfileBuilder::new(source.format, value_types);
    for warning in &source.warnings {
        b.warn(warning.clone());
    }
    let roles = OwnedRoles {
        programs: tree.programs.clone(),
        is_program: tree.is_program.clone(),
        is_system: tree.is_system.clone(),
        bottom: tree.bottom.clone(),
    };
    let recorded = match (start_ns, end_ns) {
        (Some(start), Some(end)) if end >= start => Some((start, end - start)),
        _ => None,
    };
    // A window is resolved against the recorded length, as a cut afterwards would.
    let window = options.window.zip(recorded).and_then(|(bounds, (start, length))| {
        let window = bounds.resolve(length).ok()?;
        Some((window, start, length))
    });
    let keep = window.map(|(w, start, _)| (start.saturating_add(w.from_ns), start.saturating_add(w.to_ns)));
    // One row per sampled stack: counts and summed durations. `top` needs nothing more, and
    // memory stays proportional to the tree, not to the samples. When the timeline is kept,
    // the sums are left to its first walk (an analysis over time makes one anyway) unless
    // which stacks are sampled is only known by walking.
    let roles_now = roles.borrowed();
    let node_count = tree.nodes.len();
    let pass_leaving_sums = || match &times {
        OwnedTimes::Deltas { start_ns, deltas } if options.timeline && keep.is_none() && samples.len() >= 4 => {
            // Two passes, one over the deltas and one over the samples, at once.
            let (order, leaves) = rayon::join(
                || Order::of(&samples, deltas, *start_ns, Some(&roles_now)),
                || sampled_nodes(&samples, node_count),
            );
            sampled_without_walk(&samples, leaves, deltas, *start_ns, &roles_now, &order)
                .map(|(sampled, mean)| Passed::Later { order, sampled, mean })
        }
        _ => None,
    };
    // The tree's functions and stacks go into the builder on one thread while the samples are
    // passed over on the other (a pass that splits in two takes both once the tree is in).
    let (stacks, passed) = rayon::join(
        || tree.add_to(&mut b),
        || {
            pass_leaving_sums().unwrap_or_else(|| {
                let (sums, interval) =
                    attribute_sums(&samples, node_count, &times.borrowed(), end_ns, &roles_now, keep);
                Passed::Summed { sums, interval }
            })
        },
    );
    let mut row_of_node = vec![u32::MAX; stacks.len()];
    let mut rows = 0u32;
    let (interval, order) = match passed {
        Passed::Later { order, sampled, mean } => {
            for ((stack, sampled), row) in stacks.iter().zip(&sampled).zip(&mut row_of_node) {
                if *sampled {
                    b.sample(*stack, None, &[0, 0]);
                    *row = rows;
                    rows += 1;
                }
            }
            (mean, Some(order))
        }
        Passed::Summed { sums, interval } => {
            for ((stack, [count, weight]), row) in stacks.iter().zip(&sums).zip(&mut row_of_node) {
                if *count > 0 {
                    b.sample(*stack, None, &[*count, *weight]);
                    *row = rows;
                    rows += 1;
                }
            }
            (interval, None)
        }
    };
    let duration = match (recorded, start_ns, end_ns) {
        (Some((_, length)), ..) => Some(length),
        // A header that ends before it starts, where DevTools subtracts anyway. The length is
        // what the samples cover: from the start (or an earlier sample) to the end of the last
        // one; without deltas they are spread over the header's span, start − end long.
        (None, Some(start), Some(end)) => Some(match &times {
            OwnedTimes::Deltas { start_ns, deltas } => {
                let (first, last) =
                    deltas.times(*start_ns).fold((start, start), |(first, last), t| (first.min(t), last.max(t)));
                last.saturating_add(interval).saturating_sub(first).max(0)
            }
            OwnedTimes::Even { .. } => start - end,
        }),
        _ => None,
    };
    if options.timeline {
        let summed_later = order.is_some();

        let source = NodeTimeline {
            nodes: samples,
            times,
            end_ns,
            roles,
            row_of_node,
            order: order.map_or_else(std::sync::OnceLock::new, |o| std::sync::OnceLock::from(Some(o))),
        };
        if summed_later {
            b.summed_timeline(source);
        } else {
            let timeline = SampleTimeline::new(source);
            b.timeline(match keep {
                Some((from, to)) => timeline.within(from, to),
                None => timeline,
            });
        }
    }
    match window {
        Some((window, start, length)) => {
            let (start, length_ns) = window.cut(start, length);
            b.timing(Some(start), Some(length_ns), Some(interval));
            b.window(window.clamped(length));
        }
        None => b.timing(start_ns, duration, Some(interval)),
    }
    b.finish().map_err(|e| ParseErrorKind::Model(e).at(origin, Span::None))
}

/// µs (integer or fractional) → ns, rejecting values beyond ±2^62 ns (~146 years).
pub(crate) fn number_ns(number: Number) -> Option<i64> {
    const LIMIT: i64 = cpuprof_model::defaults::TIME_LIMIT_NS;
    let ns = match number {
        Number::Int(i) => i.checked_mul(1000)?,
        Number::Float(f) => {
            // JavaScript's Math.round (halves towards +∞), as DevTools computes in JS.
            let scaled = f * 1000.0;
            let floor = scaled.floor();
            let ns = if scaled - floor >= 0.5 { floor + 1.0 } else { floor };
            if ns.is_nan() || ns.abs() >= LIMIT as f64 {
                return None;
            }
            ns as i64
        }
    };
    (ns.abs() < LIMIT).then_some(ns)
}

/// Whether `n` ids up to `max_id` are dense enough for an id → position table (ids are not
/// positions and may be sparse or huge; past this a hash map costs less memory).
pub(crate) fn ids_are_dense(max_id: u64, n: usize) -> bool {
    max_id < (n as u64).saturating_mul(4).saturating_add(1024)
}

/// The call tree of `nodes`, indexed by node position, with parents resolved.
pub(crate) struct Tree {
    pub(crate) nodes: Vec<TreeNode>,
    /// id → position: a plain table when ids are dense enough, a hash map otherwise
    /// (ids are not positions and may be sparse or huge).
    pub(crate) dense: Vec<u32>,
    pub(crate) sparse: FxHashMap<u64, u32>,
    /// Positions, parents before children (depth-first, children in listed order).
    order: Vec<u32>,
    /// Positions of the `(program)` meta nodes.
    programs: Vec<u32>,
    is_program: Vec<bool>,
    is_system: Vec<bool>,
    bottom: Vec<u32>,
}

pub(crate) struct TreeNode {
    id: u64,
    parent: Option<u32>,
    name: String,
    url: String,
    line: Option<u32>,
    column: Option<u32>,
    kind: FuncKind,
    ticks: Vec<(u32, u32)>,
    children: Vec<u32>,
    /// `deoptReason`, when it gives one.
    deopt_reason: Option<Box<str>>,
}

impl TreeNode {
    /// A node, unlinked: no parent or children yet.
    fn new(node: NodeSpec<'_>) -> TreeNode {
        let frame = node.call_frame;
        let kind = classify(&frame.function_name.0, &frame.url.0, &frame.script_id);
        let position = |v: i64| u32::try_from(v).ok().and_then(|v| v.checked_add(1));
        TreeNode {
            id: node.id,
            parent: None,
            name: frame.function_name.0.into_owned(),
            url: frame.url.0.into_owned(),
            line: position(frame.line_number),
            column: position(frame.column_number),
            kind,
            ticks: node.ticks,
            children: Vec::new(),
            deopt_reason: node.deopt_reason.filter(|r| !r.is_empty()),
        }
    }
}

/// A `nodes` array as it is read: each node made a [`TreeNode`] at once (no list of the raw
/// nodes beside them), its children's ids kept in one list until every id is known.
struct NodesRead {
    nodes: Vec<TreeNode>,
    /// The children's ids of every node, one node after the other.
    child_ids: Vec<u64>,
    /// Where each node's children end in `child_ids`.
    child_ends: Vec<usize>,
    /// How many nodes the array has; past `limit` they are counted, not kept.
    count: usize,
    limit: usize,
}

impl<'de> DeserializeSeed<'de> for &mut NodesRead {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for &mut NodesRead {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while self.count < self.limit {
            let Some(node) = seq.next_element::<RawNode<'de>>()? else { return Ok(()) };
            self.count += 1;
            self.child_ids.extend_from_slice(&node.children);
            self.child_ends.push(self.child_ids.len());
            let ticks = node
                .position_ticks
                .iter()
                .filter_map(|t| Some((u32::try_from(t.line).ok()?, u32::try_from(t.ticks).ok()?)))
                .collect();
            let deopt_reason = Some(node.deopt_reason.0.as_ref().into());
            self.nodes.push(TreeNode::new(NodeSpec { id: node.id, call_frame: node.call_frame, ticks, deopt_reason }));
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {
            self.count += 1;
        }
        Ok(())
    }
}

/// One node as an input format describes it, before the tree is linked.
pub(crate) struct NodeSpec<'a> {
    pub(crate) id: u64,
    pub(crate) call_frame: RawCallFrame<'a>,
    /// `positionTicks`: (1-based line, ticks).
    pub(crate) ticks: Vec<(u32, u32)>,
    /// `deoptReason`, when the format has it.
    pub(crate) deopt_reason: Option<Box<str>>,
}

impl Tree {
    /// The tree of the `nodes` array `raw` (which starts at `span`), of at most `limit` nodes.
    /// `expected` is how many nodes a scan of `raw` found, if one was made: room for them is
    /// made at once, as far as `raw` can hold that many (the scan counts every `"id"` key, and
    /// a crafted file can have many more of those than nodes).
    pub(crate) fn build(
        raw: &[u8],
        span: Span,
        origin: &Origin,
        limit: usize,
        expected: usize,
    ) -> Result<Tree, ParseError> {
        const SMALLEST_NODE: usize = r#"{"id":0,"callFrame":{}},"#.len();
        let room = expected.min(limit).min(raw.len() / SMALLEST_NODE);
        let mut read = NodesRead {
            nodes: Vec::with_capacity(room),
            child_ids: Vec::with_capacity(room),
            child_ends: Vec::with_capacity(room),
            count: 0,
            limit,
        };
        let mut deserializer = serde_json::Deserializer::from_slice(raw);
        (&mut read).deserialize(&mut deserializer).and_then(|()| deserializer.end()).map_err(|e| {
            let at = relative_span(span, e.line() as u64, e.column() as u64);
            ParseErrorKind::Json(format!("in `nodes`: {}", strip_position(&e))).at(origin, at)
        })?;
        if read.count > limit {
            return Err(ParseErrorKind::too_many("`nodes`", limit, "nodes").at(origin, span));
        }
        let mut tree = Tree::with_nodes(read.nodes, origin, span)?;
        let mut start = 0;
        for (p, end) in read.child_ends.into_iter().enumerate() {
            let ids = &read.child_ids[start..end];
            start = end;
            let mut children = Vec::with_capacity(ids.len());
            for child in ids {
                let Some(c) = tree.position(*child) else {
                    let parent = tree.nodes[p].id;
                    return Err(ParseErrorKind::UnknownChild { parent, child: *child }.at(origin, span));
                };
                children.push(c);
            }
            tree.nodes[p].children = children;
        }
        let n = tree.nodes.len();
        for p in 0..n {
            for c in 0..tree.nodes[p].children.len() {
                let child = tree.nodes[p].children[c] as usize;
                if child == p {
                    return Err(ParseErrorKind::Cycle { id: tree.nodes[p].id }.at(origin, span));
                }
                if let Some(other) = tree.nodes[child].parent {
                    return Err(ParseErrorKind::TwoParents {
                        child: tree.nodes[child].id,
                        first: tree.nodes[other as usize].id,
                        second: tree.nodes[p].id,
                    }
                    .at(origin, span));
                }
                tree.nodes[child].parent = Some(p as u32);
            }
        }
        tree.order_parents_first(origin, span)?;
        Ok(tree)
    }

    /// The tree of nodes that name their parent (trace events) instead of their children.
    /// `span` locates the nodes in errors. Children keep the nodes' order.
    pub(crate) fn from_parents(
        nodes: Vec<(NodeSpec<'_>, Option<u64>)>,
        origin: &Origin,
        span: Span,
    ) -> Result<Tree, ParseError> {
        let mut parent_ids = Vec::with_capacity(nodes.len());
        let nodes = nodes
            .into_iter()
            .map(|(node, parent)| {
                parent_ids.push(parent);
                TreeNode::new(node)
            })
            .collect();
        let mut tree = Tree::with_nodes(nodes, origin, span)?;
        let mut parents = Vec::with_capacity(parent_ids.len());
        for (c, parent) in parent_ids.into_iter().enumerate() {
            let Some(parent) = parent else {
                parents.push(None);
                continue;
            };
            let Some(p) = tree.position(parent) else {
                let child = tree.nodes[c].id;
                return Err(ParseErrorKind::UnknownParent { child, parent }.at(origin, span));
            };
            parents.push(Some(p));
        }
        for (c, parent) in parents.into_iter().enumerate() {
            if let Some(p) = parent {
                if p as usize == c {
                    return Err(ParseErrorKind::Cycle { id: tree.nodes[c].id }.at(origin, span));
                }
                tree.nodes[c].parent = Some(p);
                tree.nodes[p as usize].children.push(c as u32);
            }
        }
        tree.order_parents_first(origin, span)?;
        Ok(tree)
    }

    /// The tree of these nodes (unlinked), duplicate ids rejected.
    fn with_nodes(nodes: Vec<TreeNode>, origin: &Origin, span: Span) -> Result<Tree, ParseError> {
        let n = nodes.len();
        let max_id = nodes.iter().map(|node| node.id).max().unwrap_or(0);
        // Samples read ids as JSON integers up to 2^63 - 1: larger ones could never be sampled.
        if max_id > i64::MAX as u64 {
            return Err(ParseErrorKind::OutOfRange { what: "node id", value: max_id.to_string() }.at(origin, span));
        }
        let use_dense = ids_are_dense(max_id, n);
        let mut dense = if use_dense { vec![u32::MAX; max_id as usize + 1] } else { Vec::new() };
        let mut sparse = FxHashMap::default();
        for (pos, node) in nodes.iter().enumerate() {
            let (id, pos32) = (node.id, pos as u32);
            let previous = if use_dense {
                let slot = &mut dense[id as usize];
                std::mem::replace(slot, pos32)
            } else {
                sparse.insert(id, pos32).unwrap_or(u32::MAX)
            };
            if previous != u32::MAX {
                return Err(ParseErrorKind::DuplicateId { id, first: previous as usize, second: pos }.at(origin, span));
            }
        }
        Ok(Tree {
            nodes,
            dense,
            sparse,
            order: Vec::with_capacity(n),
            programs: Vec::new(),
            is_program: vec![false; n],
            is_system: vec![false; n],
            bottom: vec![0; n],
        })
    }

    /// Sets the line hits (1-based line, ticks) of the node at `position`.
    pub(crate) fn set_ticks(&mut self, position: u32, ticks: Vec<(u32, u32)>) {
        if let Some(node) = self.nodes.get_mut(position as usize) {
            node.ticks = ticks;
        }
    }

    /// Whether the node at `position` is a `(program)` meta node.
    pub(crate) fn is_program_node(&self, position: usize) -> bool {
        self.nodes.get(position).is_some_and(|n| n.kind == FuncKind::Program)
    }

    /// The nodes' ids, in node order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.nodes.iter().map(|node| node.id)
    }

    pub(crate) fn position(&self, id: u64) -> Option<u32> {
        let p =
            if self.sparse.is_empty() { *self.dense.get(usize::try_from(id).ok()?)? } else { *self.sparse.get(&id)? };
        (p != u32::MAX).then_some(p)
    }

    /// Depth-first from every root with an explicit stack (trees can be thousands deep).
    /// Nodes never reached sit on a cycle (each node has at most one parent).
    fn order_parents_first(&mut self, origin: &Origin, span: Span) -> Result<(), ParseError> {
        let mut todo: Vec<u32> =
            (0..self.nodes.len() as u32).filter(|p| self.nodes[*p as usize].parent.is_none()).rev().collect();
        let mut reached = vec![false; self.nodes.len()];
        while let Some(p) = todo.pop() {
            let pi = p as usize;
            reached[pi] = true;
            self.order.push(p);
            let node = &self.nodes[pi];
            self.is_system[pi] = matches!(node.kind, FuncKind::Program | FuncKind::Gc | FuncKind::Idle);
            if node.kind == FuncKind::Program {
                self.programs.push(p);
                self.is_program[pi] = true;
            }
            // DevTools' bottom node: the ancestor whose parent is a root.
            self.bottom[pi] = match node.parent {
                Some(parent) if self.nodes[parent as usize].parent.is_some() => self.bottom[parent as usize],
                _ => p,
            };
            todo.extend(self.nodes[pi].children.iter().rev());
        }
        if let Some(p) = reached.iter().position(|r| !r) {
            return Err(ParseErrorKind::Cycle { id: self.nodes[p].id }.at(origin, span));
        }
        Ok(())
    }

    /// Adds every node as a stack; returns the stack of each node position.
    fn add_to(&self, b: &mut ProfileBuilder) -> Vec<StackId> {
        let mut stacks = vec![None; self.nodes.len()];
        let mut out = Vec::with_capacity(self.nodes.len());
        for &p in &self.order {
            let node = &self.nodes[p as usize];
            let name = b.intern(&node.name);
            let file = if node.url.is_empty() { StrId::EMPTY } else { b.intern(&node.url) };
            let func = b.func(Func {
                name,
                file,
                line: node.line,
                column: node.column,
                kind: node.kind,
                tier: None,
                library: None,
            });
            if let Some(why) = &node.deopt_reason {
                let why = b.intern(why);
                // One per node (a function's nodes repeat it: readers take any).
                b.jit_mut().not_optimized.push((func, why));
            }
            let frame = b.frame(Frame { func, line: None, column: None });
            let parent = node.parent.and_then(|q| stacks[q as usize]);
            let stack = b.stack(parent, frame);
            stacks[p as usize] = Some(stack);
            for &(line, ticks) in &node.ticks {
                b.line_hit(stack, line, ticks);
            }
        }
        for s in stacks {
            // Every node is in `order`, so every node has a stack.
            out.push(s.unwrap_or_else(|| unreachable!("node without a stack")));
        }
        out
    }
}

/// Meta nodes are told apart by an empty url and script id 0, not by name alone: a user
/// function may be called `(program)`.
fn classify(name: &str, url: &str, script_id: &ScriptId<'_>) -> FuncKind {
    let meta = url.is_empty() && script_id.is_zero();
    match name {
        "(root)" if meta => FuncKind::Root,
        "(program)" if meta => FuncKind::Program,
        "(idle)" if meta => FuncKind::Idle,
        "(garbage collector)" if meta => FuncKind::Gc,
        _ if meta => FuncKind::Native,
        _ => FuncKind::Js,
    }
}

/// A position inside a captured value that starts at `start`, as a position in the file.
pub(crate) fn relative_span(start: Span, line: u64, column: u64) -> Span {
    match start {
        Span::LineCol { line: l0, column: c0 } if line <= 1 => {
            Span::LineCol { line: l0, column: c0 + column.saturating_sub(1) }
        }
        Span::LineCol { line: l0, .. } => Span::LineCol { line: l0 + line - 1, column },
        other => other,
    }
}

/// serde_json's message without its own " at line L column C" (we print the file position).
pub(crate) fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use cpuprof_model::{Bound, Bounds, Profile, TimedSample};

    use crate::{parse, Origin, ParseOptions};

    fn read(bytes: &[u8], window: Option<Bounds>) -> Profile {
        let options = ParseOptions { window, ..ParseOptions::with_timeline() };
        parse(bytes, &Origin("t".into()), &options).unwrap()
    }

    fn walked(profile: &Profile) -> Vec<TimedSample> {
        let mut all = Vec::new();
        profile.samples.timeline().unwrap().for_each(|s| all.push(s));
        all
    }

    /// A window kept while summing is the window a cut of the whole profile takes: the same
    /// rows, sums, recording and timeline.
    #[test]
    fn a_window_read_equals_the_whole_profile_cut() {
        let fixtures: [&[u8]; 2] = [
            include_bytes!("../../../fixtures/cpuprofile/phases.cpuprofile"),
            include_bytes!("../../../fixtures/cpuprofile/blocks.cpuprofile"),
        ];
        let windows = [
            (Some(Bound::After(300_000_000)), None),
            (None, Some(Bound::Percent(40.0))),
            (Some(Bound::Percent(25.0)), Some(Bound::BeforeEnd(200_000_000))),
            (Some(Bound::After(0)), Some(Bound::After(1))),
        ];
        for bytes in fixtures {
            let whole = read(bytes, None);
            assert_eq!(whole.meta.window, None);
            let (start, length) = (whole.meta.start_ns.unwrap(), whole.meta.duration_ns.unwrap());
            for (from, to) in windows {
                let bounds = Bounds { from, to };
                let read_cut = read(bytes, Some(bounds));
                let window = bounds.resolve(length).unwrap();
                let mut cut = whole.clone();
                assert!(cut.retain_window(start + window.from_ns, start + window.to_ns));
                assert_eq!(read_cut.meta.window, Some(window.clamped(length)), "{bounds:?}");
                let (cut_start, cut_length) = window.cut(start, length);
                assert_eq!((read_cut.meta.start_ns, read_cut.meta.duration_ns), (Some(cut_start), Some(cut_length)));
                assert_eq!(read_cut.samples.stacks(), cut.samples.stacks(), "{bounds:?}");
                for k in 0..2 {
                    assert_eq!(read_cut.samples.values(k), cut.samples.values(k), "{bounds:?} column {k}");
                }
                let row_walk = walked(&read_cut);
                assert_eq!(row_walk, walked(&cut), "{bounds:?}");
                assert!(row_walk.iter().all(|s| (start + window.from_ns..start + window.to_ns).contains(&s.time_ns)));
            }
            // A window that resolves to nothing is left to the caller, to report.
            let empty = read(bytes, Some(Bounds { from: Some(Bound::Percent(50.0)), to: Some(Bound::Percent(50.0)) }));
            assert_eq!((empty.meta.window, empty.samples.len()), (None, whole.samples.len()));
        }
    }
}
