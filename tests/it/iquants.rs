//! llama.cpp's i-quants and ternary types against their references
//! (`tests/golden/generate_iquants.py`): libgguf 0.2.2's `quantize_rows` (ggml's
//! `quantize_<type>`) for the bytes, with and without importance vectors, and gguf-py's
//! `dequantize` for the values, bit for bit; the codebooks against gguf-py's `grid_hex`.

use quantscope::core::format::FormatError;
use quantscope::core::format::iquant::{IQuant, tables};
use quantscope::core::format::ternary::{self, Ternary};
use serde_json::Value;

use crate::common::files::f32_bytes;
use crate::common::golden::{self, XorShift, bulk_matrix, bytes_of, f32s_of, fnv1a};

/// A type under test.
#[derive(Debug, Clone, Copy)]
enum Ty {
    I(IQuant),
    T(Ternary),
}

impl Ty {
    fn of(name: &str) -> Option<Self> {
        IQuant::ALL
            .into_iter()
            .find(|q| q.name() == name)
            .map(Self::I)
            .or_else(|| {
                Ternary::ALL
                    .into_iter()
                    .find(|t| t.name() == name)
                    .map(Self::T)
            })
    }

    fn row_bytes(self, n: usize) -> usize {
        match self {
            Self::I(q) => n / q.block_len() * q.block_bytes(),
            Self::T(t) => n / ternary::BLOCK * t.block_bytes(),
        }
    }

    fn encode(self, x: &[f32], importance: Option<&[f32]>) -> Result<Vec<u8>, FormatError> {
        let mut out = vec![0u8; self.row_bytes(x.len())];
        match self {
            Self::I(q) => q.encode_row(x, importance, &mut out)?,
            Self::T(t) => t.encode_row(x, &mut out),
        }
        Ok(out)
    }

    fn decode(self, bytes: &[u8], n: usize) -> Vec<f32> {
        let mut codes = vec![0u8; n];
        let mut steps = Vec::new();
        let mut out = vec![0.0f32; n];
        match self {
            Self::I(q) => {
                q.unpack_row(bytes, &mut codes, &mut steps);
                q.decode(&codes, &steps, &mut out);
            }
            Self::T(t) => {
                t.unpack_row(bytes, &mut codes, &mut steps);
                for ((c, o), d) in codes
                    .chunks(ternary::BLOCK)
                    .zip(out.chunks_mut(ternary::BLOCK))
                    .zip(&steps)
                {
                    for (o, &c) in o.iter_mut().zip(c) {
                        *o = d * (f32::from(c) - 1.0);
                    }
                }
            }
        }
        out
    }
}

fn fixture(name: &str) -> Value {
    golden::json("iquants", name)
}

/// Checks every case of `<name>.json`: bytes row by row, values by hash. Returns the cases.
fn check(name: &str) -> usize {
    let ty = Ty::of(name).unwrap();
    let inputs = fixture("inputs.json");
    let fx = fixture(&format!("{name}.json"));
    let cases = fx["cases"].as_array().unwrap();
    for case in cases {
        let m = case["matrix"].as_str().unwrap();
        let imp_name = case["importance"].as_str();
        let imp = imp_name.map(|k| f32s_of(inputs["importance"][m][k].as_str().unwrap()));
        let what = format!("{name} {m} importance {imp_name:?}");
        let mut values = Vec::new();
        for (r, (row, want)) in inputs["matrices"][m]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["bytes"].as_array().unwrap())
            .enumerate()
        {
            let x = f32s_of(row.as_str().unwrap());
            let got = ty.encode(&x, imp.as_deref()).unwrap();
            let want = bytes_of(want.as_str().unwrap());
            if got != want {
                let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap();
                panic!(
                    "{what}: row {r} differs from byte {at}:\n got {:02x?}\nwant {:02x?}",
                    &got[at.saturating_sub(4)..(at + 12).min(got.len())],
                    &want[at.saturating_sub(4)..(at + 12).min(want.len())]
                );
            }
            values.extend(ty.decode(&want, x.len()));
        }
        assert_eq!(
            fnv1a(f32_bytes(&values)),
            case["dequantized"].as_str().unwrap(),
            "{what}: values"
        );
    }
    cases.len()
}

#[test]
fn iq1_s() {
    assert_eq!(check("IQ1_S"), 4);
}

#[test]
fn iq1_m() {
    assert_eq!(check("IQ1_M"), 6);
}

#[test]
fn iq2_xxs() {
    assert_eq!(check("IQ2_XXS"), 4);
}

#[test]
fn iq2_xs() {
    assert_eq!(check("IQ2_XS"), 4);
}

#[test]
fn iq2_s() {
    assert_eq!(check("IQ2_S"), 6);
}

#[test]
fn iq3_xxs() {
    assert_eq!(check("IQ3_XXS"), 6);
}

#[test]
fn iq3_s() {
    assert_eq!(check("IQ3_S"), 6);
}

#[test]
fn iq4_nl() {
    assert_eq!(check("IQ4_NL"), 12);
}

#[test]
fn iq4_xs() {
    assert_eq!(check("IQ4_XS"), 6);
}

#[test]
fn tq1_0() {
    assert_eq!(check("TQ1_0"), 6);
}

#[test]
fn tq2_0() {
    assert_eq!(check("TQ2_0"), 6);
}

/// Every type on the 64x1024 matrix, without (where allowed) and with an importance vector.
fn check_bulk(names: &[&str]) {
    let fx = fixture("bulk.json");
    let (rows, cols) = (64, 1024);
    let x = bulk_matrix(rows, cols);
    assert_eq!(fnv1a(f32_bytes(&x)), fx["input"].as_str().unwrap(), "input");
    let mut g = XorShift(0x1A_7B1C);
    let imp: Vec<f32> = (0..cols)
        .map(|_| (0.25 + 4.0 * g.uniform()) as f32)
        .collect();
    assert_eq!(
        fnv1a(f32_bytes(&imp)),
        fx["importance_hash"].as_str().unwrap()
    );
    for &name in names {
        let ty = Ty::of(name).unwrap();
        for (key, w) in [("none", None), ("importance", Some(imp.as_slice()))] {
            let want = &fx["types"][name][key];
            if want.is_null() {
                continue;
            }
            let (mut bytes, mut values) = (Vec::new(), Vec::new());
            for row in x.chunks(cols) {
                let b = ty.encode(row, w).unwrap();
                values.extend(ty.decode(&b, cols));
                bytes.extend(b);
            }
            assert_eq!(
                fnv1a(bytes),
                want["bytes"].as_str().unwrap(),
                "{name} {key} bytes"
            );
            assert_eq!(
                fnv1a(f32_bytes(&values)),
                want["dequantized"].as_str().unwrap(),
                "{name} {key} values"
            );
        }
    }
}

#[test]
fn bulk_iq4_and_ternary() {
    check_bulk(&["IQ4_NL", "IQ4_XS", "TQ1_0", "TQ2_0"]);
}

#[test]
fn bulk_iq1() {
    check_bulk(&["IQ1_S", "IQ1_M"]);
}

#[test]
fn bulk_iq2() {
    check_bulk(&["IQ2_XXS", "IQ2_XS", "IQ2_S"]);
}

#[test]
fn bulk_iq3() {
    check_bulk(&["IQ3_XXS", "IQ3_S"]);
}

/// gguf-py's `init_grid`: hex digits to bytes, each byte holding `8 / bits` values (`bits`
/// enough for the map's length) at steps of `8 / (8 / bits)` bits, low first, through
/// `grid_map`.
fn gguf_py_grid(t: &Value) -> Vec<Vec<f32>> {
    let map: Vec<f32> = t["grid_map"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    let bits = usize::BITS - (map.len() - 1).leading_zeros();
    let per_byte = 8 / bits;
    let step = 8 / per_byte;
    let width = t["grid_shape"][1].as_u64().unwrap() as usize;
    let values: Vec<f32> = bytes_of(t["grid_hex"].as_str().unwrap())
        .iter()
        .flat_map(|&b| (0..per_byte).map(move |k| (b >> (k * step)) & ((1 << bits) - 1)))
        .map(|i| map[usize::from(i)])
        .collect();
    values.chunks(width).map(<[f32]>::to_vec).collect()
}

fn ours_u64(grid: &[u64], signed: bool) -> Vec<Vec<f32>> {
    grid.iter()
        .map(|g| {
            g.to_le_bytes()
                .iter()
                .map(|&b| {
                    if signed {
                        f32::from(b as i8)
                    } else {
                        f32::from(b)
                    }
                })
                .collect()
        })
        .collect()
}

fn ours_u32(grid: &[u32]) -> Vec<Vec<f32>> {
    grid.iter()
        .map(|g| g.to_le_bytes().iter().map(|&b| f32::from(b)).collect())
        .collect()
}

#[test]
fn codebooks_equal_gguf_py_grid_hex() {
    let fx = fixture("grids.json");
    let t = &fx["types"];
    assert_eq!(
        gguf_py_grid(&t["IQ2_XXS"]),
        ours_u64(&tables::IQ2XXS_GRID, false)
    );
    assert_eq!(
        gguf_py_grid(&t["IQ2_XS"]),
        ours_u64(&tables::IQ2XS_GRID, false)
    );
    assert_eq!(
        gguf_py_grid(&t["IQ2_S"]),
        ours_u64(&tables::IQ2S_GRID, false)
    );
    assert_eq!(gguf_py_grid(&t["IQ3_XXS"]), ours_u32(&tables::IQ3XXS_GRID));
    assert_eq!(gguf_py_grid(&t["IQ3_S"]), ours_u32(&tables::IQ3S_GRID));
    assert_eq!(
        gguf_py_grid(&t["IQ1_S"]),
        ours_u64(&tables::IQ1S_GRID, true)
    );
    assert_eq!(
        bytes_of(fx["ksigns"].as_str().unwrap()),
        tables::KSIGNS_IQ2XS.to_vec()
    );
    let kvalues: Vec<i64> = fx["kvalues_iq4nl"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(kvalues, tables::KVALUES_IQ4NL.map(i64::from).to_vec());
    // The sign table's eighth bit makes the number of negatives even.
    for (i, &s) in tables::KSIGNS_IQ2XS.iter().enumerate() {
        assert_eq!(s & 127, i as u8);
        assert_eq!(s.count_ones() % 2, 0);
    }
    assert_eq!(tables::KMASK_IQ2XS, std::array::from_fn(|j| 1u8 << j));
}

#[test]
fn the_types_llama_cpp_refuses_without_importance_are_refused_naming_imatrix() {
    let x: Vec<f32> = (0..256).map(|i| ((i * 7) as f32 * 0.31).sin()).collect();
    for q in IQuant::ALL {
        let fx = fixture(&format!("{}.json", q.name()));
        assert_eq!(
            q.needs_importance(),
            fx["requires_imatrix"].as_bool().unwrap(),
            "{}: libgguf.quantize_requires_imatrix",
            q.name()
        );
        let mut out = vec![0u8; q.block_bytes() * 256 / q.block_len()];
        let r = q.encode_row(&x, None, &mut out);
        if q.needs_importance() {
            let e = r.unwrap_err();
            assert_eq!(e, FormatError::NeedsImportance(q.name()));
            assert!(e.to_string().contains("--imatrix"), "{e}");
        } else {
            r.unwrap();
        }
        assert!(q.encode_row(&x, Some(&[1.0; 255]), &mut out).is_err());
        assert!(q.encode_row(&x[..255], None, &mut out).is_err());
        assert!(q.encode_row(&x, Some(&[1.0; 256]), &mut out[1..]).is_err());
    }
    for t in Ternary::ALL {
        assert!(
            !fixture(&format!("{}.json", t.name()))["requires_imatrix"]
                .as_bool()
                .unwrap()
        );
    }
}

#[test]
fn every_type_has_a_fixture_file_and_every_file_is_read() {
    let mut want: Vec<String> = IQuant::ALL
        .iter()
        .map(|q| q.name())
        .chain(Ternary::ALL.iter().map(|t| t.name()))
        .map(|n| format!("{n}.json"))
        .chain(["bulk.json", "grids.json", "inputs.json", "iquants.gguf"].map(String::from))
        .collect();
    want.sort();
    let have = golden::file_names("iquants");
    assert_eq!(have, want);
}

/// A row of 256 values in 32-value stretches at scales 0.05 .. 50, some one-signed.
fn row() -> impl proptest::strategy::Strategy<Value = Vec<f32>> {
    use proptest::prelude::*;
    (
        prop::collection::vec(-1.0f32..1.0, 256),
        prop::collection::vec((0.05f32..50.0, any::<bool>()), 8),
    )
        .prop_map(|(v, scales)| {
            v.chunks(32)
                .zip(&scales)
                .flat_map(|(c, &(s, pos))| {
                    c.iter()
                        .map(move |&x| if pos { x.abs() * s } else { x * s })
                })
                .collect()
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    /// Every operation of the encoders is exact under a power-of-two scaling (away from f16
    /// overflow and subnormals), so four times the row gives the same codes and four times
    /// the values; codes stay within the levels.
    #[test]
    fn scaling_by_four_scales_the_reconstruction_by_four(x in row(), w in proptest::collection::vec(0.0f32..3.0, 256)) {
        let x4: Vec<f32> = x.iter().map(|v| v * 4.0).collect();
        for q in IQuant::ALL {
            let ty = Ty::I(q);
            let a = ty.encode(&x, Some(&w)).unwrap();
            let b = ty.encode(&x4, Some(&w)).unwrap();
            let (mut ca, mut cb, mut sa, mut sb) = (vec![0u8; 256], vec![0u8; 256], Vec::new(), Vec::new());
            q.unpack_row(&a, &mut ca, &mut sa);
            q.unpack_row(&b, &mut cb, &mut sb);
            proptest::prop_assert_eq!(&ca, &cb, "{} codes", q.name());
            proptest::prop_assert!(ca.iter().all(|&c| usize::from(c) < q.levels().len()));
            proptest::prop_assert_eq!(sa.len(), 256 / q.sub_len());
            let (va, vb) = (ty.decode(&a, 256), ty.decode(&b, 256));
            for (i, (p, r)) in va.iter().zip(&vb).enumerate() {
                proptest::prop_assert_eq!((p * 4.0).to_bits(), r.to_bits(), "{} value {}", q.name(), i);
            }
        }
    }

    /// A ternary block whose values are `d` times -1, 0, 1 (with `d` an f16 and one value at
    /// `d`) encodes to exactly those values, so decoding and encoding again gives its bytes.
    #[test]
    fn ternary_blocks_that_are_already_ternary_come_back_unchanged(
        trits in proptest::collection::vec(0u8..3, 256),
        e in -8i32..8,
    ) {
        let d = 2f32.powi(e) * 1.25;
        let mut x: Vec<f32> = trits.iter().map(|&t| (f32::from(t) - 1.0) * d).collect();
        x[17] = d;
        for t in Ternary::ALL {
            let ty = Ty::T(t);
            let bytes = ty.encode(&x, None).unwrap();
            let y = ty.decode(&bytes, 256);
            proptest::prop_assert_eq!(&y, &x);
            proptest::prop_assert_eq!(ty.encode(&y, None).unwrap(), bytes);
        }
    }
}
