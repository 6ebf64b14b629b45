//! Time windows: `--from`/`--to` as people write them (`1.5s`, `200ms`, `90%`, `-2s` from the
//! end), resolved against a profile's recording and applied to its samples — one
//! implementation for every command, so a window's totals are the sum of its samples exactly.

use cpuprof_model::{Profile, TimedSample};

use crate::duration::parse_duration_ns;

/// One end of a window, relative to the recording.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// This long after the recording's start, ns.
    After(i64),
    /// This long before the recording's end, ns (`-2s`).
    BeforeEnd(i64),
    /// This share of the recording's length, 0 to 100 (`90%`).
    Percent(f64),
}

impl Bound {
    /// `1.5s`, `200ms`, `800us` (a bare number is seconds), `-2s` (before the end), `90%`.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        if let Some(p) = t.strip_suffix('%') {
            return p.trim().parse::<f64>().ok().filter(|v| (0.0..=100.0).contains(v)).map(Bound::Percent);
        }
        if let Some(rest) = t.strip_prefix('-') {
            return parse_duration_ns(rest, true).map(Bound::BeforeEnd);
        }
        parse_duration_ns(t, true).map(Bound::After)
    }
}

/// A resolved window: `[from_ns, to_ns)` after the recording's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Start, ns after the recording's start.
    pub from_ns: i64,
    /// End (excluded), ns after the recording's start.
    pub to_ns: i64,
}

/// Why a window cannot apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WindowError {
    /// The profile's samples have no times (pprof, folded stacks).
    NoTimes,
    /// The window ends before it starts (or is empty).
    Empty {
        /// Its start, ns after the recording's start.
        from_ns: i64,
        /// Its end.
        to_ns: i64,
    },
}

impl std::fmt::Display for WindowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoTimes => write!(f, "its samples have no times, so a time window cannot apply"),
            Self::Empty { from_ns, to_ns } => {
                write!(
                    f,
                    "the window [{from_ns} ns, {to_ns} ns) of the recording is empty: it must start before it ends"
                )
            }
        }
    }
}

impl std::error::Error for WindowError {}

/// Where `profile`'s recording starts on its clock and how long it is, ns: the recorded
/// start and length, else those of its samples. `None` when the samples have no times.
pub fn recording(profile: &Profile) -> Option<(i64, i64)> {
    let (start, length) = (profile.meta.start_ns, profile.meta.duration_ns);
    if let (Some(start), Some(length)) = (start, length) {
        return has_times(profile).then_some((start, length.max(0)));
    }
    let mut span: Option<(i64, i64)> = None;
    each_sample(profile, |s| {
        span = Some(span.map_or((s.time_ns, s.time_ns), |(a, b)| (a.min(s.time_ns), b.max(s.time_ns))));
    })?;
    let start = start.or(span.map(|(first, _)| first)).unwrap_or(0);
    let length = length.or_else(|| span.map(|(_, last)| last.saturating_sub(start))).unwrap_or(0).max(0);
    Some((start, length))
}

/// Whether `profile`'s samples have times (a profile without samples has, trivially).
pub(crate) fn has_times(profile: &Profile) -> bool {
    profile.samples.timeline().is_some() || profile.samples.is_empty()
}

/// Calls `visit` for each of `profile`'s samples in time order; `None` when they have no times.
pub(crate) fn each_sample(profile: &Profile, visit: impl FnMut(TimedSample)) -> Option<()> {
    match profile.samples.timeline() {
        Some(timeline) => timeline.for_each(visit),
        None if profile.samples.is_empty() => {}
        None => return None,
    }
    Some(())
}

/// Resolves `from`..`to` (either open) against a recording `length_ns` long.
pub fn resolve_window(length_ns: i64, from: Option<Bound>, to: Option<Bound>) -> Result<Window, WindowError> {
    let at = |bound: Bound| match bound {
        Bound::After(ns) => ns,
        Bound::BeforeEnd(ns) => length_ns.saturating_sub(ns),
        Bound::Percent(p) => (length_ns as f64 * p / 100.0).round() as i64,
    };
    let from_ns = from.map_or(0, at);
    // Open at the end: every later sample counts, even one past the recorded length.
    let to_ns = to.map_or(i64::MAX / 2, at);
    if from_ns >= to_ns {
        return Err(WindowError::Empty { from_ns, to_ns });
    }
    Ok(Window { from_ns, to_ns })
}

/// Keeps only `profile`'s samples taken in the window `from`..`to` (either open), and returns
/// the window. The recording becomes the window: it starts where the window does, as long as it.
pub fn apply_window(profile: &mut Profile, from: Option<Bound>, to: Option<Bound>) -> Result<Window, WindowError> {
    let (_, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let window = resolve_window(length, from, to)?;
    cut_window(profile, window)
}

/// Keeps only `profile`'s samples taken in `window` (ns after the recording's start; its end may
/// lie past the recording's), and returns it with its end clamped to the recording.
pub fn cut_window(profile: &mut Profile, window: Window) -> Result<Window, WindowError> {
    let (start, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let Window { from_ns, to_ns } = window;
    if from_ns >= to_ns {
        return Err(WindowError::Empty { from_ns, to_ns });
    }
    profile.retain_window(start.saturating_add(from_ns), start.saturating_add(to_ns));
    profile.meta.start_ns = Some(start.saturating_add(from_ns));
    profile.meta.duration_ns = Some(to_ns.min(length).saturating_sub(from_ns.min(length)));
    Ok(Window { from_ns, to_ns: to_ns.min(length.max(from_ns)) })
}

/// The window from the first sample whose stack is one of `from_stacks` to the last (included)
/// whose stack is one of `to_stacks` (per stack position), ns after the recording's start;
/// `None` when either has no sample or the last comes before the first.
pub fn between(profile: &Profile, from_stacks: &[bool], to_stacks: &[bool]) -> Option<Window> {
    let (start, _) = recording(profile)?;
    let stacks = profile.samples.stacks();
    let (mut first, mut last) = (None::<i64>, None::<i64>);
    each_sample(profile, |s| {
        let stack = stacks[s.row as usize].index();
        if from_stacks[stack] {
            first = Some(first.map_or(s.time_ns, |f| f.min(s.time_ns)));
        }
        if to_stacks[stack] {
            last = Some(last.map_or(s.time_ns, |l| l.max(s.time_ns)));
        }
    })?;
    let (first, last) = (first?, last?);
    (last >= first)
        .then(|| Window { from_ns: first.saturating_sub(start), to_ns: last.saturating_sub(start).saturating_add(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert_eq!(Bound::parse("1.5s"), Some(Bound::After(1_500_000_000)));
        assert_eq!(Bound::parse("200ms"), Some(Bound::After(200_000_000)));
        assert_eq!(Bound::parse("-2s"), Some(Bound::BeforeEnd(2_000_000_000)));
        assert_eq!(Bound::parse("90%"), Some(Bound::Percent(90.0)));
        assert_eq!(Bound::parse("120%"), None);
        assert_eq!(Bound::parse("soon"), None);
    }
}
