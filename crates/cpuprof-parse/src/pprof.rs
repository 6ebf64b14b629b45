//! pprof `profile.proto` input: what `go tool pprof`, Pyroscope, Parca and `@datadog/pprof`
//! read and write. Decoded with the `pprof` crate's pre-generated prost types.
//!
//! - **Weight.** One time column is read (the one [`ParseOptions::sample_type`] names, else the file's
//!   `default_sample_type` when it is a time, else `cpu`, `wall` or any other type measured in
//!   time, converted to ns), and one count column (the first type whose unit is `count`; without
//!   one, the time divided by `period` when the period is a time, else one per sample record).
//! - **Stacks.** `location_id[0]` is the leaf; a location's `line`s list inlined callees
//!   first, so a stack root first is the locations reversed, each one's lines reversed. A
//!   location without lines is a frame named by its address (and its mapping's file).
//! - **Functions.** `name`, `filename` and `start_line` (1-based); the sampled line of each
//!   frame is its `Line.line`. The V8 meta names `(root)`, `(program)`, `(idle)` and
//!   `(garbage collector)` without a file get their meta kinds, other frames with a file are
//!   code (`js`), frames without one native.
//! - **`drop_frames` / `keep_frames`** are applied much as `go tool pprof` applies them when
//!   it loads a profile: scanning each stack from the root, past the frames that would be
//!   dropped before the first that stays, the first frame whose function name fully matches
//!   `drop_frames` (and not `keep_frames`) is removed with all its callees. Unlike pprof this
//!   works per frame, not per location, and matches names as they are (pprof first strips
//!   C++ argument lists).

use std::io::Read;

use cpuprof_model::{Frame, FrameId, Func, FuncKind, Profile, ProfileBuilder, SourceFormat, StackId, StrId, ValueType};
use pprof::protos::{Location, Message, Profile as Proto};
use rustc_hash::FxHashMap;

use crate::error::{thousands, Origin, ParseError, ParseErrorKind, Span};
use crate::ParseOptions;

/// Parses a pprof profile (already decompressed) from `reader`.
pub(crate) fn parse(
    mut reader: impl Read + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let limits = options.limits();
    let mut bytes = Vec::new();
    // One byte past the limit tells a message that is too long from one that is just long enough.
    (&mut reader)
        .take(limits.pprof_message as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ParseErrorKind::Io(e).at(origin, Span::None))?;
    if bytes.len() > limits.pprof_message {
        return Err(
            ParseErrorKind::too_large_bytes("the pprof message", limits.pprof_message as u64).at(origin, Span::None)
        );
    }
    // prost decodes the whole message at once, and a byte or two of input can become a
    // 24-byte string or a 100-byte sample: see what it would take first.
    let decoded = DecodedSize::of(&bytes);
    if decoded.bytes > limits.pprof_decoded {
        let what = format!(
            "the pprof message once decoded ({} strings, {} samples, {} locations, {} functions)",
            thousands(decoded.strings),
            thousands(decoded.samples),
            thousands(decoded.locations),
            thousands(decoded.functions)
        );
        return Err(ParseErrorKind::too_large_bytes(what, limits.pprof_decoded).at(origin, Span::None));
    }
    let proto = Proto::decode(bytes.as_slice())
        .map_err(|e| ParseErrorKind::Pprof(format!("not a profile.proto message ({e})")).at(origin, Span::None))?;
    drop(bytes);
    Reader { proto: &proto, origin, max_stacks: limits.stacks }.read(options)
}

/// What a `profile.proto` message takes once decoded by prost, found by walking its wire
/// format (nothing is allocated): each repeated element costs its struct, and each string and
/// each list inside a sample or location the heap block it gets. A message that is not valid
/// is measured as far as it goes (decoding then reports what is wrong).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct DecodedSize {
    pub(crate) bytes: u64,
    pub(crate) strings: usize,
    pub(crate) samples: usize,
    pub(crate) locations: usize,
    pub(crate) functions: usize,
}

impl DecodedSize {
    pub(crate) fn of(message: &[u8]) -> DecodedSize {
        use std::mem::size_of;
        let mut size = DecodedSize::default();
        let mut cost = |bytes: usize| size.bytes = size.bytes.saturating_add(bytes as u64);
        let (mut strings, mut samples, mut locations, mut functions) = (0, 0, 0, 0);
        for (field, value) in Fields(message) {
            match (field, value) {
                (1 | 11, _) => cost(size_of::<pprof::protos::ValueType>()),
                (2, Value::Bytes(sample)) => {
                    samples += 1;
                    cost(size_of::<pprof::protos::Sample>());
                    let (mut ids, mut values, mut labels) = (0, 0, 0);
                    for (field, value) in Fields(sample) {
                        match field {
                            1 => ids += value.numbers(),
                            2 => values += value.numbers(),
                            3 => labels += 1,
                            _ => {}
                        }
                    }
                    cost(list_block(ids, 8) + list_block(values, 8));
                    cost(list_block(labels, size_of::<pprof::protos::Label>()));
                }
                (3, _) => cost(size_of::<pprof::protos::Mapping>()),
                (4, Value::Bytes(location)) => {
                    locations += 1;
                    cost(size_of::<Location>());
                    let lines = Fields(location).filter(|(field, _)| *field == 4).count();
                    cost(list_block(lines, size_of::<pprof::protos::Line>()));
                }
                (5, _) => {
                    functions += 1;
                    cost(size_of::<pprof::protos::Function>());
                }
                (6, Value::Bytes(text)) => {
                    strings += 1;
                    cost(size_of::<String>() + heap_block(text.len()));
                }
                (13, value) => cost(8 * value.numbers()),
                _ => {}
            }
        }
        DecodedSize { strings, samples, locations, functions, ..size }
    }
}

/// The memory a heap block of `bytes` takes: none for nothing, else the allocator's header and
/// rounding (16-byte steps, 32 bytes at least, as glibc's malloc).
fn heap_block(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        (bytes.saturating_add(8 + 15) & !15).max(32)
    }
}

/// The heap block of a list of `n` elements of `size` bytes filled one at a time (its capacity
/// doubles from 4).
fn list_block(n: usize, size: usize) -> usize {
    if n == 0 {
        0
    } else {
        heap_block(n.max(4).checked_next_power_of_two().unwrap_or(usize::MAX).saturating_mul(size))
    }
}

/// A field's value on the wire.
#[derive(Clone, Copy)]
enum Value<'a> {
    /// A varint or fixed-size number.
    Number,
    /// A length-delimited value: a message, a string or packed numbers.
    Bytes(&'a [u8]),
}

impl Value<'_> {
    /// How many numbers the value holds: one, or as many varints as are packed in it.
    fn numbers(self) -> usize {
        match self {
            Value::Number => 1,
            // Every varint ends in a byte below 0x80.
            Value::Bytes(packed) => packed.iter().filter(|b| **b < 0x80).count(),
        }
    }
}

/// The fields of a protobuf message on the wire, as (field number, value); stops at anything
/// malformed.
struct Fields<'a>(&'a [u8]);

impl<'a> Iterator for Fields<'a> {
    type Item = (u64, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let key = varint(&mut self.0)?;
        let value = match key & 7 {
            0 => varint(&mut self.0).map(|_| Value::Number),
            1 => self.0.get(8..).map(|rest| {
                self.0 = rest;
                Value::Number
            }),
            2 => {
                let len = usize::try_from(varint(&mut self.0)?).ok()?;
                let (bytes, rest) = (self.0.get(..len)?, self.0.get(len..)?);
                self.0 = rest;
                Some(Value::Bytes(bytes))
            }
            5 => self.0.get(4..).map(|rest| {
                self.0 = rest;
                Value::Number
            }),
            _ => None,
        };
        if value.is_none() {
            self.0 = &[];
        }
        Some((key >> 3, value?))
    }
}

/// Reads a varint off the front of `bytes`.
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (i, b) in bytes.iter().take(10).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if *b < 0x80 {
            *bytes = &bytes[i + 1..];
            return Some(value);
        }
    }
    None
}

/// Looks things up in a decoded profile, with errors that say what is wrong.
struct Reader<'a> {
    proto: &'a Proto,
    origin: &'a Origin,
    /// How many distinct stacks the profile may have.
    max_stacks: usize,
}

/// Units of time pprof files use, in ns.
fn ns_per(unit: &str) -> Option<f64> {
    match unit {
        "nanoseconds" | "ns" => Some(1.0),
        "microseconds" | "us" => Some(1e3),
        "milliseconds" | "ms" => Some(1e6),
        "seconds" | "s" => Some(1e9),
        _ => None,
    }
}

impl<'a> Reader<'a> {
    fn error(&self, message: String) -> ParseError {
        ParseErrorKind::Pprof(message).at(self.origin, Span::None)
    }

    fn string(&self, index: i64) -> Result<&'a str, ParseError> {
        let table = &self.proto.string_table;
        usize::try_from(index).ok().and_then(|i| table.get(i)).map(String::as_str).ok_or_else(|| {
            self.error(format!("string index {index} is out of range (the string table has {} entries)", table.len()))
        })
    }

    /// The sample types as `(type, unit)`.
    fn sample_types(&self) -> Result<Vec<(&'a str, &'a str)>, ParseError> {
        self.proto.sample_type.iter().map(|t| Ok((self.string(t.ty)?, self.string(t.unit)?))).collect()
    }

    fn read(&self, options: &ParseOptions) -> Result<Profile, ParseError> {
        let p = self.proto;
        if p.string_table.first().is_some_and(|s| !s.is_empty()) {
            return Err(self.error("the string table must start with the empty string".to_owned()));
        }
        let types = self.sample_types()?;
        if types.is_empty() {
            return Err(self.error("no sample types: nothing to read".to_owned()));
        }
        let listed = || types.iter().map(|(t, u)| format!("{t}/{u}")).collect::<Vec<_>>().join(", ");
        let is_time = |i: usize| ns_per(types[i].1).is_some();
        let weight = if let Some(wanted) = &options.sample_type {
            types.iter().position(|(t, _)| t == wanted).ok_or_else(|| {
                ParseErrorKind::NoSuchSampleType { wanted: wanted.clone(), types: listed() }.at(self.origin, Span::None)
            })?
        } else {
            let default = self.string(p.default_sample_type)?;
            let by_name = |name: &str| types.iter().position(|(t, u)| *t == name && ns_per(u).is_some());
            by_name(default)
                .filter(|_| !default.is_empty())
                .or_else(|| by_name("cpu"))
                .or_else(|| by_name("wall"))
                .or_else(|| (0..types.len()).find(|i| is_time(*i)))
                .or_else(|| types.iter().position(|(_, u)| *u == "count"))
                .unwrap_or(0)
        };
        let scale = ns_per(types[weight].1);
        let count = types.iter().position(|(_, u)| *u == "count");
        let period_ns =
            p.period_type.as_ref().and_then(|t| ns_per(self.string(t.unit).ok()?)).map(|f| f * p.period as f64);
        let value_types = if scale.is_some() {
            let time = if types[weight].0 == "wall" { ValueType::WALL_NS } else { ValueType::CPU_NS };
            vec![ValueType::SAMPLES, time]
        } else {
            vec![ValueType::SAMPLES]
        };
        let two_columns = value_types.len() == 2;
        let mut b = ProfileBuilder::new(SourceFormat::Pprof, value_types);
        if scale.is_none() && types[weight].1 != "count" {
            b.warn(format!(
                "sample type {}/{} is not a time or a count: its values are shown as counts",
                types[weight].0, types[weight].1
            ));
        }
        if scale.is_some() && count.is_none() && period_ns.is_none_or(|p| p <= 0.0) {
            b.warn("no count sample type and no time period: every sample record counts as one sample".to_owned());
        }
        let mut builder = StackBuilder::new(self, b)?;
        // Summed per stack: memory follows the distinct stacks, not the sample records.
        let mut sums: Vec<[i64; 2]> = Vec::new();
        let mut emptied = 0usize;
        for (i, sample) in p.sample.iter().enumerate() {
            let value = |k: usize| {
                sample.value.get(k).copied().ok_or_else(|| {
                    self.error(format!(
                        "sample {i} has {} values but there are {} sample types",
                        sample.value.len(),
                        types.len()
                    ))
                })
            };
            let raw = value(weight)?;
            if raw < 0 || count.is_some_and(|c| sample.value.get(c).is_some_and(|v| *v < 0)) {
                return Err(self.error(format!(
                    "sample {i} has a negative value: differences of profiles (pprof -base) are not supported; use cpuprof diff on the two profiles"
                )));
            }
            let (samples, weight_value) = match scale {
                Some(scale) => {
                    let ns = (raw as f64 * scale).round() as i64;
                    let samples = match (count, period_ns) {
                        (Some(c), _) => value(c)?,
                        (None, Some(period)) if period > 0.0 => (ns as f64 / period).round() as i64,
                        _ => 1,
                    };
                    (samples, ns)
                }
                None => (raw, raw),
            };
            if samples == 0 && weight_value == 0 {
                continue;
            }
            let Some(stack) = builder.stack(i, &sample.location_id)? else {
                emptied += 1;
                continue;
            };
            if sums.len() <= stack.index() {
                sums.resize(stack.index() + 1, [0, 0]);
            }
            let sum = &mut sums[stack.index()];
            sum[0] = sum[0].saturating_add(samples);
            sum[1] = sum[1].saturating_add(weight_value);
        }
        let mut b = builder.finish();
        if emptied > 0 {
            b.warn(format!("{emptied} sample record(s) have no frames and were left out"));
        }
        let stacks: Vec<StackId> = b.stack_ids().collect();
        for (stack, [samples, weight_value]) in stacks.into_iter().zip(sums) {
            if samples != 0 || weight_value != 0 {
                if two_columns {
                    b.sample(stack, None, &[samples, weight_value]);
                } else {
                    b.sample(stack, None, &[weight_value]);
                }
            }
        }
        let start = (p.time_nanos != 0).then_some(p.time_nanos);
        let duration = (p.duration_nanos != 0).then_some(p.duration_nanos);
        b.timing(start, duration, period_ns.map(|p| p.round() as i64).filter(|p| *p > 0));
        b.finish().map_err(|e| ParseErrorKind::Model(e).at(self.origin, Span::None))
    }
}

/// Turns location-id lists into model stacks, with the frames of each location cached.
struct StackBuilder<'r, 'a> {
    reader: &'r Reader<'a>,
    b: ProfileBuilder,
    locations: FxHashMap<u64, &'a Location>,
    /// Frames of a location, root first (inlined callees last), with each frame's function name.
    location_frames: FxHashMap<u64, Vec<(FrameId, &'a str)>>,
    functions: FxHashMap<u64, (&'a pprof::protos::Function, Option<cpuprof_model::FuncId>)>,
    mappings: FxHashMap<u64, &'a str>,
    drop: Option<regex::Regex>,
    keep: Option<regex::Regex>,
    frames: Vec<(FrameId, &'a str)>,
}

impl<'r, 'a> StackBuilder<'r, 'a> {
    fn new(reader: &'r Reader<'a>, mut b: ProfileBuilder) -> Result<Self, ParseError> {
        let p = reader.proto;
        let mut locations = FxHashMap::default();
        for l in &p.location {
            if l.id == 0 || locations.insert(l.id, l).is_some() {
                return Err(reader.error(format!("location id {} is zero or appears twice", l.id)));
            }
        }
        let mut functions = FxHashMap::default();
        for f in &p.function {
            if f.id == 0 || functions.insert(f.id, (f, None)).is_some() {
                return Err(reader.error(format!("function id {} is zero or appears twice", f.id)));
            }
        }
        let mut mappings = FxHashMap::default();
        for m in &p.mapping {
            mappings.insert(m.id, reader.string(m.filename)?);
        }
        let mut regex = |index: i64, what: &str| -> Result<Option<regex::Regex>, ParseError> {
            let pattern = reader.string(index)?;
            if pattern.is_empty() {
                return Ok(None);
            }
            match regex::Regex::new(&format!("^(?:{pattern})$")) {
                Ok(re) => Ok(Some(re)),
                Err(e) => {
                    b.warn(format!("{what} `{pattern}` is not a regular expression cpuprof reads ({e}); not applied"));
                    Ok(None)
                }
            }
        };
        let drop = regex(p.drop_frames, "drop_frames")?;
        let keep = regex(p.keep_frames, "keep_frames")?;
        Ok(Self {
            reader,
            b,
            locations,
            location_frames: FxHashMap::default(),
            functions,
            mappings,
            drop,
            keep,
            frames: Vec::new(),
        })
    }

    /// The stack of sample `index` (`None` when drop_frames leaves nothing).
    fn stack(&mut self, index: usize, location_ids: &[u64]) -> Result<Option<StackId>, ParseError> {
        let mut frames = std::mem::take(&mut self.frames);
        frames.clear();
        for id in location_ids.iter().rev() {
            if !self.location_frames.contains_key(id) {
                let location = *self.locations.get(id).ok_or_else(|| {
                    self.reader
                        .error(format!("sample {index} refers to location {id}, which the profile does not have"))
                })?;
                let built = self.location(location)?;
                self.location_frames.insert(*id, built);
            }
            frames.extend_from_slice(&self.location_frames[id]);
        }
        if let Some(drop) = &self.drop {
            let keep = |name: &str| self.keep.as_ref().is_some_and(|k| k.is_match(name));
            let dropped = |name: &str| drop.is_match(name.strip_prefix('.').unwrap_or(name)) && !keep(name);
            // As pprof: frames at the root before the first one that stays are never dropped.
            if let Some(first_kept) = frames.iter().position(|(_, name)| !dropped(name)) {
                if let Some(at) = frames[first_kept..].iter().position(|(_, name)| dropped(name)) {
                    frames.truncate(first_kept + at);
                }
            }
        }
        let mut stack = None;
        for (frame, _) in &frames {
            let next = self.b.stack(stack, *frame);
            // Stacks are numbered from 0 as they are added.
            if next.index() >= self.reader.max_stacks {
                let kind = ParseErrorKind::too_many("the profile", self.reader.max_stacks, "distinct stacks");
                return Err(kind.at(self.reader.origin, Span::None));
            }
            stack = Some(next);
        }
        self.frames = frames;
        Ok(stack)
    }

    /// A location's frames, root first.
    fn location(&mut self, location: &'a Location) -> Result<Vec<(FrameId, &'a str)>, ParseError> {
        if location.line.is_empty() {
            let file = self.mappings.get(&location.mapping_id).copied().unwrap_or("");
            let name = self.b.intern(&format!("0x{:x}", location.address));
            let file = if file.is_empty() { StrId::EMPTY } else { self.b.intern(file) };
            let kind = if file == StrId::EMPTY { FuncKind::Unknown } else { FuncKind::SharedLib };
            let func = self.b.func(Func { name, file, line: None, column: None, kind, tier: None, library: None });
            return Ok(vec![(self.b.frame(Frame { func, line: None, column: None }), "")]);
        }
        let mut out = Vec::with_capacity(location.line.len());
        for line in location.line.iter().rev() {
            let id = line.function_id;
            let (function, cached) = *self.functions.get(&id).ok_or_else(|| {
                self.reader
                    .error(format!("location {} refers to function {id}, which the profile does not have", location.id))
            })?;
            let name = self.reader.string(function.name)?;
            let func = if let Some(func) = cached {
                func
            } else {
                let file = self.reader.string(function.filename)?;
                let func = Func {
                    name: self.b.intern(name),
                    file: if file.is_empty() { StrId::EMPTY } else { self.b.intern(file) },
                    line: u32::try_from(function.start_line).ok().filter(|l| *l > 0),
                    column: None,
                    kind: classify(name, file),
                    tier: None,
                    library: None,
                };
                let func = self.b.func(func);
                self.functions.insert(id, (function, Some(func)));
                func
            };
            let line = u32::try_from(line.line).ok().filter(|l| *l > 0);
            out.push((self.b.frame(Frame { func, line, column: None }), name));
        }
        Ok(out)
    }

    fn finish(self) -> ProfileBuilder {
        self.b
    }
}

/// The kind of a pprof function: V8's meta frames by name, code by having a file.
fn classify(name: &str, file: &str) -> FuncKind {
    match (name, file.is_empty()) {
        ("(root)", true) => FuncKind::Root,
        ("(program)", true) => FuncKind::Program,
        ("(idle)", true) => FuncKind::Idle,
        ("(garbage collector)", true) => FuncKind::Gc,
        (_, true) => FuncKind::Native,
        (_, false) => FuncKind::Js,
    }
}
