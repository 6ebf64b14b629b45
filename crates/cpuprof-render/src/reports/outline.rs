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

/// Where a line sits: for each level above it, whether that ancestor was the last of its
/// siblings (no more lines to draw past it), and whether this line is the last of its own.
#[derive(Clone, Debug, Default)]
pub(crate) struct Guides {
    pub(crate) above_last: Vec<bool>,
    pub(crate) last: bool,
}

impl Guides {
    pub(crate) fn depth(&self) -> usize {
        self.above_last.len()
    }

    /// Box-drawing guides: `│  ├─ ` and so on; nothing for the first level.
    pub(crate) fn prefix(&self) -> String {
        let Some((_, inner)) = self.above_last.split_first() else { return String::new() };
        let mut s = String::new();
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
    push_level(&mut todo, &tree.roots, tree.pruned, &[]);
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
                let mut above = guides.above_last.clone();
                above.push(guides.last);
                push_level(&mut todo, &last.children, last.pruned, &above);
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

/// Pushes a level's items so that they pop in order.
fn push_level(todo: &mut Vec<Item>, children: &[usize], pruned: Option<Pruned>, above: &[bool]) {
    let guides = |last: bool| Guides { above_last: above.to_vec(), last };
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
