//! cpuprof's one door into the pipeline: a typed request per command, read and answered the
//! same way whichever front end asked.
//!
//! The command line maps its clap arguments to a request; the MCP server deserializes one from
//! a tool call's arguments (its input schema is the request type's); the recorder builds them
//! in code. Each request is executed here — inputs read ([`input`]), cut to a window, filtered,
//! analysed — and answered with a typed result that the front end renders in the format it
//! wants ([`cpuprof_render::Format`]), the MCP server within its byte budget.
//!
//! A crate of its own, between the renderers and the front ends: it reads (parse, source
//! maps), analyses and renders, which no lower crate may; and it knows no front end (no clap
//! types; options are named in messages as the front end spells them, see [`spelled`]).

pub mod annotate;
pub mod calls;
pub mod convert;
pub mod diff;
pub mod fold;
pub mod input;
pub mod jit;
pub mod patterns;
pub mod read;
pub mod report;
pub mod said;
pub mod session;
mod sources;
pub mod timeline;
pub mod top;
pub mod usage;

pub use input::{FilterOptions, ReadOptions, WindowOptions};
pub use said::warn;
pub use usage::{is_usage, UsageChoices, UsageError};

use std::sync::{PoisonError, RwLock};

/// How this process's front end spells an option in messages (set by [`spell_options`]).
static SPELLER: RwLock<Option<Speller>> = RwLock::new(None);

/// A front end's spelling of an option, from its field name.
pub type Speller = fn(&str) -> String;

/// From now on, messages name an option (a request's field name, `source_map_dir`) as
/// `speller` spells it: `--source-map-dir` on the command line, `source_map_dir` as an MCP
/// tool's argument. One per process: a process is one front end.
pub fn spell_options(speller: Speller) {
    *SPELLER.write().unwrap_or_else(PoisonError::into_inner) = Some(speller);
}

/// The option `field` as this process's front end spells it (by default, as a flag: [`flag`]).
pub fn spelled(field: &str) -> String {
    match *SPELLER.read().unwrap_or_else(PoisonError::into_inner) {
        Some(speller) => speller(field),
        None => flag(field),
    }
}

/// The option `field` as a long flag: `source_map_dir` → `--source-map-dir`.
pub fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

/// The warning for an empty result (docs/conventions.md, "Empty profiles"): whether the profile
/// had no samples at all, or the options left none. `windowed`: the profile was cut to a time
/// window (which may have left nothing).
pub fn warn_empty(source: &str, profile: &cpuprof_model::Profile, windowed: bool) {
    if profile.samples.is_empty() && windowed {
        warn(&format!("{source}: no samples left after the filters: none in the time window"));
    } else if profile.samples.is_empty() {
        warn(&format!("{source}: no samples in the profile"));
    } else {
        warn(&format!("{source}: no samples left after the filters"));
    }
}
