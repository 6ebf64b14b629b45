//! Parsers: the bytes of a profile file into a [`cpuprof_model::Profile`].
//!
//! Depends only on `cpuprof-model`. Inputs are untrusted: every problem is a [`ParseError`]
//! naming the input, the position (line:column for text) and what was expected; nothing here
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
//! assert_eq!(profile.samples.len(), 1); // one row per stack unless `timeline` is set
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]
// The scanner and tree code index buffers whose bounds they check themselves.
#![cfg_attr(not(test), allow(clippy::indexing_slicing))]

mod error;
mod folded;
mod json_scan;
mod pprof;
mod ticklog;
mod timeline;
mod trace;
mod v8_cpuprofile;

use std::io::{BufRead, BufReader, Read};

use cpuprof_model::Profile;
use flate2::bufread::MultiGzDecoder;

pub use error::{Origin, ParseError, ParseErrorKind, Span};

/// The input formats cpuprof reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputFormat {
    /// V8 `.cpuprofile` JSON.
    CpuProfile,
    /// V8 tick log (`node --prof`).
    TickLog,
    /// pprof `profile.proto`, plain or gzipped.
    Pprof,
    /// Chrome trace events JSON (`{"traceEvents":[…]}` or a bare array).
    Trace,
    /// Folded stacks (`a;b;c 42` per line).
    Folded,
}

/// How to parse.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Keep one sample row per sample with its timestamp (needed for time windows).
    /// When false, samples are summed per stack, which is all `top` needs and keeps memory
    /// proportional to the call tree rather than to the sample count.
    ///
    /// Default is `false`.
    pub timeline: bool,
    /// Tick logs: keep a function's tiers apart (`~f` interpreted, `^f` Sparkplug, `+f`
    /// Maglev, `*f` TurboFan) instead of merging them into one function.
    ///
    /// Default is `false`.
    pub split_tiers: bool,
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
    pub format: Option<InputFormat>,
    /// Trace input: which profile to read, as `ID` or `PID:ID` (`0x2`, `31525:0x2`).
    ///
    /// Default is `None`: the main thread's (the profile whose `Profile` event's tid equals
    /// its pid; among several, the one with the most samples).
    pub profile_id: Option<String>,
    /// Folded stacks: what the number at the end of a line is.
    ///
    /// Default is [`FoldedWeight::Samples`].
    pub folded_weight: FoldedWeight,
}

/// What the numbers of folded stacks are: folded text carries no unit, so the reader is told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum FoldedWeight {
    /// Sample counts, as inferno's and FlameGraph's collapsers and `cpuprof collapse` write
    /// them. The default.
    #[default]
    Samples,
    /// Nanoseconds (`cpuprof collapse --weight time`): there are no sample counts then.
    Nanoseconds,
}

impl ParseOptions {
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
pub fn sniff(prefix: &[u8]) -> Option<InputFormat> {
    let text = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let first = text.iter().position(|b| !b.is_ascii_whitespace()).map_or(&text[..0], |i| &text[i..]);
    if ticklog::TAGS.iter().any(|tag| first.starts_with(tag.as_bytes())) {
        return Some(InputFormat::TickLog);
    }
    // JSON: `[` then `{` or `]`, or `{` then a key or `}` (folded frames may start with `[`).
    let after = |i: usize| first.get(i..).and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()));
    match (first.first(), after(1)) {
        (Some(b'['), Some(b'{' | b']') | None) => return Some(InputFormat::Trace),
        (Some(b'{'), Some(b'"' | b'}') | None) => return Some(json_object_format(first)),
        _ => {}
    }
    // Text has no control bytes but tab and line breaks; a protobuf message starts with a
    // field tag (pprof's fields are 1 to 14).
    let binary = text.iter().take(4096).any(|b| *b < 0x09 || (0x0e..0x20).contains(b) || *b == 0x0b || *b == 0x0c);
    if binary {
        let tag = *prefix.first()?;
        let (field, wire) = (tag >> 3, tag & 7);
        return ((1..=14).contains(&field) && (wire == 0 || wire == 2)).then_some(InputFormat::Pprof);
    }
    let Some(end) = memchr::memchr(b'\n', first) else {
        // A first line longer than the prefix: deep folded stacks have those.
        return memchr::memchr(b';', first).map(|_| InputFormat::Folded);
    };
    let line = &first[..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line).trim_ascii_end();
    let number_start = line.iter().rposition(u8::is_ascii_whitespace).map(|i| i + 1)?;
    let number = &line[number_start..];
    let digits = number.iter().filter(|b| b.is_ascii_digit()).count();
    let plain = digits > 0 && number.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    (plain && number_start > 1).then_some(InputFormat::Folded)
}

/// A JSON object is a Chrome trace when its first key is `traceEvents` or `metadata`
/// (DevTools' "Save trace" files), or when `traceEvents` comes before any `nodes` key in
/// the prefix; else a `.cpuprofile`.
fn json_object_format(object: &[u8]) -> InputFormat {
    let first_key = object
        .get(1..)
        .and_then(|rest| rest.iter().position(|b| !b.is_ascii_whitespace()).map(|i| &rest[i..]))
        .and_then(|rest| rest.strip_prefix(b"\""))
        .and_then(|rest| memchr::memchr(b'"', rest).map(|end| &rest[..end]));
    match first_key {
        Some(b"traceEvents" | b"metadata") => return InputFormat::Trace,
        Some(b"nodes" | b"startTime" | b"endTime" | b"samples" | b"timeDeltas") => return InputFormat::CpuProfile,
        _ => {}
    }
    let at = |key: &[u8]| memchr::memmem::find(object, key);
    match (at(b"\"traceEvents\""), at(b"\"nodes\"")) {
        (Some(t), Some(n)) if t < n => InputFormat::Trace,
        (Some(_), None) => InputFormat::Trace,
        _ => InputFormat::CpuProfile,
    }
}

/// Parses a profile from `reader`, decompressing gzip transparently. `origin` names the input
/// in errors.
pub fn parse(reader: impl Read + Send, origin: &Origin, options: &ParseOptions) -> Result<Profile, ParseError> {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let io = |e| ParseErrorKind::Io(e).at(origin, Span::None);
    let head = reader.fill_buf().map_err(io)?;
    if head.starts_with(&GZIP_MAGIC) {
        let mut inner = BufReader::with_capacity(1 << 16, MultiGzDecoder::new(reader));
        let format = match options.format {
            Some(format) => format,
            None => detect(inner.fill_buf().map_err(io)?, origin)?,
        };
        return parse_as(format, inner, origin, options);
    }
    let format = match options.format {
        Some(format) => format,
        None => detect(head, origin)?,
    };
    parse_as(format, reader, origin, options)
}

fn detect(head: &[u8], origin: &Origin) -> Result<InputFormat, ParseError> {
    if head.is_empty() {
        return Err(ParseErrorKind::Empty.at(origin, Span::None));
    }
    sniff(head).ok_or_else(|| {
        ParseErrorKind::UnknownFormat(
            "not a V8 .cpuprofile or Chrome trace (JSON), a V8 tick log (`v8-version,…`), a pprof profile \
             (protobuf, plain or gzipped) or folded stacks (`a;b;c 42`); name the format with --input-format"
                .to_owned(),
        )
        .at(origin, Span::Byte(0))
    })
}

fn parse_as(
    format: InputFormat,
    reader: impl BufRead + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    match format {
        InputFormat::CpuProfile => v8_cpuprofile::parse(reader, origin, options),
        InputFormat::TickLog => ticklog::parse(reader, origin, options),
        InputFormat::Pprof => pprof::parse(reader, origin, options),
        InputFormat::Trace => trace::parse(reader, origin, options),
        InputFormat::Folded => folded::parse(reader, origin, options),
    }
}

#[cfg(test)]
mod tests {
    use super::{sniff, InputFormat};

    #[test]
    fn formats_are_told_apart_by_their_first_bytes() {
        let cases: &[(&[u8], Option<InputFormat>)] = &[
            (b"v8-version,11,3,244,8,0,0\n", Some(InputFormat::TickLog)),
            (b"\n\n  code-creation,Builtin,3", Some(InputFormat::TickLog)),
            (b"{\"nodes\":[],\"traceEvents\":1}", Some(InputFormat::CpuProfile)),
            (b"{\"metadata\":{\"nodes\":1},\"traceEvents\":[]}", Some(InputFormat::Trace)),
            (b"{\"traceEvents\":[]}", Some(InputFormat::Trace)),
            (b"{\"x\":1,\"traceEvents\":[]}", Some(InputFormat::Trace)),
            (b" [ {\"ph\":\"P\"}", Some(InputFormat::Trace)),
            (b"[unknown];main 3\n", Some(InputFormat::Folded)),
            (b"{anon};x 3\n", Some(InputFormat::Folded)),
            (b"main;work file:///a.js:3 120\r\n", Some(InputFormat::Folded)),
            (b"a;b;c", Some(InputFormat::Folded)), // a first line longer than the prefix
            (b"hello world\n", None),
            (b"\x0a\x07samples", Some(InputFormat::Pprof)),
            (b"\x12\x03\x08\x01\x02", Some(InputFormat::Pprof)),
            (b"\x00\x01binary", None),
        ];
        for (prefix, expected) in cases {
            assert_eq!(sniff(prefix), *expected, "{}", String::from_utf8_lossy(prefix));
        }
    }
}
