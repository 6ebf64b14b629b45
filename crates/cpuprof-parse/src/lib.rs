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
}

impl ParseOptions {
    /// Options that keep the per-sample timeline.
    pub fn with_timeline() -> Self {
        Self { timeline: true, ..Self::default() }
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Guesses the format from the first bytes of the (decompressed) input.
pub fn sniff(prefix: &[u8]) -> Option<InputFormat> {
    let text = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    let first = text.iter().position(|b| !b.is_ascii_whitespace()).map_or(&text[..0], |i| &text[i..]);
    if ticklog::TAGS.iter().any(|tag| first.starts_with(tag.as_bytes())) {
        return Some(InputFormat::TickLog);
    }
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{' | b'[') => Some(InputFormat::CpuProfile),
        _ => None,
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
        let format = detect(inner.fill_buf().map_err(io)?, origin)?;
        return parse_as(format, inner, origin, options);
    }
    let format = detect(head, origin)?;
    parse_as(format, reader, origin, options)
}

fn detect(head: &[u8], origin: &Origin) -> Result<InputFormat, ParseError> {
    if head.is_empty() {
        return Err(ParseErrorKind::Empty.at(origin, Span::None));
    }
    sniff(head).ok_or_else(|| {
        ParseErrorKind::UnknownFormat(
            "neither a V8 .cpuprofile (JSON starting with `{`) nor a V8 tick log (starting with `v8-version,`)"
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
