//! The heaviest call paths: the stacks that hold the most self time, root first.

use cpuprof_model::{FuncKind, Profile};

use crate::filter::StackFilter;
use crate::timeline::FunctionRef;
use crate::weights::{stack_weights, Weight};

/// A call path and the time spent at its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HotPath {
    /// Its functions, the outermost first (the root's own frame left out).
    pub functions: Vec<FunctionRef>,
    /// The self weight of its last frame on exactly this path.
    pub weight: i64,
    /// The samples of that weight.
    pub samples: i64,
}

/// The `n` stacks with the most self weight under `filter`, heaviest first (ties: the stack
/// met first in the profile's tree); stacks of one function's different lines are apart.
pub fn heaviest_paths(profile: &Profile, weight: Weight, filter: &StackFilter, n: usize) -> Vec<HotPath> {
    let weights = stack_weights(profile, weight, filter);
    let mut order: Vec<usize> = (0..weights.weight.len()).filter(|s| weights.count[*s] > 0).collect();
    order.sort_by_key(|s| (std::cmp::Reverse(weights.weight[*s]), *s));
    order
        .into_iter()
        .take(n)
        .map(|s| {
            let mut functions = Vec::new();
            let mut at = Some(s);
            while let Some(i) = at {
                let func = profile.frames[profile.stacks.frames()[i]].func;
                if profile.funcs[func].kind != FuncKind::Root {
                    functions.push(FunctionRef::of(profile, func));
                }
                at = profile.stacks.parents()[i].map(cpuprof_model::StackId::index);
            }
            functions.reverse();
            HotPath { functions, weight: weights.weight[s], samples: weights.count[s] }
        })
        .collect()
}
