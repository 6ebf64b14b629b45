//! One function's samples by source line: what `annotate` shows.
//!
//! Two kinds of line data reach the model. A frame may carry the line executing in it (pprof's
//! `Location.Line`, a tick log's positions): the leaf frame's line takes the sample's self, and
//! every line of the function on the stack its total (once per sample, however often the
//! function recurses). A `.cpuprofile` has only its nodes' `positionTicks`: each stack's self
//! is split over its lines in proportion to their ticks, by the cumulative-floor rule `top
//! --by line` uses (DevTools' line-level profile), and no line has a total.

use std::collections::BTreeMap;

use cpuprof_model::{Profile, StackId};

use crate::calltree::CallGraph;
use crate::top::{line_parts, Amount};

/// A line of a function and its samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineAmount {
    /// The 1-based line.
    pub line: u32,
    /// The samples taken on this line in the function itself.
    pub self_amount: Amount,
    /// The samples with this line of the function anywhere on their stack (in it or in what it
    /// called from here); `None` where the profile records no call-site lines.
    pub total: Option<Amount>,
}

/// A function's samples by line ([`CallGraph::lines`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionLines {
    /// The lines with samples, in line order.
    pub lines: Vec<LineAmount>,
    /// The function's self samples whose line is not known.
    pub unlined: Amount,
    /// Whether the frames carry their lines, call sites included (then each line has a total).
    pub call_sites: bool,
}

/// The lines the self `amount` of `stack` was on: its frame's own line, else its line hits'
/// split by the cumulative-floor rule (the parts add up to the whole); none when not known.
pub fn self_lines(profile: &Profile, stack: StackId, amount: Amount) -> Vec<(u32, Amount)> {
    if let Some(line) = profile.frames[profile.stacks.frame(stack)].line.filter(|l| *l > 0) {
        return vec![(line, amount)];
    }
    let hits: Vec<(u32, u32)> = profile.line_hits.of(stack).filter(|(line, _)| *line > 0).collect();
    if hits.iter().all(|(_, ticks)| *ticks == 0) {
        return Vec::new();
    }
    let weights = line_parts(&hits, amount.weight);
    let samples = line_parts(&hits, amount.samples);
    weights.zip(samples).map(|((line, weight), (_, samples))| (line, Amount { weight, samples })).collect()
}

impl CallGraph<'_> {
    /// The samples of `function` (an index into [`CallGraph::functions`]) by line, as the
    /// graph counts them (weight, filters).
    pub fn lines(&self, function: usize) -> FunctionLines {
        let key = u32::try_from(function).unwrap_or(u32::MAX);
        let profile = self.profile();
        let frames = profile.stacks.frames();
        let own = self.own();
        let stack_key = self.stack_keys();
        let line_of = |s: usize| profile.frames[frames[s]].line.filter(|l| *l > 0);
        let call_sites = (0..frames.len()).any(|s| stack_key[s] == key && line_of(s).is_some());

        let mut self_by_line: BTreeMap<u32, Amount> = BTreeMap::new();
        let mut unlined = Amount::default();
        for (stack, amount) in profile.stacks.ids().zip(own) {
            if stack_key[stack.index()] != key || (amount.weight == 0 && amount.samples == 0) {
                continue;
            }
            let parts = self_lines(profile, stack, *amount);
            if parts.is_empty() {
                unlined.add(amount.weight, amount.samples);
            }
            for (line, part) in parts {
                self_by_line.entry(line).or_default().add(part.weight, part.samples);
            }
        }

        let mut total_by_line: BTreeMap<u32, Amount> = BTreeMap::new();
        if call_sites {
            let parents = profile.stacks.parents();
            let with = self.stacks_with(function);
            let mut seen: Vec<u32> = Vec::new();
            for (s, amount) in own.iter().enumerate() {
                if !with[s] || (amount.weight == 0 && amount.samples == 0) {
                    continue;
                }
                // Each line of the function on the stack, once.
                seen.clear();
                let mut at = Some(s);
                while let Some(k) = at {
                    if stack_key[k] == key {
                        if let Some(line) = line_of(k).filter(|l| !seen.contains(l)) {
                            seen.push(line);
                            total_by_line.entry(line).or_default().add(amount.weight, amount.samples);
                        }
                    }
                    at = parents[k].map(StackId::index);
                }
            }
        }

        let mut lines: Vec<u32> = self_by_line.keys().chain(total_by_line.keys()).copied().collect();
        lines.sort_unstable();
        lines.dedup();
        let lines = lines
            .into_iter()
            .map(|line| LineAmount {
                line,
                self_amount: self_by_line.get(&line).copied().unwrap_or_default(),
                total: call_sites.then(|| total_by_line.get(&line).copied().unwrap_or_default()),
            })
            .collect();
        FunctionLines { lines, unlined, call_sites }
    }
}
