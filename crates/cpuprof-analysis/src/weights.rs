//! What every analysis starts from: each stack's own (self) weight and sample count, after
//! the stack filter.

use cpuprof_model::{Profile, ValueUnit};

use crate::filter::StackFilter;

/// What a sample weighs (`time`, `samples` in requests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Weight {
    /// Its duration in ns (for `.cpuprofile`: until the next sample, as DevTools does). The default.
    #[default]
    Time,
    /// 1: plain sample counts.
    Samples,
}
/// What `weight` weighs in `profile`: time falls back to sample counts in profiles without
/// times (folded stacks).
pub(crate) fn effective(profile: &Profile, weight: Weight) -> Weight {
    match weight {
        Weight::Time if profile.value_index(ValueUnit::Nanoseconds).is_none() => Weight::Samples,
        other => other,
    }
}

/// The weight and count columns of the samples for `weight` (`None`: every row weighs 1).
pub(crate) fn columns(profile: &Profile, weight: Weight) -> (Option<&[i64]>, Option<&[i64]>) {
    let count_column = profile.value_index(ValueUnit::Count);
    let weight_column = match weight {
        Weight::Time => profile.value_index(ValueUnit::Nanoseconds).or(count_column),
        Weight::Samples => count_column,
    };
    let column = |k: Option<usize>| k.map(|k| profile.samples.values(k));
    (column(weight_column), column(count_column))
}

/// Whether a timed sample weighs its duration ([`Weight::Time`] where the profile has a time
/// column), else 1 (a sample).
pub(crate) fn weighs_time(profile: &Profile, weight: Weight) -> bool {
    weight == Weight::Time && profile.value_index(ValueUnit::Nanoseconds).is_some()
}

/// Self weight and count per stack (by stack position).
pub(crate) struct StackWeights {
    pub(crate) weight: Vec<i64>,
    pub(crate) count: Vec<i64>,
    /// The denominator of percentages: the weight of the samples counted (idle excluded unless
    /// included), before focus/ignore.
    pub(crate) total: i64,
    /// The number of those samples.
    pub(crate) samples: i64,
}

/// Sums the samples per stack, with the filter's focus, ignore and idle rules applied (stacks
/// it drops keep weight 0).
pub(crate) fn stack_weights(profile: &Profile, weight: Weight, filter: &StackFilter) -> StackWeights {
    let n = profile.stacks.len();
    let (weights, counts) = columns(profile, weight);
    let mut self_w = vec![0i64; n];
    let mut self_c = vec![0i64; n];
    for (i, stack) in profile.samples.stacks().iter().enumerate() {
        let c = counts.map_or(1, |c| c[i]);
        let w = weights.map_or(c, |w| w[i]);
        self_w[stack.index()] = self_w[stack.index()].saturating_add(w);
        self_c[stack.index()] = self_c[stack.index()].saturating_add(c);
    }
    let mask = filter.mask(profile);
    let (mut total, mut samples) = (0i64, 0i64);
    for s in 0..n {
        if mask.counted[s] {
            total = total.saturating_add(self_w[s]);
            samples = samples.saturating_add(self_c[s]);
        }
        if !mask.kept[s] {
            self_w[s] = 0;
            self_c[s] = 0;
        }
    }
    StackWeights { weight: self_w, count: self_c, total, samples }
}
