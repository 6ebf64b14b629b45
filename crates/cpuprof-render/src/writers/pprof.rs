//! The model as a pprof `profile.proto` (for `go tool pprof`, Pyroscope, Parca), gzipped.
//!
//! Sample types `samples/count` and `cpu/nanoseconds` — `wall/nanoseconds` when the profile
//! has `(idle)` time, as V8 profiles of idle processes do — with the period and duration set.
//! One function per model function (name, file, start line), one location per frame (its line
//! and column: the sampled ones when the format has them, else the function's start), one
//! sample per stack, or per line of its leaf where the stack has line hits (a `.cpuprofile`'s
//! positionTicks: the leaf's location at each line, its part of the weights as `annotate`
//! splits them). The same profile always gives the same bytes.

use std::collections::HashMap;

use cpuprof_analysis::Amount;
use cpuprof_model::{FuncKind, Profile, SourceFormat, ValueKind, ValueUnit};
use pprof::protos::{Function, Message, Profile as Proto, Sample, ValueType};
#[cfg(test)]
use pprof::protos::{Line, Location};

/// Encodes `profile` as pprof; gzipped unless `gzip` is false.
pub fn render_pprof(profile: &Profile, gzip: bool) -> Vec<u8> {
    let (proto, locations) = to_proto(profile);
    let mut bytes = proto.encode_to_vec();
    // The locations follow the other fields: a repeated field's elements may come anywhere in a
    // message, and decoders (prost, Go's profile package, protobufjs) append them in order.
    for location in &locations {
        location.encode(&mut bytes);
    }
    if gzip {
        crate::gzip(&bytes)
    } else {
        bytes
    }
}

/// Interns strings into a pprof string table (index 0 is the empty string).
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings::default();
        s.get("");
        s
    }

    fn get(&mut self, text: &str) -> i64 {
        if let Some(i) = self.index.get(text) {
            return *i;
        }
        let i = self.table.len() as i64;
        self.table.push(text.to_owned());
        self.index.insert(text.to_owned(), i);
        i
    }
}

/// The profile without its locations, and the locations (see [`LocationOut`]).
fn to_proto(profile: &Profile) -> (Proto, Vec<LocationOut>) {
    let mut strings = Strings::new();
    let count_column = profile.value_index(ValueUnit::Count);
    let time_column = profile.value_index(ValueUnit::Nanoseconds);

    // Weights per stack (the model may hold several rows per stack, or one per sample).
    let mut per_stack: Vec<[i64; 2]> = vec![[0, 0]; profile.stacks.len()];
    let column = |k: Option<usize>| k.map(|k| profile.samples.values(k));
    let (counts, times) = (column(count_column), column(time_column));
    let mut idle = false;
    for (row, stack) in profile.samples.stacks().iter().enumerate() {
        let sum = &mut per_stack[stack.index()];
        sum[0] = sum[0].saturating_add(counts.map_or(1, |c| c[row]));
        sum[1] = sum[1].saturating_add(times.map_or(0, |t| t[row]));
        idle |= profile.funcs[profile.func_of(*stack)].kind == FuncKind::Idle;
    }
    // Wall time where the profile says so and it matters: idle time in it, or a pprof wall profile.
    let wall = time_column.is_some_and(|k| profile.value_types[k].kind == ValueKind::Wall);
    let time_kind =
        if wall && (idle || profile.meta.format == SourceFormat::Pprof) { ValueKind::Wall } else { ValueKind::Cpu };
    let count_type = ValueType { ty: strings.get("samples"), unit: strings.get("count") };
    let mut sample_type = vec![count_type.clone()];
    let time_type = ValueType { ty: strings.get(time_kind.as_str()), unit: strings.get("nanoseconds") };
    if times.is_some() {
        sample_type.push(time_type.clone());
    }

    let function = profile
        .funcs
        .as_slice()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            // Nameless functions are `(anonymous)`, as `top`, DevTools and node's pprof writers
            // name them.
            let name = f.display_name(&profile.strings);
            let name = strings.get(if name.is_empty() { "(anonymous)" } else { &name });
            Function {
                id: i as u64 + 1,
                name,
                system_name: name,
                filename: strings.get(profile.func_file(f)),
                start_line: f.line.map_or(0, i64::from),
            }
        })
        .collect();
    let location: Vec<LocationOut> = profile
        .frames
        .as_slice()
        .iter()
        .enumerate()
        .map(|(i, frame)| {
            // The frame's line and column, else the function's (they go together).
            let func = &profile.funcs[frame.func];
            let (line, column) = match frame.line {
                Some(line) => (line, frame.column),
                None => (func.line.unwrap_or(0), func.line.and(func.column)),
            };
            LocationOut {
                id: i as u64 + 1,
                function_id: frame.func.index() as u64 + 1,
                line: i64::from(line),
                column: column.map_or(0, i64::from),
            }
        })
        .collect();
    let mut location = location;
    // A leaf without its line whose stack has line hits (a `.cpuprofile`'s positionTicks): one
    // sample per line, its part of the stack's weights split as `annotate` splits them, at a
    // location of the function at that line (made once per function and line).
    let mut at_line: HashMap<(u64, u32), u64> = HashMap::new();
    let mut sample = Vec::new();
    for (stack, [count, time]) in profile.stacks.ids().zip(per_stack) {
        if count == 0 && time == 0 {
            continue;
        }
        // Leaf first, as pprof wants.
        let location_id: Vec<u64> = profile.stacks.walk(stack).map(|frame| frame.index() as u64 + 1).collect();
        let frame = &profile.frames[profile.stacks.frame(stack)];
        let parts = if frame.line.is_none() {
            cpuprof_analysis::self_lines(profile, stack, Amount { weight: time, samples: count })
        } else {
            Vec::new()
        };
        if parts.is_empty() {
            let value = if times.is_some() { vec![count, time] } else { vec![count] };
            sample.push(Sample { location_id, value, label: Vec::new() });
            continue;
        }
        let function_id = frame.func.index() as u64 + 1;
        for (line, part) in parts {
            let next = location.len() as u64 + 1;
            let id = *at_line.entry((function_id, line)).or_insert_with(|| {
                location.push(LocationOut { id: next, function_id, line: i64::from(line), column: 0 });
                next
            });
            let mut ids = location_id.clone();
            ids[0] = id;
            let value = if times.is_some() { vec![part.samples, part.weight] } else { vec![part.samples] };
            sample.push(Sample { location_id: ids, value, label: Vec::new() });
        }
    }
    let period = profile.meta.interval_ns.unwrap_or(0);
    let proto = Proto {
        default_sample_type: if times.is_some() { time_type.ty } else { 0 },
        sample_type,
        sample,
        function,
        duration_nanos: profile.meta.duration_ns.unwrap_or(0),
        period_type: Some(if times.is_some() { time_type } else { count_type }),
        period: if times.is_some() { period } else { 1 },
        string_table: strings.table,
        ..Proto::default()
    };
    (proto, location)
}

/// A `Location` with one `Line`, encoded here rather than with the `pprof` crate's generated
/// types: they predate `Line.column` (field 3, added to profile.proto in 2023), which keeps
/// functions of a minified file that share a name, file and line apart. Readers that predate it
/// skip the field, as protobuf readers skip any unknown field.
struct LocationOut {
    id: u64,
    function_id: u64,
    line: i64,
    column: i64,
}

impl LocationOut {
    /// Appends the location as field 4 of `Profile`, in the layout prost gives it.
    fn encode(&self, out: &mut Vec<u8>) {
        let mut line = Vec::with_capacity(24);
        field_varint(&mut line, 1, self.function_id);
        field_varint(&mut line, 2, self.line as u64);
        field_varint(&mut line, 3, self.column as u64);
        let mut location = Vec::with_capacity(32);
        field_varint(&mut location, 1, self.id);
        field_bytes(&mut location, 4, &line);
        field_bytes(out, 4, &location);
    }
}

/// A varint field, left out when 0 (proto3's default).
fn field_varint(out: &mut Vec<u8>, field: u64, value: u64) {
    if value != 0 {
        varint(out, field << 3);
        varint(out, value);
    }
}

/// A length-delimited field.
fn field_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-encoded location decodes with prost's generated types as the same location
    /// (the column aside, which they do not know), and the bytes are protobuf's by hand.
    #[test]
    fn locations_decode_with_the_generated_types() {
        let out = LocationOut { id: 300, function_id: 2, line: 1, column: 1547 };
        let mut bytes = Vec::new();
        out.encode(&mut bytes);
        // field 4 (0x22), 12 bytes: id 300 (08 ac 02), line (22, 7 bytes): function 2 (08 02),
        // line 1 (10 01), column 1547 (18 8b 0c).
        assert_eq!(bytes, [0x22, 12, 0x08, 0xac, 0x02, 0x22, 7, 0x08, 2, 0x10, 1, 0x18, 0x8b, 0x0c]);
        let proto = Proto::decode(bytes.as_slice()).unwrap();
        let want = Location { id: 300, line: vec![Line { function_id: 2, line: 1 }], ..Location::default() };
        assert_eq!(proto.location, vec![want]);
    }
}
