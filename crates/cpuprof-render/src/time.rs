//! Human-readable durations.

/// `ns` as a short human duration: `812 ns`, `12.3 µs`, `1.23 ms`, `457 ms`, `2.35 s`,
/// `12.5 min`, `1.50 h`.
pub fn format_ns(ns: i64) -> String {
    let abs = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    let (value, unit) = if abs < 1e3 {
        return format!("{ns} ns");
    } else if abs < 1e6 {
        (abs / 1e3, "µs")
    } else if abs < 1e9 {
        (abs / 1e6, "ms")
    } else if abs < 60e9 {
        (abs / 1e9, "s")
    } else if abs < 3600e9 {
        (abs / 60e9, "min")
    } else {
        (abs / 3600e9, "h")
    };
    let decimals = if value < 10.0 { 2 } else { usize::from(value < 100.0) };
    format!("{sign}{value:.decimals$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::format_ns;

    #[test]
    fn units() {
        assert_eq!(format_ns(0), "0 ns");
        assert_eq!(format_ns(999), "999 ns");
        assert_eq!(format_ns(12_345), "12.3 µs");
        assert_eq!(format_ns(1_234_567), "1.23 ms");
        assert_eq!(format_ns(456_700_000), "457 ms");
        assert_eq!(format_ns(2_345_000_000), "2.35 s");
        assert_eq!(format_ns(-1_500_000), "-1.50 ms");
        assert_eq!(format_ns(59_000_000_000), "59.0 s");
        assert_eq!(format_ns(750_000_000_000), "12.5 min");
        assert_eq!(format_ns(5_400_000_000_000), "1.50 h");
    }
}
