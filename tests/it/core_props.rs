//! Properties of the quantization core that must hold for every finite matrix and every valid
//! configuration (proptest), plus small cases worked by hand.
//!
//! The generators build matrices that mix scales on purpose (exact zeros, constant and
//! near-constant rows, outliers, magnitudes from a subnormal 1e-41 through 1e-30 to 1e30, rows
//! whose magnitudes differ by 70 orders) and configurations that start from any preset and
//! override any field at random.
//!
//! A few corners of that space make the core refuse a block ([`AnalyseError::Block`]: a
//! scale or offset that overflows its storage type, an unclamped zero point beyond `i32`).
//! The main properties, which expect success, steer around them ([`tame`] for the
//! configuration, [`domain`] for the matrix's magnitudes);
//! `the_full_domain_succeeds_or_names_the_block` covers the whole space, and
//! tests/it/core_overflow.rs pins each corner (they were bugs: NaN metrics, overflow panics,
//! wrong codes). Small cases worked by hand are in tests/it/core_cases.rs and
//! tests/it/core_clipping.rs.

use std::ops::Range;

use ndarray::Array2;
use proptest::prelude::*;
use quantscope::core::config::{
    Arith, AsymZeroPoint, Axis, Clipping, CodeClamp, Config, Conventions, Degenerate, NonFinite,
    QuantExpr, RangeKind, RangeSource, Rounding, ScaleDtype, SymScale, SymZeroPoint, type_range,
};
use quantscope::core::{
    AnalyseError, Granularity, Matrix, Options, PRESETS, PresetOptions, Report, Scheme, analyse,
    analyse_with, preset,
};

use crate::common::core as core_helpers;

use core_helpers::{ConventionOverrides, block_sse, rows};

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Row and element magnitudes: a subnormal, the edge of the normal range, tiny, small,
/// ordinary, large, the f16 neighbourhood and huge.
const MAGNITUDES: [f32; 9] = [1e-41, 1e-38, 1e-30, 1e-7, 1e-3, 1.0, 1e3, 1e4, 1e30];

/// Builds one row of `cols` values from raw random draws.
///
/// `kind` picks the shape: all zeros, a constant, a near-constant run (a base value plus a
/// few ulps), values of one magnitude, values of mixed magnitudes, or small values with one
/// outlier. Exact zeros are sprinkled into the random shapes.
fn build_row(
    kind: u8,
    mag: f32,
    unit: &[f32],
    mags: &[f32],
    zeros: &[bool],
    ulps: &[u32],
) -> Vec<f32> {
    let n = unit.len();
    let sprinkle = |i: usize, x: f32| if zeros[i] { 0.0 } else { x };
    match kind {
        0 => vec![0.0; n],
        1 => {
            let c = if unit[0] == 0.0 { mag } else { unit[0] * mag };
            vec![c; n]
        }
        2 => {
            let base = (1.0 + unit[0].abs()) * mag;
            let sign = if unit[0] < 0.0 { -1.0 } else { 1.0 };
            ulps.iter()
                .map(|&k| sign * f32::from_bits(base.to_bits() + k))
                .collect()
        }
        3 => (0..n).map(|i| sprinkle(i, unit[i] * mag)).collect(),
        4 => (0..n).map(|i| sprinkle(i, unit[i] * mags[i])).collect(),
        _ => {
            let at = ulps[0] as usize % n;
            (0..n)
                .map(|i| {
                    if i == at {
                        unit[i].signum() * mag
                    } else {
                        sprinkle(i, unit[i] * mag * 1e-3)
                    }
                })
                .collect()
        }
    }
}

/// Which matrices a configuration is fed.
#[derive(Debug, Clone, Copy)]
struct Domain {
    /// Smallest row or element magnitude.
    min_mag: f32,
    /// Largest row or element magnitude.
    max_mag: f32,
}

impl Domain {
    /// Everything the generator can make.
    const FULL: Self = Self {
        min_mag: 0.0,
        max_mag: f32::MAX,
    };

    /// The magnitudes of [`MAGNITUDES`] inside the domain.
    fn magnitudes(self) -> Vec<f32> {
        MAGNITUDES
            .iter()
            .copied()
            .filter(|m| (self.min_mag..=self.max_mag).contains(m))
            .collect()
    }
}

/// The magnitudes on which the analysis of `c` succeeds and every property holds:
///
/// - an f16 scale (or f16 float offset) above 65504 would be stored as infinity, so the core
///   refuses the block (test `an_f16_scale_or_offset_beyond_65504_is_not_stored_as_infinity`):
///   values stay at or below 1e4, which keeps every scale and offset below 65504 even at 1 bit;
/// - [`Degenerate::Zero`] and [`Degenerate::Flat`] keep a subnormal scale, whose reciprocal
///   is infinite, and a NaN
///   ratio clamped into the code range is reported as unclamped (ignored test
///   `a_nan_ratio_clamped_to_the_range_is_reported_as_clamped`): magnitudes start at 1e-7, so
///   no block (and no percentile or shrunk range) is narrower than 65535 · `f32::MIN_POSITIVE`
///   unless it is exactly 0 (an ulp at 1e-7 is 7e-15).
fn domain(c: &Config) -> Domain {
    Domain {
        min_mag: if matches!(
            c.conventions.degenerate,
            Degenerate::Zero | Degenerate::Flat
        ) {
            1e-7
        } else {
            0.0
        },
        max_mag: if c.scale_dtype == ScaleDtype::F16 {
            1e4
        } else {
            f32::MAX
        },
    }
}

/// Steers a configuration away from the one refusal that any matrix can reach: an unclamped
/// integer zero point on a tight range leaves `i32` for a block that is narrow and far from
/// zero (a near-constant row, or a one-element group, which is constant and gets the 2^-23
/// or 0 scale of its degenerate policy), and the core refuses the block (test
/// `an_unclamped_zero_point_beyond_i32_does_not_overflow`). Widening such ranges to include
/// zero keeps the zero point in the code range.
fn tame(mut c: Config) -> Config {
    if !c.conventions.clamp_zero_point {
        c.range_source = RangeSource::IncludeZero;
    }
    c
}

/// One row of `cols` values in `domain`.
fn row(cols: usize, domain: Domain) -> impl Strategy<Value = Vec<f32>> {
    let mag = prop::sample::select(domain.magnitudes());
    (
        0..6u8,
        mag.clone(),
        prop::collection::vec(-1.0f32..1.0, cols),
        prop::collection::vec(mag, cols),
        prop::collection::vec(prop::bool::weighted(0.2), cols),
        prop::collection::vec(0u32..4, cols),
    )
        .prop_map(|(kind, mag, unit, mags, zeros, ulps)| {
            build_row(kind, mag, &unit, &mags, &zeros, &ulps)
        })
}

/// A finite matrix of 1..=12 rows and 1..=40 columns in `domain`.
fn matrix(domain: Domain) -> impl Strategy<Value = Matrix> {
    (1..=12usize, 1..=40usize).prop_flat_map(move |(rows, cols)| {
        prop::collection::vec(row(cols, domain), rows).prop_map(move |rows_data| {
            let flat: Vec<f32> = rows_data.into_iter().flatten().collect();
            let values = Array2::from_shape_vec((rows, cols), flat).expect("shape matches");
            Matrix::new(values).expect("generated values are finite")
        })
    })
}

/// A code range before the bit width and signedness are known: custom ranges are fractions
/// of the type's range.
#[derive(Debug, Clone, Copy)]
enum RangeChoice {
    Full,
    Narrow,
    Custom(f64, f64),
}

fn resolve_range(choice: RangeChoice, bits: u8, signed: bool) -> RangeKind {
    match choice {
        RangeChoice::Full => RangeKind::Full,
        RangeChoice::Narrow => RangeKind::Narrow,
        RangeChoice::Custom(a, b) => {
            let (tmin, tmax) = type_range(u32::from(bits), signed);
            let width = f64::from(tmax - tmin);
            let mut qmin = tmin + (a * width).round() as i32;
            let mut qmax = tmin + (b * width).round() as i32;
            if qmin > qmax {
                std::mem::swap(&mut qmin, &mut qmax);
            }
            if qmin == qmax {
                if qmax < tmax {
                    qmax += 1;
                } else {
                    qmin -= 1;
                }
            }
            RangeKind::Custom { qmin, qmax }
        }
    }
}

fn scheme() -> impl Strategy<Value = Scheme> {
    prop_oneof![Just(Scheme::Symmetric), Just(Scheme::Asymmetric)]
}

fn granularity(groups: Range<usize>) -> impl Strategy<Value = Granularity> {
    prop_oneof![
        Just(Granularity::Tensor),
        Just(Granularity::Channel),
        groups.prop_map(Granularity::Group)
    ]
}

/// How often each field of the preset is overridden.
const OVERRIDE: f64 = 0.3;

fn maybe<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    prop::option::weighted(OVERRIDE, s)
}

/// Overrides of the top-level fields.
type FieldOverrides = (
    Option<u8>,
    Option<bool>,
    Option<Scheme>,
    Option<RangeChoice>,
    Option<RangeSource>,
    Option<Rounding>,
    Option<Granularity>,
    Option<Axis>,
    Option<Clipping>,
    Option<ScaleDtype>,
    Option<u8>,
);

fn field_overrides() -> impl Strategy<Value = FieldOverrides> {
    (
        maybe(1..=16u8),
        maybe(any::<bool>()),
        maybe(scheme()),
        maybe(prop_oneof![
            Just(RangeChoice::Full),
            Just(RangeChoice::Narrow),
            (0.0..1.0f64, 0.0..1.0f64).prop_map(|(a, b)| RangeChoice::Custom(a, b)),
        ]),
        maybe(prop_oneof![
            Just(RangeSource::Tight),
            Just(RangeSource::IncludeZero)
        ]),
        maybe(prop_oneof![
            Just(Rounding::HalfEven),
            Just(Rounding::HalfAway),
            Just(Rounding::HalfUp)
        ]),
        maybe(granularity(1..51)),
        maybe(prop_oneof![Just(Axis::Rows), Just(Axis::Columns)]),
        maybe(prop_oneof![
            Just(Clipping::None),
            (50.0..=100.0f64).prop_map(Clipping::Percentile),
            Just(Clipping::Mse),
        ]),
        maybe(prop_oneof![
            Just(ScaleDtype::F32),
            Just(ScaleDtype::F16),
            Just(ScaleDtype::Bf16)
        ]),
        maybe(0..=32u8),
    )
}

fn convention_overrides() -> impl Strategy<Value = ConventionOverrides> {
    (
        maybe(prop_oneof![
            Just(SymScale::MaxCode),
            Just(SymScale::HalfSpan),
            Just(SymScale::SignedExtreme)
        ]),
        maybe(prop_oneof![
            Just(SymZeroPoint::Zero),
            Just(SymZeroPoint::MidHalfEven),
            Just(SymZeroPoint::MidFloor)
        ]),
        maybe(prop_oneof![
            Just(AsymZeroPoint::RoundOfShift),
            Just(AsymZeroPoint::ShiftOfRound),
            Just(AsymZeroPoint::FloatMin),
        ]),
        maybe(any::<bool>()),
        maybe(prop_oneof![
            Just(QuantExpr::Divide),
            Just(QuantExpr::Reciprocal),
            Just(QuantExpr::ReciprocalAddZero)
        ]),
        maybe(prop_oneof![Just(Arith::F64), Just(Arith::F32)]),
        maybe(prop_oneof![
            Just(Degenerate::One),
            Just(Degenerate::Flat),
            Just(Degenerate::Epsilon),
            Just(Degenerate::Zero)
        ]),
        maybe(prop_oneof![Just(CodeClamp::Range), Just(CodeClamp::Type)]),
        maybe(prop_oneof![
            Just(NonFinite::ZeroPoint),
            Just(NonFinite::NanToZero),
            Just(NonFinite::Zero)
        ]),
    )
}

fn apply(mut c: Config, f: FieldOverrides, v: ConventionOverrides) -> Config {
    let (
        bits,
        signed,
        scheme,
        range,
        source,
        rounding,
        granularity,
        axis,
        clipping,
        dtype,
        zp_bits,
    ) = f;
    c.bits = bits.unwrap_or(c.bits);
    c.signed = signed.unwrap_or(c.signed);
    c.scheme = scheme.unwrap_or(c.scheme);
    if let Some(choice) = range {
        c.range = resolve_range(choice, c.bits, c.signed);
    }
    if c.validate().is_err() {
        // A preset's custom (reduce_range) range that no longer fits the overridden type.
        c.range = RangeKind::Full;
    }
    c.range_source = source.unwrap_or(c.range_source);
    c.rounding = rounding.unwrap_or(c.rounding);
    c.granularity = granularity.unwrap_or(c.granularity);
    c.axis = axis.unwrap_or(c.axis);
    c.clipping = clipping.unwrap_or(c.clipping);
    c.scale_dtype = dtype.unwrap_or(c.scale_dtype);
    c.zero_point_bits = zp_bits.unwrap_or(c.zero_point_bits);
    let (sym_scale, sym_zero, asym_zero, clamp, expr, arith, degenerate, code_clamp, non_finite) =
        v;
    let k = &mut c.conventions;
    k.sym_scale = sym_scale.unwrap_or(k.sym_scale);
    k.sym_zero_point = sym_zero.unwrap_or(k.sym_zero_point);
    k.asym_zero_point = asym_zero.unwrap_or(k.asym_zero_point);
    k.clamp_zero_point = clamp.unwrap_or(k.clamp_zero_point);
    k.quant_expr = expr.unwrap_or(k.quant_expr);
    k.arith = arith.unwrap_or(k.arith);
    k.degenerate = degenerate.unwrap_or(k.degenerate);
    k.code_clamp = code_clamp.unwrap_or(k.code_clamp);
    k.non_finite = non_finite.unwrap_or(k.non_finite);
    c
}

/// Any valid configuration: a preset (with any scheme and `reduce_range` it accepts) and
/// random overrides of every field.
fn any_config() -> impl Strategy<Value = Config> {
    let names: Vec<&'static str> = PRESETS.iter().map(|p| p.name).collect();
    let base = (
        prop::sample::select(names),
        prop::option::of(scheme()),
        any::<bool>(),
    )
        // Every combination but the ones the library refuses (torch's symmetric quint8 with
        // a reduced range).
        .prop_filter_map(
            "a combination the library refuses",
            |(name, scheme, reduce_range)| {
                preset(
                    name,
                    PresetOptions {
                        scheme,
                        reduce_range,
                    },
                )
                .ok()
            },
        );
    (base, field_overrides(), convention_overrides())
        .prop_map(|(c, f, v)| apply(c, f, v))
        .prop_filter("valid configuration", |c| c.validate().is_ok())
}

/// A valid configuration, tamed, and a matrix from its domain.
fn case() -> impl Strategy<Value = (Config, Matrix)> {
    any_config()
        .prop_map(tame)
        .prop_flat_map(|c| (Just(c), matrix(domain(&c))))
}

// ---------------------------------------------------------------------------------------------
// Checks shared by the properties
// ---------------------------------------------------------------------------------------------

fn value(m: &Matrix, r: usize, c: usize) -> f32 {
    m.values()[[r, c]]
}

/// Property 1: the analysis succeeds and every metric is finite.
fn check_finite(m: &Matrix, c: &Config) -> Result<Report, TestCaseError> {
    let report = analyse(m, c).map_err(|e| TestCaseError::fail(format!("analyse failed: {e}")))?;
    let all = std::iter::once(&report.overall)
        .chain(report.channels.iter().map(|ch| &ch.metrics))
        .chain(
            report
                .ladder
                .iter()
                .flat_map(|r| std::iter::once(&r.overall).chain(&r.channels)),
        );
    for metrics in all {
        prop_assert!(metrics.mae.is_finite(), "mae {metrics:?}");
        prop_assert!(metrics.rmse.is_finite(), "rmse {metrics:?}");
        prop_assert!(metrics.max_error.is_finite(), "max_error {metrics:?}");
        prop_assert!(
            metrics.sqnr_db.is_none_or(f64::is_finite),
            "sqnr {metrics:?}"
        );
    }
    for b in &report.blocks {
        prop_assert!(b.scale.is_finite() && b.code_scale.is_finite(), "{b:?}");
    }
    Ok(report)
}

/// Property 2: every code is in the clamp range (`[qmin, qmax]`, or the type's), and the report's code, reconstruction and
/// worked step agree.
fn check_codes_in_range(m: &Matrix, report: &Report) -> Result<(), TestCaseError> {
    let (rows, cols) = report.shape;
    for r in 0..rows {
        for c in 0..cols {
            let q = report.code(r, c);
            let (lo, hi) = report.clamp_range;
            prop_assert!((lo..=hi).contains(&q), "code {q} at ({r}, {c})");
            let step = report.step(r, c, value(m, r, c));
            prop_assert_eq!(step.code, q);
            prop_assert_eq!(
                step.dequantized.to_bits(),
                report.dequantized(r, c).to_bits()
            );
        }
    }
    Ok(())
}

/// The largest error an unclamped value may have (property 3), derived from the kernel.
///
/// With `s` the code scale, `s'` the stored scale, `z` the zero point and `q` the code, the
/// kernel computes `t = fl(x / s)` (or `fl(x * fl(1/s))`, or with `fl(z)` added before
/// rounding; with a float offset `lo`, `x` is first replaced by `fl(x - lo)`), rounds `t` to
/// an integer `r` with `|r - t| <= 1/2`, and adds `fl(z)`. The sum is an integer in
/// `[qmin, qmax]`, so it is exact. Hence `(q - z)·s = x + s·(r - t) + s·(t - x/s) + s·(fl(z) - z)`:
///
/// - `|s·(r - t)| <= s/2`: the half step (`HalfUp`'s `fl(t + 1/2)` can round up across an
///   integer; that excess is below `ulp(t)`, i.e. within the float slack of `x` below);
/// - `|s·(t - x/s)| <= 2·eps·|x|` (one or two roundings of the ratio, plus `fl(x - lo)`, whose
///   error is at most `eps·(|x| + |lo|)`);
/// - `|s·(fl(z) - z)| <= eps·|z·s|` (a zero point beyond 2^24 is not exact in f32).
///
/// Dequantizing uses the stored scale, `x̂ = fl(fl(q - z)·s')` (or `fl(fl(s'·q) + lo')` with
/// the stored offset `lo'`), which adds `|q - z|·|s' - s|` (and `|lo' - lo|`) exactly, and
/// `eps·|(q - z)·s'|` twice for the conversion and the product (and `eps·|x̂|` for the sum).
fn half_step_bound(x: f32, x_hat: f32, q: i32, b: &quantscope::core::Block) -> f64 {
    let eps = f64::from(f32::EPSILON);
    let (s, stored) = (f64::from(b.code_scale), f64::from(b.scale));
    let z = f64::from(b.zero_point);
    let (k, offset_err, lo) = match b.offset {
        Some(o) => (
            f64::from(q),
            (f64::from(o) - f64::from(b.range.0)).abs(),
            f64::from(b.range.0).abs(),
        ),
        None => (f64::from(q) - z, 0.0, 0.0),
    };
    let half = 0.5 * s.abs() * (1.0 + 1e-6);
    let storage = k.abs() * (stored - s).abs() + offset_err;
    let slack = 4.0
        * eps
        * (f64::from(x).abs()
            + f64::from(x_hat).abs()
            + (z * s).abs()
            + (f64::from(q) * s).abs()
            + (k * stored).abs()
            + lo)
        + 4.0 * f64::from(f32::from_bits(1));
    half + storage + slack
}

/// Property 3: an unclamped value is at most half a step (plus storage rounding and float
/// slack) from its reconstruction; a block of scale 0 reconstructs its offset (or 0).
///
/// With `skip_nan`, values whose ratio is NaN (0 times the infinite reciprocal of a subnormal
/// scale) are skipped: see `a_nan_ratio_clamped_to_the_range_is_reported_as_clamped`.
fn check_half_step(m: &Matrix, report: &Report, skip_nan: bool) -> Result<(), TestCaseError> {
    let (rows, cols) = report.shape;
    for r in 0..rows {
        for c in 0..cols {
            let x = value(m, r, c);
            let step = report.step(r, c, x);
            // A library's forced code for a non-finite ratio (code 0, MLAS and gguf-py) is
            // not the nearest one.
            let forced = !step.ratio.is_finite()
                && report.config.conventions.non_finite != NonFinite::ZeroPoint;
            if step.clamped || forced || (skip_nan && step.ratio.is_nan()) {
                continue;
            }
            let b = &report.blocks.at(report.block_index(r, c));
            if b.code_scale == 0.0 {
                prop_assert_eq!(step.dequantized, b.offset.unwrap_or(0.0), "{:?}", b);
                continue;
            }
            let err = (f64::from(x) - f64::from(step.dequantized)).abs();
            let bound = half_step_bound(x, step.dequantized, step.code, b);
            prop_assert!(
                err <= bound,
                "({r}, {c}): x = {x:e}, x̂ = {:e}, code {}, error {err:e} > bound {bound:e}, {b:?}",
                step.dequantized,
                step.code,
            );
        }
    }
    Ok(())
}

/// Property 4, where it must hold: with f32 scales (codes and reconstruction use the same
/// scale), no float offset and a zero point small enough that `q - z` is exact in f32, the
/// reconstruction `x̂ = fl((q - z)·s)` is within a few ulps of the integer `q - z` times `s`, so
/// `x̂ / s` (or `x̂ · fl(1/s)`) is within `2^-21·|q - z|` of `q - z`, far from any tie, and
/// every rounding mode gives `q` back. Clamped values are included: `x̂` of `qmax` is `qmax`'s
/// own reconstruction.
///
/// Observed over 4096 generated cases: with f32 scales and an integer zero point, no mismatch
/// in ~275k values for any of Divide, Reciprocal and `ReciprocalAddZero` (clamped values
/// included), as the argument above says. With a float offset (GGUF-style `min`), clamped
/// values can come back with another code (79 of ~4.9k): `fl(s·q + lo)` loses `s·q` when an
/// ulp of `lo` exceeds the step; unclamped ones never did (0 of ~17k), but nothing forces that.
/// With f16/bf16 scales, 2-15% of values change code: the codes use the f32 scale, the
/// reconstruction the rounded one, so `|q - z|·|s' - s|` can exceed half a step.
fn check_requantize(report: &Report) -> Result<(), TestCaseError> {
    if report.config.scale_dtype != ScaleDtype::F32 {
        return Ok(());
    }
    let (rows, cols) = report.shape;
    for r in 0..rows {
        for c in 0..cols {
            let b = &report.blocks.at(report.block_index(r, c));
            if b.offset.is_some() || b.zero_point.unsigned_abs() > 1 << 20 {
                continue;
            }
            // A subnormal scale has an infinite f32 reciprocal (as in gguf-py and PyTorch's
            // kernels): every nonzero value then lands on qmin or qmax, and a reconstruction
            // of the other sign cannot come back to the same end.
            let reciprocal_overflows = (1.0f32 / b.code_scale).is_infinite();
            if reciprocal_overflows && report.config.conventions.quant_expr != QuantExpr::Divide {
                continue;
            }
            let x_hat = report.dequantized(r, c);
            let again = report.step(r, c, x_hat);
            prop_assert_eq!(
                again.code,
                report.code(r, c),
                "({}, {}): x̂ = {:e}, {:?}",
                r,
                c,
                x_hat,
                b
            );
        }
    }
    Ok(())
}

/// Property 6: the ladder.
fn check_ladder(m: &Matrix, c: &Config, report: &Report) -> Result<(), TestCaseError> {
    let ladder = &report.ladder;
    let grans: Vec<Granularity> = ladder.iter().map(|r| r.granularity).collect();
    // Tensor first; channel and the groups once each; group sizes strictly decreasing.
    prop_assert_eq!(grans[0], Granularity::Tensor);
    prop_assert_eq!(
        grans.iter().filter(|g| **g == Granularity::Channel).count(),
        1
    );
    let groups: Vec<usize> = grans
        .iter()
        .filter_map(|g| match g {
            Granularity::Group(g) => Some(*g),
            _ => None,
        })
        .collect();
    prop_assert_eq!(groups.len() + 2, ladder.len(), "{:?}", grans);
    prop_assert!(
        groups.windows(2).all(|w| w[0] > w[1]),
        "group sizes {groups:?}"
    );
    // With row channels, the ladder is exactly tensor, channel, then the groups: every group
    // rung has at least one scale per row. Column channels sit where their scale count puts
    // them (after the groups with fewer scales).
    if c.axis == Axis::Rows {
        prop_assert_eq!(grans[1], Granularity::Channel);
    }
    prop_assert!(ladder.iter().any(|r| r.granularity == c.granularity));
    prop_assert_eq!(ladder.iter().filter(|r| r.active).count(), 1);
    for rung in ladder {
        prop_assert_eq!(rung.active, rung.granularity == c.granularity);
        let alone = analyse_with(
            m,
            &Config {
                granularity: rung.granularity,
                ..*c
            },
            Options::ONE_CONFIG,
        )
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(rung.scales, alone.blocks.len() as u64);
        let (rows, cols) = m.shape();
        let expected = match (rung.granularity, c.axis) {
            (Granularity::Tensor, _) => 1,
            (Granularity::Channel, Axis::Rows) => rows,
            (Granularity::Channel, Axis::Columns) => cols,
            (Granularity::Group(g), _) => rows * cols.div_ceil(g),
        };
        prop_assert_eq!(rung.scales, expected as u64, "{}", rung.granularity);
        prop_assert_eq!(rung.memory, alone.memory);
        prop_assert_eq!(rung.overall, alone.overall);
        let mem = &rung.memory;
        prop_assert_eq!(mem.total_bytes, mem.payload_bytes + mem.metadata_bytes);
        prop_assert_eq!(mem.blocks, rung.scales);
        if rung.active {
            prop_assert_eq!(&report.memory, mem);
            prop_assert_eq!(report.overall, rung.overall);
        }
    }
    // Coarse to fine: scale counts never decrease, and since every rung charges the same
    // metadata per block, neither do bits per weight.
    for w in ladder.windows(2) {
        prop_assert!(
            w[0].scales <= w[1].scales
                && w[0].memory.bits_per_weight <= w[1].memory.bits_per_weight,
            "{} ({} scales, {} bpw) before {} ({} scales, {} bpw)",
            w[0].granularity,
            w[0].scales,
            w[0].memory.bits_per_weight,
            w[1].granularity,
            w[1].scales,
            w[1].memory.bits_per_weight,
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// 1 and 2: no panic, Ok, finite metrics, codes in range.
    #[test]
    fn analysis_is_finite_and_codes_are_in_range((c, m) in case()) {
        let report = check_finite(&m, &c)?;
        check_codes_in_range(&m, &report)?;
    }

    /// 3: an unclamped value is at most half a step from its reconstruction.
    #[test]
    fn unclamped_error_is_at_most_half_a_step((c, m) in case()) {
        let report = check_finite(&m, &c)?;
        check_half_step(&m, &report, false)?;
    }

    /// 4: quantizing the reconstruction with the same block parameters gives the same codes.
    #[test]
    fn requantizing_the_reconstruction_gives_the_same_codes((c, m) in case()) {
        let report = check_finite(&m, &c)?;
        check_requantize(&report)?;
    }

    /// 5: a channel's symmetric scale never exceeds the tensor's.
    #[test]
    fn channel_scales_never_exceed_the_tensor_scale(
        (c, m) in case(),
        sym_scale in prop_oneof![Just(SymScale::MaxCode), Just(SymScale::HalfSpan)],
    ) {
        // Clipping is off: a channel's percentile can exceed the tensor's. Degenerate blocks
        // are skipped: their scale is a policy constant (1 or 2^-23), not a function of the
        // channel's range.
        let c = Config {
            scheme: Scheme::Symmetric,
            scale_dtype: ScaleDtype::F32,
            clipping: Clipping::None,
            conventions: Conventions { sym_scale, ..c.conventions },
            ..c
        };
        // Made symmetric, a range may leave out its zero point (refused by validation).
        prop_assume!(c.validate().is_ok());
        let opts = Options::ONE_CONFIG;
        let tensor = analyse_with(&m, &Config { granularity: Granularity::Tensor, ..c }, opts).unwrap();
        let channel = analyse_with(&m, &Config { granularity: Granularity::Channel, ..c }, opts).unwrap();
        let t = tensor.blocks.at(0);
        let expected = match c.axis { Axis::Rows => m.shape().0, Axis::Columns => m.shape().1 };
        prop_assert_eq!(channel.blocks.len(), expected);
        for b in channel.blocks.iter().filter(|b| !b.degenerate) {
            prop_assert!(b.scale <= t.scale, "channel {b:?} > tensor {t:?}");
        }
    }

    /// 6: the ladder's order, active rung, scale counts and memory.
    #[test]
    fn the_ladder_is_consistent((c, m) in case()) {
        let report = check_finite(&m, &c)?;
        check_ladder(&m, &c, &report)?;
    }

    /// 7: the analysis is deterministic.
    #[test]
    fn analysing_twice_gives_equal_reports((c, m) in case()) {
        let a = analyse(&m, &c).unwrap();
        let b = analyse(&m, &c).unwrap();
        prop_assert_eq!(a, b);
    }

    /// MSE clipping never has a larger squared error than min-max, block by block.
    #[test]
    fn mse_clipping_never_loses_to_min_max((c, m) in case()) {
        let opts = Options::ONE_CONFIG;
        let none = analyse_with(&m, &Config { clipping: Clipping::None, ..c }, opts).unwrap();
        let mse = analyse_with(&m, &Config { clipping: Clipping::Mse, ..c }, opts).unwrap();
        for (i, (a, b)) in block_sse(&m, &mse).iter().zip(block_sse(&m, &none)).enumerate() {
            prop_assert!(*a <= b * (1.0 + 1e-12), "block {i}: mse {a:e} > min-max {b:e}");
        }
    }
}

/// The whole generator's space, unrestricted: the analysis never panics, and either
/// succeeds (and then properties 1-4 hold) or reports which block its parameters cannot
/// represent ([`AnalyseError::Block`]: a scale or offset that overflows its storage type or
/// the arithmetic, or an unclamped zero point beyond `i32`).
#[test]
fn the_full_domain_succeeds_or_names_the_block() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(512));
    let result = runner.run(&(any_config(), matrix(Domain::FULL)), |(c, m)| {
        match analyse(&m, &c) {
            Ok(_) => {
                let report = check_finite(&m, &c)?;
                check_codes_in_range(&m, &report)?;
                check_half_step(&m, &report, true)?;
                check_requantize(&report)?;
            }
            Err(AnalyseError::Block { .. }) => {}
            Err(e) => return Err(TestCaseError::fail(format!("unexpected error {e:?}"))),
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// A corner of property 3 that was a bug (the other corners are in tests/it/core_overflow.rs).
#[test]
fn a_nan_ratio_clamped_to_the_range_is_reported_as_clamped() {
    // GGUF Q4_1 conventions with an f32 scale and codes [6, 15]: the block [0, 1e-41] has the
    // subnormal scale 1e-41 / 9 and an infinite reciprocal. For 0, (0 - min) · inf = NaN; the
    // core gives it the zero point 0 clamped into the range, code 6, but says it was not
    // clamped, so its reconstruction 6 · s (6.7e-42 for a value of 0, six steps away) breaks
    // the half-step property.
    let c = Config {
        scale_dtype: ScaleDtype::F32,
        range: RangeKind::Custom { qmin: 6, qmax: 15 },
        ..preset("q4_1", PresetOptions::default()).unwrap()
    };
    let m = rows(&[&[0.0, 1e-41]]);
    let r = analyse(&m, &c).unwrap();
    let step = r.step(0, 0, 0.0);
    let b = &r.blocks.at(0);
    let err = f64::from(step.dequantized).abs();
    assert!(
        step.clamped || err <= half_step_bound(0.0, step.dequantized, step.code, b),
        "{step:?} {b:?}"
    );
}
