//! JSON answers kept to a byte budget (`Format::JsonWithin`): what an agent's tool call gets.
//!
//! The typed report is cut before it is serialized, at the cost of writing what is kept: each
//! row's compact size is counted (without keeping its text) and rows are left out, whole, until
//! the document fits, with a count per list in `left_out`. Flat lists lose their last rows
//! (reports list the heaviest first), the longest list first; a call tree keeps its upper
//! levels, each level's heaviest nodes first (see [`tree_keep`]). `warnings` are never cut.

use std::io::Write;

use cpuprof_analysis::CallTree;
use serde::Serialize;

/// The bytes `value` takes as compact JSON, counted without writing them anywhere.
pub(crate) fn compact_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Plain structs of strings and numbers serialize without error.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// A list of a document's rows that may lose its last ones.
pub(crate) trait Rows {
    /// The key it is under, which counts what it lost.
    fn name(&self) -> &'static str;
    /// Each row's compact size.
    fn sizes(&self) -> Vec<usize>;
    /// Keeps the first `n` rows.
    fn keep(&mut self, n: usize);
}

impl<T: Serialize> Rows for (&'static str, &mut Vec<T>) {
    fn name(&self) -> &'static str {
        self.0
    }
    fn sizes(&self) -> Vec<usize> {
        self.1.iter().map(compact_len).collect()
    }
    fn keep(&mut self, n: usize) {
        self.1.truncate(n);
    }
}

/// What was left out, per list name.
#[derive(Debug, Default)]
pub(crate) struct LeftOut(Vec<(&'static str, usize)>);

impl LeftOut {
    fn add(&mut self, name: &'static str, n: usize) {
        if n == 0 {
            return;
        }
        match self.0.iter_mut().find(|(k, _)| *k == name) {
            Some((_, count)) => *count += n,
            None => self.0.push((name, n)),
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `,"left_out":{…}`, the field closing a document that lost rows.
    fn field(&self, budget: usize) -> String {
        let rows: serde_json::Map<String, serde_json::Value> =
            self.0.iter().map(|(k, n)| ((*k).to_owned(), serde_json::Value::from(*n))).collect();
        let left_out = serde_json::json!({ "note": note(budget), "rows": rows });
        format!(",\"left_out\":{left_out}")
    }
}

fn note(budget: usize) -> String {
    format!("rows left out to keep the answer within its budget of {budget} bytes")
}

/// Room kept for `left_out` when rows must go: its note and a few counts.
fn note_room(budget: usize) -> usize {
    note(budget).len() + 160
}

/// The answer when even a document without rows is over the budget.
fn nothing_fits(needed: usize, budget: usize) -> String {
    let note = format!("the answer without its rows takes {needed} bytes: {}", note(budget));
    serde_json::json!({ "left_out": { "note": note, "rows": {} } }).to_string()
}

/// `doc` as compact JSON within `budget` bytes: its `lists` (rows of `doc`, borrowed through
/// `lists`) lose rows, the longest list's last row first, until it fits.
pub(crate) fn serde_within<D: Serialize>(
    doc: &mut D,
    budget: usize,
    lists: impl FnOnce(&mut D) -> Vec<Box<dyn Rows + '_>>,
) -> String {
    let whole = compact_len(doc);
    let mut left_out = LeftOut::default();
    if whole > budget {
        let mut lists = lists(doc);
        let sizes: Vec<Vec<usize>> = lists.iter().map(|l| l.sizes()).collect();
        let mut kept: Vec<usize> = sizes.iter().map(Vec::len).collect();
        let room = budget.saturating_sub(note_room(budget));
        let mut size = whole;
        while size > room {
            let Some(longest) = (0..kept.len()).filter(|&i| kept[i] > 0).max_by_key(|&i| (kept[i], usize::MAX - i))
            else {
                break;
            };
            kept[longest] -= 1;
            // The row and the comma before it (or after it, for a first row).
            size -= sizes[longest][kept[longest]] + usize::from(sizes[longest].len() > 1);
        }
        for (list, (n, all)) in lists.iter_mut().zip(kept.iter().zip(&sizes)) {
            left_out.add(list.name(), all.len() - n);
            list.keep(*n);
        }
        if size > room {
            return nothing_fits(size, budget);
        }
    }
    finish(serde_json::to_string(doc).unwrap_or_default(), &left_out, budget)
}

/// A compact document (ending in `}`) with its `left_out`, when rows went.
fn finish(mut out: String, left_out: &LeftOut, budget: usize) -> String {
    if !left_out.is_empty() && out.ends_with('}') {
        out.pop();
        out.push_str(&left_out.field(budget));
        out.push('}');
    }
    out
}

/// Which nodes of `tree` a budgeted answer keeps: `room` bytes for the nodes, each taking
/// `size(node, level)` (its fields, braces, comma and its children's key). Whole levels from
/// the top, each level's nodes heaviest first, a node only under a kept parent and within
/// `depth` levels; `None` when every node fits.
pub(crate) fn tree_keep(
    tree: &CallTree,
    depth: usize,
    room: usize,
    mut size: impl FnMut(usize, usize) -> usize,
) -> Option<Vec<bool>> {
    let mut kept = vec![false; tree.nodes.len()];
    let mut used = 0usize;
    let mut level: Vec<usize> = tree.roots.clone();
    let mut at = 1;
    while !level.is_empty() && at <= depth {
        // Heaviest first; a stable sort keeps siblings' order among equals.
        level.sort_by_key(|&n| std::cmp::Reverse(tree.nodes[n].total.weight));
        for &n in &level {
            let cost = size(n, at);
            if used + cost > room {
                return Some(kept);
            }
            used += cost;
            kept[n] = true;
        }
        level = level.iter().flat_map(|&n| tree.nodes[n].children.iter().copied()).collect();
        at += 1;
    }
    None
}

/// Adds to `left_out` the nodes of `tree` within `depth` levels that `kept` leaves out: under
/// `roots` for the first level, `nested` below.
pub(crate) fn count_left_out(
    tree: &CallTree,
    kept: &[bool],
    depth: usize,
    (roots, nested): (&'static str, &'static str),
    left_out: &mut LeftOut,
) {
    let mut todo: Vec<(usize, usize)> = tree.roots.iter().map(|&n| (n, 1)).collect();
    let (mut first, mut below) = (0, 0);
    while let Some((n, at)) = todo.pop() {
        if !kept[n] {
            if at == 1 {
                first += 1;
            } else {
                below += 1;
            }
        }
        if at < depth {
            todo.extend(tree.nodes[n].children.iter().map(|&c| (c, at + 1)));
        }
    }
    left_out.add(roots, first);
    left_out.add(nested, below);
}

/// A tree document of `nodes` nodes written within `budget`: `write(kept)` writes it (compact)
/// with the nodes `kept` marks (all with `None`); `plan(room)` picks them for `room` bytes of
/// nodes, `None` when all fit.
pub(crate) fn tree_within(
    budget: usize,
    nodes: usize,
    mut plan: impl FnMut(usize) -> Option<(Vec<bool>, LeftOut)>,
    mut write: impl FnMut(Option<&[bool]>) -> String,
) -> String {
    let head = write(Some(&vec![false; nodes])).len();
    let room = budget.saturating_sub(head);
    if plan(room).is_none() {
        return finish(write(None), &LeftOut::default(), budget);
    }
    if head + note_room(budget) > budget {
        return nothing_fits(head, budget);
    }
    let Some((kept, left_out)) = plan(room - note_room(budget)) else {
        return finish(write(None), &LeftOut::default(), budget);
    };
    finish(write(Some(&kept)), &left_out, budget)
}
