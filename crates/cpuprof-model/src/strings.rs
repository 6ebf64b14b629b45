use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use crate::StrId;

/// Interned strings of one profile. Index 0 is always `""`.
#[derive(Clone, Debug)]
pub struct StringTable {
    set: IndexSet<Box<str>, FxBuildHasher>,
}

impl Default for StringTable {
    fn default() -> Self {
        let mut set = IndexSet::with_hasher(FxBuildHasher);
        set.insert(Box::from(""));
        Self { set }
    }
}

impl StringTable {
    /// The id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(i) = self.set.get_index_of(s) {
            return StrId::from_index(i);
        }
        StrId::from_index(self.set.insert_full(Box::from(s)).0)
    }

    /// The string behind `id`.
    ///
    /// # Panics
    /// When `id` comes from another profile's table and is out of range.
    pub fn get(&self, id: StrId) -> &str {
        &self.set[id.index()]
    }

    /// The number of strings, `""` included.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Always false: `""` is always present.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}
