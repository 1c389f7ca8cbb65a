//! Formats with their own block layouts as the active configuration: `analyse` with a
//! format preset gives the encoder's codes and reconstruction bit for bit, the format's
//! bits per weight, and the same numbers as the format ladder; their settings are fixed;
//! their worked arithmetic shows how the scales were formed.

use std::process::Command;

use quantscope::core::compare::differences;
use quantscope::core::config::ConfigError;
use quantscope::core::explain::{FormatBlock, explain_channel};
use quantscope::core::format::Encoded;
use quantscope::core::format_ladder::{Coded, FORMATS, Selection, format_ladder, grid_of};
use quantscope::core::presets::Overrides;
use quantscope::core::{Matrix, PresetOptions, analyse, preset};

/// Rows whose spreads differ by decades (1e-3 to 10), 512 values each, one all zero.
fn matrix() -> Matrix {
    let rows: Vec<Vec<f32>> = (0..6)
        .map(|r| {
            if r == 5 {
                return vec![0.0; 512];
            }
            let spread = 10f32.powi(r - 3);
            (0..512)
                .map(|c| spread * (((c * 37 + r as usize * 11) % 29) as f32 - 14.0) / 9.0)
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

/// llama.cpp refuses to quantize the format without an importance matrix.
fn needs_importance(coded: Coded) -> bool {
    matches!(coded, Coded::Row(f) if f.needs_importance())
}

#[test]
fn every_format_is_a_preset_that_matches_the_format_ladder() {
    let m = matrix();
    let ladder = format_ladder(&m, &Selection::formats(), None);
    // Those llama.cpp refuses without an importance matrix are measured with one in
    // tests/it/iquant_formats.rs.
    for info in FORMATS.iter().filter(|i| !needs_importance(i.coded)) {
        let config = preset(info.name, PresetOptions::default()).unwrap();
        let r = analyse(&m, &config).unwrap();
        let entry = ladder.entries.iter().find(|e| e.name == info.name).unwrap();
        let measured = entry.measured().unwrap();
        assert_eq!(
            Some(r.memory.bits_per_weight),
            entry.bits_per_weight,
            "{}",
            info.name
        );
        assert_eq!(r.overall, measured.overall, "{}", info.name);
        assert_eq!(
            r.collapsed_channels, measured.collapsed_channels,
            "{}",
            info.name
        );
        assert_eq!(
            r.ladder.len(),
            1,
            "{}: one rung, the format's blocks",
            info.name
        );
        assert!(r.ladder[0].active && r.ladder[0].overall == r.overall);
        // A codebook counts its points (the i-quant lattices), the others their levels.
        let levels = match info.coded {
            Coded::Row(f) => f.grid_points().unwrap_or_else(|| grid_of(info).levels()),
            _ => grid_of(info).levels(),
        } as u32;
        for c in &r.channels {
            assert_eq!(c.levels_available, levels, "{}", info.name);
            assert!(c.levels_used <= levels, "{}", info.name);
            let y = r.row_dequantized(c.index);
            let one_value = y.iter().all(|&v| v == y[0]);
            assert_eq!(
                c.collapsed,
                !c.constant && one_value,
                "{} row {}",
                info.name,
                c.index
            );
        }
    }
}

#[test]
fn a_row_format_gives_its_encoders_codes_and_values_bit_for_bit() {
    let m = matrix();
    for info in FORMATS.iter().filter(|i| !needs_importance(i.coded)) {
        let Coded::Row(f) = info.coded else { continue };
        let r = analyse(&m, &preset(info.name, PresetOptions::default()).unwrap()).unwrap();
        let mut enc = Encoded::default();
        for row in 0..m.shape().0 {
            let x: Vec<f32> = m.values().row(row).to_vec();
            let mut y = vec![0.0f32; x.len()];
            f.encode_row_into(&x, &mut enc, &mut y).unwrap();
            let codes: Vec<i32> = enc.codes.iter().map(|&c| i32::from(c)).collect();
            assert_eq!(r.row_codes(row), codes, "{} row {row}", info.name);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&r.row_dequantized(row)),
                bits(&y),
                "{} row {row}",
                info.name
            );
        }
    }
}

#[test]
fn bits_per_weight_come_from_each_layout() {
    let m = matrix();
    for (name, bpw) in [
        ("q2_k", 2.625),
        ("q3_k", 3.4375),
        ("q4_k", 4.5),
        ("q5_k", 5.5),
        ("q6_k", 6.5625),
        ("mxfp4", 4.25),
        ("nvfp4", 4.5),
        ("nf4", 4.5),
    ] {
        let r = analyse(&m, &preset(name, PresetOptions::default()).unwrap()).unwrap();
        assert_eq!(r.memory.bits_per_weight, bpw, "{name}");
    }
}

#[test]
fn a_formats_settings_are_fixed_and_its_difference_is_the_format() {
    let o = Overrides {
        bits: Some(3),
        ..Overrides::default()
    };
    assert_eq!(
        o.resolve("q4_k"),
        Err(ConfigError::FormatFixed {
            format: "q4_k",
            setting: "bits"
        })
    );
    assert!(Overrides::default().resolve("q4_k").is_ok());
    let a = preset("q4_k", PresetOptions::default()).unwrap();
    let b = preset("mxfp4", PresetOptions::default()).unwrap();
    let d = differences(&a, &b);
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].key, d[0].a.as_str(), d[0].b.as_str()),
        ("format", "q4_k", "mxfp4")
    );
    assert!(differences(&a, &a).is_empty());
}

#[test]
fn q4_k_worked_arithmetic_forms_each_step_from_d_and_the_6_bit_scale() {
    let m = matrix();
    let config = preset("q4_k", PresetOptions::default()).unwrap();
    let r = analyse(&m, &config).unwrap();
    let e = explain_channel(&m, &r, 2);
    let w = e.format.as_ref().unwrap();
    assert_eq!(w.blocks.len(), 512 / 32);
    for (i, b) in w.blocks.iter().enumerate() {
        let FormatBlock::KQuant {
            d,
            dmin,
            scale,
            min_code,
            bits,
            step,
            min,
            ..
        } = *b
        else {
            panic!("not a k-quant block: {b:?}")
        };
        assert_eq!(bits, 6);
        assert!((0..64).contains(&scale) && (0..64).contains(&min_code));
        assert_eq!(step, d * scale as f32);
        assert_eq!(min, dmin * min_code as f32);
        for v in e.values.iter().filter(|v| v.block == i) {
            // The dequantizer's y = d·scale·q − dmin·min, in f32.
            assert_eq!(v.dequantized, step * v.code as f32 - min, "col {}", v.col);
        }
    }
}

#[test]
fn mxfp4_worked_arithmetic_shows_the_shared_exponent_and_what_collapses_under_it() {
    // One block of 32: amax 3 gives floor(log2 3) = 1, e = 1 - 2 + 127 = 126, scale 1/2;
    // 0.1 / 0.5 = 0.2 is nearer 0 than 0.5: it rounds to zero under the shared exponent.
    let mut row = vec![0.0f32; 32];
    row[0] = 3.0;
    row[1] = 0.1;
    row[2] = 0.2;
    let m = Matrix::from_rows(&[&row]).unwrap();
    let r = analyse(&m, &preset("mxfp4", PresetOptions::default()).unwrap()).unwrap();
    let e = explain_channel(&m, &r, 0);
    let w = e.format.as_ref().unwrap();
    assert_eq!(
        w.blocks[0],
        FormatBlock::Mxfp4 {
            cols: (0, 32),
            amax: 3.0,
            floor_log2: 1,
            emax: 2,
            exponent: 126,
            scale: 0.5,
        }
    );
    assert_eq!(e.values[0].dequantized, 3.0);
    assert_eq!(e.values[1].dequantized, 0.0, "0.1 collapses to zero");
    assert_eq!(
        e.values[2].dequantized, 0.25,
        "0.2 / 0.5 = 0.4 → 0.5 → 0.25"
    );
    let text = quantscope::io::export::worked_arithmetic(&e).join("\n");
    assert!(
        text.contains("amax = 3 → floor(log2 amax) = 1 → e = 1 - 2 + 127 = 126 → scale 2^-1 = 0.5"),
        "{text}"
    );
}

#[test]
fn nf4_dq_worked_arithmetic_shows_how_the_8_bit_code_and_second_scale_form_the_absmax() {
    // Two rows of 64: a loud row (absmax 2) and a quiet one (absmax 0.01). The offset is
    // their mean absmax, 1.005; the second-level scale is the larger |absmax - offset|,
    // 0.995; the quiet block's (0.01 - 1.005) / 0.995 = -1 takes code 0, the signed dynamic
    // map's most negative value -0.99297 (the map has no -1), so its stored absmax is
    // -0.99297 x 0.995 + 1.005 = 0.017: 70 % more than its true absmax.
    let loud: Vec<f32> = (0..64).map(|i| 2.0 * ((i as f32) * 0.3).sin()).collect();
    let mut loud = loud;
    loud[5] = 2.0;
    let quiet: Vec<f32> = loud.iter().map(|v| v * 0.005).collect();
    let m = Matrix::from_rows(&[&loud, &quiet]).unwrap();
    let r = analyse(&m, &preset("nf4-dq", PresetOptions::default()).unwrap()).unwrap();
    let e = explain_channel(&m, &r, 1);
    let w = e.format.as_ref().unwrap();
    let FormatBlock::Nf4Dq {
        cols,
        amax,
        offset,
        dq_block,
        second_scale,
        code,
        map_value,
        scale,
    } = w.blocks[0]
    else {
        panic!("{:?}", w.blocks[0])
    };
    assert_eq!(cols, (0, 64));
    assert_eq!(amax, 0.01);
    assert_eq!(dq_block, 0);
    assert!((offset - 1.005).abs() < 1e-6, "{offset}");
    assert!((second_scale - 0.995).abs() < 1e-6, "{second_scale}");
    assert_eq!(code, 0, "the map's most negative value");
    assert_eq!(map_value, quantscope::core::format::nf4::DYNAMIC_MAP[0]);
    assert!((map_value + 0.992_968_7).abs() < 1e-6, "{map_value}");
    assert!((scale - 0.017).abs() < 1e-4, "{scale}");
    assert_eq!(scale, map_value * second_scale + offset);
    // The stored absmax is the report's block scale: what the values are multiplied by.
    assert_eq!(scale, r.blocks.at(r.block_index(1, 0)).scale);
    let text = quantscope::io::export::worked_arithmetic(&e).join("\n");
    assert!(
        text.contains("→ 8-bit code 0 = -0.992969 → stored absmax = -0.992969 × 0.995"),
        "{text}"
    );
}

#[test]
fn the_command_line_takes_a_format_preset_and_refuses_its_settings() {
    let bin = env!("CARGO_BIN_EXE_quantscope");
    let out = Command::new(bin)
        .args(["report", "-", "--preset", "q6_k", "--no-ladder"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            let line: Vec<String> = (0..256)
                .map(|i| format!("{}", (i as f32 * 0.37).sin()))
                .collect();
            c.stdin
                .take()
                .unwrap()
                .write_all(line.join(" ").as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("quantscope: q6_k: llama.cpp Q6_K"),
        "{text}"
    );
    assert!(text.contains("bits per weight          6.5625"), "{text}");
    let refused = Command::new(bin)
        .args([
            "report",
            "assets/scenarios/formats.txt",
            "--preset",
            "q4_k",
            "--granularity",
            "channel",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(refused.stdout.is_empty());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("q4_k is a format with its own block layout: its granularity is fixed"),
        "{err}"
    );
}
