//! Parsers: the bytes of a profile file into a [`cpuprof_model::Profile`].
//!
//! In the workspace it depends on `cpuprof-model` (what it builds), `cpuprof-folded` (the folded
//! text syntax) and `cpuprof-symbols` (ELF symbols for the C++ frames of tick logs), and knows
//! nothing of the CLI: errors and warnings name [`ParseOptions`] fields, not flags. Inputs are
//! untrusted: every problem is a [`ParseError`] naming the input, the position (line:column for
//! text) and what was expected; nothing here
//! panics on input, recurses over input trees or allocates from a number in the file.
//! gzip-compressed input is recognized by its magic bytes and decompressed while reading.
//!
//! ```
//! use cpuprof_parse::{parse, Origin, ParseOptions};
//!
//! let json = br#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},
//!   {"id":2,"callFrame":{"functionName":"work","scriptId":"7","url":"file:///a.js","lineNumber":0,"columnNumber":9}}],
//!   "startTime":0,"endTime":30,"samples":[2,2],"timeDeltas":[10,10]}"#;
//! let profile = parse(&json[..], &Origin("a.cpuprofile".into()), &ParseOptions::default()).unwrap();
//! assert_eq!(profile.samples.len(), 1); // one row per stack; the samples one by one are its timeline
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]
// The scanner and tree code index buffers whose bounds they check themselves.
#![cfg_attr(not(test), allow(clippy::indexing_slicing))]

#[cfg(test)]
mod bounds_tests;
/// A xorshift generator from `seed` (non-zero): the tests' reproducible random inputs.
#[cfg(test)]
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
mod error;
mod folded;
mod json_grammar;
mod json_scan;
mod perf_script;
mod pprof;
mod recognize;
mod sample_ids;
mod ticklog;
mod timeline;
mod trace;
mod trace_samples;
mod utf16;
mod v8_cpuprofile;
mod v8_legacy;
mod v8_tree;

use std::io::{BufRead, BufReader, Cursor, Read};
use std::sync::atomic::{AtomicBool, Ordering};

use cpuprof_model::Profile;
use flate2::bufread::MultiGzDecoder;

/// The input formats cpuprof reads: the model's [`SourceFormat`], which a parsed profile
/// records in its `meta.format`.
pub use cpuprof_model::SourceFormat;
pub use cpuprof_model::{Setting, Warning};
pub use error::{Origin, ParseError, ParseErrorKind, Span};

/// The default of [`ParseOptions::max_input_size`]: 2 GiB.
pub const DEFAULT_MAX_INPUT_SIZE: u64 = 2 << 30;

/// How to parse.
#[derive(Clone, Debug)]
#[non_exhaustive]
// Independent switches, each one of the command line's.
#[allow(clippy::struct_excessive_bools)]
pub struct ParseOptions {
    /// Keep the samples' times: the profile gets a [`cpuprof_model::SampleTimeline`] (needed for
    /// time windows and the analyses over time), kept in the format's own compact columns.
    /// Sample rows are summed per stack either way, which is all `top` needs.
    ///
    /// Default is `false`.
    pub timeline: bool,
    /// Keep only the samples taken in this window of the recording. A reader that knows the
    /// recording's length by the time it sums its samples (`.cpuprofile`, trace) keeps only
    /// the window's and says so in [`cpuprof_model::Meta::window`], saving the walk a cut
    /// takes afterwards; the others return every sample, for the caller to cut (with a
    /// `timeline`). A window that resolves to nothing is left to the caller too, to report.
    ///
    /// Default is `None`: every sample.
    pub window: Option<cpuprof_model::Bounds>,
    /// Tick logs and `perf script` text: keep a function's tiers apart (`~f` interpreted, `^f` Sparkplug, `+f`
    /// Maglev, `*f` TurboFan) instead of merging them into one function.
    ///
    /// Default is `false`.
    pub split_tiers: bool,
    /// Tick logs: give each function TurboFan inlined its own frame under its caller, at the
    /// lines the code's source positions (`code-source-info`) say, instead of V8's view (its
    /// time in the function it was inlined into).
    ///
    /// Default is `true`.
    pub unroll_inlined: bool,
    /// Tick logs: give each frame the source line it was running, from the code's source
    /// positions and the scripts' text the log carries (`code-source-info`, `script-source`),
    /// for the analyses by line. A function's frames at different lines are different stacks,
    /// which analyses of stacks (a block's common frame) do not merge: off unless asked for.
    ///
    /// Default is `false`.
    pub frame_lines: bool,
    /// Tick logs: keep what V8's compilers did ([`cpuprof_model::Jit`]): every code object of a
    /// JavaScript function with its tier, creation time and inlined functions, and the
    /// deoptimizations `--log-deopt` adds. `.cpuprofile`s' `deoptReason`s are kept always.
    /// Without `split_tiers`, a sample's leaf frame is named with its code's tier (its callers
    /// are not): each sample's tier is known, at little more than a read without tiers costs.
    ///
    /// Default is `false`.
    pub jit: bool,
    /// Tick logs: look the libraries the log names up under this directory
    /// (`/usr/bin/node` → `DIR/usr/bin/node`), for logs written on another machine.
    ///
    /// Default is `None`: the paths as logged.
    pub symbols_root: Option<std::path::PathBuf>,
    /// pprof input: the sample type to read as the profile's weight, by its type name
    /// (`cpu`, `wall`, `samples`, …; see `go tool pprof -sample_index`).
    ///
    /// Default is `None`: the file's `default_sample_type` when it names a time, else the
    /// first of `cpu`, `wall` and any other type measured in time.
    pub sample_type: Option<String>,
    /// Read the input as this format instead of recognising it from its content.
    ///
    /// Default is `None`: recognised (see [`sniff`]).
    pub format: Option<SourceFormat>,
    /// Trace input: which profile to read, as `ID` or `PID:ID` (`0x2`, `31525:0x2`).
    ///
    /// Default is `None`: the main thread's (the profile whose `Profile` event's tid equals
    /// its pid; among several, the one with the most samples).
    pub profile_id: Option<String>,
    /// Folded stacks: what the number at the end of a line is.
    ///
    /// Default is [`FoldedWeight::Samples`].
    pub folded_weight: FoldedWeight,
    /// The most bytes read from one input, counted after gzip decompression: a longer input is
    /// a [`ParseErrorKind::TooLarge`] error. So that memory stays in proportion, what is kept
    /// of an input is bounded too, at the default: 128 MiB for one JSON value read whole (a
    /// `.cpuprofile`'s `nodes`, one trace event) or one folded line; 512 MiB for a pprof
    /// message, decoded into at most 1 GiB; 67,108,864 samples; 16,777,216 distinct stacks;
    /// 4,194,304 call-tree nodes and as many distinct folded frames; 1,048,576 frames in one
    /// `perf script` event, and 128 MiB of its lines. A larger `max_input_size`
    /// raises these in proportion (a smaller one does not lower them: it bounds all by itself).
    ///
    /// Default is [`DEFAULT_MAX_INPUT_SIZE`] (2 GiB): protobuf's own limit for one message, and
    /// several times the largest real profiles, which run to hundreds of MB (JSON written by V8's
    /// JavaScript side cannot exceed its 0.5 to 1 GiB string length limit).
    pub max_input_size: u64,
    /// Unit tests: limits other than `max_input_size` gives, to try each on a small input.
    #[cfg(test)]
    pub(crate) test_limits: Option<Limits>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            timeline: false,
            window: None,
            split_tiers: false,
            unroll_inlined: true,
            frame_lines: false,
            jit: false,
            symbols_root: None,
            sample_type: None,
            format: None,
            profile_id: None,
            max_input_size: DEFAULT_MAX_INPUT_SIZE,
            folded_weight: FoldedWeight::default(),
            #[cfg(test)]
            test_limits: None,
        }
    }
}

/// The bounds derived from [`ParseOptions::max_input_size`] (see there).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Bytes of one JSON value read whole, or of one folded line.
    pub(crate) value: usize,
    /// Bytes of a pprof message.
    pub(crate) pprof_message: usize,
    /// Bytes a pprof message takes once decoded.
    pub(crate) pprof_decoded: u64,
    /// Samples (entries of a `.cpuprofile`'s `samples` or `timeDeltas`, samples of a trace
    /// profile).
    pub(crate) samples: usize,
    /// Distinct stacks (prefixes) of a folded or pprof profile.
    pub(crate) stacks: usize,
    /// Call-tree nodes of a `.cpuprofile` or trace profile.
    pub(crate) nodes: usize,
    /// Distinct frames of a folded profile.
    pub(crate) frames: usize,
    /// Frames of one `perf script` event (its stack lines): the kernel records at most
    /// 655,360 (`perf_event_max_stack`'s ceiling; 127 by default).
    pub(crate) event_frames: usize,
}

impl Limits {
    fn new(max_input_size: u64) -> Self {
        // At the default size; a larger one scales them up.
        let scaled = |at_default: u64| {
            let scaled = u128::from(at_default) * u128::from(max_input_size.max(DEFAULT_MAX_INPUT_SIZE))
                / u128::from(DEFAULT_MAX_INPUT_SIZE);
            usize::try_from(scaled).unwrap_or(usize::MAX)
        };
        Limits {
            value: scaled(128 << 20),
            pprof_message: scaled(512 << 20),
            pprof_decoded: scaled(1 << 30) as u64,
            samples: scaled(1 << 26),
            stacks: scaled(1 << 24),
            nodes: scaled(1 << 22),
            frames: scaled(1 << 22),
            event_frames: scaled(1 << 20),
        }
    }
}

/// What the numbers of folded stacks are: folded text carries no unit, so the reader is told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum FoldedWeight {
    /// Sample counts, as inferno's and FlameGraph's collapsers and `cpuprof collapse` write
    /// them. The default.
    #[default]
    Samples,
    /// Nanoseconds (as `cpuprof collapse` writes them when it weighs by time): there are no
    /// sample counts then.
    Nanoseconds,
}

impl ParseOptions {
    pub(crate) fn limits(&self) -> Limits {
        #[cfg(test)]
        if let Some(limits) = self.test_limits {
            return limits;
        }
        Limits::new(self.max_input_size)
    }

    /// Options that keep the per-sample timeline.
    pub fn with_timeline() -> Self {
        Self { timeline: true, ..Self::default() }
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Guesses the format from the first bytes of the (decompressed) input: a tick log by its
/// first record's tag, JSON as a Chrome trace when it is an array or an object with a
/// `traceEvents` key (before any `nodes` key), else as a `.cpuprofile`; binary data that
/// starts like a protobuf message as pprof; text whose first line ends in a number as folded
/// stacks.
pub fn sniff(prefix: &[u8]) -> Option<SourceFormat> {
    if recognize::not_a_profile(prefix).is_some() {
        return None;
    }
    let text = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let first = text.iter().position(|b| !b.is_ascii_whitespace()).map_or(&text[..0], |i| &text[i..]);
    if ticklog::TAGS.iter().any(|tag| first.starts_with(tag.as_bytes())) {
        return Some(SourceFormat::TickLog);
    }
    // JSON: `[` then `{` or `]`, or `{` then a key or `}` (folded frames may start with `[`).
    let after = |i: usize| first.get(i..).and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()));
    match (first.first(), after(1)) {
        (Some(b'['), Some(b'{' | b']') | None) => return Some(SourceFormat::Trace),
        (Some(b'{'), Some(b'"' | b'}') | None) => return Some(json_object_format(first)),
        _ => {}
    }
    // Text has no control bytes but tab and line breaks; a protobuf message starts with a
    // field tag (pprof's fields are 1 to 14).
    let binary = text.iter().take(4096).any(|b| *b < 0x09 || (0x0e..0x20).contains(b) || *b == 0x0b || *b == 0x0c);
    if binary {
        let tag = *prefix.first()?;
        let (field, wire) = (tag >> 3, tag & 7);
        return ((1..=14).contains(&field) && (wire == 0 || wire == 2)).then_some(SourceFormat::Pprof);
    }
    if perf_script::sniff(first) {
        return Some(SourceFormat::PerfScript);
    }
    // Folded stacks may start with comment lines (austin's `# austin: 3.3.0` header).
    let first = skip_comment_lines(first);
    let Some(end) = memchr::memchr(b'\n', first) else {
        // A first line longer than the prefix: deep folded stacks have those.
        return memchr::memchr(b';', first).map(|_| SourceFormat::Folded);
    };
    let line = &first[..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line).trim_ascii_end();
    let number_start = line.iter().rposition(u8::is_ascii_whitespace).map(|i| i + 1)?;
    let number = &line[number_start..];
    let digits = number.iter().filter(|b| b.is_ascii_digit()).count();
    let plain = digits > 0 && number.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    (plain && number_start > 1).then_some(SourceFormat::Folded)
}

/// `text` from its first line that is neither blank nor a `#` or `//` comment (all of it when
/// the prefix ends first).
fn skip_comment_lines(mut text: &[u8]) -> &[u8] {
    loop {
        let line = text.trim_ascii_start();
        let end = memchr::memchr(b'\n', line).unwrap_or(line.len());
        if !folded::is_comment(&line[..end]) {
            return line;
        }
        match memchr::memchr(b'\n', line) {
            Some(end) => text = &line[end + 1..],
            None => return line,
        }
    }
}

/// Whether the object's first `samples` array starts with an object.
fn samples_of_objects(object: &[u8]) -> bool {
    let Some(at) = memchr::memmem::find(object, b"\"samples\"") else { return false };
    let mut rest = object[at + 9..].iter().filter(|b| !b.is_ascii_whitespace());
    rest.next() == Some(&b':') && rest.next() == Some(&b'[') && rest.next() == Some(&b'{')
}

/// A JSON object is a Chrome trace when its first key is `traceEvents` or `metadata`
/// (DevTools' "Save trace" files), or when `traceEvents` comes before any `nodes` key in
/// the prefix; else a `.cpuprofile`.
fn json_object_format(object: &[u8]) -> SourceFormat {
    let first_key = object
        .get(1..)
        .and_then(|rest| rest.iter().position(|b| !b.is_ascii_whitespace()).map(|i| &rest[i..]))
        .and_then(|rest| rest.strip_prefix(b"\""))
        .and_then(|rest| memchr::memchr(b'"', rest).map(|end| &rest[..end]));
    match first_key {
        Some(b"traceEvents" | b"metadata") => return SourceFormat::Trace,
        // Trace-event sampled stacks (Hermes): `samples` and `stackFrames`, no `nodes`; or
        // `samples` whose first element is an object (a `.cpuprofile`'s are node ids).
        Some(b"samples" | b"stackFrames")
            if (memchr::memmem::find(object, b"\"stackFrames\"").is_some()
                && memchr::memmem::find(object, b"\"nodes\"").is_none())
                || samples_of_objects(object) =>
        {
            return SourceFormat::Trace
        }
        Some(b"nodes" | b"startTime" | b"endTime" | b"samples" | b"timeDeltas") => return SourceFormat::CpuProfile,
        // `node --prof-process --preprocess` writes `code`, `functions`, `ticks` (, `scripts`).
        Some(b"code") => return SourceFormat::PreprocessJson,
        _ => {}
    }
    let at = |key: &[u8]| memchr::memmem::find(object, key);
    match (at(b"\"traceEvents\""), at(b"\"nodes\"")) {
        (Some(t), Some(n)) if t < n => SourceFormat::Trace,
        (Some(_), None) => SourceFormat::Trace,
        _ => SourceFormat::CpuProfile,
    }
}

/// Parses a profile from `reader`, decompressing gzip transparently. `origin` names the input
/// in errors.
pub fn parse(mut reader: impl Read + Send, origin: &Origin, options: &ParseOptions) -> Result<Profile, ParseError> {
    let io = |e| ParseErrorKind::Io(e).at(origin, Span::None);
    let limit = options.max_input_size;
    let over = AtomicBool::new(false);
    let mut head = Vec::new();
    (&mut reader).take(2).read_to_end(&mut head).map_err(io)?;
    let gzip = head == GZIP_MAGIC;
    let raw = Cursor::new(head).chain(reader);
    let result = if gzip {
        let decoded = MultiGzDecoder::new(BufReader::with_capacity(1 << 16, raw));
        parse_decoded(Limited { inner: decoded, left: limit, over: &over }, origin, options)
    } else {
        parse_decoded(Limited { inner: raw, left: limit, over: &over }, origin, options)
    };
    // Whatever a reader made of the failed read (a tick log ends early on a damaged stream).
    if over.load(Ordering::Relaxed) {
        let what = if gzip { "the decompressed input" } else { "the input" };
        return Err(ParseErrorKind::too_large_bytes(what, limit).at(origin, Span::None));
    }
    result
}

/// How much of the input [`sniff`] is given: enough for a first folded line of a deep stack
/// and for a trace's `traceEvents` key after its metadata.
const SNIFF_BYTES: u64 = 64 << 10;

/// Recognises the format of the (decompressed) input unless it is given, and parses it.
/// UTF-16 text (with its byte-order mark) is decoded to UTF-8 first.
fn parse_decoded(mut input: impl Read + Send, origin: &Origin, options: &ParseOptions) -> Result<Profile, ParseError> {
    let (prefix, error) = read_prefix(&mut input, origin)?;
    if let Some(big_endian) = utf16::bom(&prefix) {
        let raw = Cursor::new(prefix).chain(Deferred { error, inner: input });
        let mut decoded = utf16::Utf16Reader::new(raw, big_endian);
        let (prefix, error) = read_prefix(&mut decoded, origin)?;
        return parse_prefixed(prefix, error, decoded, origin, options);
    }
    parse_prefixed(prefix, error, input, origin, options)
}

/// The first [`SNIFF_BYTES`] of `input`, and the error that ended it early, if any.
fn read_prefix(input: &mut impl Read, origin: &Origin) -> Result<(Vec<u8>, Option<std::io::Error>), ParseError> {
    // Read the prefix in full: one read may return only a few bytes (a pipe, or a gzip
    // member holding only the start of the file).
    let mut prefix = Vec::new();
    let error = input.take(SNIFF_BYTES).read_to_end(&mut prefix).err();
    match error {
        // Readers judge an input that breaks off after some good bytes (a tick log keeps them).
        Some(e) if prefix.is_empty() => Err(ParseErrorKind::Io(e).at(origin, Span::None)),
        other => Ok((prefix, other)),
    }
}

/// Parses `prefix` then `input` (with `error` between them, if reading the prefix failed).
fn parse_prefixed(
    prefix: Vec<u8>,
    error: Option<std::io::Error>,
    input: impl Read + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let format = match options.format {
        Some(format) => format,
        None => detect(&prefix, origin)?,
    };
    let rest = Deferred { error, inner: input };
    parse_as(format, BufReader::with_capacity(1 << 16, Cursor::new(prefix).chain(rest)), origin, options)
}

/// A reader that first fails with `error`, if any, then reads `inner`.
struct Deferred<R> {
    error: Option<std::io::Error>,
    inner: R,
}

impl<R: Read> Read for Deferred<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.inner.read(buf),
        }
    }
}

/// A reader that fails once more than `left` bytes come, and says so in `over` (a reader may
/// treat the error as the end of a damaged input).
struct Limited<'a, R> {
    inner: R,
    left: u64,
    over: &'a AtomicBool,
}

impl<R: Read> Read for Limited<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // Up to one byte past the limit, to tell an input of exactly the limit from a longer one.
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX);
        let len = buf.len().min(room);
        let n = self.inner.read(&mut buf[..len])?;
        if n as u64 > self.left {
            self.left = 0;
            self.over.store(true, Ordering::Relaxed);
            return Err(std::io::Error::other("the input size limit is reached"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn detect(head: &[u8], origin: &Origin) -> Result<SourceFormat, ParseError> {
    if head.is_empty() {
        return Err(ParseErrorKind::Empty.at(origin, Span::None));
    }
    if let Some(message) = recognize::not_a_profile(head) {
        return Err(ParseErrorKind::Unsupported(message).at(origin, Span::Byte(0)));
    }
    sniff(head).ok_or_else(|| ParseErrorKind::Unrecognized.at(origin, Span::Byte(0)))
}

fn parse_as(
    format: SourceFormat,
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    match format {
        SourceFormat::CpuProfile => v8_cpuprofile::parse(reader, origin, options),
        SourceFormat::TickLog => ticklog::parse(reader, origin, options),
        SourceFormat::Pprof => pprof::parse(reader, origin, options),
        SourceFormat::Trace => trace::parse(reader, origin, options),
        SourceFormat::Folded => folded::parse(reader, origin, options),
        SourceFormat::PreprocessJson => ticklog::preprocess::parse(reader, origin, options),
        SourceFormat::PerfScript => perf_script::parse(reader, origin, options),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, sniff, Origin, ParseOptions, Setting, SourceFormat};

    #[test]
    fn errors_name_the_setting_that_would_read_the_input_not_a_flag() {
        let read = |bytes: &[u8], format: Option<SourceFormat>| {
            let options = ParseOptions { format, ..ParseOptions::default() };
            parse(bytes, &Origin("x".into()), &options).unwrap_err()
        };
        let cases = [
            (read(b"hello world\n", None), Some(Setting::Format(None))),
            (read(b"[]", Some(SourceFormat::CpuProfile)), Some(Setting::Format(Some(SourceFormat::Trace)))),
            (
                read(br#"{"traceEvents":[]}"#, Some(SourceFormat::CpuProfile)),
                Some(Setting::Format(Some(SourceFormat::Trace))),
            ),
            (read(br#"{"traceEvents":[]}"#, Some(SourceFormat::TickLog)), None),
        ];
        for (error, setting) in cases {
            assert_eq!(error.kind.setting(), setting, "{error}");
            assert!(!error.to_string().contains("--"), "{error}");
        }
    }

    #[test]
    fn formats_are_told_apart_by_their_first_bytes() {
        let cases: &[(&[u8], Option<SourceFormat>)] = &[
            (b"v8-version,11,3,244,8,0,0\n", Some(SourceFormat::TickLog)),
            (b"\n\n  code-creation,Builtin,3", Some(SourceFormat::TickLog)),
            (b"{\"nodes\":[],\"traceEvents\":1}", Some(SourceFormat::CpuProfile)),
            (b"{\"metadata\":{\"nodes\":1},\"traceEvents\":[]}", Some(SourceFormat::Trace)),
            (b"{\"traceEvents\":[]}", Some(SourceFormat::Trace)),
            (b"{\"x\":1,\"traceEvents\":[]}", Some(SourceFormat::Trace)),
            (b" [ {\"ph\":\"P\"}", Some(SourceFormat::Trace)),
            (b"{\"samples\":[{\"sf\":1}],\"stackFrames\":{}}", Some(SourceFormat::Trace)),
            (b"{\"stackFrames\":{},\"samples\":[]}", Some(SourceFormat::Trace)),
            (b"{\"samples\":[1],\"stackFrames\":1,\"nodes\":[]}", Some(SourceFormat::CpuProfile)),
            (b"{\"samples\":[ {\"sf\":1,\"ts\":0},", Some(SourceFormat::Trace)),
            (b"{\"samples\":[1,2,3", Some(SourceFormat::CpuProfile)),
            (b"[unknown];main 3\n", Some(SourceFormat::Folded)),
            (b"# austin: 3.3.0\n# interval: 100\n\nP1;T1;main 3\n", Some(SourceFormat::Folded)),
            (b"#0 main;work 5\n#1 main;idle 3\n", Some(SourceFormat::Folded)),
            (b"{anon};x 3\n", Some(SourceFormat::Folded)),
            (b"main;work file:///a.js:3 120\r\n", Some(SourceFormat::Folded)),
            (b"a;b;c", Some(SourceFormat::Folded)), // a first line longer than the prefix
            (b"hello world\n", None),
            (b"\x0a\x07samples", Some(SourceFormat::Pprof)),
            (b"\x12\x03\x08\x01\x02", Some(SourceFormat::Pprof)),
            (b"\x00\x01binary", None),
            // Recognised as not profiles (recognize.rs): a zip archive (`PK` would be a pprof tag).
            (b"PK\x03\x04\x14\x00\x00\x00", None),
        ];
        for (prefix, expected) in cases {
            assert_eq!(sniff(prefix), *expected, "{}", String::from_utf8_lossy(prefix));
        }
    }
}
