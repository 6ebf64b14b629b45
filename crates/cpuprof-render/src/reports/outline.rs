//! A call tree as lines to print (the table's and Markdown's rendering): depth-first, each
//! line knowing where it sits, chains of only children folded into one line (`a → b → c`),
//! and a line for what the cut left out under a node.

use cpuprof_analysis::{CallNode, CallTree, Pruned};

/// One printed line.
pub(crate) enum Line {
    /// Nodes: one, or a chain of only children with equal totals (outermost first); the numbers
    /// are the last one's.
    Nodes { chain: Vec<usize>, guides: Guides },
    /// Children the cut left out.
    More { pruned: Pruned, guides: Guides },
}

/// How many levels of guides a line draws: deeper lines draw the last ones after their depth,
/// so that a line thousands of levels deep still shows its function (and the layout stays
/// linear in the tree's size).
pub(crate) const MAX_GUIDES: usize = 24;

/// Where a line sits: its depth, and for the last [`MAX_GUIDES`] levels above it whether that
/// ancestor was the last of its siblings (no more lines to draw past it), and whether this line
/// is the last of its own.
#[derive(Clone, Debug, Default)]
pub(crate) struct Guides {
    depth: usize,
    above_last: Vec<bool>,
    pub(crate) last: bool,
}

impl Guides {
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The guides of a child of the line these guides place.
    fn below(&self, last: bool) -> Guides {
        let mut above_last = Vec::with_capacity(MAX_GUIDES);
        let keep = self.above_last.len().min(MAX_GUIDES - 1);
        above_last.extend_from_slice(&self.above_last[self.above_last.len() - keep..]);
        above_last.push(self.last);
        Guides { depth: self.depth + 1, above_last, last }
    }

    /// Box-drawing guides: `│  ├─ ` and so on; nothing for the first level; past
    /// [`MAX_GUIDES`] levels, `[depth] ` first and the last levels' guides.
    pub(crate) fn prefix(&self) -> String {
        let Some((_, inner)) = self.above_last.split_first() else { return String::new() };
        let mut s = String::new();
        if self.depth >= MAX_GUIDES {
            s.push_str(&format!("[{}] ", self.depth + 1));
        }
        for last in inner {
            s.push_str(if *last { "   " } else { "│  " });
        }
        s.push_str(if self.last { "└─ " } else { "├─ " });
        s
    }
}

/// The lines of `tree`, depth-first, with the top-level `pruned` line last. With
/// `fold_roots` false, chains start below the first level (a bottom-up tree's first level
/// names the functions it is about).
pub(crate) fn lines(tree: &CallTree, fold_chains: bool, fold_roots: bool) -> Vec<Line> {
    let mut out = Vec::new();
    // (children, pruned, ancestors' last-flags)
    let mut todo: Vec<Item> = Vec::new();
    push_level(&mut todo, &tree.roots, tree.pruned, None);
    while let Some(item) = todo.pop() {
        match item {
            Item::More(pruned, guides) => out.push(Line::More { pruned, guides }),
            Item::Node(node, guides) => {
                let mut chain = vec![node];
                let mut last = &tree.nodes[node];
                while fold_chains && (fold_roots || guides.depth() > 0) {
                    match only_child(tree, last) {
                        Some(child) => {
                            chain.push(child);
                            last = &tree.nodes[child];
                        }
                        None => break,
                    }
                }
                push_level(&mut todo, &last.children, last.pruned, Some(&guides));
                out.push(Line::Nodes { chain, guides });
            }
        }
    }
    out
}

enum Item {
    Node(usize, Guides),
    More(Pruned, Guides),
}

/// Pushes a level's items (under the line `parent` places, or at the top) so that they pop in
/// order.
fn push_level(todo: &mut Vec<Item>, children: &[usize], pruned: Option<Pruned>, parent: Option<&Guides>) {
    let guides = |last: bool| parent.map_or(Guides { depth: 0, above_last: Vec::new(), last }, |p| p.below(last));
    if let Some(pruned) = pruned {
        todo.push(Item::More(pruned, guides(true)));
    }
    for (i, child) in children.iter().enumerate().rev() {
        todo.push(Item::Node(*child, guides(pruned.is_none() && i + 1 == children.len())));
    }
}

/// The one child of `node` that carries all of its total, if that is what it has.
fn only_child(tree: &CallTree, node: &CallNode) -> Option<usize> {
    match (node.children.as_slice(), node.pruned) {
        ([child], None) if tree.nodes[*child].total == node.total && tree.nodes[*child].function.is_some() => {
            Some(*child)
        }
        _ => None,
    }
}
