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
use quantscope::core::clip::clipped_params;
use quantscope::core::config::{
    Arith, AsymZeroPoint, Axis, Clipping, CodeClamp, Config, Degenerate, NonFinite, QuantExpr,
    RangeKind, RangeSource, Rounding, ScaleDtype, SymScale, SymZeroPoint,
};
use quantscope::core::kernel::Quantizer;
use quantscope::core::params::{BlockParams, BlockStats, block_params};
use quantscope::core::{
    AnalyseError, Granularity, Matrix, Options, PRESETS, PresetOptions, Report, Scheme,
    analyse_with, ladder_granularities, preset,
};

#[path = "common/core.rs"]
mod core_helpers;

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

/// The clipped parameters of a block, one block at a time: the scale is formed for
/// the code range, the MSE search's codes are clamped into the clamp range.
fn choose(c: &Config, xs: &[f32], st: &BlockStats) -> BlockParams {
    let (qmin, qmax) = c.code_range();
    let (lo, hi) = c.clamp_range();
    clipped_params(c, xs.iter().copied(), st, lo, hi, |range| {
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
    let got = analyse_with(m, c, Options { ladder: true });
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
    (1..=6usize, 1..=70usize, -20i32..20).prop_flat_map(|(rows, cols, exp)| {
        let unit = 2f32.powi(exp);
        prop::collection::vec(prop::collection::vec(value(unit), cols), rows).prop_map(
            move |data| {
                let flat: Vec<f32> = data.into_iter().flatten().collect();
                Matrix::new(Array2::from_shape_vec((rows, cols), flat).expect("shape"))
                    .expect("finite")
            },
        )
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
