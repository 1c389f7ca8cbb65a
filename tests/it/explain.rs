//! Worked arithmetic: the data `explain_channel` builds, checked against the seed lesson's
//! numbers and the ONNX Runtime int4 tie, and its text (snapshots) for the formulas of the
//! presets: max-code, half-span, signed extreme, asymmetric with an unclamped zero point,
//! GGUF's float minimum with f16 scales, and degenerate blocks.

use quantscope::core::config::{Config, Granularity, Rounding, Scheme};
use quantscope::core::explain::{
    ChannelExplanation, Clamp, ScaleFormula, ZeroPointFormula, explain_channel,
};
use quantscope::core::presets::Overrides;
use quantscope::core::{Matrix, PresetOptions, analyse, preset};
use quantscope::io::export::worked_arithmetic;
use quantscope::io::text::parse_text;

use crate::common::core as core_helpers;

use core_helpers::{lesson_config as lesson, lesson_matrix};

fn explain(matrix: &Matrix, config: &Config, row: usize) -> ChannelExplanation {
    explain_channel(matrix, &analyse(matrix, config).unwrap(), row)
}

/// Ratios rounded to two decimals, as the lesson prints them.
fn ratios(e: &ChannelExplanation) -> Vec<f64> {
    e.values
        .iter()
        .map(|v| (f64::from(v.ratio) * 100.0).round() / 100.0)
        .collect()
}

fn codes(e: &ChannelExplanation) -> Vec<i32> {
    e.values.iter().map(|v| v.code).collect()
}

#[test]
fn per_tensor_row_a_collapses_as_in_the_lesson() {
    let e = explain(&lesson_matrix(), &lesson(Granularity::Tensor), 0);
    assert_eq!(e.blocks.len(), 1);
    let b = &e.blocks[0];
    assert_eq!(
        b.scale,
        ScaleFormula::MaxCode {
            absmax: 3.10,
            denominator: 7
        }
    );
    assert_eq!(b.computed_scale, (f64::from(3.10_f32) / 7.0) as f32);
    assert!((b.formula_value - 3.10 / 7.0).abs() < 1e-7);
    assert_eq!(b.stored_scale, None);
    assert_eq!(
        b.zero_point,
        ZeroPointFormula::Fixed {
            rule: quantscope::core::config::SymZeroPoint::Zero,
            value: 0
        }
    );
    assert_eq!(ratios(&e), [0.11, -0.18, 0.27, -0.34]);
    assert_eq!(codes(&e), [0, 0, 0, 0]);
    for v in &e.values {
        assert_eq!(v.rounded, 0.0);
        assert_eq!(v.tie, None);
        assert_eq!(v.clamp, None);
        assert_eq!(v.dequantized, 0.0);
        assert_eq!(v.error, -f64::from(v.x));
    }
    assert!((e.metrics.mae - 0.1).abs() < 1e-6);
}

#[test]
fn per_channel_row_a_survives_as_in_the_lesson() {
    let e = explain(&lesson_matrix(), &lesson(Granularity::Channel), 0);
    let b = &e.blocks[0];
    assert_eq!((b.rows, b.cols), ((0, 1), (0, 4)));
    assert_eq!(
        b.scale,
        ScaleFormula::MaxCode {
            absmax: 0.15,
            denominator: 7
        }
    );
    assert_eq!(b.computed_scale, (f64::from(0.15_f32) / 7.0) as f32);
    assert_eq!(ratios(&e), [2.33, -3.73, 5.60, -7.00]);
    assert_eq!(codes(&e), [2, -4, 6, -7]);
    let rec: Vec<f64> = e
        .values
        .iter()
        .map(|v| (f64::from(v.dequantized) * 1e4).round() / 1e4)
        .collect();
    assert_eq!(rec, [0.0429, -0.0857, 0.1286, -0.1500]);
    // x̂ − x, computed in the core: 2 × 0.15/7 − 0.05 = −0.00714.
    assert!(
        (e.values[0].error + 0.007_142_8).abs() < 1e-6,
        "{}",
        e.values[0].error
    );
}

#[test]
fn ort_int4_row_a_has_an_exact_tie_at_minus_7_5_rounded_to_even() {
    let config = preset(
        "ort-int4",
        PresetOptions {
            scheme: Some(Scheme::Symmetric),
            reduce_range: false,
        },
    )
    .unwrap();
    let e = explain(&lesson_matrix(), &config, 0);
    let b = &e.blocks[0];
    assert_eq!(
        b.scale,
        ScaleFormula::HalfSpan {
            absmax: 0.15,
            span: 15
        }
    );
    assert_eq!(b.computed_scale, 0.020_000_001);
    let last = &e.values[3];
    assert_eq!(last.x, -0.15);
    assert_eq!(last.ratio, -7.5);
    assert_eq!(last.tie, Some(Rounding::HalfEven));
    assert_eq!(last.rounded, -8.0);
    assert_eq!(last.code, -8);
    assert_eq!(last.clamp, None);
    assert_eq!(codes(&e), [2, -4, 6, -8]);
    assert!(e.values[..3].iter().all(|v| v.tie.is_none()));
}

#[test]
fn asymmetric_zero_points_show_their_unrounded_value_and_clamping() {
    // The seed calculator's second channel: the zero point leaves int8 and is not clamped.
    let m = Matrix::from_rows(&[&[1.20, 0.95, 1.44, 1.10, 0.88]]).unwrap();
    let calc = preset("calculator", PresetOptions::default()).unwrap();
    let e = explain(&m, &calc, 0);
    match e.blocks[0].zero_point {
        ZeroPointFormula::RoundOfShift {
            unrounded,
            rounded,
            clamped,
            value,
            ..
        } => {
            assert!((unrounded + 528.71).abs() < 0.01, "{unrounded}");
            assert_eq!((rounded, clamped, value), (-529.0, false, -529));
        }
        z => panic!("{z:?}"),
    }
    // The same with the zero point clamped: it becomes qmin.
    let clamped = Overrides {
        clamp_zero_point: Some(true),
        ..Overrides::default()
    }
    .resolve("calculator")
    .unwrap();
    let e = explain(&m, &clamped, 0);
    assert!(matches!(
        e.blocks[0].zero_point,
        ZeroPointFormula::RoundOfShift {
            clamped: true,
            value: -128,
            ..
        }
    ));
    assert!(e.values.iter().any(|v| v.clamp == Some(Clamp::ToMax(127))));
}

#[test]
fn full_range_max_code_clamps_the_largest_positive_value() {
    let m = Matrix::from_rows(&[&[1.6, -0.94, 0.46, -1.2]]).unwrap();
    let config = Overrides {
        range: Some(quantscope::core::config::RangeKind::Full),
        ..Overrides::default()
    }
    .resolve("lesson")
    .unwrap();
    let e = explain(&m, &config, 0);
    assert_eq!(
        e.blocks[0].scale,
        ScaleFormula::MaxCode {
            absmax: 1.6,
            denominator: 8
        }
    );
    assert_eq!(e.values[0].rounded, 8.0);
    assert_eq!(e.values[0].clamp, Some(Clamp::ToMax(7)));
    assert_eq!(codes(&e), [7, -5, 2, -6]);
}

#[test]
fn q4_0_scales_carry_the_sign_of_the_extreme_and_are_stored_as_f16() {
    let m = Matrix::from_rows(&[&[0.1, -0.4, 0.4, 0.0]]).unwrap();
    let e = explain(&m, &preset("q4_0", PresetOptions::default()).unwrap(), 0);
    let b = &e.blocks[0];
    assert_eq!(
        b.scale,
        ScaleFormula::SignedExtreme {
            extreme: -0.4,
            denominator: -8,
            min_max: false
        }
    );
    assert_eq!(b.computed_scale, 0.05);
    assert_eq!(
        b.stored_scale.map(|s| s.value),
        Some(half::f16::from_f32(0.05).to_f32())
    );
    assert_eq!(codes(&e), [10, 0, 15, 8]);
    assert_eq!(e.values[2].clamp, Some(Clamp::ToMax(15)));
}

fn snapshot_lines(text: &str, config: &Config, row: usize) -> String {
    let m = parse_text(text).unwrap();
    worked_arithmetic(&explain(&m, config, row)).join("\n")
}

#[test]
fn lesson_per_channel_text() {
    insta::assert_snapshot!(snapshot_lines(
        "quiet: 0.05, -0.08, 0.12, -0.15\nloud: 2.21, -3.10, 1.77, -2.66",
        &lesson(Granularity::Channel),
        0
    ));
}

#[test]
fn ort_int4_tie_text() {
    let config = preset("ort-int4", PresetOptions::default()).unwrap();
    insta::assert_snapshot!(snapshot_lines(
        "quiet: 0.05, -0.08, 0.12, -0.15\nloud: 2.21, -3.10, 1.77, -2.66",
        &config,
        0
    ));
}

#[test]
fn torch_reciprocal_near_tie_text() {
    // PyTorch multiplies by 1/s: -0.15 × (1/s) is -7.4999995, not a tie; the text must
    // not print it as -7.5.
    let config = Overrides {
        scheme: Some(Scheme::Symmetric),
        quant_expr: Some(quantscope::core::config::QuantExpr::Reciprocal),
        ..Overrides::default()
    }
    .resolve("ort-int4")
    .unwrap();
    let text = snapshot_lines("0.05, -0.08, 0.12, -0.15", &config, 0);
    assert!(text.contains("= -7.4999995 → round → -7"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn calculator_unclamped_zero_point_text() {
    let config = preset("calculator", PresetOptions::default()).unwrap();
    insta::assert_snapshot!(snapshot_lines(
        "above: 1.20, 0.95, 1.44, 1.10, 0.88",
        &config,
        0
    ));
}

#[test]
fn q4_1_float_minimum_groups_text() {
    let config = Config {
        granularity: Granularity::Group(4),
        ..preset("q4_1", PresetOptions::default()).unwrap()
    };
    insta::assert_snapshot!(snapshot_lines(
        "0.91, 1.12, 0.97, 1.38, -0.2, 0.1, 0.3, 0.05",
        &config,
        0
    ));
}

#[test]
fn degenerate_rows_text() {
    let text = "zeros: 0, 0, 0\nconstant: 0.25, 0.25, 0.25";
    let asym = Overrides {
        scheme: Some(Scheme::Asymmetric),
        granularity: Some(Granularity::Channel),
        ..Overrides::default()
    };
    let lesson_asym = asym.resolve("lesson").unwrap();
    let q4_1 = asym.resolve("q4_1").unwrap();
    let torch = asym.resolve("torch-quint8").unwrap();
    let all = [
        (
            "lesson, asymmetric, zeros",
            snapshot_lines(text, &lesson_asym, 0),
        ),
        (
            "lesson, asymmetric, constant",
            snapshot_lines(text, &lesson_asym, 1),
        ),
        ("q4_1, zeros", snapshot_lines(text, &q4_1, 0)),
        ("q4_1, constant", snapshot_lines(text, &q4_1, 1)),
        ("torch-quint8, zeros", snapshot_lines(text, &torch, 0)),
    ]
    .map(|(name, lines)| format!("== {name}\n{lines}"))
    .join("\n");
    insta::assert_snapshot!(all);
}

#[test]
fn every_value_of_a_grouped_row_is_explained_once_in_column_order() {
    let m = Matrix::from_rows(&[&[0.04, -0.06, 0.09, 2.8, 0.05, -0.07, 0.08, -0.03]]).unwrap();
    let e = explain(&m, &lesson(Granularity::Group(4)), 0);
    assert_eq!(e.blocks.len(), 2);
    assert_eq!(e.blocks[1].cols, (4, 8));
    let cols: Vec<usize> = e.values.iter().map(|v| v.col).collect();
    assert_eq!(cols, (0..8).collect::<Vec<_>>());
    assert_eq!(codes(&e), [0, 0, 0, 7, 4, -6, 7, -3]);
    assert!(e.values[4..].iter().all(|v| v.block == 1));
    // Channels along columns: every value has a block of its own.
    let by_column = Config {
        axis: quantscope::core::config::Axis::Columns,
        ..lesson(Granularity::Channel)
    };
    let e = explain(&lesson_matrix(), &by_column, 1);
    assert_eq!(e.blocks.len(), 4);
    assert_eq!(e.blocks[2].rows, (0, 2));
}

#[test]
fn the_interview_notes_1_0_is_an_exact_tie_per_tensor() {
    // The interview-check exercise's hint says so: 1.0 / (2.0 / 127) = 63.5, half to even 64.
    let m = parse_text(
        "ch0: -0.5, -0.3, 0.2, 0.4\nch1: -2.0, -1.5, 1.0, 1.8\nch2: -0.1, -0.08, 0.05, 0.09",
    )
    .unwrap();
    let config = Overrides {
        bits: Some(8),
        ..Overrides::default()
    }
    .resolve("lesson")
    .unwrap();
    let v = explain(&m, &config, 1).values[2];
    assert_eq!(
        (v.x, v.ratio, v.tie, v.code),
        (1.0, 63.5, Some(Rounding::HalfEven), 64)
    );
}

#[test]
fn a_range_is_shown_widened_to_zero_only_where_the_analysis_widened_it() {
    // ONNX Runtime's asymmetric uint8 widens every range to include 0: the positive row is
    // widened, the row across 0 is not; the symmetric lesson preset never says so.
    let m = Matrix::from_rows(&[&[0.5, 1.0, 2.0, 1.5], &[-1.0, 0.5, 2.0, -0.5]]).unwrap();
    let ort = preset("ort-uint8", PresetOptions::default()).unwrap();
    let widened = |config: &Config, row: usize| explain(&m, config, row).blocks[0].widened_to_zero;
    assert!(widened(&ort, 0));
    assert_eq!(explain(&m, &ort, 0).blocks[0].range, (0.0, 2.0));
    assert!(!widened(&ort, 1));
    assert!(!widened(&lesson(Granularity::Channel), 0));
}
