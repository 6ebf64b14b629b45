//! Typed ids. Each wraps a `u32` index into one column of one [`crate::Profile`].

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub(crate) u32);

        impl $name {
            /// The position of this id in its column.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The id at position `index` of its column. Crate-private: only the builder
            /// mints ids; other code gets them from the builder or the id iterators
            /// ([`crate::Table::ids`], [`crate::StackTable::ids`]).
            ///
            /// # Panics
            /// When `index` does not fit in `u32` (columns never grow that large).
            #[inline]
            pub(crate) fn from_index(index: usize) -> Self {
                Self(u32::try_from(index).expect("column index fits in u32"))
            }
        }
    };
}

id_type!(
    /// An interned string; `StrId::EMPTY` is `""`.
    StrId
);
id_type!(
    /// A function (name, file, definition position, kind).
    FuncId
);
id_type!(
    /// A frame: a function at an optional execution position.
    FrameId
);
id_type!(
    /// A node of the stack prefix tree.
    StackId
);
id_type!(
    /// A library (shared object or executable) that native code lives in.
    LibId
);

impl StrId {
    /// The empty string, always present at index 0 (pprof's rule), so "no file" needs no `Option`.
    pub const EMPTY: StrId = StrId(0);
}
