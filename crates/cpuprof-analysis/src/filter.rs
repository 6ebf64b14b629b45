use cpuprof_model::{FuncKind, Profile};
use regex::Regex;

/// Which stacks to keep: `(idle)` unless asked for, and focus / ignore patterns on the
/// functions anywhere in a stack.
#[derive(Clone, Debug, Default)]
pub struct StackFilter {
    /// Keep samples whose leaf is `(idle)`. Default is `false`.
    pub include_idle: bool,
    /// Keep only samples with a function in their stack whose name or file matches.
    /// Default is `None` (keep all).
    pub focus: Option<Regex>,
    /// Drop samples with a function in their stack whose name or file matches.
    /// Default is `None` (drop none).
    pub ignore: Option<Regex>,
}

/// Per stack (by position): does it pass the idle rule, and does it pass focus/ignore.
pub(crate) struct StackMask {
    pub(crate) counted: Vec<bool>,
    pub(crate) kept: Vec<bool>,
}

impl StackFilter {
    pub(crate) fn mask(&self, profile: &Profile) -> StackMask {
        let focus_funcs = self.focus.as_ref().map(|re| func_matches(profile, re));
        let ignore_funcs = self.ignore.as_ref().map(|re| func_matches(profile, re));
        let n = profile.stacks.len();
        let mut counted = Vec::with_capacity(n);
        let mut kept = Vec::with_capacity(n);
        // Whether a matching function is on the path from the root, parents first.
        let mut focus_on_path: Vec<bool> = Vec::with_capacity(n);
        let mut ignore_on_path: Vec<bool> = Vec::with_capacity(n);
        for (parent, frame) in profile.stacks.parents().iter().zip(profile.stacks.frames()) {
            let func = profile.frames[*frame].func;
            let inherited = |on_path: &Vec<bool>| parent.is_some_and(|p| on_path[p.index()]);
            let f = focus_funcs.as_ref().is_none_or(|m| m[func.index()] || inherited(&focus_on_path));
            let i = ignore_funcs.as_ref().is_some_and(|m| m[func.index()] || inherited(&ignore_on_path));
            focus_on_path.push(f);
            ignore_on_path.push(i);
            let is_counted = self.include_idle || profile.funcs[func].kind != FuncKind::Idle;
            counted.push(is_counted);
            kept.push(is_counted && f && !i);
        }
        StackMask { counted, kept }
    }
}

/// Per function (by position): whether its name (as reports show it) or its file matches `re`.
pub(crate) fn func_matches(profile: &Profile, re: &Regex) -> Vec<bool> {
    profile
        .funcs
        .as_slice()
        .iter()
        .map(|f| re.is_match(&f.display_name(&profile.strings)) || re.is_match(profile.func_file(f)))
        .collect()
}
