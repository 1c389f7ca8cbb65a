//! The quantization core on small matrices worked by hand: a single value under every preset,
//! groups longer than a row, channels along columns, the code range a row spans, constant
//! rows, and the ladder's order when channels are along columns.

use quantscope::core::config::{Axis, Config};
use quantscope::core::{Granularity, PRESETS, PresetOptions, Scheme, analyse, preset};

use crate::common::core as core_helpers;

use core_helpers::{ort_int8, rows};

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
    // No group of the ladder's own list is shorter than 7 values: the row gets groups of 4
    // instead, beside the active one.
    let ladder: Vec<Granularity> = r.ladder.iter().map(|rung| rung.granularity).collect();
    assert_eq!(
        ladder,
        [
            Granularity::Tensor,
            Granularity::Channel,
            Granularity::Group(50),
            Granularity::Group(4)
        ]
    );
    assert!(r.ladder[..3].iter().all(|rung| rung.scales == 1));
    assert_eq!(r.ladder[3].scales, 2);
    assert_eq!(
        r.ladder.iter().map(|rung| rung.active).collect::<Vec<_>>(),
        [false, false, true, false]
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
