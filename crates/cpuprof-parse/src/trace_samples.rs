//! Trace-event sampled stacks: a trace object's top-level `samples` (one event per sample:
//! `pid`, `tid`, `ts`, `sf`, `weight`) and `stackFrames` (id → `name`, `category`, `parent`),
//! as Hermes / React Native and some instrumentation write them next to `traceEvents`.
//!
//! Each thread (`pid`, `tid`) becomes one profile: its samples in time order (stable), the
//! first at the profile's start, each sample's stack the frame `sf` and its ancestors. Time
//! is then attributed as for V8 profiles (a sample lasts until the next one). Frames become
//! call-tree nodes numbered in file order; only frames on some sample's stack are kept.
//!
//! Each thread gets its own nodes, so a deep chain of frames sampled on many threads is
//! copied once per thread: the threads count against the trace's limit on profiles as they
//! appear, and the nodes, summed over all threads, against the limit on call-tree nodes, before
//! any is built.

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashMap;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::error::{thousands, Origin, ParseError, ParseErrorKind, Span};
use crate::v8_tree::{number_ns, relative_span, strip_position, LossyStr, NodeSpec, RawCallFrame};
use crate::Limits;

/// A node as kept until the tree is linked: its parent and children as the input gave them.
pub(crate) type LooseNode = (NodeSpec<'static>, Option<u64>, Vec<u64>);

/// One thread's samples, ready to be read as a trace profile.
pub(crate) struct Thread {
    pub(crate) pid: String,
    pub(crate) tid: String,
    /// Where the samples are (for errors).
    pub(crate) span: Span,
    pub(crate) start_ns: i64,
    pub(crate) nodes: Vec<LooseNode>,
    /// Frame node ids, in time order.
    pub(crate) samples: Vec<u64>,
    /// Time since the sample before (the first: 0).
    pub(crate) deltas_ns: Vec<i64>,
    /// What was skipped or ignored.
    pub(crate) warnings: Vec<String>,
}

/// A number or a string holding one (Hermes writes `"ts":"11552125241"`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Loose<'a> {
    Int(i64),
    Float(f64),
    Text(#[serde(borrow)] Cow<'a, str>),
}

impl Loose<'_> {
    fn text(&self) -> String {
        match self {
            Loose::Int(i) => i.to_string(),
            Loose::Float(f) => f.to_string(),
            Loose::Text(t) => t.clone().into_owned(),
        }
    }

    fn number(&self) -> Option<crate::json_scan::Number> {
        use crate::json_scan::Number;
        match self {
            Loose::Int(i) => Some(Number::Int(*i)),
            Loose::Float(f) => Some(Number::Float(*f)),
            Loose::Text(t) => {
                let t = t.trim();
                t.parse::<i64>().map(Number::Int).ok().or_else(|| t.parse::<f64>().ok().map(Number::Float))
            }
        }
    }
}

#[derive(Deserialize)]
struct RawSample<'a> {
    #[serde(borrow, default)]
    ts: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pid: Option<Loose<'a>>,
    #[serde(borrow, default)]
    tid: Option<Loose<'a>>,
    #[serde(borrow, default)]
    sf: Option<Loose<'a>>,
    #[serde(borrow, default)]
    weight: Option<Loose<'a>>,
}

#[derive(Deserialize)]
struct RawFrame<'a> {
    #[serde(borrow, default)]
    name: Option<LossyStr<'a>>,
    #[serde(borrow, default)]
    category: Option<LossyStr<'a>>,
    #[serde(borrow, default)]
    parent: Option<Loose<'a>>,
}

/// `stackFrames` in file order.
struct Frames<'a>(Vec<(String, RawFrame<'a>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Frames<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FramesVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for FramesVisitor<'a> {
            type Value = Frames<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of stack frames")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Frames<'a>, M::Error> {
                let mut frames = Vec::new();
                while let Some((id, frame)) = map.next_entry::<String, RawFrame<'a>>()? {
                    frames.push((id, frame));
                }
                Ok(Frames(frames))
            }
        }
        deserializer.deserialize_map(FramesVisitor(std::marker::PhantomData))
    }
}

/// One thread's samples while they are read.
struct Building {
    pid: String,
    tid: String,
    /// (time, frame node id), in file order.
    samples: Vec<(i64, u64)>,
    unknown: usize,
    weighted: usize,
}

/// The threads of the sampled stacks `samples` (a JSON array, at `samples_span`) and `frames`
/// (a JSON object, at `frames_span`), in the order they first appear.
///
/// `profiles` is how many profiles the trace holds already, `max_profiles` how many it may:
/// one thread too many is an error as soon as it appears. The nodes of all threads together
/// are at most `limits.nodes`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read(
    samples: &[u8],
    samples_span: Span,
    frames: &[u8],
    frames_span: Span,
    origin: &Origin,
    limits: &Limits,
    profiles: usize,
    max_profiles: usize,
) -> Result<Vec<Thread>, ParseError> {
    let json_error = |e: serde_json::Error, span: Span, what: &str| {
        let at = relative_span(span, e.line() as u64, e.column() as u64);
        ParseErrorKind::Json(format!("in {what}: {}", strip_position(&e))).at(origin, at)
    };
    let raw: Vec<RawSample<'_>> =
        serde_json::from_slice(samples).map_err(|e| json_error(e, samples_span, "`samples`"))?;
    let Frames(frames) = serde_json::from_slice(frames).map_err(|e| json_error(e, frames_span, "`stackFrames`"))?;
    // Frame ids as node ids 1, 2, … in file order.
    let mut ids: FxHashMap<&str, u64> = FxHashMap::default();
    for (i, (id, _)) in frames.iter().enumerate() {
        if ids.insert(id.as_str(), i as u64 + 1).is_some() {
            return Err(
                ParseErrorKind::Invalid(format!("stack frame `{id}` appears twice").into()).at(origin, frames_span)
            );
        }
    }
    // A parent that is not a frame: an id no frame has, which the tree linking drops.
    let missing = frames.len() as u64 + 1;
    let parents: Vec<Option<u64>> = frames
        .iter()
        .map(|(_, f)| f.parent.as_ref().map(|p| ids.get(p.text().as_str()).copied().unwrap_or(missing)))
        .collect();

    let mut threads: Vec<Building> = Vec::new();
    let mut by_key: FxHashMap<(String, String), usize> = FxHashMap::default();
    for (index, sample) in raw.iter().enumerate() {
        let pid = sample.pid.as_ref().map(Loose::text).unwrap_or_default();
        let tid = sample.tid.as_ref().map(Loose::text).unwrap_or_default();
        let key = (pid, tid);
        let at = if let Some(&at) = by_key.get(&key) {
            at
        } else {
            // A new thread, refused as soon as it is one profile too many.
            if profiles + threads.len() >= max_profiles {
                return Err(
                    ParseErrorKind::too_many("the trace", max_profiles, "CPU profiles").at(origin, samples_span)
                );
            }
            let (pid, tid) = key.clone();
            threads.push(Building { pid, tid, samples: Vec::new(), unknown: 0, weighted: 0 });
            by_key.insert(key, threads.len() - 1);
            threads.len() - 1
        };
        let ts = sample.ts.as_ref().and_then(Loose::number).and_then(number_ns).ok_or_else(|| {
            ParseErrorKind::Invalid(format!("`samples[{index}]` has no time (`ts`, µs)").into())
                .at(origin, samples_span)
        })?;
        let thread = &mut threads[at];
        if sample
            .weight
            .as_ref()
            .and_then(Loose::number)
            .is_some_and(|w| !matches!(w, crate::json_scan::Number::Int(1)))
        {
            thread.weighted += 1;
        }
        match sample.sf.as_ref().and_then(|sf| ids.get(sf.text().as_str())) {
            Some(&node) => thread.samples.push((ts, node)),
            None => thread.unknown += 1,
        }
    }

    // The frames on some sample's stack, per thread (frame positions, in file order), each
    // thread's counted before any node is built. `used` is shared: only the marks set for a
    // thread are cleared after it.
    let mut used = vec![false; frames.len()];
    let mut total = 0usize;
    let mut stacks: Vec<Vec<usize>> = Vec::with_capacity(threads.len());
    for t in &mut threads {
        t.samples.sort_by_key(|(ts, _)| *ts);
        let mut kept = Vec::new();
        for &(_, node) in &t.samples {
            let mut at = Some(node);
            while let Some(id) = at {
                let i = (id as usize).wrapping_sub(1);
                let Some(slot) = used.get_mut(i) else { break };
                if *slot {
                    break;
                }
                *slot = true;
                kept.push(i);
                total += 1;
                if total > limits.nodes {
                    return Err(ParseErrorKind::too_many(
                        "the CPU profiles of `samples` (one per thread)",
                        limits.nodes,
                        "nodes",
                    )
                    .at(origin, samples_span));
                }
                at = parents[i];
            }
        }
        for &i in &kept {
            used[i] = false;
        }
        kept.sort_unstable();
        stacks.push(kept);
    }
    drop(used);

    let mut out = Vec::with_capacity(threads.len());
    for (t, kept) in threads.into_iter().zip(stacks) {
        let mut warnings = Vec::new();
        if t.unknown > 0 {
            warnings.push(format!("skipped {} without a known stack frame (`sf`)", count_samples(t.unknown)));
        }
        if t.weighted > 0 {
            warnings
                .push(format!("read {} with a `weight` other than 1 as one sample each", count_samples(t.weighted)));
        }
        if t.samples.is_empty() {
            // An empty profile, which the trace reader names.
            let span = samples_span;
            let (nodes, samples, deltas_ns) = (Vec::new(), Vec::new(), Vec::new());
            out.push(Thread { pid: t.pid, tid: t.tid, span, start_ns: 0, nodes, samples, deltas_ns, warnings });
            continue;
        }
        let nodes: Vec<LooseNode> = kept
            .into_iter()
            .map(|i| {
                let frame = &frames[i].1;
                let name = frame.name.as_ref().map(|n| n.0.clone().into_owned()).unwrap_or_default();
                let js = frame.category.as_ref().is_some_and(|c| c.0.eq_ignore_ascii_case("JavaScript"));
                let spec = NodeSpec {
                    id: i as u64 + 1,
                    call_frame: RawCallFrame::named(name, js),
                    ticks: Vec::new(),
                    deopt_reason: None,
                };
                (spec, parents[i], Vec::new())
            })
            .collect();
        let start_ns = t.samples[0].0;
        let mut previous = start_ns;
        let mut deltas_ns = Vec::with_capacity(t.samples.len());
        let mut samples = Vec::with_capacity(t.samples.len());
        for (ts, node) in t.samples {
            deltas_ns.push(ts.saturating_sub(previous));
            previous = ts;
            samples.push(node);
        }
        out.push(Thread { pid: t.pid, tid: t.tid, span: samples_span, start_ns, nodes, samples, deltas_ns, warnings });
    }
    Ok(out)
}

/// `1 sample`, `2 samples`, `1,000 samples`.
fn count_samples(n: usize) -> String {
    if n == 1 {
        "1 sample".to_owned()
    } else {
        format!("{} samples", thousands(n))
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse, Limits, Origin, ParseOptions};

    /// A chain of `depth` frames, its leaf sampled once on each of `threads` threads.
    fn deep_threads(threads: usize, depth: usize) -> String {
        let frames: Vec<String> = (1..=depth)
            .map(|i| match i {
                1 => r#""1":{"name":"f1"}"#.to_owned(),
                _ => format!(r#""{i}":{{"name":"f{i}","parent":"{}"}}"#, i - 1),
            })
            .collect();
        let samples: Vec<String> = (0..threads)
            .map(|t| format!(r#"{{"pid":1,"tid":{t},"ts":{},"sf":"{depth}","weight":1}}"#, 1000 + t))
            .collect();
        format!(r#"{{"traceEvents":[],"stackFrames":{{{}}},"samples":[{}]}}"#, frames.join(","), samples.join(","))
    }

    /// The 1-based column of the `[` of `samples` (on line 1).
    fn samples_column(text: &str) -> usize {
        text.find(r#""samples":["#).unwrap() + r#""samples":"#.len() + 1
    }

    fn with_nodes(nodes: usize) -> ParseOptions {
        let limits = ParseOptions::default().limits();
        ParseOptions { test_limits: Some(Limits { nodes, ..limits }), ..ParseOptions::default() }
    }

    #[test]
    fn nodes_are_counted_over_all_threads() {
        let origin = Origin("t".into());
        // 10 threads × 50 frames: 500 nodes in all, 50 a thread.
        let text = deep_threads(10, 50);
        let p = parse(text.as_bytes(), &origin, &with_nodes(500)).unwrap();
        assert!(p.meta.warnings[0].message.starts_with("trace holds 10 CPU profiles"), "{:?}", p.meta.warnings);
        let e = parse(text.as_bytes(), &origin, &with_nodes(499)).unwrap_err().to_string();
        let column = samples_column(&text);
        assert_eq!(
            e,
            format!("t:1:{column}: the CPU profiles of `samples` (one per thread) exceeds the limit of 499 nodes")
        );
    }

    #[test]
    fn threads_are_counted_as_they_appear() {
        let origin = Origin("t".into());
        let p = parse(deep_threads(1024, 3).as_bytes(), &origin, &ParseOptions::default());
        assert!(p.is_ok(), "{:?}", p.err());
        // 1,025 threads of a chain of 5,000 frames (5,125,000 nodes, over the default limit of
        // 4,194,304 nodes): refused on the 1,025th thread, before any node is built.
        let text = deep_threads(1025, 5000);
        let e = parse(text.as_bytes(), &origin, &ParseOptions::default()).unwrap_err().to_string();
        let column = samples_column(&text);
        assert_eq!(e, format!("t:1:{column}: the trace exceeds the limit of 1,024 CPU profiles"));
    }
}
