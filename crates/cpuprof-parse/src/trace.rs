//! Chrome trace events holding V8 CPU profiles: node's `--trace-event-categories
//! disabled-by-default-v8.cpu_profiler`, DevTools' Performance panel ("Save trace"), CDP
//! `Tracing`: `Profile` and `ProfileChunk` events, as V8's `CpuProfile::StreamPendingTraceEvents`
//! writes them.
//!
//! Both forms are read: `{"traceEvents":[…], …}` (other keys in any order, skipped) and a bare
//! array `[…]` (whose closing `]` may be missing, as the trace-event format allows for files of
//! a process that died). The events are read one at a time by [`Scanner`]: each is captured,
//! events that cannot be profile events (no `Profile` in their bytes) are dropped unparsed, and
//! the rest are deserialized into typed, borrowed structs.
//!
//! A profile is a `Profile` event (`ph:"P"`, `args.data.startTime`) and the `ProfileChunk`
//! events with the same `(pid, id)`, concatenated in the order of their timestamps (`ts`), as
//! DevTools' trace engine sorts them: a trace's events may come in any order (viewers sort them
//! by `ts`), and each chunk's first time delta counts from the last sample of the chunk before
//! it in time. Chunks with equal (or no) `ts` keep their file order, as in DevTools' stable
//! sort; V8 never writes two chunks of one profile at the same microsecond. Their nodes name
//! their parent instead of their children, and samples' lines (`lines`) become line hits. Time
//! is then attributed exactly as for a `.cpuprofile` (DevTools' rules, [`crate::timeline`]).

use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::ops::Range;

use cpuprof_model::{Profile, Setting, SourceFormat, Warning};
use serde::Deserialize;

use crate::error::{thousands, Origin, ParseError, ParseErrorKind, Span};
use crate::json_scan::{describe, Number, Scanner};
use crate::timeline::Deltas;
use crate::v8_tree::{
    number_ns, relative_span, strip_position, Leaves, LossyStr, NodeSpec, RawCallFrame, Source, Timing, Tree,
};
use crate::{Limits, ParseOptions};

/// The category V8's profile events are recorded in.
const CATEGORY: &str = "disabled-by-default-v8.cpu_profiler";

/// Parses the chosen CPU profile of the Chrome trace read from `reader`.
pub(crate) fn parse(
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let wanted = options.profile_id.as_deref().map(Wanted::parse);
    let mut s = Scanner::new(reader, origin, options.limits());
    s.skip_bom()?;
    let mut events = Events { profiles: Vec::new(), wanted, buf: Vec::new(), count: 0, limits: options.limits() };
    match s.skip_ws()? {
        None => return Err(ParseErrorKind::Empty.at(origin, Span::None)),
        Some(b'[') => events.read_array(&mut s, true)?,
        Some(b'{') => {
            let mut seen = false;
            s.object("the trace object", |s, key, key_span| {
                if key != "traceEvents" {
                    return s.value("a value", None);
                }
                if seen {
                    return Err(ParseErrorKind::Invalid("`traceEvents` appears twice".into()).at(origin, key_span));
                }
                seen = true;
                events.read_array(s, false)
            })?;
            if !seen {
                return Err(ParseErrorKind::Missing { key: "traceEvents", what: "Chrome trace" }.at(origin, Span::None));
            }
        }
        Some(b) => {
            return Err(s.error(ParseErrorKind::UnknownFormat(format!(
                "expected a Chrome trace (a JSON array or an object with `traceEvents`), found {}",
                describe(b)
            ))))
        }
    }
    if !s.at_end()? {
        return Err(s.error(ParseErrorKind::Json("unexpected data after the trace".to_owned())));
    }
    events.finish(origin, options)
}

/// [`ParseOptions::profile_id`]: `ID` or `PID:ID`.
struct Wanted {
    pid: Option<String>,
    id: String,
}

impl Wanted {
    fn parse(text: &str) -> Wanted {
        match text.split_once(':') {
            Some((pid, id)) => Wanted { pid: Some(pid.trim().to_owned()), id: id.trim().to_owned() },
            None => Wanted { pid: None, id: text.trim().to_owned() },
        }
    }

    fn matches(&self, pid: &str, id: &str) -> bool {
        self.id.eq_ignore_ascii_case(id) && self.pid.as_deref().is_none_or(|p| p == pid)
    }
}

/// The fields every event is first read for (the rest, `args` included, is skipped).
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    ph: Option<LossyStr<'a>>,
    #[serde(borrow, default)]
    name: Option<LossyStr<'a>>,
    #[serde(borrow, default)]
    cat: Option<LossyStr<'a>>,
    #[serde(borrow, default)]
    pid: Option<Id<'a>>,
    #[serde(borrow, default)]
    tid: Option<Id<'a>>,
    #[serde(borrow, default)]
    id: Option<Id<'a>>,
}

/// A pid, tid or event id: a number or a string (`"0x1"`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Id<'a> {
    Number(i64),
    Text(#[serde(borrow)] Cow<'a, str>),
}

impl Id<'_> {
    fn text(&self) -> String {
        match self {
            Id::Number(n) => n.to_string(),
            Id::Text(t) => t.clone().into_owned(),
        }
    }
}

#[derive(Deserialize)]
struct ProfileEvent<'a> {
    /// When the event was written (µs): the order of a profile's chunks.
    #[serde(default)]
    ts: Option<Num>,
    #[serde(borrow)]
    args: Args<'a>,
}

#[derive(Deserialize)]
struct Args<'a> {
    #[serde(borrow)]
    data: Data<'a>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(rename = "startTime", default)]
    start_time: Option<Num>,
    #[serde(rename = "endTime", default)]
    end_time: Option<Num>,
    #[serde(rename = "cpuProfile", borrow, default)]
    cpu_profile: Option<ChunkProfile<'a>>,
    #[serde(rename = "timeDeltas", default)]
    time_deltas: Option<Vec<Num>>,
    #[serde(default)]
    lines: Option<Vec<i64>>,
}

#[derive(Deserialize)]
struct ChunkProfile<'a> {
    #[serde(borrow, default)]
    nodes: Vec<TraceNode<'a>>,
    #[serde(default)]
    samples: Vec<u64>,
}

#[derive(Deserialize)]
struct TraceNode<'a> {
    id: u64,
    #[serde(rename = "callFrame", borrow)]
    call_frame: RawCallFrame<'a>,
    #[serde(default)]
    parent: Option<u64>,
}

/// A JSON number: µs in trace events (V8 writes integers).
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Num;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
                Ok(Num::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
                Ok(i64::try_from(v).map_or(Num::Float(v as f64), Num::Int))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
                Ok(Num::Float(v))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Num {
    fn number(self) -> Number {
        match self {
            Num::Int(i) => Number::Int(i),
            Num::Float(f) => Number::Float(f),
        }
    }

    fn ns(self, what: &'static str) -> Result<i64, ParseErrorKind> {
        number_ns(self.number()).ok_or_else(|| ParseErrorKind::OutOfRange {
            what,
            value: match self {
                Num::Int(i) => i.to_string(),
                Num::Float(f) => f.to_string(),
            },
        })
    }
}

/// One CPU profile of the trace, as far as its events have come.
struct TraceProfile {
    pid: String,
    id: String,
    /// The sampled thread (the `Profile` event's tid), once that event is read.
    tid: Option<String>,
    start_ns: Option<i64>,
    /// The `Profile` event's `ts`: profiles are listed in this order.
    ts_ns: Option<i64>,
    /// Where its `Profile` event is (or its first chunk), for errors.
    span: Span,
    sample_count: usize,
    /// Whether its events are kept (false for profiles other than the one asked for).
    keep: bool,
    nodes: Vec<(NodeSpec<'static>, Option<u64>)>,
    samples: Vec<u64>,
    /// Line per sample (0: none).
    lines: Vec<u32>,
    deltas: Deltas,
    delta_sum_ns: i64,
    /// The chunks kept, in file order: what each added to the columns above.
    chunks: Vec<Chunk>,
}

/// One `ProfileChunk` event's share of its profile's columns, as read (in file order).
struct Chunk {
    ts_ns: Option<i64>,
    span: Span,
    nodes: Range<usize>,
    /// Its samples (and lines: one per sample).
    samples: Range<usize>,
    /// Its time deltas, and those of them kept in `deltas.big`.
    deltas: Range<usize>,
    big: Range<usize>,
    end_ns: Option<i64>,
}

impl TraceProfile {
    fn key(&self) -> String {
        format!("{}:{}", self.pid, self.id)
    }

    fn is_main_thread(&self) -> bool {
        self.tid.as_deref() == Some(self.pid.as_str())
    }

    /// The profile with its chunks in time order: a stable sort by `ts` (chunks without one
    /// first), as DevTools sorts them. Their columns are copied once, and only when the file had
    /// them out of order.
    fn in_time_order(mut self) -> TraceProfile {
        let mut order: Vec<usize> = (0..self.chunks.len()).collect();
        order.sort_by_key(|&i| self.chunks[i].ts_ns);
        if order.iter().enumerate().all(|(k, i)| k == *i) {
            return self;
        }
        let chunks = std::mem::take(&mut self.chunks);
        let (order_ref, chunks_ref) = (&order, &chunks);
        let ranges =
            |column: fn(&Chunk) -> &Range<usize>| order_ref.iter().map(move |i| column(&chunks_ref[*i]).clone());
        let mut nodes: Vec<_> = std::mem::take(&mut self.nodes).into_iter().map(Some).collect();
        self.nodes = ranges(|c| &c.nodes).flatten().filter_map(|k| nodes[k].take()).collect();
        drop(nodes);
        self.samples = gather(&self.samples, ranges(|c| &c.samples));
        self.lines = gather(&self.lines, ranges(|c| &c.samples));
        self.deltas.narrow = gather(&self.deltas.narrow, ranges(|c| &c.deltas));
        self.deltas.big = gather(&self.deltas.big, ranges(|c| &c.big));
        let mut chunks: Vec<Option<Chunk>> = chunks.into_iter().map(Some).collect();
        let shift = |range: &mut Range<usize>, start: &mut usize| {
            let len = range.len();
            *range = *start..*start + len;
            *start += len;
        };
        let (mut nodes_at, mut samples_at, mut deltas_at, mut big_at) = (0, 0, 0, 0);
        for i in order {
            let Some(mut chunk) = chunks[i].take() else { continue };
            shift(&mut chunk.nodes, &mut nodes_at);
            shift(&mut chunk.samples, &mut samples_at);
            shift(&mut chunk.deltas, &mut deltas_at);
            shift(&mut chunk.big, &mut big_at);
            self.chunks.push(chunk);
        }
        self
    }
}

/// The parts `ranges` of `column`, one after the other.
fn gather<T: Copy>(column: &[T], ranges: impl Iterator<Item = Range<usize>>) -> Vec<T> {
    let mut out = Vec::with_capacity(column.len());
    for range in ranges {
        out.extend_from_slice(&column[range]);
    }
    out
}

struct Events {
    profiles: Vec<TraceProfile>,
    wanted: Option<Wanted>,
    buf: Vec<u8>,
    /// Events read.
    count: usize,
    limits: Limits,
}

/// More CPU profiles than any real trace holds (one per thread that ran the profiler).
const MAX_PROFILES: usize = 1024;

impl Events {
    /// Reads the events array (the `[` is next). A bare array (`top_level`) may lack its `]`.
    fn read_array<R: Read + Send>(&mut self, s: &mut Scanner<'_, R>, top_level: bool) -> Result<(), ParseError> {
        const INSIDE: &str = "`traceEvents`";
        s.expect(b'[', INSIDE)?;
        loop {
            match s.skip_ws()? {
                None if top_level => return Ok(()),
                Some(b']') if self.count == 0 => {
                    s.next_token(INSIDE)?;
                    return Ok(());
                }
                _ => {}
            }
            let span = s.span();
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            s.value("a trace event", Some(&mut buf))?;
            self.count += 1;
            let result = self.event(&buf, span, s.origin());
            self.buf = buf;
            result?;
            if top_level && s.skip_ws()?.is_none() {
                return Ok(());
            }
            match s.next_token(INSIDE)? {
                b',' => {}
                b']' => return Ok(()),
                b => {
                    return Err(s.error(ParseErrorKind::Json(format!(
                        "expected `,` or `]` after a trace event, found {}",
                        describe(b)
                    ))))
                }
            }
        }
    }

    /// Takes one event's bytes, found at `span`.
    fn event(&mut self, bytes: &[u8], span: Span, origin: &Origin) -> Result<(), ParseError> {
        // Cheap: most events are not profile events, and those never contain `Profile`.
        if memchr::memmem::find(bytes, b"Profile").is_none() {
            return Ok(());
        }
        let json_error = |e: serde_json::Error, what: &str| {
            let at = relative_span(span, e.line() as u64, e.column() as u64);
            ParseErrorKind::Json(format!("in {what}: {}", strip_position(&e))).at(origin, at)
        };
        let head: Head<'_> = serde_json::from_slice(bytes).map_err(|e| json_error(e, "a trace event"))?;
        let name = head.name.as_ref().map(|n| &*n.0);
        let start = match name {
            Some("Profile") => true,
            Some("ProfileChunk") => false,
            _ => return Ok(()),
        };
        if head.ph.as_ref().map(|p| &*p.0) != Some("P") {
            return Ok(());
        }
        // V8 always sets the category; an event that names another is someone else's.
        if head.cat.as_ref().is_some_and(|c| !c.0.split(',').any(|c| c == CATEGORY)) {
            return Ok(());
        }
        let what = if start { "a `Profile` event" } else { "a `ProfileChunk` event" };
        let (Some(pid), Some(id)) = (&head.pid, &head.id) else {
            return Err(ParseErrorKind::Invalid(format!("{what} without `pid` or `id`").into()).at(origin, span));
        };
        let (pid, id) = (pid.text(), id.text());
        let position = if let Some(p) = self.profiles.iter().position(|p| p.pid == pid && p.id == id) {
            p
        } else {
            if self.profiles.len() == MAX_PROFILES {
                return Err(ParseErrorKind::too_many("the trace", MAX_PROFILES, "CPU profiles").at(origin, span));
            }
            let keep = self.wanted.as_ref().is_none_or(|w| w.matches(&pid, &id));
            self.profiles.push(TraceProfile {
                pid,
                id,
                tid: None,
                start_ns: None,
                ts_ns: None,
                span,
                sample_count: 0,
                keep,
                nodes: Vec::new(),
                samples: Vec::new(),
                lines: Vec::new(),
                deltas: Deltas::default(),
                delta_sum_ns: 0,
                chunks: Vec::new(),
            });
            self.profiles.len() - 1
        };
        let tid = head.tid.as_ref().map(Id::text);
        let event: ProfileEvent<'_> = serde_json::from_slice(bytes).map_err(|e| json_error(e, what))?;
        let data = event.args.data;
        let profile = &mut self.profiles[position];
        let at = |kind: ParseErrorKind| kind.at(origin, span);
        let ts_ns = event.ts.map(|ts| ts.ns("time")).transpose().map_err(at)?;
        if start {
            if profile.tid.is_some() {
                return Err(at(ParseErrorKind::Invalid(
                    format!("a second `Profile` event for profile {}", profile.key()).into(),
                )));
            }
            profile.tid = Some(tid.unwrap_or_default());
            profile.ts_ns = ts_ns;
            profile.span = span;
            let start = data
                .start_time
                .ok_or_else(|| at(ParseErrorKind::Invalid("a `Profile` event without `args.data.startTime`".into())))?;
            profile.start_ns = Some(start.ns("time").map_err(at)?);
            return Ok(());
        }
        let cpu_profile = data.cpu_profile.unwrap_or(ChunkProfile { nodes: Vec::new(), samples: Vec::new() });
        profile.sample_count += cpu_profile.samples.len();
        let end_ns = data.end_time.map(|end| end.ns("time")).transpose().map_err(at)?;
        if !profile.keep {
            return Ok(());
        }
        let (nodes_start, samples_start) = (profile.nodes.len(), profile.samples.len());
        let (deltas_start, big_start) = (profile.deltas.narrow.len(), profile.deltas.big.len());
        for node in cpu_profile.nodes {
            let spec = NodeSpec { id: node.id, call_frame: node.call_frame.into_owned(), ticks: Vec::new() };
            profile.nodes.push((spec, node.parent));
        }
        let lines = data.lines.unwrap_or_default();
        let n = cpu_profile.samples.len();
        profile.lines.extend((0..n).map(|i| lines.get(i).and_then(|l| u32::try_from(*l).ok()).unwrap_or(0)));
        profile.samples.extend(cpu_profile.samples);
        for delta in data.time_deltas.unwrap_or_default() {
            let ns = delta.ns("time delta").map_err(at)?;
            profile.delta_sum_ns = profile.delta_sum_ns.saturating_add(ns);
            profile.deltas.narrow.push(Deltas::narrow_ns(ns).unwrap_or_else(|| {
                profile.deltas.big.push(ns);
                Deltas::BIG
            }));
        }
        profile.chunks.push(Chunk {
            ts_ns,
            span,
            nodes: nodes_start..profile.nodes.len(),
            samples: samples_start..profile.samples.len(),
            deltas: deltas_start..profile.deltas.narrow.len(),
            big: big_start..profile.deltas.big.len(),
            end_ns,
        });
        let limits = &self.limits;
        if profile.samples.len().max(profile.deltas.len()) > limits.samples {
            return Err(at(ParseErrorKind::too_many("a CPU profile of the trace", limits.samples, "samples")));
        }
        if profile.nodes.len() > limits.nodes {
            return Err(at(ParseErrorKind::too_many("a CPU profile of the trace", limits.nodes, "nodes")));
        }
        Ok(())
    }

    fn finish(self, origin: &Origin, options: &ParseOptions) -> Result<Profile, ParseError> {
        let Events { mut profiles, wanted, .. } = self;
        // Listed (and, among equals, chosen) in the order the profiles started, whatever the
        // order of their events in the file.
        profiles.sort_by(|a, b| {
            (a.ts_ns.is_none(), a.ts_ns, &a.pid, &a.id).cmp(&(b.ts_ns.is_none(), b.ts_ns, &b.pid, &b.id))
        });
        let orphans: Vec<String> = profiles.iter().filter(|p| p.tid.is_none()).map(TraceProfile::key).collect();
        profiles.retain(|p| p.tid.is_some());
        if profiles.is_empty() {
            if !orphans.is_empty() {
                return Err(ParseErrorKind::Invalid(
                    format!(
                        "the trace has `ProfileChunk` events for {} but no `Profile` event to start them",
                        orphans.join(", ")
                    )
                    .into(),
                )
                .at(origin, Span::None));
            }
            return Err(ParseErrorKind::Unsupported(
                "no CPU profile in this trace: record with the disabled-by-default-v8.cpu_profiler category",
            )
            .at(origin, Span::None));
        }
        let list = profiles
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let unit = if i == 0 { " samples" } else { "" };
                format!("{} with {}{unit}", p.key(), thousands(p.sample_count))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let count = profiles.len();
        let mut warnings = Vec::new();
        let chosen = if let Some(w) = &wanted {
            let matching: Vec<usize> = (0..count).filter(|i| profiles[*i].keep).collect();
            match matching.as_slice() {
                [one] => *one,
                [] => {
                    return Err(ParseErrorKind::NoSuchProfile {
                        wanted: options.profile_id.clone().unwrap_or_default(),
                        profiles: list,
                    }
                    .at(origin, Span::None))
                }
                _ => {
                    return Err(ParseErrorKind::TraceProfile(format!(
                        "several CPU profiles have id `{}` ({list}); choose one as PID:ID",
                        w.id
                    ))
                    .at(origin, Span::None))
                }
            }
        } else {
            let mains: Vec<usize> = (0..count).filter(|i| profiles[*i].is_main_thread()).collect();
            let candidates = if mains.is_empty() { (0..count).collect() } else { mains.clone() };
            // The most samples; the first to start among equals.
            let mut best = candidates[0];
            for &i in &candidates[1..] {
                if profiles[i].sample_count > profiles[best].sample_count {
                    best = i;
                }
            }
            if count > 1 {
                let why = match mains.len() {
                    0 => "most samples; no profile is of a main thread",
                    1 => "main thread",
                    _ => "main thread, most samples",
                };
                let message =
                    format!("trace holds {count} CPU profiles ({list}); read {} ({why})", profiles[best].key());
                warnings.push(Warning::with_setting(message, Setting::ProfileId));
            }
            best
        };
        let profile = profiles.swap_remove(chosen);
        drop(profiles);
        build(profile, warnings, origin, options)
    }
}

/// The profile from one trace profile's events.
fn build(
    p: TraceProfile,
    warnings: Vec<Warning>,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let p = p.in_time_order();
    let span = p.chunks.first().map_or(p.span, |c| c.span);
    let mut tree = Tree::from_parents(p.nodes, origin, span)?;
    let leaves = match Leaves::from_ids(&p.samples, &tree, origin, span) {
        Ok(leaves) => leaves,
        Err(mut e) => {
            // Point at the chunk holding the sample.
            if let ParseErrorKind::UnknownNode { index, .. } = e.kind {
                let chunk = p.chunks.partition_point(|c| c.samples.start <= index).saturating_sub(1);
                e.span = p.chunks.get(chunk).map_or(span, |c| c.span);
            }
            return Err(e);
        }
    };
    // Line hits: samples per (node, line), lines in ascending order.
    if p.lines.iter().any(|l| *l != 0) {
        let mut hits: Vec<(u32, u32)> = p
            .samples
            .iter()
            .zip(&p.lines)
            .filter(|(_, line)| **line != 0)
            .filter_map(|(id, line)| Some((tree.position(*id)?, *line)))
            .collect();
        hits.sort_unstable();
        let mut i = 0;
        while i < hits.len() {
            let node = hits[i].0;
            let mut ticks: Vec<(u32, u32)> = Vec::new();
            while i < hits.len() && hits[i].0 == node {
                match ticks.last_mut() {
                    Some((line, count)) if *line == hits[i].1 => *count = count.saturating_add(1),
                    _ => ticks.push((hits[i].1, 1)),
                }
                i += 1;
            }
            tree.set_ticks(node, ticks);
        }
    }
    let start_ns = p.start_ns;
    // The last `endTime` in time order; without one (DevTools), the profile ends with its last sample.
    let end_ns =
        p.chunks.iter().rev().find_map(|c| c.end_ns).or_else(|| start_ns.map(|s| s.saturating_add(p.delta_sum_ns)));
    let timing = Timing { start_ns, end_ns, deltas: Some((p.deltas, span)) };
    let source = Source { format: SourceFormat::Trace, warnings };
    leaves.build(&tree, &timing, &source, origin, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpuprof_model::FuncKind;

    fn parse_with(text: &str, id: Option<&str>) -> Result<Profile, ParseError> {
        let options = ParseOptions { profile_id: id.map(str::to_owned), ..ParseOptions::default() };
        parse(text.as_bytes(), &Origin("t.json".into()), &options)
    }

    fn parse_str(text: &str) -> Result<Profile, ParseError> {
        parse_with(text, None)
    }

    const ROOT: &str = r#"{"callFrame":{"functionName":"(root)","scriptId":0,"codeType":"other"},"id":1}"#;

    /// Profile 0x1 on the main thread (pid 7 = tid 7) in two chunks, plus unrelated events.
    fn two_chunks() -> String {
        format!(
            r#"{{"metadata":{{"x":[1,2,{{"a":"]"}}]}},"traceEvents":[
{{"pid":7,"tid":7,"ts":1,"ph":"M","cat":"__metadata","name":"thread_name","args":{{"name":"main"}}}},
{{"pid":7,"tid":7,"ts":5,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"Profile","id":"0x1","args":{{"data":{{"startTime":100}}}}}},
{{"pid":7,"tid":9,"ts":6,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"ProfileChunk","id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[{ROOT},
  {{"callFrame":{{"functionName":"(program)","scriptId":0}},"id":2,"parent":1}},
  {{"callFrame":{{"functionName":"main","url":"/app/a.js","scriptId":12,"lineNumber":0,"columnNumber":9}},"id":3,"parent":1}}],
  "samples":[3,3,2]}},"timeDeltas":[10,20,30],"lines":[1,2,0]}}}}}},
{{"pid":7,"tid":9,"ts":7,"ph":"X","cat":"v8","name":"RunTask","dur":3,"args":{{}}}},
{{"pid":7,"tid":9,"ts":8,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"ProfileChunk","id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[
  {{"callFrame":{{"functionName":"work","url":"/app/a.js","scriptId":12,"lineNumber":4,"columnNumber":0,"codeType":"JS"}},"id":4,"parent":3}}],
  "samples":[4,4]}},"timeDeltas":[10,10],"lines":[5,5]}}}}}},
{{"pid":7,"tid":7,"ts":9,"ph":"P","name":"ProfileChunk","id":"0x1","args":{{"data":{{"endTime":200}}}}}}
]}}"#
        )
    }

    fn rows(p: &Profile) -> Vec<(String, String, Option<u32>, FuncKind, i64, i64)> {
        let mut out: Vec<_> = (0..p.samples.len())
            .map(|i| {
                let stack = p.samples.stacks()[i];
                let f = p.funcs[p.func_of(stack)];
                (
                    p.strings.get(f.name).to_owned(),
                    p.strings.get(f.file).to_owned(),
                    f.line,
                    f.kind,
                    p.samples.values(0)[i],
                    p.samples.values(1)[i],
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn chunks_are_joined_and_timed_as_devtools_does() {
        let p = parse_str(&two_chunks()).unwrap();
        assert_eq!(p.meta.format, SourceFormat::Trace);
        // times 110 130 160 170 180 µs; durations 20 30 10 10, the last the mean (70/4 = 17.5);
        // the lone (program) sample between main and work (both under main) goes to main.
        assert_eq!(
            rows(&p),
            vec![
                ("main".into(), "/app/a.js".into(), Some(1), FuncKind::Js, 3, 60_000),
                ("work".into(), "/app/a.js".into(), Some(5), FuncKind::Js, 2, 27_500),
            ]
        );
        assert_eq!(
            (p.meta.start_ns, p.meta.duration_ns, p.meta.interval_ns),
            (Some(100_000), Some(100_000), Some(17_500))
        );
        assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
        // `lines` became line hits: main had lines 1 and 2, work line 5 twice.
        let mut hits: Vec<(u32, u32)> = p.stacks.ids().flat_map(|s| p.line_hits.of(s).collect::<Vec<_>>()).collect();
        hits.sort_unstable();
        assert_eq!(hits, vec![(1, 1), (2, 1), (5, 2)]);
    }

    #[test]
    fn bare_array_in_any_order_and_without_its_closing_bracket() {
        let text = two_chunks();
        let events = &text[text.find("\"traceEvents\":").unwrap() + 14..text.len() - 1];
        let expected = rows(&parse_str(&text).unwrap());
        assert_eq!(rows(&parse_str(events).unwrap()), expected);
        let open = events.trim_end().strip_suffix(']').unwrap();
        assert_eq!(rows(&parse_str(open).unwrap()), expected);
        assert_eq!(rows(&parse_str(&format!("{open},\n")).unwrap()), expected);
        // The Profile event after its chunks: matched by (pid, id), not by order.
        let mut lines: Vec<String> = events.lines().map(str::to_owned).collect();
        let start = lines.remove(2);
        let last = lines.len() - 2;
        lines[last].push(',');
        lines.insert(last + 1, start.trim_end_matches(',').to_owned());
        assert_eq!(rows(&parse_str(&lines.join("\n")).unwrap()), expected);
    }

    #[test]
    fn chunks_are_joined_in_time_order_whatever_their_file_order() {
        let text = two_chunks();
        let lines: Vec<&str> = text.lines().collect();
        let event = |range: std::ops::Range<usize>| lines[range].join("\n").trim_end_matches(',').to_owned();
        // metadata, Profile, chunk at ts 6, RunTask, chunk at ts 8, the end chunk at ts 9
        let (m, start, first, task, second, end) =
            (event(1..2), event(2..3), event(3..7), event(7..8), event(8..11), event(11..12));
        let trace = |events: &[&String]| {
            format!("{}\n{}\n]}}", lines[0], events.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(",\n"))
        };
        assert_eq!(trace(&[&m, &start, &first, &task, &second, &end]), text);
        let meta = |p: &Profile| (p.meta.start_ns, p.meta.duration_ns, p.meta.interval_ns, p.meta.warnings.clone());
        let expected = parse_str(&text).unwrap();
        // In file order, the samples of ts 6 would come 20 µs after those of ts 8, and the
        // profile would end at 150 µs.
        let early_end = end.replace(r#""ts":9"#, r#""ts":3"#).replace("200", "150");
        for events in [
            [&end, &second, &task, &first, &start, &m],
            [&m, &second, &start, &end, &first, &task],
            [&end, &m, &start, &first, &second, &early_end],
        ] {
            let p = parse_str(&trace(&events)).unwrap();
            assert_eq!((rows(&p), meta(&p)), (rows(&expected), meta(&expected)), "{events:?}");
        }
    }

    #[test]
    fn profiles_are_listed_in_the_order_they_started() {
        // The same three profiles, the file order reversed: the list (and the choice among
        // equals) follows their `Profile` events' `ts`, not the file.
        let with_ts = three_profiles()
            .replace(r#""tid":8,"ph""#, r#""tid":8,"ts":1,"ph""#)
            .replace(r#""tid":7,"ph""#, r#""tid":7,"ts":2,"ph""#);
        let p = parse_str(&with_ts).unwrap();
        let events: Vec<&str> = with_ts.strip_prefix("[{").unwrap().trim_end_matches(']').split(",\n{").collect();
        assert_eq!(events.len(), 6);
        let reversed = format!("[{{{}]", events.iter().rev().copied().collect::<Vec<_>>().join(",\n{"));
        let q = parse_str(&reversed).unwrap();
        assert_eq!(p.meta.warnings, q.meta.warnings);
        assert_eq!(rows(&p), rows(&q));
        assert!(
            p.meta.warnings[0].contains("(7:0x1 with 5 samples, 7:0x2 with 2, 7:0x3 with 3)"),
            "{:?}",
            p.meta.warnings
        );
    }

    #[test]
    fn without_end_time_the_profile_ends_with_its_last_sample() {
        let text = two_chunks().replace(r#""endTime":200"#, r#""other":1"#);
        let p = parse_str(&text).unwrap();
        assert_eq!(p.meta.duration_ns, Some(80_000));
    }

    /// Two profiles of one process: 0x1 on a worker (tid 8), 0x2 and 0x3 on the main thread.
    fn three_profiles() -> String {
        let profile = |id: &str, tid: u32, samples: &str| {
            format!(
                r#"{{"pid":7,"tid":{tid},"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"Profile","id":"{id}","args":{{"data":{{"startTime":0}}}}}},
{{"pid":7,"tid":99,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"ProfileChunk","id":"{id}","args":{{"data":{{"cpuProfile":{{"nodes":[{ROOT},
  {{"callFrame":{{"functionName":"f{id}","url":"/x.js","scriptId":3,"lineNumber":0,"columnNumber":0}},"id":2,"parent":1}}],"samples":[{samples}]}},"timeDeltas":[{deltas}]}}}}}}"#,
                deltas = samples.split(',').map(|_| "5").collect::<Vec<_>>().join(",")
            )
        };
        format!("[{},\n{},\n{}]", profile("0x1", 8, "2,2,2,2,2"), profile("0x2", 7, "2,2"), profile("0x3", 7, "2,2,2"))
    }

    #[test]
    fn the_main_threads_biggest_profile_is_the_default() {
        let p = parse_str(&three_profiles()).unwrap();
        assert_eq!(rows(&p)[0].0, "f0x3");
        assert_eq!(
            p.meta.warnings,
            vec![Warning::with_setting(
                "trace holds 3 CPU profiles (7:0x1 with 5 samples, 7:0x2 with 2, 7:0x3 with 3); read 7:0x3 (main thread, \
                 most samples)",
                Setting::ProfileId
            )]
        );
        for id in ["0x1", "7:0x1", "0X1"] {
            let p = parse_with(&three_profiles(), Some(id)).unwrap();
            assert_eq!(rows(&p)[0].0, "f0x1", "{id}");
            assert_eq!(rows(&p)[0].4, 5);
            assert!(p.meta.warnings.is_empty());
        }
        let e = parse_with(&three_profiles(), Some("8:0x1")).unwrap_err();
        assert_eq!(e.kind.setting(), Some(Setting::ProfileId));
        assert_eq!(
            e.to_string(),
            "t.json: no CPU profile `8:0x1` in this trace; it holds 7:0x1 with 5 samples, 7:0x2 with 2, 7:0x3 with 3"
        );
    }

    #[test]
    fn clear_errors() {
        let cases = [
            (
                r#"{"traceEvents":[]}"#,
                "t.json: no CPU profile in this trace: record with the disabled-by-default-v8.cpu_profiler category",
            ),
            (
                r#"[{"ph":"X","name":"RunTask"}]"#,
                "t.json: no CPU profile in this trace: record with the disabled-by-default-v8.cpu_profiler category",
            ),
            (r#"{"metadata":{}}"#, "t.json: missing `traceEvents`: not a Chrome trace"),
            ("", "t.json: the input is empty"),
            (
                r#"{"traceEvents":[{"ph":"P","name":"Profile"]}"#,
                "t.json:1:43: invalid JSON: in a trace event: expected `,` or `}`",
            ),
            (
                r#"{"traceEvents":[{"ph":"P","name":"Profile","#,
                "t.json:1:44: unexpected end of input inside a trace event (is the file truncated?)",
            ),
            (
                r#"[{"pid":1,"tid":1,"ph":"P","name":"Profile","id":"0x1","args":{"data":{"startTime":"x"}}}]"#,
                "t.json:1:86: invalid JSON: in a `Profile` event: invalid type: string \"x\", expected a number",
            ),
            (
                r#"[{"pid":1,"tid":1,"ph":"P","name":"ProfileChunk","id":"0x1","args":{"data":{}}}]"#,
                "t.json: the trace has `ProfileChunk` events for 1:0x1 but no `Profile` event to start them",
            ),
        ];
        for (text, expected) in cases {
            let e = parse_str(text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{text}\n  got      {e}\n  expected {expected}");
        }
    }

    #[test]
    fn bad_trees_and_samples_are_errors_with_the_chunk_position() {
        let text = two_chunks();
        let e = parse_str(&text.replace(r#""samples":[4,4]"#, r#""samples":[4,44]"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:9:1: sample 4 refers to unknown node id 44");
        let e = parse_str(&text.replace(r#""id":4,"parent":3"#, r#""id":4,"parent":40"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: node 4 has parent 40, which is not a node");
        let e = parse_str(&text.replace(r#""id":4,"parent":3"#, r#""id":4,"parent":4"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: the call tree has a cycle through node 4");
        let e = parse_str(&text.replace(r#""id":4,"parent":3"#, r#""id":3,"parent":1"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: duplicate node id 3 (nodes[2] and nodes[3])");
        let e = parse_str(&text.replace(r#""timeDeltas":[10,10]"#, r#""timeDeltas":[10]"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: `samples` has 5 entries but `timeDeltas` has 4; they must match");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!([0, 999, 1000, 6484, 1_234_567].map(thousands), ["0", "999", "1,000", "6,484", "1,234,567"]);
    }
}
