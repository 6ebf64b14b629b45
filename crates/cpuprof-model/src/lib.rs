//! The one profile model that every `cpuprof` parser produces and every analysis consumes.
//!
//! It depends on nothing else in the workspace (`model ← parse ← analysis ← render ← cli`),
//! does no I/O and knows no file format. The layout follows pprof's tables and samply's
//! handles: every entity lives in a column owned by the [`Profile`] and is referred to by a
//! `Copy` id ([`StrId`], [`FuncId`], [`FrameId`], [`StackId`]) that only a [`ProfileBuilder`]
//! mints. Ids belong to one profile; compare profiles by resolved strings, never by ids.
//!
//! Units: time is integer nanoseconds everywhere; percentages exist only in renderers.
//!
//! ```
//! use cpuprof_model::{Func, FuncKind, Frame, ProfileBuilder, SourceFormat, ValueType};
//!
//! let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
//! let name = b.intern("main");
//! let file = b.intern("file:///app.js");
//! let func = b.func(Func { name, file, line: Some(1), column: Some(1), kind: FuncKind::Js, tier: None, library: None });
//! let frame = b.frame(Frame { func, line: None, column: None });
//! let stack = b.stack(None, frame);
//! b.sample(stack, Some(1_000), &[1, 1_000_000]);
//! let profile = b.finish().unwrap();
//! assert_eq!(profile.samples.len(), 1);
//! assert_eq!(profile.strings.get(profile.funcs[func].name), "main");
//! ```
#![deny(missing_docs)]

mod builder;
mod children;
pub mod defaults;
mod duration;
pub mod file_url;
mod ids;
mod jit;
mod merge;
mod sample;
mod source;
mod strings;
mod tables;
pub mod text;
mod timeline;
mod warning;
mod window;

pub use builder::{ModelError, ProfileBuilder};
pub use children::{Children, ColumnId};
pub use duration::{parse_decimal, parse_duration_ns};
pub use ids::{FrameId, FuncId, LibId, StackId, StrId};
pub use jit::{CodeObject, Deopt, Jit};
pub use merge::{merge, MergeColumns, Merger, Unlike};
pub use sample::TimedSample;
pub use source::SampleSource;
pub use strings::StringTable;
pub use tables::{
    Frame, Func, FuncKind, Library, LineHits, Meta, Profile, Samples, Script, ScriptOrigin, SourceFormat, StackTable,
    Table, Tier, UnknownSourceFormat, ValueKind, ValueType, ValueUnit, VmState,
};
pub use timeline::{PendingRowSums, SampleTimeline};
pub use warning::{Setting, Warning};
pub use window::{resolve_window, Bound, Bounds, Window, WindowError};
