//! Chrome trace events holding V8 CPU profiles: node's `--trace-event-categories
//! disabled-by-default-v8.cpu_profiler`, DevTools' Performance panel ("Save trace"), CDP
//! `Tracing`: `Profile` and `ProfileChunk` events, as V8's `CpuProfile::StreamPendingTraceEvents`
//! writes them.
//!
//! Both forms are read: `{"traceEvents":[…], …}` (other keys in any order, skipped, but for
//! `samples` and `stackFrames`: [`crate::trace_samples`]) and a bare array `[…]` (whose closing
//! `]` may be missing, as the trace-event format allows for files of a process that died). The
//! events are read one at a time by [`Scanner`]: each is captured, events that cannot be
//! profile events (no `Profile` in their bytes) are dropped unparsed (but for `thread_name`
//! metadata, and, until a profile event is seen, each event's phase: a trace of duration events
//! only is refused as such), and the rest are deserialized into typed, borrowed structs.
//!
//! Events are matched by name, whatever their category or phase (push-based/cpu-prof writes
//! `v8.cpu_profiler`), as DevTools, speedscope and Firefox Profiler match them. Chrome ≤ 66
//! wrote a thread's whole profile as one `CpuProfile` event (profile `PID:TID`). Nodes may name
//! their children (rspack) instead of, or as well as, their parent; nodes whose parent never
//! appears (a trace begun after the profile sent it) are dropped with their samples, and
//! chunks without `args.data` (Chrome 141) and profiles without nodes are skipped, all with a
//! warning. The default profile is the main thread's (tid = pid, or a main thread's
//! `thread_name`) with the most samples.
//!
//! A profile is a `Profile` event (`ph:"P"`, `args.data.startTime`) and the `ProfileChunk`
//! events with the same `(pid, id)`, concatenated in the order of their timestamps (`ts`), as
//! DevTools' trace engine sorts them: a trace's events may come in any order (viewers sort them
//! by `ts`), and each chunk's first time delta counts from the last sample of the chunk before
//! it in time. Chunks with equal (or no) `ts` keep their file order, as in DevTools' stable
//! sort; V8 never writes two chunks of one profile at the same microsecond. V8's nodes name
//! their parent instead of their children, and samples' lines (`lines`) become line hits. Time
//! is then attributed exactly as for a `.cpuprofile` (DevTools' rules, [`crate::timeline`]).

use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::ops::Range;

use cpuprof_model::{Profile, Setting, SourceFormat, Warning};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;

use crate::error::{thousands, Origin, ParseError, ParseErrorKind, Span};
use crate::json_scan::{describe, Number, Scanner};
use crate::timeline::Deltas;
use crate::trace_samples::LooseNode;
use crate::v8_tree::{
    number_ns, relative_span, strip_position, Leaves, LossyStr, NodeSpec, RawCallFrame, Source, Timing, Tree,
};
use crate::{Limits, ParseOptions};

/// Which profile event: `Profile`, `ProfileChunk`, or a whole profile (`CpuProfile`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Start,
    Chunk,
    Whole,
}

/// Parses the chosen CPU profile of the Chrome trace read from `reader`.
pub(crate) fn parse(
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let wanted = options.profile_id.as_deref().map(Wanted::parse);
    let mut s = Scanner::new(reader, origin, options.limits());
    s.skip_bom()?;
    let mut events = Events {
        profiles: Vec::new(),
        wanted,
        buf: Vec::new(),
        count: 0,
        limits: options.limits(),
        threads: FxHashMap::default(),
        durations_only: true,
        durations: 0,
        unclosed: false,
        sampled: None,
        frames: None,
    };
    match s.skip_ws()? {
        None => return Err(ParseErrorKind::Empty.at(origin, Span::None)),
        Some(b'[') => events.read_array(&mut s, true)?,
        Some(b'{') => {
            let mut seen = false;
            s.object("the trace object", |s, key, key_span| {
                // Trace-event sampled stacks (Hermes, React Native): read once the trace is.
                if key == "samples" || key == "stackFrames" {
                    let span = s.span();
                    let mut bytes = Vec::new();
                    s.value(if key == "samples" { "`samples`" } else { "`stackFrames`" }, Some(&mut bytes))?;
                    let slot = if key == "samples" { &mut events.sampled } else { &mut events.frames };
                    *slot = Some((bytes, span));
                    return Ok(());
                }
                if key != "traceEvents" {
                    return s.value("a value", None);
                }
                if seen {
                    return Err(ParseErrorKind::Invalid("`traceEvents` appears twice".into()).at(origin, key_span));
                }
                seen = true;
                events.read_array(s, false)
            })?;
            // Sampled stacks alone (`samples` + `stackFrames`, no events) are a trace too.
            if !seen && (events.sampled.is_none() || events.frames.is_none()) {
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
    /// Chrome 141 writes `ProfileChunk` events with `"args":{}`.
    #[serde(borrow, default)]
    args: Option<Args<'a>>,
}

#[derive(Deserialize)]
struct Args<'a> {
    #[serde(borrow, default)]
    data: Option<Data<'a>>,
}

/// A `thread_name` metadata event: `args.name`.
#[derive(Deserialize)]
struct ThreadNameEvent<'a> {
    #[serde(borrow, default)]
    args: Option<ThreadNameArgs<'a>>,
}

#[derive(Deserialize)]
struct ThreadNameArgs<'a> {
    #[serde(borrow, default)]
    name: Option<LossyStr<'a>>,
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

/// `args.data.cpuProfile`: a chunk's share of the profile, or (in a `CpuProfile` event) all of
/// it, with its times.
#[derive(Deserialize, Default)]
struct ChunkProfile<'a> {
    #[serde(borrow, default)]
    nodes: Vec<TraceNode<'a>>,
    #[serde(default)]
    samples: Vec<u64>,
    #[serde(rename = "startTime", default)]
    start_time: Option<Num>,
    #[serde(rename = "endTime", default)]
    end_time: Option<Num>,
    #[serde(rename = "timeDeltas", default)]
    time_deltas: Option<Vec<Num>>,
}

/// A node names its parent (V8's chunks), its children (rspack's chunks, `CpuProfile`
/// events), or both.
#[derive(Deserialize)]
struct TraceNode<'a> {
    id: u64,
    #[serde(rename = "callFrame", borrow)]
    call_frame: RawCallFrame<'a>,
    #[serde(default)]
    parent: Option<u64>,
    #[serde(default)]
    children: Vec<u64>,
}

/// A JSON number: µs in trace events (V8 writes integers).
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumVisitor;
        impl serde::de::Visitor<'_> for NumVisitor {
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
        deserializer.deserialize_any(NumVisitor)
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
    /// Nodes in its chunks (kept or not): a profile without any is empty.
    node_count: usize,
    /// Whether its events are kept (false for profiles other than the one asked for).
    keep: bool,
    nodes: Vec<LooseNode>,
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
    fn new(pid: String, id: String, span: Span, keep: bool) -> TraceProfile {
        TraceProfile {
            pid,
            id,
            tid: None,
            start_ns: None,
            ts_ns: None,
            span,
            sample_count: 0,
            node_count: 0,
            keep,
            nodes: Vec::new(),
            samples: Vec::new(),
            lines: Vec::new(),
            deltas: Deltas::default(),
            delta_sum_ns: 0,
            chunks: Vec::new(),
        }
    }

    fn key(&self) -> String {
        format!("{}:{}", self.pid, self.id)
    }

    /// Whether it sampled a main thread: the process's own thread (node), or one whose
    /// `thread_name` is a main thread's (Chrome's renderer main thread has its own tid).
    fn is_main_thread(&self, threads: &FxHashMap<(String, String), String>) -> bool {
        let Some(tid) = &self.tid else { return false };
        *tid == self.pid
            || threads.get(&(self.pid.clone(), tid.clone())).is_some_and(|name| MAIN_THREADS.contains(&name.as_str()))
    }

    /// Adds one chunk's nodes, samples, deltas and lines (an unchunked `CpuProfile` event is
    /// one chunk).
    #[allow(clippy::too_many_arguments)]
    fn add_chunk(
        &mut self,
        cpu_profile: ChunkProfile<'_>,
        time_deltas: Option<Vec<Num>>,
        lines: Option<Vec<i64>>,
        end_ns: Option<i64>,
        ts_ns: Option<i64>,
        span: Span,
        limits: &Limits,
    ) -> Result<(), ParseErrorKind> {
        self.sample_count += cpu_profile.samples.len();
        self.node_count += cpu_profile.nodes.len();
        if !self.keep {
            return Ok(());
        }
        let (nodes_start, samples_start) = (self.nodes.len(), self.samples.len());
        let (deltas_start, big_start) = (self.deltas.narrow.len(), self.deltas.big.len());
        for node in cpu_profile.nodes {
            let spec = NodeSpec {
                id: node.id,
                call_frame: node.call_frame.into_owned(),
                ticks: Vec::new(),
                deopt_reason: None,
            };
            self.nodes.push((spec, node.parent, node.children));
        }
        let lines = lines.unwrap_or_default();
        let n = cpu_profile.samples.len();
        self.lines.extend((0..n).map(|i| lines.get(i).and_then(|l| u32::try_from(*l).ok()).unwrap_or(0)));
        self.samples.extend(cpu_profile.samples);
        for delta in time_deltas.unwrap_or_default() {
            let ns = delta.ns("time delta")?;
            self.push_delta(ns);
        }
        self.chunks.push(Chunk {
            ts_ns,
            span,
            nodes: nodes_start..self.nodes.len(),
            samples: samples_start..self.samples.len(),
            deltas: deltas_start..self.deltas.narrow.len(),
            big: big_start..self.deltas.big.len(),
            end_ns,
        });
        if self.samples.len().max(self.deltas.len()) > limits.samples {
            return Err(ParseErrorKind::too_many("a CPU profile of the trace", limits.samples, "samples"));
        }
        if self.nodes.len() > limits.nodes {
            return Err(ParseErrorKind::too_many("a CPU profile of the trace", limits.nodes, "nodes"));
        }
        Ok(())
    }

    fn push_delta(&mut self, ns: i64) {
        self.delta_sum_ns = self.delta_sum_ns.saturating_add(ns);
        let narrow = Deltas::narrow_ns(ns).unwrap_or_else(|| {
            self.deltas.big.push(ns);
            Deltas::BIG
        });
        self.deltas.narrow.push(narrow);
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
    /// `thread_name` metadata: (pid, tid) → name.
    threads: FxHashMap<(String, String), String>,
    /// Whether every event so far was a duration (`B`, `E`, `X`) or metadata (`M`) event;
    /// checked only until a profile event or another kind of event is seen.
    durations_only: bool,
    /// Duration events seen while `durations_only` held.
    durations: usize,
    /// A bare array whose closing `]` was missing.
    unclosed: bool,
    /// The top-level `samples` and `stackFrames` (trace-event sampled stacks), as read.
    sampled: Option<(Vec<u8>, Span)>,
    frames: Option<(Vec<u8>, Span)>,
}

/// Thread names of main threads: Chrome's renderer and browser main threads, node's, and
/// React Native's JavaScript thread.
const MAIN_THREADS: &[&str] = &["CrRendererMain", "CrBrowserMain", "JavaScriptMainThread", "mqt_js"];

const MAX_PROFILES: usize = 1024;

impl Events {
    /// Reads the events array (the `[` is next). A bare array (`top_level`) may lack its `]`.
    fn read_array<R: Read + Send>(&mut self, s: &mut Scanner<'_, R>, top_level: bool) -> Result<(), ParseError> {
        const INSIDE: &str = "`traceEvents`";
        s.expect(b'[', INSIDE)?;
        loop {
            match s.skip_ws()? {
                None if top_level => {
                    self.unclosed = true;
                    return Ok(());
                }
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
                self.unclosed = true;
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
        let profile_event = memchr::memmem::find(bytes, b"Profile").is_some();
        let thread_event = !profile_event && memchr::memmem::find(bytes, b"thread_name").is_some();
        let check_kind = self.durations_only && self.profiles.is_empty();
        if !profile_event && !thread_event && !check_kind {
            return Ok(());
        }
        let json_error = |e: serde_json::Error, what: &str| {
            let at = relative_span(span, e.line() as u64, e.column() as u64);
            ParseErrorKind::Json(format!("in {what}: {}", strip_position(&e))).at(origin, at)
        };
        let head: Head<'_> = match serde_json::from_slice(bytes) {
            Ok(head) => head,
            Err(e) if profile_event => return Err(json_error(e, "a trace event")),
            Err(_) => {
                self.durations_only = false;
                return Ok(());
            }
        };
        let name = head.name.as_ref().map(|n| &*n.0);
        let ph = head.ph.as_ref().map(|p| &*p.0);
        if name == Some("thread_name") && ph == Some("M") {
            // A name that is not a string names no main thread: not worth refusing the trace.
            let event = serde_json::from_slice::<ThreadNameEvent<'_>>(bytes).ok();
            if let (Some(pid), Some(tid), Some(thread)) =
                (&head.pid, &head.tid, event.and_then(|e| e.args).and_then(|a| a.name))
            {
                self.threads.insert((pid.text(), tid.text()), thread.0.into_owned());
            }
        }
        // Matched by name, whatever their category or phase, as DevTools reads them.
        let kind = match name {
            Some("Profile") => Kind::Start,
            Some("ProfileChunk") => Kind::Chunk,
            Some("CpuProfile") => Kind::Whole,
            _ => {
                if check_kind {
                    match ph {
                        Some("B" | "E" | "X") => self.durations += 1,
                        Some("M") => {}
                        _ => self.durations_only = false,
                    }
                }
                return Ok(());
            }
        };
        let what = match kind {
            Kind::Start => "a `Profile` event",
            Kind::Chunk => "a `ProfileChunk` event",
            Kind::Whole => "a `CpuProfile` event",
        };
        // A `CpuProfile` event (Chrome 66 and older) holds a thread's whole profile: no id.
        let id = if kind == Kind::Whole { &head.tid } else { &head.id };
        let (Some(pid), Some(id)) = (&head.pid, id) else {
            let ids = if kind == Kind::Whole { "`pid` or `tid`" } else { "`pid` or `id`" };
            return Err(ParseErrorKind::Invalid(format!("{what} without {ids}").into()).at(origin, span));
        };
        let (pid, id) = (pid.text(), id.text());
        let position = if let Some(p) = self.profiles.iter().position(|p| p.pid == pid && p.id == id) {
            p
        } else {
            if self.profiles.len() == MAX_PROFILES {
                return Err(ParseErrorKind::too_many("the trace", MAX_PROFILES, "CPU profiles").at(origin, span));
            }
            let keep = self.wanted.as_ref().is_none_or(|w| w.matches(&pid, &id));
            self.profiles.push(TraceProfile::new(pid, id, span, keep));
            self.profiles.len() - 1
        };
        let tid = head.tid.as_ref().map(Id::text);
        let event: ProfileEvent<'_> = serde_json::from_slice(bytes).map_err(|e| json_error(e, what))?;
        let data = event.args.and_then(|a| a.data);
        let profile = &mut self.profiles[position];
        let at = |kind: ParseErrorKind| kind.at(origin, span);
        let ts_ns = event.ts.map(|ts| ts.ns("time")).transpose().map_err(at)?;
        let limits = &self.limits;
        match kind {
            Kind::Start => {
                if profile.tid.is_some() {
                    return Err(at(ParseErrorKind::Invalid(
                        format!("a second `Profile` event for profile {}", profile.key()).into(),
                    )));
                }
                profile.tid = Some(tid.unwrap_or_default());
                profile.ts_ns = ts_ns;
                profile.span = span;
                let start = data.and_then(|d| d.start_time).ok_or_else(|| {
                    at(ParseErrorKind::Invalid("a `Profile` event without `args.data.startTime`".into()))
                })?;
                profile.start_ns = Some(start.ns("time").map_err(at)?);
                Ok(())
            }
            // A chunk without `args.data` (Chrome 141) holds nothing.
            Kind::Chunk => {
                let Some(data) = data else { return Ok(()) };
                let cpu_profile = data.cpu_profile.unwrap_or_default();
                let end_ns = data.end_time.map(|end| end.ns("time")).transpose().map_err(at)?;
                profile.add_chunk(cpu_profile, data.time_deltas, data.lines, end_ns, ts_ns, span, limits).map_err(at)
            }
            Kind::Whole => {
                if profile.tid.is_some() {
                    return Err(at(ParseErrorKind::Invalid(
                        format!("a second `CpuProfile` event for thread {}", profile.key()).into(),
                    )));
                }
                let missing =
                    || at(ParseErrorKind::Invalid("a `CpuProfile` event without `args.data.cpuProfile`".into()));
                let data = data.ok_or_else(missing)?;
                let cpu_profile = data.cpu_profile.ok_or_else(missing)?;
                let start = cpu_profile.start_time.ok_or_else(|| {
                    at(ParseErrorKind::Invalid("a `CpuProfile` event without `cpuProfile.startTime`".into()))
                })?;
                profile.tid = tid;
                profile.ts_ns = ts_ns;
                profile.span = span;
                profile.start_ns = Some(start.ns("time").map_err(at)?);
                let end_ns = cpu_profile.end_time.map(|end| end.ns("time")).transpose().map_err(at)?;
                let mut cpu_profile = cpu_profile;
                let deltas = cpu_profile.time_deltas.take().or(data.time_deltas);
                profile.add_chunk(cpu_profile, deltas, data.lines, end_ns, ts_ns, span, limits).map_err(at)
            }
        }
    }

    fn finish(self, origin: &Origin, options: &ParseOptions) -> Result<Profile, ParseError> {
        let Events {
            mut profiles, wanted, threads, durations_only, durations, unclosed, sampled, frames, limits, ..
        } = self;
        let mut warnings = Vec::new();
        if let (Some((samples, samples_span)), Some((frames, frames_span))) = (sampled, frames) {
            let threads = crate::trace_samples::read(
                &samples,
                samples_span,
                &frames,
                frames_span,
                origin,
                &limits,
                profiles.len(),
                MAX_PROFILES,
            )?;
            for t in threads {
                if profiles.len() == MAX_PROFILES {
                    return Err(ParseErrorKind::too_many("the trace", MAX_PROFILES, "CPU profiles").at(origin, t.span));
                }
                warnings.extend(t.warnings.iter().map(|w| Warning::new(format!("thread {}:{}: {w}", t.pid, t.tid))));
                let keep = wanted.as_ref().is_none_or(|w| w.matches(&t.pid, &t.tid));
                let mut p = TraceProfile::new(t.pid, t.tid.clone(), t.span, keep);
                p.tid = Some(t.tid);
                p.start_ns = Some(t.start_ns);
                p.ts_ns = Some(t.start_ns);
                p.sample_count = t.samples.len();
                p.node_count = t.nodes.len();
                p.nodes = t.nodes;
                p.lines = vec![0; t.samples.len()];
                p.samples = t.samples;
                for ns in t.deltas_ns {
                    p.push_delta(ns);
                }
                p.chunks.push(Chunk {
                    ts_ns: None,
                    span: t.span,
                    nodes: 0..p.nodes.len(),
                    samples: 0..p.samples.len(),
                    deltas: 0..p.deltas.narrow.len(),
                    big: 0..p.deltas.big.len(),
                    end_ns: None,
                });
                profiles.push(p);
            }
        }
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
            let message = match (durations_only && durations > 0, unclosed) {
                (true, false) => {
                    "no CPU profile in this trace: it holds only duration events (`B`/`E`/`X`), which time \
                     instrumented code, not CPU samples (those need the disabled-by-default-v8.cpu_profiler category)"
                }
                (true, true) => {
                    "no CPU profile in this trace: it holds only duration events (`B`/`E`/`X`), which time \
                     instrumented code, not CPU samples; its JSON array is cut short, as the trace-event format allows"
                }
                _ => "no CPU profile in this trace: record with the disabled-by-default-v8.cpu_profiler category",
            };
            return Err(ParseErrorKind::Unsupported(message).at(origin, Span::None));
        }
        // Profiles whose chunks hold no nodes (Chrome 141 writes `"args":{}` chunks): nothing to read.
        let (empty, nonempty): (Vec<TraceProfile>, Vec<TraceProfile>) =
            profiles.into_iter().partition(|p| p.node_count == 0 && p.sample_count == 0);
        let mut profiles = nonempty;
        if !empty.is_empty() {
            let keys = empty.iter().map(TraceProfile::key).collect::<Vec<_>>().join(", ");
            let (them, are) = if empty.len() == 1 { ("profile", "is") } else { ("profiles", "are") };
            let what = format!("CPU {them} {keys} of this trace {are} empty: no nodes or samples");
            if profiles.is_empty() || (empty.iter().any(|p| p.keep) && !profiles.iter().any(|p| p.keep)) {
                return Err(ParseErrorKind::Invalid(what.into()).at(origin, Span::None));
            }
            warnings.push(Warning::new(format!("{what}; skipped")));
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
            let mains: Vec<usize> = (0..count).filter(|i| profiles[*i].is_main_thread(&threads)).collect();
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

/// A node with its parent, once linked.
type LinkedNode = (NodeSpec<'static>, Option<u64>);

/// Links nodes given by parent, by children, or both: each node's parent is the one it names
/// or the one that lists it as a child (the two must agree). Nodes whose parent never appears
/// (a trace that began after the profile sent them), and their descendants, are dropped:
/// returns the rest, with their parents, and the ids dropped.
fn link(nodes: Vec<LooseNode>, origin: &Origin, span: Span) -> Result<(Vec<LinkedNode>, FxHashSet<u64>), ParseError> {
    let n = nodes.len();
    let mut index: FxHashMap<u64, usize> = FxHashMap::default();
    index.reserve(n);
    for (i, (spec, ..)) in nodes.iter().enumerate() {
        // Duplicates are reported by the tree.
        index.entry(spec.id).or_insert(i);
    }
    let mut parents: Vec<Option<u64>> = nodes.iter().map(|(_, parent, _)| *parent).collect();
    if nodes.iter().any(|(.., children)| !children.is_empty()) {
        let mut listed: Vec<Option<u64>> = vec![None; n];
        for (i, (spec, _, children)) in nodes.iter().enumerate() {
            for child in children {
                // A child that is not a node of the profile lists nothing to read.
                let Some(&c) = index.get(child) else { continue };
                if c == i {
                    return Err(ParseErrorKind::Cycle { id: spec.id }.at(origin, span));
                }
                match listed[c] {
                    Some(first) if first != spec.id => {
                        return Err(
                            ParseErrorKind::TwoParents { child: *child, first, second: spec.id }.at(origin, span)
                        )
                    }
                    _ => listed[c] = Some(spec.id),
                }
            }
        }
        for (c, (parent, listed)) in parents.iter_mut().zip(listed).enumerate() {
            match (*parent, listed) {
                (Some(named), Some(by_children)) if named != by_children => {
                    return Err(ParseErrorKind::TwoParents { child: nodes[c].0.id, first: named, second: by_children }
                        .at(origin, span))
                }
                (None, Some(by_children)) => *parent = Some(by_children),
                _ => {}
            }
        }
    }
    // Which nodes reach a root: 0 not known yet, 1 yes, 2 no (dropped), 3 on the path walked.
    let mut state = vec![0u8; n];
    let mut path = Vec::new();
    for start in 0..n {
        let mut i = start;
        let reached = loop {
            match state[i] {
                1 | 3 => break 1, // 3: a cycle, which the tree reports
                2 => break 2,
                _ => {}
            }
            state[i] = 3;
            path.push(i);
            match parents[i] {
                None => break 1,
                Some(parent) => match index.get(&parent) {
                    Some(&p) => i = p,
                    None => break 2,
                },
            }
        };
        for j in path.drain(..) {
            state[j] = reached;
        }
    }
    let mut dropped = FxHashSet::default();
    let mut kept = Vec::with_capacity(n);
    for (((spec, ..), parent), state) in nodes.into_iter().zip(parents).zip(state) {
        if state == 2 {
            dropped.insert(spec.id);
        } else {
            kept.push((spec, parent));
        }
    }
    Ok((kept, dropped))
}

/// Drops the samples on `dropped` nodes, or on nodes not in `tree`, each sample's time delta
/// going to the next sample kept (the others keep their times). Returns how many were dropped.
/// Leaves the columns alone when samples and deltas differ in length (an error later).
fn drop_samples(p: &mut TraceProfile, tree: &Tree, dropped: &FxHashSet<u64>) -> usize {
    if p.samples.len() != p.deltas.len() {
        return 0;
    }
    let mut big = p.deltas.big.iter();
    let deltas: Vec<i64> = p
        .deltas
        .narrow
        .iter()
        .map(|&d| if d == Deltas::BIG { big.next().copied().unwrap_or(0) } else { i64::from(d) * 1000 })
        .collect();
    let (mut samples, mut lines) = (Vec::with_capacity(p.samples.len()), Vec::with_capacity(p.samples.len()));
    let mut kept_deltas = Deltas::default();
    let mut carry = 0i64;
    for ((&id, &line), delta) in p.samples.iter().zip(&p.lines).zip(deltas) {
        if dropped.contains(&id) || tree.position(id).is_none() {
            carry = carry.saturating_add(delta);
            continue;
        }
        let ns = delta.saturating_add(std::mem::take(&mut carry));
        kept_deltas.narrow.push(Deltas::narrow_ns(ns).unwrap_or_else(|| {
            kept_deltas.big.push(ns);
            Deltas::BIG
        }));
        samples.push(id);
        lines.push(line);
    }
    let count = p.samples.len() - samples.len();
    (p.samples, p.lines, p.deltas) = (samples, lines, kept_deltas);
    count
}

/// The profile from one trace profile's events.
fn build(
    p: TraceProfile,
    warnings: Vec<Warning>,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let mut warnings = warnings;
    let mut p = p.in_time_order();
    let span = p.chunks.first().map_or(p.span, |c| c.span);
    let (nodes, dropped) = link(std::mem::take(&mut p.nodes), origin, span)?;
    let mut tree = Tree::from_parents(nodes, origin, span)?;
    if !dropped.is_empty() {
        let samples = drop_samples(&mut p, &tree, &dropped);
        let nodes =
            if dropped.len() == 1 { "1 node".to_owned() } else { format!("{} nodes", thousands(dropped.len())) };
        warnings.push(Warning::new(format!(
            "dropped {nodes} of CPU profile {} whose parent never appears in the trace (the profile began before \
             the trace did), and the {} samples on them or on other missing nodes",
            p.key(),
            thousands(samples)
        )));
    }
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
    leaves.build(&tree, timing, &source, origin, options)
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
                r#"[{"ph":"X","name":"RunTask"},{"ph":"I","name":"Mark"}]"#,
                "t.json: no CPU profile in this trace: record with the disabled-by-default-v8.cpu_profiler category",
            ),
            (
                r#"[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},{"ph":"B","name":"a"},
                {"ph":"X","name":"b","dur":1},{"ph":"E","name":"a"}]"#,
                "t.json: no CPU profile in this trace: it holds only duration events (`B`/`E`/`X`), which time \
                 instrumented code, not CPU samples (those need the disabled-by-default-v8.cpu_profiler category)",
            ),
            (
                "[{\"ph\":\"B\",\"name\":\"a\"},\n{\"ph\":\"E\",\"name\":\"a\"},\n",
                "t.json: no CPU profile in this trace: it holds only duration events (`B`/`E`/`X`), which time \
                 instrumented code, not CPU samples; its JSON array is cut short, as the trace-event format allows",
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
        let e = parse_str(&text.replace(r#""id":4,"parent":3"#, r#""id":4,"parent":4"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: the call tree has a cycle through node 4");
        let e = parse_str(&text.replace(r#""id":4,"parent":3"#, r#""id":3,"parent":1"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: duplicate node id 3 (nodes[2] and nodes[3])");
        let e = parse_str(&text.replace(r#""timeDeltas":[10,10]"#, r#""timeDeltas":[10]"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: `samples` has 5 entries but `timeDeltas` has 4; they must match");
    }

    /// (root-to-leaf path without `(root)`, samples, ns) per stack with samples, sorted.
    fn paths(p: &Profile) -> Vec<(String, i64, i64)> {
        let mut out: Vec<_> = (0..p.samples.len())
            .map(|i| {
                let stack = p.samples.stacks()[i];
                let mut names: Vec<&str> =
                    p.stacks.walk(stack).map(|f| p.strings.get(p.funcs[p.frames[f].func].name)).collect();
                names.reverse();
                names.retain(|n| *n != "(root)");
                (names.join(";"), p.samples.values(0)[i], p.samples.values(1)[i])
            })
            .collect();
        out.sort();
        out
    }

    fn frame(name: &str) -> String {
        format!(r#"{{"functionName":"{name}","url":"/a.js","scriptId":3,"lineNumber":1,"columnNumber":0}}"#)
    }

    /// One profile whose single chunk holds `nodes`, samples [4,4,3,2] 10 µs apart.
    fn one_chunk(nodes: &[String]) -> String {
        format!(
            r#"[{{"pid":1,"tid":1,"ts":1,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"Profile","id":"0x1","args":{{"data":{{"startTime":0}}}}}},
{{"pid":1,"tid":2,"ts":2,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"ProfileChunk","id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[{}],
  "samples":[4,4,3,2]}},"timeDeltas":[10,10,10,10]}}}}}}]"#,
            nodes.join(",\n")
        )
    }

    #[test]
    fn nodes_may_name_their_children_their_parent_or_both() {
        let root = |children: &str| {
            format!(r#"{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":0}},"children":[{children}]}}"#)
        };
        let node = |id: u32, name: &str, links: &str| format!(r#"{{"id":{id},"callFrame":{},{links}}}"#, frame(name));
        // a → c, b; c twice, b once, a once; 10 µs each (the last sample: the mean interval).
        let expected = vec![("a".to_owned(), 1, 10_000), ("a;c".to_owned(), 2, 20_000), ("b".to_owned(), 1, 10_000)];
        let children = one_chunk(&[
            root("2,3"),
            node(2, "a", r#""hitCount":1,"children":[4]"#),
            node(3, "b", r#""hitCount":1"#),
            node(4, "c", r#""children":[]"#),
        ]);
        let parents = one_chunk(&[
            root(""),
            node(2, "a", r#""parent":1"#),
            node(3, "b", r#""parent":1"#),
            node(4, "c", r#""parent":2"#),
        ]);
        let mixed = one_chunk(&[
            root("2"),
            node(2, "a", r#""parent":1,"children":[4,99]"#),
            node(3, "b", r#""parent":1"#),
            node(4, "c", r#""parent":2"#),
        ]);
        for text in [&children, &parents, &mixed] {
            let p = parse_str(text).unwrap();
            assert_eq!(paths(&p), expected, "{text}");
            assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
        }
        // Children listed in one chunk, the nodes sent in the next.
        let split = format!(
            r#"[{{"pid":1,"tid":1,"ts":1,"ph":"P","name":"Profile","id":"0x1","args":{{"data":{{"startTime":0}}}}}},
{{"pid":1,"tid":2,"ts":2,"ph":"P","name":"ProfileChunk","id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[{},{}]}}}}}}}},
{{"pid":1,"tid":2,"ts":3,"ph":"P","name":"ProfileChunk","id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[{},{}],
  "samples":[4,4,3,2]}},"timeDeltas":[10,10,10,10]}}}}}}]"#,
            root("2,3"),
            node(2, "a", r#""children":[4]"#),
            node(3, "b", r#""hitCount":1"#),
            node(4, "c", r#""hitCount":2"#),
        );
        assert_eq!(paths(&parse_str(&split).unwrap()), expected, "{split}");
        let conflict = one_chunk(&[
            root("2,3"),
            node(2, "a", r#""children":[4]"#),
            node(3, "b", r#""parent":1"#),
            node(4, "c", r#""parent":3"#),
        ]);
        assert_eq!(
            parse_str(&conflict).unwrap_err().to_string(),
            "t.json:2:1: node 4 is a child of both node 3 and node 2"
        );
    }

    #[test]
    fn profile_events_are_matched_by_name_whatever_their_category() {
        let text = two_chunks();
        let expected = rows(&parse_str(&text).unwrap());
        let pushed = text.replace("disabled-by-default-v8.cpu_profiler", "v8.cpu_profiler");
        assert_eq!(rows(&parse_str(&pushed).unwrap()), expected);
        let uncategorized = text.replace(r#""cat":"disabled-by-default-v8.cpu_profiler","#, "");
        assert_eq!(rows(&parse_str(&uncategorized).unwrap()), expected);
    }

    #[test]
    fn empty_chunks_are_skipped_and_empty_profiles_named() {
        let text = two_chunks();
        let expected = rows(&parse_str(&text).unwrap());
        let extra = r#"{"pid":7,"tid":9,"ts":7,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"ProfileChunk","id":"0x1","args":{}},
{"pid":7,"tid":7,"ts":2,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"Profile","id":"0x2","args":{"data":{"startTime":5}}},
{"pid":7,"tid":9,"ts":3,"ph":"P","cat":"disabled-by-default-v8.cpu_profiler","name":"ProfileChunk","id":"0x2","args":{}},
{"pid":7,"tid":9,"ts":9,"ph":"P","name":"ProfileChunk","id":"0x1","args":{"data":{"endTime":200}}}"#;
        let with = text.replace(
            r#"{"pid":7,"tid":7,"ts":9,"ph":"P","name":"ProfileChunk","id":"0x1","args":{"data":{"endTime":200}}}"#,
            extra,
        );
        assert_ne!(with, text);
        let p = parse_str(&with).unwrap();
        assert_eq!(rows(&p), expected);
        assert_eq!(
            p.meta.warnings,
            vec![Warning::new("CPU profile 7:0x2 of this trace is empty: no nodes or samples; skipped")]
        );
        let e = parse_with(&with, Some("0x2")).unwrap_err().to_string();
        assert_eq!(e, "t.json: CPU profile 7:0x2 of this trace is empty: no nodes or samples");
        let lines: Vec<&str> = extra.lines().map(|l| l.trim_end_matches(',')).collect();
        let only_empty = format!("[{},\n{}]", lines[1], lines[2]);
        let e = parse_str(&only_empty).unwrap_err().to_string();
        assert_eq!(e, "t.json: CPU profile 7:0x2 of this trace is empty: no nodes or samples");
    }

    #[test]
    fn nodes_whose_parent_never_appears_are_dropped_with_their_samples() {
        // Chunk 1: (root) and (program); chunk 2: nodes 10 → 11 under node 9, never sent, and a
        // sample on node 12, never sent either.
        let text = format!(
            r#"[{{"pid":7,"tid":7,"ts":1,"ph":"P","name":"Profile","id":"0x1","args":{{"data":{{"startTime":0}}}}}},
{{"pid":7,"tid":8,"ts":2,"ph":"P","name":"ProfileChunk","id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[{ROOT},
  {{"callFrame":{{"functionName":"(program)","scriptId":0}},"id":2,"parent":1}}],"samples":[2,2]}},"timeDeltas":[10,10]}}}}}},
{{"pid":7,"tid":8,"ts":3,"ph":"P","name":"ProfileChunk","id":"0x1","args":{{"data":{{"cpuProfile":{{"nodes":[
  {{"callFrame":{},"id":10,"parent":9}},{{"callFrame":{},"id":11,"parent":10}}],
  "samples":[11,2,10,12,2]}},"timeDeltas":[10,10,10,10,10]}}}}}},
{{"pid":7,"tid":7,"ts":4,"ph":"P","name":"ProfileChunk","id":"0x1","args":{{"data":{{"endTime":80}}}}}}]"#,
            frame("f"),
            frame("g")
        );
        let p = parse_str(&text).unwrap();
        // Samples kept at 10, 20, 40 and 70 µs: 10, 20 and 30 µs, the last the mean, 20 µs.
        assert_eq!(paths(&p), vec![("(program)".to_owned(), 4, 80_000)]);
        assert_eq!(
            p.meta.warnings,
            vec![Warning::new(
                "dropped 2 nodes of CPU profile 7:0x1 whose parent never appears in the trace (the profile began \
                 before the trace did), and the 3 samples on them or on other missing nodes"
            )]
        );
        assert_eq!(p.meta.duration_ns, Some(80_000));
        // Without dropped nodes, a sample on an unknown node stays an error.
        let e = parse_str(&text.replace(r#""parent":9"#, r#""parent":2"#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:4:1: sample 5 refers to unknown node id 12");
    }

    #[test]
    fn a_cpu_profile_event_holds_a_whole_profile_and_thread_names_tell_the_main_thread() {
        let whole = |tid: u32, name: &str, samples: &str| {
            format!(
                r#"{{"pid":5,"tid":{tid},"ts":{tid},"ph":"I","cat":"disabled-by-default-devtools.timeline","name":"CpuProfile","args":{{"data":{{"cpuProfile":{{
  "nodes":[{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":0,"url":"","lineNumber":-1,"columnNumber":-1}},"hitCount":0,"children":[2]}},
           {{"id":2,"callFrame":{},"hitCount":3}}],
  "startTime":1000,"endTime":1040,"samples":[{samples}],"timeDeltas":[{deltas}]}}}}}}}}"#,
                frame(name),
                deltas = samples.split(',').map(|_| "10").collect::<Vec<_>>().join(",")
            )
        };
        let text = format!(
            r#"{{"traceEvents":[{{"pid":5,"tid":6,"ts":0,"ph":"M","cat":"__metadata","name":"thread_name","args":{{"name":"CrRendererMain"}}}},
{},
{}]}}"#,
            whole(6, "f", "2,2,2"),
            whole(7, "g", "2,2,2,2")
        );
        let p = parse_str(&text).unwrap();
        assert_eq!(paths(&p), vec![("f".to_owned(), 3, 30_000)]);
        assert_eq!(
            p.meta.warnings,
            vec![Warning::with_setting(
                "trace holds 2 CPU profiles (5:6 with 3 samples, 5:7 with 4); read 5:6 (main thread)",
                Setting::ProfileId
            )]
        );
        assert_eq!((p.meta.start_ns, p.meta.duration_ns), (Some(1_000_000), Some(40_000)));
        let p = parse_with(&text, Some("5:7")).unwrap();
        assert_eq!(paths(&p), vec![("g".to_owned(), 4, 40_000)]);
        // A thread name that is not a string is no name (and no reason to refuse the trace).
        let odd = text.replace(
            r#"{"traceEvents":["#,
            r#"{"traceEvents":[{"pid":5,"tid":7,"ph":"M","name":"thread_name","args":{"name":5}},"#,
        );
        assert_ne!(odd, text);
        assert_eq!(paths(&parse_str(&odd).unwrap()), vec![("f".to_owned(), 3, 30_000)]);
        // Without the thread name, the profile with more samples.
        let p = parse_str(&text.replace("CrRendererMain", "Compositor")).unwrap();
        assert_eq!(paths(&p), vec![("g".to_owned(), 4, 40_000)]);
        assert!(p.meta.warnings[0].message.ends_with("(most samples; no profile is of a main thread)"));
    }

    #[test]
    fn sampled_stacks_with_stack_frames() {
        let text = r#"{"traceEvents":[{"name":"thread_name","ph":"M","pid":3,"tid":"4","args":{"name":"mqt_js"}}],
"samples":[{"ts":"1000","pid":3,"tid":"4","weight":"1","sf":2},{"ts":"1010","pid":3,"tid":"4","sf":3},
  {"ts":"1030","pid":3,"tid":"4","sf":"3"},{"ts":"1040","pid":3,"tid":"5","sf":9},{"ts":1005,"pid":3,"tid":"4","sf":1}],
"stackFrames":{"1":{"name":"[root]","category":"root"},"2":{"name":"a","category":"JavaScript","parent":1},
  "3":{"name":"b","category":"JavaScript","parent":"2"},"7":{"name":"unused","parent":1}}}"#;
        let p = parse_str(text).unwrap();
        // In time order: a at 1000, [root] at 1005, b at 1010 and 1030 µs.
        assert_eq!(
            paths(&p),
            vec![
                ("[root]".to_owned(), 1, 5_000),
                ("[root];a".to_owned(), 1, 5_000),
                ("[root];a;b".to_owned(), 2, 30_000)
            ]
        );
        let kinds: Vec<FuncKind> = p.funcs.as_slice().iter().map(|f| f.kind).collect();
        assert_eq!(kinds, vec![FuncKind::Native, FuncKind::Js, FuncKind::Js]);
        assert_eq!(
            p.meta.warnings,
            vec![
                Warning::new("thread 3:5: skipped 1 sample without a known stack frame (`sf`)"),
                Warning::new("CPU profile 3:5 of this trace is empty: no nodes or samples; skipped"),
            ]
        );
        let e = parse_str(&text.replace(r#""ts":"1010""#, r#""ts":"soon""#)).unwrap_err().to_string();
        assert_eq!(e, "t.json:2:11: `samples[1]` has no time (`ts`, µs)");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!([0, 999, 1000, 6484, 1_234_567].map(thousands), ["0", "999", "1,000", "6,484", "1,234,567"]);
    }
}
