use std::borrow::Cow;
use std::fmt;

use cpuprof_model::{Setting, SourceFormat};

/// Where an input came from: a path as the user wrote it, or `<stdin>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin(pub String);

impl Origin {
    /// The origin of standard input.
    pub fn stdin() -> Self {
        Origin("<stdin>".to_owned())
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A position in the input. Text positions are 1-based; columns count bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// Nothing more precise than the file is known.
    None,
    /// A line and column of a text input (after gzip decompression).
    LineCol {
        /// 1-based line.
        line: u64,
        /// 1-based byte column.
        column: u64,
    },
    /// A byte offset of a binary input.
    Byte(u64),
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Span::None => Ok(()),
            Span::LineCol { line, column } => write!(f, ":{line}:{column}"),
            Span::Byte(offset) => write!(f, " (byte {offset})"),
        }
    }
}

/// A profile that could not be read: which input, where in it, and what was wrong.
/// Displays as `app.cpuprofile:1:17: sample 12 refers to unknown node id 99`.
#[derive(Debug, thiserror::Error)]
#[error("{origin}{span}: {kind}")]
pub struct ParseError {
    /// The input.
    pub origin: Origin,
    /// The position in the input.
    pub span: Span,
    /// What was wrong.
    pub kind: ParseErrorKind,
}

/// What was wrong with an input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// Reading the input failed.
    #[error("cannot read input: {0}")]
    Io(std::io::Error),
    /// The input is empty.
    #[error("the input is empty")]
    Empty,
    /// The format was to be recognised from the content, and is none cpuprof reads
    /// ([`ParseOptions::format`](crate::ParseOptions::format) names it).
    #[error(
        "unrecognized input: not a V8 .cpuprofile, Chrome trace or tick processor JSON, a V8 tick log \
         (`v8-version,…`), a pprof profile (protobuf, plain or gzipped), folded stacks (`a;b;c 42`) or `perf script` \
         text"
    )]
    Unrecognized,
    /// The input is not in the format it was read as.
    #[error("unrecognized input: {0}")]
    UnknownFormat(String),
    /// The input is recognisably in another format than the one it was read as.
    #[error("{message}")]
    OtherFormat {
        /// What the input is, and what it is not.
        message: &'static str,
        /// The format it is likely in.
        likely: SourceFormat,
    },
    /// The JSON is malformed (its syntax), or a value has the wrong JSON type.
    #[error("invalid JSON: {0}")]
    Json(String),
    /// Well-formed input whose content the format does not allow: a key twice, an event
    /// without its ids.
    #[error("{0}")]
    Invalid(Cow<'static, str>),
    /// A line of a text format that breaks its syntax (a folded line without its count).
    #[error("{0}")]
    Malformed(&'static str),

    /// A Chrome trace without the CPU profile asked for
    /// ([`ParseOptions::profile_id`](crate::ParseOptions::profile_id)).
    #[error("no CPU profile `{wanted}` in this trace; it holds {profiles}")]
    NoSuchProfile {
        /// The profile asked for, as given.
        wanted: String,
        /// The profiles the trace holds, with their sample counts.
        profiles: String,
    },
    /// A Chrome trace where the profile asked for is not one.
    #[error("{0}")]
    TraceProfile(String),
    /// A pprof profile without the sample type asked for
    /// ([`ParseOptions::sample_type`](crate::ParseOptions::sample_type)).
    #[error("no sample type `{wanted}`; the file has {types}")]
    NoSuchSampleType {
        /// The type asked for.
        wanted: String,
        /// The file's types, as `type/unit`.
        types: String,
    },

    /// Not a valid pprof `profile.proto`, or one that contradicts itself.
    #[error("invalid pprof: {0}")]
    Pprof(String),
    /// The input ends early.
    #[error("unexpected end of input inside {0} (is the file truncated?)")]
    Truncated(&'static str),
    /// A required key is absent.
    #[error("missing `{key}`: not a {what}")]
    Missing {
        /// The key.
        key: &'static str,
        /// What the input would be with it (`V8 .cpuprofile`, `Chrome trace`).
        what: &'static str,
    },
    /// A number is out of the range that field allows.
    #[error("{what} {value} is out of range")]
    OutOfRange {
        /// The field.
        what: &'static str,
        /// The number as written.
        value: String,
    },
    /// Two nodes share an id.
    #[error("duplicate node id {id} (nodes[{first}] and nodes[{second}])")]
    DuplicateId {
        /// The id.
        id: u64,
        /// Position of the first node with it.
        first: usize,
        /// Position of the second.
        second: usize,
    },
    /// A node names a parent id that no node has.
    #[error("node {child} has parent {parent}, which is not a node")]
    UnknownParent {
        /// The child's id.
        child: u64,
        /// The missing parent id.
        parent: u64,
    },
    /// A node lists a child id that no node has.
    #[error("node {parent} lists child id {child}, which is not a node")]
    UnknownChild {
        /// The parent's id.
        parent: u64,
        /// The missing child id.
        child: u64,
    },
    /// A node is listed as a child of two nodes.
    #[error("node {child} is a child of both node {first} and node {second}")]
    TwoParents {
        /// The child's id.
        child: u64,
        /// One parent.
        first: u64,
        /// The other parent.
        second: u64,
    },
    /// The `children` links form a cycle.
    #[error("the call tree has a cycle through node {id}")]
    Cycle {
        /// A node on the cycle.
        id: u64,
    },
    /// A sample names a node that does not exist.
    #[error("sample {index} refers to unknown node id {id}")]
    UnknownNode {
        /// Sample position.
        index: usize,
        /// The id.
        id: u64,
    },
    /// `samples` and `timeDeltas` differ in length.
    #[error("`samples` has {samples} entries but `timeDeltas` has {deltas}; they must match")]
    LengthMismatch {
        /// Length of `samples`.
        samples: usize,
        /// Length of `timeDeltas`.
        deltas: usize,
    },
    /// A format cpuprof recognizes but does not read.
    #[error("{0}")]
    Unsupported(&'static str),
    /// A part of the input is over cpuprof's limit for it (see
    /// [`ParseOptions::max_input_size`](crate::ParseOptions::max_input_size)): a decompression
    /// bomb, or a profile far larger than real ones.
    #[error("{what} exceeds the limit of {limit}")]
    TooLarge {
        /// What is too large (`the decompressed input`, `` `nodes` ``, `a trace event`, …).
        what: String,
        /// The limit, with its unit (`2 GiB`, `16,777,216 distinct stacks`).
        limit: String,
    },
    /// The parser produced an inconsistent model (a bug in cpuprof).
    #[error("internal error building the profile: {0}")]
    Model(cpuprof_model::ModelError),
}

impl ParseErrorKind {
    /// The setting that would read the input otherwise, if one would: a front end says how to
    /// change it (the CLI names its flag).
    pub fn setting(&self) -> Option<Setting> {
        match self {
            ParseErrorKind::Unrecognized => Some(Setting::Format(None)),
            ParseErrorKind::OtherFormat { likely, .. } => Some(Setting::Format(Some(*likely))),
            ParseErrorKind::NoSuchProfile { .. } => Some(Setting::ProfileId),
            ParseErrorKind::NoSuchSampleType { .. } => Some(Setting::SampleType),
            ParseErrorKind::TooLarge { .. } => Some(Setting::MaxInputSize),
            _ => None,
        }
    }

    /// A [`ParseErrorKind::TooLarge`] for a size in bytes.
    pub(crate) fn too_large_bytes(what: impl Into<String>, limit: u64) -> Self {
        ParseErrorKind::TooLarge { what: what.into(), limit: bytes_text(limit) }
    }

    /// A [`ParseErrorKind::TooLarge`] for a count of `unit`s.
    pub(crate) fn too_many(what: impl Into<String>, limit: usize, unit: &str) -> Self {
        ParseErrorKind::TooLarge { what: what.into(), limit: format!("{} {unit}", thousands(limit)) }
    }

    /// Attaches the input and position.
    pub fn at(self, origin: &Origin, span: Span) -> ParseError {
        ParseError { origin: origin.clone(), span, kind: self }
    }
}

/// A size as people read it: `2 GiB`, `128 MiB`, `1.5 GiB`, `999 bytes`.
pub(crate) fn bytes_text(bytes: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= size {
            let value = bytes as f64 / size as f64;
            return if bytes % size == 0 { format!("{} {unit}", bytes / size) } else { format!("{value:.1} {unit}") };
        }
    }
    format!("{bytes} bytes")
}

/// `6484` → `6,484`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
