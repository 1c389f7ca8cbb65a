//! The few float32 operations of PyTorch on the CPU whose bits the methods' references depend
//! on: `Tensor.pow(exponent)` with a scalar exponent, and the mean of `|x|` over tokens.
//!
//! `pow` (`pow_tensor_scalar_kernel`, `aten/src/ATen/native/cpu/PowKernel.cpp`, and
//! `pow_Tensor_Scalar_out` in `Pow.cpp`): an exponent of 0 fills with 1, 1 copies, 0.5 is
//! `sqrt`, 2 and 3 are products, -1 and -2 reciprocals; any other exponent (cast to f32)
//! goes through `cpu_kernel_vec`: whole iterations of [`POW_STRIDE`] values take
//! `Vectorized<float>::pow`, SLEEF's `Sleef_powf16_u10` under AVX-512 with the exponent cast
//! to f32, and the values after them the scalar `std::pow(float, double)`, the C library's
//! double `pow` rounded to f32 (checked on 30 000 values and 18 exponents: every value
//! agrees). [`sleef_powf`] transcribes SLEEF's `xpowf` (`src/libm/sleefsimdsp.c`, with `logkf`
//! and `expkf`, and the double-float helpers of `src/common/df.h` in their fused form,
//! `ENABLE_FMA_SP`).
//!
//! torch's `sqrt` (and so `pow(0.5)`) goes through MKL's vector math (`vsSqrt`, high
//! accuracy mode), which is not correctly rounded on about 0.7 % of inputs; quantscope uses
//! the correctly rounded square root, so at α = 0.5 (SmoothQuant) and ratio 0.5 (AWQ), and in
//! AWQ's normalisation, a value can be one ulp away from torch's.

#![expect(
    clippy::excessive_precision,
    clippy::approx_constant,
    reason = "SLEEF's constants, written as its source writes them"
)]

use crate::core::format::nf4::torch_column_sums;

/// Values per iteration of torch's vectorised loop (`vectorized_loop`: two vectors of 16
/// floats under AVX-512); the values past the last whole iteration take the scalar function.
pub const POW_STRIDE: usize = 32;

/// `x.pow(exp)` of a float32 tensor with a Python float exponent, element by element, as
/// torch 2.15 computes it on an AVX-512 CPU (one thread's range: up to 32 768 values).
#[must_use]
pub fn torch_pow(x: &[f32], exp: f64) -> Vec<f32> {
    if exp == 0.0 {
        return vec![1.0; x.len()];
    }
    let special: Option<fn(f32) -> f32> = if exp == 1.0 {
        Some(|v| v)
    } else if exp == 0.5 {
        Some(f32::sqrt)
    } else if exp == 2.0 {
        Some(|v| v * v)
    } else if exp == 3.0 {
        Some(|v| v * v * v)
    } else if exp == -1.0 {
        Some(|v| 1.0 / v)
    } else if exp == -2.0 {
        Some(|v| 1.0 / (v * v))
    } else {
        None
    };
    if let Some(f) = special {
        return x.iter().map(|&v| f(v)).collect();
    }
    // the vector part: SLEEF with the exponent cast to f32; the rest: std::pow(float,
    // double), that is the C library's double pow, rounded to f32
    let vector = x.len() / POW_STRIDE * POW_STRIDE;
    let e = exp as f32;
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            if i < vector {
                sleef_powf(v, e)
            } else {
                f64::from(v).powf(exp) as f32
            }
        })
        .collect()
}

/// `x.abs().mean(0)` of a contiguous float32 `[tokens, cols]` on the CPU: torch's sum over
/// the tokens in its own order (`nf4::torch_column_sums`), divided by the token count in f32.
#[must_use]
pub fn torch_abs_mean_rows(x: &[f32], tokens: usize, cols: usize) -> Vec<f32> {
    let abs: Vec<f32> = x.iter().map(|v| v.abs()).collect();
    let t = tokens as f32;
    torch_column_sums(&abs, tokens, cols)
        .into_iter()
        .map(|s| s / t)
        .collect()
}

/// A double-float: `x + y` with `|y|` below half an ulp of `x`.
#[derive(Clone, Copy)]
struct F2 {
    x: f32,
    y: f32,
}

fn f2(x: f32, y: f32) -> F2 {
    F2 { x, y }
}

/// `vfmapn(x, y, z)`: `x * y - z`, fused.
fn fmapn(x: f32, y: f32, z: f32) -> f32 {
    x.mul_add(y, -z)
}

/// `vfmanp(x, y, z)`: `z - x * y`, fused.
fn fmanp(x: f32, y: f32, z: f32) -> f32 {
    (-x).mul_add(y, z)
}

fn add2_ff(x: f32, y: f32) -> F2 {
    let s = x + y;
    let v = s - x;
    f2(s, (x - (s - v)) + (y - v))
}

fn add2_f2f(x: F2, y: f32) -> F2 {
    let s = x.x + y;
    let v = s - x.x;
    let t = (x.x - (s - v)) + (y - v);
    f2(s, t + x.y)
}

fn add2_f2f2(x: F2, y: F2) -> F2 {
    let s = x.x + y.x;
    let v = s - x.x;
    let t = (x.x - (s - v)) + (y.x - v);
    f2(s, t + (x.y + y.y))
}

fn add_f2f2(x: F2, y: F2) -> F2 {
    let s = x.x + y.x;
    f2(s, (((x.x - s) + y.x) + x.y) + y.y)
}

fn add_ff2(x: f32, y: F2) -> F2 {
    let s = x + y.x;
    f2(s, ((x - s) + y.x) + y.y)
}

fn normalize(t: F2) -> F2 {
    let s = t.x + t.y;
    f2(s, (t.x - s) + t.y)
}

fn scale(d: F2, s: f32) -> F2 {
    f2(d.x * s, d.y * s)
}

fn mul_f2f(x: F2, y: f32) -> F2 {
    let s = x.x * y;
    f2(s, x.y.mul_add(y, fmapn(x.x, y, s)))
}

fn mul_f2f2(x: F2, y: F2) -> F2 {
    let s = x.x * y.x;
    f2(s, x.x.mul_add(y.y, x.y.mul_add(y.x, fmapn(x.x, y.x, s))))
}

fn squ(x: F2) -> F2 {
    let s = x.x * x.x;
    f2(s, (x.x + x.x).mul_add(x.y, fmapn(x.x, x.x, s)))
}

fn div(n: F2, d: F2) -> F2 {
    let t = 1.0 / d.x;
    let s = n.x * t;
    let u = fmapn(t, n.x, s);
    let v = fmanp(d.y, t, fmanp(d.x, t, 1.0));
    f2(s, s.mul_add(v, n.y.mul_add(t, u)))
}

/// `ilogb2k`: the unbiased exponent field.
fn ilogb2k(d: f32) -> i32 {
    ((d.to_bits() >> 23) & 0xff) as i32 - 0x7f
}

/// `vldexp3`: adds `q` to the exponent field.
fn ldexp3(d: f32, q: i32) -> f32 {
    f32::from_bits(d.to_bits().wrapping_add((q << 23) as u32))
}

/// `vldexp_vf_vf_vi2`: `x * 2^q` in steps that do not overflow.
fn ldexp(x: f32, q: i32) -> f32 {
    let mut m = q >> 31;
    m = ((m.wrapping_add(q) >> 6).wrapping_sub(m)) << 4;
    let q = q.wrapping_sub(m << 2);
    m = m.wrapping_add(0x7f).clamp(0, 0xff);
    let u = f32::from_bits((m as u32) << 23);
    let x = x * u * u * u * u;
    let u = f32::from_bits((q.wrapping_add(0x7f) as u32) << 23);
    x * u
}

/// SLEEF's `logkf`: `ln(d)` as a double-float, `d > 0`.
fn logkf(d: f32) -> F2 {
    let small = d < f32::MIN_POSITIVE;
    let d = if small {
        d * ((1u64 << 32) as f32 * (1u64 << 32) as f32)
    } else {
        d
    };
    let mut e = ilogb2k(d * (1.0f32 / 0.75f32));
    let m = ldexp3(d, -e);
    if small {
        e -= 64;
    }
    let x = div(add2_ff(-1.0, m), add2_ff(1.0, m));
    let x2 = squ(x);
    let mut t = 0.240_320_354_700_088_500_976_562_f32;
    t = t.mul_add(x2.x, 0.285_112_679_004_669_189_453_125);
    t = t.mul_add(x2.x, 0.400_007_992_982_864_379_882_812);
    let c = f2(
        0.666_666_626_930_236_816_406_25,
        3.691_838_612_596_143_320_843_11e-9,
    );
    let mut s = mul_f2f(
        f2(0.693_147_182_464_599_609_38, -1.904_654_323_148_236_017e-9),
        e as f32,
    );
    s = add_f2f2(s, scale(x, 2.0));
    add_f2f2(s, mul_f2f2(mul_f2f2(x2, x), add2_f2f2(mul_f2f(x2, t), c)))
}

/// SLEEF's `expkf`: `e^d` of a double-float.
fn expkf(d: F2) -> f32 {
    const R_LN2F: f32 =
        1.442_695_040_888_963_407_359_924_681_001_892_137_426_645_954_152_985_934_135_449_406_931;
    const L2UF: f32 = 0.693_145_751_953_125;
    const L2LF: f32 = 1.428_606_765_330_187_045e-6;
    let u = (d.x + d.y) * R_LN2F;
    // vrint_vi2_vf: round to nearest, ties to even (cvtps2dq, whose answer out of range is
    // i32::MIN)
    let q = if u.abs() < 2_147_483_648.0 {
        u.round_ties_even() as i32
    } else {
        i32::MIN
    };
    let qf = q as f32;
    let mut s = add2_f2f(d, qf * -L2UF);
    s = add2_f2f(s, qf * -L2LF);
    s = normalize(s);
    let mut u = 0.001_363_246_468_827_128_410_339_36_f32;
    u = u.mul_add(s.x, 0.008_365_969_173_610_210_418_701_17);
    u = u.mul_add(s.x, 0.041_671_082_377_433_776_855_468_8);
    u = u.mul_add(s.x, 0.166_665_524_244_308_471_679_688);
    u = u.mul_add(s.x, 0.499_999_850_988_388_061_523_438);
    let t = add_f2f2(s, mul_f2f(squ(s), u));
    let t = add_ff2(1.0, t);
    let u = ldexp(t.x + t.y, q);
    if d.x < -104.0 { 0.0 } else { u }
}

/// `x` with the sign of `x` flipped where `y` is negative (`vmulsign`).
fn mulsign(x: f32, y: f32) -> f32 {
    f32::from_bits(x.to_bits() ^ (y.to_bits() & 0x8000_0000))
}

/// SLEEF's `xpowf` (the u10 power function torch's vectorised `pow` calls).
#[must_use]
pub fn sleef_powf(x: f32, y: f32) -> f32 {
    let yisint = y.trunc() == y || y.abs() > (1 << 24) as f32;
    let yisodd = ((y.trunc() as i32) & 1) == 1 && yisint && y.abs() < (1 << 24) as f32;
    let mut result = expkf(mul_f2f(logkf(x.abs()), y));
    if result.is_nan() {
        result = f32::INFINITY;
    }
    result *= if x > 0.0 {
        1.0
    } else if yisint {
        if yisodd { -1.0 } else { 1.0 }
    } else {
        f32::NAN
    };
    let efx = mulsign(x.abs() - 1.0, y);
    if y.is_infinite() {
        result = if efx < 0.0 {
            0.0
        } else if efx == 0.0 {
            1.0
        } else {
            f32::INFINITY
        };
    }
    if x.is_infinite() || x == 0.0 {
        let base = if y.is_sign_negative() ^ (x == 0.0) {
            0.0
        } else {
            f32::INFINITY
        };
        result = mulsign(base, if yisodd { x } else { 1.0 });
    }
    if x.is_nan() || y.is_nan() {
        result = f32::NAN;
    }
    if y == 0.0 || x == 1.0 {
        result = 1.0;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleef_pow_is_within_one_ulp_of_the_exact_power() {
        let mut worst = 0u32;
        for i in 1..20_000u32 {
            let x = i as f32 * 0.0137 + 1e-6;
            for &y in &[0.05f32, 0.15, 0.35, 0.55, 0.95] {
                let got = sleef_powf(x, y);
                let exact = f64::from(x).powf(f64::from(y)) as f32;
                worst = worst.max(got.to_bits().abs_diff(exact.to_bits()));
            }
        }
        assert!(worst <= 1, "{worst} ulps");
    }

    #[test]
    fn special_exponents_and_bases_follow_torch() {
        assert_eq!(torch_pow(&[0.0, 4.0], 0.0), vec![1.0, 1.0]);
        // past the last 32 values: the double pow rounded once
        let x = vec![3.241_888e-7f32; 33];
        let p = torch_pow(&x, 0.15);
        assert_eq!(p[32], (f64::from(x[0]).powf(0.15)) as f32);
        assert_eq!(p[0], sleef_powf(x[0], 0.15));
        assert_ne!(p[0], p[32]);
        assert_eq!(torch_pow(&[3.0], 1.0), vec![3.0]);
        assert_eq!(torch_pow(&[2.0], 0.5), vec![2f32.sqrt()]);
        assert_eq!(sleef_powf(0.0, 0.35), 0.0);
        assert_eq!(sleef_powf(1.0, 0.35), 1.0);
        assert!(sleef_powf(-2.0, 0.35).is_nan());
        assert_eq!(sleef_powf(f32::INFINITY, 0.35), f32::INFINITY);
        assert!(sleef_powf(1e-42, 0.5) > 0.0);
    }

    #[test]
    fn the_mean_over_tokens_is_a_sum_then_a_division() {
        let x = [1.0f32, -2.0, 3.0, -4.0];
        assert_eq!(torch_abs_mean_rows(&x, 2, 2), vec![2.0, 3.0]);
    }
}
