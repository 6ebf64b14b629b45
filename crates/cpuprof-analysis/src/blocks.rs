//! Event-loop blocks: the stretches where the loop never waited (fixtures/oracle/SPEC.md §12),
//! what started each, what ran in it and where most of it was spent.

use cpuprof_model::{FuncId, FuncKind, Profile, SourceFormat, StackId, ValueUnit};
use rustc_hash::FxHashMap;

use crate::category::{Categories, Category};
use crate::timeline::{entries, heaviest, FunctionRef};
use crate::window::{recording, sample_times, WindowError};

/// How many functions a block's `top` lists.
pub const BLOCK_TOP: usize = 5;

/// A gap: consecutive samples further apart than this many sampling intervals, and at least
/// [`GAP_MIN_NS`].
pub const GAP_INTERVALS: i64 = 10;

/// The shortest gap: node's sampler misses 5–15 ms at a time inside busy stretches of a loaded
/// machine, which are still the loop running; a paused recording leaves far longer holes.
pub const GAP_MIN_NS: i64 = 100_000_000;

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
        let blocked = self.blocks.iter().map(|b| b.duration_ns).fold(0i64, i64::saturating_add);
        if self.length_ns <= 0 {
            0.0
        } else {
            100.0 * blocked as f64 / self.length_ns as f64
        }
    }
}

/// The blocks of one run, in brief.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBlocks {
    /// Number of blocks at least the minimum long.
    pub count: usize,
    /// The 95th percentile of their lengths (nearest rank), ns; 0 when none.
    pub p95_ns: i64,
    /// The longest, ns; 0 when none.
    pub max_ns: i64,
    /// Idle samples in the run: 0 means the loop never waited, so blocks are not stalls.
    pub idle_samples: i64,
    /// The run's sampling interval, ns: how precisely a block's length is known.
    pub interval_ns: i64,
}

impl From<&Blocks> for RunBlocks {
    fn from(b: &Blocks) -> Self {
        let (_, p95_ns, max_ns) = b.percentiles();
        Self { count: b.blocks.len(), p95_ns, max_ns, idle_samples: b.idle_samples, interval_ns: b.interval_ns }
    }
}

/// How the longest block changed between two sides of runs.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockChange {
    /// Each base run's blocks.
    pub base: Vec<RunBlocks>,
    /// Each new run's blocks.
    pub new: Vec<RunBlocks>,
    /// Mean longest block of the new runs minus that of the base runs, ns.
    pub max_delta_ns: f64,
    /// The same for the 95th percentiles, ns.
    pub p95_delta_ns: f64,
    /// Welch's t test on the runs' longest blocks, with two runs or more per side; `None` with
    /// one run on a side (no spread to test against).
    pub p_value: Option<f64>,
    /// Whether the longest block's change is beyond the noise: p < alpha with several runs per
    /// side; with one run on a side, a change larger than two sampling intervals (the precision
    /// a block's two ends are measured to).
    pub significant: bool,
}

/// The blocks of one run in brief (`min_ns` the shortest counted); `None` without a timeline.
pub fn run_blocks(profile: &Profile, min_ns: i64) -> Option<RunBlocks> {
    blocks(profile, min_ns).ok().map(|b| RunBlocks::from(&b))
}

/// The change of the event-loop blocks from the `base` runs to the `new` runs (each side at
/// least one run, from [`run_blocks`]).
pub fn compare_blocks(base: Vec<RunBlocks>, new: Vec<RunBlocks>, alpha: f64) -> BlockChange {
    let mean = |runs: &[RunBlocks], f: fn(&RunBlocks) -> i64| {
        runs.iter().map(|r| f(r) as f64).sum::<f64>() / runs.len().max(1) as f64
    };
    let max_delta_ns = mean(&new, |r| r.max_ns) - mean(&base, |r| r.max_ns);
    let p95_delta_ns = mean(&new, |r| r.p95_ns) - mean(&base, |r| r.p95_ns);
    let longest = |runs: &[RunBlocks]| runs.iter().map(|r| r.max_ns as f64).collect::<Vec<f64>>();
    let p_value = (base.len() >= 2 && new.len() >= 2).then(|| crate::stats::welch_p(&longest(&base), &longest(&new)));
    let interval = base.iter().chain(&new).map(|r| r.interval_ns).max().unwrap_or(0) as f64;
    let significant = match p_value {
        Some(p) => p < alpha && max_delta_ns != 0.0,
        None => max_delta_ns.abs() > 2.0 * interval,
    };
    BlockChange { base, new, max_delta_ns, p95_delta_ns, p_value, significant }
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
    let mut steps: Vec<i64> = times.windows(2).map(|w| w[1].saturating_sub(w[0])).filter(|d| *d > 0).collect();
    if steps.is_empty() {
        return profile.meta.interval_ns.filter(|i| *i > 0);
    }
    let middle = (steps.len() - 1) / 2;
    Some(*steps.select_nth_unstable(middle).1)
}

/// The event-loop blocks of `profile` at least `min_ns` long. Needs the samples' times.
pub fn blocks(profile: &Profile, min_ns: i64) -> Result<Blocks, WindowError> {
    let (start, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let times = sample_times(profile).ok_or(WindowError::NoTimes)?;
    // No interval (fewer than two samples at distinct times): 0, as SPEC §12.1's mean interval.
    let interval = sampling_interval(profile).unwrap_or(0).max(0);
    let gap = interval.saturating_mul(GAP_INTERVALS).max(GAP_MIN_NS);
    let durations = profile.value_index(ValueUnit::Nanoseconds).map(|k| profile.samples.values(k));
    let weight = |i: usize| durations.map_or(interval, |d| d[i]);
    let mut describer = Describer::new(profile);
    let idle: Vec<bool> =
        (0..times.len()).map(|i| describer.categories.of_sample(profile, i) == Category::Idle).collect();
    let idle_samples = idle.iter().filter(|i| **i).count() as i64;

    let mut found = Vec::new();
    let mut i = 0;
    while i < times.len() {
        if idle[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < times.len() && !idle[j + 1] && times[j + 1].saturating_sub(times[j]) <= gap {
            j += 1;
        }
        let last = if weight(j) <= gap { weight(j) } else { interval };
        let duration = times[j].saturating_add(last).saturating_sub(times[i]);
        if duration >= min_ns {
            // The last sample weighs what is left of the block: the weights sum to its length.
            let weigh = |k: usize| if k == j { last } else { weight(k) };
            found.push(describer.describe(i..=j, &weigh, (times[i].saturating_sub(start), duration)));
        }
        i = j + 1;
    }
    Ok(Blocks { interval_ns: interval, min_ns, length_ns: length, idle_samples, blocks: found })
}

/// What describing blocks needs, allocated once for all of them: per stack (dense, by
/// position) the weight through it and the block that last touched it.
struct Describer<'p> {
    profile: &'p Profile,
    categories: Categories,
    entry: Vec<Option<FuncId>>,
    through: Vec<i64>,
    stamp: Vec<u32>,
    touched: Vec<StackId>,
    block: u32,
}

impl<'p> Describer<'p> {
    fn new(profile: &'p Profile) -> Self {
        let n = profile.stacks.len();
        Self {
            profile,
            categories: Categories::new(profile),
            entry: entries(profile),
            through: vec![0; n],
            stamp: vec![0; n],
            touched: Vec::new(),
            block: 0,
        }
    }

    /// The block of sample rows `rows`, weighed by `weight`.
    fn describe(
        &mut self,
        rows: std::ops::RangeInclusive<usize>,
        weight: &dyn Fn(usize) -> i64,
        (start_ns, duration_ns): (i64, i64),
    ) -> Block {
        let profile = self.profile;
        let stacks = profile.samples.stacks();
        let first = *rows.start();
        let entry_func =
            rows.clone().find_map(|i| self.entry[stacks[i].index()]).unwrap_or_else(|| profile.func_of(stacks[first]));
        let mut self_of: FxHashMap<FuncId, i64> = FxHashMap::default();
        let mut total = 0i64;
        self.block += 1;
        self.touched.clear();
        for i in rows.clone() {
            let w = weight(i);
            total = total.saturating_add(w);
            // The stacks on the path, each once: the walk up stops at one this block has seen.
            let mut at = Some(stacks[i]);
            while let Some(s) = at.filter(|s| self.stamp[s.index()] != self.block) {
                self.stamp[s.index()] = self.block;
                self.through[s.index()] = 0;
                self.touched.push(s);
                at = profile.stacks.parent(s);
            }
            self.through[stacks[i].index()] = self.through[stacks[i].index()].saturating_add(w);
            let leaf = profile.func_of(stacks[i]);
            if profile.funcs[leaf].kind != FuncKind::Root {
                let own = self_of.entry(leaf).or_default();
                *own = own.saturating_add(w);
            }
        }
        let mut top = Vec::with_capacity(BLOCK_TOP);
        while top.len() < BLOCK_TOP {
            let Some((f, w)) = heaviest(profile, &self_of) else { break };
            self_of.remove(&f);
            top.push((FunctionRef::of(profile, f), w));
        }
        let (common, under) = self.common_frame(total);
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

    /// The deepest stack through which more than half of `total` passed (`(root)` left out),
    /// and the nearest stack above it whose function is the user's code.
    fn common_frame(&mut self, total: i64) -> (Option<StackId>, Option<StackId>) {
        let profile = self.profile;
        let is_root = |s: StackId| profile.funcs[profile.func_of(s)].kind == FuncKind::Root;
        // Subtree sums: children have larger ids than their parents, so in falling id order
        // each stack is complete when it is added to its parent.
        self.touched.sort_unstable_by(|a, b| b.cmp(a));
        for s in &self.touched {
            if let Some(parent) = profile.stacks.parent(*s) {
                self.through[parent.index()] = self.through[parent.index()].saturating_add(self.through[s.index()]);
            }
        }
        // The stacks holding more than half lie on one path from the top: the deepest has the
        // largest id.
        let common = self
            .touched
            .iter()
            .copied()
            .find(|s| 2 * i128::from(self.through[s.index()]) > i128::from(total) && !is_root(*s));
        let under = common.and_then(|c| {
            std::iter::successors(profile.stacks.parent(c), |s| profile.stacks.parent(*s))
                .find(|s| !is_root(*s) && self.categories.of_func(profile.func_of(*s)) == Category::App)
        });
        (common, under)
    }
}
