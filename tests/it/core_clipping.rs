//! Clipping worked by hand: the percentile range clips an outlier, and the MSE search beats
//! min-max on a heavy-tailed row. (That MSE never loses to min-max on any generated matrix is
//! a property in tests/it/core_props.rs.)

use quantscope::core::config::{Clipping, Config};
use quantscope::core::{PresetOptions, analyse, preset};

use crate::common::core as core_helpers;

use core_helpers::{block_sse, ort_int8, rows};

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
