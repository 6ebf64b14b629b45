//! Call trees: who calls a function and what it calls — the top-down tree, the bottom-up
//! (inverted) tree, and one function's callers and callees (speedscope's sandwich).
//!
//! Every view is grown from the model's stack tree the same way: a node of the view holds
//! entries, each a stack of the profile and the samples it stands for; a node's children
//! are its entries moved one frame up (callers) or down (callees) and grouped by function,
//! as `top` keys functions. Only nodes that are shown are grown, so a view cut at 1% costs
//! little more than `top`. The semantics (recursion counted once: callers are read from a
//! function's outermost frame, callees from its innermost) are in `fixtures/oracle/SPEC.md`,
//! shared with the independent oracle.

use std::cmp::Ordering;

use cpuprof_model::{Children, Profile, StackId};
use regex::Regex;
use rustc_hash::FxHashMap;

use crate::filter::StackFilter;
use crate::keys::GroupBy;
use crate::top::{func_keys, identity_order, summarize, with_totals, Amount, Keys, Summary, TopRow, NO_KEY};
use crate::weights::{columns, effective, stack_weights, StackWeights, Weight};

/// Options of [`CallGraph::new`]: which samples count and what they weigh, as `top`'s.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallGraphOptions {
    /// What a sample weighs. Default is [`Weight::Time`].
    pub weight: Weight,
    /// Which samples count. Default: all but `(idle)`.
    pub filter: StackFilter,
}

impl CallGraphOptions {
    /// Options with every field given.
    pub fn new(weight: Weight, filter: StackFilter) -> Self {
        Self { weight, filter }
    }
}

/// Where a view stops growing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    /// Nodes whose total is under this percentage of the profile's total are not shown (their
    /// parent's [`Pruned`] counts them). 0 shows every node with samples. Default:
    /// [`crate::defaults::TREE_MIN_PERCENT`].
    pub min_percent: f64,
    /// Levels shown (roots are level 1); `None` (the default): all.
    pub max_depth: Option<usize>,
}

impl Default for Cut {
    fn default() -> Self {
        Self { min_percent: crate::defaults::TREE_MIN_PERCENT, max_depth: None }
    }
}

/// Children of a node that a [`Cut`] left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// How many direct children were left out.
    pub nodes: u64,
    /// Their summed totals; for the first level of a bottom-up tree (functions, whose totals
    /// overlap), their summed self.
    pub total: Amount,
}

/// A node of a view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallNode {
    /// The function: an index into [`CallGraph::functions`]; `None` for the top of the
    /// stack in a callers view (samples where the function was called by nothing: V8's `(root)`).
    pub function: Option<usize>,
    /// Samples whose stack ends here: the top-down node's own samples; in a bottom-up or
    /// callers view, the part of them where the function the view is about is on top.
    pub self_amount: Amount,
    /// Samples through this node.
    pub total: Amount,
    /// Shown children, in order (by total, heaviest first).
    pub children: Vec<usize>,
    /// Children left out by the cut, when there are any.
    pub pruned: Option<Pruned>,
}

/// A view: nodes in a table, children by index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallTree {
    /// Every shown node; [`CallTree::roots`] and [`CallNode::children`] index it.
    pub nodes: Vec<CallNode>,
    /// The first level, in order.
    pub roots: Vec<usize>,
    /// Roots left out by the cut.
    pub pruned: Option<Pruned>,
}

/// Why [`CallGraph::find`] found no single function.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FindError {
    /// No function matches the pattern.
    #[error("no function matches")]
    NoMatch,
    /// Functions match, but no counted sample has them (the filters left none).
    #[error("the functions that match have no samples")]
    NoSamples(Vec<usize>),
    /// Several functions match (indexes into [`CallGraph::functions`], heaviest first).
    #[error("{} functions match", .0.len())]
    Ambiguous(Vec<usize>),
    /// The pattern is neither a name nor a valid regular expression.
    #[error("not a valid regular expression: {0}")]
    Regex(regex::Error),
    /// The pattern is empty.
    #[error("an empty pattern names no function")]
    Empty,
}

/// A profile's samples by stack and function, ready to grow views from.
pub struct CallGraph<'p> {
    profile: &'p Profile,
    unit: Weight,
    total: i64,
    samples: i64,
    summary: Summary,
    /// Each function's `top` row (self and total of the counted samples), by key id.
    functions: Vec<TopRow>,
    /// The function (key id) of each stack's frame; `NO_KEY` for V8's `(root)`.
    stack_key: Vec<u32>,
    /// The function (key id) of each of the profile's functions, by function id.
    func_key: Vec<u32>,
    /// Each stack's own samples.
    own: Vec<Amount>,
    /// Each stack's samples with those of the stacks it called.
    subtree: Vec<Amount>,
    /// The stack tree's children index, built once.
    children: Children<StackId>,
}

/// One origin of a node: the stack `cursor` has reached, from the stack `origin` the
/// samples were taken at (the same stack for views that grow down).
#[derive(Clone, Copy, Debug)]
struct Entry {
    origin: StackId,
    cursor: StackId,
}

/// Which way a view grows, and the amount each entry stands for.
enum Grow<'a> {
    /// Towards callers: an entry keeps the amounts of its origin (`total`, `own`).
    Up { total: &'a [Amount], own: &'a [Amount] },
    /// Towards callees: an entry stands for `amount[cursor]`; stacks of function `stop`
    /// are not entered (their samples belong to that frame's own callees).
    Down { amount: &'a [Amount], stop: Option<u32> },
}

/// Children of one node, before the cut: per function, amounts and entries.
struct Group {
    key: u32,
    total: Amount,
    own: Amount,
    entries: Vec<Entry>,
}

impl<'p> CallGraph<'p> {
    /// Counts `profile`'s samples per stack and function.
    pub fn new(profile: &'p Profile, options: &CallGraphOptions) -> Self {
        let (weights, counts) = columns(profile, options.weight);
        let summary = summarize(profile, weights, counts);
        let StackWeights { weight, count, total, samples } = stack_weights(profile, options.weight, &options.filter);
        let mut keys = Keys::default();
        let func_key = func_keys(profile, GroupBy::Function, &mut keys);
        let stack_key: Vec<u32> =
            profile.stacks.frames().iter().map(|frame| func_key[profile.frames[*frame].func.index()]).collect();
        let numbers = with_totals(profile, &stack_key, &weight, &count, keys.keys.len());
        let functions = keys.keys.into_iter().zip(numbers).map(|(key, numbers)| key.into_row(numbers)).collect();
        let own: Vec<Amount> = weight.iter().zip(&count).map(|(w, c)| Amount { weight: *w, samples: *c }).collect();
        let mut subtree = own.clone();
        for (s, parent) in profile.stacks.parents().iter().enumerate().rev() {
            if let Some(p) = parent {
                let below = subtree[s];
                subtree[p.index()].add(below.weight, below.samples);
            }
        }
        Self {
            profile,
            unit: effective(profile, options.weight),
            total,
            samples,
            summary,
            functions,
            stack_key,
            func_key,
            own,
            subtree,
            children: profile.stacks.children(),
        }
    }

    /// The profile the graph counts.
    pub(crate) fn profile(&self) -> &Profile {
        self.profile
    }

    /// Each stack's own samples (by position), as counted.
    pub(crate) fn own(&self) -> &[Amount] {
        &self.own
    }

    /// The function (key id) of each stack's frame (by position).
    pub(crate) fn stack_keys(&self) -> &[u32] {
        &self.stack_key
    }

    /// The function (key id) of each of the profile's functions (by id; `NO_KEY`: none).
    pub(crate) fn func_keys(&self) -> &[u32] {
        &self.func_key
    }

    /// Unit of every weight: ns or samples.
    pub fn unit(&self) -> Weight {
        self.unit
    }

    /// The denominator of percentages, as `top`'s: the weight of the samples counted (idle
    /// excluded unless included), before focus/ignore.
    pub fn total(&self) -> i64 {
        self.total
    }

    /// The number of those samples.
    pub fn samples(&self) -> i64 {
        self.samples
    }

    /// Where the whole profile went, as `top` says.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Every function of the profile, with its `top` numbers (zero where no counted sample
    /// has it); nodes index this.
    pub fn functions(&self) -> &[TopRow] {
        &self.functions
    }

    /// The one function with samples that `pattern` names: its exact name (as reports show
    /// it), else its handle ([`crate::function_handle`]), else `name@file:line` (`file` a suffix of the script's url or path, `:line` and
    /// `:line:column` optional), else a regular expression searched in names and files. A
    /// suffix `#N` picks the N-th of several matches, in the order [`FindError::Ambiguous`]
    /// lists them (heaviest first): the way to name functions no file tells apart.
    pub fn find(&self, pattern: &str) -> Result<usize, FindError> {
        if pattern.is_empty() {
            return Err(FindError::Empty);
        }
        match self.candidates(pattern) {
            Ok(found) => Ok(found),
            Err(error) => {
                // `name#N`: the N-th candidate of `name` (when `name#N` itself names nothing).
                let pick = pattern.rsplit_once('#').and_then(|(base, n)| Some((base, n.parse::<usize>().ok()?)));
                let Some((base, n)) = pick.filter(|(base, n)| !base.is_empty() && *n >= 1) else { return Err(error) };
                match self.candidates(base) {
                    Ok(one) if n == 1 => Ok(one),
                    Err(FindError::Ambiguous(found)) if n <= found.len() => Ok(found[n - 1]),
                    _ => Err(error),
                }
            }
        }
    }

    fn candidates(&self, pattern: &str) -> Result<usize, FindError> {
        let all: Vec<usize> = (0..self.functions.len()).collect();
        let mut found: Vec<usize> = all.iter().copied().filter(|f| self.functions[*f].name == pattern).collect();
        if found.is_empty() && crate::handle::is_handle(pattern) {
            found = all.iter().copied().filter(|f| self.functions[*f].handle() == pattern).collect();
        }
        if found.is_empty() {
            // Names and urls may hold `@` themselves (`@scope/pkg`, pnpm's `pkg@1.2.3`): every
            // split of the pattern at an `@` is tried.
            let ats: Vec<At<'_>> = pattern.match_indices('@').filter_map(|(i, _)| parse_at(pattern, i)).collect();
            found = all.iter().copied().filter(|f| ats.iter().any(|at| at.matches(&self.functions[*f]))).collect();
        }
        if found.is_empty() {
            let re = Regex::new(pattern).map_err(FindError::Regex)?;
            found = all
                .iter()
                .copied()
                .filter(|f| {
                    let row = &self.functions[*f];
                    re.is_match(&row.name) || row.file.as_deref().is_some_and(|file| re.is_match(file))
                })
                .collect();
        }
        if found.is_empty() {
            return Err(FindError::NoMatch);
        }
        // A function is there when counted samples have it, by count or by weight (a pprof
        // sample type can weigh what it does not count).
        let (mut sampled, unsampled): (Vec<usize>, Vec<usize>) = found.into_iter().partition(|f| {
            let row = &self.functions[*f];
            row.total_samples != 0 || row.total_weight != 0
        });
        sampled.sort_by(|a, b| self.by_total(*a, *b));
        match sampled.len() {
            0 => Err(FindError::NoSamples(unsampled)),
            1 => Ok(sampled[0]),
            _ => Err(FindError::Ambiguous(sampled)),
        }
    }

    /// Per stack (by position): whether `function` (an index into [`CallGraph::functions`])
    /// is anywhere on it.
    pub fn stacks_with(&self, function: usize) -> Vec<bool> {
        let key = function as u32;
        let mut with: Vec<bool> = Vec::with_capacity(self.stack_key.len());
        for (parent, own) in self.profile.stacks.parents().iter().zip(&self.stack_key) {
            with.push(*own == key || parent.is_some_and(|p| with[p.index()]));
        }
        with
    }

    /// The top-down tree: stacks merged from the outermost caller by function; a node's self
    /// is the samples whose stack ends there, its total those passing through it.
    pub fn top_down(&self, cut: &Cut) -> CallTree {
        let mut seeds = Vec::new();
        for root in self.children.roots() {
            self.keyed_down(*root, None, &mut seeds);
        }
        let down = Grow::Down { amount: &self.subtree, stop: None };
        let groups = self.group(seeds, &down);
        self.grow(groups, &down, cut, false, false)
    }

    /// The bottom-up (inverted) tree: every function with samples (by self, heaviest first;
    /// the cut's percentage applies to their self), under it the call paths that lead to it,
    /// read upwards from its outermost frame in each stack (recursion counted once, so a
    /// root's total is `top`'s).
    pub fn bottom_up(&self, cut: &Cut) -> CallTree {
        let (outermost, own) = self.outermost();
        let seeds: Vec<Entry> = self
            .profile
            .stacks
            .ids()
            .filter(|s| outermost[s.index()])
            .map(|s| Entry { origin: s, cursor: s })
            .collect();
        let up = Grow::Up { total: &self.subtree, own: &own };
        let groups = self.group(seeds, &up);
        self.grow(groups, &up, cut, true, false)
    }

    /// What calls `function` (an index into [`functions`](Self::functions)), `depth` levels up:
    /// for each caller, the part of the function's total that arrives through it, read from the
    /// function's outermost frame in each stack, so the parts add up to the total; samples
    /// where nothing called it are a node without a function.
    pub fn callers(&self, function: usize, depth: usize) -> CallTree {
        let key = function as u32;
        let (outermost, own) = self.outermost();
        let seeds: Vec<Entry> = self
            .profile
            .stacks
            .ids()
            .filter(|s| self.stack_key[s.index()] == key && outermost[s.index()])
            .map(|s| Entry { origin: s, cursor: s })
            .collect();
        let up = Grow::Up { total: &self.subtree, own: &own };
        let groups = self.moved(seeds, &up, true);
        self.grow(groups, &up, &Cut { min_percent: 0.0, max_depth: Some(depth) }, false, true)
    }

    /// What `function` calls, `depth` levels down: each callee's total under it, read from the
    /// function's innermost frame in each stack, so the callees' totals and the function's self
    /// add up to its total.
    pub fn callees(&self, function: usize, depth: usize) -> CallTree {
        let key = function as u32;
        // Each stack's samples, less those below a deeper frame of the function.
        let mut amount = self.own.clone();
        for (s, parent) in self.profile.stacks.parents().iter().enumerate().rev() {
            if let (Some(p), false) = (parent, self.stack_key[s] == key) {
                let below = amount[s];
                amount[p.index()].add(below.weight, below.samples);
            }
        }
        let seeds: Vec<Entry> = self
            .profile
            .stacks
            .ids()
            .filter(|s| self.stack_key[s.index()] == key)
            .map(|s| Entry { origin: s, cursor: s })
            .collect();
        let down = Grow::Down { amount: &amount, stop: Some(key) };
        let groups = self.moved(seeds, &down, false);
        self.grow(groups, &down, &Cut { min_percent: 0.0, max_depth: Some(depth) }, false, false)
    }

    /// Per stack: whether it is the outermost frame of its function on its path, and the own
    /// samples of the function each such stack stands for (its own and those of deeper frames
    /// of the same function below it).
    fn outermost(&self) -> (Vec<bool>, Vec<Amount>) {
        let n = self.stack_key.len();
        let mut outermost = vec![false; n];
        let mut own = vec![Amount::default(); n];
        let mut first: FxHashMap<u32, u32> = FxHashMap::default();
        let children = &self.children;
        let mut todo: Vec<(StackId, bool)> = children.roots().iter().map(|s| (*s, false)).collect();
        while let Some((s, leaving)) = todo.pop() {
            let si = s.index();
            let key = self.stack_key[si];
            if leaving {
                if first.get(&key) == Some(&(si as u32)) {
                    first.remove(&key);
                }
                continue;
            }
            if self.subtree[si].samples == 0 && self.subtree[si].weight == 0 {
                continue;
            }
            if key != NO_KEY {
                let owner = *first.entry(key).or_insert_with(|| {
                    outermost[si] = true;
                    si as u32
                });
                let mine = self.own[si];
                own[owner as usize].add(mine.weight, mine.samples);
            }
            todo.push((s, true));
            todo.extend(children.of(s).iter().map(|c| (*c, false)));
        }
        (outermost, own)
    }

    /// The stacks below `s` (or `s` itself) that have a function, passing through V8's
    /// `(root)`, skipping `stop`'s stacks.
    fn keyed_down(&self, s: StackId, stop: Option<u32>, out: &mut Vec<Entry>) {
        let mut todo = vec![s];
        let children = &self.children;
        while let Some(s) = todo.pop() {
            let key = self.stack_key[s.index()];
            if Some(key) == stop {
                continue;
            }
            if key == NO_KEY {
                todo.extend(children.of(s));
            } else {
                out.push(Entry { origin: s, cursor: s });
            }
        }
    }

    /// The entries, each moved one frame along `grow`, grouped by function; with `top_level`,
    /// what left the top of the stack (growing up) is one more group, without a function.
    fn moved(&self, entries: Vec<Entry>, grow: &Grow<'_>, top_level: bool) -> Vec<Group> {
        let mut next = Vec::with_capacity(entries.len());
        let mut left_top = Amount::default();
        let parents = self.profile.stacks.parents();
        let children = &self.children;
        for entry in entries {
            match grow {
                Grow::Up { total, .. } => {
                    let mut up = parents[entry.cursor.index()];
                    while let Some(p) = up.filter(|p| self.stack_key[p.index()] == NO_KEY) {
                        up = parents[p.index()];
                    }
                    if let Some(p) = up {
                        next.push(Entry { origin: entry.origin, cursor: p });
                    } else {
                        let t = total[entry.origin.index()];
                        left_top.add(t.weight, t.samples);
                    }
                }
                Grow::Down { stop, .. } => {
                    for c in children.of(entry.cursor) {
                        self.keyed_down(*c, *stop, &mut next);
                    }
                }
            }
        }
        let mut groups = self.group(next, grow);
        if top_level && (left_top.samples != 0 || left_top.weight != 0) {
            groups.push(Group { key: NO_KEY, total: left_top, own: Amount::default(), entries: Vec::new() });
        }
        groups
    }

    /// Entries grouped by their cursor's function, with the amounts they stand for.
    fn group(&self, entries: Vec<Entry>, grow: &Grow<'_>) -> Vec<Group> {
        let mut index: FxHashMap<u32, usize> = FxHashMap::default();
        let mut groups: Vec<Group> = Vec::new();
        for entry in entries {
            let (total, own) = match grow {
                Grow::Up { total, own } => (total[entry.origin.index()], own[entry.origin.index()]),
                Grow::Down { amount, .. } => (amount[entry.cursor.index()], self.own[entry.cursor.index()]),
            };
            if total.samples == 0 && total.weight == 0 {
                continue;
            }
            let key = self.stack_key[entry.cursor.index()];
            let g = *index.entry(key).or_insert_with(|| {
                groups.push(Group { key, total: Amount::default(), own: Amount::default(), entries: Vec::new() });
                groups.len() - 1
            });
            let group = &mut groups[g];
            group.total.add(total.weight, total.samples);
            group.own.add(own.weight, own.samples);
            group.entries.push(entry);
        }
        groups
    }

    /// Grows a view from its first level: each shown node's children are its entries moved
    /// one frame along `grow`; nodes under the cut are counted in their parent's `pruned`.
    fn grow(&self, first: Vec<Group>, grow: &Grow<'_>, cut: &Cut, roots_by_self: bool, top_level: bool) -> CallTree {
        let mut tree = CallTree::default();
        // (groups to place, parent node, depth of the groups)
        let mut todo: Vec<(Vec<Group>, Option<usize>, usize)> = vec![(first, None, 1)];
        while let Some((groups, parent, depth)) = todo.pop() {
            let mut placed = Vec::with_capacity(groups.len());
            let mut pruned = Pruned::default();
            let mut grown = Vec::new();
            for group in groups {
                // A bottom-up tree's first level ranks functions by self time, and is cut by it.
                let measure = if roots_by_self && parent.is_none() { group.own } else { group.total };
                let shown = depth <= cut.max_depth.unwrap_or(usize::MAX)
                    && (cut.min_percent <= 0.0 || self.shown(measure, cut));
                if !shown {
                    // What the cut nodes add up to: their totals, or (functions of a bottom-up
                    // tree, whose totals overlap) their self.
                    pruned.nodes += 1;
                    pruned.total.add(measure.weight, measure.samples);
                    continue;
                }
                tree.nodes.push(CallNode {
                    function: (group.key != NO_KEY).then_some(group.key as usize),
                    self_amount: group.own,
                    total: group.total,
                    children: Vec::new(),
                    pruned: None,
                });
                let node = tree.nodes.len() - 1;
                placed.push(node);
                grown.push((node, group.entries));
            }
            self.sort(&mut placed, &tree.nodes, roots_by_self && parent.is_none());
            let pruned = (pruned.nodes != 0).then_some(pruned);
            if let Some(p) = parent {
                tree.nodes[p].children = placed;
                tree.nodes[p].pruned = pruned;
            } else {
                tree.roots = placed;
                tree.pruned = pruned;
            }
            for (node, entries) in grown {
                if entries.is_empty() {
                    continue;
                }
                let children = self.moved(entries, grow, top_level);
                // A bottom-up tree's functions without self time are not grown: their paths hold
                // no time of their own (they are their callees' paths again), and a chain n
                // deep would grow n²/2 nodes. Their callers are counted as cut.
                if roots_by_self && parent.is_none() && tree.nodes[node].self_amount == Amount::default() {
                    let mut cut = Pruned::default();
                    for g in &children {
                        cut.nodes += 1;
                        cut.total.add(g.total.weight, g.total.samples);
                    }
                    tree.nodes[node].pruned = (cut.nodes != 0).then_some(cut);
                } else if !children.is_empty() {
                    todo.push((children, Some(node), depth + 1));
                }
            }
        }
        tree
    }

    /// Whether a node of `amount` is shown under a cut at some percent.
    fn shown(&self, amount: Amount, cut: &Cut) -> bool {
        amount.weight as f64 * 100.0 >= cut.min_percent * self.total as f64
    }

    /// Nodes by total (or self), heaviest first; ties by the function's name, file, line, column.
    fn sort(&self, nodes: &mut [usize], table: &[CallNode], by_self: bool) {
        nodes.sort_by(|a, b| {
            let (a, b) = (&table[*a], &table[*b]);
            let (ka, kb) = if by_self { (a.self_amount, b.self_amount) } else { (a.total, b.total) };
            kb.weight.cmp(&ka.weight).then_with(|| match (a.function, b.function) {
                (Some(fa), Some(fb)) => identity_order(&self.functions[fa], &self.functions[fb]),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
            })
        });
    }

    fn by_total(&self, a: usize, b: usize) -> Ordering {
        let (a, b) = (&self.functions[a], &self.functions[b]);
        b.total_weight.cmp(&a.total_weight).then_with(|| identity_order(a, b))
    }
}

/// `name@file:line:column`, as a pattern (a `file://` url as the path the model holds).
struct At<'a> {
    name: &'a str,
    file: std::borrow::Cow<'a, str>,
    line: Option<u32>,
    column: Option<u32>,
}

impl At<'_> {
    fn matches(&self, row: &TopRow) -> bool {
        let file_matches = row.file.as_deref().is_some_and(|file| {
            file.strip_suffix(&*self.file).is_some_and(|before| {
                before.is_empty() || before.ends_with('/') || before.ends_with('\\') || before.ends_with(':')
            })
        });
        row.name == self.name
            && file_matches
            && self.line.is_none_or(|l| row.line == Some(l))
            && self.column.is_none_or(|c| row.column == Some(c))
    }
}

/// `pattern` read as `name@location` split at byte `at` (an `@`).
fn parse_at(pattern: &str, at: usize) -> Option<At<'_>> {
    let (name, location) = (&pattern[..at], &pattern[at + 1..]);
    let number = |text: &str| text.parse::<u32>().ok();
    let (file, line, column) = match location.rsplit_once(':') {
        Some((rest, last)) if number(last).is_some() => match rest.rsplit_once(':') {
            Some((file, line)) if number(line).is_some() => (file, number(line), number(last)),
            _ => (rest, number(last), None),
        },
        _ => (location, None, None),
    };
    (!file.is_empty()).then(|| At { name, file: cpuprof_model::file_url::script_path(file), line, column })
}
