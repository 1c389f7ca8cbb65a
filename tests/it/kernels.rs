//! The optimised analysis against a straightforward reference, on random configurations.
//!
//! `reference` below is the analysis as it was first written: one statistics pass over each
//! block's values in row-major order ([`BlockStats::push`]), [`block_params`] with the same
//! clipping search, then [`Quantizer::code`] and [`Quantizer::dequantize`] value by value,
//! with errors summed in `f64` one value after another. The optimised core (specialised
//! vectorised loops, row-parallel passes, fused ladder) must give the same block parameters,
//! statistics, codes, reconstructions, clamp counts, levels and extremes, bit for bit, and
//! the same metrics up to summation order (relative 1e-12), at every rung of the ladder, and
//! refuse the same block for the same reason. It must also not depend on the number of
//! threads.

use ndarray::Array2;
use proptest::prelude::*;
use quantscope::core::clip::{Scratch, clipped_params_in};
use quantscope::core::config::{
    Arith, AsymZeroPoint, Axis, Clipping, CodeClamp, Config, Degenerate, NonFinite, QuantExpr,
    RangeKind, RangeSource, Rounding, ScaleDtype, SymScale, SymZeroPoint,
};
use quantscope::core::kernel::Quantizer;
use quantscope::core::params::{BlockParams, BlockStats, RealRange, block_params};
use quantscope::core::{
    AnalyseError, Granularity, Matrix, Options, PRESETS, PresetOptions, Report, Scheme,
    analyse_with, ladder_granularities, preset,
};

use crate::common::core as core_helpers;

use core_helpers::ConventionOverrides;

// ---------------------------------------------------------------------------------------------
// The reference
// ---------------------------------------------------------------------------------------------

/// A block: rows and columns `[start, end)`.
type Rect = ((usize, usize), (usize, usize));

fn rects(g: Granularity, axis: Axis, rows: usize, cols: usize) -> Vec<Rect> {
    match (g, axis) {
        (Granularity::Tensor, _) => vec![((0, rows), (0, cols))],
        (Granularity::Channel, Axis::Rows) => (0..rows).map(|r| ((r, r + 1), (0, cols))).collect(),
        (Granularity::Channel, Axis::Columns) => {
            (0..cols).map(|c| ((0, rows), (c, c + 1))).collect()
        }
        (Granularity::Group(size), _) => (0..rows)
            .flat_map(|r| {
                (0..cols)
                    .step_by(size)
                    .map(move |c| ((r, r + 1), (c, (c + size).min(cols))))
            })
            .collect(),
    }
}

fn values(m: &Matrix, rect: Rect) -> Vec<f32> {
    let v = m.values();
    let mut out = Vec::new();
    for r in rect.0.0..rect.0.1 {
        for c in rect.1.0..rect.1.1 {
            out.push(v[(r, c)]);
        }
    }
    out
}

/// numpy's linear-interpolated quantile of fully sorted values.
fn sorted_quantile(sorted: &[f32], q: f64) -> f32 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let j = (i + 1).min(sorted.len() - 1);
    let frac = pos - i as f64;
    (f64::from(sorted[i]) + (f64::from(sorted[j]) - f64::from(sorted[i])) * frac) as f32
}

/// The clipping searches as first written, for a block whose values are `xs`: percentile
/// clipping sorts a copy of the values (magnitudes when symmetric) and interpolates; the
/// MSE search quantizes the whole block under each candidate in turn, summing its squared
/// errors value by value, and keeps the first with the least sum. `form` forms a range's
/// parameters; codes are clamped into `[lo, hi]`.
fn reference_clipping(
    c: &Config,
    xs: &[f32],
    st: &BlockStats,
    (lo, hi): (i32, i32),
    form: impl Fn(RealRange) -> BlockParams,
) -> BlockParams {
    let full = RealRange::of(st);
    match c.clipping {
        Clipping::None => form(full),
        Clipping::Percentile(p) => {
            let range = if c.scheme == Scheme::Symmetric {
                let mut buf: Vec<f32> = xs.iter().map(|x| x.abs()).collect();
                buf.sort_by(f32::total_cmp);
                let t = sorted_quantile(&buf, p / 100.0);
                RealRange {
                    lo: -t,
                    hi: t,
                    extreme: if full.extreme < 0.0 { -t } else { t },
                }
            } else {
                let mut buf = xs.to_vec();
                buf.sort_by(f32::total_cmp);
                let l = sorted_quantile(&buf, (100.0 - p) / 200.0);
                let h = sorted_quantile(&buf, (100.0 + p) / 200.0);
                RealRange {
                    lo: l,
                    hi: h,
                    extreme: if full.extreme < 0.0 { l } else { h },
                }
            };
            form(range)
        }
        Clipping::Mse => {
            let sums = candidate_sse(c, xs, full, (lo, hi), &form);
            let mut best = form(full);
            let mut best_sse = f64::INFINITY;
            for (k, &sse) in sums.iter().enumerate() {
                if sse < best_sse {
                    best_sse = sse;
                    best = form(full.shrunk(alpha(k)));
                }
            }
            best
        }
    }
}

/// The MSE search's shrink factor of candidate `k` (1, 0.98, ... 0.2).
fn alpha(k: usize) -> f32 {
    1.0 - f32::from(k as u8) * 0.02
}

/// Every candidate's squared error of `run` (a block of its own under `c`), and the least.
fn run_sse(c: &Config, run: &[f32]) -> (Vec<f64>, f64) {
    let mut st = BlockStats::EMPTY;
    st.extend(run);
    let (qmin, qmax) = c.code_range();
    let form = |range| block_params(c, range, qmin, qmax);
    let sums = candidate_sse(c, run, RealRange::of(&st), c.clamp_range(), form);
    let least = sums.iter().copied().fold(f64::INFINITY, f64::min);
    (sums.into_iter().collect(), least)
}

/// Each MSE candidate's squared error over `xs`, summed value by value in `f64`.
fn candidate_sse(
    c: &Config,
    xs: &[f32],
    full: RealRange,
    (lo, hi): (i32, i32),
    form: impl Fn(RealRange) -> BlockParams,
) -> Vec<f64> {
    (0..=40)
        .map(|k| {
            let q = Quantizer::new(c, &form(full.shrunk(alpha(k))), lo, hi);
            let mut sse = 0.0f64;
            for &x in xs {
                let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                sse += e * e;
            }
            sse
        })
        .collect()
}

/// The clipped parameters of a block, one block at a time: the scale is formed for
/// the code range, the MSE search's codes are clamped into the clamp range.
fn choose(c: &Config, xs: &[f32], st: &BlockStats) -> BlockParams {
    let (qmin, qmax) = c.code_range();
    reference_clipping(c, xs, st, c.clamp_range(), |range| {
        block_params(c, range, qmin, qmax)
    })
}

/// Sequential `f64` sums of one row: Σ|e|, Σe², max |e|, Σx².
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    abs: f64,
    sq: f64,
    max: f64,
    signal: f64,
}

#[derive(Debug)]
struct RefBlock {
    rect: Rect,
    params: BlockParams,
    stats: BlockStats,
    clipped: usize,
}

#[derive(Debug, Default)]
struct RefRow {
    /// Every block the row touches stores a zero scale with one offset: the row
    /// reconstructs to one value whatever its codes.
    flat: bool,
    sums: Sums,
    codes: Vec<i32>,
    dequantized: Vec<f32>,
    clipped: usize,
    min: f32,
    max: f32,
}

#[derive(Debug)]
struct Reference {
    blocks: Vec<RefBlock>,
    rows: Vec<RefRow>,
}

/// The analysis at one granularity, or the first block that cannot be quantized.
fn reference(m: &Matrix, c: &Config, g: Granularity) -> Result<Reference, usize> {
    let (rows, cols) = m.shape();
    let (lo, hi) = c.clamp_range();
    let rects = rects(g, c.axis, rows, cols);
    let mut blocks = Vec::new();
    for &rect in &rects {
        let xs = values(m, rect);
        let mut stats = BlockStats::EMPTY;
        for &x in &xs {
            stats.push(x);
        }
        let params = choose(c, &xs, &stats);
        blocks.push(RefBlock {
            rect,
            params,
            stats,
            clipped: 0,
        });
    }
    if let Some(b) = blocks.iter().position(|b| b.params.problem.is_some()) {
        return Err(b);
    }
    let v = m.values();
    let mut out = Vec::new();
    for r in 0..rows {
        let mut touched = blocks
            .iter()
            .filter(|b| (b.rect.0.0..b.rect.0.1).contains(&r));
        let first = touched.clone().next().map(|b| b.params.offset);
        let mut row = RefRow {
            flat: touched.all(|b| b.params.scale == 0.0 && Some(b.params.offset) == first),
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            ..RefRow::default()
        };
        for col in 0..cols {
            let b = match (g, c.axis) {
                (Granularity::Tensor, _) => 0,
                (Granularity::Channel, Axis::Rows) => r,
                (Granularity::Channel, Axis::Columns) => col,
                (Granularity::Group(size), _) => r * cols.div_ceil(size) + col / size,
            };
            let q = Quantizer::new(c, &blocks[b].params, lo, hi);
            let x = v[(r, col)];
            let (code, clamped) = q.code(x);
            let x_hat = q.dequantize(code);
            blocks[b].clipped += usize::from(clamped);
            row.clipped += usize::from(clamped);
            row.codes.push(code);
            row.dequantized.push(x_hat);
            row.min = row.min.min(x);
            row.max = row.max.max(x);
            let e = f64::from(x_hat) - f64::from(x);
            row.sums.abs += e.abs();
            row.sums.sq += e * e;
            if e.abs() > row.sums.max {
                row.sums.max = e.abs();
            }
            row.sums.signal += f64::from(x) * f64::from(x);
        }
        out.push(row);
    }
    Ok(Reference { blocks, rows: out })
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

fn check_metrics(
    what: &str,
    got: &quantscope::core::Metrics,
    sums: &Sums,
    n: usize,
) -> Result<(), TestCaseError> {
    let n = n as f64;
    prop_assert!(
        close(got.mae, sums.abs / n),
        "{what}: mae {} vs {}",
        got.mae,
        sums.abs / n
    );
    let rmse = (sums.sq / n).sqrt();
    prop_assert!(close(got.rmse, rmse), "{what}: rmse {} vs {rmse}", got.rmse);
    prop_assert_eq!(got.max_error, sums.max, "{}: max error", what);
    let sqnr = (sums.sq > 0.0 && sums.signal > 0.0).then(|| 10.0 * (sums.signal / sums.sq).log10());
    match (got.sqnr_db, sqnr) {
        (Some(a), Some(b)) => prop_assert!((a - b).abs() <= 1e-9, "{what}: sqnr {a} vs {b}"),
        (a, b) => prop_assert_eq!(
            a.is_some(),
            b.is_some(),
            "{}: sqnr {:?} vs {:?}",
            what,
            a,
            b
        ),
    }
    Ok(())
}

fn total(rows: &[RefRow]) -> Sums {
    rows.iter().fold(Sums::default(), |t, r| Sums {
        abs: t.abs + r.sums.abs,
        sq: t.sq + r.sums.sq,
        max: t.max.max(r.sums.max),
        signal: t.signal + r.sums.signal,
    })
}

/// A row whose values differ but whose codes are one code, or whose blocks all store a zero
/// scale with one offset (it reconstructs to one value).
fn collapsed(row: &RefRow) -> bool {
    let lo = row.codes.iter().min();
    row.min != row.max && (lo == row.codes.iter().max() || row.flat)
}

fn check(m: &Matrix, c: &Config) -> Result<(), TestCaseError> {
    let (rows, cols) = m.shape();
    let got = analyse_with(
        m,
        c,
        Options {
            ladder: true,
            keep_codes: true,
        },
    );
    // The active granularity first, then the ladder in order: the first refusal wins.
    let mut grans = vec![c.granularity];
    grans.extend(
        ladder_granularities(c.granularity, cols)
            .into_iter()
            .filter(|&g| g != c.granularity),
    );
    let mut refs = Vec::new();
    for &g in &grans {
        match reference(m, c, g) {
            Ok(r) => refs.push(r),
            Err(block) => {
                let Err(AnalyseError::Block { block: b, .. }) = got else {
                    return Err(TestCaseError::fail(format!(
                        "{g}: the reference refuses block {block}, the core gives {got:?}"
                    )));
                };
                prop_assert_eq!(b, block, "{}: refused block", g);
                return Ok(());
            }
        }
    }
    let report = got.map_err(|e| TestCaseError::fail(format!("core refuses: {e}")))?;
    check_active(&report, &refs[0])?;
    // Without `keep_codes` a report recomputes each code on request: the same codes.
    let derived = analyse_with(m, c, Options::ONE_CONFIG)
        .map_err(|e| TestCaseError::fail(format!("core refuses without kept codes: {e}")))?;
    prop_assert_eq!(&derived.channels, &report.channels);
    for r in 0..rows {
        prop_assert_eq!(derived.row_codes(r), report.row_codes(r), "row {}", r);
    }
    for (&g, want) in grans.iter().zip(&refs) {
        let rung = report
            .rung(g)
            .ok_or_else(|| TestCaseError::fail(format!("no rung {g}")))?;
        prop_assert_eq!(rung.scales, want.blocks.len() as u64);
        check_metrics(
            &format!("rung {g}"),
            &rung.overall,
            &total(&want.rows),
            rows * cols,
        )?;
        for (r, (got, want)) in rung.channels.iter().zip(&want.rows).enumerate() {
            check_metrics(&format!("rung {g} row {r}"), got, &want.sums, cols)?;
        }
        let want_collapsed = want.rows.iter().filter(|r| collapsed(r)).count();
        prop_assert_eq!(rung.collapsed_channels, want_collapsed, "rung {}", g);
    }
    Ok(())
}

fn check_active(report: &Report, want: &Reference) -> Result<(), TestCaseError> {
    let (rows, cols) = report.shape;
    prop_assert_eq!(report.blocks.len(), want.blocks.len());
    for (i, (b, w)) in report.blocks.iter().zip(&want.blocks).enumerate() {
        let p = &w.params;
        prop_assert_eq!((b.rows, b.cols), w.rect, "block {}", i);
        prop_assert_eq!(b.scale.to_bits(), p.scale.to_bits(), "block {} scale", i);
        prop_assert_eq!(
            b.code_scale.to_bits(),
            p.code_scale.to_bits(),
            "block {}",
            i
        );
        prop_assert_eq!(b.zero_point, p.zero_point, "block {} zero point", i);
        prop_assert_eq!(
            b.offset.map(f32::to_bits),
            p.offset.map(f32::to_bits),
            "block {}",
            i
        );
        prop_assert_eq!(b.min.to_bits(), w.stats.min.to_bits(), "block {} min", i);
        prop_assert_eq!(b.max.to_bits(), w.stats.max.to_bits(), "block {} max", i);
        prop_assert_eq!(b.range.0.to_bits(), p.range.0.to_bits(), "block {}", i);
        prop_assert_eq!(b.range.1.to_bits(), p.range.1.to_bits(), "block {}", i);
        prop_assert_eq!(b.clipped, w.clipped, "block {} clipped", i);
        prop_assert_eq!(b.degenerate, p.degenerate, "block {}", i);
    }
    let span = f64::from(report.qmax - report.qmin);
    for (r, (ch, w)) in report.channels.iter().zip(&want.rows).enumerate() {
        for col in 0..cols {
            prop_assert_eq!(report.code(r, col), w.codes[col], "code ({}, {})", r, col);
            prop_assert_eq!(
                report.dequantized(r, col).to_bits(),
                w.dequantized[col].to_bits(),
                "reconstruction ({}, {})",
                r,
                col
            );
        }
        check_metrics(&format!("row {r}"), &ch.metrics, &w.sums, cols)?;
        let mut distinct = w.codes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let (lo, hi) = (distinct[0], distinct[distinct.len() - 1]);
        prop_assert_eq!(ch.levels_used, distinct.len() as u32, "row {} levels", r);
        prop_assert_eq!((ch.min_code, ch.max_code), (lo, hi), "row {} code range", r);
        prop_assert_eq!(ch.utilization, f64::from(hi - lo) / span, "row {}", r);
        prop_assert_eq!(ch.clipped, w.clipped, "row {} clipped", r);
        prop_assert_eq!(ch.min.to_bits(), w.min.to_bits(), "row {} min", r);
        prop_assert_eq!(ch.max.to_bits(), w.max.to_bits(), "row {} max", r);
        prop_assert_eq!(ch.constant, w.min == w.max, "row {}", r);
        prop_assert_eq!(ch.collapsed, collapsed(w), "row {} collapsed", r);
    }
    check_metrics("overall", &report.overall, &total(&want.rows), rows * cols)?;
    let want_collapsed = want.rows.iter().filter(|r| collapsed(r)).count();
    prop_assert_eq!(report.collapsed_channels, want_collapsed);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Values that make ties (quarters of a power of two), zeros of both signs, ordinary and
/// extreme magnitudes, and rows of one magnitude.
fn value(unit: f32) -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => (-40i32..40).prop_map(move |k| k as f32 * 0.25 * unit),
        4 => (-1.0f32..1.0).prop_map(move |x| x * unit),
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => prop::sample::select(vec![1e-41f32, -1e-38, 1e-30, 3e4, -7e4, 1e30]),
    ]
}

fn matrix() -> impl Strategy<Value = Matrix> {
    (1..=6usize, 1..=70usize, -20i32..20)
        .prop_flat_map(|(rows, cols, exp)| rows_of(rows, cols, exp))
}

/// `rows` rows of `cols` values on the scale `2^exp`.
fn rows_of(rows: usize, cols: usize, exp: i32) -> impl Strategy<Value = Matrix> {
    let unit = 2f32.powi(exp);
    prop::collection::vec(prop::collection::vec(value(unit), cols), rows).prop_map(move |data| {
        let flat: Vec<f32> = data.into_iter().flatten().collect();
        Matrix::new(Array2::from_shape_vec((rows, cols), flat).expect("shape")).expect("finite")
    })
}

/// Overrides of a preset's fields: preset index, scheme, (bits, signed), range, range
/// source, rounding, granularity, axis, clipping, scale dtype.
type Fields = (
    usize,
    Option<Scheme>,
    Option<(u8, bool)>,
    Option<RangeKind>,
    Option<RangeSource>,
    Option<Rounding>,
    Granularity,
    Axis,
    Clipping,
    Option<ScaleDtype>,
);

fn fields() -> impl Strategy<Value = Fields> {
    (
        0..PRESETS.len(),
        prop::option::of(prop_oneof![
            Just(Scheme::Symmetric),
            Just(Scheme::Asymmetric)
        ]),
        prop::option::of((1u8..=16, any::<bool>())),
        prop_oneof![
            3 => Just(None),
            1 => Just(Some(RangeKind::Full)),
            1 => Just(Some(RangeKind::Narrow)),
        ],
        prop::option::of(prop_oneof![
            Just(RangeSource::Tight),
            Just(RangeSource::IncludeZero)
        ]),
        prop::option::of(prop_oneof![
            Just(Rounding::HalfEven),
            Just(Rounding::HalfAway),
            Just(Rounding::HalfUp)
        ]),
        prop_oneof![
            Just(Granularity::Tensor),
            Just(Granularity::Channel),
            (1usize..40).prop_map(Granularity::Group),
        ],
        prop_oneof![4 => Just(Axis::Rows), 1 => Just(Axis::Columns)],
        prop_oneof![
            6 => Just(Clipping::None),
            1 => (50.0f64..100.0).prop_map(Clipping::Percentile),
            1 => Just(Clipping::Mse),
        ],
        prop::option::of(prop_oneof![
            Just(ScaleDtype::F32),
            Just(ScaleDtype::F16),
            Just(ScaleDtype::Bf16)
        ]),
    )
}

fn conventions() -> impl Strategy<Value = ConventionOverrides> {
    (
        prop::option::of(prop_oneof![
            Just(SymScale::MaxCode),
            Just(SymScale::HalfSpan),
            Just(SymScale::SignedExtreme),
            Just(SymScale::SignedMinMax)
        ]),
        prop::option::of(prop_oneof![
            Just(SymZeroPoint::Zero),
            Just(SymZeroPoint::MidHalfEven),
            Just(SymZeroPoint::MidFloor)
        ]),
        prop::option::of(prop_oneof![
            Just(AsymZeroPoint::RoundOfShift),
            Just(AsymZeroPoint::ShiftOfRound),
            Just(AsymZeroPoint::FloatMin)
        ]),
        prop::option::of(any::<bool>()),
        prop::option::of(prop_oneof![
            Just(QuantExpr::Divide),
            Just(QuantExpr::Reciprocal),
            Just(QuantExpr::ReciprocalAddZero)
        ]),
        prop::option::of(prop_oneof![Just(Arith::F64), Just(Arith::F32)]),
        prop::option::of(prop_oneof![
            Just(Degenerate::One),
            Just(Degenerate::Flat),
            Just(Degenerate::Epsilon),
            Just(Degenerate::Zero)
        ]),
        prop::option::of(prop_oneof![Just(CodeClamp::Range), Just(CodeClamp::Type)]),
        prop::option::of(prop_oneof![
            Just(NonFinite::ZeroPoint),
            Just(NonFinite::NanToZero),
            Just(NonFinite::Zero)
        ]),
    )
}

fn config() -> impl Strategy<Value = Config> {
    (fields(), conventions())
        .prop_map(|(f, v)| {
            let (i, scheme, bits, range, source, rounding, granularity, axis, clipping, dtype) = f;
            let mut c = preset(PRESETS[i].name, PresetOptions::default()).expect("preset");
            if let Some(s) = scheme {
                c.scheme = s;
            }
            if let Some((b, signed)) = bits {
                c.bits = b;
                c.signed = signed;
            }
            if let Some(r) = range {
                c.range = r;
            }
            if matches!(c.range, RangeKind::Custom { .. }) && bits.is_some() {
                c.range = RangeKind::Full;
            }
            c.range_source = source.unwrap_or(c.range_source);
            c.rounding = rounding.unwrap_or(c.rounding);
            c.granularity = granularity;
            c.axis = axis;
            c.clipping = clipping;
            c.scale_dtype = dtype.unwrap_or(c.scale_dtype);
            let k = &mut c.conventions;
            k.sym_scale = v.0.unwrap_or(k.sym_scale);
            k.sym_zero_point = v.1.unwrap_or(k.sym_zero_point);
            k.asym_zero_point = v.2.unwrap_or(k.asym_zero_point);
            k.clamp_zero_point = v.3.unwrap_or(k.clamp_zero_point);
            k.quant_expr = v.4.unwrap_or(k.quant_expr);
            k.arith = v.5.unwrap_or(k.arith);
            k.degenerate = v.6.unwrap_or(k.degenerate);
            k.code_clamp = v.7.unwrap_or(k.code_clamp);
            k.non_finite = v.8.unwrap_or(k.non_finite);
            c
        })
        .prop_filter("a valid configuration", |c| c.validate().is_ok())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Every configuration, every rung: the optimised analysis is the reference's.
    #[test]
    fn the_optimised_analysis_is_the_reference(c in config(), m in matrix()) {
        check(&m, &c)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Larger matrices: several parallel tasks, long rows, every preset
// ---------------------------------------------------------------------------------------------

/// A `rows x cols` matrix of normal-ish rows whose scales differ, with some exact ties,
/// zeros and a constant row (a fixed-seed xorshift).
fn big(rows: usize, cols: usize, seed: u64) -> Matrix {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut flat = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let scale = 10f32.powf(-3.0 * next());
        for c in 0..cols {
            let u = next() + next() + next() - 1.5;
            let x = match (r % 7, c % 11) {
                (3, _) => 0.25,
                (5, 0) => 0.0,
                (6, _) => (u * 16.0).round() / 8.0,
                _ => u * scale,
            };
            flat.push(x);
        }
    }
    Matrix::new(Array2::from_shape_vec((rows, cols), flat).expect("shape")).expect("finite")
}

#[test]
fn every_preset_matches_the_reference_on_a_matrix_split_into_tasks() {
    let m = big(70, 1030, 7);
    for p in PRESETS {
        let c = preset(p.name, PresetOptions::default()).expect("preset");
        check(&m, &c).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let g = Config {
            granularity: Granularity::Group(100),
            ..c
        };
        check(&m, &g).unwrap_or_else(|e| panic!("{} group:100: {e}", p.name));
        // Groups of whole chunks (each row's blocks prepared before the row runs), with
        // clamps counted per block under percentile clipping.
        for (size, clipping) in [(16, Clipping::None), (24, Clipping::Percentile(90.0))] {
            let g = Config {
                granularity: Granularity::Group(size),
                clipping,
                ..c
            };
            check(&m, &g).unwrap_or_else(|e| panic!("{} group:{size}: {e}", p.name));
        }
    }
    let columns = Config {
        axis: Axis::Columns,
        ..preset("ort-int8", PresetOptions::default()).expect("preset")
    };
    check(&m, &columns).unwrap_or_else(|e| panic!("columns: {e}"));
}

/// Rows long enough that every rung of 16 to 256 fills them in groups of eight, so that a
/// symmetric configuration's rungs take their blocks from the rung of half their size (a
/// constant row, exact zeros and ties among them: rows the rungs prepare on their own).
#[test]
fn nested_rungs_match_the_reference_on_wide_rows() {
    let m = big(9, 2048, 13);
    for p in PRESETS {
        let c = preset(p.name, PresetOptions::default()).expect("preset");
        if c.scheme != Scheme::Symmetric {
            continue;
        }
        check(&m, &c).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let g = Config {
            granularity: Granularity::Group(32),
            ..c
        };
        check(&m, &g).unwrap_or_else(|e| panic!("{} group:32: {e}", p.name));
    }
}

/// Symmetric configurations without clipping on rows of 128 to 2048 values (the rungs of
/// nested groups), values with ties, zeros and extremes.
fn wide_matrix() -> impl Strategy<Value = Matrix> {
    (
        1..=3usize,
        prop::sample::select(vec![128usize, 256, 384, 2048]),
        -20i32..20,
    )
        .prop_flat_map(|(rows, cols, exp)| rows_of(rows, cols, exp))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Symmetric configurations, every rung, on rows whose rungs nest.
    #[test]
    fn nested_rungs_are_the_reference(c in config(), m in wide_matrix()) {
        let c = Config { scheme: Scheme::Symmetric, clipping: Clipping::None, ..c };
        prop_assume!(c.validate().is_ok());
        check(&m, &c)?;
    }
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let m = big(300, 517, 11);
    for name in ["ort-int8", "int4-g128", "q4_1", "torch-quint8"] {
        let c = preset(name, PresetOptions::default()).expect("preset");
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool")
                .install(|| analyse_with(&m, &c, Options::default()).expect("analysis"))
        };
        let one = run(1);
        assert_eq!(one, run(2), "{name}: 1 vs 2 threads");
        assert_eq!(one, run(3), "{name}: 1 vs 3 threads");
    }
}

// ---------------------------------------------------------------------------------------------
// The clipping searches against their reference, block by block
// ---------------------------------------------------------------------------------------------

/// `c`'s clipped parameters of `xs`, from the core (with `scratch`, kept from block to block
/// by the caller) and from [`reference_clipping`].
fn both_clippings(c: &Config, xs: &[f32], scratch: &mut Scratch) -> (BlockParams, BlockParams) {
    let mut st = BlockStats::EMPTY;
    st.extend(xs);
    let (qmin, qmax) = c.code_range();
    let form = |range| block_params(c, range, qmin, qmax);
    let (lo, hi) = c.clamp_range();
    let got = clipped_params_in(scratch, c, xs, &st, lo, hi, form);
    let want = reference_clipping(c, xs, &st, (lo, hi), form);
    (got, want)
}

/// Every field of `got` and `want`, bit for bit (`Debug` spells every f32 so that it reads
/// back to the same bits, and tells -0.0 from 0.0).
fn same_params(got: &BlockParams, want: &BlockParams) -> Result<(), TestCaseError> {
    prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
    prop_assert_eq!(got.range.0.to_bits(), want.range.0.to_bits());
    prop_assert_eq!(got.range.1.to_bits(), want.range.1.to_bits());
    Ok(())
}

/// Blocks of 1 to 300 values: drawn from [`value`]'s pool (ties, zeros of both signs,
/// extreme magnitudes), a few distinct values repeated, one value repeated, or normal-ish
/// values with an outlier.
fn block() -> impl Strategy<Value = Vec<f32>> {
    (1..=300usize, -20i32..20).prop_flat_map(|(n, exp)| {
        let unit = 2f32.powi(exp);
        prop_oneof![
            3 => prop::collection::vec(value(unit), n),
            2 => (prop::collection::vec(value(unit), 1..=4), prop::collection::vec(any::<prop::sample::Index>(), n))
                .prop_map(|(pool, picks)| picks.iter().map(|i| *i.get(&pool)).collect()),
            1 => value(unit).prop_map(move |x| vec![x; n]),
            2 => (prop::collection::vec(-1.0f32..1.0, n), 0..n, 1.0f32..1e3).prop_map(move |(mut xs, at, big)| {
                for x in &mut xs {
                    *x = *x * x.abs() * unit;
                }
                xs[at] = big * unit;
                xs
            }),
        ]
    })
}

/// Percentiles near 100 (where few values lie beyond the quantile), anywhere in (0, 100],
/// and the MSE search.
fn clipping() -> impl Strategy<Value = Clipping> {
    prop_oneof![
        2 => prop::sample::select(vec![99.9, 100.0, 99.99, 99.0, 95.0, 90.0])
            .prop_map(Clipping::Percentile),
        2 => (50.0f64..=100.0).prop_map(Clipping::Percentile),
        1 => (0.001f64..50.0).prop_map(Clipping::Percentile),
        2 => Just(Clipping::Mse),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// The clipping searches choose the reference's range and parameters, bit for bit, on
    /// every configuration; one scratch serves every block in turn.
    #[test]
    fn clipping_searches_are_their_reference(
        c in config(),
        clip in clipping(),
        blocks in prop::collection::vec(block(), 1..4),
    ) {
        let c = Config { clipping: clip, ..c };
        let mut scratch = Scratch::default();
        for xs in &blocks {
            let (got, want) = both_clippings(&c, xs, &mut scratch);
            same_params(&got, &want)?;
        }
    }
}

/// A fixed-seed xorshift's values: normal-ish, scaled by `spread`.
fn noise(n: usize, seed: u64, spread: f32) -> Vec<f32> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| (next() + next() + next() - 1.5) * spread)
        .collect()
}

/// Every preset at 3, 4 and 8 bits (where valid) with MSE clipping, the full range and
/// PyTorch's degenerate rule (a scale below 2^-23 raised to 2^-23), with the preset's index
/// and name, and about the magnitude at which a block's min-max scale reaches that floor.
fn near_floor_configs() -> Vec<(usize, &'static str, Config, f32)> {
    let mut out = Vec::new();
    for (i, p) in PRESETS.iter().enumerate() {
        let base = preset(p.name, PresetOptions::default()).expect("preset");
        for bits in [3u8, 4, 8] {
            let mut c = Config {
                clipping: Clipping::Mse,
                bits,
                range: RangeKind::Full,
                ..base
            };
            c.conventions.degenerate = Degenerate::Epsilon;
            if c.validate().is_ok() {
                let (qmin, qmax) = c.code_range();
                out.push((i, p.name, c, f32::EPSILON * (qmax - qmin) as f32 / 2.0));
            }
        }
    }
    out
}

#[test]
fn mse_ties_between_candidates_go_to_the_first() {
    // Under PyTorch's degenerate rule a scale below 2^-23 is raised to 2^-23, so on a block
    // whose scale is near that floor every candidate past some shrink factor stores the same
    // scale and zero point: the same squared error, bit for bit, often the least. The first
    // of the candidates with the least error must win, wherever it lies.
    let mut ties = 0;
    let mut ties_inside = 0;
    let mut scratch = Scratch::default();
    for (i, name, c, floor) in near_floor_configs() {
        let (qmin, qmax) = c.code_range();
        for (seed, over) in [0.8f32, 1.02, 1.1, 1.3, 1.7, 2.5].into_iter().enumerate() {
            let n = [8, 33, 300, 2000][seed % 4];
            let mut xs = noise(n, seed as u64 * 31 + i as u64, 1.0);
            // Repeated values and a zero.
            for j in (0..n).step_by(5) {
                xs[j] = xs[j / 2];
            }
            xs[n / 3] = 0.0;
            let absmax = xs.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            for x in &mut xs {
                *x *= over * floor / absmax;
            }
            let mut st = BlockStats::EMPTY;
            st.extend(&xs);
            let form = |range| block_params(&c, range, qmin, qmax);
            let sums = candidate_sse(&c, &xs, RealRange::of(&st), c.clamp_range(), form);
            let least = sums.iter().copied().fold(f64::INFINITY, f64::min);
            let first = sums.iter().position(|&s| s == least);
            if sums.iter().filter(|&&s| s == least).count() > 1 {
                ties += 1;
                ties_inside += usize::from(first.is_some_and(|k| k > 0));
            }
            let (got, want) = both_clippings(&c, &xs, &mut scratch);
            same_params(&got, &want).unwrap_or_else(|e| panic!("{name} {} bits: {e}", c.bits));
            if let Some(k) = first {
                let chosen = form(RealRange::of(&st).shrunk(alpha(k)));
                assert_eq!(format!("{got:?}"), format!("{chosen:?}"), "{name}");
            }
        }
    }
    assert!(
        ties >= 50 && ties_inside >= 20,
        "{ties} ties, {ties_inside} past the first candidate"
    );
}

#[test]
fn mse_ties_in_small_groups_go_to_the_first() {
    // The same near-floor blocks as above, as the groups of a matrix: groups of at most 256
    // values are searched eight blocks at a time, each block keeping the first of its tied
    // candidates (the reference's choice is checked through every block's recorded range).
    let (rows, cols) = (8, 512);
    let mut ties = 0;
    for (i, name, c, floor) in near_floor_configs() {
        let mut flat = noise(rows * cols, i as u64 * 7 + u64::from(c.bits), 1.0);
        // Each run of eight values scaled to `over` times the floor; some repeated values,
        // zeros, and a constant run.
        for (g, run) in flat.chunks_mut(8).enumerate() {
            let over = [0.8f32, 1.02, 1.1, 1.3, 1.7, 2.5, 40.0][g % 7];
            run[g % 8] = 0.0;
            run[(g + 3) % 8] = run[(g + 5) % 8];
            if g % 23 == 0 {
                run.fill(0.5);
            }
            let absmax = run.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            for x in run.iter_mut() {
                *x *= over * floor / absmax;
            }
        }
        for run in flat.chunks(8) {
            let (sums, least) = run_sse(&c, run);
            ties += usize::from(sums.iter().filter(|&&s| s == least).count() > 1);
        }
        let m = Matrix::new(Array2::from_shape_vec((rows, cols), flat).expect("shape"))
            .expect("finite");
        for size in [8, 24, 64, 256] {
            let g = Config {
                granularity: Granularity::Group(size),
                ..c
            };
            check(&m, &g).unwrap_or_else(|e| panic!("{name} {} bits g{size}: {e}", c.bits));
        }
    }
    assert!(ties >= 500, "{ties} runs of eight with tied candidates");
}

#[test]
fn clipping_on_constant_zero_and_repeated_blocks_is_the_reference() {
    let mut scratch = Scratch::default();
    let blocks: Vec<Vec<f32>> = vec![
        vec![0.0; 200],
        vec![-0.0; 7],
        vec![0.25; 129],
        vec![0.25; 16],
        vec![-0.0; 8],
        vec![-3.5; 1],
        [vec![0.0; 150], vec![-0.0; 150]].concat(),
        (0..256)
            .map(|i| if i % 64 == 0 { 1.0 } else { 0.0 })
            .collect(),
        (0..4096)
            .map(|i| [0.5f32, -0.5, 0.25, 0.0][i % 4])
            .collect(),
        (0..4096).map(|i| (i as f32).sin() * 1e-3).collect(),
        // Ascending, then descending: every value enters the kept set of a streamed
        // selection.
        (0..5000).map(|i| i as f32 * 0.01).collect(),
        (0..5000).map(|i| -(i as f32) * 0.01).collect(),
    ];
    for name in [
        "ort-int8",
        "int4-g128",
        "q4_0",
        "q4_1",
        "torch-quint8",
        "calculator",
    ] {
        let base = preset(name, PresetOptions::default()).expect("preset");
        for scheme in [Scheme::Symmetric, Scheme::Asymmetric] {
            for clip in [
                Clipping::Percentile(99.9),
                Clipping::Percentile(99.0),
                Clipping::Percentile(50.0),
                Clipping::Percentile(0.5),
                Clipping::Mse,
            ] {
                let c = Config {
                    scheme,
                    clipping: clip,
                    ..base
                };
                if c.validate().is_err() {
                    continue;
                }
                for xs in &blocks {
                    let (got, want) = both_clippings(&c, xs, &mut scratch);
                    same_params(&got, &want).unwrap_or_else(|e| {
                        panic!("{name} {scheme:?} {clip:?} n={}: {e}", xs.len())
                    });
                }
            }
        }
    }
}

#[test]
fn mse_search_on_long_blocks_is_the_reference() {
    // Long blocks of noise: the candidates near the least error differ by a few percent, so
    // the first values rank them differently from the whole block; and blocks whose first
    // values are quiet and whose later values carry outliers, so that the first values
    // point at the wrong end of the candidates.
    let mut scratch = Scratch::default();
    let names = [
        "ort-int8",
        "ort-int4",
        "int4-g128",
        "q4_1",
        "torch-quint8",
        "q4_0",
    ];
    for (name, c) in mse_configs(&names) {
        for seed in 0..10u64 {
            let n = [4096, 1500, 777][seed as usize % 3];
            let mut xs = noise(n, seed * 7 + 3, 0.5);
            if seed % 2 == 1 {
                for (i, x) in xs.iter_mut().enumerate() {
                    if i < n / 8 {
                        *x *= 0.01;
                    } else if i % 97 == 0 {
                        *x *= 6.0;
                    }
                }
            }
            let (got, want) = both_clippings(&c, &xs, &mut scratch);
            same_params(&got, &want)
                .unwrap_or_else(|e| panic!("{name} {:?} seed {seed}: {e}", c.scheme));
        }
    }
}

/// Each of the presets `names` with MSE clipping, symmetric and asymmetric, where valid.
fn mse_configs(names: &[&'static str]) -> Vec<(&'static str, Config)> {
    let mut out = Vec::new();
    for &name in names {
        let base = preset(name, PresetOptions::default()).expect("preset");
        for scheme in [Scheme::Symmetric, Scheme::Asymmetric] {
            let c = Config {
                scheme,
                clipping: Clipping::Mse,
                ..base
            };
            if c.validate().is_ok() {
                out.push((name, c));
            }
        }
    }
    out
}

#[test]
fn mse_search_on_small_blocks_is_the_reference() {
    // Blocks of 8 to 64 values, the ladder's small groups: each candidate is first bounded by
    // its two extreme values. Noise over decades, a lone outlier at either end, two values
    // only, and values on a coarse grid (so candidates tie).
    let mut scratch = Scratch::default();
    let names = [
        "ort-int8",
        "ort-int4",
        "int4-g128",
        "q4_1",
        "torch-quint8",
        "q4_0",
        "calculator",
    ];
    for (name, c) in mse_configs(&names) {
        for seed in 0..120u64 {
            let n = [8, 9, 16, 31, 32, 64][seed as usize % 6];
            let spread = 10f32.powi((seed % 9) as i32 - 5);
            let mut xs = noise(n, seed * 13 + 5, spread);
            match seed % 5 {
                1 => xs[n / 2] = 9.0 * spread,
                2 => xs[0] = -7.0 * spread,
                3 => {
                    for (i, x) in xs.iter_mut().enumerate() {
                        *x = if i % 3 == 0 { spread } else { -0.5 * spread };
                    }
                }
                4 => {
                    for x in &mut xs {
                        *x = (*x / spread * 4.0).round() * spread / 4.0;
                    }
                }
                _ => {}
            }
            let (got, want) = both_clippings(&c, &xs, &mut scratch);
            same_params(&got, &want)
                .unwrap_or_else(|e| panic!("{name} {:?} seed {seed} n={n}: {e}", c.scheme));
        }
    }
}

#[test]
fn clipped_analyses_of_long_rows_are_the_reference() {
    // Rows longer than a step of the MSE search, at every rung of the ladder: the searches
    // as the analysis runs them (candidates formed eight at a time) against the reference.
    let m = big(10, 1030, 5);
    for name in [
        "ort-int8",
        "int4-g128",
        "q4_1",
        "torch-quint8",
        "q4_0",
        "calculator",
    ] {
        let base = preset(name, PresetOptions::default()).expect("preset");
        for clipping in [Clipping::Mse, Clipping::Percentile(99.9)] {
            let c = Config { clipping, ..base };
            check(&m, &c).unwrap_or_else(|e| panic!("{name} {clipping:?}: {e}"));
        }
    }
}

#[test]
fn mse_search_of_a_tensor_sized_block_is_the_reference() {
    // Past its head, more than sixteen of the search's parallel steps: the groups of
    // candidates go to the thread pool, and one group of probes per thread finishes first
    // (8 with one thread, 24 with three), so the two pools finish different candidates
    // before bounding the rest; the choice is the reference's with either.
    let mut spikes = noise(1_200_000, 99, 0.5);
    for x in spikes.iter_mut().step_by(1009) {
        *x *= 5.0;
    }
    // Outliers that the values ranking the candidates (every 18th) never see: the first
    // candidate in that order clips, the others (which go side by side after it) include
    // the best, which clips less.
    let mut hidden = noise(1_200_000, 7, 0.5);
    for (i, x) in hidden.iter_mut().enumerate() {
        if i % 997 == 0 && i % 18 != 0 {
            *x *= 40.0;
        }
    }
    for (xs, name) in [
        (&spikes, "ort-int8"),
        (&spikes, "int4-g128"),
        (&hidden, "ort-int8"),
    ] {
        check_tensor_sized(xs, name);
    }
}

/// [`mse_search_of_a_tensor_sized_block_is_the_reference`] for one block and preset.
fn check_tensor_sized(xs: &[f32], name: &str) {
    let mut st = BlockStats::EMPTY;
    st.extend(xs);
    let c = Config {
        clipping: Clipping::Mse,
        ..preset(name, PresetOptions::default()).expect("preset")
    };
    let (qmin, qmax) = c.code_range();
    let form = |range| block_params(&c, range, qmin, qmax);
    let (lo, hi) = c.clamp_range();
    let want = reference_clipping(&c, xs, &st, (lo, hi), form);
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let got =
            pool.install(|| clipped_params_in(&mut Scratch::default(), &c, xs, &st, lo, hi, form));
        same_params(&got, &want).unwrap_or_else(|e| panic!("{name}, {threads} threads: {e}"));
    }
}

/// Symmetric configurations with MSE clipping across every symmetric scale rule, zero point,
/// scale type, code clamp and degenerate rule, at 2, 4 and 8 bits, signed and unsigned
/// (where valid): a fixed walk through the combinations, `n` of them.
fn symmetric_mse_configs(n: usize) -> Vec<Config> {
    let rules = [
        SymScale::MaxCode,
        SymScale::HalfSpan,
        SymScale::SignedExtreme,
        SymScale::SignedMinMax,
    ];
    let zeros = [
        SymZeroPoint::Zero,
        SymZeroPoint::MidHalfEven,
        SymZeroPoint::MidFloor,
    ];
    let dtypes = [ScaleDtype::F32, ScaleDtype::F16, ScaleDtype::Bf16];
    let clamps = [CodeClamp::Range, CodeClamp::Type];
    let degenerates = [
        Degenerate::One,
        Degenerate::Flat,
        Degenerate::Epsilon,
        Degenerate::Zero,
    ];
    let base = Config {
        scheme: Scheme::Symmetric,
        clipping: Clipping::Mse,
        ..preset("ort-int8", PresetOptions::default()).expect("preset")
    };
    let mut out = Vec::new();
    let mut i = 0usize;
    while out.len() < n {
        // Steps prime to every list's length, so that the walk meets every pairing.
        let mut c = base;
        c.conventions.sym_scale = rules[i % 4];
        c.conventions.sym_zero_point = zeros[(i / 4) % 3];
        c.scale_dtype = dtypes[(i * 7) % 3];
        c.conventions.code_clamp = clamps[(i / 3) % 2];
        c.conventions.degenerate = degenerates[(i * 5 / 3) % 4];
        c.bits = [2u8, 4, 8][(i / 2) % 3];
        c.signed = !i.is_multiple_of(5);
        c.range = if i % 7 == 3 {
            RangeKind::Narrow
        } else {
            RangeKind::Full
        };
        if c.validate().is_ok() {
            out.push(c);
        }
        i += 1;
        assert!(i < 100_000, "too few valid symmetric configurations");
    }
    out
}

#[test]
fn symmetric_mse_groups_stop_only_past_every_winner() {
    // A symmetric search of eight groups at a time stops at the first candidate whose
    // reconstructions all lie so near 0 that every block's largest value is farther from
    // them than its best error: every later candidate's range is nested in it. Runs whose
    // winner clips hard (an outlier among quiet values), runs whose two ends have nearly the
    // same magnitude (the signed rules' scale changes sign from one candidate to the next),
    // runs near the degenerate rules' thresholds, and plain noise, as whole analyses in
    // groups of 8 to 256 against the reference.
    let (rows, cols) = (8, 512);
    let mut late = 0;
    for (n, c) in symmetric_mse_configs(36).into_iter().enumerate() {
        let mut flat = noise(rows * cols, n as u64 * 11 + 1, 1.0);
        for (g, run) in flat.chunks_mut(8).enumerate() {
            match g % 6 {
                // One outlier among quiet values: clipping it wins.
                1 => {
                    for x in run.iter_mut() {
                        *x *= 0.05;
                    }
                    run[g % 8] = 3.0;
                }
                // Two ends of nearly equal magnitude.
                2 => {
                    run[0] = 1.0;
                    run[7] = -1.0 - f32::EPSILON * (g % 3) as f32;
                }
                // Outliers at both ends.
                3 => {
                    run[1] = 4.0;
                    run[6] = -3.9;
                }
                _ => {}
            }
            // Magnitudes from ordinary to the degenerate rules' thresholds.
            let scale = [1.0f32, 3e-3, 2e-5, 1.5e-7, 2e-36, 1e-38][(g / 6) % 6];
            for x in run.iter_mut() {
                *x *= scale;
            }
        }
        for run in flat.chunks(8) {
            let (sums, least) = run_sse(&c, run);
            late += usize::from(
                sums.iter()
                    .position(|&s| s == least)
                    .is_some_and(|k| k >= 2),
            );
        }
        let m = Matrix::new(Array2::from_shape_vec((rows, cols), flat).expect("shape"))
            .expect("finite");
        for size in [8, 16, 64, 256] {
            let g = Config {
                granularity: Granularity::Group(size),
                ..c
            };
            check(&m, &g).unwrap_or_else(|e| panic!("{c:?} g{size}: {e}"));
        }
    }
    assert!(
        late >= 500,
        "{late} runs of eight whose winner is past the second candidate"
    );
}

#[test]
fn percentile_groups_with_ties_are_the_reference() {
    // Groups of 8 to 64 values whose quantiles lie between their two largest or two
    // smallest values (the largest-two pass) and elsewhere (the selections), a row's last
    // groups fewer than eight, on values with exact ties (a coarse grid, one magnitude at
    // both signs, negative zeros), symmetric and asymmetric, as whole analyses against the
    // reference.
    let (rows, cols) = (6, 8 * 64 + 24);
    let mut flat = noise(rows * cols, 23, 1.0);
    for (i, x) in flat.iter_mut().enumerate() {
        *x = match (i % 11, i % 13) {
            (0, _) => (*x * 4.0).round() / 4.0,
            (3, _) => -0.0,
            (5, _) => 2.0,
            (_, 7) => -2.0,
            _ => *x,
        };
    }
    let m =
        Matrix::new(Array2::from_shape_vec((rows, cols), flat).expect("shape")).expect("finite");
    let mut runs = 0;
    for name in ["ort-int8", "int4-g128", "q4_1", "torch-quint8"] {
        let base = preset(name, PresetOptions::default()).expect("preset");
        for scheme in [Scheme::Symmetric, Scheme::Asymmetric] {
            for p in [100.0, 99.9, 95.0, 90.0, 80.0, 50.0] {
                for size in [8, 16, 64] {
                    let c = Config {
                        scheme,
                        clipping: Clipping::Percentile(p),
                        granularity: Granularity::Group(size),
                        ..base
                    };
                    if c.validate().is_err() {
                        continue;
                    }
                    check(&m, &c).unwrap_or_else(|e| panic!("{name} {scheme:?} {p} g{size}: {e}"));
                    runs += 1;
                }
            }
        }
    }
    assert!(runs >= 100, "{runs} configurations");
}
