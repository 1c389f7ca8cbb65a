//! Small floating-point element types (E4M3, E5M2, E2M3, E3M2, E2M1) as `ml_dtypes` casts to
//! them: round to nearest even, after saturating to the largest finite magnitude (the OCP
//! Microscaling specification's conversion, and what the NVFP4 libraries' casts do after
//! their clamp).
//!
//! A code is the type's bit pattern in the low bits of a byte, the sign bit on top
//! (`float6_e2m3fn` viewed as `uint8`): E2M1's codes are ggml's `kvalues_mxfp4` indices, E4M3's
//! and E5M2's the FP8 bytes of [`super::Fp8Kind`].

#![expect(
    clippy::inline_always,
    reason = "the element casts inline into the block loops of the MX and NVFP4 encoders"
)]

use super::bits::pow2;

/// A small float type: its mantissa bits, exponent bias and largest finite magnitude. Every
/// type here has one sign bit and no infinities within `max` (E5M2's infinities and NaNs
/// lie beyond it and are never produced).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Minifloat {
    /// The name (`E4M3`).
    pub name: &'static str,
    /// Bits per value, sign included.
    pub bits: u32,
    /// Mantissa bits.
    pub mbits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// The largest finite magnitude.
    pub max: f32,
}

/// OCP FP8 E4M3 (`float8_e4m3fn`): bias 7, max 448.
pub const E4M3: Minifloat = Minifloat {
    name: "E4M3",
    bits: 8,
    mbits: 3,
    bias: 7,
    max: 448.0,
};
/// OCP FP8 E5M2 (`float8_e5m2`): bias 15, max 57344.
pub const E5M2: Minifloat = Minifloat {
    name: "E5M2",
    bits: 8,
    mbits: 2,
    bias: 15,
    max: 57344.0,
};
/// OCP FP6 E2M3 (`float6_e2m3fn`): bias 1, max 7.5.
pub const E2M3: Minifloat = Minifloat {
    name: "E2M3",
    bits: 6,
    mbits: 3,
    bias: 1,
    max: 7.5,
};
/// OCP FP6 E3M2 (`float6_e3m2fn`): bias 3, max 28.
pub const E3M2: Minifloat = Minifloat {
    name: "E3M2",
    bits: 6,
    mbits: 2,
    bias: 3,
    max: 28.0,
};
/// OCP FP4 E2M1 (`float4_e2m1fn`): bias 1, max 6; the values 0, 0.5, 1, 1.5, 2, 3, 4, 6.
pub const E2M1: Minifloat = Minifloat {
    name: "E2M1",
    bits: 4,
    mbits: 1,
    bias: 1,
    max: 6.0,
};

impl Minifloat {
    /// The sign bit of a code.
    #[must_use]
    pub const fn sign_bit(&self) -> u8 {
        1 << (self.bits - 1)
    }

    /// The code of `v`, rounded to nearest even after saturating `|v|` to [`Self::max`]; the
    /// sign is `v`'s sign bit (so `-0.0` and small negative values give the negative zero).
    /// `v` must not be NaN.
    #[must_use]
    #[inline(always)]
    pub fn encode(&self, v: f32) -> u8 {
        let sign = if v.is_sign_negative() {
            self.sign_bit()
        } else {
            0
        };
        sign | self.encode_magnitude(v.abs())
    }

    /// The code of a non-negative `a` (no sign bit), rounded to nearest even after
    /// saturating to [`Self::max`].
    #[must_use]
    #[inline(always)]
    pub fn encode_magnitude(&self, a: f32) -> u8 {
        let a = a.min(self.max);
        let (mbits, bias) = (self.mbits, self.bias);
        let code = if a < pow2(1 - bias) {
            // Subnormal: multiples of 2^(1 - bias - mbits); rounding up to 2^mbits gives the
            // smallest normal's code, which is that same number.
            (a * pow2(bias - 1 + mbits as i32)).round_ties_even() as u32
        } else {
            // Normal: round the f32 mantissa to `mbits` bits, half to even, on the bits (a
            // carry moves into the exponent), then rebias the exponent.
            let b = a.to_bits();
            let shift = 23 - mbits;
            let r = (b + ((1 << (shift - 1)) - 1) + ((b >> shift) & 1)) >> shift;
            r - (((127 - bias) as u32) << mbits)
        };
        code as u8
    }

    /// The value of a code (its low [`Self::bits`] bits); NaN for the codes beyond
    /// [`Self::max`] (E4M3's NaNs, E5M2's infinities and NaNs), which are never produced.
    #[must_use]
    pub fn decode(&self, code: u8) -> f32 {
        let code = u32::from(code) & ((1 << self.bits) - 1);
        let sign = if code & u32::from(self.sign_bit()) != 0 {
            -1.0
        } else {
            1.0
        };
        let mag = code & (u32::from(self.sign_bit()) - 1);
        let e = (mag >> self.mbits) as i32;
        let m = mag & ((1 << self.mbits) - 1);
        let v = if e == 0 {
            m as f32 * pow2(1 - self.bias - self.mbits as i32)
        } else {
            ((1 << self.mbits) + m) as f32 * pow2(e - self.bias - self.mbits as i32)
        };
        if v > self.max { f32::NAN } else { sign * v }
    }

    /// The value of every code, `2^bits` of them.
    #[must_use]
    pub fn table(&self) -> Vec<f32> {
        (0..1u32 << self.bits)
            .map(|c| self.decode(c as u8))
            .collect()
    }

    /// The exponent of the largest normal value (`emax_elem` in the OCP specification):
    /// `floor(log2(max))`.
    #[must_use]
    pub fn emax(&self) -> i32 {
        ((self.max.to_bits() >> 23) & 0xFF) as i32 - 127
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::format::Fp8Kind;

    #[test]
    fn fp8_agrees_with_the_fp8_module() {
        let mut xs = vec![0.0f32, -0.0, 1.0625, 1.1875, 464.0, 57344.0, 61440.0, 1e-9];
        for k in 0..4000 {
            let v = (k as f32 * 0.37).sin() * 2f32.powi(k % 40 - 20);
            xs.push(v);
            xs.push(f32::from_bits(v.to_bits() | 0x7FFF));
        }
        for (mf, kind) in [(E4M3, Fp8Kind::E4M3), (E5M2, Fp8Kind::E5M2)] {
            for &x in &xs {
                assert_eq!(mf.encode(x), kind.encode(x), "{} {x:e}", mf.name);
            }
            for c in 0..=255u8 {
                let (a, b) = (mf.decode(c), kind.decode(c));
                if b.is_finite() && !(mf.name == "E4M3" && c & 0x7F == 0x7F) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{} {c:#x}", mf.name);
                }
            }
        }
    }

    #[test]
    fn the_small_types_hold_the_ocp_values() {
        let e2m1: Vec<f32> = (0..8).map(|c| E2M1.decode(c)).collect();
        assert_eq!(e2m1, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(E2M3.decode(0x1F), 7.5);
        assert_eq!(E2M3.decode(0x01), 0.125);
        assert_eq!(E3M2.decode(0x1F), 28.0);
        assert_eq!(E3M2.decode(0x01), 0.0625);
        assert_eq!(
            [
                E4M3.emax(),
                E5M2.emax(),
                E2M3.emax(),
                E3M2.emax(),
                E2M1.emax()
            ],
            [8, 15, 2, 4, 2]
        );
    }

    #[test]
    fn every_code_round_trips_and_ties_go_to_even() {
        for mf in [E4M3, E5M2, E2M3, E3M2, E2M1] {
            for c in 0..(1u32 << mf.bits) {
                let v = mf.decode(c as u8);
                if v.is_finite() && v.abs() <= mf.max {
                    assert_eq!(u32::from(mf.encode(v)), c, "{} {c:#x}", mf.name);
                }
            }
        }
        // E2M1's midpoints: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
        let got: Vec<f32> = [0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
            .iter()
            .map(|&v| E2M1.decode(E2M1.encode(v)))
            .collect();
        assert_eq!(got, [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0]);
        assert_eq!(E2M1.encode(-0.1), 8);
        assert_eq!(E2M1.encode(1e30), 7);
        assert_eq!(E2M3.decode(E2M3.encode(-100.0)), -7.5);
    }
}
