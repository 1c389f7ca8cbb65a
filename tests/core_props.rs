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
//! `the_full_domain_succeeds_or_names_the_block` covers the whole space, and the tests at the
//! end pin each corner (they were bugs: NaN metrics, overflow panics, wrong codes).

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

/// Overrides of the conventions.
type ConventionOverrides = (
    Option<SymScale>,
    Option<SymZeroPoint>,
    Option<AsymZeroPoint>,
    Option<bool>,
    Option<QuantExpr>,
    Option<Arith>,
    Option<Degenerate>,
    Option<CodeClamp>,
    Option<NonFinite>,
);

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

/// Any valid configuration: a preset (with any scheme and `reduce_range`) and random
/// overrides of every field.
fn any_config() -> impl Strategy<Value = Config> {
    let names: Vec<&'static str> = PRESETS.iter().map(|p| p.name).collect();
    let base = (
        prop::sample::select(names),
        prop::option::of(scheme()),
        any::<bool>(),
    )
        .prop_map(|(name, scheme, reduce_range)| {
            preset(
                name,
                PresetOptions {
                    scheme,
                    reduce_range,
                },
            )
            .expect("listed preset")
        });
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
            Options { ladder: false },
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

/// Sum of squared errors of each block.
fn block_sse(m: &Matrix, report: &Report) -> Vec<f64> {
    report
        .blocks
        .iter()
        .map(|b| {
            let mut sse = 0.0;
            for r in b.rows.0..b.rows.1 {
                for c in b.cols.0..b.cols.1 {
                    let e = f64::from(report.dequantized(r, c)) - f64::from(value(m, r, c));
                    sse += e * e;
                }
            }
            sse
        })
        .collect()
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
        let opts = Options { ladder: false };
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
        let opts = Options { ladder: false };
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

// ---------------------------------------------------------------------------------------------
// Small cases by hand
// ---------------------------------------------------------------------------------------------

fn ort_int8() -> Config {
    preset("ort-int8", PresetOptions::default()).expect("preset")
}

fn rows(rows: &[&[f32]]) -> Matrix {
    Matrix::from_rows(rows).expect("finite, rectangular")
}

#[test]
fn a_one_by_one_matrix_works_under_every_preset() {
    let m = rows(&[&[0.37]]);
    for info in PRESETS {
        for scheme in [Scheme::Symmetric, Scheme::Asymmetric] {
            let c = preset(
                info.name,
                PresetOptions {
                    scheme: Some(scheme),
                    reduce_range: false,
                },
            )
            .unwrap();
            let r = analyse(&m, &c).unwrap();
            let what = format!("{} {scheme:?}", info.name);
            assert_eq!(r.blocks.len(), 1, "{what}");
            assert!((r.qmin..=r.qmax).contains(&r.code(0, 0)), "{what}");
            assert!(
                r.overall.mae.is_finite() && r.overall.mae <= 0.37,
                "{what}: {:?}",
                r.overall
            );
            // Tensor, channel and (for group presets) the active group: one scale each.
            assert!(r.ladder.iter().all(|rung| rung.scales == 1), "{what}");
            assert_eq!(
                r.ladder.len(),
                if matches!(c.granularity, Granularity::Group(_)) {
                    3
                } else {
                    2
                }
            );
        }
    }
    // ORT int8 symmetric: scale 0.37/127, the value maps to 127 and comes back to within a
    // float rounding of itself.
    let r = analyse(&m, &ort_int8()).unwrap();
    assert_eq!(
        r.blocks.at(0).scale,
        (2.0 * f64::from(0.37f32) / 254.0) as f32
    );
    assert_eq!(r.code(0, 0), 127);
    assert!((r.dequantized(0, 0) - 0.37).abs() <= 1e-7);
}

#[test]
fn a_group_longer_than_the_row_is_one_block_per_row() {
    let row = [0.5, -0.25, 0.125, 1.0, -2.0, 0.0, 0.75];
    let m = rows(&[&row]);
    let grouped = Config {
        granularity: Granularity::Group(50),
        ..ort_int8()
    };
    let r = analyse(&m, &grouped).unwrap();
    assert_eq!(r.blocks.len(), 1);
    assert_eq!((r.blocks.at(0).rows, r.blocks.at(0).cols), ((0, 1), (0, 7)));
    let channel = analyse(
        &m,
        &Config {
            granularity: Granularity::Channel,
            ..grouped
        },
    )
    .unwrap();
    assert_eq!(r.row_codes(0), channel.row_codes(0));
    assert_eq!(r.overall, channel.overall);
    // No ladder group is shorter than 7 values except the active one.
    let ladder: Vec<Granularity> = r.ladder.iter().map(|rung| rung.granularity).collect();
    assert_eq!(
        ladder,
        [
            Granularity::Tensor,
            Granularity::Channel,
            Granularity::Group(50)
        ]
    );
    assert!(r.ladder.iter().all(|rung| rung.scales == 1));
    assert_eq!(
        r.ladder.iter().map(|rung| rung.active).collect::<Vec<_>>(),
        [false, false, true]
    );
}

#[test]
fn column_axis_channels_by_hand() {
    // ORT int8 symmetric [-127, 127]: scale = 2·absmax/254 per column.
    //   column 0: 127, -50.4, 3.6   -> scale 1, codes 127, -50, 4
    //   column 1: 0.254, 0.1, -0.2  -> scale 0.254/127 = 0.002, codes 127, 50, -100
    let m = rows(&[&[127.0, 0.254], &[-50.4, 0.1], &[3.6, -0.2]]);
    let c = Config {
        axis: Axis::Columns,
        granularity: Granularity::Channel,
        ..ort_int8()
    };
    let r = analyse(&m, &c).unwrap();
    assert_eq!(r.blocks.len(), 2);
    assert_eq!((r.blocks.at(0).rows, r.blocks.at(0).cols), ((0, 3), (0, 1)));
    assert_eq!((r.blocks.at(1).rows, r.blocks.at(1).cols), ((0, 3), (1, 2)));
    let s1 = (2.0 * f64::from(0.254f32) / 254.0) as f32;
    assert_eq!(r.blocks.at(0).scale, 1.0);
    assert_eq!(r.blocks.at(1).scale, s1);
    assert_eq!(
        [r.row_codes(0), r.row_codes(1), r.row_codes(2)],
        [[127, 127], [-50, 50], [4, -100]]
    );
    assert_eq!(r.block_index(2, 1), 1);
    assert_eq!(r.row_dequantized(1), [-50.0, 50.0 * s1]);
    // Row 1's error: 0.4 in column 0, a float rounding in column 1.
    assert!(
        (r.channels[1].metrics.mae - 0.2).abs() < 1e-5,
        "{:?}",
        r.channels[1].metrics
    );
    assert!(
        (r.channels[2].metrics.max_error - 0.4).abs() < 1e-5,
        "{:?}",
        r.channels[2].metrics
    );
    // Two blocks of an f32 scale and an 8-bit zero point.
    assert_eq!(
        (
            r.memory.payload_bytes,
            r.memory.metadata_bytes,
            r.memory.total_bytes
        ),
        (6, 10, 16)
    );
}

#[test]
fn percentile_clipping_clips_the_outlier() {
    // |x| = 0.1 .. 0.9 and 10. The 90th percentile interpolates between 0.9 and 10: 1.81.
    let row: Vec<f32> = (1..=9).map(|i| i as f32 / 10.0).chain([10.0]).collect();
    let m = rows(&[&row]);
    let clipped = analyse(
        &m,
        &Config {
            clipping: Clipping::Percentile(90.0),
            ..ort_int8()
        },
    )
    .unwrap();
    let b = clipped.blocks.at(0);
    assert!(
        (b.range.1 - 1.81).abs() < 1e-6 && b.range.0 == -b.range.1,
        "{b:?}"
    );
    assert_eq!((b.clipped, clipped.channels[0].clipped), (1, 1));
    assert_eq!(clipped.code(0, 9), 127);
    assert!(clipped.step(0, 9, 10.0).clamped);
    assert_eq!(
        clipped.row_codes(0)[..9],
        [7, 14, 21, 28, 35, 42, 49, 56, 63]
    );
    let plain = analyse(&m, &ort_int8()).unwrap();
    assert_eq!(
        (plain.blocks.at(0).clipped, plain.channels[0].clipped),
        (0, 0)
    );
    let all = analyse(
        &m,
        &Config {
            clipping: Clipping::Percentile(100.0),
            ..ort_int8()
        },
    )
    .unwrap();
    assert_eq!(all.blocks.at(0).scale, plain.blocks.at(0).scale);
    assert_eq!(all.blocks.at(0).clipped, 0);
}

#[test]
fn mse_clipping_beats_min_max_on_a_spread_row() {
    // Forty values crowded around zero: ±(k/20)^3 for k = 1..=20, a heavy-tailed shape.
    let row: Vec<f32> = (1..=20)
        .flat_map(|k| [1.0, -1.0].map(|s| s * (k as f32 / 20.0).powi(3)))
        .collect();
    let m = rows(&[&row, &row.iter().map(|x| x * 1e-3).collect::<Vec<_>>()]);
    for name in [
        "ort-int4",
        "ort-int8",
        "int4-g128",
        "q4_0",
        "q4_1",
        "torch-quint8",
        "calculator",
    ] {
        let base = preset(name, PresetOptions::default()).unwrap();
        let none = analyse(
            &m,
            &Config {
                clipping: Clipping::None,
                ..base
            },
        )
        .unwrap();
        let mse = analyse(
            &m,
            &Config {
                clipping: Clipping::Mse,
                ..base
            },
        )
        .unwrap();
        for (a, b) in block_sse(&m, &mse).iter().zip(block_sse(&m, &none)) {
            assert!(*a <= b, "{name}: {a} > {b}");
        }
    }
    // Symmetric int4: shrinking the range to 0.94 cuts the squared error by a quarter.
    let base = preset("ort-int4", PresetOptions::default()).unwrap();
    let none = block_sse(&m, &analyse(&m, &base).unwrap())[0];
    let mse = analyse(
        &m,
        &Config {
            clipping: Clipping::Mse,
            ..base
        },
    )
    .unwrap();
    assert!(block_sse(&m, &mse)[0] < 0.8 * none);
    assert!(mse.blocks.at(0).range.1 < 1.0);
}

#[test]
fn a_row_spanning_the_code_range_has_utilization_one() {
    // Asymmetric uint8 [0, 255] on [0, 255]: the scale is exactly 1, 0 -> 0 and 255 -> 255.
    let m = rows(&[&[0.0, 100.0, 255.0], &[-1.0, 0.25, 1.0], &[0.5, 0.5, 0.5]]);
    let asym = analyse(&m, &preset("ort-uint8", PresetOptions::default()).unwrap()).unwrap();
    assert_eq!(asym.row_codes(0), [0, 100, 255]);
    assert_eq!(
        (asym.channels[0].min_code, asym.channels[0].max_code),
        (0, 255)
    );
    assert_eq!(asym.channels[0].utilization, 1.0);
    // Symmetric narrow int8 [-127, 127]: ±1 -> ±127.
    let sym = analyse(&m, &ort_int8()).unwrap();
    assert_eq!(
        (sym.channels[1].min_code, sym.channels[1].max_code),
        (-127, 127)
    );
    assert_eq!(sym.channels[1].utilization, 1.0);
    // Half of it for a one-signed row, none for a constant one (every code is 127).
    assert_eq!(sym.channels[0].utilization, 0.5);
    assert_eq!(sym.channels[2].utilization, 0.0);
}

#[test]
fn a_constant_row_is_not_collapsed() {
    let m = rows(&[
        &[0.5; 4],
        &[0.0; 4],
        &[0.001, -0.002, 0.003, 0.0],
        &[1.0, -2.0, 3.0, -4.0],
    ]);
    for name in [
        "lesson",
        "ort-int8",
        "ort-uint8",
        "torch-quint8",
        "q4_0",
        "q4_1",
        "calculator",
    ] {
        for granularity in [
            Granularity::Tensor,
            Granularity::Channel,
            Granularity::Group(2),
        ] {
            let c = Config {
                granularity,
                ..preset(name, PresetOptions::default()).unwrap()
            };
            let r = analyse(&m, &c).unwrap();
            for ch in &r.channels[..2] {
                assert!(ch.constant && !ch.collapsed, "{name} {granularity}: {ch:?}");
            }
            assert!(!r.channels[2].constant && !r.channels[3].constant);
        }
    }
    // For contrast: per tensor at int4, the quiet non-constant row does collapse to one code.
    let lesson = analyse(&m, &preset("lesson", PresetOptions::default()).unwrap()).unwrap();
    assert!(lesson.channels[2].collapsed);
    assert_eq!(lesson.collapsed_channels, 1);
}

// ---------------------------------------------------------------------------------------------
// Corners that were bugs: finite input that overflowed a storage type or the arithmetic
// ---------------------------------------------------------------------------------------------

/// Analyses `m` expecting no panic and either a report whose metrics are all finite or a
/// per-block error; returns the report, if any.
fn finite_or_block_error(m: &Matrix, c: &Config) -> Option<Report> {
    let outcome = std::panic::catch_unwind(|| analyse(m, c));
    match outcome.unwrap_or_else(|_| panic!("analyse panicked on {:?}", m.values())) {
        Ok(r) => {
            let mut all = vec![r.overall];
            all.extend(r.channels.iter().map(|ch| ch.metrics));
            all.extend(r.ladder.iter().map(|rung| rung.overall));
            for x in all {
                assert!(
                    x.mae.is_finite() && x.rmse.is_finite() && x.max_error.is_finite(),
                    "{x:?}"
                );
            }
            for b in &r.blocks {
                assert!(
                    b.scale.is_finite() && b.offset.is_none_or(f32::is_finite),
                    "{b:?}"
                );
            }
            Some(r)
        }
        Err(AnalyseError::Block { .. }) => None,
        Err(e) => panic!("unexpected error {e:?}"),
    }
}

#[test]
fn an_f16_scale_or_offset_beyond_65504_is_not_stored_as_infinity() {
    // ORT int8 with the scale stored as f16: 1e30/127 rounds to f16 infinity, and then
    // 127·inf = inf and 0·inf = NaN. (The core used to report NaN metrics; it now reports
    // the block.)
    let m = rows(&[&[1e30, -1e30, 0.0]]);
    let c = Config {
        scale_dtype: ScaleDtype::F16,
        ..ort_int8()
    };
    finite_or_block_error(&m, &c);
    // GGUF Q4_1 stores the block minimum as f16: -1e5 would be -inf although the scale
    // (1e5/15) fits.
    let m = rows(&[&[-1e5, 0.0, 1.0]]);
    finite_or_block_error(&m, &preset("q4_1", PresetOptions::default()).unwrap());
}

#[test]
fn values_near_f32_max_do_not_overflow_the_scale_into_nan() {
    // PyTorch's asymmetric scale (max - min) / 255 in f32: 3e38 - (-3e38) = inf, then
    // 1/inf = 0 and 0·inf = NaN. Finite input, valid configuration.
    let m = rows(&[&[3e38, -3e38, 0.0]]);
    finite_or_block_error(
        &m,
        &preset("torch-quint8", PresetOptions::default()).unwrap(),
    );
}

#[test]
fn an_unclamped_zero_point_beyond_i32_does_not_overflow() {
    // The calculator preset does not clamp the zero point.
    let calculator = preset("calculator", PresetOptions::default()).unwrap();
    // A tight range of one ulp at 1.5: s = 1.19e-7 / 255, z = round(-128 - 1.5 / s) ≈ -3.2e9,
    // beyond i32. The core used to saturate it to i32::MIN and then panic in debug builds
    // ("attempt to subtract with overflow" in `Quantizer::dequantize`), or report an error
    // of 2.5 on values of 1.5 in release builds.
    let m = rows(&[&[1.5, 1.500_000_1]]);
    if let Some(r) = finite_or_block_error(&m, &calculator) {
        assert!(
            r.overall.max_error < 1e-6,
            "{:?} {:?}",
            r.overall,
            r.blocks.at(0)
        );
    }
    // Any one-element block is constant; under the epsilon policy its scale is 2^-23, so
    // z = -128 - 853 · 2^23 ≈ -7.2e9: the same overflow, from an ordinary value.
    let epsilon = Config {
        conventions: Conventions {
            degenerate: Degenerate::Epsilon,
            ..calculator.conventions
        },
        ..calculator
    };
    if let Some(r) = finite_or_block_error(&rows(&[&[853.1]]), &epsilon) {
        assert!(
            r.overall.max_error <= 1e-4,
            "{:?} {:?}",
            r.overall,
            r.blocks.at(0)
        );
    }
}

#[test]
fn a_subnormal_scale_maps_zero_to_the_zero_point_under_the_safe_rule() {
    // MLAS-style uint4 asymmetric with the zero-scale policy: the range [-1e-40, 0] gives
    // s = 1e-40 / 15, a subnormal kept as is, and 1/s = inf. The value 0 gives 0 · inf = NaN.
    // MLAS itself turns it into code 0, reconstructing it as -1e-40 (the int4-g128 preset
    // does the same; tests/golden/int4-g128_*_g32_tiny.json); the safe rule gives it the
    // zero point 15, which reconstructs it exactly.
    let mlas = preset("int4-g128", PresetOptions::default()).unwrap();
    let m = rows(&[&[-1e-40, 0.0]]);
    let r = analyse(&m, &mlas).unwrap();
    assert_eq!(r.blocks.at(0).zero_point, 15);
    assert_eq!(r.code(0, 1), 0, "{:?}", r.step(0, 1, 0.0));
    let c = Config {
        conventions: Conventions {
            non_finite: NonFinite::ZeroPoint,
            ..mlas.conventions
        },
        ..mlas
    };
    let r = analyse(&m, &c).unwrap();
    assert_eq!(r.code(0, 1), 15, "{:?}", r.step(0, 1, 0.0));
    assert_eq!(r.dequantized(0, 1), 0.0);
    // With a custom range that excludes 0, the NaN code 0 lay outside [qmin, qmax] and the
    // level counter indexed out of bounds (a panic in analyse.rs).
    let custom = Config {
        range: RangeKind::Custom { qmin: 1, qmax: 14 },
        ..c
    };
    let r = finite_or_block_error(&rows(&[&[1e-40, 0.0]]), &custom);
    if let Some(r) = r {
        assert!((1..=14).contains(&r.code(0, 1)));
    }
}

#[test]
fn the_epsilon_policy_keeps_negative_signed_extreme_scales() {
    // PyTorch conventions with the GGUF/MLAS signed-extreme scale: the extreme 1.0 maps to
    // qmin = -128, so s = 1 / -128. The epsilon floor used to test `raw < eps`, true for every
    // negative scale, so the block was called degenerate, got s = 2^-23 and every value
    // clamped.
    let torch = preset("torch-qint8", PresetOptions::default()).unwrap();
    let c = Config {
        conventions: Conventions {
            sym_scale: SymScale::SignedExtreme,
            ..torch.conventions
        },
        ..torch
    };
    let r = analyse(&rows(&[&[1.0, -0.5, 0.25]]), &c).unwrap();
    let b = r.blocks.at(0);
    assert!(!b.degenerate, "{b:?}");
    assert_eq!(b.scale, -1.0 / 128.0);
    assert_eq!(r.row_codes(0), [-128, 64, -32]);
    assert_eq!(b.clipped, 0);
}

#[test]
fn column_channels_take_their_place_in_the_ladder_by_scale_count() {
    // One row of 40 values, channels along columns: 40 scales, more than group:32 (2 scales)
    // and group:8 (5). The ladder used to list channel second regardless.
    let m = rows(&[&[0.5; 40]]);
    let r = analyse(
        &m,
        &Config {
            axis: Axis::Columns,
            ..ort_int8()
        },
    )
    .unwrap();
    let order: Vec<(Granularity, u64)> = r
        .ladder
        .iter()
        .map(|rung| (rung.granularity, rung.scales))
        .collect();
    assert!(order.windows(2).all(|w| w[0].1 <= w[1].1), "{order:?}");
    assert_eq!(order.last(), Some(&(Granularity::Channel, 40)));
}

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
