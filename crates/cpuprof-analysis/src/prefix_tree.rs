//! The one keyed prefix tree of the analyses: nodes are (parent, key) pairs, each made once,
//! numbered in the order made (so parents before children). Folding keys it by frame label
//! ([`crate::FrameTree`]), the report's call tree by function (`report_data`).

use rustc_hash::FxHashMap;

/// A tree whose nodes are found by their parent and key: two children of one node never share
/// a key. Nodes are `u32`s, parents before children; a node without a parent is a root.
#[derive(Clone, Debug, Default)]
pub(crate) struct PrefixTree {
    /// Each node's parent (`None`: a root).
    pub(crate) parents: Vec<Option<u32>>,
    /// Each node's key.
    pub(crate) keys: Vec<u32>,
    index: FxHashMap<(u32, u32), u32>,
}

impl PrefixTree {
    /// Number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.parents.len()
    }

    /// The node keyed `key` under `parent` (a root when `None`), made if missing.
    pub(crate) fn node(&mut self, parent: Option<u32>, key: u32) -> u32 {
        let (parents, keys) = (&mut self.parents, &mut self.keys);
        *self.index.entry((parent.unwrap_or(u32::MAX), key)).or_insert_with(|| {
            parents.push(parent);
            keys.push(key);
            (keys.len() - 1) as u32
        })
    }

    /// The parent of `node` (`None`: a root).
    pub(crate) fn parent(&self, node: u32) -> Option<u32> {
        self.parents[node as usize]
    }

    /// The key of `node`.
    pub(crate) fn key(&self, node: u32) -> u32 {
        self.keys[node as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::PrefixTree;

    #[test]
    fn a_node_is_made_once_per_parent_and_key() {
        let mut tree = PrefixTree::default();
        let a = tree.node(None, 7);
        let b = tree.node(Some(a), 7);
        assert_eq!((a, b), (0, 1));
        assert_eq!(tree.node(None, 7), a);
        assert_eq!(tree.node(Some(a), 7), b);
        let c = tree.node(Some(b), 3);
        assert_eq!((tree.parent(c), tree.key(c), tree.parent(a)), (Some(b), 3, None));
        assert_eq!(tree.len(), 3);
    }
}
