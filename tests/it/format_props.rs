//! Properties of `core::format` on random rows: codes in range, each value reconstructed to
//! the nearest point its sub-block can represent, encode∘decode idempotent where the format
//! is, ggml bytes that read back to the same encoding, and bits per weight from the layout.

use proptest::prelude::*;
use quantscope::core::format::{
    Encoded, Format, Fp8Formula, Fp8Kind, Fp8Layout, Fp8Scheme, KQuant, Legacy, nf4,
};

/// Rows of whole blocks (512 values) whose 32-value stretches each have their own scale
/// (10^-6 .. 10^2), with some zero stretches and some one-signed ones.
fn row() -> impl Strategy<Value = Vec<f32>> {
    (
        prop::collection::vec(-1.0f32..1.0, 512),
        prop::collection::vec((-6i32..3, 0u8..6), 16),
    )
        .prop_map(|(v, scales)| {
            v.chunks(32)
                .zip(&scales)
                .flat_map(|(c, &(e, kind))| {
                    let s = 10f32.powi(e);
                    c.iter().map(move |&x| match kind {
                        0 => 0.0,
                        1 => x.abs() * s,
                        _ => x * s,
                    })
                })
                .collect()
        })
}

/// How far `x` is from the nearest point `grid * step - min`.
fn nearest_distance(x: f32, grid: &[f32], step: f32, min: f32) -> f32 {
    grid.iter()
        .filter(|g| g.is_finite())
        .map(|&g| (x - (g * step - min)).abs())
        .fold(f32::INFINITY, f32::min)
}

fn check_nearest(format: Format, x: &[f32], e: &Encoded) -> Result<(), TestCaseError> {
    let values = e.decode();
    let grid = format.grid().values;
    // k-quants reach only the codes of their width; the grid lists exactly those.
    for sb in e.sub_blocks() {
        if sb.step == 0.0 {
            continue;
        }
        for i in sb.start..sb.start + sb.len {
            let err = (x[i] - values[i]).abs();
            let best = nearest_distance(x[i], &grid, sb.step, sb.min);
            // The reference divides by the step in f32, so a near-tie may round either way.
            let tol = 1e-5 * (x[i].abs() + sb.min.abs() + sb.step.abs()) + 1e-30;
            prop_assert!(
                err <= best + tol,
                "{}: value {i} = {:e} -> {:e}, nearest point is {best:e} away",
                format.name(),
                x[i],
                values[i]
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn codes_in_range_and_values_nearest(x in row()) {
        for format in Format::ENCODERS {
            let e = format.encode_row(&x).unwrap();
            let levels = match format {
                Format::K(k) => 1usize << k.code_bits(),
                _ => 16,
            };
            prop_assert!(e.codes.iter().all(|&c| usize::from(c) < levels), "{}", format.name());
            prop_assert_eq!(e.codes.len(), x.len());
            check_nearest(format, &x, &e)?;
        }
    }

    #[test]
    fn packed_bytes_read_back(x in row()) {
        for format in Format::ENCODERS {
            let e = format.encode_row(&x).unwrap();
            let bytes = format.pack(&e);
            let bpw = format.layout().bits_per_weight();
            prop_assert_eq!(bytes.len() * 8, (bpw * x.len() as f64) as usize);
            let back = format.unpack(&bytes, x.len()).unwrap();
            prop_assert_eq!(&back, &e, "{}", format.name());
            prop_assert_eq!(back.decode(), e.decode());
        }
    }

    /// E2M1 and NF4 re-encode their own reconstruction to the same codes and scales.
    #[test]
    fn fp4_and_nf4_are_idempotent(x in row()) {
        for format in [Format::Mxfp4, Format::Nvfp4, Format::Nf4] {
            let e = format.encode_row(&x).unwrap();
            let y = e.decode();
            let again = format.encode_row(&y).unwrap();
            prop_assert_eq!(&again.codes, &e.codes, "{}", format.name());
            prop_assert_eq!(again.decode(), y);
        }
    }

    /// FP8 re-encodes its own reconstruction to the same codes, per tensor, channel and tile
    /// (the values may move by an ulp: the scale of the reconstruction is recomputed).
    #[test]
    fn fp8_is_idempotent(x in row(), e5 in any::<bool>(), formula in 0usize..3) {
        let kind = if e5 { Fp8Kind::E5M2 } else { Fp8Kind::E4M3 };
        let formula = [Fp8Formula::Divide, Fp8Formula::Reciprocal, Fp8Formula::InverseScale][formula];
        for layout in [Fp8Layout::Tensor, Fp8Layout::Channel, Fp8Layout::Tiles { rows: 4, cols: 32 }] {
            let scheme = Fp8Scheme { kind, formula, layout };
            let m = ndarray::Array2::from_shape_vec((8, 64), x.clone()).unwrap();
            let e = scheme.encode(&m.view(), None);
            let y = ndarray::Array2::from_shape_vec((8, 64), scheme.decode(&e)).unwrap();
            let again = scheme.encode(&y.view(), None);
            prop_assert_eq!(again.codes, e.codes, "{:?} {:?}", formula, layout);
        }
    }
}

#[test]
fn bits_per_weight_from_the_layout() {
    let want = [
        (Format::Q2K, 2.625),
        (Format::Q3K, 3.4375),
        (Format::Q4K, 4.5),
        (Format::Q5K, 5.5),
        (Format::Q6K, 6.5625),
        (Format::Mxfp4, 4.25),
        (Format::Nvfp4, 4.5),
        (Format::Nf4, 4.5),
        (Format::Legacy(Legacy::Q4_0), 4.5),
        (Format::Legacy(Legacy::Q4_1), 5.0),
        (Format::Legacy(Legacy::Q5_0), 5.5),
        (Format::Legacy(Legacy::Q5_1), 6.0),
        (Format::Legacy(Legacy::Q8_0), 8.5),
    ];
    for (format, bpw) in want {
        let layout = format.layout();
        assert_eq!(layout.bits_per_weight(), bpw, "{}", format.name());
        assert_eq!(
            layout.block_bits() as usize,
            format.block_bytes() * 8,
            "{}: parts add up to the block's bytes",
            format.name()
        );
    }
    let q4k = Format::Q4K.layout().parts_per_weight();
    assert_eq!(
        q4k.iter().map(|p| p.1).collect::<Vec<_>>(),
        [4.0, 0.375, 0.125]
    );
    let dq = nf4::dq_layout();
    assert!(
        (dq.bits_per_weight() - 4.127).abs() < 1e-3,
        "{}",
        dq.bits_per_weight()
    );
    assert!(dq.bits_per_weight_of(4096 * 4096) > dq.bits_per_weight());
    for k in KQuant::ALL {
        assert_eq!(k.sub_blocks() * k.sub_len(), 256);
    }
}

#[test]
fn grids_count_distinct_levels() {
    assert_eq!(Format::Mxfp4.grid().levels(), 15, "E2M1 has two zeros");
    assert_eq!(Format::Nf4.grid().levels(), 16);
    assert_eq!(Format::Q3K.grid().levels(), 8);
    let e = Format::Mxfp4.encode_row(&[0.0f32; 32]).unwrap();
    let u = Format::Mxfp4.grid().usage(&e.codes);
    assert_eq!((u.levels, u.used, u.span), (15, 1, Some((0.0, 0.0))));
    // amax 16 gives the shared exponent 2^(4 - 2) = 4 (E2M1 step 0.5 times 4 = 2): -16 is
    // E2M1 -4, and 15 (7.5 steps, past the midpoint 7 between 6 and 8) is E2M1 4.
    let x: Vec<f32> = (0..32).map(|i| i as f32 - 16.0).collect();
    let e = Format::Mxfp4.encode_row(&x).unwrap();
    let u = Format::Mxfp4.grid().usage(&e.codes);
    assert_eq!(u.span, Some((-4.0, 4.0)));
}

#[test]
fn rows_of_partial_blocks_are_refused() {
    assert!(Format::Q4K.encode_row(&[0.0; 100]).is_err());
    assert!(Format::Q4K.unpack(&[0u8; 10], 256).is_err());
    assert!(Format::Legacy(Legacy::Q8_0).encode_row(&[0.0; 32]).is_err());
}
