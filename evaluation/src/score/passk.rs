//! pass@k with the unbiased estimator: from n samples of which c passed, the chance that at
//! least one of k samples drawn without replacement passes, 1 − C(n−c, k) / C(n, k).

/// pass@k was asked of an impossible sample.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PassAtKError {
    /// k must be between 1 and n.
    #[error("k must be between 1 and n (k = {k}, n = {n})")]
    BadK {
        /// k.
        k: usize,
        /// n.
        n: usize,
    },
    /// c cannot exceed n.
    #[error("{c} of {n} samples cannot have passed")]
    BadC {
        /// c.
        c: usize,
        /// n.
        n: usize,
    },
}

/// 1 − C(n−c, k) / C(n, k), computed as 1 − Π_{i=n−c+1}^{n} (1 − k/i) so no binomial
/// coefficient is formed.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Result<f64, PassAtKError> {
    if k == 0 || k > n {
        return Err(PassAtKError::BadK { k, n });
    }
    if c > n {
        return Err(PassAtKError::BadC { c, n });
    }
    if n - c < k {
        return Ok(1.0);
    }
    let fail: f64 = (n - c + 1..=n).map(|i| 1.0 - k as f64 / i as f64).product();
    Ok(1.0 - fail)
}

/// The 95% Wilson score interval of a proportion: `successes` of `trials`, as (low, high);
/// (0, 1) when there are no trials. Unlike the normal approximation it stays within [0, 1]
/// and is not degenerate at 0 or all successes.
pub fn wilson(successes: usize, trials: usize) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = Z * Z;
    let scale = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / scale;
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / scale;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn matches_values_worked_by_hand() {
        // n=5, c=2, k=3: C(3,3)/C(5,3) = 1/10, so 0.9.
        assert!(close(pass_at_k(5, 2, 3).unwrap(), 0.9));
        // n=5, c=2, k=1: C(3,1)/C(5,1) = 3/5, so 0.4 = c/n.
        assert!(close(pass_at_k(5, 2, 1).unwrap(), 0.4));
        // n=10, c=3, k=2: C(7,2)/C(10,2) = 21/45, so 24/45.
        assert!(close(pass_at_k(10, 3, 2).unwrap(), 24.0 / 45.0));
        // n=4, c=1, k=2: C(3,2)/C(4,2) = 3/6, so 0.5.
        assert!(close(pass_at_k(4, 1, 2).unwrap(), 0.5));
    }

    #[test]
    fn none_passing_is_zero_and_all_passing_is_one() {
        assert_eq!(pass_at_k(3, 0, 3).unwrap(), 0.0);
        assert_eq!(pass_at_k(3, 0, 1).unwrap(), 0.0);
        assert_eq!(pass_at_k(3, 3, 1).unwrap(), 1.0);
        assert_eq!(pass_at_k(7, 7, 7).unwrap(), 1.0);
    }

    #[test]
    fn large_samples_do_not_overflow() {
        // C(1000, 500) overflows every integer type; the product form does not.
        let p = pass_at_k(1000, 1, 500).unwrap();
        assert!(close(p, 0.5), "{p}");
    }

    #[test]
    fn wilson_intervals_match_published_values() {
        // 0 of 10: (0, 0.2775); 5 of 10: (0.2366, 0.7634); 10 of 10: (0.7225, 1).
        let near =
            |(a, b): (f64, f64), (x, y): (f64, f64)| (a - x).abs() < 5e-5 && (b - y).abs() < 5e-5;
        assert!(near(wilson(0, 10), (0.0, 0.2775)));
        assert!(near(wilson(5, 10), (0.2366, 0.7634)));
        assert!(near(wilson(10, 10), (0.7225, 1.0)));
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn k_must_be_within_the_samples() {
        assert_eq!(pass_at_k(3, 1, 4), Err(PassAtKError::BadK { k: 4, n: 3 }));
        assert_eq!(pass_at_k(3, 1, 0), Err(PassAtKError::BadK { k: 0, n: 3 }));
        assert_eq!(pass_at_k(3, 4, 1), Err(PassAtKError::BadC { c: 4, n: 3 }));
    }
}
