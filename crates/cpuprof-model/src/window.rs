//! Time windows of a recording: `--from`/`--to` as people write them (`1.5s`, `200ms`, `90%`,
//! `-2s` from the end) and their resolution against a recording's length. Here, below the
//! readers, so that a reader that sums its samples once can keep only a window's (the
//! analyses cut the others' with the same resolution).

use crate::duration::{parse_decimal, parse_duration_ns};

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
            return parse_decimal(p.trim()).filter(|v| (0.0..=100.0).contains(v)).map(Bound::Percent);
        }
        if let Some(rest) = t.strip_prefix('-') {
            return parse_duration_ns(rest, true).map(Bound::BeforeEnd);
        }
        parse_duration_ns(t, true).map(Bound::After)
    }
}

/// The two ends of a window as given, either open.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bounds {
    /// Where it starts (open: the recording's start).
    pub from: Option<Bound>,
    /// Where it ends, excluded (open: after the last sample).
    pub to: Option<Bound>,
}

impl Bounds {
    /// The window these bounds take of a recording `length_ns` long.
    pub fn resolve(&self, length_ns: i64) -> Result<Window, WindowError> {
        resolve_window(length_ns, self.from, self.to)
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

impl Window {
    /// The recording `(start_ns, length_ns)` becomes once cut to this window: it starts where
    /// the window does and is as long as the part of it the recording covers.
    pub fn cut(&self, start_ns: i64, length_ns: i64) -> (i64, i64) {
        let start = start_ns.saturating_add(self.from_ns);
        (start, self.to_ns.min(length_ns).saturating_sub(self.from_ns.min(length_ns)))
    }

    /// This window with its end clamped to a recording `length_ns` long, as reports give it.
    #[must_use]
    pub fn clamped(&self, length_ns: i64) -> Self {
        Self { from_ns: self.from_ns, to_ns: self.to_ns.min(length_ns.max(self.from_ns)) }
    }
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
        // `--base-window 0s...1s` splits at its first `..`: `0s` and `.1s`.
        assert_eq!(Bound::parse(".1s"), None);
        assert_eq!(Bound::parse("-.5s"), None);
        assert_eq!(Bound::parse(".5%"), None);
        assert_eq!(Bound::parse("1e1%"), None);
        assert_eq!(Bound::parse("--2s"), None);
    }

    #[test]
    fn cut_and_clamped() {
        let w = Window { from_ns: 2, to_ns: 20 };
        assert_eq!(w.cut(100, 10), (102, 8));
        assert_eq!(w.clamped(10), Window { from_ns: 2, to_ns: 10 });
        assert_eq!(Window { from_ns: 12, to_ns: 20 }.clamped(10), Window { from_ns: 12, to_ns: 12 });
    }
}
