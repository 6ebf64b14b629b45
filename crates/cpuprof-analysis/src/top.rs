use cpuprof_model::{FuncId, FuncKind, Profile, StackId, Tier, VmState};
use rustc_hash::FxHashMap;

use crate::category::{Categories, Category};
use crate::filter::StackFilter;
use crate::keys::{group_label, GroupBy};
use crate::weights::{columns, effective, stack_weights, StackWeights, Weight};

/// Which measure ranks rows (`top`, `diff`) and decides (`diff` and its gate): self or total
/// weight (time, or samples); `self` and `total` in requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
pub enum Metric {
    /// Self weight: the samples where the function is on top. The default.
    #[default]
    #[serde(rename = "self")]
    SelfTime,
    /// Total (inclusive) weight: the samples where it is anywhere on the stack.
    #[serde(rename = "total")]
    Total,
}

/// Options of [`top`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct TopOptions {
    /// What a row stands for. Default is [`GroupBy::Function`].
    pub by: GroupBy,
    /// What a sample weighs. Default is [`Weight::Time`].
    pub weight: Weight,
    /// Row order. Default is [`Metric::SelfTime`].
    pub sort: Metric,
    /// Which samples count. Default: all but `(idle)`.
    pub filter: StackFilter,
    /// With [`GroupBy::Line`], keep the lines of different functions apart (same name, file
    /// and line, another start line), each with its [`TopRow::function_line`].
    pub(crate) lines_per_function: bool,
}

impl TopOptions {
    /// Options with every field given.
    pub fn new(by: GroupBy, weight: Weight, sort: Metric, filter: StackFilter) -> Self {
        Self { by, weight, sort, filter, lines_per_function: false }
    }
}

/// One row: a function, file, package or line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopRow {
    /// Function name (`(anonymous)` for anonymous functions), or the file or package.
    pub name: String,
    /// The file (script url) as the profile has it; `None` when unknown or grouped by file/package.
    pub file: Option<String>,
    /// 1-based line: where the function starts, or the executing line with [`GroupBy::Line`].
    pub line: Option<u32>,
    /// 1-based column where the function starts.
    pub column: Option<u32>,
    /// For rows of lines kept apart per function (as `diff --by line` keeps them), the 1-based
    /// line where the row's function starts (`line` is the executing line); `None` otherwise.
    pub function_line: Option<u32>,
    /// What kind of code the row is.
    pub kind: FuncKind,
    /// The V8 tier of the row's function when the profile keeps tiers apart; `name` then
    /// starts with its marker (`*f`).
    pub tier: Option<Tier>,
    /// Weight of samples whose leaf is this row.
    pub self_weight: i64,
    /// Number of those samples.
    pub self_samples: i64,
    /// Weight of samples with this row anywhere in their stack (once per sample, however deep
    /// the recursion).
    pub total_weight: i64,
    /// Number of those samples.
    pub total_samples: i64,
}

impl TopRow {
    /// The name without its tier's marker (`roundHalfUp` of `*roundHalfUp`): what data formats
    /// (JSON, CSV) give as the name, with the tier beside it.
    pub fn plain_name(&self) -> &str {
        self.tier.and_then(|t| self.name.strip_prefix(t.marker())).unwrap_or(&self.name)
    }

    /// The stable handle of the row's function ([`crate::function_handle`]).
    pub fn handle(&self) -> String {
        crate::function_handle(&self.name, self.file.as_deref(), self.line, self.column)
    }
}

/// A part of the profile: its weight (in the report's unit) and its number of samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amount {
    /// Weight.
    pub weight: i64,
    /// Number of samples.
    pub samples: i64,
}

impl Amount {
    pub(crate) fn add(&mut self, weight: i64, samples: i64) {
        self.weight = self.weight.saturating_add(weight);
        self.samples = self.samples.saturating_add(samples);
    }
}

/// Where the whole profile went, before any filter, by what was on top of the stack (the
/// categories of `node --prof-process`'s summary) and by VM state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// All samples.
    pub all: Amount,
    /// JavaScript: functions, builtins, regular expressions and other code V8 compiled on top.
    pub javascript: Amount,
    /// C++ functions on top.
    pub cpp: Amount,
    /// Shared-library code that no symbol names.
    pub shared_lib: Amount,
    /// Addresses nothing covers.
    pub unaccounted: Amount,
    /// Garbage collection: the VM state where the profile has one (tick logs count GC ticks
    /// whatever code is on top, as node does), else `(garbage collector)` on top.
    pub gc: Amount,
    /// Idle: `(idle)` on top, or the IDLE VM state.
    pub idle: Amount,
    /// `(program)` on top.
    pub program: Amount,
    /// Every sample by its [`Category`], indexed by [`Category::index`]: they sum to `all`.
    pub categories: [Amount; Category::ALL.len()],
}

/// The result of [`top`].
#[derive(Clone, Debug)]
pub struct TopReport {
    /// Unit of every weight: ns or samples.
    pub unit: Weight,
    /// Denominator of the percentages: the weight of the samples counted (idle excluded
    /// unless included), before `focus`/`ignore`.
    pub total: i64,
    /// Number of samples counted.
    pub samples: i64,
    /// Rows in the requested order (ties: name, file, line, column).
    pub rows: Vec<TopRow>,
    /// Where the whole profile went.
    pub summary: Summary,
}

/// What one key stands for, before the numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// The plain name (`""` for anonymous functions).
    name: String,
    tier: Option<Tier>,
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    /// The function's start line, for rows of lines.
    function_line: Option<u32>,
    kind: FuncKind,
}

/// Keys minted in first-seen order.
#[derive(Default)]
pub(crate) struct Keys {
    index: FxHashMap<Key, u32>,
    pub(crate) keys: Vec<Key>,
}

impl Keys {
    pub(crate) fn id(&mut self, key: Key) -> u32 {
        if let Some(id) = self.index.get(&key) {
            return *id;
        }
        let id = self.keys.len() as u32;
        self.keys.push(key.clone());
        self.index.insert(key, id);
        id
    }
}

pub(crate) const NO_KEY: u32 = u32::MAX;

/// Self and total weight per function, file, package or line.
pub fn top(profile: &Profile, options: &TopOptions) -> TopReport {
    let (weights, counts) = columns(profile, options.weight);
    let summary = summarize(profile, weights, counts);
    let StackWeights { weight: self_w, count: self_c, total, samples } =
        stack_weights(profile, options.weight, &options.filter);

    let mut rows = if options.by == GroupBy::Category {
        by_category(profile, options, weights, counts)
    } else {
        function_rows(profile, options, &self_w, &self_c)
    };
    rows.sort_by(|a, b| {
        let (ka, kb) = match options.sort {
            Metric::SelfTime => (a.self_weight, b.self_weight),
            Metric::Total => (a.total_weight, b.total_weight),
        };
        kb.cmp(&ka).then_with(|| identity_order(a, b))
    });
    TopReport { unit: effective(profile, options.weight), total, samples, rows, summary }
}

/// The rows of functions, files, packages or lines, unsorted.
fn function_rows(profile: &Profile, options: &TopOptions, self_w: &[i64], self_c: &[i64]) -> Vec<TopRow> {
    let mut keys = Keys::default();
    let numbers = if options.by == GroupBy::Line {
        by_line(profile, self_w, self_c, &mut keys, options.lines_per_function)
    } else {
        let stack_keys = stack_keys(profile, options.by, &mut keys);
        with_totals(profile, &stack_keys, self_w, self_c, keys.keys.len())
    };
    keys.keys
        .into_iter()
        .zip(numbers)
        .filter(|(_, r)| r.iter().any(|v| *v != 0))
        .map(|(key, numbers)| key.into_row(numbers))
        .collect()
}

/// The order of rows of equal weight: name, file, line, column, kind.
pub(crate) fn identity_order(a: &TopRow, b: &TopRow) -> std::cmp::Ordering {
    a.name
        .cmp(&b.name)
        .then_with(|| a.file.cmp(&b.file))
        .then_with(|| a.line.cmp(&b.line))
        .then_with(|| a.column.cmp(&b.column))
        .then_with(|| a.kind.as_str().cmp(b.kind.as_str()))
}

impl Key {
    /// The row of this key with `[self, self samples, total, total samples]`.
    pub(crate) fn into_row(self, [self_weight, self_samples, total_weight, total_samples]: [i64; 4]) -> TopRow {
        TopRow {
            // Rows are keyed by the raw name; anonymous functions are shown as DevTools does,
            // and a tier by its marker before the name, as V8 writes it.
            name: match (self.tier, self.name.is_empty()) {
                (None, true) => "(anonymous)".to_owned(),
                (None, false) => self.name,
                (Some(tier), true) => format!("{}(anonymous)", tier.marker()),
                (Some(tier), false) => format!("{}{}", tier.marker(), self.name),
            },
            tier: self.tier,
            file: self.file,
            line: self.line,
            column: self.column,
            function_line: self.function_line,
            kind: self.kind,
            self_weight,
            self_samples,
            total_weight,
            total_samples,
        }
    }
}

/// The key of every stack's function (`NO_KEY` for V8's `(root)`), the keys minted into `keys`.
pub(crate) fn stack_keys(profile: &Profile, by: GroupBy, keys: &mut Keys) -> Vec<u32> {
    let func_keys = func_keys(profile, by, keys);
    profile.stacks.frames().iter().map(|frame| func_keys[profile.frames[*frame].func.index()]).collect()
}

pub(crate) fn summarize(profile: &Profile, weights: Option<&[i64]>, counts: Option<&[i64]>) -> Summary {
    let mut summary = Summary::default();
    let states = profile.samples.vm_states();
    let categories = Categories::new(profile);
    for (i, stack) in profile.samples.stacks().iter().enumerate() {
        let c = counts.map_or(1, |c| c[i]);
        let w = weights.map_or(c, |w| w[i]);
        summary.all.add(w, c);
        summary.categories[categories.of_sample(profile, i).index()].add(w, c);
        let kind = profile.funcs[profile.func_of(*stack)].kind;
        let category = match kind {
            // As node's summary: whatever V8 compiled (stubs, wasm wrappers too) is JavaScript.
            FuncKind::Js | FuncKind::Builtin | FuncKind::Regexp | FuncKind::Other => Some(&mut summary.javascript),
            FuncKind::Cpp => Some(&mut summary.cpp),
            FuncKind::SharedLib => Some(&mut summary.shared_lib),
            FuncKind::Unknown => Some(&mut summary.unaccounted),
            FuncKind::Program => Some(&mut summary.program),
            FuncKind::Idle => Some(&mut summary.idle),
            FuncKind::Gc if states.is_none() => Some(&mut summary.gc),
            _ => None,
        };
        if let Some(share) = category {
            share.add(w, c);
        }
        match states.map(|s| s[i]) {
            Some(VmState::Gc) => summary.gc.add(w, c),
            Some(VmState::Idle) => summary.idle.add(w, c),
            _ => {}
        }
    }
    summary
}

/// Rows of categories, unsorted: self by each sample's own category (its VM state first, as the
/// summary), total by the categories of every frame of its stack and its own.
fn by_category(
    profile: &Profile,
    options: &TopOptions,
    weights: Option<&[i64]>,
    counts: Option<&[i64]>,
) -> Vec<TopRow> {
    let categories = Categories::new(profile);
    // The categories on each stack's path, as bits, parents first.
    let parents = profile.stacks.parents();
    let mut on_path: Vec<u8> = Vec::with_capacity(parents.len());
    for (parent, frame) in parents.iter().zip(profile.stacks.frames()) {
        let func = profile.frames[*frame].func;
        let own = if profile.funcs[func].kind == FuncKind::Root { 0 } else { 1 << categories.of_func(func).index() };
        on_path.push(own | parent.map_or(0, |p| on_path[p.index()]));
    }
    let mask = options.filter.mask(profile);
    let mut numbers = [[0i64; 4]; Category::ALL.len()];
    for (i, stack) in profile.samples.stacks().iter().enumerate() {
        if !mask.kept[stack.index()] {
            continue;
        }
        let c = counts.map_or(1, |c| c[i]);
        let w = weights.map_or(c, |w| w[i]);
        let own = categories.of_sample(profile, i).index();
        let bits = on_path[stack.index()] | (1 << own);
        numbers[own][0] = numbers[own][0].saturating_add(w);
        numbers[own][1] = numbers[own][1].saturating_add(c);
        for (k, row) in numbers.iter_mut().enumerate() {
            if bits & (1 << k) != 0 {
                row[2] = row[2].saturating_add(w);
                row[3] = row[3].saturating_add(c);
            }
        }
    }
    Category::ALL
        .iter()
        .zip(numbers)
        .filter(|(_, n)| n.iter().any(|v| *v != 0))
        .map(|(category, numbers)| {
            Key {
                name: category.as_str().to_owned(),
                tier: None,
                file: None,
                line: None,
                column: None,
                function_line: None,
                kind: FuncKind::Other,
            }
            .into_row(numbers)
        })
        .collect()
}

/// The key of every function (`NO_KEY` for the root pseudo-function, which is never a row).
pub(crate) fn func_keys(profile: &Profile, by: GroupBy, keys: &mut Keys) -> Vec<u32> {
    profile
        .funcs
        .as_slice()
        .iter()
        .map(|func| {
            if func.kind == FuncKind::Root {
                return NO_KEY;
            }
            let key = match by {
                GroupBy::Function | GroupBy::Line => function_key(profile, func, func.line),
                GroupBy::File | GroupBy::Package | GroupBy::Category => {
                    let kind = match func.kind {
                        FuncKind::Other => FuncKind::Js,
                        // A library is one row, whether a symbol named its code or not.
                        _ if func.library.is_some() => FuncKind::Cpp,
                        k => k,
                    };
                    let name = group_label(profile, func, by == GroupBy::Package);
                    Key { name, tier: None, file: None, line: None, column: None, function_line: None, kind }
                }
            };
            keys.id(key)
        })
        .collect()
}

fn function_key(profile: &Profile, func: &cpuprof_model::Func, line: Option<u32>) -> Key {
    let name = profile.strings.get(func.name);
    let file = profile.func_file(func);
    Key {
        name: name.to_owned(),
        tier: func.tier,
        file: (!file.is_empty()).then(|| file.to_owned()),
        line,
        column: func.column,
        function_line: None,
        kind: func.kind,
    }
}

/// `[self, self samples, total, total samples]` per key, counting a key once per stack
/// however often it recurs in it.
pub(crate) fn with_totals(
    profile: &Profile,
    stack_keys: &[u32],
    self_w: &[i64],
    self_c: &[i64],
    key_count: usize,
) -> Vec<[i64; 4]> {
    let n = stack_keys.len();
    let parents = profile.stacks.parents();
    let mut out = vec![[0i64; 4]; key_count];
    // Subtree sums: children have larger ids than parents, so one backward pass suffices.
    let mut sub_w = self_w.to_vec();
    let mut sub_c = self_c.to_vec();
    for s in (0..n).rev() {
        if let Some(p) = parents[s] {
            sub_w[p.index()] = sub_w[p.index()].saturating_add(sub_w[s]);
            sub_c[p.index()] = sub_c[p.index()].saturating_add(sub_c[s]);
        }
        if stack_keys[s] != NO_KEY {
            let row = &mut out[stack_keys[s] as usize];
            row[0] = row[0].saturating_add(self_w[s]);
            row[1] = row[1].saturating_add(self_c[s]);
        }
    }
    // An explicit-stack depth-first walk over the model's children index that adds a
    // stack's subtree to its key only where the key is not already on the path above it.
    let children = profile.stacks.children();
    let mut on_path = vec![0u32; key_count];
    let mut todo: Vec<(StackId, bool)> = children.roots().iter().map(|s| (*s, false)).collect();
    while let Some((s, leaving)) = todo.pop() {
        let si = s.index();
        let key = stack_keys[si];
        if leaving {
            if key != NO_KEY {
                on_path[key as usize] -= 1;
            }
            continue;
        }
        if sub_c[si] == 0 && sub_w[si] == 0 {
            continue; // nothing below: no total to add anywhere in this subtree
        }
        if key != NO_KEY {
            let k = key as usize;
            if on_path[k] == 0 {
                out[k][2] = out[k][2].saturating_add(sub_w[si]);
                out[k][3] = out[k][3].saturating_add(sub_c[si]);
            }
            on_path[k] += 1;
        }
        todo.push((s, true));
        todo.extend(children.of(s).iter().map(|c| (*c, false)));
    }
    out
}

/// `value` split over a stack's line hits `(line, ticks)` by the cumulative-floor rule: exact
/// integers, the parts add up to the whole.
pub(crate) fn line_parts(hits: &[(u32, u32)], value: i64) -> impl Iterator<Item = (u32, i64)> + '_ {
    let ticks_total: u64 = hits.iter().map(|(_, t)| u64::from(*t)).sum();
    let share = move |cum: u64| (i128::from(value) * i128::from(cum) / i128::from(ticks_total.max(1))) as i64;
    hits.iter().scan(0u64, move |cum, (line, ticks)| {
        let before = *cum;
        *cum += u64::from(*ticks);
        Some((*line, share(*cum) - share(before)))
    })
}

/// Grouping by line. A stack whose frame carries its line (pprof, tick logs) counts at that
/// line, and each line's total is the samples with it on their stack, once however often it
/// recurs (as every view's totals). Any other stack's self weight is split over its line hits
/// by the cumulative-floor rule (exact integers, the parts add up to the whole): a
/// `.cpuprofile` has no call-site lines, so there total equals self.
fn by_line(profile: &Profile, self_w: &[i64], self_c: &[i64], keys: &mut Keys, per_function: bool) -> Vec<[i64; 4]> {
    let frames = profile.stacks.frames();
    let line_key = |func: &cpuprof_model::Func, line: Option<u32>| {
        let mut key = function_key(profile, func, line);
        key.column = None;
        key.function_line = func.line.filter(|_| per_function);
        key
    };
    let mut framed_keys = vec![NO_KEY; frames.len()];
    let (mut framed_w, mut framed_c) = (vec![0i64; frames.len()], vec![0i64; frames.len()]);
    for (s, frame) in frames.iter().enumerate() {
        let frame = &profile.frames[*frame];
        let func = &profile.funcs[frame.func];
        if let Some(line) = frame.line.filter(|l| *l > 0 && func.kind != FuncKind::Root) {
            framed_keys[s] = keys.id(line_key(func, Some(line)));
            (framed_w[s], framed_c[s]) = (self_w[s], self_c[s]);
        }
    }
    let mut out: Vec<[i64; 4]> = if framed_keys.iter().any(|k| *k != NO_KEY) {
        with_totals(profile, &framed_keys, &framed_w, &framed_c, keys.keys.len())
    } else {
        Vec::new()
    };
    let mut add = |key: Key, w: i64, c: i64, keys: &mut Keys| {
        let id = keys.id(key) as usize;
        if out.len() <= id {
            out.resize(id + 1, [0; 4]);
        }
        let row = &mut out[id];
        row[0] += w;
        row[1] += c;
        row[2] += w;
        row[3] += c;
    };
    for (s, stack) in profile.stacks.ids().enumerate() {
        if (self_w[s] == 0 && self_c[s] == 0) || framed_keys[s] != NO_KEY {
            continue;
        }
        let func_id: FuncId = profile.func_of(stack);
        let func = &profile.funcs[func_id];
        if func.kind == FuncKind::Root {
            continue;
        }
        let hits: Vec<(u32, u32)> = profile.line_hits.of(stack).collect();
        let ticks_total: u64 = hits.iter().map(|(_, t)| u64::from(*t)).sum();
        if ticks_total == 0 {
            add(line_key(func, func.line), self_w[s], self_c[s], keys);
            continue;
        }
        for ((line, w), (_, c)) in line_parts(&hits, self_w[s]).zip(line_parts(&hits, self_c[s])) {
            add(line_key(func, Some(line)), w, c, keys);
        }
    }
    out.resize(keys.keys.len(), [0; 4]);
    out
}
