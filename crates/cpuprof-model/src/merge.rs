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
    let every = profiles.iter().fold(MergeColumns::ALL, |every, p| every.and(MergeColumns::of(p)));
    let mut merger = Merger::with_columns(profiles.first().copied(), every);
    for p in profiles {
        merger.add_unchecked(p);
    }
    merger.finish(&profiles.iter().map(|p| &p.meta).collect::<Vec<_>>())
}

/// [`merge`] one input at a time, so that a caller can merge the inputs read so far while it
/// reads the next ones. The columns are chosen from the first input, as if every input were
/// like it: an input that is not ([`Merger::add`] says so) needs [`merge`] of them all instead.
/// Added in the same order, the inputs give the same profile as [`merge`].
pub struct Merger {
    b: ProfileBuilder,
    time_type: Option<ValueType>,
    with_states: bool,
    samples: bool,
    values: Vec<i64>,
}

/// An input whose columns differ from the first's in a way that changes a merge's columns
/// (the first had times, VM states or counts of samples, this one has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unlike;

/// The columns an input can give a merge beyond its counts: a time column and VM states, and
/// whether its counts are of samples taken (not records). A merge has each only when every
/// input has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeColumns {
    time: bool,
    states: bool,
    /// The counts are of samples taken, not of records ([`crate::ValueKind::Records`]).
    samples: bool,
}

impl MergeColumns {
    /// Both columns: what no input at all leaves.
    pub const ALL: MergeColumns = MergeColumns { time: true, states: true, samples: true };

    /// The columns `p` has.
    pub fn of(p: &Profile) -> MergeColumns {
        MergeColumns {
            time: p.value_index(ValueUnit::Nanoseconds).is_some(),
            states: p.samples.vm_state.is_some(),
            samples: p.counts_samples(),
        }
    }

    /// The columns both have.
    #[must_use]
    pub fn and(self, other: MergeColumns) -> MergeColumns {
        MergeColumns {
            time: self.time && other.time,
            states: self.states && other.states,
            samples: self.samples && other.samples,
        }
    }
}

impl Merger {
    /// A merge whose columns are `first`'s (see [`Merger`]).
    pub fn new(first: &Profile) -> Merger {
        Merger::with_columns(Some(first), MergeColumns::of(first))
    }

    /// A merge whose columns are those `every` input has ([`MergeColumns::and`] of them all),
    /// `first` being the first input: [`Merger::add`] takes each input then, and the result is
    /// [`merge`]'s. For a caller that learnt the columns from an earlier pass over the inputs.
    pub fn with_columns_of_all(first: &Profile, every: MergeColumns) -> Merger {
        Merger::with_columns(Some(first), every)
    }

    fn with_columns(first: Option<&Profile>, every: MergeColumns) -> Merger {
        let time_type = first
            .and_then(|p| p.value_types.iter().find(|t| t.unit == ValueUnit::Nanoseconds).copied())
            .filter(|_| every.time);
        // Records added to samples are no counts of samples either.
        let count = if every.samples { ValueType::SAMPLES } else { ValueType::RECORDS };
        let value_types: Vec<ValueType> = std::iter::once(count).chain(time_type).collect();
        let format = first.map_or(crate::SourceFormat::CpuProfile, |p| p.meta.format);
        let b = ProfileBuilder::new(format, value_types);
        Merger { b, time_type, with_states: every.states, samples: every.samples, values: Vec::with_capacity(2) }
    }

    /// Adds `p` (the first input too), unless its columns would change the merge's.
    pub fn add(&mut self, p: &Profile) -> Result<(), Unlike> {
        let has = MergeColumns::of(p);
        if (self.time_type.is_some() && !has.time)
            || (self.with_states && !has.states)
            || (self.samples && !has.samples)
        {
            return Err(Unlike);
        }
        self.add_unchecked(p);
        Ok(())
    }

    fn add_unchecked(&mut self, p: &Profile) {
        let (b, values) = (&mut self.b, &mut self.values);
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
        let states = p.samples.vm_state.as_ref().filter(|_| self.with_states);
        for (row, stack) in p.samples.stacks().iter().enumerate() {
            values.clear();
            values.push(counts.map_or(1, |c| c[row]));
            if self.time_type.is_some() {
                values.push(times.map_or(0, |t| t[row]));
            }
            match states.and_then(|s| s.get(row)) {
                Some(state) => b.sample_in_state(stacks[stack.index()], None, values, *state),
                None => b.sample(stacks[stack.index()], None, values),
            }
        }
        for warning in &p.meta.warnings {
            b.warn(warning.clone());
        }
        b.copy_scripts(p);
    }

    /// The merged profile; `metas` are the inputs' (their times give the merge's).
    pub fn finish(mut self, metas: &[&crate::Meta]) -> Result<Profile, crate::ModelError> {
        let start = metas.iter().filter_map(|m| m.start_ns).min();
        let duration = covered_ns(metas);
        let interval = metas.first().and_then(|m| m.interval_ns);
        self.b.timing(start, duration, interval);
        self.b.finish()
    }
}

/// The time `profiles`' recordings cover: the length of the union of their spans on their
/// clock (a `.cpuprofile`'s is the machine's monotonic clock), so that workers recorded at once
/// count their shared time once and runs recorded one after another count each; a recording
/// whose start is unknown, or on a clock of its own process (a tick log's starts at 0), adds
/// its length. `None` when no input knows its length.
fn covered_ns(metas: &[&crate::Meta]) -> Option<i64> {
    let mut spans: Vec<(i64, i64)> = Vec::new();
    let mut apart = 0i64;
    for m in metas {
        match (m.start_ns, m.duration_ns) {
            (Some(start), Some(length)) if !own_clock(m.format) => {
                spans.push((start, start.saturating_add(length.max(0))));
            }
            (_, Some(length)) => apart = apart.saturating_add(length.max(0)),
            _ => {}
        }
    }
    if spans.is_empty() && metas.iter().all(|m| m.duration_ns.is_none()) {
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
    use crate::{SourceFormat, VmState};

    fn recording(start: Option<i64>, length: Option<i64>) -> Profile {
        let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES]);
        b.timing(start, length, None);
        b.finish().unwrap()
    }

    /// A profile of one function `name` sampled `n` times (1 ms each), in the `state` given.
    fn sampled(name: &str, n: usize, state: Option<VmState>) -> Profile {
        let mut b = ProfileBuilder::new(SourceFormat::TickLog, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
        let frame = crate::builder::tests::func(&mut b, name);
        let stack = b.stack(None, frame);
        for _ in 0..n {
            match state {
                Some(state) => b.sample_in_state(stack, None, &[1, 1_000_000], state),
                None => b.sample(stack, None, &[1, 1_000_000]),
            }
        }
        b.timing(Some(0), Some(n as i64 * 1_000_000), Some(1_000_000));
        b.finish().unwrap()
    }

    /// One input at a time, in order, gives what `merge` of them all gives; an input without
    /// the first's VM states (or time) is told apart, and `merge` drops the states.
    #[test]
    fn a_merge_one_input_at_a_time_is_the_merge_of_them_all() {
        let inputs = [
            sampled("a", 2, Some(VmState::Js)),
            sampled("b", 3, Some(VmState::Gc)),
            sampled("a", 1, Some(VmState::Js)),
        ];
        let mut merger = Merger::new(&inputs[0]);
        for p in &inputs {
            assert_eq!(merger.add(p), Ok(()));
        }
        let one_at_a_time = merger.finish(&inputs.iter().map(|p| &p.meta).collect::<Vec<_>>()).unwrap();
        let all = merge(&inputs.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(format!("{one_at_a_time:?}"), format!("{all:?}"));
        assert!(all.samples.vm_state.is_some());

        let stateless = sampled("c", 1, None);
        assert_eq!(Merger::new(&inputs[0]).add(&stateless), Err(Unlike));
        assert!(merge(&[&inputs[0], &stateless]).unwrap().samples.vm_state.is_none());
        // The other way round the first has no states to lose.
        assert_eq!(Merger::new(&stateless).add(&inputs[0]), Ok(()));
        let counted = {
            let mut b = ProfileBuilder::new(SourceFormat::Folded, vec![ValueType::SAMPLES]);
            b.timing(None, None, None);
            b.finish().unwrap()
        };
        assert_eq!(Merger::new(&inputs[0]).add(&counted), Err(Unlike));
        assert_eq!(Merger::new(&counted).add(&inputs[0]), Ok(()));

        // With the columns every input has, known beforehand, each input is taken (the first
        // has states the second lacks) and the result is `merge`'s.
        let unlike = [inputs[0].clone(), stateless, inputs[1].clone()];
        let every = unlike.iter().fold(MergeColumns::ALL, |every, p| every.and(MergeColumns::of(p)));
        let mut merger = Merger::with_columns_of_all(&unlike[0], every);
        for p in &unlike {
            assert_eq!(merger.add(p), Ok(()));
        }
        let one_at_a_time = merger.finish(&unlike.iter().map(|p| &p.meta).collect::<Vec<_>>()).unwrap();
        let all = merge(&unlike.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(format!("{one_at_a_time:?}"), format!("{all:?}"));
        assert!(all.samples.vm_state.is_none());
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
