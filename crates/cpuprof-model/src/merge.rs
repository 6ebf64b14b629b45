//! Several profiles as one: workers of one process, or repeated runs of the same work.

use crate::{Profile, ProfileBuilder, ValueType, ValueUnit};

/// Merges `profiles` into one whose totals are the sums of theirs. Functions, frames and
/// stacks that are equal by content become one. The value columns are a count and, when
/// every input has one, a time (ns). Per-sample timestamps and VM states are dropped (inputs
/// come from different clocks), so are line hits. The format is the first input's; the
/// start is the earliest, the duration the longest, warnings are kept.
pub fn merge(profiles: &[&Profile]) -> Result<Profile, crate::ModelError> {
    let time_in_all = profiles.iter().all(|p| p.value_index(ValueUnit::Nanoseconds).is_some());
    let time_type = profiles
        .first()
        .and_then(|p| p.value_types.iter().find(|t| t.unit == ValueUnit::Nanoseconds).copied())
        .filter(|_| time_in_all);
    let value_types: Vec<ValueType> = std::iter::once(ValueType::SAMPLES).chain(time_type).collect();
    let format = profiles.first().map_or(crate::SourceFormat::CpuProfile, |p| p.meta.format);
    let mut b = ProfileBuilder::new(format, value_types);
    let mut values = Vec::with_capacity(2);
    for p in profiles {
        let stacks = b.copy_stacks(p, |b, frame| {
            let frame = p.frames[frame];
            let mut func = p.funcs[frame.func];
            func.name = b.intern(p.strings.get(func.name));
            func.file = b.intern(p.strings.get(func.file));
            func.library = func.library.map(|l| b.copy_library(p, l));
            let func = b.func(func);
            b.frame(crate::Frame { func, ..frame })
        });
        let counts = p.value_index(ValueUnit::Count).map(|k| p.samples.values(k));
        let times = p.value_index(ValueUnit::Nanoseconds).map(|k| p.samples.values(k));
        for (row, stack) in p.samples.stacks().iter().enumerate() {
            values.clear();
            values.push(counts.map_or(1, |c| c[row]));
            if time_type.is_some() {
                values.push(times.map_or(0, |t| t[row]));
            }
            b.sample(stacks[stack.index()], None, &values);
        }
        for warning in &p.meta.warnings {
            b.warn(warning.clone());
        }
    }
    let start = profiles.iter().filter_map(|p| p.meta.start_ns).min();
    let duration = profiles.iter().filter_map(|p| p.meta.duration_ns).max();
    let interval = profiles.first().and_then(|p| p.meta.interval_ns);
    b.timing(start, duration, interval);
    b.finish()
}
