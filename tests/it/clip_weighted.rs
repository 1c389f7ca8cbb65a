//! `--clip mse-weighted`: the importance-weighted MSE search against a straightforward f64
//! reference (proptest), the same choice as `--clip mse` under uniform importance, a case
//! where the two choose differently, and the refusal without an importance vector.

use proptest::prelude::*;
use quantscope::core::config::{Axis, Clipping, Granularity};
use quantscope::core::importance::{Importance, ImportanceSource};
use quantscope::core::kernel::Quantizer;
use quantscope::core::params::{BlockParams, BlockStats, RealRange, block_params};
use quantscope::core::{
    AnalyseError, Config, Matrix, Options, PresetOptions, Report, analyse_weighted, preset,
};

use crate::common::{files, run};

/// An importance vector from activations named `a`.
fn importance(values: Vec<f32>, cols: usize) -> Importance {
    let source = ImportanceSource::Activations {
        name: "a".into(),
        tokens: 1,
    };
    Importance::new(values, cols, source).unwrap()
}

/// `name` at `granularity` along `axis`, clipped by `clipping`.
fn config(name: &str, granularity: Granularity, axis: Axis, clipping: Clipping) -> Config {
    Config {
        granularity,
        axis,
        clipping,
        ..preset(name, PresetOptions::default()).unwrap()
    }
}

/// The block's parameters as the reference search picks them: for the range shrunk by
/// `1 − 0.02·k` (k = 0..=40, in f32), the parameters, then `Σ a (x̂ − x)²` in f64 over the
/// block's values in order; the first least sum (strictly below the best so far) wins.
fn reference(c: &Config, xs: &[f32], weights: &[f32]) -> BlockParams {
    let mut st = BlockStats::EMPTY;
    st.extend(xs);
    let (qmin, qmax) = c.code_range();
    let (cmin, cmax) = c.clamp_range();
    let mut best: Option<(f64, BlockParams)> = None;
    for k in 0..=40u8 {
        let alpha = 1.0f32 - f32::from(k) * 0.02;
        let p = block_params(c, RealRange::of(&st).shrunk(alpha), qmin, qmax);
        let q = Quantizer::new(c, &p, cmin, cmax);
        let sse: f64 = xs
            .iter()
            .zip(weights)
            .map(|(&x, &a)| {
                let e = f64::from(q.dequantize(q.code(x).0)) - f64::from(x);
                f64::from(a) * (e * e)
            })
            .sum();
        if best.is_none_or(|(b, _)| sse < b) {
            best = Some((sse, p));
        }
    }
    best.unwrap().1
}

/// Checks every block of `report` (of `m` under `c`, weighted by `a` per column) against
/// [`reference`]: its scale, zero point and offset, and every value's reconstruction.
fn check_blocks(m: &Matrix, c: &Config, a: &[f32], report: &Report) -> Result<(), TestCaseError> {
    let (cmin, cmax) = c.clamp_range();
    for b in &report.blocks {
        let mut xs = Vec::new();
        let mut ws = Vec::new();
        for r in b.rows.0..b.rows.1 {
            xs.extend((b.cols.0..b.cols.1).map(|col| m.values()[[r, col]]));
            ws.extend_from_slice(&a[b.cols.0..b.cols.1]);
        }
        let want = reference(c, &xs, &ws);
        prop_assert_eq!(
            (b.scale.to_bits(), b.zero_point, b.offset.map(f32::to_bits)),
            (
                want.scale.to_bits(),
                want.zero_point,
                want.offset.map(f32::to_bits)
            ),
            "block rows {:?} cols {:?}",
            b.rows,
            b.cols
        );
        let q = Quantizer::new(c, &want, cmin, cmax);
        let mut i = 0;
        for r in b.rows.0..b.rows.1 {
            for col in b.cols.0..b.cols.1 {
                let x = xs[i];
                i += 1;
                prop_assert_eq!(
                    report.dequantized(r, col).to_bits(),
                    q.dequantize(q.code(x).0).to_bits(),
                    "value ({}, {})",
                    r,
                    col
                );
            }
        }
    }
    Ok(())
}

/// Values of every spread, outliers and exact zeros among them.
fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => -1.0f32..1.0,
        1 => -40.0f32..40.0,
        1 => (-1.0f32..1.0).prop_map(|x| x * 1e-3),
        1 => Just(0.0f32),
    ]
}

/// Importance values: mostly ordinary, some zero, some dominant.
fn weight() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => 0.0f32..2.0,
        1 => Just(0.0f32),
        1 => 50.0f32..1000.0,
    ]
}

/// The presets and granularities the property runs (per tensor, per row, per column,
/// groups).
fn layouts() -> impl Strategy<Value = (&'static str, Granularity, Axis)> {
    (
        prop::sample::select(vec![
            "ort-int8",
            "ort-int4",
            "torch-quint8",
            "lesson",
            "q4_1",
        ]),
        prop::sample::select(vec![
            (Granularity::Tensor, Axis::Rows),
            (Granularity::Channel, Axis::Rows),
            (Granularity::Channel, Axis::Columns),
            (Granularity::Group(4), Axis::Rows),
            (Granularity::Group(8), Axis::Rows),
        ]),
    )
        .prop_map(|(name, (g, axis))| (name, g, axis))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every block's parameters and reconstructions are the reference search's, at every
    /// layout, with zero and dominant importance.
    #[test]
    fn weighted_search_is_the_reference(
        (rows, cols, values, weights) in (1usize..5, 1usize..24).prop_flat_map(|(r, c)| {
            (
                Just(r),
                Just(c),
                prop::collection::vec(value(), r * c),
                prop::collection::vec(weight(), c),
            )
        }),
        (name, g, axis) in layouts(),
    ) {
        let c = config(name, g, axis, Clipping::MseWeighted);
        prop_assume!(c.validate().is_ok());
        let m = Matrix::from_rows(&values.chunks(cols).collect::<Vec<_>>()).unwrap();
        prop_assert_eq!(m.shape(), (rows, cols));
        let imp = importance(weights.clone(), cols);
        let report = analyse_weighted(&m, &c, Some(&imp), Options::ONE_CONFIG).unwrap();
        check_blocks(&m, &c, &weights, &report)?;
    }
}

/// `n` values of a fixed-seed xorshift, normal-like with a few outliers.
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|i| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let u = (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32;
            let x = (u - 0.5) * (u - 0.5) * (u - 0.5) * 8.0;
            if i % 97 == 5 { x * 6.0 } else { x }
        })
        .collect()
}

#[test]
fn uniform_importance_chooses_what_mse_chooses() {
    // Every weight 1 (and every weight 0.25, a power of two: each sum scaled exactly) gives
    // the MSE search's sums, so its choice, on blocks short and long enough for each of the
    // MSE search's paths (8 to 600 values, and the whole 12 x 600 tensor).
    let (rows, cols) = (12, 600);
    let values = noise(rows * cols, 7);
    let m = Matrix::from_rows(&values.chunks(cols).collect::<Vec<_>>()).unwrap();
    let mut compared = 0;
    for name in ["ort-int8", "ort-int4", "torch-quint8", "int4-g128", "q4_1"] {
        for (g, axis) in [
            (Granularity::Tensor, Axis::Rows),
            (Granularity::Channel, Axis::Rows),
            (Granularity::Channel, Axis::Columns),
            (Granularity::Group(8), Axis::Rows),
            (Granularity::Group(100), Axis::Rows),
            (Granularity::Group(300), Axis::Rows),
        ] {
            let mse = config(name, g, axis, Clipping::Mse);
            if mse.validate().is_err() {
                continue;
            }
            let want = analyse_weighted(&m, &mse, None, Options::default()).unwrap();
            for a in [1.0f32, 0.25] {
                let imp = importance(vec![a; cols], cols);
                let weighted = config(name, g, axis, Clipping::MseWeighted);
                let got = analyse_weighted(&m, &weighted, Some(&imp), Options::default()).unwrap();
                let blocks = |r: &Report| r.blocks.iter().collect::<Vec<_>>();
                assert_eq!(blocks(&got), blocks(&want), "{name} {g:?} {axis:?} a={a}");
                assert_eq!(got.overall, want.overall, "{name} {g:?} {axis:?}");
                // The ladder's rungs are searched the same way.
                let ladder = |r: &Report| r.ladder.iter().map(|r| r.overall).collect::<Vec<_>>();
                assert_eq!(ladder(&got), ladder(&want), "{name} {g:?} {axis:?}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 50, "{compared}");
}

#[test]
fn a_loud_column_keeps_its_outlier() {
    // Sixty-three small values and one large one in column 0. The MSE search clips the
    // large value (the small ones gain more than it loses); when column 0's input is
    // loud, the weighted search keeps the whole range so that the value survives.
    let mut row: Vec<f32> = (1..64)
        .map(|i| ((i * 37) % 64) as f32 / 64.0 - 0.5)
        .collect();
    row.insert(0, 4.0);
    let m = Matrix::from_rows(&[&row[..]]).unwrap();
    let cols = row.len();
    let mut a = vec![1.0f32; cols];
    a[0] = 1000.0;
    let imp = importance(a.clone(), cols);
    let mse = config("ort-int4", Granularity::Channel, Axis::Rows, Clipping::Mse);
    let weighted = Config {
        clipping: Clipping::MseWeighted,
        ..mse
    };
    let by_mse = analyse_weighted(&m, &mse, Some(&imp), Options::ONE_CONFIG).unwrap();
    let by_weight = analyse_weighted(&m, &weighted, Some(&imp), Options::ONE_CONFIG).unwrap();
    // The report says which codes the importance chose.
    assert!(by_weight.quantized_with.is_some() && by_mse.quantized_with.is_none());
    let (bm, bw) = (by_mse.blocks.at(0), by_weight.blocks.at(0));
    assert!(bm.range.1 < 4.0, "mse clips the outlier: {:?}", bm.range);
    assert_eq!(bw.range.1, 4.0, "weighted keeps it: {:?}", bw.range);
    // The loud column's value comes out nearer under the weighted search.
    let err0 = |r: &Report| (r.dequantized(0, 0) - 4.0).abs();
    assert!(
        err0(&by_weight) < err0(&by_mse),
        "{} {}",
        err0(&by_weight),
        err0(&by_mse)
    );
    // Each search wins on its own measure.
    let sums = |r: &Report| {
        let (mut plain, mut weighted) = (0.0f64, 0.0f64);
        for (j, &x) in row.iter().enumerate() {
            let e = f64::from(r.dequantized(0, j)) - f64::from(x);
            plain += e * e;
            weighted += f64::from(a[j]) * e * e;
        }
        (plain, weighted)
    };
    let (m_plain, m_weighted) = sums(&by_mse);
    let (w_plain, w_weighted) = sums(&by_weight);
    assert!(m_plain < w_plain, "{m_plain} {w_plain}");
    assert!(w_weighted < m_weighted, "{w_weighted} {m_weighted}");
    check_blocks(&m, &weighted, &a, &by_weight).unwrap();
}

#[test]
fn without_importance_it_is_refused() {
    let m = Matrix::from_rows(&[&[0.5f32, -1.0, 2.0]]).unwrap();
    let c = config(
        "ort-int8",
        Granularity::Channel,
        Axis::Rows,
        Clipping::MseWeighted,
    );
    let e = analyse_weighted(&m, &c, None, Options::ONE_CONFIG).unwrap_err();
    assert_eq!(e, AnalyseError::ClipNeedsImportance);
    assert!(e.to_string().contains("importance"), "{e}");
}

#[test]
fn the_command_line_refuses_it_without_importance_and_takes_it_with() {
    let f = files::temp_file("w.txt", b"0.5 -1.0 2.0 0.25\n-0.125 3.0 -2.5 1.0\n");
    let path = f.to_str().unwrap();
    let out = run::quantscope(&["report", path, "--clip", "mse-weighted", "--no-ladder"]);
    let err = run::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("mse-weighted") && err.contains("importance"),
        "{err}"
    );
    let out = run::quantscope(&[
        "report",
        path,
        "--clip",
        "mse-weighted",
        "--activations",
        "built-in",
        "--no-ladder",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", run::text(&out.stderr));
    let out = run::quantscope(&["report", "--list-presets"]);
    let text = run::text(&out.stdout);
    assert!(text.contains("mse-weighted"), "{text}");
}
