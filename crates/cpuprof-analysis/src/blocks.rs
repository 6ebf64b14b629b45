//! Event-loop blocks: the stretches where the loop never waited (fixtures/oracle/SPEC.md §12),
//! what started each, what ran in it and where most of it was spent.

use cpuprof_model::{FuncId, FuncKind, Profile, SourceFormat, StackId, TimedSample, ValueUnit};
use rustc_hash::FxHashMap;

use crate::category::{Categories, Category};
use crate::timeline::{func_order, DenseSums, FunctionRef, RowFacts};
use crate::window::{each_sample, has_times, recording, WindowError};

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
    if !has_times(profile) {
        return None;
    }
    if let Some(configured) = configured_interval(profile) {
        return Some(configured);
    }
    let mut steps = StepCounts::default();
    let mut previous: Option<i64> = None;
    each_sample(profile, |s| {
        if let Some(p) = previous {
            steps.add(s.time_ns.saturating_sub(p));
        }
        previous = Some(s.time_ns);
    });
    interval_from(profile, &steps)
}

/// A tick log's configured sampling interval.
fn configured_interval(profile: &Profile) -> Option<i64> {
    (profile.meta.format == SourceFormat::TickLog).then_some(profile.meta.interval_ns).flatten().filter(|i| *i > 0)
}

/// The sampling interval from the steps between samples, else the recorded mean.
fn interval_from(profile: &Profile, steps: &StepCounts) -> Option<i64> {
    steps.lower_median().or_else(|| profile.meta.interval_ns.filter(|i| *i > 0))
}

/// Counts of positive steps between samples, for their median without keeping them: whole
/// microseconds up to 65 ms (what V8 samples at) in a table, any other in a map.
#[derive(Default)]
struct StepCounts {
    whole_us: Vec<u64>,
    other: FxHashMap<i64, u64>,
    count: u64,
}

impl StepCounts {
    const TABLE_US: i64 = 1 << 16;

    #[inline]
    fn add(&mut self, step: i64) {
        if step <= 0 {
            return;
        }
        self.count += 1;
        if step % 1000 == 0 && step / 1000 < Self::TABLE_US {
            if self.whole_us.is_empty() {
                self.whole_us = vec![0; Self::TABLE_US as usize];
            }
            self.whole_us[(step / 1000) as usize] += 1;
        } else {
            *self.other.entry(step).or_default() += 1;
        }
    }

    /// The lower median (the ⌈n/2⌉-th smallest); `None` without steps.
    fn lower_median(&self) -> Option<i64> {
        if self.count == 0 {
            return None;
        }
        let rank = (self.count - 1) / 2;
        let mut counts: Vec<(i64, u64)> =
            self.whole_us.iter().enumerate().filter(|(_, c)| **c > 0).map(|(us, c)| (us as i64 * 1000, *c)).collect();
        counts.extend(self.other.iter().map(|(step, c)| (*step, *c)));
        counts.sort_unstable();
        let mut seen = 0u64;
        counts.into_iter().find_map(|(step, c)| {
            seen += c;
            (seen > rank).then_some(step)
        })
    }
}

/// The event-loop blocks of `profile` at least `min_ns` long. Needs the samples' times.
///
/// One walk of the timeline in the usual case: the blocks depend on the sampling interval
/// (what a gap is, and what a block's last sample weighs when a gap follows it), which is the
/// median of the steps counted in the same walk. The walk assumes the recorded mean interval;
/// only when the median turns out to change a gap or a weight is the walk done again with it.
pub fn blocks(profile: &Profile, min_ns: i64) -> Result<Blocks, WindowError> {
    let (start, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let configured = configured_interval(profile);
    let guess = configured.or(profile.meta.interval_ns).unwrap_or(0).max(0);
    let mut walk = BlockWalk::run(profile, min_ns, start, guess, configured.is_none())?;
    // No interval (fewer than two samples at distinct times): 0, as SPEC §12.1's mean interval.
    let interval = configured.or_else(|| interval_from(profile, &walk.steps)).unwrap_or(0).max(0);
    if interval != guess && (gap_for(interval) != gap_for(guess) || walk.used_interval) {
        walk = BlockWalk::run(profile, min_ns, start, interval, false)?;
    }
    Ok(Blocks { interval_ns: interval, min_ns, length_ns: length, idle_samples: walk.idle_samples, blocks: walk.found })
}

/// Consecutive samples further apart than this are a gap, not a block (SPEC §12.1).
fn gap_for(interval: i64) -> i64 {
    interval.saturating_mul(GAP_INTERVALS).max(GAP_MIN_NS)
}

/// One walk of the timeline finding blocks for a given sampling interval.
struct BlockWalk {
    found: Vec<Block>,
    idle_samples: i64,
    /// The steps between samples (when counted).
    steps: StepCounts,
    /// Whether a weight depended on the interval (a block's last sample before a gap, or a
    /// profile without durations).
    used_interval: bool,
}

impl BlockWalk {
    fn run(profile: &Profile, min_ns: i64, start: i64, interval: i64, count_steps: bool) -> Result<Self, WindowError> {
        let gap = gap_for(interval);
        let by_time = profile.value_index(ValueUnit::Nanoseconds).is_some();
        let weight = |s: &TimedSample| if by_time { s.weight_ns } else { interval };
        let mut describer = Describer::new(profile);
        let mut walk =
            BlockWalk { found: Vec::new(), idle_samples: 0, steps: StepCounts::default(), used_interval: !by_time };
        let mut open: Option<OpenBlock> = None;
        let mut previous: Option<i64> = None;
        let close = |block: OpenBlock, describer: &mut Describer<'_>, walk: &mut BlockWalk| {
            let raw_last = weight(&block.last);
            let last = if raw_last <= gap {
                raw_last
            } else {
                walk.used_interval = true;
                interval
            };
            let duration = block.last.time_ns.saturating_add(last).saturating_sub(block.first_ns);
            if duration >= min_ns {
                // The last sample weighs what is left of the block: the weights sum to its length.
                describer.sums.add(block.last.row, last.saturating_sub(raw_last));
                walk.found.push(describer.describe(&block, (block.first_ns.saturating_sub(start), duration)));
            } else {
                describer.sums.drain().for_each(drop);
            }
        };
        let mut idle_samples = 0i64;
        let mut steps = StepCounts::default();
        each_sample(profile, |s| {
            if count_steps {
                if let Some(p) = previous {
                    steps.add(s.time_ns.saturating_sub(p));
                }
                previous = Some(s.time_ns);
            }
            if describer.facts.category[s.row as usize] == Category::Idle {
                idle_samples += 1;
                if let Some(block) = open.take() {
                    close(block, &mut describer, &mut walk);
                }
                return;
            }
            if let Some(block) = open.take_if(|b| s.time_ns.saturating_sub(b.last.time_ns) > gap) {
                close(block, &mut describer, &mut walk);
            }
            let block = open.get_or_insert(OpenBlock {
                first_ns: s.time_ns,
                first_row: s.row,
                last: s,
                samples: 0,
                entry: None,
            });
            block.last = s;
            block.samples += 1;
            if block.entry.is_none() {
                block.entry = describer.facts.entry[s.row as usize];
            }
            describer.sums.add(s.row, weight(&s));
        })
        .ok_or(WindowError::NoTimes)?;
        if let Some(block) = open.take() {
            close(block, &mut describer, &mut walk);
        }
        walk.idle_samples = idle_samples;
        walk.steps = steps;
        Ok(walk)
    }
}

/// A block being grown: its first sample, last sample, number of samples and entry so far.
struct OpenBlock {
    first_ns: i64,
    first_row: u32,
    last: TimedSample,
    samples: i64,
    entry: Option<FuncId>,
}

/// What describing blocks needs, made once for all of them: the rows' facts, the block's
/// weight per row, and the stack tree in depth-first order (each stack's position and the end
/// of its subtree), so the weight under a stack is a range of the block's rows.
struct Describer<'p> {
    profile: &'p Profile,
    categories: Categories,
    facts: RowFacts,
    sums: DenseSums,
    /// Self weight per function in a block, and the functions by position.
    funcs: DenseSums,
    func_ids: Vec<FuncId>,
    /// A block's rows: (depth-first position, stack, weight).
    rows: Vec<(u32, StackId, i64)>,
    pre: Vec<u32>,
    end: Vec<u32>,
}

impl<'p> Describer<'p> {
    fn new(profile: &'p Profile) -> Self {
        let (pre, end) = depth_first(profile);
        Self {
            profile,
            categories: Categories::new(profile),
            facts: RowFacts::of(profile),
            sums: DenseSums::new(profile.samples.len()),
            funcs: DenseSums::new(profile.funcs.len()),
            func_ids: profile.funcs.ids().collect(),
            rows: Vec::new(),
            pre,
            end,
        }
    }

    /// The block `open`, from the weight per row summed in `sums` (which it empties).
    fn describe(&mut self, open: &OpenBlock, (start_ns, duration_ns): (i64, i64)) -> Block {
        let profile = self.profile;
        let stacks = profile.samples.stacks();
        let entry_func = open.entry.unwrap_or_else(|| profile.func_of(stacks[open.first_row as usize]));
        let mut total = 0i64;
        let pre = &self.pre;
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        rows.extend(self.sums.drain().map(|(row, w)| {
            let stack = stacks[row as usize];
            (pre[stack.index()], stack, w)
        }));
        for &(_, stack, w) in &rows {
            total = total.saturating_add(w);
            let leaf = profile.func_of(stack);
            if profile.funcs[leaf].kind != FuncKind::Root {
                self.funcs.add(leaf.index() as u32, w);
            }
        }
        // The heaviest functions (ties in SPEC §5's order): the first few of a partial sort.
        let mut own: Vec<(i64, FuncId)> = self.funcs.drain().map(|(f, w)| (w, self.func_ids[f as usize])).collect();
        let order = |a: &(i64, FuncId), b: &(i64, FuncId)| b.0.cmp(&a.0).then_with(|| func_order(profile, a.1, b.1));
        if own.len() > BLOCK_TOP {
            own.select_nth_unstable_by(BLOCK_TOP - 1, order);
            own.truncate(BLOCK_TOP);
        }
        own.sort_unstable_by(order);
        let top = own.into_iter().map(|(w, f)| (FunctionRef::of(profile, f), w)).collect();
        rows.sort_unstable_by_key(|r| r.0);
        let (common, under) = self.common_frame(&rows, total);
        self.rows = rows;
        Block {
            start_ns,
            duration_ns,
            samples: open.samples,
            entry: FunctionRef::of(profile, entry_func),
            top,
            common: common.map(|s| FunctionRef::of(profile, profile.func_of(s))),
            under: under.map(|s| FunctionRef::of(profile, profile.func_of(s))),
        }
    }

    /// The deepest stack through which more than half of `total` passed (`(root)` left out),
    /// and the nearest stack above it whose function is the user's code; `rows` are the
    /// block's (depth-first position, stack, weight), in depth-first order.
    fn common_frame(&self, rows: &[(u32, StackId, i64)], total: i64) -> (Option<StackId>, Option<StackId>) {
        let profile = self.profile;
        let is_root = |s: StackId| profile.funcs[profile.func_of(s)].kind == FuncKind::Root;
        let mut prefix = Vec::with_capacity(rows.len() + 1);
        prefix.push(0i128);
        for r in rows {
            prefix.push(prefix[prefix.len() - 1] + i128::from(r.2));
        }
        let more_than_half = |w: i128| 2 * w > i128::from(total);
        // A subtree is a range of depth-first positions, and a range holding more than half
        // the weight holds the row where the running sum first passes half: every stack
        // holding more than half is on that row's path, and the deepest is found walking up.
        let Some(median) = (0..rows.len()).find(|i| more_than_half(prefix[i + 1])) else { return (None, None) };
        let through = |s: StackId| {
            let lo = rows.partition_point(|r| r.0 < self.pre[s.index()]);
            let hi = rows.partition_point(|r| r.0 < self.end[s.index()]);
            prefix[hi] - prefix[lo]
        };
        let path = std::iter::successors(Some(rows[median].1), |s| profile.stacks.parent(*s));
        let common = path.filter(|s| !is_root(*s)).find(|s| more_than_half(through(*s)));
        let under = common.and_then(|c| {
            std::iter::successors(profile.stacks.parent(c), |s| profile.stacks.parent(*s))
                .find(|s| !is_root(*s) && self.categories.of_func(profile.func_of(*s)) == Category::App)
        });
        (common, under)
    }
}

/// Each stack's position in a depth-first walk of the stack tree and the position after its
/// subtree's last stack: the stacks under `s` are those with positions in `pre[s]..end[s]`.
fn depth_first(profile: &Profile) -> (Vec<u32>, Vec<u32>) {
    let n = profile.stacks.len();
    let children = profile.stacks.children();
    let (mut pre, mut end) = (vec![0u32; n], vec![0u32; n]);
    let mut next = 0u32;
    // (stack, whether its children were pushed): a stack is closed when it comes up again.
    let mut todo: Vec<(StackId, bool)> = children.roots().iter().rev().map(|s| (*s, false)).collect();
    while let Some((s, opened)) = todo.pop() {
        if opened {
            end[s.index()] = next;
            continue;
        }
        pre[s.index()] = next;
        next += 1;
        todo.push((s, true));
        todo.extend(children.of(s).iter().rev().map(|c| (*c, false)));
    }
    (pre, end)
}
