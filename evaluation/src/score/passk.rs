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
    fn k_must_be_within_the_samples() {
        assert_eq!(pass_at_k(3, 1, 4), Err(PassAtKError::BadK { k: 4, n: 3 }));
        assert_eq!(pass_at_k(3, 1, 0), Err(PassAtKError::BadK { k: 0, n: 3 }));
        assert_eq!(pass_at_k(3, 4, 1), Err(PassAtKError::BadC { c: 4, n: 3 }));
    }
}
