//! The scalar conversions the reference implementations use, ported operation for operation:
//! ggml's software fp16 conversion, its `nearest_int`, the E8M0 and UE4M3 scale encodings,
//! and the E2M1 grid.

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

/// ggml's `kvalues_mxfp4`: the 16 E2M1 values doubled (so they are integers), indexed by the
/// stored 4-bit code. Codes 0 and 8 are both zero.
pub const E2M1_DOUBLED: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// ggml's `ggml_compute_fp32_to_fp16` (the FP16 library's branch-free conversion): round to
/// nearest even, overflow to infinity, NaN to a quiet NaN of the same sign.
#[inline]
#[must_use]
pub fn f32_to_f16(f: f32) -> u16 {
    let scale_to_inf = f32::from_bits(0x7780_0000); // 2^112
    let scale_to_zero = f32::from_bits(0x0880_0000); // 2^-110
    let mut base = (f.abs() * scale_to_inf) * scale_to_zero;
    let w = f.to_bits();
    let shl1_w = w.wrapping_add(w);
    let sign = w & 0x8000_0000;
    let bias = (shl1_w & 0xFF00_0000).max(0x7100_0000);
    base += f32::from_bits((bias >> 1) + 0x0780_0000);
    let bits = base.to_bits();
    let exp_bits = (bits >> 13) & 0x0000_7C00;
    let mantissa_bits = bits & 0x0000_0FFF;
    let nonsign = exp_bits + mantissa_bits;
    ((sign >> 16)
        | if shl1_w > 0xFF00_0000 {
            0x7E00
        } else {
            nonsign
        }) as u16
}

/// ggml's `ggml_compute_fp16_to_fp32`: exact.
#[inline]
#[must_use]
pub fn f16_to_f32(h: u16) -> f32 {
    let w = u32::from(h) << 16;
    let sign = w & 0x8000_0000;
    let two_w = w.wrapping_add(w);
    let exp_offset = 0xE0u32 << 23;
    let exp_scale = f32::from_bits(0x0780_0000); // 2^-112
    let normalized = f32::from_bits((two_w >> 4) + exp_offset) * exp_scale;
    let magic_mask = 126u32 << 23;
    let denormalized = f32::from_bits((two_w >> 17) | magic_mask) - 0.5;
    let cutoff = 1u32 << 27;
    f32::from_bits(
        sign | if two_w < cutoff {
            denormalized.to_bits()
        } else {
            normalized.to_bits()
        },
    )
}

/// ggml's `nearest_int`: rounds half to even by adding 1.5 * 2^23 and reading the mantissa.
/// Exact for |x| <= 4194303; beyond that (where ggml asserts) it returns the same bits ggml's
/// release build computes.
#[inline(always)]
#[must_use]
pub fn nearest_int(x: f32) -> i32 {
    let val = x + 12_582_912.0;
    (val.to_bits() as i32 & 0x007F_FFFF) - 0x0040_0000
}

/// ggml's `ggml_e8m0_to_fp32_half`: half of the E8M0 power of two `2^(e - 127)`, which is
/// the scale of the doubled E2M1 values.
#[inline]
#[must_use]
pub fn e8m0_half(e: u8) -> f32 {
    let bits = if e < 2 {
        0x0020_0000u32 << e
    } else {
        u32::from(e - 1) << 23
    };
    f32::from_bits(bits)
}

/// ggml's `ggml_ue4m3_to_fp32`: an unsigned E4M3 byte (bias 7) times 0.5, the scale of the
/// doubled E2M1 values. Bytes 0 and 0x7F (NaN) decode to 0.
#[must_use]
pub fn ue4m3_half(x: u8) -> f32 {
    if x == 0 || x == 0x7F {
        return 0.0;
    }
    let exp = i32::from((x >> 3) & 0xF);
    let man = f32::from(x & 0x7);
    let raw = if exp == 0 {
        man * f32::from_bits(0x3B00_0000) // 2^-9
    } else {
        (1.0 + man / 8.0) * pow2(exp - 7)
    };
    raw * 0.5
}

/// ggml's `ggml_fp32_to_ue4m3`: positive values to unsigned E4M3, the mantissa rounded half
/// up from the fourth bit, everything from 256 up (and any rounding into exponent 15) to
/// 0x7E (448), zero and negative values and NaN to 0.
#[must_use]
pub fn f32_to_ue4m3(x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let x = x.min(448.0);
    let bits = x.to_bits();
    let fp32_exp = ((bits >> 23) & 0xFF) as i32 - 127;
    let fp32_man = ((bits >> 20) & 0x7) as i32;
    let mut exp = fp32_exp + 7;
    if exp <= 0 {
        let man = (x * 512.0 + 0.5) as i32;
        return man.clamp(0, 7) as u8;
    }
    if exp >= 15 {
        return 0x7E;
    }
    let mut man = fp32_man + ((bits >> 19) & 1) as i32;
    if man > 7 {
        man = 0;
        exp += 1;
        if exp >= 15 {
            return 0x7E;
        }
    }
    ((exp << 3) | man) as u8
}

/// `2^k` for `-126 <= k <= 127`, exactly.
#[inline]
#[must_use]
pub fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trip_matches_the_half_crate() {
        for bits in (0u32..=0xFFFF).step_by(7) {
            let h = bits as u16;
            let want = half::f16::from_bits(h).to_f32();
            if want.is_nan() {
                continue;
            }
            assert_eq!(f16_to_f32(h).to_bits(), want.to_bits(), "{h:#x}");
        }
        for x in [
            0.0f32, -0.0, 1.0, 65504.0, 65520.0, 1e-8, 3e-8, 6.1e-5, 0.1, -2.5e-6,
        ] {
            assert_eq!(f32_to_f16(x), half::f16::from_f32(x).to_bits(), "{x}");
        }
    }

    #[test]
    fn nearest_int_rounds_half_to_even() {
        assert_eq!(nearest_int(2.5), 2);
        assert_eq!(nearest_int(3.5), 4);
        assert_eq!(nearest_int(-2.5), -2);
        assert_eq!(nearest_int(-0.4), 0);
        assert_eq!(nearest_int(7.49), 7);
    }

    #[test]
    fn ue4m3_rounds_half_up_and_saturates() {
        assert_eq!(f32_to_ue4m3(1.0), 0x38);
        assert_eq!(ue4m3_half(0x38), 0.5);
        assert_eq!(f32_to_ue4m3(1.0625), 0x39); // half of the mantissa step rounds up
        assert_eq!(f32_to_ue4m3(300.0), 0x7E);
        assert_eq!(ue4m3_half(0x7E), 224.0);
        assert_eq!(f32_to_ue4m3(0.001), 1);
        assert_eq!(f32_to_ue4m3(-1.0), 0);
        assert_eq!(e8m0_half(127), 0.5);
        assert_eq!(e8m0_half(0).to_bits(), 0x0020_0000);
    }
}
