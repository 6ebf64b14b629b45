//! pprof `profile.proto` input: what `go tool pprof`, Pyroscope, Parca and `@datadog/pprof`
//! read and write. Decoded with the `pprof` crate's pre-generated prost types.
//!
//! - **Weight.** One time column is read (the one [`ParseOptions::sample_type`] names, else the file's
//!   `default_sample_type` when it is a time, else `cpu`, `wall` or any other type measured in
//!   time, converted to ns), and one count column (the first type whose unit is `count`; without
//!   one, the time divided by `period` when the period is a time a sampler takes samples at —
//!   10 µs or more — and no record holds less than half of it; else one per sample record, a
//!   column of [`ValueKind::Records`](cpuprof_model::ValueKind::Records), as Pyroscope's JFR
//!   conversions with `wall/nanoseconds` and period 1 need: their times over the period would
//!   be counts invented from nanoseconds).
//! - **Duration.** `duration_nanos` of three years or more is a timestamp, not a length: it is
//!   read as the end of the recording when `time_nanos` is its start (and that gives less),
//!   else dropped, with a warning either way. So is a negative one.
//!   A profile with no time (heap, locks) is read by one column as counts, the one `go tool
//!   pprof` shows by default (`default_sample_type`, else the last type), with a warning that
//!   names it.
//! - **Stacks.** `location_id[0]` is the leaf; a location's `line`s list inlined callees
//!   first, so a stack root first is the locations reversed, each one's lines reversed. A
//!   location without lines is a frame named by its address (and its mapping's file).
//! - **Functions.** `name`, `filename` and `start_line` (1-based); the sampled line of each
//!   frame is its `Line.line`, its column `Line.column` (field 3, added to profile.proto in 2023
//!   and read off the wire, as the generated types lack it). A function's column is the column
//!   of a line at its start line, so functions of a minified file that differ only by column
//!   stay apart. The V8 meta names `(root)`, `(program)`, `(idle)` and `(garbage collector)`
//!   without a file get their meta kinds; frames whose file is a script (`.js`, `.ts`, …,
//!   `node:…`, a URL) are JavaScript; all others (Go, Rust, Java, Python, .NET, no file) native.
//! - **`drop_frames` / `keep_frames`** are applied much as `go tool pprof` applies them when
//!   it loads a profile: scanning each stack from the root, past the frames that would be
//!   dropped before the first that stays, the first frame whose function name fully matches
//!   `drop_frames` (and not `keep_frames`) is removed with all its callees. Unlike pprof this
//!   works per frame, not per location, and matches names as they are (pprof first strips
//!   C++ argument lists).

use std::io::Read;

use cpuprof_model::{
    Frame, FrameId, Func, FuncKind, Profile, ProfileBuilder, Setting, SourceFormat, StackId, StrId, ValueType, Warning,
};
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
    let columns = line_columns(&bytes);
    drop(bytes);
    Reader { proto: &proto, origin, max_stacks: limits.stacks, columns }.read(options)
}

/// The `Line.column`s of each location that has one, by location id, in the order of its
/// lines (0 where a line has none). profile.proto gained `Line.column` (field 3) in 2023; the
/// generated types cpuprof decodes with predate it, so the columns are read off the wire here.
fn line_columns(message: &[u8]) -> FxHashMap<u64, Vec<i64>> {
    let mut columns = FxHashMap::default();
    for (field, value) in Fields(message) {
        let (4, Value::Bytes(location)) = (field, value) else { continue };
        let (mut id, mut lines, mut any) = (0, Vec::new(), false);
        for (field, value) in Fields(location) {
            match (field, value) {
                (1, Value::Number(n)) => id = n,
                (4, Value::Bytes(line)) => {
                    let column = Fields(line)
                        .filter_map(|(field, value)| match (field, value) {
                            // An int64: negative columns (none are valid) wrap around.
                            (3, Value::Number(n)) => Some(n as i64),
                            _ => None,
                        })
                        .last()
                        .unwrap_or(0);
                    any |= column != 0;
                    lines.push(column);
                }
                _ => {}
            }
        }
        if any {
            columns.insert(id, lines);
        }
    }
    columns
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
    Number(u64),
    /// A length-delimited value: a message, a string or packed numbers.
    Bytes(&'a [u8]),
}

impl Value<'_> {
    /// How many numbers the value holds: one, or as many varints as are packed in it.
    fn numbers(self) -> usize {
        match self {
            Value::Number(_) => 1,
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
            0 => varint(&mut self.0).map(Value::Number),
            1 => self.0.get(8..).map(|rest| {
                let value = u64::from_le_bytes(self.0[..8].try_into().unwrap_or_default());
                self.0 = rest;
                Value::Number(value)
            }),
            2 => {
                let len = usize::try_from(varint(&mut self.0)?).ok()?;
                let (bytes, rest) = (self.0.get(..len)?, self.0.get(len..)?);
                self.0 = rest;
                Some(Value::Bytes(bytes))
            }
            5 => self.0.get(4..).map(|rest| {
                let value = u32::from_le_bytes(self.0[..4].try_into().unwrap_or_default());
                self.0 = rest;
                Value::Number(u64::from(value))
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
    /// `Line.column`s by location id (see [`line_columns`]).
    columns: FxHashMap<u64, Vec<i64>>,
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
        // Why the weight is the column it is, when the file has no time to read.
        let mut picked = "";
        let weight = if let Some(wanted) = &options.sample_type {
            picked = "as asked";
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
                .unwrap_or_else(|| {
                    // No time at all (a heap or lock profile): as go tool pprof, the
                    // default_sample_type, else the last type.
                    if let Some(i) = types.iter().position(|(t, _)| !default.is_empty() && *t == default) {
                        picked = "the file's default_sample_type";
                        i
                    } else {
                        picked = "the last type, as go tool pprof picks";
                        types.len() - 1
                    }
                })
        };
        let scale = ns_per(types[weight].1);
        let count = types.iter().position(|(_, u)| *u == "count");
        let period_ns =
            p.period_type.as_ref().and_then(|t| ns_per(self.string(t.unit).ok()?)).map(|f| f * p.period as f64);
        // The period as a sampling interval: one no sampler goes below is not one.
        let interval_ns = period_ns.filter(|p| *p >= MIN_PERIOD_NS);
        // Samples as time over the period: only where no record would hold less than half a
        // sample (a period of 1 s over records of 10 ms is not the interval samples were taken at).
        let per_period = match (scale, count) {
            (Some(scale), None) => interval_ns.filter(|period| {
                p.sample
                    .iter()
                    .all(|s| s.value.get(weight).is_none_or(|v| *v <= 0 || *v as f64 * scale >= period / 2.0))
            }),
            _ => None,
        };
        let records = scale.is_some() && count.is_none() && per_period.is_none();
        let value_types = if scale.is_some() {
            let time = if types[weight].0 == "wall" { ValueType::WALL_NS } else { ValueType::CPU_NS };
            vec![if records { ValueType::RECORDS } else { ValueType::SAMPLES }, time]
        } else {
            vec![ValueType::SAMPLES]
        };
        let two_columns = value_types.len() == 2;
        let mut b = ProfileBuilder::new(SourceFormat::Pprof, value_types);
        if scale.is_none() {
            // Said every time: the report shows the values as samples, and they may be bytes.
            let (ty, unit) = types[weight];
            let what = if unit == "count" { String::new() } else { format!(" (its {unit} are shown as samples)") };
            // The types named, up to a handful (a file can list thousands).
            let mut of: Vec<String> = types.iter().take(6).map(|(t, u)| format!("{t}/{u}")).collect();
            if types.len() > of.len() {
                of.push(format!("and {} more", types.len() - of.len()));
            }
            let why = if types.len() > 1 { format!(": {picked}, of {}", of.join(", ")) } else { String::new() };
            b.warn(Warning::with_setting(
                format!("not a CPU profile: no sample type is a time; read sample type {ty}/{unit}{what}{why}"),
                Setting::SampleType,
            ));
        }
        if records {
            let period = match period_ns {
                Some(period) if period > 0.0 && period < MIN_PERIOD_NS => {
                    format!("a period of {} ns, shorter than any sampler's", thousands_f(period))
                }
                Some(period) if period > 0.0 => {
                    format!("a period of {} ns, longer than some records' time", thousands_f(period))
                }
                _ => "no time period".to_owned(),
            };
            b.warn(format!(
                "no count sample type and {period}: each of the file's {} sample records counts as one sample, \
                 so sample counts are records, not samples taken (diff tests no significance on them)",
                thousands(p.sample.len())
            ));
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
                    let samples = match (count, per_period) {
                        (Some(c), _) => value(c)?,
                        (None, Some(period)) => (ns as f64 / period).round() as i64,
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
        let duration = duration(p.time_nanos, p.duration_nanos, &mut b);
        // A period that gave no counts is no interval either.
        b.timing(start, duration, interval_ns.filter(|_| !records).map(|p| p.round() as i64));
        b.finish().map_err(|e| ParseErrorKind::Model(e).at(self.origin, Span::None))
    }
}

/// The shortest period read as a sampling interval (10 µs, 100 kHz): no sampler of a running
/// program takes samples faster, and `period` 1 with `nanoseconds` (Pyroscope's JFR
/// conversions) would make each nanosecond a sample.
const MIN_PERIOD_NS: f64 = 10_000.0;

/// From this many ns (over three years) a `duration_nanos` or `time_nanos` is a point in time
/// since 1970, not a length.
const TIMESTAMP_NS: i64 = 100_000_000_000_000_000;

/// The recording's length from `time_nanos` and `duration_nanos`: none when 0; a timestamp in
/// `duration_nanos` is read as the end of the recording when `time_nanos` is its start (both
/// timestamps, the end later by less than [`TIMESTAMP_NS`]), else dropped; negative ones are
/// dropped. Said in a warning when it is not the value as written.
fn duration(start: i64, duration: i64, b: &mut ProfileBuilder) -> Option<i64> {
    let hours = |ns: i64| format!("{} h", thousands_f(ns as f64 / 3.6e12));
    match duration {
        0 => None,
        d if d >= TIMESTAMP_NS && start >= TIMESTAMP_NS && d > start && d - start < TIMESTAMP_NS => {
            b.warn(format!(
                "duration_nanos ({d}) is a timestamp, not a length ({}): read as the end of the recording, \
                 which makes it {} ms from time_nanos",
                hours(d),
                thousands_f((d - start) as f64 / 1e6)
            ));
            Some(d - start)
        }
        d if !(0..TIMESTAMP_NS).contains(&d) => {
            let what = if d < 0 { "negative".to_owned() } else { format!("a timestamp, not a length ({})", hours(d)) };
            b.warn(format!("duration_nanos ({d}) is {what}: the recording's duration is unknown"));
            None
        }
        d => Some(d),
    }
}

/// `n` rounded, with thousands separators.
fn thousands_f(n: f64) -> String {
    let sign = if n < 0.0 { "-" } else { "" };
    format!("{sign}{}", thousands(n.abs().round() as usize))
}

/// Turns location-id lists into model stacks, with the frames of each location cached.
struct StackBuilder<'r, 'a> {
    reader: &'r Reader<'a>,
    b: ProfileBuilder,
    locations: FxHashMap<u64, &'a Location>,
    /// Frames of a location, root first (inlined callees last), with each frame's function name.
    location_frames: FxHashMap<u64, Vec<(FrameId, &'a str)>>,
    functions: FxHashMap<u64, (&'a pprof::protos::Function, Option<cpuprof_model::FuncId>)>,
    /// The column of each function that has one (see [`StackBuilder::new`]).
    function_columns: FxHashMap<u64, u32>,
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
                return Err(reader.error(id_error("location", l.id)));
            }
        }
        let mut functions = FxHashMap::default();
        for f in &p.function {
            if f.id == 0 || functions.insert(f.id, (f, None)).is_some() {
                return Err(reader.error(id_error("function", f.id)));
            }
        }
        // A function's column: profile.proto has no start column, so it is the column of a
        // line at the function's start line (the declaration, where cpuprof and V8 put it).
        let mut function_columns: FxHashMap<u64, u32> = FxHashMap::default();
        for l in &p.location {
            let Some(columns) = reader.columns.get(&l.id) else { continue };
            for (line, column) in l.line.iter().zip(columns) {
                let Some(column) = u32::try_from(*column).ok().filter(|c| *c > 0) else { continue };
                let start = functions.get(&line.function_id).map_or(0, |(f, _)| f.start_line);
                if start > 0 && line.line == start {
                    let known = function_columns.entry(line.function_id).or_insert(column);
                    *known = (*known).min(column);
                }
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
            function_columns,
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
        let columns = self.reader.columns.get(&location.id);
        for (j, line) in location.line.iter().enumerate().rev() {
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
                    column: self.function_columns.get(&id).copied(),
                    kind: classify(name, file),
                    tier: None,
                    library: None,
                };
                let func = self.b.func(func);
                self.functions.insert(id, (function, Some(func)));
                func
            };
            let line = u32::try_from(line.line).ok().filter(|l| *l > 0);
            let column = columns.and_then(|c| u32::try_from(*c.get(j)?).ok()).filter(|c| *c > 0 && line.is_some());
            out.push((self.b.frame(Frame { func, line, column }), name));
        }
        Ok(out)
    }

    fn finish(self) -> ProfileBuilder {
        self.b
    }
}

/// What is wrong with the id of a `what` that is 0 or not the first with its id.
fn id_error(what: &str, id: u64) -> String {
    if id == 0 {
        format!("a {what} has id 0, which profile.proto reserves (ids start at 1)")
    } else {
        format!("{what} id {id} appears twice")
    }
}

/// The kind of a pprof function: V8's meta frames by name; JavaScript when its file is a
/// script (see [`is_script`]); anything else is native (Go, Rust, C/C++, the JVM's, .NET's and
/// Python's frames in profiles of those runtimes), never JavaScript.
fn classify(name: &str, file: &str) -> FuncKind {
    match (name, file.is_empty()) {
        ("(root)", true) => FuncKind::Root,
        ("(program)", true) => FuncKind::Program,
        ("(idle)", true) => FuncKind::Idle,
        ("(garbage collector)", true) => FuncKind::Gc,
        (_, false) if is_script(file) => FuncKind::Js,
        _ => FuncKind::Native,
    }
}

/// Whether `file` names JavaScript a JS engine ran: any file but another language's (by its
/// extension: Go, assembly, Rust, C/C++, Objective-C, Swift, Python, JVM and .NET languages,
/// Ruby, PHP, …, and native binaries) and Go's `<autogenerated>`. Scripts come as paths, URLs,
/// Node.js modules (`node:fs`), pages with inline scripts (`.html`), Chrome's `extensions::…`,
/// so what is not JavaScript is the shorter list.
pub(crate) fn is_script(file: &str) -> bool {
    const OTHER: [&str; 50] = [
        "go", "s", "asm", "rs", "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "inc", "m", "mm", "swift",
        "py", "pyx", "pyi", "java", "kt", "kts", "scala", "groovy", "clj", "cs", "fs", "vb", "rb", "php", "pl", "pm",
        "lua", "erl", "ex", "exs", "zig", "d", "nim", "hs", "ml", "dart", "so", "dll", "dylib", "exe", "jar", "class",
        "o",
    ];
    if file.starts_with("node:") || file.starts_with("internal/") {
        return true;
    }
    if file == "<autogenerated>" {
        return false;
    }
    // The path of a URL, without its query or fragment.
    let path = file.split(['?', '#']).next().unwrap_or(file);
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    !extension.is_some_and(|e| OTHER.contains(&e.as_str()))
}

#[cfg(test)]
mod kind_tests {
    use super::{classify, is_script};
    use cpuprof_model::FuncKind;

    #[test]
    fn scripts_are_javascript_and_other_languages_native() {
        for file in [
            "/srv/app/index.js",
            "file:///srv/app/app.min.mjs",
            "node:internal/timers",
            "internal/process/task_queues.js",
            "webpack:///./src/App.tsx",
            "http://127.0.0.1:8081/worker.html",
            "https://example.com/",
            "extensions::SafeBuiltins",
            "https://cdn.example.com/app.js?v=3",
        ] {
            assert!(is_script(file), "{file}");
            assert_eq!(classify("f", file), FuncKind::Js, "{file}");
        }
        for file in [
            "/usr/local/go/src/runtime/proc.go",
            "/usr/local/go/src/runtime/sys_linux_amd64.s",
            "<autogenerated>",
            "main.py",
            "src/Program.cs",
            "alloc.rs",
            "C:\\src\\app\\Main.java",
            "/lib/x86_64-linux-gnu/libc.so",
        ] {
            assert!(!is_script(file), "{file}");
            assert_eq!(classify("f", file), FuncKind::Native, "{file}");
        }
        assert_eq!(classify("(program)", ""), FuncKind::Program);
        assert_eq!(classify("java/lang/Thread.sleep", ""), FuncKind::Native);
    }
}

#[cfg(test)]
mod read_tests {
    use cpuprof_model::{Setting, ValueType};
    use pprof::protos::{Function, Line, Location, Message, Profile as Proto, Sample, ValueType as Type};

    use crate::error::Origin;
    use crate::ParseOptions;

    /// A profile with functions `f` and `g` of `/a.js` (both at line 1), called `main → f` and
    /// `main → g`, with sample values `values[0]` and `values[1]` of `types`.
    fn two_stacks(types: &[(&str, &str)], values: [Vec<i64>; 2]) -> Proto {
        let mut strings: Vec<String> = vec![String::new()];
        let mut s = |text: &str| {
            strings.iter().position(|t| t == text).unwrap_or_else(|| {
                strings.push(text.to_owned());
                strings.len() - 1
            }) as i64
        };
        let sample_type = types.iter().map(|(t, u)| Type { ty: s(t), unit: s(u) }).collect();
        let file = s("/a.js");
        let function = ["main", "f", "g"]
            .iter()
            .enumerate()
            .map(|(i, name)| Function {
                id: i as u64 + 1,
                name: s(name),
                filename: file,
                start_line: 1,
                ..Function::default()
            })
            .collect();
        let location = (1..=3)
            .map(|id| Location { id, line: vec![Line { function_id: id, line: 1 }], ..Location::default() })
            .collect();
        let [a, b] = values;
        let sample = vec![
            Sample { location_id: vec![2, 1], value: a, label: vec![] },
            Sample { location_id: vec![3, 1], value: b, label: vec![] },
        ];
        Proto { sample_type, function, location, sample, string_table: strings, ..Proto::default() }
    }

    fn read(bytes: &[u8], options: &ParseOptions) -> cpuprof_model::Profile {
        super::parse(bytes, &Origin("t.pb".to_owned()), options).expect("reads")
    }

    /// Per function name, the values of the samples where it is the leaf.
    fn leaf_values(p: &cpuprof_model::Profile) -> Vec<(String, Vec<i64>)> {
        let mut out: Vec<(String, Vec<i64>)> = (0..p.samples.len())
            .map(|row| {
                let func = &p.funcs[p.func_of(p.samples.stacks()[row])];
                let values = (0..p.value_types.len()).map(|k| p.samples.values(k)[row]).collect();
                (p.strings.get(func.name).to_owned(), values)
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_profile_without_time_is_read_by_the_type_go_tool_pprof_shows_and_says_so() {
        let proto = two_stacks(&[("inuse_objects", "count"), ("inuse_space", "bytes")], [vec![3, 300], vec![1, 5000]]);
        let p = read(&proto.encode_to_vec(), &ParseOptions::default());
        assert_eq!(p.value_types, vec![ValueType::SAMPLES]);
        // The last type, bytes, as go tool pprof: 300 and 5000, not 3 and 1.
        assert_eq!(leaf_values(&p), vec![("f".to_owned(), vec![300]), ("g".to_owned(), vec![5000])]);
        let warning = &p.meta.warnings[0];
        assert_eq!(warning.setting, Some(Setting::SampleType));
        assert!(warning.message.contains("read sample type inuse_space/bytes"), "{}", warning.message);
        assert!(warning.message.contains("of inuse_objects/count, inuse_space/bytes"), "{}", warning.message);
        // default_sample_type wins over the last type.
        let mut proto = proto;
        proto.default_sample_type = 1; // the string `inuse_objects`
        let p = read(&proto.encode_to_vec(), &ParseOptions::default());
        assert_eq!(leaf_values(&p), vec![("f".to_owned(), vec![3]), ("g".to_owned(), vec![1])]);
        assert!(p.meta.warnings[0].message.contains("default_sample_type"), "{}", p.meta.warnings[0].message);
        // A time type is read as time, with no word.
        let proto = two_stacks(&[("samples", "count"), ("cpu", "nanoseconds")], [vec![3, 30], vec![1, 10]]);
        let p = read(&proto.encode_to_vec(), &ParseOptions::default());
        assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
        assert_eq!(leaf_values(&p), vec![("f".to_owned(), vec![3, 30]), ("g".to_owned(), vec![1, 10])]);
    }

    #[test]
    fn times_without_counts_are_records_unless_the_period_is_a_sampling_interval() {
        let read_with = |period: i64, unit: &str, values: [i64; 2]| {
            let mut proto = two_stacks(&[("wall", "nanoseconds")], [vec![values[0]], vec![values[1]]]);
            let (ty, unit_index) = (proto.string_table.len() as i64, proto.string_table.len() as i64 + 1);
            proto.string_table.extend(["wall".to_owned(), unit.to_owned()]);
            proto.period_type = Some(Type { ty, unit: unit_index });
            proto.period = period;
            read(&proto.encode_to_vec(), &ParseOptions::default())
        };
        // 10 ms a sample: 3 and 1 samples.
        let p = read_with(10, "milliseconds", [30_000_000, 10_000_000]);
        assert_eq!(p.value_types, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
        assert_eq!(leaf_values(&p), vec![("f".to_owned(), vec![3, 30_000_000]), ("g".to_owned(), vec![1, 10_000_000])]);
        assert_eq!(p.meta.interval_ns, Some(10_000_000));
        // 1 ns (below 10 µs), and 1 s over records of 10 ms: one a record, and no interval.
        for (period, unit) in [(1, "nanoseconds"), (1, "seconds")] {
            let p = read_with(period, unit, [30_000_000, 10_000_000]);
            assert_eq!(p.value_types, vec![ValueType::RECORDS, ValueType::WALL_NS], "{period} {unit}");
            assert_eq!(
                leaf_values(&p),
                vec![("f".to_owned(), vec![1, 30_000_000]), ("g".to_owned(), vec![1, 10_000_000])]
            );
            assert_eq!(p.meta.interval_ns, None);
            assert!(p.meta.warnings[0].message.contains("sample counts are records"), "{:?}", p.meta.warnings);
        }
    }

    #[test]
    fn a_timestamp_in_duration_nanos_is_the_end_or_nothing() {
        let start = 1_708_077_600_000_000_000;
        for (time, duration, read) in [
            (start, 2_000_000_000, Some(2_000_000_000)),
            (start, start + 2_000_000_000, Some(2_000_000_000)),
            (start, start - 1, None),
            (0, start, None),
            (start, -5, None),
            (start, 0, None),
        ] {
            let mut proto = two_stacks(&[("samples", "count")], [vec![3], vec![1]]);
            proto.time_nanos = time;
            proto.duration_nanos = duration;
            let p =
                super::parse(proto.encode_to_vec().as_slice(), &Origin("t.pb".to_owned()), &ParseOptions::default())
                    .expect("reads");
            assert_eq!(p.meta.duration_ns, read, "{time} {duration}");
            let warned = p.meta.warnings.iter().any(|w| w.message.starts_with("duration_nanos ("));
            assert_eq!(warned, read != Some(duration) && duration != 0, "{time} {duration}: {:?}", p.meta.warnings);
        }
    }

    /// Appends to `bytes` a location `id` with one line of function `function`, at `line` and `column`.
    fn location_with_column(bytes: &mut Vec<u8>, id: u8, function: u8, line: u8, column: u8) {
        // Line { function_id (1), line (2), column (3) } inside Location { id (1), line (4) },
        // field 4 of Profile; all numbers below 128 are one-byte varints.
        let line = [0x08, function, 0x10, line, 0x18, column];
        let mut location = vec![0x08, id, 0x22, line.len() as u8];
        location.extend_from_slice(&line);
        bytes.extend_from_slice(&[0x22, location.len() as u8]);
        bytes.extend_from_slice(&location);
    }

    #[test]
    fn line_columns_keep_functions_of_one_line_apart() {
        // `f` and `g`, renamed `e`: one name, one file, one line; columns 10 and 20.
        let mut proto = two_stacks(&[("samples", "count")], [vec![3], vec![1]]);
        let e = proto.string_table.len() as i64;
        proto.string_table.push("e".to_owned());
        proto.function[1].name = e;
        proto.function[2].name = e;
        let without = proto.location.split_off(1);
        let mut bytes = proto.encode_to_vec();
        // Without columns the two are one function.
        let mut plain = proto.clone();
        plain.location.extend(without);
        let p = read(&plain.encode_to_vec(), &ParseOptions::default());
        assert_eq!(p.funcs.len(), 2, "main and e");
        location_with_column(&mut bytes, 2, 2, 1, 10);
        location_with_column(&mut bytes, 3, 3, 1, 20);
        let p = read(&bytes, &ParseOptions::default());
        assert_eq!(p.funcs.len(), 3, "main and two e");
        let mut columns: Vec<(Option<u32>, i64)> = (0..p.samples.len())
            .map(|row| (p.funcs[p.func_of(p.samples.stacks()[row])].column, p.samples.values(0)[row]))
            .collect();
        columns.sort();
        assert_eq!(columns, vec![(Some(10), 3), (Some(20), 1)]);
    }
}
