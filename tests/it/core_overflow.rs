//! Corners of the quantization core that were bugs: finite input under a valid configuration
//! that overflowed a storage type or the arithmetic (NaN metrics, overflow panics, wrong
//! codes). Each must now give finite numbers or name the block it cannot represent.

use quantscope::core::config::{
    Config, Conventions, Degenerate, NonFinite, RangeKind, ScaleDtype, SymScale,
};
use quantscope::core::{AnalyseError, Matrix, PresetOptions, Report, analyse, preset};

use crate::common::core as core_helpers;

use core_helpers::{ort_int8, rows};

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
