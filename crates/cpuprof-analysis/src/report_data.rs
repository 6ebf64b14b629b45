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
use crate::timeline::{timeline, TimelineError, TimelineOptions};
use crate::top::{func_keys, Keys, NO_KEY};
use crate::weights::{columns, effective, Weight};

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
}

impl Default for ReportDataOptions {
    fn default() -> Self {
        Self {
            weight: Weight::Time,
            filter: StackFilter::default(),
            max_buckets: crate::defaults::REPORT_MAX_BUCKETS,
            max_nodes: crate::defaults::REPORT_MAX_NODES,
            max_entries: crate::defaults::REPORT_MAX_ENTRIES,
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
    /// Paths whose total was under this share of the whole (0..=1) were pruned; 0: none was.
    pub under_share: f64,
    /// The self weight of their functions, now under `(pruned)` nodes.
    pub weight: i64,
    /// How many tree nodes were folded.
    pub nodes: u64,
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
    /// The labels of `top --by package`'s rows.
    pub packages: Vec<String>,
    /// The call tree: each node's parent (`None` for the outermost frames), parents first.
    pub parents: Vec<Option<u32>>,
    /// Each node's function, or [`PRUNED`].
    pub node_functions: Vec<u32>,
    /// The buckets, in time order.
    pub buckets: Vec<ReportBucket>,
    /// Per function, per line: its self weight on that line over the whole profile, where the
    /// profile has line-level ticks: (function, line, weight).
    pub lines: Vec<(u32, u32, i64)>,
    /// What pruning took.
    pub pruned: PrunedPaths,
}

/// Builds what a report embeds. Needs no sample times: a profile without them (pprof, folded
/// stacks) has one bucket.
pub fn report_data(profile: &Profile, options: &ReportDataOptions) -> Result<ReportData, TimelineError> {
    let mask = options.filter.mask(profile);
    let categories = Categories::new(profile);
    let mut keys = Keys::default();
    let function_of = func_keys(profile, GroupBy::Function, &mut keys);
    let function_keys = std::mem::take(&mut keys.keys);
    let file_of = func_keys(profile, GroupBy::File, &mut keys);
    let files: Vec<String> = std::mem::take(&mut keys.keys).into_iter().map(|k| k.into_row([0; 4]).name).collect();
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
            }
        })
        .collect();

    // The tree of functions: stacks whose frames have the same function under the same node are one node.
    let mut tree = Tree::default();
    let mut node_of_stack: Vec<Option<u32>> = Vec::with_capacity(profile.stacks.len());
    for (parent, frame) in profile.stacks.parents().iter().zip(profile.stacks.frames()) {
        let above = parent.and_then(|p| node_of_stack[p.index()]);
        let key = function_of[profile.frames[*frame].func.index()];
        node_of_stack.push(if key == NO_KEY { above } else { Some(tree.node(above, key)) });
    }

    let (weights, counts) = columns(profile, options.weight);
    let by_time = weights.is_some() && effective(profile, options.weight) == Weight::Time;
    let stacks = profile.samples.stacks();
    let mut buckets: Vec<ReportBucket> = Vec::new();
    let mut timed = false;
    let mut bucket_ns = profile.meta.duration_ns.unwrap_or(0).max(1);
    let mut scratch = Dense::new(tree.len());
    // Adds sample row `row` (count `c`, weight `w`) to `bucket`.
    let add = |bucket: &mut ReportBucket, scratch: &mut Dense, row: usize, c: i64, w: i64| {
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
            timed = true;
            bucket_ns = line.bucket_ns;
            for (b, rows) in line.buckets.iter().zip(rows) {
                let mut bucket = ReportBucket { start_ns: b.start_ns, end_ns: b.end_ns, ..ReportBucket::default() };
                for r in rows {
                    let w = if by_time { r.ns } else { r.samples };
                    add(&mut bucket, &mut scratch, r.row as usize, r.samples, w);
                }
                bucket.weights = scratch.take();
                buckets.push(bucket);
            }
        }
    }
    if !timed {
        // One bucket: the whole profile.
        let mut bucket = ReportBucket { start_ns: 0, end_ns: bucket_ns, ..ReportBucket::default() };
        for row in 0..stacks.len() {
            let c = counts.map_or(1, |c| c[row]);
            let w = weights.map_or(c, |w| w[row]);
            add(&mut bucket, &mut scratch, row, c, w);
        }
        bucket.weights = scratch.take();
        buckets.push(bucket);
    }

    let lines = line_weights(profile, &mask.kept, &function_of, options.weight);
    let (parents, node_functions, pruned) = prune(tree, &mut buckets, options);
    Ok(ReportData {
        unit: effective(profile, options.weight),
        timed,
        bucket_ns,
        functions,
        files,
        packages,
        parents,
        node_functions,
        buckets,
        lines,
        pruned,
    })
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
        let hits: Vec<(u32, u32)> = profile.line_hits.of(stack).collect();
        if hits.iter().all(|(_, t)| *t == 0) {
            continue;
        }
        for (line, part) in crate::top::line_parts(&hits, *w) {
            *out.entry((function, line)).or_default() += part;
        }
    }
    let mut lines: Vec<(u32, u32, i64)> = out.into_iter().map(|((f, l), w)| (f, l, w)).collect();
    lines.sort_unstable();
    lines
}

/// The tree of functions being built: nodes keyed by (parent, function).
#[derive(Default)]
struct Tree {
    parents: Vec<Option<u32>>,
    functions: Vec<u32>,
    index: FxHashMap<(u32, u32), u32>,
}

impl Tree {
    fn len(&self) -> usize {
        self.parents.len()
    }

    fn node(&mut self, parent: Option<u32>, function: u32) -> u32 {
        let key = (parent.unwrap_or(u32::MAX), function);
        if let Some(n) = self.index.get(&key) {
            return *n;
        }
        let n = self.parents.len() as u32;
        self.parents.push(parent);
        self.functions.push(function);
        self.index.insert(key, n);
        n
    }
}

/// Weights summed per node in a dense array, read out sparse (by node) and cleared.
struct Dense {
    sums: Vec<i64>,
    touched: Vec<u32>,
}

impl Dense {
    fn new(n: usize) -> Self {
        Self { sums: vec![0; n], touched: Vec::new() }
    }

    fn add(&mut self, node: u32, w: i64) {
        let sum = &mut self.sums[node as usize];
        if *sum == 0 {
            self.touched.push(node);
        }
        // A zero-weight sample leaves no entry; a node touched twice is listed once below.
        *sum = sum.saturating_add(w);
    }

    fn take(&mut self) -> Vec<(u32, i64)> {
        self.touched.sort_unstable();
        self.touched.dedup();
        let out = self
            .touched
            .iter()
            .map(|n| (*n, std::mem::take(&mut self.sums[*n as usize])))
            .filter(|(_, w)| *w != 0)
            .collect();
        self.touched.clear();
        out
    }
}

/// Prunes the tree until it fits the budget (see the module's comment), renumbering the kept
/// nodes parents first; returns the parents, the nodes' functions and what was pruned.
fn prune(
    tree: Tree,
    buckets: &mut [ReportBucket],
    options: &ReportDataOptions,
) -> (Vec<Option<u32>>, Vec<u32>, PrunedPaths) {
    let entries = |buckets: &[ReportBucket]| buckets.iter().map(|b| b.weights.len()).sum::<usize>();
    let n = tree.len();
    if n <= options.max_nodes && entries(buckets) <= options.max_entries {
        return (tree.parents, tree.functions, PrunedPaths::default());
    }
    // Each node's total over the whole profile (children come after their parents).
    let mut total = vec![0i64; n];
    for b in buckets.iter() {
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
    let mut sorted: Vec<i64> = total.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    // Keep the heaviest `keep` nodes' worth (a parent is never lighter than its child, so the
    // kept nodes form a tree), halving until the pruned tree fits.
    let mut keep = options.max_nodes / 2;
    loop {
        let limit = sorted.get(keep.min(n.saturating_sub(1))).copied().unwrap_or(0).max(1);
        let (parents, functions, remap, pruned) = pruned_tree(&tree, &total, limit);
        let mut candidate: Vec<ReportBucket> = buckets.to_vec();
        let mut scratch = Dense::new(parents.len());
        for b in &mut candidate {
            for (node, w) in &b.weights {
                scratch.add(remap[*node as usize], *w);
            }
            b.weights = scratch.take();
        }
        if (parents.len() <= options.max_nodes && entries(&candidate) <= options.max_entries) || keep <= 1 {
            buckets.clone_from_slice(&candidate);
            let share = if whole > 0 { limit as f64 / whole as f64 } else { 0.0 };
            let weight = pruned.1;
            return (parents, functions, PrunedPaths { under_share: share.min(1.0), weight, nodes: pruned.0 });
        }
        keep /= 2;
    }
}

/// The tree with the nodes lighter than `limit` folded: each under its nearest kept ancestor's
/// `(pruned)` child, as a child of that named by its own function. Returns the new parents and
/// functions (parents first), the new node of each old one, and (nodes folded, their self weight).
#[allow(clippy::type_complexity)]
fn pruned_tree(tree: &Tree, total: &[i64], limit: i64) -> (Vec<Option<u32>>, Vec<u32>, Vec<u32>, (u64, i64)) {
    let n = tree.len();
    let mut out = Tree::default();
    let mut remap = vec![0u32; n];
    // For a folded node: its nearest kept ancestor's new index (None: the outermost level).
    let mut kept_above: Vec<Option<u32>> = vec![None; n];
    let mut folded = 0u64;
    for s in 0..n {
        let parent = tree.parents[s];
        let parent_kept = parent.is_none_or(|p| total[p as usize] >= limit);
        if total[s] >= limit && parent_kept {
            remap[s] = out.node(parent.map(|p| remap[p as usize]), tree.functions[s]);
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
            remap[s] = out.node(Some(pruned), tree.functions[s]);
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
    (out.parents, out.functions, remap, (folded, weight))
}
