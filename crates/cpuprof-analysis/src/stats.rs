//! The significance tests of [`crate::diff`]: an exact binomial test that holds at any sample
//! count, its quasi-binomial variant for several runs per side, and the Benjamini–Hochberg
//! procedure. Every p-value is in [0, 1].
//!
//! statrs' `Binomial::cdf` goes through a continued fraction with a fixed number of steps,
//! which stops converging at large counts (p = 0.43 for identical sides of 10⁷ samples, and
//! negative from 2×10⁷). The tails here are summed outward from the observed count, starting
//! from a probability mass computed with Loader's saddle-point method (C. Loader, "Fast and
//! Accurate Computation of Binomial Probabilities", 2000, as in R's `dbinom`), which keeps full
//! precision at 10⁹ trials. They are checked against SciPy (Boost's incomplete beta) in
//! `fixtures/stats/binomial-two-sided.tsv`.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// ln √(2π).
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// The coefficients of the Stirling error series: 1/12, 1/360, 1/1260, 1/1680, 1/1188.
const S0: f64 = 1.0 / 12.0;
const S1: f64 = 1.0 / 360.0;
const S2: f64 = 1.0 / 1260.0;
const S3: f64 = 1.0 / 1680.0;
const S4: f64 = 1.0 / 1188.0;

/// The error of Stirling's formula, ln n! − ln(√(2πn) (n/e)ⁿ), for a whole `n ≥ 1`.
fn stirling_error(n: f64) -> f64 {
    if n <= 15.0 {
        // Exact enough from the factorial itself: ln 15! ≈ 27.9, so no digits are lost.
        let ln_factorial: f64 = (2..=n as u64).map(|i| (i as f64).ln()).sum();
        return ln_factorial - (n + 0.5) * n.ln() + n - LN_SQRT_2PI;
    }
    // The asymptotic series; five terms are exact to double precision beyond 15.
    let nn = n * n;
    (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
}

/// `x ln(x / m) + m − x` without the cancellation of its naive form when `x ≈ m`.
#[expect(clippy::float_cmp, reason = "the series has converged when a term no longer changes the sum")]
fn deviance(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let v = (x - m) / (x + m);
        let mut sum = (x - m) * v;
        let mut term = 2.0 * x * v;
        let v2 = v * v;
        for j in 1..1000 {
            term *= v2;
            let next = sum + term / f64::from(2 * j + 1);
            if next == sum {
                return next;
            }
            sum = next;
        }
        return sum;
    }
    x * (x / m).ln() + m - x
}

/// ln P(X = k) for X ~ Binomial(n, p), 0 < p < 1.
fn ln_binomial_pmf(k: u64, n: u64, p: f64) -> f64 {
    let q = 1.0 - p;
    if k == 0 {
        return n as f64 * (-p).ln_1p();
    }
    if k == n {
        return n as f64 * p.ln();
    }
    let (k, n) = (k as f64, n as f64);
    let saddle =
        stirling_error(n) - stirling_error(k) - stirling_error(n - k) - deviance(k, n * p) - deviance(n - k, n * q);
    // ln(2π k (n − k) / n)
    let spread = 2.0 * LN_SQRT_2PI + k.ln() + (-k / n).ln_1p();
    saddle - 0.5 * spread
}

/// Above this variance (10¹⁰: a function seen in more than 4×10¹⁰ samples, 460 days at V8's
/// 1 kHz; only crafted folded counts get there) the tails come from the normal distribution.
const NORMAL_ABOVE_VARIANCE: f64 = 1e10;

/// `(P(X ≤ k), P(X ≥ k))` for X ~ Binomial(n, p), 0 < p < 1: the tail on `k`'s side of the
/// mean is summed, the other is its complement.
fn binomial_tails(k: u64, n: u64, p: f64) -> (f64, f64) {
    let variance = n as f64 * p * (1.0 - p);
    if variance > NORMAL_ABOVE_VARIANCE {
        // The sum would take ~9 standard deviations of terms (millions); the normal tail with
        // a continuity correction is within ~1e-4 of the exact one here, where the skewness
        // (1 − 2p)/σ is below 1e-5. The same method for every k of one test keeps p monotone.
        let sd = variance.sqrt();
        let z = |x: f64| (x - n as f64 * p) / (sd * std::f64::consts::SQRT_2);
        let lower = 0.5 * statrs::function::erf::erfc(-z(k as f64 + 0.5));
        let upper = 0.5 * statrs::function::erf::erfc(z(k as f64 - 0.5));
        return (lower.clamp(0.0, 1.0), upper.clamp(0.0, 1.0));
    }
    let mass = ln_binomial_pmf(k, n, p).exp();
    if k as f64 <= n as f64 * p {
        let lower = outer_tail(k, n, p, mass, false);
        (lower, (1.0 - lower + mass).clamp(0.0, 1.0))
    } else {
        let upper = outer_tail(k, n, p, mass, true);
        ((1.0 - upper + mass).clamp(0.0, 1.0), upper)
    }
}

/// `P(X ≤ k)` (`upper` false) or `P(X ≥ k)` (`upper` true), where that tail lies away from the
/// mean, from `mass` = P(X = k): summed from `k` outward. Each term is the one before times a
/// ratio below 1 that only shrinks, so the sum stops when a term no longer changes it: after
/// about 9 standard deviations of terms at most.
#[expect(clippy::float_cmp, reason = "the sum has converged when a term no longer changes it")]
fn outer_tail(k: u64, n: u64, p: f64, mass: f64, upper: bool) -> f64 {
    if mass == 0.0 {
        return 0.0;
    }
    let odds = if upper { p / (1.0 - p) } else { (1.0 - p) / p };
    let steps = if upper { n - k } else { k };
    let (mut term, mut sum) = (1.0f64, 1.0f64);
    for i in 1..=steps {
        let (numerator, denominator) =
            if upper { ((n - k - i + 1) as f64, (k + i) as f64) } else { ((k - i + 1) as f64, (n - k + i) as f64) };
        term *= numerator / denominator * odds;
        let next = sum + term;
        if next == sum {
            break;
        }
        sum = next;
    }
    (mass * sum).clamp(0.0, 1.0)
}

/// Two-sided exact binomial test of `x1` successes out of `x1 + x2` trials against success
/// probability `p0`: twice the smaller tail, at most 1. 1 when there are no trials, or when
/// `p0` is not a probability strictly between 0 and 1.
pub(crate) fn binomial_p(x1: u64, x2: u64, p0: f64) -> f64 {
    let Some(trials) = x1.checked_add(x2).filter(|t| *t > 0) else { return 1.0 };
    if !(p0 > 0.0 && p0 < 1.0) {
        return 1.0;
    }
    let (lower, upper) = binomial_tails(x1, trials, p0);
    (2.0 * lower.min(upper)).clamp(0.0, 1.0)
}

/// Welch's two-sided t test of equal means of `a` and `b` (two values or more each): the
/// p-value, in [0, 1]. Samples without spread on both sides: 1 when the means are equal, else 0.
pub(crate) fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    let moments = |x: &[f64]| {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
        (n, mean, var)
    };
    let ((na, ma, va), (nb, mb, vb)) = (moments(a), moments(b));
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 || !se2.is_finite() {
        return if (ma - mb).abs() == 0.0 { 1.0 } else { 0.0 };
    }
    let t = (ma - mb).abs() / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    match StudentsT::new(0.0, 1.0, df.max(1.0)) {
        Ok(dist) => (2.0 * (1.0 - dist.cdf(t))).clamp(0.0, 1.0),
        Err(_) => 1.0,
    }
}

/// Two-sided test of `x` out of `trials` against `p0` with the variance scaled by
/// `dispersion`, through Student's t with `df` degrees of freedom (continuity corrected).
pub(crate) fn quasi_binomial_p(x: u64, trials: u64, p0: f64, dispersion: f64, df: f64) -> f64 {
    if trials == 0 || !(p0 > 0.0 && p0 < 1.0) {
        return 1.0;
    }
    let n = trials as f64;
    let expected = n * p0;
    let sd = (dispersion * n * p0 * (1.0 - p0)).sqrt();
    let distance = ((x as f64 - expected).abs() - 0.5).max(0.0);
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if sd > 0.0 => (2.0 * t.sf(distance / sd)).clamp(0.0, 1.0),
        _ => 1.0,
    }
}

/// Pooled variance of the per-run counts over their pooled mean, at least 1: how much more
/// the counts vary between runs than Poisson counts would.
pub(crate) fn overdispersion(base: &[u64], new: &[u64]) -> f64 {
    let (mut var_sum, mut mean_sum) = (0.0, 0.0);
    for counts in [base, new].into_iter().filter(|c| c.len() >= 2) {
        let runs = counts.len() as f64;
        let mean = counts.iter().map(|c| *c as f64).sum::<f64>() / runs;
        let variance = counts.iter().map(|c| (*c as f64 - mean).powi(2)).sum::<f64>() / (runs - 1.0);
        var_sum += (runs - 1.0) * variance;
        mean_sum += (runs - 1.0) * mean;
    }
    if mean_sum > 0.0 {
        (var_sum / mean_sum).max(1.0)
    } else {
        1.0
    }
}

/// Which of the tests in `(p_value, min_p)` pairs are discoveries under the
/// Benjamini–Hochberg procedure at false discovery rate `alpha`, over the tests that could be
/// significant at all (Tarone: a function seen in 3 samples never can be, and would only
/// dilute the family).
pub(crate) fn benjamini_hochberg(tests: &[(f64, f64)], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..tests.len()).filter(|i| tests[*i].1 <= alpha).collect();
    let m = order.len();
    order.sort_by(|a, b| tests[*a].0.total_cmp(&tests[*b].0));
    let cutoff = order
        .iter()
        .enumerate()
        .filter(|(k, i)| tests[**i].0 <= alpha * (*k as f64 + 1.0) / m as f64)
        .map(|(k, _)| k + 1)
        .max()
        .unwrap_or(0);
    let mut significant = vec![false; tests.len()];
    for i in &order[..cutoff] {
        significant[*i] = true;
    }
    significant
}

#[cfg(test)]
// p = 1 exactly for identical sides is the point of some of these tests.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn welch_by_hand() {
        // Identical samples: no difference at all.
        assert_eq!(welch_p(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 1.0);
        // Means 2 and 5, variances 1 and 1, n 3 and 3: t = 3 / sqrt(2/3) = 3.674, df = 4,
        // two-sided p = 0.02131 (R: 2 * pt(-3.674235, 4)).
        let p = welch_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert!((p - 0.02131).abs() < 1e-4, "{p}");
        // No spread on either side, different means: certain.
        assert_eq!(welch_p(&[5.0, 5.0], &[7.0, 7.0]), 0.0);
    }

    /// The oracle table: SciPy's tails (checked against mpmath's exact sums for small counts).
    fn oracle() -> Vec<(u64, u64, f64, f64, f64, f64)> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/stats/binomial-two-sided.tsv");
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .skip(1)
            .map(|line| {
                let f: Vec<&str> = line.split('\t').collect();
                let float = |i: usize| f[i].parse::<f64>().unwrap();
                (f[0].parse().unwrap(), f[1].parse().unwrap(), float(2), float(3), float(4), float(5))
            })
            .collect()
    }

    /// Equal within a relative `tolerance`, or both below 1e-290 (where exp underflows).
    fn close(got: f64, want: f64, tolerance: f64) -> bool {
        (got - want).abs() <= tolerance * want.abs() || (got < 1e-290 && want < 1e-290)
    }

    #[test]
    fn tails_and_p_values_match_scipy_from_10_to_a_billion_samples() {
        let table = oracle();
        assert!(table.len() > 900, "{} oracle rows", table.len());
        for (x1, x2, p0, lower, upper, p) in table {
            let n = x1 + x2;
            let (got_lower, got_upper) = binomial_tails(x1, n, p0);
            let got = binomial_p(x1, x2, p0);
            assert!((0.0..=1.0).contains(&got));
            if n as f64 * p0 * (1.0 - p0) > NORMAL_ABOVE_VARIANCE {
                // The normal tail: close where a verdict is made (p above 1e-12).
                let near =
                    |got: f64, want: f64| (got - want).abs() <= 1e-4 * want.max(1e-8) || want < 1e-12 && got < 1e-10;
                assert!(near(got, p), "p({x1}, {x2}, {p0}) = {got}, want {p}");
                continue;
            }
            // Boost's own accuracy at 10⁹ trials is about 1e-10 relative.
            assert!(close(got_lower, lower, 1e-8), "P(X≤{x1}) n={n} p={p0}: {got_lower} vs {lower}");
            assert!(close(got_upper, upper, 1e-8), "P(X≥{x1}) n={n} p={p0}: {got_upper} vs {upper}");
            assert!(close(got, p, 1e-8), "p({x1}, {x2}, {p0}) = {got}, want {p}");
        }
    }

    #[test]
    fn identical_counts_give_one_at_any_scale() {
        for n in [1u64, 10, 1_000, 10_000_000, 20_000_000, 200_000_000, 1_000_000_000, 5_000_000_000] {
            assert_eq!(binomial_p(n, n, 0.5), 1.0, "{n}");
            assert_eq!(quasi_binomial_p(n, 2 * n, 0.5, 3.0, 4.0), 1.0, "{n}");
        }
        // One sample more in 6×10⁸ is nothing.
        assert!(binomial_p(300_000_000, 300_000_001, 0.5) > 1.0 - 1e-9);
    }

    #[test]
    fn p_falls_as_the_change_grows() {
        for (n, p0) in [(40u64, 0.5), (1_000, 0.3), (1_000_000, 0.5), (400_000_000, 0.7), (1_000_000_000_000, 0.4)] {
            let mean = (n as f64 * p0).round() as u64;
            let step = (n / 2_000).max(1);
            let mut previous = 1.0;
            let mut x = mean;
            while x > 0 {
                let p = binomial_p(x, n - x, p0);
                assert!(p <= previous, "n={n}: p({x}) = {p} > {previous}");
                previous = p;
                x = x.saturating_sub(step);
            }
            previous = 1.0;
            let mut x = mean;
            while x <= n {
                let p = binomial_p(x, n - x, p0);
                assert!(p <= previous, "n={n}: p({x}) = {p} > {previous}");
                previous = p;
                x += step;
            }
        }
    }

    #[test]
    fn small_cases_by_hand() {
        assert!((binomial_p(50, 50, 0.5) - 1.0).abs() < 1e-12);
        // 0 of 20 at ½: 2 × 2⁻²⁰.
        assert!((binomial_p(0, 20, 0.5) - 2.0 * 0.5f64.powi(20)).abs() < 1e-18);
        // 2 of 3 at ½: P(X ≥ 2) = ½, doubled 1.
        assert!((binomial_p(2, 1, 0.5) - 1.0).abs() < 1e-12);
        assert_eq!(binomial_p(0, 0, 0.5), 1.0);
        assert_eq!(binomial_p(3, 5, 0.0), 1.0);
        assert_eq!(binomial_p(3, 5, f64::NAN), 1.0);
    }

    #[test]
    fn quasi_binomial() {
        // Poisson-like runs (dispersion 1): a doubling over hundreds of samples is clear.
        assert!(quasi_binomial_p(100, 300, 0.5, 1.0, 4.0) < 0.01);
        assert!(quasi_binomial_p(150, 300, 0.5, 1.0, 4.0) > 0.9);
        // The same counts, runs twenty times noisier than Poisson: not clear any more.
        assert!(quasi_binomial_p(130, 300, 0.5, 20.0, 4.0) > 0.05);
        assert!((overdispersion(&[10, 10, 10], &[20, 20, 20]) - 1.0).abs() < 1e-12);
        assert!((overdispersion(&[0, 20, 40], &[20, 20, 20]) - 10.0).abs() < 1e-9);
        // Huge counts stay probabilities.
        let p = quasi_binomial_p(3_000_000_000, 6_000_000_001, 0.5, 1.0, 4.0);
        assert!((0.0..=1.0).contains(&p) && p > 0.99, "{p}");
    }

    #[test]
    fn benjamini_hochberg_by_hand() {
        // m = 4 testable (the fifth can never reach 0.05); cut-offs 0.0125, 0.025, 0.0375, 0.05.
        let tests = [(0.01, 0.0), (0.03, 0.0), (0.02, 0.0), (0.2, 0.0), (0.001, 0.5)];
        assert_eq!(benjamini_hochberg(&tests, 0.05), [true, true, true, false, false]);
        // Step-up: 0.02 misses its own cut-off (0.0125) but 0.04 meets the fourth.
        let tests = [(0.02, 0.0), (0.024, 0.0), (0.036, 0.0), (0.04, 0.0)];
        assert_eq!(benjamini_hochberg(&tests, 0.05), [true; 4]);
        let tests = [(0.02, 0.0), (0.03, 0.0), (0.04, 0.0), (0.06, 0.0)];
        assert_eq!(benjamini_hochberg(&tests, 0.05), [false; 4]);
        assert_eq!(benjamini_hochberg(&[], 0.05), Vec::<bool>::new());
    }
}
