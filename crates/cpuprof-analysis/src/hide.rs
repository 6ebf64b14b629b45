//! Hiding frames: matching functions are taken out of every stack and their samples stay, on
//! the caller that called them (pprof's `-hide`). Filters drop whole samples; this keeps them,
//! so `--focus handleRequest --hide '^node:'` still finds `handleRequest` under node's internals.

use cpuprof_model::{FrameId, Func, FuncId, FuncKind, ModelError, Profile, ProfileBuilder, StackId};
use regex::Regex;

use crate::filter::func_matches;

/// The name of the frame that samples whose every frame was hidden are left on.
pub const ALL_HIDDEN: &str = "(hidden)";

/// `profile` without the frames of functions whose name or file matches `hide`. A stack loses
/// those frames (equal stacks become one); a sample whose whole stack is hidden is kept on a
/// frame of its own, `(hidden)`, so totals do not change. Times, VM states, line hits of the
/// frames that stay, warnings and timing are kept.
pub fn hide_frames(profile: &Profile, hide: &Regex) -> Result<Profile, ModelError> {
    let hidden = func_matches(profile, hide);
    let mut b = ProfileBuilder::new(profile.meta.format, profile.value_types.clone());
    let mut copier = FrameCopier::new(profile);
    // Each old stack's new one: `None` when it and all its callers are hidden.
    let mut stacks: Vec<Option<StackId>> = Vec::with_capacity(profile.stacks.len());
    // Whether the old stack shows a frame (one that is not V8's `(root)`), and whether its new
    // one still does: samples that lose all they showed go to `(hidden)`.
    let mut showed: Vec<bool> = Vec::with_capacity(profile.stacks.len());
    let mut shows: Vec<bool> = Vec::with_capacity(profile.stacks.len());
    for (parent_id, frame_id) in profile.stacks.parents().iter().zip(profile.stacks.frames()) {
        let parent = parent_id.and_then(|p| stacks[p.index()]);
        let frame = profile.frames[*frame_id];
        let visible = profile.funcs[frame.func].kind != FuncKind::Root;
        let inherited = |column: &Vec<bool>| parent_id.is_some_and(|p| column[p.index()]);
        showed.push(visible || inherited(&showed));
        if hidden[frame.func.index()] {
            shows.push(inherited(&shows));
            stacks.push(parent);
            continue;
        }
        shows.push(visible || inherited(&shows));
        let new_frame = copier.frame(&mut b, *frame_id);
        stacks.push(Some(b.stack(parent, new_frame)));
    }

    let mut all_hidden: Option<FrameId> = None;
    copy_samples(profile, &mut b, |b, old| match stacks[old.index()] {
        Some(stack) if shows[old.index()] || !showed[old.index()] => stack,
        // Nothing it showed is left: under `(root)` (if any), a frame that says so.
        parent => {
            let frame = *all_hidden.get_or_insert_with(|| {
                let name = b.intern(ALL_HIDDEN);
                let func = b.func(Func {
                    name,
                    file: cpuprof_model::StrId::EMPTY,
                    line: None,
                    column: None,
                    kind: FuncKind::Other,
                    tier: None,
                    library: None,
                });
                b.frame(cpuprof_model::Frame { func, line: None, column: None })
            });
            b.stack(parent, frame)
        }
    });
    // Line hits belong to a stack's own frame: they stay only where that frame does.
    for (old, new) in profile.stacks.ids().zip(&stacks) {
        let Some(new) = new else { continue };
        if hidden[profile.func_of(old).index()] {
            continue;
        }
        for (line, ticks) in profile.line_hits.of(old) {
            b.line_hit(*new, line, ticks);
        }
    }
    finish(profile, b)
}

/// Copies functions and frames of one profile into a builder, each once.
pub(crate) struct FrameCopier<'p> {
    profile: &'p Profile,
    funcs: Vec<Option<FuncId>>,
    frames: Vec<Option<FrameId>>,
    /// Functions lose their tier: a function's tiers become one function.
    untier: bool,
}

impl<'p> FrameCopier<'p> {
    pub(crate) fn new(profile: &'p Profile) -> Self {
        Self {
            profile,
            funcs: vec![None; profile.funcs.len()],
            frames: vec![None; profile.frames.len()],
            untier: false,
        }
    }

    /// A copier whose functions lose their tier.
    pub(crate) fn untiered(profile: &'p Profile) -> Self {
        Self { untier: true, ..Self::new(profile) }
    }

    /// The id in `b` of `profile`'s function `id` (with its library), copied once.
    pub(crate) fn func(&mut self, b: &mut ProfileBuilder, id: FuncId) -> FuncId {
        if let Some(new) = self.funcs[id.index()] {
            return new;
        }
        let func = self.profile.funcs[id];
        let library = func.library.map(|l| b.copy_library(self.profile, l));
        let name = b.intern(self.profile.strings.get(func.name));
        let file = b.intern(self.profile.strings.get(func.file));
        let tier = if self.untier { None } else { func.tier };
        let new = b.func(Func { name, file, library, tier, ..func });
        self.funcs[id.index()] = Some(new);
        new
    }

    /// The id in `b` of `profile`'s frame `id`, with its function (and library) copied.
    pub(crate) fn frame(&mut self, b: &mut ProfileBuilder, id: FrameId) -> FrameId {
        if let Some(new) = self.frames[id.index()] {
            return new;
        }
        let frame = self.profile.frames[id];
        let func = self.func(b, frame.func);
        let new = b.frame(cpuprof_model::Frame { func, ..frame });
        self.frames[id.index()] = Some(new);
        new
    }
}

/// Adds every sample row of `profile` to `b` (values, VM state), in order, on the stack
/// `stack_of` gives for its old stack; the timeline goes along (its rows stay the same).
pub(crate) fn copy_samples(
    profile: &Profile,
    b: &mut ProfileBuilder,
    mut stack_of: impl FnMut(&mut ProfileBuilder, StackId) -> StackId,
) {
    let states = profile.samples.vm_states();
    let mut values = Vec::with_capacity(profile.value_types.len());
    for (row, old) in profile.samples.stacks().iter().enumerate() {
        let stack = stack_of(b, *old);
        values.clear();
        values.extend((0..profile.value_types.len()).map(|k| profile.samples.values(k)[row]));
        match states {
            Some(states) => b.sample_in_state(stack, None, &values, states[row]),
            None => b.sample(stack, None, &values),
        }
    }
    if let Some(tiers) = profile.samples.tiers() {
        b.row_tiers(tiers.to_vec());
    }
    if let Some(timeline) = profile.samples.timeline() {
        b.timeline(timeline.clone());
    }
}

/// The builder's profile, with `profile`'s facts about the recording (timing, window, warnings).
pub(crate) fn finish(profile: &Profile, mut b: ProfileBuilder) -> Result<Profile, ModelError> {
    b.recording_of(&profile.meta);
    b.copy_scripts(profile);
    b.copy_jit(profile);
    b.finish()
}
