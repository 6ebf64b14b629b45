//! What an HTML report embeds so that the page can compute `top`, the call tree, callers and
//! callees for any range of the timeline itself: the functions (keyed as `top` keys them), a
//! call tree of functions, and per time bucket the self weight of each tree node that has some
//! (sparse) — not one record per sample. Summed over a range of buckets, the nodes' self
//! weights are exactly the samples of the window those buckets span (a sample belongs to the
//! bucket its time falls in, as to a window), so the page's numbers equal `top --from --to`'s.
//!
//! Large profiles are pruned to a size a browser opens at once: call paths whose total is
//! under a share of the whole (the smallest share that fits the budget) hang, each under
//! its nearest kept caller, as `(pruned)` → the function that had the self time. Self time
//! therefore stays exact per function; what a pruned path loses is the total of the functions
//! in its middle, and [`PrunedPaths`] says how much that is at most.

use cpuprof_model::{FuncKind, Profile};
use rustc_hash::FxHashMap;

use crate::category::{Categories, Category};
use crate::filter::StackFilter;
use crate::keys::GroupBy;
use crate::prefix_tree::PrefixTree;
use crate::sums::SparseSums;
use crate::timeline::{timeline, TimelineError, TimelineOptions};
use crate::top::{func_keys, Keys, NO_KEY};
use crate::weights::{columns, effective, weighs_time, Weight};

/// The function index of a node that stands for pruned call paths.
pub const PRUNED: u32 = u32::MAX;

/// Options of [`report_data`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReportDataOptions {
    /// What a sample weighs.
    pub weight: Weight,
    /// Which samples count (idle, focus, ignore), as `top`'s.
    pub filter: StackFilter,
    /// At most this many buckets (of a round length: 1, 2, 5 × 10^k ms).
    pub max_buckets: u32,
    /// Prune until the tree has at most this many nodes…
    pub max_nodes: usize,
    /// …and the buckets at most this many (node, weight) entries in all.
    pub max_entries: usize,
    /// The flame chart holds at most this many runs (more are merged into slots of time).
    pub max_runs: usize,
}

impl Default for ReportDataOptions {
    fn default() -> Self {
        Self {
            weight: Weight::Time,
            filter: StackFilter::default(),
            max_buckets: crate::defaults::REPORT_MAX_BUCKETS,
            max_nodes: crate::defaults::REPORT_MAX_NODES,
            max_entries: crate::defaults::REPORT_MAX_ENTRIES,
            max_runs: crate::defaults::REPORT_MAX_RUNS,
        }
    }
}

/// A function as `top --by function` keys it, with the file and package rows it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportFunction {
    /// Its name as `top` shows it.
    pub name: String,
    /// Its file, if any.
    pub file: Option<String>,
    /// 1-based start line.
    pub line: Option<u32>,
    /// 1-based start column.
    pub column: Option<u32>,
    /// What kind of code it is.
    pub kind: FuncKind,
    /// Its category.
    pub category: Category,
    /// Its row of `top --by file`: an index into [`ReportData::files`].
    pub file_group: u32,
    /// Its row of `top --by package`: an index into [`ReportData::packages`].
    pub package_group: u32,
    /// Its total over the whole profile, once per path (`top`'s): exact, however much of the
    /// tree is pruned.
    pub whole_total: i64,
}

/// One bucket of the timeline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReportBucket {
    /// Start, ns after the recording's start.
    pub start_ns: i64,
    /// End (excluded).
    pub end_ns: i64,
    /// All its samples.
    pub samples: i64,
    /// All its weight per category ([`Category::index`]), idle included.
    pub categories: [i64; Category::ALL.len()],
    /// The weight of its counted samples (idle excluded unless included, before focus and
    /// ignore): the denominator of `top`'s percentages.
    pub counted: i64,
    /// The number of those samples.
    pub counted_samples: i64,
    /// Self weight per node with some, by node index.
    pub weights: Vec<(u32, i64)>,
}

/// How much pruning took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PrunedPaths {
    /// Each pruned path's total was at most this share of the whole (0..=1); 0: none was pruned.
    pub at_most_share: f64,
    /// The self weight of their functions, now under `(pruned)` nodes.
    pub weight: i64,
    /// How many tree nodes were folded.
    pub nodes: u64,
    /// Of `weight`, what is on the `(pruned)` nodes themselves, by no function: when the
    /// profile has more functions than the budget has nodes, the lightest lose their names.
    pub unnamed: i64,
}

/// The result of [`report_data`].
#[derive(Clone, Debug)]
pub struct ReportData {
    /// Unit of the weights: ns or samples.
    pub unit: Weight,
    /// Whether the buckets are cut by time (the profile has sample times): a range of them is a
    /// window. Without times, there is one bucket, the whole profile.
    pub timed: bool,
    /// The buckets' length, ns (the whole recording when not timed).
    pub bucket_ns: i64,
    /// The functions, by the index the nodes use.
    pub functions: Vec<ReportFunction>,
    /// The labels of `top --by file`'s rows.
    pub files: Vec<String>,
    /// Each file's total over the whole profile (as [`ReportFunction::whole_total`]).
    pub file_totals: Vec<i64>,
    /// The labels of `top --by package`'s rows.
    pub packages: Vec<String>,
    /// Each package's total over the whole profile.
    pub package_totals: Vec<i64>,
    /// The call tree: each node's parent (`None` for the outermost frames), parents first.
    pub parents: Vec<Option<u32>>,
    /// Each node's function, or [`PRUNED`].
    pub node_functions: Vec<u32>,
    /// The buckets, in time order.
    pub buckets: Vec<ReportBucket>,
    /// Per function, per line: its self weight on that line over the whole profile, where the
    /// profile has line-level ticks: (function, line, weight); the heaviest
    /// [`crate::defaults::REPORT_LINES`] lines of each function.
    pub lines: Vec<(u32, u32, i64)>,
    /// What pruning took.
    pub pruned: PrunedPaths,
    /// The samples in time order, for the flame chart (empty without sample times).
    pub chart: ChartRuns,
}

/// The samples in time order as runs: consecutive samples with the same stack (node) merged,
/// each lasting until the next sample starts (DevTools' attribution; the last one its own
/// length). Samples the filter leaves out (idle, unless included) are gaps. Times are ns after
/// the recording's start, as the buckets'.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChartRuns {
    /// Each run's start.
    pub start_ns: Vec<i64>,
    /// Each run's end (excluded).
    pub end_ns: Vec<i64>,
    /// Each run's node (its innermost frame).
    pub node: Vec<u32>,
    /// How many runs the samples make before any merging into slots.
    pub runs: usize,
    /// When there were more runs than a page holds: the length of the slots of time they were
    /// merged into, each slot shown as the stack (or gap) that held most of it.
    pub slot_ns: Option<i64>,
}

/// Builds what a report embeds. Needs no sample times: a profile without them (pprof, folded
/// stacks) has one bucket.
pub fn report_data(profile: &Profile, options: &ReportDataOptions) -> Result<ReportData, TimelineError> {
    let mask = options.filter.mask(profile);
    let categories = Categories::new(profile);
    let mut keys = Keys::default();
    let function_of = func_keys(profile, GroupBy::Function, &mut keys);
    let function_keys = keys.keys;
    let mut keys = Keys::default();
    let file_of = func_keys(profile, GroupBy::File, &mut keys);
    let files: Vec<String> = keys.keys.into_iter().map(|k| k.into_row([0; 4]).name).collect();
    let mut keys = Keys::default();
    let package_of = func_keys(profile, GroupBy::Package, &mut keys);
    let packages: Vec<String> = keys.keys.into_iter().map(|k| k.into_row([0; 4]).name).collect();

    // The functions, with the first model function of each key standing for it.
    let mut first: Vec<Option<usize>> = vec![None; function_keys.len()];
    for (f, key) in function_of.iter().enumerate() {
        if *key != NO_KEY && first[*key as usize].is_none() {
            first[*key as usize] = Some(f);
        }
    }
    let functions: Vec<ReportFunction> = function_keys
        .into_iter()
        .zip(&first)
        .map(|(key, f)| {
            let f = f.unwrap_or(0);
            let row = key.into_row([0; 4]);
            ReportFunction {
                name: row.name,
                file: row.file,
                line: row.line,
                column: row.column,
                kind: row.kind,
                category: Category::of_func(profile, &profile.funcs.as_slice()[f]),
                file_group: file_of[f],
                package_group: package_of[f],
                whole_total: 0,
            }
        })
        .collect();

    // The tree of functions: stacks whose frames have the same function under the same node are one node.
    let mut tree = PrefixTree::default();
    let mut node_of_stack: Vec<Option<u32>> = Vec::with_capacity(profile.stacks.len());
    for (parent, frame) in profile.stacks.parents().iter().zip(profile.stacks.frames()) {
        let above = parent.and_then(|p| node_of_stack[p.index()]);
        let key = function_of[profile.frames[*frame].func.index()];
        node_of_stack.push(if key == NO_KEY { above } else { Some(tree.node(above, key)) });
    }

    // The value columns are read only after the timeline's walk, which finds them on its way
    // (read first, they would cost a walk of their own).
    let by_time = weighs_time(profile, options.weight);
    let stacks = profile.samples.stacks();
    let mut buckets: Vec<ReportBucket> = Vec::new();
    let mut timed = false;
    let mut bucket_ns = profile.meta.duration_ns.unwrap_or(0).max(1);
    let mut scratch = SparseSums::new(tree.len());
    // Adds sample row `row` (count `c`, weight `w`) to `bucket`.
    let add = |bucket: &mut ReportBucket, scratch: &mut SparseSums, row: usize, c: i64, w: i64| {
        let Some(stack) = stacks.get(row) else { return };
        bucket.samples = bucket.samples.saturating_add(c);
        let category = categories.of_sample(profile, row).index();
        bucket.categories[category] = bucket.categories[category].saturating_add(w);
        let s = stack.index();
        if mask.counted[s] {
            bucket.counted = bucket.counted.saturating_add(w);
            bucket.counted_samples = bucket.counted_samples.saturating_add(c);
        }
        if mask.kept[s] {
            if let Some(node) = node_of_stack[s] {
                scratch.add(node, w);
            }
        }
    };
    if profile.samples.timeline().is_some() {
        let length = crate::window::recording(profile).map_or(0, |(_, l)| l);
        let topts = TimelineOptions {
            bucket_ns: Some(crate::timeline::round_bucket_ns(length, options.max_buckets)),
            weight: options.weight,
            keep_rows: true,
            ..TimelineOptions::default()
        };
        let line = timeline(profile, &topts)?;
        if let Some(rows) = line.rows.as_ref() {
            use rayon::prelude::*;
            timed = true;
            bucket_ns = line.bucket_ns;
            // Buckets are independent: summed on every thread, each with a scratch of its own.
            buckets = line
                .buckets
                .par_iter()
                .zip(rows)
                .map_init(
                    || SparseSums::new(tree.len()),
                    |scratch, (b, rows)| {
                        let mut bucket =
                            ReportBucket { start_ns: b.start_ns, end_ns: b.end_ns, ..ReportBucket::default() };
                        for r in rows {
                            let w = if by_time { r.ns } else { r.samples };
                            add(&mut bucket, scratch, r.row as usize, r.samples, w);
                        }
                        bucket.weights = scratch.take_sorted();
                        bucket
                    },
                )
                .collect();
        }
    }
    if !timed {
        // One bucket: the whole profile.
        let mut bucket = ReportBucket { start_ns: 0, end_ns: bucket_ns, ..ReportBucket::default() };
        let (weights, counts) = columns(profile, options.weight);
        for row in 0..stacks.len() {
            let c = counts.map_or(1, |c| c[row]);
            let w = weights.map_or(c, |w| w[row]);
            add(&mut bucket, &mut scratch, row, c, w);
        }
        bucket.weights = scratch.take_sorted();
        buckets.push(bucket);
    }

    let lines = line_weights(profile, &mask.kept, &function_of, options.weight);
    // Exact totals over the whole profile, from the tree before it is pruned: what the page's
    // top shows for the whole profile (a range's come from the pruned tree).
    let mut functions = functions;
    let (function_totals, file_totals, package_totals) = {
        let node_total = node_totals(&tree, &buckets);
        let fs = &functions;
        let of = |key: fn(&ReportFunction) -> u32, count: usize| {
            once_per_path(&tree, &node_total, |n| key(&fs[tree.keys[n] as usize]), count)
        };
        (
            once_per_path(&tree, &node_total, |n| tree.keys[n], functions.len()),
            of(|f| f.file_group, files.len()),
            of(|f| f.package_group, packages.len()),
        )
    };
    for (f, total) in functions.iter_mut().zip(function_totals) {
        f.whole_total = total;
    }
    // Prune, then merge buckets to fit the entries. Each bucket has an entry per node with self
    // time in it, so a smaller tree leaves more buckets: prune harder while there would be fewer
    // than REPORT_MIN_BUCKETS, as long as what is pruned stays under REPORT_MAX_PRUNED_PERCENT.
    let wanted = buckets.len().min(crate::defaults::REPORT_MIN_BUCKETS);
    let whole: i64 = buckets.iter().flat_map(|b| &b.weights).map(|(_, w)| *w).fold(0, i64::saturating_add);
    let too_much = (whole as f64 * crate::defaults::REPORT_MAX_PRUNED_PERCENT / 100.0) as i64;
    let mut max_nodes = options.max_nodes;
    let mut fewer_buckets = None;
    let (parents, node_functions, pruned, buckets, bucket_ns, remap) = loop {
        let (parents, functions, pruned, pruned_buckets, remap) = prune(&tree, &buckets, max_nodes);
        if pruned.weight > too_much {
            if let Some(candidate) = fewer_buckets.take() {
                break candidate;
            }
        }
        let (merged, length) = coarsen(pruned_buckets, bucket_ns, options.max_entries, parents.len());
        let candidate = (parents, functions, pruned, merged, length, remap);
        if candidate.3.len() >= wanted || max_nodes <= crate::defaults::REPORT_MIN_NODES {
            break candidate;
        }
        fewer_buckets = Some(candidate);
        max_nodes /= 2;
    };
    let chart = if timed {
        chart_runs(profile, &node_of_stack, &mask.kept, &remap, options.max_runs)
    } else {
        ChartRuns::default()
    };
    let (functions, (files, file_totals), (packages, package_totals), node_functions, lines) =
        used_only(&functions, (&files, &file_totals), (&packages, &package_totals), node_functions, lines);
    Ok(ReportData {
        unit: effective(profile, options.weight),
        timed,
        bucket_ns,
        functions,
        files,
        file_totals,
        packages,
        package_totals,
        parents,
        node_functions,
        buckets,
        lines,
        pruned,
        chart,
    })
}

/// The flame chart's runs (see [`ChartRuns`]): `node_of_stack` maps a stack to its node before
/// pruning, `remap` a node to its node after; at most `max_runs` runs. One pass over the
/// samples, in memory bounded by `max_runs` however long the recording.
fn chart_runs(
    profile: &Profile,
    node_of_stack: &[Option<u32>],
    kept: &[bool],
    remap: &[u32],
    max_runs: usize,
) -> ChartRuns {
    let Some((origin, length)) = crate::window::recording(profile) else { return ChartRuns::default() };
    let stacks = profile.samples.stacks();
    // Aligned slots, should they be needed: at most two more than length / slot of them.
    let slot = length.max(1) / max_runs.saturating_sub(2).max(1) as i64 + 1;
    let mut chart = Chart { max_runs, slot, open: None, runs: Vec::new(), total: 0, slots: None };
    // The previous sample: (start, node or a gap, its own length).
    let mut previous: Option<(i64, Option<u32>, i64)> = None;
    let _ = crate::window::each_sample(profile, |s| {
        let node = stacks
            .get(s.row as usize)
            .filter(|stack| kept[stack.index()])
            .and_then(|stack| node_of_stack[stack.index()])
            .map(|n| remap[n as usize]);
        let start = s.time_ns.saturating_sub(origin);
        if let Some((from, node, _)) = previous {
            chart.sample(from, start, node);
        }
        previous = Some((start, node, s.weight_ns.max(0)));
    });
    if let Some((from, node, own)) = previous {
        // The last sample: its own length, or up to the recording's end.
        chart.sample(from, if own > 0 { from.saturating_add(own) } else { length.max(from) }, node);
    }
    chart.finish()
}

/// [`chart_runs`]' state: the run being extended, the runs so far, and once there are more than
/// `max_runs`, the slots they go to instead.
struct Chart {
    max_runs: usize,
    slot: i64,
    open: Option<(i64, i64, Option<u32>)>,
    runs: Vec<(i64, i64, Option<u32>)>,
    /// Runs with a stack, before any merging into slots.
    total: usize,
    slots: Option<Slots>,
}

impl Chart {
    /// A sample from `start` to `end` on `node` (`None`: a gap).
    fn sample(&mut self, start: i64, end: i64, node: Option<u32>) {
        match &mut self.open {
            Some(open) if open.2 == node && open.1 == start => open.1 = end,
            _ => {
                if let Some(run) = self.open.replace((start, end, node)) {
                    self.run(run);
                }
            }
        }
    }

    fn run(&mut self, run: (i64, i64, Option<u32>)) {
        if run.2.is_some() && run.1 > run.0 {
            self.total += 1;
        }
        if let Some(slots) = &mut self.slots {
            slots.add(run);
            return;
        }
        self.runs.push(run);
        if self.total > self.max_runs {
            let mut slots =
                Slots { slot: self.slot, from: i64::MIN, share: Vec::new(), entry: Vec::new(), out: Vec::new() };
            for run in self.runs.drain(..) {
                slots.add(run);
            }
            self.slots = Some(slots);
        }
    }

    fn finish(mut self) -> ChartRuns {
        if let Some(run) = self.open.take() {
            self.run(run);
        }
        let slot_ns = self.slots.as_ref().map(|s| s.slot);
        let runs = match self.slots {
            Some(mut slots) => {
                slots.close();
                slots.out
            }
            None => self.runs,
        };
        let mut chart = ChartRuns { runs: self.total, slot_ns, ..ChartRuns::default() };
        for (start, end, node) in runs {
            if let Some(node) = node.filter(|_| end > start) {
                chart.start_ns.push(start);
                chart.end_ns.push(end);
                chart.node.push(node);
            }
        }
        chart
    }
}

/// Runs merged into slots of time, each the stack (or gap) that held most of it.
struct Slots {
    slot: i64,
    /// The start of the slot being filled.
    from: i64,
    /// The slot's stacks (or gap) with their time in it, in the order first met.
    share: Vec<(Option<u32>, i64)>,
    /// Each stack's entry in `share`, plus one (0: none), by [`Slots::key`]: a slot holds
    /// hundreds of stacks, which a search of `share` for each run went through.
    entry: Vec<u32>,
    out: Vec<(i64, i64, Option<u32>)>,
}

impl Slots {
    fn add(&mut self, (start, end, node): (i64, i64, Option<u32>)) {
        let mut at = start;
        while at < end {
            // Most runs start in the slot being filled (`from` is a slot's start, or i64::MIN
            // before the first): no division for them.
            let within = at.checked_sub(self.from).is_some_and(|d| (0..self.slot).contains(&d));
            let from = if within { self.from } else { at.div_euclid(self.slot) * self.slot };
            if from != self.from {
                self.close();
                self.from = from;
            }
            let to = end.min(from.saturating_add(self.slot));
            let key = Self::key(node);
            if key >= self.entry.len() {
                self.entry.resize(key + 1, 0);
            }
            match self.entry[key] {
                0 => {
                    self.share.push((node, to - at));
                    self.entry[key] = self.share.len() as u32;
                }
                k => self.share[k as usize - 1].1 += to - at,
            }
            at = to;
        }
    }

    /// Where `node` is in [`Slots::entry`].
    fn key(node: Option<u32>) -> usize {
        node.map_or(0, |n| n as usize + 1)
    }

    /// Ends the slot being filled.
    fn close(&mut self) {
        for (node, _) in &self.share {
            self.entry[Self::key(*node)] = 0;
        }
        let Some(&(node, _)) = self.share.iter().max_by_key(|(_, w)| *w) else { return };
        let (from, to) = (self.from, self.from.saturating_add(self.slot));
        match self.out.last_mut() {
            Some(last) if last.2 == node && last.1 == from => last.1 = to,
            _ => self.out.push((from, to, node)),
        }
        self.share.clear();
    }
}

/// Only the functions the tree names (a profile names many without samples: a tick log, every
/// function V8 compiled) and the files and packages they are in, renumbered.
#[allow(clippy::type_complexity)]
fn used_only(
    functions: &[ReportFunction],
    files: (&[String], &[i64]),
    packages: (&[String], &[i64]),
    mut node_functions: Vec<u32>,
    mut lines: Vec<(u32, u32, i64)>,
) -> (Vec<ReportFunction>, (Vec<String>, Vec<i64>), (Vec<String>, Vec<i64>), Vec<u32>, Vec<(u32, u32, i64)>) {
    let mut new_index = vec![u32::MAX; functions.len()];
    let mut kept: Vec<ReportFunction> = Vec::new();
    for f in node_functions.iter_mut().filter(|f| **f != PRUNED) {
        let slot = &mut new_index[*f as usize];
        if *slot == u32::MAX {
            *slot = kept.len() as u32;
            kept.push(functions[*f as usize].clone());
        }
        *f = *slot;
    }
    lines.retain(|l| new_index[l.0 as usize] != u32::MAX);
    for l in &mut lines {
        l.0 = new_index[l.0 as usize];
    }
    lines.sort_unstable();
    let mut compact = |(labels, totals): (&[String], &[i64]), group: fn(&mut ReportFunction) -> &mut u32| {
        let mut new_group = vec![u32::MAX; labels.len()];
        let mut out: (Vec<String>, Vec<i64>) = (Vec::new(), Vec::new());
        for f in &mut kept {
            let g = group(f);
            let slot = &mut new_group[*g as usize];
            if *slot == u32::MAX {
                *slot = out.0.len() as u32;
                out.0.push(labels[*g as usize].clone());
                out.1.push(totals[*g as usize]);
            }
            *g = *slot;
        }
        out
    };
    let files = compact(files, |f| &mut f.file_group);
    let packages = compact(packages, |f| &mut f.package_group);
    (kept, files, packages, node_functions, lines)
}

/// Each node's total (its self weight in every bucket, and its descendants').
fn node_totals(tree: &PrefixTree, buckets: &[ReportBucket]) -> Vec<i64> {
    let mut total = vec![0i64; tree.len()];
    for b in buckets {
        for (node, w) in &b.weights {
            total[*node as usize] = total[*node as usize].saturating_add(*w);
        }
    }
    // Children come after their parents.
    for s in (0..tree.len()).rev() {
        if let Some(p) = tree.parents[s] {
            total[p as usize] = total[p as usize].saturating_add(total[s]);
        }
    }
    total
}

/// Per key, the total of the paths through a node of that key, counted once per path however
/// often the key recurs on it (as `top`): a walk down the tree without recursion.
fn once_per_path(tree: &PrefixTree, node_total: &[i64], key_of: impl Fn(usize) -> u32, keys: usize) -> Vec<i64> {
    let n = tree.len();
    // Children lists, compressed: first child index per node.
    let mut starts = vec![0usize; n + 1];
    for p in tree.parents.iter().flatten() {
        starts[*p as usize + 1] += 1;
    }
    for i in 0..n {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let mut children = vec![0u32; starts[n]];
    for (s, p) in tree.parents.iter().enumerate() {
        if let Some(p) = p {
            children[fill[*p as usize]] = s as u32;
            fill[*p as usize] += 1;
        }
    }
    let mut totals = vec![0i64; keys];
    let mut on_path = vec![0u32; keys];
    let mut todo: Vec<(u32, bool)> = (0..n).filter(|s| tree.parents[*s].is_none()).map(|s| (s as u32, false)).collect();
    while let Some((s, leaving)) = todo.pop() {
        let key = key_of(s as usize) as usize;
        if leaving {
            on_path[key] -= 1;
            continue;
        }
        if node_total[s as usize] == 0 {
            continue;
        }
        if on_path[key] == 0 {
            totals[key] = totals[key].saturating_add(node_total[s as usize]);
        }
        on_path[key] += 1;
        todo.push((s, true));
        todo.extend(children[starts[s as usize]..starts[s as usize + 1]].iter().map(|c| (*c, false)));
    }
    totals
}

/// Each function's self weight per line, over the whole profile (the split of `top --by line`).
fn line_weights(profile: &Profile, kept: &[bool], function_of: &[u32], weight: Weight) -> Vec<(u32, u32, i64)> {
    let (weights, counts) = columns(profile, weight);
    let mut self_w = vec![0i64; profile.stacks.len()];
    for (i, stack) in profile.samples.stacks().iter().enumerate() {
        let c = counts.map_or(1, |c| c[i]);
        let w = weights.map_or(c, |w| w[i]);
        self_w[stack.index()] = self_w[stack.index()].saturating_add(w);
    }
    let mut out: FxHashMap<(u32, u32), i64> = FxHashMap::default();
    for (stack, w) in profile.stacks.ids().zip(&self_w) {
        if *w == 0 || !kept[stack.index()] {
            continue;
        }
        let function = function_of[profile.func_of(stack).index()];
        if function == NO_KEY {
            continue;
        }
        for (line, part) in crate::lines::self_lines(profile, stack, crate::Amount { weight: *w, samples: 0 }) {
            *out.entry((function, line)).or_default() += part.weight;
        }
    }
    // The heaviest lines of each function (ties: the first), in function and line order.
    let mut lines: Vec<(u32, u32, i64)> = out.into_iter().map(|((f, l), w)| (f, l, w)).collect();
    lines.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then(a.1.cmp(&b.1)));
    let mut kept: Vec<(u32, u32, i64)> = Vec::with_capacity(lines.len());
    for line in lines {
        let same = kept.iter().rev().take_while(|l| l.0 == line.0).count();
        if same < crate::defaults::REPORT_LINES {
            kept.push(line);
        }
    }
    kept.sort_unstable();
    kept
}

/// Prunes the tree to at most `max_nodes` nodes (see the module's
/// comment), renumbering the kept nodes parents first and the buckets' entries with them;
/// returns the parents, the nodes' functions, what was pruned and the buckets renumbered.
#[allow(clippy::type_complexity)]
fn prune(
    tree: &PrefixTree,
    buckets: &[ReportBucket],
    max_nodes: usize,
) -> (Vec<Option<u32>>, Vec<u32>, PrunedPaths, Vec<ReportBucket>, Vec<u32>) {
    let n = tree.len();
    if n <= max_nodes {
        let identity = (0..n as u32).collect();
        return (tree.parents.clone(), tree.keys.clone(), PrunedPaths::default(), buckets.to_vec(), identity);
    }
    // Each node's total over the whole profile (children come after their parents).
    let mut total = vec![0i64; n];
    for b in buckets {
        for (node, w) in &b.weights {
            total[*node as usize] = total[*node as usize].saturating_add(*w);
        }
    }
    for s in (0..n).rev() {
        if let Some(p) = tree.parents[s] {
            total[p as usize] = total[p as usize].saturating_add(total[s]);
        }
    }
    let whole: i64 = tree.parents.iter().zip(&total).filter(|(p, _)| p.is_none()).map(|(_, t)| *t).sum();
    // Heaviest first, ties in tree order: a parent is never lighter than its child and comes
    // before it, so every prefix is a tree (a threshold on the weight would not be: a recursion
    // is a chain of equal totals, all kept or none).
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by(|a, b| total[*b as usize].cmp(&total[*a as usize]).then(a.cmp(b)));
    // Keep the heaviest `keep` nodes and fold the rest, for the largest `keep` whose tree fits
    // the budget (the folded nodes add one per function under each kept node, so the tree
    // grows with `keep`, not one for one): a binary search, each try one pass over the tree.
    let fold = |keep: usize| {
        let mut kept = vec![false; n];
        for s in &order[..keep] {
            kept[*s as usize] = true;
        }
        pruned_tree(tree, &total, &kept)
    };
    let (mut fits, mut over) = (1usize, max_nodes.min(n));
    let mut best = fold(fits);
    if best.0.len() > max_nodes {
        // More functions than the budget has nodes: even the smallest fold keeps a node per
        // function. Keep the heaviest nodes instead, each folded function by name while there is
        // room, the heaviest first, and the rest's self weight on `(pruned)` itself.
        return prune_by_weight(tree, buckets, max_nodes, &total, &order, whole);
    }
    while fits + 1 < over {
        let middle = fits + (over - fits) / 2;
        let tried = fold(middle);
        if tried.0.len() <= max_nodes {
            (fits, best) = (middle, tried);
        } else {
            over = middle;
        }
    }
    if over == max_nodes.min(n) && over > fits {
        // The top of the range was never tried.
        let tried = fold(over);
        if tried.0.len() <= max_nodes {
            (fits, best) = (over, tried);
        }
    }
    let (parents, functions, remap, pruned) = best;
    let heaviest_folded = order.get(fits).map_or(0, |s| total[*s as usize]);
    let share = if whole > 0 { heaviest_folded as f64 / whole as f64 } else { 0.0 };
    let pruned = PrunedPaths { at_most_share: share.min(1.0), weight: pruned.1, nodes: pruned.0, unnamed: 0 };
    let remapped = remap_buckets(buckets, &remap, parents.len());
    (parents, functions, pruned, remapped, remap)
}

/// The buckets' entries on the nodes of a pruned tree (`remap`: each old node's new one).
fn remap_buckets(buckets: &[ReportBucket], remap: &[u32], nodes: usize) -> Vec<ReportBucket> {
    use rayon::prelude::*;
    buckets
        .par_iter()
        .map_init(
            || SparseSums::new(nodes),
            |scratch, b| {
                for (node, w) in &b.weights {
                    scratch.add(remap[*node as usize], *w);
                }
                ReportBucket { weights: scratch.take_sorted(), ..b.clone_without_weights() }
            },
        )
        .collect()
}

/// [`prune`] when the tree has more functions than `max_nodes`: the heaviest `keep` nodes (by
/// `total`, in `order`) kept, for the largest `keep` whose kept and `(pruned)` nodes fit; the
/// room left goes to the folded nodes' functions (per `(pruned)` node), heaviest self weight
/// first; the self weight of the rest stays on the `(pruned)` node.
#[allow(clippy::type_complexity)]
fn prune_by_weight(
    tree: &PrefixTree,
    buckets: &[ReportBucket],
    max_nodes: usize,
    total: &[i64],
    order: &[u32],
    whole: i64,
) -> (Vec<Option<u32>>, Vec<u32>, PrunedPaths, Vec<ReportBucket>, Vec<u32>) {
    let n = tree.len();
    // Own (self) weight per node.
    let mut own = total.to_vec();
    for (parent, t) in tree.parents.iter().zip(total) {
        if let Some(p) = parent {
            own[*p as usize] -= t;
        }
    }
    // The kept nodes and a `(pruned)` node under each kept node (or the top) with folded ones.
    let skeleton = |keep: usize| {
        let mut kept = vec![false; n];
        for s in &order[..keep] {
            kept[*s as usize] = true;
        }
        let mut out = PrefixTree::default();
        let mut remap = vec![0u32; n];
        let mut folded_into: Vec<Option<u32>> = vec![None; n];
        let mut kept_above: Vec<Option<u32>> = vec![None; n];
        for s in 0..n {
            let parent = tree.parents[s];
            let parent_kept = parent.is_none_or(|p| kept[p as usize] && folded_into[p as usize].is_none());
            if kept[s] && parent_kept {
                remap[s] = out.node(parent.map(|p| remap[p as usize]), tree.keys[s]);
                kept_above[s] = Some(remap[s]);
            } else {
                let anchor = match parent {
                    Some(p) if parent_kept => Some(remap[p as usize]),
                    Some(p) => kept_above[p as usize],
                    None => None,
                };
                kept_above[s] = anchor;
                let pruned = out.node(anchor, PRUNED);
                remap[s] = pruned;
                folded_into[s] = Some(pruned);
            }
        }
        (out, remap, folded_into)
    };
    let (mut fits, mut over) = (1usize, max_nodes.min(n) + 1);
    while fits + 1 < over {
        let middle = fits + (over - fits) / 2;
        if skeleton(middle).0.len() <= max_nodes {
            fits = middle;
        } else {
            over = middle;
        }
    }
    let (mut out, mut remap, folded_into) = skeleton(fits);
    // The folded nodes' self weight per (pruned node, function), heaviest first, while there is room.
    let mut pairs: FxHashMap<(u32, u32), i64> = FxHashMap::default();
    let mut folded = 0u64;
    let mut weight = 0i64;
    for s in 0..n {
        if let Some(p) = folded_into[s] {
            folded += 1;
            weight = weight.saturating_add(own[s]);
            if own[s] != 0 {
                *pairs.entry((p, tree.keys[s])).or_default() += own[s];
            }
        }
    }
    let mut pairs: Vec<((u32, u32), i64)> = pairs.into_iter().collect();
    pairs.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let room = max_nodes.saturating_sub(out.len());
    let mut named: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut unnamed = weight;
    for ((p, f), w) in pairs.into_iter().take(room) {
        named.insert((p, f), out.node(Some(p), f));
        unnamed -= w;
    }
    for s in 0..n {
        if let Some(p) = folded_into[s] {
            if let Some(node) = named.get(&(p, tree.keys[s])) {
                remap[s] = *node;
            }
        }
    }
    let heaviest_folded = order.get(fits).map_or(0, |s| total[*s as usize]);
    let share = if whole > 0 { heaviest_folded as f64 / whole as f64 } else { 0.0 };
    let pruned = PrunedPaths { at_most_share: share.min(1.0), weight, nodes: folded, unnamed };
    let remapped = remap_buckets(buckets, &remap, out.len());
    (out.parents, out.keys, pruned, remapped, remap)
}

impl ReportBucket {
    fn clone_without_weights(&self) -> Self {
        ReportBucket { weights: Vec::new(), ..*self }
    }
}

/// Buckets merged into longer ones (a round length that is a multiple of `bucket_ns`) until
/// their entries number at most `max_entries`: each bucket holds an entry per function with
/// self time in it at least, so a long, diverse profile gets fewer, longer buckets.
fn coarsen(buckets: Vec<ReportBucket>, bucket_ns: i64, max_entries: usize, nodes: usize) -> (Vec<ReportBucket>, i64) {
    let entries = |buckets: &[ReportBucket]| buckets.iter().map(|b| b.weights.len()).sum::<usize>();
    if entries(&buckets) <= max_entries || buckets.len() <= 1 {
        return (buckets, bucket_ns);
    }
    let mut scratch = SparseSums::new(nodes);
    let mut length = bucket_ns;
    loop {
        length = crate::timeline::round_bucket_ns(length.saturating_mul(2), 1);
        let m = if length % bucket_ns == 0 {
            (length / bucket_ns) as usize
        } else if length >= i64::MAX / 4 {
            buckets.len() // the longest bucket there is: all in one
        } else {
            continue;
        };
        let merged: Vec<ReportBucket> = buckets
            .chunks(m)
            .map(|part| {
                let mut b = ReportBucket {
                    start_ns: part[0].start_ns,
                    end_ns: part[part.len() - 1].end_ns,
                    ..ReportBucket::default()
                };
                for p in part {
                    b.samples = b.samples.saturating_add(p.samples);
                    b.counted = b.counted.saturating_add(p.counted);
                    b.counted_samples = b.counted_samples.saturating_add(p.counted_samples);
                    for (c, v) in b.categories.iter_mut().zip(p.categories) {
                        *c = c.saturating_add(v);
                    }
                    for (node, w) in &p.weights {
                        scratch.add(*node, *w);
                    }
                }
                b.weights = scratch.take_sorted();
                b
            })
            .collect();
        if entries(&merged) <= max_entries || merged.len() <= 1 {
            return (merged, length);
        }
    }
}

/// The tree with the nodes not `kept` (and their descendants) folded: each under its nearest kept ancestor's
/// `(pruned)` child, as a child of that named by its own function. Returns the new parents and
/// functions (parents first), the new node of each old one, and (nodes folded, their self weight).
#[allow(clippy::type_complexity)]
fn pruned_tree(tree: &PrefixTree, total: &[i64], kept: &[bool]) -> (Vec<Option<u32>>, Vec<u32>, Vec<u32>, (u64, i64)) {
    let n = tree.len();
    let mut out = PrefixTree::default();
    let mut remap = vec![0u32; n];
    // For a folded node: its nearest kept ancestor's new index (None: the outermost level).
    let mut kept_above: Vec<Option<u32>> = vec![None; n];
    let mut folded = 0u64;
    for s in 0..n {
        let parent = tree.parents[s];
        let parent_kept = parent.is_none_or(|p| kept[p as usize]);
        if kept[s] && parent_kept {
            remap[s] = out.node(parent.map(|p| remap[p as usize]), tree.keys[s]);
            kept_above[s] = Some(remap[s]);
        } else {
            folded += 1;
            let anchor = match parent {
                Some(p) if parent_kept => Some(remap[p as usize]),
                Some(p) => kept_above[p as usize],
                None => None,
            };
            kept_above[s] = anchor;
            let pruned = out.node(anchor, PRUNED);
            remap[s] = out.node(Some(pruned), tree.keys[s]);
        }
    }
    // The self weight moved: whatever the folded nodes held of their own.
    let mut own = total.to_vec();
    for (parent, t) in tree.parents.iter().zip(total) {
        if let Some(p) = parent {
            own[*p as usize] -= t;
        }
    }
    let weight = (0..n).filter(|s| kept_above[*s] != Some(remap[*s])).map(|s| own[s]).sum();
    (out.parents, out.keys, remap, (folded, weight))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{top, Metric, TopOptions};
    use cpuprof_parse::{parse, Origin, ParseOptions};
    use std::collections::HashMap;

    fn read(path: &str) -> Profile {
        let bytes = std::fs::read(format!("../../fixtures/{path}")).unwrap();
        parse(bytes.as_slice(), &Origin(path.into()), &ParseOptions::with_timeline()).unwrap()
    }

    /// The flame chart's runs: in time order, apart, on nodes of the (pruned) tree; capped, at
    /// most the cap, in slots of one length, each slot's node the one the uncapped runs give most
    /// of its time, and the page told the count before merging.
    #[test]
    fn chart_runs_are_ordered_and_capped() {
        for path in ["cpuprofile/blocks.cpuprofile", "cpuprofile/deep-recursion.cpuprofile"] {
            let profile = read(path);
            let whole = report_data(&profile, &ReportDataOptions::default()).unwrap();
            let c = &whole.chart;
            assert!(c.slot_ns.is_none() && c.node.len() == c.runs && c.runs > 30, "{path}: {} runs", c.runs);
            for i in 0..c.node.len() {
                assert!(c.start_ns[i] < c.end_ns[i] && (i == 0 || c.end_ns[i - 1] <= c.start_ns[i]), "{path}: run {i}");
                assert!((c.node[i] as usize) < whole.parents.len());
            }
            // Pruned, stacks that were apart can be one node: fewer runs.
            let pruned_runs =
                report_data(&profile, &ReportDataOptions { max_nodes: 40, ..ReportDataOptions::default() })
                    .unwrap()
                    .chart
                    .runs;
            let cap = pruned_runs / 3;
            let pruned = ReportDataOptions { max_nodes: 40, max_runs: cap, ..ReportDataOptions::default() };
            let capped = report_data(&profile, &pruned).unwrap();
            let k = &capped.chart;
            assert!(k.node.len() <= cap && k.slot_ns.is_some(), "{path}: {} runs of {}", k.node.len(), k.runs);
            assert!(k.node.iter().all(|n| (*n as usize) < capped.parents.len()), "{path}: a node past the pruned tree");
            let cap = c.runs / 3;
            let unpruned = ReportDataOptions { max_runs: cap, ..ReportDataOptions::default() };
            let k = report_data(&profile, &unpruned).unwrap().chart;
            assert!(
                k.node.len() <= cap && k.runs == c.runs && k.slot_ns.is_some(),
                "{path}: {} runs of {}",
                k.node.len(),
                k.runs
            );
            let slot = k.slot_ns.unwrap();
            for i in 0..k.node.len() {
                assert_eq!(k.start_ns[i] % slot, 0, "{path}: run {i} off its slot");
                assert!(i == 0 || k.end_ns[i - 1] <= k.start_ns[i]);
                // Its first slot: the node the uncapped runs give most of it.
                let (from, to) = (k.start_ns[i], k.start_ns[i] + slot);
                let mut share: HashMap<u32, i64> = HashMap::new();
                for j in 0..c.node.len() {
                    let overlap = c.end_ns[j].min(to) - c.start_ns[j].max(from);
                    if overlap > 0 {
                        *share.entry(c.node[j]).or_default() += overlap;
                    }
                }
                let most = share.values().max().copied().unwrap_or(0);
                assert_eq!(share.get(&k.node[i]).copied(), Some(most), "{path}: slot at {from}");
            }
        }
    }

    /// Pruned hard, the tree and the buckets keep to their budgets, and every function's self
    /// weight (over its nodes in every bucket, under `(pruned)` too) is still what `top` says.
    #[test]
    fn pruning_keeps_the_budget_and_every_self_weight() {
        // The fixtures whose trees are deep enough to prune.
        for path in ["cpuprofile/deep-recursion.cpuprofile", "ticklog/deep-recursion.log"] {
            let profile = read(path);
            let whole = report_data(&profile, &ReportDataOptions::default()).unwrap();
            // The floor: a (pruned) node holds a node per function folded into it.
            let budget = (whole.parents.len() / 8).max(2 * whole.functions.len() + 4);
            assert!(whole.parents.len() > budget, "{path}: nothing to prune ({} nodes)", whole.parents.len());
            let options = ReportDataOptions { max_nodes: budget, max_entries: 150, ..ReportDataOptions::default() };
            let data = report_data(&profile, &options).unwrap();
            assert!(data.parents.len() <= budget, "{path}: {} nodes, budget {budget}", data.parents.len());
            let entries: usize = data.buckets.iter().map(|b| b.weights.len()).sum();
            assert!(entries <= 150 || data.buckets.len() == 1, "{path}: {entries} entries");
            assert!(data.pruned.nodes > 0 && data.pruned.weight > 0, "{path}: {:?}", data.pruned);
            assert!(data.node_functions.contains(&PRUNED), "{path}: no (pruned) node");

            let mut self_of: HashMap<(&str, Option<&str>, Option<u32>), i64> = HashMap::default();
            for bucket in &data.buckets {
                for (node, w) in &bucket.weights {
                    let f = data.node_functions[*node as usize];
                    assert_ne!(f, PRUNED, "{path}: self weight on a (pruned) node");
                    let f = &data.functions[f as usize];
                    *self_of.entry((&f.name, f.file.as_deref(), f.line)).or_default() += w;
                }
            }
            let oracle = top(
                &profile,
                &TopOptions::new(GroupBy::Function, Weight::Time, Metric::SelfTime, StackFilter::default()),
            );
            // top's rows with a weight, by identity.
            let top_rows = |weight: fn(&crate::TopRow) -> i64| -> HashMap<(&str, Option<&str>, Option<u32>), i64> {
                let rows = oracle.rows.iter().filter(|r| weight(r) > 0);
                rows.map(|r| ((r.name.as_str(), r.file.as_deref(), r.line), weight(r))).collect()
            };
            self_of.retain(|_, w| *w > 0);
            assert_eq!(self_of, top_rows(|r| r.self_weight), "{path}");

            // The whole profile's totals are top's, by function, file and package.
            let totals: HashMap<(&str, Option<&str>, Option<u32>), i64> = data
                .functions
                .iter()
                .filter(|f| f.whole_total > 0)
                .map(|f| ((f.name.as_str(), f.file.as_deref(), f.line), f.whole_total))
                .collect();
            assert_eq!(totals, top_rows(|r| r.total_weight), "{path}: totals");
            for (by, labels, totals) in [
                (GroupBy::File, &data.files, &data.file_totals),
                (GroupBy::Package, &data.packages, &data.package_totals),
            ] {
                let oracle =
                    top(&profile, &TopOptions::new(by, Weight::Time, Metric::SelfTime, StackFilter::default()));
                let mine: HashMap<&str, i64> =
                    labels.iter().map(String::as_str).zip(totals.iter().copied()).filter(|(_, t)| *t > 0).collect();
                let expected: HashMap<&str, i64> = oracle
                    .rows
                    .iter()
                    .filter(|r| r.total_weight > 0)
                    .map(|r| (r.name.as_str(), r.total_weight))
                    .collect();
                assert_eq!(mine, expected, "{path}: totals by {by:?}");
            }
        }
    }

    /// More distinct functions than the budget has nodes (issue 52.10: 10⁶ of them gave a 72.6 MB
    /// page, 50,000 left 99.9% of the time under `(pruned)`): the tree keeps to its budget, the
    /// heaviest functions keep their names and the lightest lose them (weights from the file's
    /// own samples, counted here), and the buckets keep their length.
    #[test]
    fn more_functions_than_nodes_keeps_the_heaviest() {
        let n = 3000usize;
        // Function i has 1 + (i * 7 mod 10) samples, 1 ms apart, interleaved over 16 s.
        let weight = |i: usize| 1 + (i * 7) % 10;
        let mut samples = Vec::new();
        for round in 0..10 {
            samples.extend((0..n).filter(|i| weight(*i) > round).map(|i| i + 2));
        }
        let mut nodes = vec![format!(
            r#"{{"id":1,"callFrame":{{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},"children":[{}]}}"#,
            (2..n + 2).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        )];
        for i in 0..n {
            nodes.push(format!(
                r#"{{"id":{},"callFrame":{{"functionName":"f{i}","scriptId":"1","url":"file:///a.js","lineNumber":{i},"columnNumber":0}}}}"#,
                i + 2
            ));
        }
        let json = format!(
            r#"{{"nodes":[{}],"startTime":0,"endTime":{},"samples":[{}],"timeDeltas":[{}]}}"#,
            nodes.join(","),
            samples.len() * 1000,
            samples.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
            vec!["1000"; samples.len()].join(",")
        );
        let profile =
            parse(json.as_bytes(), &Origin("many.cpuprofile".into()), &ParseOptions::with_timeline()).unwrap();
        let whole: i64 = (0..n).map(|i| weight(i) as i64).sum::<i64>() * 1_000_000;
        let budget = 1000;
        let options = ReportDataOptions { max_nodes: budget, ..ReportDataOptions::default() };
        let data = report_data(&profile, &options).unwrap();
        assert!(data.parents.len() <= budget, "{} nodes, budget {budget}", data.parents.len());
        // Every bucket of the timeline (100 ms for these 16.5 s), none merged.
        assert_eq!(data.bucket_ns, 100_000_000);
        let line =
            timeline(&profile, &TimelineOptions { bucket_ns: Some(data.bucket_ns), ..TimelineOptions::default() });
        assert_eq!(data.buckets.len(), line.unwrap().buckets.len());
        // The functions named are the heaviest: none lighter than one left out.
        let named: std::collections::HashSet<usize> =
            data.functions.iter().map(|f| f.name[1..].parse::<usize>().unwrap()).collect();
        let lightest_named = named.iter().map(|i| weight(*i)).min().unwrap();
        let heaviest_unnamed = (0..n).filter(|i| !named.contains(i)).map(weight).max().unwrap();
        assert!(lightest_named >= heaviest_unnamed, "named down to {lightest_named}, left out {heaviest_unnamed}");
        assert!(named.len() > budget * 9 / 10, "{} functions named", named.len());
        // Their self time is theirs, the rest is on (pruned) itself, by no function.
        let mut on_pruned = 0;
        let mut self_of: HashMap<usize, i64> = HashMap::new();
        for b in &data.buckets {
            for (node, w) in &b.weights {
                match data.node_functions[*node as usize] {
                    PRUNED => on_pruned += w,
                    f => *self_of.entry(data.functions[f as usize].name[1..].parse().unwrap()).or_default() += w,
                }
            }
        }
        for (i, w) in &self_of {
            assert_eq!(*w, weight(*i) as i64 * 1_000_000, "f{i}");
        }
        let left_out: i64 = (0..n).filter(|i| !named.contains(i)).map(|i| weight(i) as i64 * 1_000_000).sum();
        assert_eq!(on_pruned, left_out);
        assert_eq!(data.pruned.unnamed, left_out);
        assert!(data.pruned.weight < whole / 2, "{} of {whole} under (pruned)", data.pruned.weight);
    }

    /// The rows' sums a `.cpuprofile` reader leaves to the timeline come with the walk that
    /// cuts the report's buckets: reading them first would walk the 46 M samples of a 500 MB
    /// profile once more. The flame chart's runs take the one other walk (the samples in time
    /// order, which the buckets do not keep).
    #[test]
    fn the_report_walks_a_summed_timeline_once() {
        use crate::test_support::stack;
        use cpuprof_model::{FuncKind, ProfileBuilder, SampleSource, SourceFormat, TimedSample, ValueType};
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;

        /// Samples whose walks are counted.
        struct Counted {
            samples: Vec<TimedSample>,
            walks: Arc<AtomicUsize>,
        }
        impl SampleSource for Counted {
            fn walk(&self, visit: &mut dyn FnMut(&[TimedSample])) {
                self.walks.fetch_add(1, Ordering::SeqCst);
                visit(&self.samples);
            }
        }

        let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
        for name in ["a", "b"] {
            let stack = stack(&mut b, name, FuncKind::Js);
            b.sample(stack, None, &[0, 0]);
        }
        // a: 3 samples of 1 ms; b: 1 sample of 2 ms.
        let samples = [(0, 0, 1), (1, 1, 2), (0, 3, 1), (0, 4, 1)]
            .map(|(row, ms, lasts)| TimedSample { row, time_ns: ms * 1_000_000, weight_ns: lasts * 1_000_000 })
            .to_vec();
        let walks = Arc::new(AtomicUsize::new(0));
        b.summed_timeline(Counted { samples, walks: Arc::clone(&walks) });
        b.timing(Some(0), Some(5_000_000), Some(1_000_000));
        let profile = b.finish().unwrap();
        assert!(!profile.samples.values_known());

        let data = report_data(&profile, &ReportDataOptions::default()).unwrap();
        assert_eq!(walks.load(Ordering::SeqCst), 2, "walks of the timeline: the buckets', the flame chart's");
        assert_eq!(data.chart.node.len(), 3, "a, b, a: {:?}", data.chart);
        let whole: HashMap<&str, i64> = data.functions.iter().map(|f| (f.name.as_str(), f.whole_total)).collect();
        assert_eq!(whole, HashMap::from([("a", 3_000_000), ("b", 2_000_000)]));
        assert_eq!(profile.samples.values(0), [3, 1], "the rows' sums, found by that walk");
        assert_eq!(walks.load(Ordering::SeqCst), 2);
    }
}
