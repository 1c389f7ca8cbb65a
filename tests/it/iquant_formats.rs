//! The i-quants and ternary types as formats of the whole program: their presets and
//! format-ladder entries (bits per weight part by part from the block structs), the analysis
//! of a preset against the reference's bytes (`tests/golden/iquants/`, libgguf 0.2.2 and
//! gguf-py), with and without an importance vector, the refusal of the types llama.cpp will
//! not quantize without one, and GGUF files of them read as stored
//! (`tests/golden/generate_iquant_gguf.py`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use quantscope::core::explain::explain_channel;
use quantscope::core::format::iquant::Group;
use quantscope::core::format::{Encoded, Format, FormatError, IQuant, Meta, Ternary};
use quantscope::core::format_ladder::{self, Selection, format_info};
use quantscope::core::importance::{Importance, ImportanceSource};
use quantscope::core::{AnalyseError, Options, analyse_weighted};
use quantscope::core::{Matrix, PresetOptions, preset};
use quantscope::io::export::worked_arithmetic as lines;
use quantscope::io::gguf::Gguf;
use quantscope::io::stored;

use crate::common::run;
use serde_json::Value;

use crate::common::golden::{self, bytes_of, f32s_of};

/// The eleven names, and the bits per weight of each block struct (ggml's `block_iq*`,
/// `block_tq*`).
const TYPES: [(&str, f64); 11] = [
    ("iq1_s", 1.5625),
    ("iq1_m", 1.75),
    ("tq1_0", 1.6875),
    ("iq2_xxs", 2.0625),
    ("tq2_0", 2.0625),
    ("iq2_xs", 2.3125),
    ("iq2_s", 2.5625),
    ("iq3_xxs", 3.0625),
    ("iq3_s", 3.4375),
    ("iq4_xs", 4.25),
    ("iq4_nl", 4.5),
];

fn fixture(name: &str) -> Value {
    golden::json("iquants", name)
}

fn format_of(name: &str) -> Format {
    match format_info(name).map(|i| i.coded) {
        Some(format_ladder::Coded::Row(f)) => f,
        other => panic!("{name}: {other:?}"),
    }
}

fn importance(values: Vec<f32>, cols: usize) -> Importance {
    let source = ImportanceSource::Activations {
        name: "fixture".into(),
        tokens: 1,
    };
    Importance::new(values, cols, source).unwrap()
}

/// A 4 x 512 matrix of smooth values with one quiet row.
fn matrix() -> Matrix {
    let rows: Vec<Vec<f32>> = (0..4)
        .map(|r| {
            let scale = if r == 1 { 0.01 } else { 1.0 };
            (0..512)
                .map(|c| ((r * 7 + c * 3) as f32 * 0.37).sin() * scale)
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

#[test]
fn every_type_is_a_format_with_its_structs_bits_per_weight() {
    let m = matrix();
    let names: Vec<&str> = TYPES.iter().map(|&(n, _)| n).collect();
    let sel = Selection::parse(&names.join(",")).unwrap();
    let imp = importance(vec![1.0; 512], 512);
    let inputs = format_ladder::Inputs {
        importance: Some(&imp),
        output: None,
    };
    let l = format_ladder::format_ladder_inputs(&m, &sel, None, inputs, &mut |_, _| true).unwrap();
    assert_eq!(l.entries.len(), TYPES.len());
    for (name, bpw) in TYPES {
        let e = l.entries.iter().find(|e| e.name == name).unwrap();
        assert_eq!(e.bits_per_weight, Some(bpw), "{name}");
        let sum: f64 = e.parts.iter().map(|p| p.bits_per_weight).sum();
        assert!((sum - bpw).abs() < 1e-12, "{name}: parts sum to {sum}");
        assert!(
            e.parts[0].name.starts_with("payload"),
            "{name}: {:?}",
            e.parts
        );
        assert!(e.parts.len() >= 2, "{name}: {:?}", e.parts);
        assert_eq!(
            e.total_bytes.map(|b| b as f64),
            Some(4.0 * 512.0 * bpw / 8.0),
            "{name} bytes"
        );
        let measured = e
            .measured()
            .unwrap_or_else(|| panic!("{name}: {:?}", e.result));
        assert!(measured.overall.rmse.is_finite() && measured.overall.rmse > 0.0);
        // The ternary types' reference reads no importance; the i-quants' does.
        assert_eq!(measured.weighted, name.starts_with("iq"), "{name}");
    }
    // Sorted by bits per weight.
    let bpws: Vec<f64> = l.entries.iter().filter_map(|e| e.bits_per_weight).collect();
    assert_eq!(bpws.len(), TYPES.len());
    assert!(bpws.is_sorted(), "{bpws:?}");
}

fn q_of(f: Format) -> IQuant {
    match f {
        Format::I(q) => q,
        _ => panic!("{f:?} is not an i-quant"),
    }
}

/// The distinct points of `groups` (`halves`: IQ3's two points of 4 per group).
fn distinct_points(groups: &[Group], halves: usize) -> BTreeSet<u16> {
    groups
        .iter()
        .flat_map(|g| g.points[..halves].to_vec())
        .collect()
}

#[test]
fn every_type_is_a_preset_and_its_report_costs_the_struct() {
    let m = matrix();
    let imp = importance(vec![1.0; 512], 512);
    for (name, bpw) in TYPES {
        let config = preset(name, PresetOptions::default()).unwrap();
        assert_eq!(config.format.map(|f| f.name), Some(name));
        let r = analyse_weighted(&m, &config, Some(&imp), Options::default()).unwrap();
        assert_eq!(r.memory.bits_per_weight, bpw, "{name}");
        assert_eq!(
            r.memory.total_bytes as f64,
            4.0 * 512.0 * bpw / 8.0,
            "{name}"
        );
        // Codes index the type's levels, within the configuration's code range.
        let f = format_of(name);
        let levels = f.grid().values.len() as i32;
        assert!(r.qmax >= levels - 1, "{name}: qmax {}", r.qmax);
        // Utilization counts a codebook's points used of those it has, else levels.
        let available = f.grid_points().unwrap_or_else(|| f.grid().levels());
        for c in &r.channels {
            assert!(c.max_code < levels, "{name}: code {}", c.max_code);
            assert_eq!(c.levels_available as usize, available, "{name}");
            assert!(c.levels_used as usize <= available);
            let row = m.values().row(c.index).to_vec();
            let mut enc = Encoded::default();
            let mut y = vec![0.0f32; row.len()];
            f.encode_row_weighted(&row, Some(imp.values()), &mut enc, &mut y)
                .unwrap();
            if let Some((used, all)) = enc.codebook_usage() {
                let q = q_of(f);
                let halves = if matches!(q, IQuant::Iq3Xxs | IQuant::Iq3S) {
                    2
                } else {
                    1
                };
                let Meta::Packed { bytes, .. } = &enc.meta else {
                    panic!("{name}: {:?}", enc.meta)
                };
                let points = distinct_points(&q.groups(bytes), halves);
                assert_eq!((c.levels_used as usize, all), (used, available), "{name}");
                assert_eq!(used, points.len(), "{name}");
                assert_eq!(c.utilization, used as f64 / all as f64, "{name}");
            }
        }
    }
}

/// The preset's analysis on each fixture matrix whose rows its blocks divide: every value
/// is gguf-py's `dequantize` of libgguf's bytes for that case, with and without the
/// importance vector.
#[test]
fn analysing_a_preset_gives_the_references_values() {
    let inputs = fixture("inputs.json");
    let (mut checked, mut refused) = (0, Vec::new());
    for (name, _) in TYPES {
        let f = format_of(name);
        let fx = fixture(&format!("{}.json", f.name()));
        let config = preset(name, PresetOptions::default()).unwrap();
        for case in fx["cases"].as_array().unwrap() {
            let mname = case["matrix"].as_str().unwrap();
            let rows: Vec<Vec<f32>> = inputs["matrices"][mname]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| f32s_of(r.as_str().unwrap()))
                .collect();
            let cols = rows[0].len();
            let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
            let m = Matrix::from_rows(&refs).unwrap();
            let imp = case["importance"].as_str().map(|k| {
                importance(
                    f32s_of(inputs["importance"][mname][k].as_str().unwrap()),
                    cols,
                )
            });
            let mut want = Vec::new();
            for b in case["bytes"].as_array().unwrap() {
                let e = f.unpack(&bytes_of(b.as_str().unwrap()), cols).unwrap();
                want.extend(e.decode());
            }
            let what = format!("{name} {mname} {:?}", case["importance"]);
            let r = match analyse_weighted(&m, &config, imp.as_ref(), Options::ONE_CONFIG) {
                Ok(r) => r,
                Err(AnalyseError::Format(e @ FormatError::NotFinite { row: Some(row), .. })) => {
                    // Refused only where the reference reconstructs a finite value as NaN
                    // or infinity (its f16 scale overflows), naming that row.
                    assert!(e.to_string().contains("f16 scale d"), "{what}: {e}");
                    let span = &want[row * cols..(row + 1) * cols];
                    assert!(span.iter().any(|v| !v.is_finite()), "{what}: {e}");
                    refused.push(what);
                    checked += 1;
                    continue;
                }
                Err(e) => panic!("{what}: {e}"),
            };
            let got: Vec<f32> = (0..rows.len()).flat_map(|i| r.row_dequantized(i)).collect();
            assert_eq!(got.len(), want.len(), "{what}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{what}: value {i}");
            }
            assert_eq!(
                r.quantized_with.is_some(),
                imp.is_some() && f.reads_importance(),
                "{what}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 66);
    // Only the ternary types on the edge matrix's row of values past f16's largest (their
    // f16 absmax overflows, and 0 times infinity is NaN).
    let want: Vec<String> = ["tq1_0", "tq2_0"]
        .into_iter()
        .flat_map(|t| {
            ["Null", "String(\"random\")", "String(\"sparse\")"].map(|i| format!("{t} e6x256 {i}"))
        })
        .collect();
    assert_eq!(refused, want);
}

#[test]
fn types_llama_cpp_refuses_without_importance_are_refused_naming_imatrix() {
    let m = matrix();
    for q in [IQuant::Iq2Xxs, IQuant::Iq2Xs, IQuant::Iq1S] {
        let name = q.name().to_ascii_lowercase();
        assert!(Format::I(q).needs_importance());
        let config = preset(&name, PresetOptions::default()).unwrap();
        let err = analyse_weighted(&m, &config, None, Options::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(q.name()), "{err}");
        assert!(err.contains("--imatrix"), "{err}");
        // The ladder lists it, unmeasured (so with no cost), with the reason.
        let l = format_ladder::format_ladder(&m, &Selection::parse(&name).unwrap(), None);
        let e = &l.entries[0];
        let reason = e.result.as_ref().unwrap_err();
        assert!(reason.contains("--imatrix"), "{reason}");
        assert_eq!(e.bits_per_weight, None);
    }
    for f in [
        Format::I(IQuant::Iq1M),
        Format::I(IQuant::Iq2S),
        Format::I(IQuant::Iq4Nl),
        Format::T(Ternary::Tq1_0),
    ] {
        assert!(!f.needs_importance(), "{}", f.name());
    }
}

#[test]
fn a_row_its_blocks_do_not_divide_falls_back_to_iq4_nl_or_is_refused() {
    let matrix = |cols: usize| {
        let rows: Vec<Vec<f32>> = (0..2)
            .map(|r| {
                (0..cols)
                    .map(|c| ((r * 7 + c) as f32 * 0.37).sin())
                    .collect()
            })
            .collect();
        let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        Matrix::from_rows(&refs).unwrap()
    };
    // Rows of 96: IQ4_XS's 256 do not divide them, llama.cpp's fallback IQ4_NL's 32 do.
    let m = matrix(96);
    let xs = analyse_weighted(
        &m,
        &preset("iq4_xs", PresetOptions::default()).unwrap(),
        None,
        Options::default(),
    )
    .unwrap();
    let nl = analyse_weighted(
        &m,
        &preset("iq4_nl", PresetOptions::default()).unwrap(),
        None,
        Options::default(),
    )
    .unwrap();
    assert_eq!(xs.overall, nl.overall);
    // Rows of 100: no fallback fits, and the reason says so.
    let err = analyse_weighted(
        &matrix(100),
        &preset("iq4_xs", PresetOptions::default()).unwrap(),
        None,
        Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("256") && err.contains("100"), "{err}");
}

#[test]
fn values_too_large_for_the_f16_scale_are_refused_not_reported_as_nan() {
    let mut row = vec![0.25f32; 256];
    row[3] = 1e9;
    let m = Matrix::from_rows(&[&row]).unwrap();
    for name in ["tq1_0", "tq2_0", "iq4_xs"] {
        let config = preset(name, PresetOptions::default()).unwrap();
        match analyse_weighted(&m, &config, None, Options::default()) {
            Ok(r) => assert!(
                r.row_dequantized(0).iter().all(|v| v.is_finite()),
                "{name} gave a non-finite value"
            ),
            Err(e) => assert!(e.to_string().contains("block 0"), "{name}: {e}"),
        }
    }
}

#[test]
fn list_presets_and_the_cli_refusal_name_the_types() {
    let o = run::quantscope(&["report", "--list-presets"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    for (name, _) in TYPES {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(name)),
            "{name} missing from --list-presets:\n{text}"
        );
    }
    let m: String = (0..2)
        .map(|r| {
            let row: Vec<String> = (0..256)
                .map(|c| format!("{}", ((r * 5 + c) as f32 * 0.21).cos()))
                .collect();
            row.join(" ") + "\n"
        })
        .collect();
    let o = run::quantscope_with_input(&["report", "-", "--preset", "iq2_xs"], Some(m.as_bytes()));
    assert!(!o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("IQ2_XS") && err.contains("--imatrix"), "{err}");
    let o = run::quantscope_with_input(&["report", "-", "--preset", "iq3_s"], Some(m.as_bytes()));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `tests/golden/iquants/iquants.gguf` (written by `generate_iquant_gguf.py` with gguf-py's
/// `GGUFWriter` from libgguf's bytes).
fn gguf_path() -> PathBuf {
    golden::dir("iquants").join("iquants.gguf")
}

#[test]
fn stored_tensors_of_every_type_decode_as_gguf_py_dequantizes_them() {
    let g = Gguf::open(&gguf_path()).unwrap();
    for (name, _) in TYPES {
        let t = g.info(name).unwrap();
        assert!(stored::decodes(t.ggml_type), "{name}");
        let ours = stored::dequantize(&g, t).unwrap();
        let theirs = g.load(&format!("{name}.dequant")).unwrap();
        assert_eq!(ours.shape(), theirs.shape(), "{name}");
        let bits = |m: &Matrix| -> Vec<u32> { m.values().iter().map(|v| v.to_bits()).collect() };
        assert_eq!(bits(&ours), bits(&theirs), "{name}");
    }
}

#[test]
fn the_stored_view_counts_levels_collapse_and_the_structs_bits() {
    let g = Gguf::open(&gguf_path()).unwrap();
    for (name, bpw) in TYPES {
        let s = stored::inspect(&g, g.info(name).unwrap()).unwrap();
        // A codebook's points, else the grid's levels.
        let f = format_of(name);
        let levels = f.grid_points().unwrap_or_else(|| f.grid().levels());
        assert_eq!(s.levels, levels, "{name}");
        assert_eq!(s.bits_per_weight, bpw, "{name}");
        let parts: f64 = s.layout.iter().map(|p| p.bits_per_weight).sum();
        assert!((parts - bpw).abs() < 1e-12, "{name}");
        // Row 1 is all zeros: every scale 0, so collapsed with every block.
        assert!(s.rows[1].collapsed, "{name}");
        assert_eq!(s.collapsed_rows, 1, "{name}: {:?}", s.rows);
        assert!(s.rows[0].used > 1 && s.rows[0].used <= levels, "{name}");
    }
}

#[test]
fn report_and_scan_read_the_types_as_stored() {
    let path = gguf_path();
    let path = path.to_str().unwrap();
    let o = run::quantscope(&["report", path, "--tensor", "iq3_xxs"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("iq3_xxs (IQ3_XXS) as stored in"), "{out}");
    assert!(out.contains("3.0625 bits per weight in all"), "{out}");
    let o = run::quantscope(&["scan", path, "--format", "csv"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (name, _) in TYPES {
        let upper = name.to_ascii_uppercase();
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("{name},")) && l.contains(&upper)),
            "{name} not in\n{out}"
        );
    }
}

#[test]
fn explain_shows_each_group_of_8_its_lattice_point_signs_and_scale() {
    let m = matrix();
    let imp = importance((0..512).map(|i| 0.5 + (i % 5) as f32).collect(), 512);
    for (name, _) in TYPES {
        let config = preset(name, PresetOptions::default()).unwrap();
        let r = analyse_weighted(&m, &config, Some(&imp), Options::ONE_CONFIG).unwrap();
        let e = explain_channel(&m, &r, 2);
        let w = e.format.as_ref().unwrap();
        let lines = lines(&e);
        let y = r.row_dequantized(2);
        let lattice = !name.starts_with("iq4") && !name.starts_with("tq");
        if !lattice {
            assert!(w.groups.is_empty(), "{name}");
            assert!(!lines.iter().any(|l| l.contains("grid point")), "{name}");
            continue;
        }
        assert_eq!(w.groups.len(), 512 / 8, "{name}");
        for g in &w.groups {
            // The point, signed, shifted and scaled, is the report's reconstruction.
            for j in 0..8 {
                let v = f32::from(g.values[j]);
                let v = if g.signs & (1 << j) != 0 { -v } else { v };
                assert_eq!(
                    (g.step * (v + g.shift)).to_bits(),
                    y[g.start + j].to_bits(),
                    "{name} col {}",
                    g.start + j
                );
            }
        }
        let g = &w.groups[1];
        let head = "group (cols 8..16): grid point";
        let line = lines.iter().find(|l| l.trim_start().starts_with(head));
        let line = line.unwrap_or_else(|| panic!("{name}: {lines:#?}"));
        assert!(line.contains(&format!("#{}", g.points[0])), "{line}");
        assert!(line.contains(&format!("scale {}", g.scale)), "{line}");
        assert!(line.contains("signs "), "{line}");
    }
}
