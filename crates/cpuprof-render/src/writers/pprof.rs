//! The model as a pprof `profile.proto` (for `go tool pprof`, Pyroscope, Parca), gzipped.
//!
//! Sample types `samples/count` and `cpu/nanoseconds` — `wall/nanoseconds` when the profile
//! has `(idle)` time, as V8 profiles of idle processes do — with the period and duration set.
//! One function per model function (name, file, start line), one location per frame (its line:
//! the sampled line when the format has one, else the function's start line), one sample per
//! stack. The same profile always gives the same bytes.

use std::collections::HashMap;

use cpuprof_model::{FuncKind, Profile, SourceFormat, ValueKind, ValueUnit};
use pprof::protos::{Function, Line, Location, Message, Profile as Proto, Sample, ValueType};

/// Encodes `profile` as pprof; gzipped unless `gzip` is false.
pub fn render_pprof(profile: &Profile, gzip: bool) -> Vec<u8> {
    let proto = to_proto(profile);
    let bytes = proto.encode_to_vec();
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

fn to_proto(profile: &Profile) -> Proto {
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
    let location = profile
        .frames
        .as_slice()
        .iter()
        .enumerate()
        .map(|(i, frame)| {
            let line = frame.line.or(profile.funcs[frame.func].line).map_or(0, i64::from);
            Location {
                id: i as u64 + 1,
                line: vec![Line { function_id: frame.func.index() as u64 + 1, line }],
                ..Location::default()
            }
        })
        .collect();
    let mut sample = Vec::new();
    for (stack, [count, time]) in profile.stacks.ids().zip(per_stack) {
        if count == 0 && time == 0 {
            continue;
        }
        // Leaf first, as pprof wants.
        let location_id = profile.stacks.walk(stack).map(|frame| frame.index() as u64 + 1).collect();
        let value = if times.is_some() { vec![count, time] } else { vec![count] };
        sample.push(Sample { location_id, value, label: Vec::new() });
    }
    let period = profile.meta.interval_ns.unwrap_or(0);
    Proto {
        default_sample_type: if times.is_some() { time_type.ty } else { 0 },
        sample_type,
        sample,
        location,
        function,
        duration_nanos: profile.meta.duration_ns.unwrap_or(0),
        period_type: Some(if times.is_some() { time_type } else { count_type }),
        period: if times.is_some() { period } else { 1 },
        string_table: strings.table,
        ..Proto::default()
    }
}
