//! Event-loop blocks: the stretches where the loop never waited (fixtures/oracle/SPEC.md §12),
//! what started each, what ran in it and where most of it was spent.

use cpuprof_model::{FuncId, FuncKind, Profile, SourceFormat, StackId, TimedSample, ValueUnit};

use crate::runs::{walk_runs, Run, RunRows, RunRules, Runs, RunsWalked, StepCounts};
use crate::sums::RowSum;

use crate::category::{Categories, Category};
use crate::sums::SparseSums;
use crate::timeline::{func_order, FunctionRef, FunctionRefs, RowFacts};
use crate::window::recording;
use cpuprof_model::WindowError;

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
    /// The deepest JavaScript frame on the stacks of more than half its time.
    pub common: Option<FunctionRef>,
    /// The nearest frame of the user's code above `common`.
    pub under: Option<FunctionRef>,
    /// The deepest frame on the stacks of more than half its time when it is not JavaScript (a
    /// builtin, C++, a shared library, the collector): what `common` was running in.
    pub native: Option<FunctionRef>,
    /// Whether the recording's (or the window's) edge cuts it: it began with the first sample or
    /// ended with the last, so it may have been longer than it shows.
    pub cut: Option<BlockCut>,
}

/// Which edge of the recording (or window) cuts a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockCut {
    /// It began with the first sample: it may have begun earlier.
    Start,
    /// It ended with the last sample: it may have gone on.
    End,
    /// Both: the whole recording is one block.
    Both,
}

impl BlockCut {
    /// `start`, `end` or `both`, as JSON says it.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockCut::Start => "start",
            BlockCut::End => "end",
            BlockCut::Both => "both",
        }
    }

    fn of(start: bool, end: bool) -> Option<BlockCut> {
        match (start, end) {
            (true, true) => Some(BlockCut::Both),
            (true, false) => Some(BlockCut::Start),
            (false, true) => Some(BlockCut::End),
            (false, false) => None,
        }
    }
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
    /// The length of every block at least `min_ns` long, ns, in time order.
    pub lengths: Vec<i64>,
    /// How many of them the recording's (or window's) edges cut (see [`Block::cut`]): their
    /// lengths are only at least what they show.
    pub cut: usize,
    /// The blocks described: every one, or the longest asked for (ties: the earliest), in
    /// time order.
    pub blocks: Vec<Block>,
}

impl Blocks {
    /// How many blocks are at least `min_ns` long (described or not).
    pub fn count(&self) -> usize {
        self.lengths.len()
    }

    /// Block lengths at the 50th and 95th percentiles (nearest rank) and the longest; 0 when none.
    pub fn percentiles(&self) -> (i64, i64, i64) {
        let mut lengths = self.lengths.clone();
        lengths.sort_unstable();
        let rank = |p: usize| lengths.get((p * lengths.len()).div_ceil(100).saturating_sub(1)).copied().unwrap_or(0);
        (rank(50), rank(95), lengths.last().copied().unwrap_or(0))
    }

    /// The share of the recording spent in the blocks, percent.
    pub fn blocked_pct(&self) -> f64 {
        let blocked = self.lengths.iter().copied().fold(0i64, i64::saturating_add);
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
        Self { count: b.count(), p95_ns, max_ns, idle_samples: b.idle_samples, interval_ns: b.interval_ns }
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
    blocks(profile, min_ns, Some(0)).ok().map(|b| RunBlocks::from(&b))
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

/// A tick log's configured sampling interval.
fn configured_interval(profile: &Profile) -> Option<i64> {
    (profile.meta.format == SourceFormat::TickLog).then_some(profile.meta.interval_ns).flatten().filter(|i| *i > 0)
}

/// The sampling interval (SPEC §12.1) from the steps between samples: their lower median
/// (robust to gaps), else the recorded mean.
fn interval_from(profile: &Profile, steps: &StepCounts) -> Option<i64> {
    steps.lower_median().or_else(|| profile.meta.interval_ns.filter(|i| *i > 0))
}

/// The event-loop blocks of `profile` at least `min_ns` long, the `described` longest of them
/// (all: `None`) described. Needs the samples' times.
///
/// One walk of the timeline in the usual case: the blocks depend on the sampling interval
/// (what a gap is, and what a block's last sample weighs when a gap follows it), which is the
/// median of the steps counted in the same walk. The walk assumes the recorded mean interval;
/// only when the median turns out to change a gap or a weight is the walk done again with it.
pub fn blocks(profile: &Profile, min_ns: i64, described: Option<usize>) -> Result<Blocks, WindowError> {
    blocks_walked(profile, min_ns, described, true)
}

/// [`blocks`] for a caller that reads no sample values after them (`cpuprof blocks`): the walk
/// leaves the rows' sums, when the reader left them to the timeline, to a later walk instead
/// of adding each sample to them (a later read of the values walks again).
pub fn blocks_only(profile: &Profile, min_ns: i64, described: Option<usize>) -> Result<Blocks, WindowError> {
    blocks_walked(profile, min_ns, described, false)
}

/// [`blocks`], the walk filling the rows' sums left to it when `fill_sums`.
fn blocks_walked(
    profile: &Profile,
    min_ns: i64,
    described: Option<usize>,
    fill_sums: bool,
) -> Result<Blocks, WindowError> {
    let (start, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let configured = configured_interval(profile);
    let guess = configured.or(profile.meta.interval_ns).unwrap_or(0).max(0);
    let mut walk = BlockWalk::run(profile, min_ns, start, guess, configured.is_none(), described, fill_sums)?;
    // No interval (fewer than two samples at distinct times): 0, as SPEC §12.1's mean interval.
    let interval = configured.or_else(|| interval_from(profile, &walk.steps)).unwrap_or(0).max(0);
    if interval != guess && (gap_for(interval) != gap_for(guess) || walk.used_interval) {
        walk = BlockWalk::run(profile, min_ns, start, interval, false, described, fill_sums)?;
    }
    let mut found = walk.found;
    if let Some(n) = described {
        // Each half described its own longest: the longest of all are among them.
        found.sort_by_key(|b| (std::cmp::Reverse(b.duration_ns), b.start_ns));
        found.truncate(n);
        found.sort_by_key(|b| b.start_ns);
    }
    Ok(Blocks {
        interval_ns: interval,
        min_ns,
        length_ns: length,
        idle_samples: walk.idle_samples,
        lengths: walk.lengths,
        cut: walk.cut,
        blocks: found,
    })
}

/// Consecutive samples further apart than this are a gap, not a block (SPEC §12.1).
fn gap_for(interval: i64) -> i64 {
    interval.saturating_mul(GAP_INTERVALS).max(GAP_MIN_NS)
}

/// One walk of the timeline finding blocks for a given sampling interval.
struct BlockWalk {
    found: Vec<Block>,
    lengths: Vec<i64>,
    /// How many of the blocks counted are cut by an edge.
    cut: usize,
    idle_samples: i64,
    /// The steps between samples (when counted).
    steps: StepCounts,
    /// Whether a weight depended on the interval (a block's last sample before a gap, or a
    /// profile without durations).
    used_interval: bool,
}

/// What finding blocks for one sampling interval needs.
#[derive(Clone, Copy)]
struct Rules {
    min_ns: i64,
    start: i64,
    interval: i64,
    gap: i64,
    /// The profile has durations (else every sample weighs the interval).
    by_time: bool,
}

impl Rules {
    fn weight(&self, s: &TimedSample) -> i64 {
        if self.by_time {
            s.weight_ns
        } else {
            self.interval
        }
    }

    /// What a row's samples in a block weigh.
    fn weight_of(&self, sum: &RowSum) -> i64 {
        if self.by_time {
            sum.ns
        } else {
            sum.samples.saturating_mul(self.interval)
        }
    }
}

/// A run held back undescribed, with its rows' sums: one that may continue across the two
/// halves of a walk.
struct Held {
    run: Run,
    rows: Vec<RowSum>,
}

/// One half of a walk: its runs counted as blocks and the longest described as they end,
/// except the run it ends inside (its tail) and, in the second half, the run it began inside
/// (its head), which are held back: they may be one block with the other half's.
struct HalfRuns<'p> {
    rules: Rules,
    describer: Describer<'p>,
    found: Found,
    used_interval: bool,
    /// Whether the run that began with the half's first sample is held back (not in the first
    /// half, whose first run began the recording).
    hold_head: bool,
    head: Option<Held>,
    tail: Option<Held>,
}

impl<'p> HalfRuns<'p> {
    fn new(profile: &'p Profile, rules: Rules, described: Option<usize>, hold_head: bool) -> Self {
        Self {
            rules,
            describer: Describer::new(profile),
            found: Found::new(described),
            used_interval: !rules.by_time,
            hold_head,
            head: None,
            tail: None,
        }
    }

    /// Counts `run` as a block and describes it when it may be among the longest, its rows'
    /// sums taken from `rows` only then.
    fn close(&mut self, run: &Run, cut: Option<BlockCut>, rows: impl FnOnce() -> Vec<RowSum>) {
        if let Some((extra, length)) = count(&self.rules, run, cut, &mut self.found, &mut self.used_interval) {
            let rules = self.rules;
            let mut weights: Vec<(u32, i64)> = rows().iter().map(|r| (r.row, rules.weight_of(r))).collect();
            // The last sample weighs what is left of the block (less when it weighs more than the
            // gap): added to its row's entry that holds it (the last, when halves' rows were put
            // together), never as an entry of its own, so that no weight is negative.
            if let Some(last) = weights.iter_mut().rev().find(|(row, _)| *row == run.last.row) {
                last.1 = last.1.saturating_add(extra);
            }
            let mut block = self.describer.describe(run, weights.into_iter(), length);
            block.cut = cut;
            self.found.blocks.push(block);
        }
    }
}

impl Runs for HalfRuns<'_> {
    fn end(&mut self, run: &Run, rows: &mut RunRows<'_>) {
        let is_head = run.head && self.hold_head;
        if is_head || run.tail {
            let held = Held { run: *run, rows: rows.sums().to_vec() };
            if is_head {
                self.head = Some(held);
            } else {
                self.tail = Some(held);
            }
            return;
        }
        // Runs that reach the end of the walk are held, so a run closed here can only be cut by
        // the recording's start: the first half's first run.
        let cut = BlockCut::of(run.head && !self.hold_head, false);
        self.close(run, cut, || rows.sums().to_vec());
    }
}

/// The rows whose facts pass `test`, as a bit set.
fn row_bits(facts: &RowFacts, test: impl Fn(usize) -> bool) -> Vec<u64> {
    let mut bits = vec![0u64; facts.category.len().div_ceil(64)];
    for row in (0..facts.category.len()).filter(|r| test(*r)) {
        bits[row / 64] |= 1 << (row % 64);
    }
    bits
}

/// A block's rank among the longest, as (length, start) — the shortest and latest on top of a
/// heap of them.
type Rank = std::cmp::Reverse<(i64, std::cmp::Reverse<i64>)>;

/// The blocks a walk found: every one's length, and the blocks described (all of them, or those
/// that were among the `described` longest when they ended).
struct Found {
    lengths: Vec<i64>,
    /// How many of them are cut by an edge.
    cut: usize,
    blocks: Vec<Block>,
    /// How many are described and the longest so far, when not all are.
    longest: Option<(usize, std::collections::BinaryHeap<Rank>)>,
}

impl Found {
    fn new(described: Option<usize>) -> Self {
        Self {
            lengths: Vec::new(),
            cut: 0,
            blocks: Vec::new(),
            longest: described.map(|n| (n, std::collections::BinaryHeap::new())),
        }
    }

    /// Counts a block of `duration` starting at `start`; whether to describe it: whether it is
    /// among the longest so far (blocks come in time order, so a later one of equal length
    /// ranks below).
    fn count(&mut self, start: i64, duration: i64, cut: Option<BlockCut>) -> bool {
        self.lengths.push(duration);
        self.cut += usize::from(cut.is_some());
        let Some((n, heap)) = &mut self.longest else { return true };
        let key: Rank = std::cmp::Reverse((duration, std::cmp::Reverse(start)));
        if heap.len() < *n {
            heap.push(key);
            return true;
        }
        match heap.peek() {
            Some(shortest) if key < *shortest => {
                heap.pop();
                heap.push(key);
                true
            }
            _ => false,
        }
    }

    /// `other`'s blocks after these.
    fn append(&mut self, mut other: Found) {
        self.lengths.append(&mut other.lengths);
        self.cut += other.cut;
        self.blocks.append(&mut other.blocks);
    }
}

/// Counts `run` in `found` when it is a block at least the minimum long; when it is to be
/// described, returns what its last sample weighs beyond its own weight (the weights then sum to
/// the block's length) and the block's (start, length).
fn count(
    rules: &Rules,
    run: &Run,
    cut: Option<BlockCut>,
    found: &mut Found,
    used: &mut bool,
) -> Option<(i64, (i64, i64))> {
    let raw_last = rules.weight(&run.last);
    let last = if raw_last <= rules.gap {
        raw_last
    } else {
        *used = true;
        rules.interval
    };
    let duration = run.last.time_ns.saturating_add(last).saturating_sub(run.first.time_ns);
    let start = run.first.time_ns.saturating_sub(rules.start);
    (duration >= rules.min_ns && found.count(start, duration, cut))
        .then(|| (last.saturating_sub(raw_last), (start, duration)))
}

impl BlockWalk {
    /// Two halves of the samples at once, each finding its own blocks; the block the halves
    /// meet in (the first half's last, the second half's first when nothing separates them) is
    /// put together from both and described once.
    fn run(
        profile: &Profile,
        min_ns: i64,
        start: i64,
        interval: i64,
        count_steps: bool,
        shown: Option<usize>,
        fill_sums: bool,
    ) -> Result<Self, WindowError> {
        let by_time = profile.value_index(ValueUnit::Nanoseconds).is_some();
        let rules = Rules { min_ns, start, interval, gap: gap_for(interval), by_time };
        let timeline = match profile.samples.timeline() {
            Some(timeline) => Some(timeline),
            None if profile.samples.is_empty() => None,
            None => return Err(WindowError::NoTimes),
        };
        let (mut early, mut late) =
            (HalfRuns::new(profile, rules, shown, false), HalfRuns::new(profile, rules, shown, true));
        let walked = match timeline {
            Some(timeline) => {
                let facts = &early.describer.facts;
                let idle = row_bits(facts, |row| facts.category[row] == Category::Idle);
                let lead = row_bits(facts, |row| facts.entry[row].is_some());
                // A run's length is its last sample's weight past that sample's time only when
                // the profile has durations (else every sample weighs the interval): else all.
                let told = if by_time { min_ns } else { i64::MIN };
                let runs = RunRules { idle: &idle, lead: &lead, gap_ns: rules.gap, count_steps, min_ns: told };
                walk_runs(timeline, profile.samples.len(), &runs, fill_sums, &mut early, &mut late)
            }
            None => RunsWalked::default(),
        };
        let [early_half, late_half] = walked.halves;
        let late_found = std::mem::replace(&mut late.found, Found::new(shown));
        early.used_interval |= late.used_interval;
        // The first half's tail and the second half's head are one block when nothing separates
        // them (a sample or a gap); each is a block of its own else.
        // (Whether a held run began with the recording's first sample: the first half's tail that
        // is also its head; whether it ended with the last: the second half ended inside it, or
        // the first did and the second had no samples.)
        let (early_empty, late_empty) = (early_half.first_ns.is_none(), late_half.first_ns.is_none());
        let held = match (early.tail.take(), late.head.take()) {
            (Some(mut tail), Some(head))
                if head.run.first.time_ns.saturating_sub(tail.run.last.time_ns) <= rules.gap =>
            {
                tail.run.last = head.run.last;
                tail.run.samples += head.run.samples;
                tail.run.lead = tail.run.lead.or(head.run.lead);
                tail.run.tail = head.run.tail;
                tail.rows.extend(head.rows);
                [Some((tail, true, true)), None]
            }
            // The second half's first run began the recording when the first half had no samples.
            (tail, head) => [tail.map(|t| (t, true, false)), head.map(|h| (h, early_empty, true))],
        };
        let ends = |run: &Run, late: bool| run.tail && (late || late_empty);
        // Blocks in time order: the first half's, the held ones, the second half's, its tail.
        // (A block is described when it is among the longest of those counted before it here:
        // never too few, as each counted is a block.)
        for (held, from_first, late) in held.into_iter().flatten() {
            let cut = BlockCut::of(from_first && held.run.head, ends(&held.run, late));
            early.close(&held.run, cut, || held.rows);
        }
        early.found.append(late_found);
        if let Some(held) = late.tail.take() {
            let cut = BlockCut::of(false, ends(&held.run, true));
            early.close(&held.run, cut, || held.rows);
        }
        let found = early.found;
        Ok(BlockWalk {
            found: found.blocks,
            lengths: found.lengths,
            cut: found.cut,
            idle_samples: early_half.idle_samples + late_half.idle_samples,
            steps: walked.steps,
            used_interval: early.used_interval,
        })
    }
}

/// What describing blocks needs, made once for all of them: the rows' facts and the stack tree
/// in depth-first order (each stack's position and the end of its subtree), so the weight under
/// a stack is a range of the block's rows.
struct Describer<'p> {
    profile: &'p Profile,
    categories: Categories,
    facts: RowFacts,
    /// Self weight per function in a block.
    funcs: SparseSums,
    refs: FunctionRefs<'p>,
    /// Running sums of a block's rows' weights (scratch).
    prefix: Vec<i128>,
    /// A block's rows: (depth-first position, stack, weight).
    rows: Vec<(u32, StackId, i64)>,
    pre: Vec<u32>,
    end: Vec<u32>,
    children: cpuprof_model::Children<StackId>,
}

impl<'p> Describer<'p> {
    fn new(profile: &'p Profile) -> Self {
        let (pre, end) = depth_first(profile);
        let children = profile.stacks.children();
        Self {
            profile,
            categories: Categories::new(profile),
            facts: RowFacts::of(profile),
            funcs: SparseSums::new(profile.funcs.len()),
            refs: FunctionRefs::new(profile),
            prefix: Vec::new(),
            rows: Vec::new(),
            pre,
            end,
            children,
        }
    }

    /// The block of `run`, from its weight per row (none negative; a row may come more than
    /// once).
    fn describe(
        &mut self,
        run: &Run,
        weights: impl Iterator<Item = (u32, i64)>,
        (start_ns, duration_ns): (i64, i64),
    ) -> Block {
        let profile = self.profile;
        let stacks = profile.samples.stacks();
        // A block's entry is its first sample's that has one.
        let entry = run.lead.and_then(|row| self.facts.entry.get(row as usize).copied().flatten());
        let entry_func = entry.unwrap_or_else(|| profile.func_of(stacks[run.first.row as usize]));
        let mut total = 0i64;
        let pre = &self.pre;
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        rows.extend(weights.filter_map(|(row, w)| {
            let stack = *stacks.get(row as usize)?;
            Some((pre[stack.index()], stack, w))
        }));
        for &(_, stack, w) in &rows {
            total = total.saturating_add(w);
            let leaf = profile.func_of(stack);
            if profile.funcs[leaf].kind != FuncKind::Root {
                self.funcs.add(leaf.index() as u32, w);
            }
        }
        // The heaviest functions (ties in SPEC §5's order): the first few of a partial sort.
        let mut own: Vec<(i64, FuncId)> =
            self.funcs.drain().map(|(f, w)| (w, self.facts.func_ids[f as usize])).collect();
        let order = |a: &(i64, FuncId), b: &(i64, FuncId)| b.0.cmp(&a.0).then_with(|| func_order(profile, a.1, b.1));
        if own.len() > BLOCK_TOP {
            own.select_nth_unstable_by(BLOCK_TOP - 1, order);
            own.truncate(BLOCK_TOP);
        }
        own.sort_unstable_by(order);
        let top = own.into_iter().map(|(w, f)| (self.refs.of(f), w)).collect();
        rows.sort_unstable_by_key(|r| r.0);
        let (common, under, native) = self.common_frame(&rows, total);
        self.rows = rows;
        Block {
            start_ns,
            duration_ns,
            samples: run.samples,
            entry: self.refs.of(entry_func),
            top,
            common: common.map(|s| self.refs.of(profile.func_of(s))),
            under: under.map(|s| self.refs.of(profile.func_of(s))),
            native: native.map(|s| self.refs.of(profile.func_of(s))),
            cut: None,
        }
    }

    /// The deepest stack through which more than half of `total` passed (`(root)` left out),
    /// and the nearest stack above it whose function is the user's code; `rows` are the
    /// block's (depth-first position, stack, weight), in depth-first order.
    /// The deepest JavaScript frame on the stacks of more than half a block's weight, the
    /// nearest app frame above it, and the deepest such frame of any kind when it is not
    /// JavaScript (a builtin, C++, a library: in a tick log they are frames, and the JavaScript
    /// that called them is what the user can change).
    fn common_frame(
        &mut self,
        rows: &[(u32, StackId, i64)],
        total: i64,
    ) -> (Option<StackId>, Option<StackId>, Option<StackId>) {
        let profile = self.profile;
        let is_root = |s: StackId| profile.funcs[profile.func_of(s)].kind == FuncKind::Root;
        let prefix = &mut self.prefix;
        prefix.clear();
        prefix.push(0i128);
        for r in rows {
            prefix.push(prefix[prefix.len() - 1] + i128::from(r.2));
        }
        let more_than_half = |w: i128| 2 * w > i128::from(total);
        let through = |s: StackId| {
            let lo = rows.partition_point(|r| r.0 < self.pre[s.index()]);
            let hi = rows.partition_point(|r| r.0 < self.end[s.index()]);
            prefix[hi] - prefix[lo]
        };
        // Down from the roots a function at a time: the stacks of one function under one path
        // taken together (a function's frames at different lines are different stacks), the
        // one function holding more than half of the weight followed at each level. The chain
        // holds a stack of each level's function, the root first.
        let mut chain: Vec<StackId> = Vec::new();
        let mut level: Vec<StackId> = self.children.roots().to_vec();
        while !level.is_empty() {
            let mut groups: rustc_hash::FxHashMap<cpuprof_model::FuncId, (i128, Vec<StackId>)> =
                rustc_hash::FxHashMap::default();
            for s in level {
                let group = groups.entry(profile.func_of(s)).or_default();
                group.0 += through(s);
                group.1.push(s);
            }
            let Some((_, stacks)) = groups.into_values().find(|(w, _)| more_than_half(*w)) else { break };
            chain.push(stacks[0]);
            level = stacks.iter().flat_map(|s| self.children.of(*s).iter().copied()).collect();
        }
        let is_js = |s: StackId| profile.funcs[profile.func_of(s)].kind == FuncKind::Js;
        let deepest = chain.iter().rposition(|s| !is_root(*s));
        // Every level above the deepest holds more than half too: the chain is its path.
        let common = deepest.and_then(|d| chain[..=d].iter().rposition(|s| !is_root(*s) && is_js(*s)));
        let native = deepest.map(|d| chain[d]).filter(|s| !is_js(*s));
        let under = common.and_then(|c| {
            chain[..c]
                .iter()
                .rev()
                .copied()
                .find(|s| !is_root(*s) && self.categories.of_func(profile.func_of(*s)) == Category::App)
        });
        let common = common.map(|c| chain[c]);
        (common, under, native)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::stack;
    use cpuprof_model::{ProfileBuilder, SampleSource, SampleTimeline, ValueType};

    /// Samples that split into halves at `at` (walked one after the other).
    struct SplitAt {
        samples: Vec<TimedSample>,
        at: usize,
    }

    impl SampleSource for SplitAt {
        fn walk(&self, visit: &mut dyn FnMut(&[TimedSample])) {
            visit(&self.samples);
        }

        fn walk_halves(
            &self,
            first: &mut (dyn FnMut(&[TimedSample]) + Send),
            second: &mut (dyn FnMut(&[TimedSample]) + Send),
        ) {
            let (a, b) = self.samples.split_at(self.at);
            first(a);
            second(b);
        }
    }

    /// A profile of one sample per letter of `pattern`, 1 ms apart: `.` idle, `a`/`b` busy in
    /// that function, `|` a 300 ms pause before the next sample, `=` the next sample at the time
    /// of the one before.
    fn profile(pattern: &str, at: usize) -> Profile {
        let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
        let idle = stack(&mut b, "(idle)", FuncKind::Idle);
        let fa = stack(&mut b, "a", FuncKind::Js);
        let fb = stack(&mut b, "b", FuncKind::Js);
        let mut samples = Vec::new();
        let mut t = 0i64;
        for c in pattern.chars() {
            if c == '|' {
                t += 300_000_000;
                continue;
            }
            if c == '=' {
                // The next sample at the time of the one before, which lasts 0.
                t -= 1_000_000;
                continue;
            }
            let s = match c {
                '.' => idle,
                'a' => fa,
                _ => fb,
            };
            let row = samples.len() as u32;
            b.sample(s, None, &[1, 1_000_000]);
            samples.push(TimedSample { row, time_ns: t, weight_ns: 1_000_000 });
            t += 1_000_000;
        }
        // Each sample lasts until the next (a pause's last sample: the 300 ms too).
        for k in 1..samples.len() {
            samples[k - 1].weight_ns = samples[k].time_ns - samples[k - 1].time_ns;
        }
        let at = at.min(samples.len());
        b.timeline(SampleTimeline::new(SplitAt { samples, at }));
        b.timing(Some(0), Some(t), Some(1_000_000));
        b.finish().unwrap()
    }

    /// `blocks` finds the rows' sums left to the timeline in its own walk (`diff --blocks`
    /// reads them next: one walk for both); `blocks_only` leaves them, and they are the same
    /// when read later.
    #[test]
    fn blocks_sum_the_rows_in_their_walk_unless_told_not_to() {
        use cpuprof_parse::{parse, Origin, ParseOptions};
        let bytes = std::fs::read("../../fixtures/cpuprofile/blocks.cpuprofile").unwrap();
        let read = || parse(bytes.as_slice(), &Origin("blocks".into()), &ParseOptions::with_timeline()).unwrap();
        let (summing, leaving) = (read(), read());
        assert!(!summing.samples.values_known(), "the fixture's sums are left to the timeline");
        let found = blocks(&summing, 50_000_000, None).unwrap();
        assert!(summing.samples.values_known());
        let only = blocks_only(&leaving, 50_000_000, None).unwrap();
        assert!(!leaving.samples.values_known());
        assert_eq!(found.lengths, only.lengths);
        assert_eq!(leaving.samples.values(1), summing.samples.values(1));
    }

    #[test]
    fn a_last_sample_weighing_more_than_the_gap_leaves_the_common_frame_as_it_is() {
        // a's sample is followed by a 300 ms pause (past the gap), so it weighs the interval in
        // the block; b ran 3 of its 4 ms: the block was blocked in b. (a's stack comes before
        // b's in the tree: a weight of a's own for the pause, and one taking it back, would
        // put the running sum past half at a.)
        let pattern = "..bbba|..";
        let n = pattern.chars().filter(|c| !"|=".contains(*c)).count();
        for at in 0..=n {
            let found = blocks(&profile(pattern, at), 1, None).unwrap();
            let block = &found.blocks[0];
            assert_eq!(block.duration_ns, 4_000_000, "split at {at}");
            assert_eq!(block.common.as_ref().map(|f| &*f.name), Some("b"), "split at {at}");
        }
    }

    #[test]
    fn a_function_that_ran_for_no_time_still_counts() {
        // b's sample lasts 0 (a at the same time follows): b is in the block's top with 0, as in
        // SPEC §12 and the oracle, and is the bucket's top when nothing else ran in it.
        let found = blocks(&profile("aab=aa..", 6), 1, None).unwrap();
        let top: Vec<(&str, i64)> = found.blocks[0].top.iter().map(|(f, w)| (&*f.name, *w)).collect();
        assert_eq!(top, [("a", 4_000_000), ("b", 0)]);
        let options = crate::TimelineOptions { bucket_ns: Some(1_000_000), ..Default::default() };
        let line = crate::timeline(&profile("..b=....", 7), &options).unwrap();
        assert_eq!(line.buckets[2].top.as_ref().map(|(f, w)| (&*f.name, *w)), Some(("b", 0)));
    }

    #[test]
    fn the_halves_of_a_walk_sum_the_buckets_and_windows_one_walk_sums() {
        let pattern = "..aaab..bb|ab...aaaa..b";
        let n = pattern.chars().filter(|c| !"|=".contains(*c)).count();
        let options = crate::TimelineOptions { bucket_ns: Some(3_000_000), ..Default::default() };
        let whole = crate::timeline(&profile(pattern, n), &options).unwrap();
        let mut cut_whole = profile(pattern, n);
        assert!(cut_whole.retain_window(2_000_000, 305_000_000));
        for at in 0..=n {
            let split = crate::timeline(&profile(pattern, at), &options).unwrap();
            assert_eq!(split.buckets, whole.buckets, "split at {at}");
            assert_eq!(split.phases, whole.phases, "split at {at}");
            let mut cut = profile(pattern, at);
            assert!(cut.retain_window(2_000_000, 305_000_000));
            assert_eq!(cut.samples.stacks(), cut_whole.samples.stacks(), "split at {at}");
            assert_eq!(cut.samples.values(1), cut_whole.samples.values(1), "split at {at}");
        }
    }

    #[test]
    fn a_phase_cut_from_its_buckets_is_the_window_a_walk_cuts() {
        let pattern = "..aaab..bb|ab...aaaa..b.aaaaaaaaa|bbbbbbbbbbbb";
        let n = pattern.chars().filter(|c| !"|=".contains(*c)).count();
        let mut options = crate::TimelineOptions { bucket_ns: Some(3_000_000), ..Default::default() };
        options.keep_rows = true;
        let mut phases_seen = 0;
        for at in 0..=n {
            let whole = profile(pattern, at);
            let line = crate::timeline(&whole, &options).unwrap();
            for phase in &line.phases {
                let sums = line.phase_rows(phase, whole.samples.len()).expect("rows kept");
                let (mut walked, mut summed) = (profile(pattern, at), profile(pattern, at));
                assert!(walked.retain_window(phase.start_ns, phase.end_ns));
                assert!(summed.retain_window_summed(phase.start_ns, phase.end_ns, &sums));
                assert_eq!(summed.samples.stacks(), walked.samples.stacks(), "split at {at}, {phase:?}");
                for k in 0..2 {
                    assert_eq!(summed.samples.values(k), walked.samples.values(k), "split at {at}, {phase:?}");
                }
                phases_seen += 1;
            }
        }
        assert!(phases_seen > n + 1, "{phases_seen} phases");
        // A sample before the recording's start is in the first bucket but in no window.
        let mut early = profile(pattern, n);
        early.meta.start_ns = Some(2_000_000);
        let line = crate::timeline(&early, &options).unwrap();
        assert!(line.phases.iter().all(|p| line.phase_rows(p, early.samples.len()).is_none()));
        options.keep_rows = false;
        let line = crate::timeline(&profile(pattern, n), &options).unwrap();
        assert!(line.phase_rows(&line.phases[0], n).is_none());
        // Times that saturate: the last bucket's end is i64::MAX, which names no bucket exactly.
        for times in [[0, 1_000_000, i64::MAX / 2, i64::MAX - 2_500_000], [0, 1_000_000, i64::MAX / 2, i64::MAX]] {
            let far = || {
                let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
                let stack = stack(&mut b, "a", FuncKind::Js);
                for _ in 0..4 {
                    b.sample(stack, None, &[1, 1_000_000]);
                }
                let samples: Vec<TimedSample> = (0..4u32)
                    .map(|k| TimedSample { row: k, time_ns: times[k as usize], weight_ns: 1_000_000 })
                    .collect();
                b.timeline(SampleTimeline::new(SplitAt { samples, at: 2 }));
                b.timing(Some(0), Some(i64::MAX), Some(1_000_000));
                b.finish().unwrap()
            };
            let mut options = crate::TimelineOptions { buckets: Some(40), ..Default::default() };
            options.keep_rows = true;
            let line = crate::timeline(&far(), &options).unwrap();
            for phase in &line.phases {
                let mut walked = far();
                assert!(walked.retain_window(phase.start_ns, phase.end_ns));
                if let Some(sums) = line.phase_rows(phase, 4) {
                    let mut summed = far();
                    assert!(summed.retain_window_summed(phase.start_ns, phase.end_ns, &sums));
                    assert_eq!(summed.samples.values(0), walked.samples.values(0), "{times:?} {phase:?}");
                }
            }
        }
    }

    #[test]
    fn the_halves_of_a_walk_find_the_blocks_one_walk_finds() {
        let patterns =
            ["..aaab..bb|ab...aaaa..", "aaaa|aaaa", "ab.ab.ab", "....", "aaaaaaaaaaaa", "a|b|a", ".a.a.aa|.bb."];
        for pattern in patterns.into_iter().chain(["aab=aa..", "..b=a.."]) {
            let n = pattern.chars().filter(|c| !"|=".contains(*c)).count();
            for min_ns in [1, 2_000_000, 3_000_000] {
                let whole = blocks(&profile(pattern, n), min_ns, None).unwrap();
                assert_eq!(whole.lengths, whole.blocks.iter().map(|b| b.duration_ns).collect::<Vec<_>>());
                for at in 0..=n {
                    let split = blocks(&profile(pattern, at), min_ns, None).unwrap();
                    assert_eq!(split.blocks, whole.blocks, "{pattern} split at {at}, min {min_ns}");
                    assert_eq!(split.lengths, whole.lengths, "{pattern} split at {at}, min {min_ns}");
                    assert_eq!(split.idle_samples, whole.idle_samples);
                    assert_eq!(split.interval_ns, whole.interval_ns);
                    // Described or not, the longest (ties: the earliest) are those of the whole.
                    for shown in 0..4 {
                        let some = blocks(&profile(pattern, at), min_ns, Some(shown)).unwrap();
                        let mut longest = whole.blocks.clone();
                        longest.sort_by_key(|b| (std::cmp::Reverse(b.duration_ns), b.start_ns));
                        longest.truncate(shown);
                        longest.sort_by_key(|b| b.start_ns);
                        assert_eq!(some.blocks, longest, "{pattern} split at {at}, min {min_ns}, {shown} shown");
                        assert_eq!(some.lengths, whole.lengths);
                    }
                }
            }
        }
    }
}
