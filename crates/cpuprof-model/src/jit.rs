//! What V8's compilers did with the code that ran, as the input records it: a tick log's code
//! objects (each compilation of a function, with its tier and the functions inlined into it)
//! and deoptimizations (`--log-deopt`); a `.cpuprofile`'s `deoptReason` (why V8 would not
//! optimize a function). Facts only: which of them matter is the analysis' business.

use crate::{FuncId, StrId, Tier};

/// The compilations and deoptimizations a profile records (empty when it records none).
#[derive(Clone, Debug, Default)]
pub struct Jit {
    /// Code objects of JavaScript functions, in the order V8 created them.
    pub code: Vec<CodeObject>,
    /// Deoptimizations, in log order.
    pub deopts: Vec<Deopt>,
    /// Functions V8 said it would not optimize, with its reason.
    pub not_optimized: Vec<(FuncId, StrId)>,
    /// Whether the input could record deoptimizations (a tick log written with `--log-deopt`
    /// does; without it, no deopt is not "none happened").
    pub deopts_logged: bool,
}

impl Jit {
    /// True when the profile records nothing of the kind.
    pub fn is_empty(&self) -> bool {
        self.code.is_empty() && self.deopts.is_empty() && self.not_optimized.is_empty()
    }
}

/// One compilation of a function: V8 made code for it in a tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeObject {
    /// The function compiled (as samples name it: with its tier when tiers are kept apart).
    pub func: FuncId,
    /// The tier of the code.
    pub tier: Tier,
    /// When it was created, on the samples' clock (ns).
    pub created_ns: i64,
    /// The functions inlined into it, as its source positions list them (deduplicated).
    pub inlined: Vec<FuncId>,
}

/// A deoptimization: optimized code gave up and execution went back to a lower tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deopt {
    /// The code object deoptimized (an index into [`Jit::code`]).
    pub code: u32,
    /// When, on the samples' clock (ns).
    pub time_ns: i64,
    /// V8's bailout kind without its `deopt-` prefix: `eager`, `lazy`, `soft`…
    pub kind: StrId,
    /// V8's reason: `wrong map`, `not a Smi`, `overflow`…
    pub reason: StrId,
    /// Where in the source it happened (`file:line:column`), innermost function first:
    /// `position` and then each call site it was inlined at (outermost last).
    pub position: StrId,
    /// The call sites the deopting code was inlined at, innermost first.
    pub inlined_at: Vec<StrId>,
}
