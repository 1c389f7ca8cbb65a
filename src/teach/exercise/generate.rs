//! The generated pair of the "apply now" exercise: a quiet row and a loud row, fixed by a
//! seed.

use ndarray::Array2;

use crate::core::Matrix;

/// SplitMix64: a small, fixed generator so a seed always gives the same pair.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A whole number in `lo..=hi`.
    fn between(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo + 1)) as u32
    }

    fn sign(&mut self) -> f32 {
        if self.next() & 1 == 0 { 1.0 } else { -1.0 }
    }
}

/// Two labelled rows of `columns` values (clamped to 2..=16) for the "apply now" exercise,
/// the same for the same seed: `quiet` with magnitudes 0.02 to 0.17 and `loud` with
/// magnitudes 0.60 to 3.40, one of them at least 2.50, all with two decimals and random
/// signs. Under one symmetric int4 `[-7, 7]` scale the quiet row always collapses to
/// zeros (its largest magnitude is below half a step, 2.50 / 14).
#[must_use]
pub fn generated_pair(seed: u64, columns: usize) -> Matrix {
    let n = columns.clamp(2, 16);
    let mut rng = SplitMix(seed);
    let mut quiet: Vec<f32> = (0..n)
        .map(|_| rng.sign() * rng.between(2, 17) as f32 / 100.0)
        .collect();
    if quiet.iter().all(|&v| v == quiet[0]) {
        quiet[n - 1] = -quiet[n - 1];
    }
    let mut loud: Vec<f32> = (0..n)
        .map(|_| rng.sign() * rng.between(60, 340) as f32 / 100.0)
        .collect();
    let big = rng.between(0, n as u32 - 1) as usize;
    loud[big] = rng.sign() * rng.between(250, 340) as f32 / 100.0;
    let values = Array2::from_shape_fn((2, n), |(r, c)| if r == 0 { quiet[c] } else { loud[c] });
    let labels = vec![Some("quiet".to_string()), Some("loud".to_string())];
    // Two rows of finite values and two labels: the constructor cannot refuse them.
    Matrix::with_labels(values, labels).unwrap_or_else(|_| unreachable!())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_pair_is_fixed_by_its_seed_and_collapses_per_tensor() {
        for seed in 0..200 {
            let m = generated_pair(seed, 4);
            assert_eq!(m, generated_pair(seed, 4));
            let r = crate::core::analyse(&m, &crate::core::presets::lesson()).unwrap();
            assert!(r.channels[0].collapsed, "seed {seed}: {:?}", m.values());
            assert!(!r.channels[1].collapsed);
        }
        assert_ne!(generated_pair(1, 4), generated_pair(2, 4));
        assert_eq!(generated_pair(1, 100).shape(), (2, 16));
    }
}
