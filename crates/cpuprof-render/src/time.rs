//! Human-readable durations.
//!
//! The report's page formats durations with `formatNs` in `cpuprof-report`'s `page.js`, by
//! the same rule (a test runs both on the same values): one duration reads the same in the
//! terminal and on the page.

/// The units, from the smallest: their length in ns and their name.
const UNITS: [(u64, &str); 6] = [
    (1, "ns"),
    (1_000, "µs"),
    (1_000_000, "ms"),
    (1_000_000_000, "s"),
    (60_000_000_000, "min"),
    (3_600_000_000_000, "h"),
];

/// `ns` as a short human duration with three significant digits: `812 ns`, `12.3 µs`,
/// `1.23 ms`, `457 ms`, `2.35 s`, `12.5 min`, `1.50 h`. The unit is the largest not longer than
/// the duration once rounded (999.6 ms is `1.00 s`, 9.996 ms `10.0 ms`); halves round away
/// from zero, in integers (no binary fraction decides a digit).
pub fn format_ns(ns: i64) -> String {
    let abs = ns.unsigned_abs();
    let sign = if ns < 0 { "-" } else { "" };
    if abs < 1_000 {
        return format!("{ns} ns");
    }
    let mut unit = UNITS.iter().rposition(|(length, _)| *length <= abs).unwrap_or(0);
    loop {
        let length = UNITS[unit].0;
        // Two decimals under 10 units, one under 100, none above.
        let mut decimals = if abs < 10 * length { 2 } else { u32::from(abs < 100 * length) };
        let mut rounded = round_half_up(abs, length / 10u64.pow(decimals));
        if decimals > 0 && rounded >= 1_000 {
            // 9.996 rounds to 10.00: four digits, so one decimal fewer.
            decimals -= 1;
            rounded = round_half_up(abs, length / 10u64.pow(decimals));
        }
        let scale = 10u64.pow(decimals);
        if UNITS.get(unit + 1).is_some_and(|(next, _)| rounded >= next / length * scale) {
            // 999.6 ms rounds to 1000 ms, 59.96 s to 60.0 s: the next unit.
            unit += 1;
            continue;
        }
        let (whole, fraction) = (rounded / scale, rounded % scale);
        let name = UNITS[unit].1;
        return if decimals == 0 {
            format!("{sign}{whole} {name}")
        } else {
            format!("{sign}{whole}.{fraction:0width$} {name}", width = decimals as usize)
        };
    }
}

/// `value / step`, rounded half up.
fn round_half_up(value: u64, step: u64) -> u64 {
    value / step + u64::from(value % step >= step.div_ceil(2))
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

    #[test]
    fn rounding_picks_the_unit_and_digits_of_the_rounded_value() {
        assert_eq!(format_ns(1_000), "1.00 µs");
        assert_eq!(format_ns(9_995_000), "10.0 ms");
        assert_eq!(format_ns(9_994_999), "9.99 ms");
        assert_eq!(format_ns(99_950_000), "100 ms");
        assert_eq!(format_ns(999_499_999), "999 ms");
        assert_eq!(format_ns(999_500_000), "1.00 s");
        assert_eq!(format_ns(59_950_000_000), "1.00 min");
        assert_eq!(format_ns(3_597_000_000_000), "1.00 h");
        // 1.125 is a binary fraction: a float formatter rounds it to even (1.12), halves up here.
        assert_eq!(format_ns(1_125_000), "1.13 ms");
        assert_eq!(format_ns(-999_500_000), "-1.00 s");
        assert_eq!(format_ns(i64::MIN), "-2562048 h");
        assert_eq!(format_ns(i64::MAX), "2562048 h");
    }
}
