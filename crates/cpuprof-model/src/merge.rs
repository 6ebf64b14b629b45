//! Several profiles as one: workers of one process, or repeated runs of the same work.

use crate::{Profile, ProfileBuilder, ValueType, ValueUnit};

/// Merges `profiles` into one whose totals are the sums of theirs. Functions, frames and
/// stacks that are equal by content become one. The value columns are a count and, when
/// every input has one, a time (ns). Per-sample timestamps are dropped (inputs come from
/// different clocks), so are line hits; VM states are kept when every input has them. The
/// format is the first input's; the start is the earliest, warnings are kept, and the duration
/// is the time the recordings cover (the union of their spans where they share a clock, each
/// one's length where not), so that a merge's totals are shares of it.
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
    let with_states = profiles.iter().all(|p| p.samples.vm_state.is_some());
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
            match p.samples.vm_state.as_ref().filter(|_| with_states).and_then(|s| s.get(row)) {
                Some(state) => b.sample_in_state(stacks[stack.index()], None, &values, *state),
                None => b.sample(stacks[stack.index()], None, &values),
            }
        }
        for warning in &p.meta.warnings {
            b.warn(warning.clone());
        }
    }
    let start = profiles.iter().filter_map(|p| p.meta.start_ns).min();
    let duration = covered_ns(profiles);
    let interval = profiles.first().and_then(|p| p.meta.interval_ns);
    b.timing(start, duration, interval);
    b.finish()
}

/// The time `profiles`' recordings cover: the length of the union of their spans on their
/// clock (a `.cpuprofile`'s is the machine's monotonic clock), so that workers recorded at once
/// count their shared time once and runs recorded one after another count each; a recording
/// whose start is unknown, or on a clock of its own process (a tick log's starts at 0), adds
/// its length. `None` when no input knows its length.
fn covered_ns(profiles: &[&Profile]) -> Option<i64> {
    let mut spans: Vec<(i64, i64)> = Vec::new();
    let mut apart = 0i64;
    for p in profiles {
        match (p.meta.start_ns, p.meta.duration_ns) {
            (Some(start), Some(length)) if !own_clock(p.meta.format) => {
                spans.push((start, start.saturating_add(length.max(0))));
            }
            (_, Some(length)) => apart = apart.saturating_add(length.max(0)),
            _ => {}
        }
    }
    if spans.is_empty() && profiles.iter().all(|p| p.meta.duration_ns.is_none()) {
        return None;
    }
    spans.sort_unstable();
    let mut covered = apart;
    let mut current: Option<(i64, i64)> = None;
    for (from, to) in spans {
        current = match current {
            Some((a, b)) if from <= b => Some((a, b.max(to))),
            Some((a, b)) => {
                covered = covered.saturating_add(b.saturating_sub(a));
                Some((from, to))
            }
            None => Some((from, to)),
        };
    }
    if let Some((a, b)) = current {
        covered = covered.saturating_add(b.saturating_sub(a));
    }
    Some(covered)
}

/// Formats whose times count from their own process's start: recordings of two runs overlap on
/// it whenever they were made.
fn own_clock(format: crate::SourceFormat) -> bool {
    matches!(format, crate::SourceFormat::TickLog | crate::SourceFormat::PreprocessJson)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SourceFormat;

    fn recording(start: Option<i64>, length: Option<i64>) -> Profile {
        let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES]);
        b.timing(start, length, None);
        b.finish().unwrap()
    }

    #[test]
    fn a_merge_lasts_the_time_its_recordings_cover() {
        let covered = |ps: &[Profile]| merge(&ps.iter().collect::<Vec<_>>()).unwrap().meta.duration_ns;
        // Two workers at once: their shared time once.
        assert_eq!(covered(&[recording(Some(0), Some(10)), recording(Some(4), Some(10))]), Some(14));
        // Three runs one after another: each.
        let runs = [recording(Some(0), Some(10)), recording(Some(20), Some(5)), recording(Some(30), Some(1))];
        assert_eq!(covered(&runs), Some(16));
        // Unknown starts add their length; no lengths, no duration.
        assert_eq!(covered(&[recording(None, Some(7)), recording(Some(0), Some(3))]), Some(10));
        assert_eq!(covered(&[recording(Some(5), None), recording(None, None)]), None);
        // Tick logs count from their process's start: two runs add up.
        let tick_log = |length| {
            let mut b = ProfileBuilder::new(SourceFormat::TickLog, vec![ValueType::SAMPLES]);
            b.timing(Some(0), Some(length), None);
            b.finish().unwrap()
        };
        assert_eq!(covered(&[tick_log(10), tick_log(8)]), Some(18));
    }
}
