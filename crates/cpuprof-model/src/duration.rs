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
    match parse_decimal(number.trim()) {
        Some(v) if v * scale < 9.2e18 => Some((v * scale).round() as i64),
        _ => None,
    }
}

/// A number as people write one in an option: digits, and a fraction after a point (`12`,
/// `0.5`). `None` for what Rust's float parser takes besides (`.5`, `5.`, `+5`, `1e3`, `inf`):
/// each is more likely a typo than meant (`0s...1s` is `0s` to `.1s`, 100 ms).
pub fn parse_decimal(text: &str) -> Option<f64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
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

    #[test]
    fn numbers_are_plain_decimals() {
        assert_eq!(nanoseconds("0.1s", true), Some(100_000_000));
        assert_eq!(nanoseconds("10", true), Some(10_000_000_000));
        assert_eq!(nanoseconds(" 2ms ", false), Some(2_000_000));
        // What a float parser takes besides: a typo more likely than meant.
        for text in [".1s", "1.s", "+1s", "1e3ms", "1E3", "infs", "NaNs", "..1s", "1.2.3s", "0x10s", "1_000ms", "s", ""]
        {
            assert_eq!(nanoseconds(text, true), None, "{text}");
        }
        assert_eq!(super::parse_decimal("0.5"), Some(0.5));
        assert_eq!(super::parse_decimal("-0.5"), None);
    }
}
