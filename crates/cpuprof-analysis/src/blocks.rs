//! Event-loop blocks: the stretches where the loop never waited (fixtures/oracle/SPEC.md §12),
//! what started each, what ran in it and where most of it was spent.

use cpuprof_model::{FuncId, Profile, SourceFormat, StackId, ValueUnit};
use rustc_hash::FxHashMap;

use crate::category::{Categories, Category};
use crate::timeline::{entries, heaviest, FunctionRef};
use crate::window::{recording, WindowError};

/// How many functions a block's `top` lists.
pub const BLOCK_TOP: usize = 5;

/// A gap: consecutive samples further apart than this many sampling intervals.
pub const GAP_INTERVALS: i64 = 10;

/// One block: `[start_ns, start_ns + duration_ns)` after the recording's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Start, ns after the recording's start.
    pub start_ns: i64,
    /// Length, ns.
    pub duration_ns: i64,
    /// Number of samples in it.
    pub samples: i64,
    /// What started it: the outermost code frame of its first sample that has one (a timer,
    /// an I/O callback, the microtask queue, the main module…).
    pub entry: FunctionRef,
    /// The functions with the most self time in it, heaviest first, with that time.
    pub top: Vec<(FunctionRef, i64)>,
    /// The deepest frame on the stacks of more than half its time.
    pub common: Option<FunctionRef>,
    /// The nearest frame of the user's code above `common`.
    pub under: Option<FunctionRef>,
}

/// The result of [`blocks`].
#[derive(Clone, Debug)]
pub struct Blocks {
    /// The sampling interval the gaps are measured in, ns.
    pub interval_ns: i64,
    /// The shortest block reported, ns.
    pub min_ns: i64,
    /// The recording's length, ns.
    pub length_ns: i64,
    /// Number of idle samples: 0 means the loop never waited in the recording (a batch job).
    pub idle_samples: i64,
    /// The blocks at least `min_ns` long, in time order.
    pub blocks: Vec<Block>,
}

impl Blocks {
    /// Block lengths at the 50th and 95th percentiles (nearest rank) and the longest; 0 when none.
    pub fn percentiles(&self) -> (i64, i64, i64) {
        let mut lengths: Vec<i64> = self.blocks.iter().map(|b| b.duration_ns).collect();
        lengths.sort_unstable();
        let rank = |p: usize| lengths.get((p * lengths.len()).div_ceil(100).saturating_sub(1)).copied().unwrap_or(0);
        (rank(50), rank(95), lengths.last().copied().unwrap_or(0))
    }

    /// The share of the recording spent in the blocks, percent.
    pub fn blocked_pct(&self) -> f64 {
        let blocked: i64 = self.blocks.iter().map(|b| b.duration_ns).sum();
        if self.length_ns <= 0 {
            0.0
        } else {
            100.0 * blocked as f64 / self.length_ns as f64
        }
    }
}

/// The sampling interval of a profile with times: a tick log's configured one, else the
/// lower median of the positive steps between samples (robust to gaps).
pub fn sampling_interval(profile: &Profile) -> Option<i64> {
    let times = profile.samples.times_ns()?;
    if profile.meta.format == SourceFormat::TickLog {
        if let Some(i) = profile.meta.interval_ns.filter(|i| *i > 0) {
            return Some(i);
        }
    }
    let mut steps: Vec<i64> = times.windows(2).map(|w| w[1] - w[0]).filter(|d| *d > 0).collect();
    if steps.is_empty() {
        return profile.meta.interval_ns.filter(|i| *i > 0);
    }
    let middle = (steps.len() - 1) / 2;
    Some(*steps.select_nth_unstable(middle).1)
}

/// The event-loop blocks of `profile` at least `min_ns` long. Needs the samples' times.
pub fn blocks(profile: &Profile, min_ns: i64) -> Result<Blocks, WindowError> {
    let (start, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let times = profile.samples.times_ns().ok_or(WindowError::NoTimes)?;
    let interval = sampling_interval(profile).unwrap_or(1_000_000).max(1);
    let gap = interval.saturating_mul(GAP_INTERVALS);
    let durations = profile.value_index(ValueUnit::Nanoseconds).map(|k| profile.samples.values(k));
    let weight = |i: usize| durations.map_or(interval, |d| d[i]);
    let categories = Categories::new(profile);
    let idle: Vec<bool> = (0..times.len()).map(|i| categories.of_sample(profile, i) == Category::Idle).collect();
    let idle_samples = idle.iter().filter(|i| **i).count() as i64;
    let entry = entries(profile);

    let mut found = Vec::new();
    let mut i = 0;
    while i < times.len() {
        if idle[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < times.len() && !idle[j + 1] && times[j + 1] - times[j] <= gap {
            j += 1;
        }
        let last = if weight(j) <= gap { weight(j) } else { interval };
        let duration = times[j].saturating_add(last) - times[i];
        if duration >= min_ns {
            // The last sample weighs what is left of the block: the weights sum to its length.
            let weigh = |k: usize| if k == j { last } else { weight(k) };
            found.push(describe(profile, &categories, &entry, i..=j, &weigh, (times[i] - start, duration)));
        }
        i = j + 1;
    }
    Ok(Blocks { interval_ns: interval, min_ns, length_ns: length, idle_samples, blocks: found })
}

/// The block of sample rows `rows`.
fn describe(
    profile: &Profile,
    categories: &Categories,
    entry: &[Option<FuncId>],
    rows: std::ops::RangeInclusive<usize>,
    weight: &dyn Fn(usize) -> i64,
    (start_ns, duration_ns): (i64, i64),
) -> Block {
    let stacks = profile.samples.stacks();
    let first = *rows.start();
    let entry_func =
        rows.clone().find_map(|i| entry[stacks[i].index()]).unwrap_or_else(|| profile.func_of(stacks[first]));
    let mut own: FxHashMap<StackId, i64> = FxHashMap::default();
    let mut self_of: FxHashMap<FuncId, i64> = FxHashMap::default();
    let mut total = 0i64;
    for i in rows.clone() {
        let w = weight(i);
        total = total.saturating_add(w);
        *own.entry(stacks[i]).or_default() += w;
        let leaf = profile.func_of(stacks[i]);
        if profile.funcs[leaf].kind != cpuprof_model::FuncKind::Root {
            *self_of.entry(leaf).or_default() += w;
        }
    }
    let mut top = Vec::with_capacity(BLOCK_TOP);
    while top.len() < BLOCK_TOP {
        let Some((f, w)) = heaviest(profile, &self_of) else { break };
        self_of.remove(&f);
        top.push((FunctionRef::of(profile, f), w));
    }
    let (common, under) = common_frame(profile, categories, &own, total);
    Block {
        start_ns,
        duration_ns,
        samples: (rows.end() - rows.start() + 1) as i64,
        entry: FunctionRef::of(profile, entry_func),
        top,
        common: common.map(|s| FunctionRef::of(profile, profile.func_of(s))),
        under: under.map(|s| FunctionRef::of(profile, profile.func_of(s))),
    }
}

/// The deepest stack through which more than half of `total` passed (`(root)` left out), and
/// the nearest stack above it whose function is the user's code.
fn common_frame(
    profile: &Profile,
    categories: &Categories,
    own: &FxHashMap<StackId, i64>,
    total: i64,
) -> (Option<StackId>, Option<StackId>) {
    let is_root = |s: StackId| profile.funcs[profile.func_of(s)].kind == cpuprof_model::FuncKind::Root;
    let mut through: FxHashMap<StackId, i64> = FxHashMap::default();
    for (stack, w) in own {
        let mut at = Some(*stack);
        while let Some(s) = at {
            *through.entry(s).or_default() += *w;
            at = profile.stacks.parent(s);
        }
    }
    let depth = |s: StackId| std::iter::successors(Some(s), |s| profile.stacks.parent(*s)).count();
    let common = through
        .iter()
        .filter(|(s, w)| 2 * i128::from(**w) > i128::from(total) && !is_root(**s))
        .map(|(s, _)| *s)
        .max_by_key(|s| depth(*s));
    let under = common.and_then(|c| {
        std::iter::successors(profile.stacks.parent(c), |s| profile.stacks.parent(*s))
            .find(|s| !is_root(*s) && categories.of_func(profile.func_of(*s)) == Category::App)
    });
    (common, under)
}
