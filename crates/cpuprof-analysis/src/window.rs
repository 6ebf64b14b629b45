//! Time windows: `--from`/`--to` as people write them (`1.5s`, `200ms`, `90%`, `-2s` from the
//! end), resolved against a profile's recording and applied to its samples — one
//! implementation for every command, so a window's totals are the sum of its samples exactly.

use cpuprof_model::{Bound, Profile, TimedSample, Window, WindowError};

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

/// Keeps only `profile`'s samples taken in the window `from`..`to` (either open), and returns
/// the window. The recording becomes the window: it starts where the window does, as long as it.
pub fn apply_window(profile: &mut Profile, from: Option<Bound>, to: Option<Bound>) -> Result<Window, WindowError> {
    let (_, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let window = cpuprof_model::resolve_window(length, from, to)?;
    cut_window(profile, window)
}

/// Keeps only `profile`'s samples taken in `window` (ns after the recording's start; its end may
/// lie past the recording's), and returns it with its end clamped to the recording.
pub fn cut_window(profile: &mut Profile, window: Window) -> Result<Window, WindowError> {
    cut_window_with(profile, window, None)
}

/// [`cut_window`] with the window's samples already summed per row (see
/// [`Profile::retain_window_summed`]), e.g. by [`crate::Timeline::phase_rows`].
pub fn cut_window_summed(profile: &mut Profile, window: Window, sums: &[(i64, i64)]) -> Result<Window, WindowError> {
    cut_window_with(profile, window, Some(sums))
}

fn cut_window_with(profile: &mut Profile, window: Window, sums: Option<&[(i64, i64)]>) -> Result<Window, WindowError> {
    let (start, length) = recording(profile).ok_or(WindowError::NoTimes)?;
    let Window { from_ns, to_ns } = window;
    if from_ns >= to_ns {
        return Err(WindowError::Empty { from_ns, to_ns });
    }
    let (from, to) = (start.saturating_add(from_ns), start.saturating_add(to_ns));
    match sums {
        Some(sums) => profile.retain_window_summed(from, to, sums),
        None => profile.retain_window(from, to),
    };
    let (start, length_ns) = window.cut(start, length);
    let window = window.clamped(length);
    profile.meta.start_ns = Some(start);
    profile.meta.duration_ns = Some(length_ns);
    profile.meta.window = Some(window);
    Ok(window)
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
