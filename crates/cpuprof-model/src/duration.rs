//! Durations as people write them (windows, thresholds, intervals): `1.5s`, `250ms`, `800us`, `2min`, `1h`.

/// `1.5s`, `250ms`, `800us` / `800µs`, `12ns`, `2min`, `1.5h` → ns; a bare number is seconds when
/// `bare_seconds`, else refused. `None` for anything else, negative or too large.
pub fn parse_duration_ns(text: &str, bare_seconds: bool) -> Option<i64> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("min") {
        (n, 60e9)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600e9)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else if bare_seconds {
        (t, 1e9)
    } else {
        return None;
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale < 9.2e18 => Some((v * scale).round() as i64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration_ns as nanoseconds;

    #[test]
    fn times() {
        assert_eq!(nanoseconds("1.5s", true), Some(1_500_000_000));
        assert_eq!(nanoseconds("250ms", false), Some(250_000_000));
        assert_eq!(nanoseconds("800us", false), Some(800_000));
        assert_eq!(nanoseconds("2", true), Some(2_000_000_000));
        assert_eq!(nanoseconds("2", false), None);
        assert_eq!(nanoseconds("1min", true), Some(60_000_000_000));
        assert_eq!(nanoseconds("1.5h", true), Some(5_400_000_000_000));
        assert_eq!(nanoseconds("-1s", true), None);
        assert_eq!(nanoseconds("soon", true), None);
    }
}
