//! V8 `.cpuprofile` JSON: `node --cpu-prof`, the inspector's `Profiler.stop`, DevTools
//! "Save profile": the DevTools protocol's `Profiler.Profile`. `fixtures/oracle/SPEC.md` says how
//! time is attributed, `fixtures/edge/` holds the unusual shapes real files rarely have.
//!
//! The top level is read by [`Scanner`]: `nodes` is captured and deserialized into typed,
//! borrowed structs; `samples` and `timeDeltas` (nearly all the bytes) are read by the
//! scanner's integer loop straight into compact columns. Time is attributed as Chrome
//! DevTools does (see [`crate::timeline`]).

use std::io::Read;

use cpuprof_model::{Profile, SourceFormat, Warning};

use crate::error::{Origin, ParseError, ParseErrorKind, Span};
use crate::json_scan::{describe, Number, Scanner};
use crate::sample_ids::{node_id, ScannedIds};
use crate::timeline::Deltas;
use crate::v8_legacy::{self, LegacyTree};
use crate::v8_tree::{number_ns, Leaves, Source, Timing, Tree};
use crate::{Limits, ParseOptions};

/// Parses a `.cpuprofile` read from `reader`.
pub(crate) fn parse(reader: impl Read + Send, origin: &Origin, options: &ParseOptions) -> Result<Profile, ParseError> {
    let mut scanner = Scanner::new(reader, origin, options.limits());
    scanner.skip_bom()?;
    let mut doc = Document::default();
    match scanner.skip_ws()? {
        None => return Err(ParseErrorKind::Empty.at(origin, Span::None)),
        Some(b'{') => {}
        Some(b'[') => {
            return Err(scanner.error(ParseErrorKind::OtherFormat {
                message: "this is a JSON array (a Chrome trace?), not a .cpuprofile",
                likely: SourceFormat::Trace,
            }))
        }
        Some(b) => {
            return Err(scanner.error(ParseErrorKind::UnknownFormat(format!(
                "expected a .cpuprofile JSON object, found {}",
                describe(b)
            ))))
        }
    }
    let read = scanner.object("the profile object", |scanner, key, key_span| doc.field(key, key_span, scanner));
    if read.is_err() {
        // An error in `nodes`, which comes before, is the one to report.
        doc.build_tree(origin, scanner.limits())?;
    }
    read?;
    if !scanner.at_end()? {
        return Err(scanner.error(ParseErrorKind::Json("unexpected data after the profile object".to_owned())));
    }
    doc.input_bytes = scanner.offset();
    doc.build_tree(origin, scanner.limits())?;
    doc.finish(origin, options)
}

/// What the top level has given so far.
#[derive(Default)]
struct Document {
    tree: Option<Tree>,
    /// `nodes` as read and where it starts, until its tree is built: while `samples` is read,
    /// when they follow (see [`Document::read_samples`]).
    nodes: Option<(Vec<u8>, Span)>,
    /// Sample leaves as node positions, once `nodes` has been read.
    samples: Option<Leaves>,
    /// Raw sample ids, when `samples` came before `nodes`.
    pending_ids: Option<(Vec<u64>, Span)>,
    deltas: Option<(Deltas, Span)>,
    start_us: Option<Number>,
    end_us: Option<Number>,
    traces: bool,
    /// Legacy files: the `head` tree and the absolute `timestamps` (ns).
    head: Option<LegacyTree>,
    timestamps: Option<(Vec<i64>, Span)>,
    /// The size of the input (decompressed), which bounds what hit counts may make.
    input_bytes: u64,
    /// Keys that tell other JSON profiles apart (see [`Foreign`]).
    foreign: Foreign,
}

/// Top-level keys of JSON profiles that are not V8 CPU profiles, to say what a file is:
/// `meta` and `threads` (the Gecko format: Firefox, the Firefox Profiler), `profile` and
/// `configuration` (Firefox DevTools' old performance recording), and `speedscope` for a
/// `$schema` or `exporter` naming speedscope.
#[derive(Default)]
struct Foreign {
    seen: Vec<&'static str>,
}

impl Foreign {
    fn message(&self) -> Option<&'static str> {
        let seen = |key: &str| self.seen.contains(&key);
        if seen("speedscope") {
            Some(
                "this is speedscope's own JSON format (`$schema`: speedscope), which cpuprof does not read; give \
                 cpuprof the profile it was made from (a .cpuprofile, Chrome trace, pprof, tick log or folded stacks)",
            )
        } else if seen("meta") && seen("threads") {
            Some(
                "this is a Firefox Profiler (Gecko) profile, which cpuprof does not read; open it in \
                 profiler.firefox.com, or record the program as a V8 CPU profile (`node --cpu-prof`)",
            )
        } else if seen("profile") && seen("configuration") {
            Some(
                "this is a Firefox DevTools performance recording, which cpuprof does not read; open it in \
                 profiler.firefox.com, or record the program as a V8 CPU profile (`node --cpu-prof`)",
            )
        } else {
            None
        }
    }
}

impl Document {
    fn field<R: Read + Send>(&mut self, key: &str, key_span: Span, s: &mut Scanner<'_, R>) -> Result<(), ParseError> {
        // `nodes` waits for `samples`; only the times (V8 writes them in between) may come first.
        if !matches!(key, "samples" | "startTime" | "endTime") {
            self.build_tree(s.origin(), s.limits())?;
        }
        let read = self.value(key, key_span, s);
        if read.is_err() {
            // An error in `nodes`, which comes before, is the one to report.
            self.build_tree(s.origin(), s.limits())?;
        }
        read
    }

    /// Builds the tree of `nodes` read earlier, if it is waiting.
    fn build_tree(&mut self, origin: &Origin, limits: Limits) -> Result<(), ParseError> {
        if let Some((raw, span)) = self.nodes.take() {
            self.tree = Some(Tree::build(&raw, span, origin, limits.nodes, 0)?);
        }
        Ok(())
    }

    /// Reads `samples`, `nodes` having come first, as positions in its tree. A tree still to be
    /// built is built meanwhile on the other thread, the samples read by the node ids a quick
    /// scan of `nodes` finds (see [`ScannedIds`]).
    fn read_samples<R: Read + Send>(&mut self, s: &mut Scanner<'_, R>, span: Span) -> Result<Leaves, ParseError> {
        let (origin, limits) = (s.origin(), s.limits());
        let pending = self.nodes.take();
        let scanned = match (&self.tree, &pending) {
            (Some(tree), _) => ScannedIds::of_tree(tree),
            (None, Some((raw, _))) => ScannedIds::scan(raw),
            (None, None) => ScannedIds::scan(b"[]"),
        };
        let (built, samples) = rayon::join(
            || pending.as_ref().map(|(raw, at)| Tree::build(raw, *at, origin, limits.nodes, scanned.len())).transpose(),
            || scanned.read_samples(s),
        );
        if let Some(tree) = built? {
            self.tree = Some(tree);
        }
        let samples = samples?;
        let Some(tree) = &self.tree else {
            return Err(ParseErrorKind::Missing { key: "nodes", what: "V8 .cpuprofile" }.at(origin, Span::None));
        };
        samples
            .positions(&scanned, tree)
            .map_err(|(index, id, at)| ParseErrorKind::UnknownNode { index, id }.at(origin, at.unwrap_or(span)))
    }

    /// Reads the value of `key`.
    fn value<R: Read + Send>(&mut self, key: &str, key_span: Span, s: &mut Scanner<'_, R>) -> Result<(), ParseError> {
        let seen = match key {
            "nodes" => self.tree.is_some() || self.nodes.is_some(),
            "samples" => self.samples.is_some() || self.pending_ids.is_some(),
            "timeDeltas" => self.deltas.is_some(),
            "head" => self.head.is_some(),
            "timestamps" => self.timestamps.is_some(),
            _ => false,
        };
        if seen {
            return Err(ParseErrorKind::Invalid(format!("`{key}` appears twice").into()).at(s.origin(), key_span));
        }
        match key {
            "nodes" => {
                s.skip_ws()?;
                let span = s.span();
                let mut raw = Vec::new();
                s.value("`nodes`", Some(&mut raw))?;
                self.nodes = Some((raw, span));
            }
            "samples" => {
                s.skip_ws()?;
                let span = s.span();
                // Usually `nodes` came first.
                if self.tree.is_some() || self.nodes.is_some() {
                    self.samples = Some(self.read_samples(s, span)?);
                } else {
                    let mut ids = Vec::new();
                    s.number_array(
                        "`samples`",
                        &mut ids,
                        |id| u64::try_from(id).ok(),
                        |_, number, _, out| {
                            out.push(node_id(number)?);
                            Ok(())
                        },
                    )?;
                    self.pending_ids = Some((ids, span));
                }
            }
            "timeDeltas" => {
                s.skip_ws()?;
                let span = s.span();
                // The samples, already read, bound what is worth reserving.
                let mut narrow = Vec::with_capacity(self.samples.as_ref().map_or(0, Leaves::len));
                let mut big = Vec::new();
                s.number_array("`timeDeltas`", &mut narrow, Deltas::narrow_us, |_, us, _, out| {
                    let ns = number_ns(us)
                        .ok_or_else(|| ParseErrorKind::OutOfRange { what: "time delta", value: number_text(us) })?;
                    out.push(Deltas::narrow_ns(ns).unwrap_or_else(|| {
                        big.push(ns);
                        Deltas::BIG
                    }));
                    Ok(())
                })?;
                self.deltas = Some((Deltas { narrow, big }, span));
            }
            "startTime" | "endTime" => {
                // Legacy writers put numbers in strings (`"181012.12024"`); DevTools' arithmetic
                // takes them as numbers.
                let number = if s.skip_ws()? == Some(b'"') {
                    let mut raw = Vec::new();
                    s.value("a time", Some(&mut raw))?;
                    v8_legacy::number_in_string(&raw).ok_or_else(|| {
                        let text = String::from_utf8_lossy(&raw).into_owned();
                        ParseErrorKind::Invalid(format!("`{key}` must be a number, found {text}").into())
                            .at(s.origin(), key_span)
                    })?
                } else {
                    s.number("a time")?
                };
                if number_ns(number).is_none() {
                    return Err(s.item_error(ParseErrorKind::OutOfRange { what: "time", value: number_text(number) }));
                }
                if key == "startTime" {
                    self.start_us = Some(number);
                } else {
                    self.end_us = Some(number);
                }
            }
            "head" => {
                s.skip_ws()?;
                let span = s.span();
                let mut raw = Vec::new();
                s.value("`head`", Some(&mut raw))?;
                self.head = Some(v8_legacy::read_head(&raw, span, s.origin(), s.limits().nodes)?);
            }
            "timestamps" => {
                s.skip_ws()?;
                let span = s.span();
                let mut ns = Vec::new();
                s.number_array(
                    "`timestamps`",
                    &mut ns,
                    |us| us.checked_mul(1000),
                    |_, us, _, out| {
                        out.push(
                            number_ns(us).ok_or_else(|| ParseErrorKind::OutOfRange {
                                what: "timestamp",
                                value: number_text(us),
                            })?,
                        );
                        Ok(())
                    },
                )?;
                self.timestamps = Some((ns, span));
            }
            "meta" | "threads" | "profile" | "configuration" => {
                for name in ["meta", "threads", "profile", "configuration"] {
                    if key == name {
                        self.foreign.seen.push(name);
                    }
                }
                s.value("a value", None)?;
            }
            "$schema" | "exporter" => {
                let mut raw = Vec::new();
                s.value("a value", Some(&mut raw))?;
                if memchr::memmem::find(&raw, b"speedscope").is_some() {
                    self.foreign.seen.push("speedscope");
                }
            }
            "traceEvents" => {
                self.traces = true;
                s.value("`traceEvents`", None)?;
            }
            _ => s.value("a value", None)?,
        }
        Ok(())
    }

    fn finish(self, origin: &Origin, options: &ParseOptions) -> Result<Profile, ParseError> {
        if self.traces {
            return Err(ParseErrorKind::OtherFormat {
                message: "this is a Chrome trace (`traceEvents`), not a .cpuprofile",
                likely: SourceFormat::Trace,
            }
            .at(origin, Span::None));
        }
        let Some(tree) = self.tree else {
            if let Some(head) = self.head {
                let times = (self.start_us, self.end_us);
                return legacy(head, self.pending_ids, self.timestamps, times, self.input_bytes, origin, options);
            }
            if let Some(message) = self.foreign.message() {
                return Err(ParseErrorKind::Unsupported(message).at(origin, Span::None));
            }
            return Err(ParseErrorKind::Missing { key: "nodes", what: "V8 .cpuprofile" }.at(origin, Span::None));
        };
        let samples = match (self.samples, self.pending_ids) {
            (Some(samples), _) => samples,
            (None, Some((ids, span))) => {
                let mut leaves = Vec::with_capacity(ids.len());
                for (index, id) in ids.into_iter().enumerate() {
                    match tree.position(id) {
                        Some(p) => leaves.push(p),
                        None => return Err(ParseErrorKind::UnknownNode { index, id }.at(origin, span)),
                    }
                }
                Leaves::Wide(leaves)
            }
            (None, None) => {
                return Err(ParseErrorKind::Missing { key: "samples", what: "V8 .cpuprofile" }.at(origin, Span::None))
            }
        };
        let to_ns = |n: Option<Number>| n.map(|n| number_ns(n).unwrap_or(0));
        let timing = Timing { start_ns: to_ns(self.start_us), end_ns: to_ns(self.end_us), deltas: self.deltas };
        let source = Source { format: SourceFormat::CpuProfile, warnings: Vec::new() };
        samples.build(&tree, timing, &source, origin, options)
    }
}

/// A number as an error message writes it.
fn number_text(number: Number) -> String {
    match number {
        Number::Int(i) => i.to_string(),
        Number::Float(f) => f.to_string(),
    }
}

/// A legacy profile (see [`crate::v8_legacy`]) from its `head`, `samples`, `timestamps` and
/// `startTime`/`endTime` (seconds).
/// Hit counts a legacy file may claim per byte of its own, and at least (see `legacy`).
const HITS_PER_INPUT_BYTE: u64 = 64;
const MIN_HITS_LIMIT: usize = 1 << 20;

fn legacy(
    head: LegacyTree,
    samples: Option<(Vec<u64>, Span)>,
    timestamps: Option<(Vec<i64>, Span)>,
    (start, end): (Option<Number>, Option<Number>),
    input_bytes: u64,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let start_ns = start.and_then(v8_legacy::seconds_ns);
    let end_ns = end.and_then(v8_legacy::seconds_ns);
    let mut warnings = Vec::new();
    let positions = match &samples {
        Some((ids, span)) => head.positions(ids, origin, *span)?,
        None => Vec::new(),
    };
    let head_span = head.span;
    let (tree, hits) = head.tree(origin)?;
    let limit = options.limits().samples;
    let (leaves, timing) = match (samples, timestamps) {
        (Some((_, span)), Some((ts, ts_span))) => {
            let n = positions.len();
            if ts.len() != n && ts.len() != n + 1 {
                let message = format!(
                    "`samples` has {n} entries but `timestamps` has {}; they must match (or `timestamps` have one \
                     more, the end)",
                    ts.len()
                );
                return Err(ParseErrorKind::Invalid(message.into()).at(origin, ts_span));
            }
            let leaves = Leaves::from_ids(&positions, &tree, origin, span)?;
            match ts.first() {
                // DevTools: the samples start at the first timestamp and end at the extra one,
                // or one mean interval after the last.
                Some(&first) => {
                    let last = ts.get(n.saturating_sub(1)).copied().unwrap_or(first);
                    let end = match ts.get(n) {
                        Some(end) => *end,
                        None if n >= 2 => last.saturating_add((last - first) / (n as i64 - 1)),
                        None => end_ns.unwrap_or(last).max(last),
                    };
                    let mut deltas = Deltas::default();
                    let mut previous = first;
                    for t in ts.iter().take(n) {
                        let ns = t.saturating_sub(previous);
                        let narrow = Deltas::narrow_ns(ns).unwrap_or_else(|| {
                            deltas.big.push(ns);
                            Deltas::BIG
                        });
                        deltas.narrow.push(narrow);
                        previous = *t;
                    }
                    (leaves, Timing { start_ns: Some(first), end_ns: Some(end), deltas: Some((deltas, ts_span)) })
                }
                None => (leaves, Timing { start_ns, end_ns, deltas: None }),
            }
        }
        (Some((_, span)), None) => {
            (Leaves::from_ids(&positions, &tree, origin, span)?, Timing { start_ns, end_ns, deltas: None })
        }
        (None, _) => {
            // Only hit counts: that many samples per node, spread evenly. Their order is
            // unknown; the `(program)` samples go first, where DevTools' fix-up of `(program)`
            // samples (between two samples of one stack) cannot move them: counts stay as written.
            let total = hits.iter().try_fold(0u64, |sum, h| sum.checked_add(*h)).unwrap_or(u64::MAX);
            // Each hit becomes a sample the file does not hold, so their number is bounded by the
            // file's size too (a 250-byte file could otherwise claim 2^26 samples: 0.8 GB): at most
            // 64 per byte, at least 2^20 (17 minutes at 1 ms from any file; real files hold about one per byte).
            let per_input = usize::try_from(input_bytes.saturating_mul(HITS_PER_INPUT_BYTE)).unwrap_or(usize::MAX);
            let limit = limit.min(per_input.max(MIN_HITS_LIMIT));
            if total > limit as u64 {
                return Err(
                    ParseErrorKind::too_many("the `hitCount`s of `head`", limit, "samples").at(origin, head_span)
                );
            }
            // Not reserved: the counts are the file's word, not data it has shown.
            let mut synthetic = Vec::new();
            for program in [true, false] {
                for (position, h) in hits.iter().enumerate() {
                    if tree.is_program_node(position) == program {
                        synthetic.extend(std::iter::repeat_n(position as u64, *h as usize));
                    }
                }
            }
            if total > 0 {
                warnings.push(Warning::new(format!(
                    "a legacy profile without `samples`: its {total} samples are the nodes' `hitCount`s, spread \
                     evenly over `startTime`..`endTime` (their order in time is unknown)"
                )));
            }
            (Leaves::from_ids(&synthetic, &tree, origin, head_span)?, Timing { start_ns, end_ns, deltas: None })
        }
    };
    let source = Source { format: SourceFormat::CpuProfile, warnings };
    leaves.build(&tree, timing, &source, origin, options)
}
