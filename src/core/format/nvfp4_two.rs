//! Two-level NVFP4 as the hub's checkpoints store it: E2M1 values, an E4M3 scale per 16
//! values, and one f32 scale per tensor above the block scales, in the two conventions that
//! write those checkpoints:
//!
//! | | compressed-tensors (`nvfp4-pack-quantized`) | NVIDIA ModelOpt |
//! |---|---|---|
//! | tensor scale | `global_scale = (1 / max(amax, 2^-126)) * 2688` (torch's `2688 / t`; a divisor; 1 if it overflows) | `scale_2 = amax / 2688` (a multiplier) |
//! | block scale | `e4m3(clamp(amax_b / 6 * global_scale, ±448))`, a 0 becoming 0.125 | `e4m3(clamp(s, 2^-9, 448))`, `s = amax_b / (6 * scale_2)`, a 0 becoming 1 |
//! | step | `scale / global_scale` | `scale * scale_2` |
//! | code | `e2m1(clamp(x / step, ±6))`, half to even | `e2m1(x / step)` by its bounds, ties to even |
//! | negative zero | code 8 for `x < 0`, decoded as `-0.0` | code 8 for `x < 0`, decoded as `+0.0` |
//!
//! (2688 = 448 x 6, E4M3's and E2M1's largest values.) The functions, in compressed-tensors
//! 0.20.1: `generate_gparam` (`quantization/utils/helpers.py:324`), `calculate_qparams`
//! (`helpers.py:52`), `_quantize` and `_dequantize` (`quantization/lifecycle/forward_helpers.py:523`,
//! `:548`), `cast_to_fp4` (`quantization/utils/fp4_utils.py:77`), `pack_fp4_to_uint8` and
//! `unpack_fp4_from_uint8` (`compressors/nvfp4/helpers.py:367`, `:418`); in ModelOpt 0.47.0
//! (`modelopt/torch/quantization/qtensor/nvfp4_tensor.py`): `_cast_per_block_scale_to_fp8`
//! (line 32), `NVFP4QTensor.get_weights_scaling_factor` (170), `get_weights_scaling_factor_2`
//! (206), `_cast_fp4` (231), `quantize` (254) and `dequantize` (345). All arithmetic is f32 in
//! their order; the fixtures in `tests/golden/nvfp4/` come from both libraries run on CPU.
//!
//! Two tensors have no finite reconstruction in a reference, and are refused with the
//! reason: under ModelOpt a tensor whose `scale_2` is 0 (all zero, or amax below about
//! 3.8e-42) gets block scales of `0 / 0`, NaN; under compressed-tensors a tensor holding values
//! near the f32 maximum reconstructs them as infinity (`6 x scale / global_scale` overflows).
//!
//! ggml's `nvfp4` ([`super::fp4`]) has no tensor scale: its UE4M3 block scale is
//! `amax_b / 6` itself, so blocks below about 0.006 store a zero scale.

#![expect(
    clippy::inline_always,
    reason = "the block loop inlines into the row encoder, which is what vectorises it"
)]

use rayon::prelude::*;

use super::minifloat::{E2M1, E4M3};

/// Values per block scale.
pub const BLOCK: usize = 16;

/// `448 * 6`: E4M3's largest value times E2M1's.
const TOP: f32 = 2688.0;

/// Whose arithmetic the two levels follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Convention {
    /// compressed-tensors (llm-compressor's checkpoints): a global scale that divides.
    CompressedTensors,
    /// NVIDIA ModelOpt: a second scale that multiplies.
    ModelOpt,
}

/// Why a tensor has no finite two-level NVFP4 reconstruction in a convention.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// ModelOpt's `scale_2 = amax / 2688` is 0.
    #[error(
        "ModelOpt's per-tensor scale amax / 2688 is 0 for this tensor (all zero, or amax below about 3.8e-42): its block scales are 0 / 0, NaN, and every value reconstructs to NaN"
    )]
    ZeroScale2,
    /// The reference reconstructs some values as infinity.
    #[error(
        "{library} reconstructs {count} value(s) of this tensor as infinity (values near the f32 maximum: 6 x the block's step overflows)"
    )]
    Infinite {
        /// The library of the convention.
        library: &'static str,
        /// How many values.
        count: usize,
    },
}

impl Convention {
    /// The library whose arithmetic this is.
    #[must_use]
    pub const fn library(self) -> &'static str {
        match self {
            Self::CompressedTensors => "compressed-tensors",
            Self::ModelOpt => "ModelOpt",
        }
    }

    /// The stored per-tensor scale for a tensor whose largest magnitude is `amax`:
    /// compressed-tensors' `global_scale`, ModelOpt's `weight_scale_2`.
    pub fn tensor_scale(self, amax: f32) -> Result<f32, Refused> {
        match self {
            Self::CompressedTensors => {
                // generate_gparam: `448 * 6 / amax` with amax clamped to f32's smallest
                // normal, NaN or infinity -> 1. A Python number over a tensor is torch's
                // `__rtruediv__`: the tensor's reciprocal times the number.
                let g = (1.0 / amax.max(f32::MIN_POSITIVE)) * TOP;
                Ok(if g.is_finite() { g } else { 1.0 })
            }
            Self::ModelOpt => {
                let s2 = amax / TOP;
                if s2 > 0.0 {
                    Ok(s2)
                } else {
                    Err(Refused::ZeroScale2)
                }
            }
        }
    }

    /// The E4M3 byte of the block scale of a block whose largest magnitude is `amax`.
    #[must_use]
    #[inline(always)]
    pub fn block_scale(self, amax: f32, tensor: f32) -> u8 {
        match self {
            Self::CompressedTensors => {
                let b = E4M3.encode_magnitude(tensor * (amax / 6.0));
                // calculate_qparams replaces a zero scale by E4M3's "eps", 0.125.
                if b == 0 { 0x20 } else { b }
            }
            Self::ModelOpt => {
                let s = amax / (6.0 * tensor);
                let s = if s == 0.0 { 1.0 } else { s };
                E4M3.encode_magnitude(s.max(f32::from_bits(0x3B00_0000))) // 2^-9
            }
        }
    }

    /// What a grid value is multiplied by in a block whose scale byte is `scale`.
    #[must_use]
    #[inline(always)]
    pub fn step(self, scale: u8, tensor: f32) -> f32 {
        let s = E4M3.decode(scale);
        match self {
            Self::CompressedTensors => s / tensor,
            Self::ModelOpt => s * tensor,
        }
    }

    /// The value of each 4-bit code (code 8, the negative zero: `-0.0` under
    /// compressed-tensors' unpacking, `+0.0` in ModelOpt's table).
    #[must_use]
    pub fn table(self) -> [f32; 16] {
        std::array::from_fn(|c| match (self, c) {
            (Self::ModelOpt, 8) => 0.0,
            _ => E2M1.decode(c as u8),
        })
    }

    /// Quantizes one block under the tensor scale `tensor`: returns the block scale byte,
    /// writes the codes.
    #[must_use]
    #[inline(always)]
    pub fn encode_block(self, tensor: f32, x: &[f32; BLOCK], codes: &mut [u8; BLOCK]) -> u8 {
        let amax = x.iter().fold(0.0f32, |m, &v| m.max(v.abs()));
        let scale = self.block_scale(amax, tensor);
        let step = self.step(scale, tensor);
        for (c, &v) in codes.iter_mut().zip(x) {
            let q = v / step;
            let sign = if q < 0.0 { 8 } else { 0 };
            // NaN (ModelOpt's 0 / 0 where the step underflows) sorts after every bound.
            let m = if q.is_nan() {
                7
            } else {
                E2M1.encode_magnitude(q.abs())
            };
            *c = sign | m;
        }
        scale
    }

    /// Reconstructs one block: `table[code] * step`.
    #[inline(always)]
    pub fn decode_block(table: &[f32; 16], step: f32, codes: &[u8; BLOCK], out: &mut [f32; BLOCK]) {
        for (o, &c) in out.iter_mut().zip(codes) {
            *o = table[usize::from(c & 15)] * step;
        }
    }
}

/// The largest magnitude of a tensor (its values are finite).
#[must_use]
pub fn tensor_amax(x: &[f32]) -> f32 {
    x.par_chunks(1 << 16)
        .map(|c| c.iter().fold(0.0f32, |m, &v| m.max(v.abs())))
        .reduce(|| 0.0, f32::max)
}

/// A tensor in two-level NVFP4: its tensor scale, a scale byte per block and a code per
/// value, in the order of the values.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The convention.
    pub convention: Convention,
    /// The stored tensor scale (`global_scale` or `weight_scale_2`).
    pub tensor_scale: f32,
    /// The E4M3 byte of each block's scale.
    pub scales: Vec<u8>,
    /// The 4-bit code of each value (bit 3 the sign).
    pub codes: Vec<u8>,
}

impl Encoded {
    /// The step of block `b` (what its grid values are multiplied by).
    #[must_use]
    pub fn step(&self, b: usize) -> f32 {
        self.convention.step(self.scales[b], self.tensor_scale)
    }
}

/// Encodes a tensor whose length is a multiple of [`BLOCK`] (rows of whole blocks, in row
/// order) and writes its reconstruction into `values` (one per value). Blocks are encoded in
/// parallel.
pub fn encode(c: Convention, x: &[f32], values: &mut [f32]) -> Result<Encoded, Refused> {
    const CHUNK: usize = BLOCK * 256;
    let tensor = c.tensor_scale(tensor_amax(x))?;
    let mut codes = vec![0u8; x.len()];
    let mut scales = vec![0u8; x.len() / BLOCK];
    let table = c.table();
    x.par_chunks(CHUNK)
        .zip(codes.par_chunks_mut(CHUNK))
        .zip(values.par_chunks_mut(CHUNK))
        .zip(scales.par_chunks_mut(CHUNK / BLOCK))
        .for_each(|(((xs, cs), vs), ss)| {
            let (xb, _) = xs.as_chunks::<BLOCK>();
            let (cb, _) = cs.as_chunks_mut::<BLOCK>();
            let (vb, _) = vs.as_chunks_mut::<BLOCK>();
            for (((x, cd), v), s) in xb.iter().zip(cb).zip(vb).zip(ss.iter_mut()) {
                *s = c.encode_block(tensor, x, cd);
                Convention::decode_block(&table, c.step(*s, tensor), cd, v);
            }
        });
    let infinite = values.par_iter().filter(|v| !v.is_finite()).count();
    if infinite > 0 {
        return Err(Refused::Infinite {
            library: c.library(),
            count: infinite,
        });
    }
    Ok(Encoded {
        convention: c,
        tensor_scale: tensor,
        scales,
        codes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: Convention, tensor: f32, x: &[f32; BLOCK]) -> (u8, [f32; BLOCK]) {
        let mut codes = [0u8; BLOCK];
        let s = c.encode_block(tensor, x, &mut codes);
        let mut out = [0.0f32; BLOCK];
        Convention::decode_block(&c.table(), c.step(s, tensor), &codes, &mut out);
        (s, out)
    }

    #[test]
    fn a_tensor_amax_of_2688_makes_both_tensor_scales_1() {
        assert_eq!(Convention::CompressedTensors.tensor_scale(2688.0), Ok(1.0));
        assert_eq!(Convention::ModelOpt.tensor_scale(2688.0), Ok(1.0));
        // Block amax 6: scale 1 (0x38), and E2M1's midpoints round half to even.
        let mids = [0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];
        let x: [f32; BLOCK] = std::array::from_fn(|i| if i == 0 { 6.0 } else { mids[i % 7] });
        for c in [Convention::CompressedTensors, Convention::ModelOpt] {
            let (s, out) = round_trip(c, 1.0, &x);
            assert_eq!(s, 0x38);
            assert_eq!(out[1..8], [1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 0.0]);
        }
    }

    #[test]
    fn zero_blocks_take_each_librarys_stand_in_scale() {
        let x = [0.0f32; BLOCK];
        assert_eq!(Convention::CompressedTensors.block_scale(0.0, 5.0), 0x20);
        assert_eq!(Convention::ModelOpt.block_scale(0.0, 5.0), 0x38);
        for c in [Convention::CompressedTensors, Convention::ModelOpt] {
            assert_eq!(round_trip(c, 5.0, &x).1, x);
        }
        // ModelOpt's smallest block scale is E4M3's smallest subnormal, not 0.
        assert_eq!(Convention::ModelOpt.block_scale(1e-30, 1.0), 0x01);
    }

    #[test]
    fn the_edges_of_the_tensor_scale() {
        let ct = Convention::CompressedTensors;
        assert_eq!(ct.tensor_scale(0.0), Ok(1.0));
        assert_eq!(ct.tensor_scale(1e-40), Ok(1.0));
        assert_eq!(ct.tensor_scale(1.0), Ok(2688.0));
        assert_eq!(
            Convention::ModelOpt.tensor_scale(0.0),
            Err(Refused::ZeroScale2)
        );
        assert!(Convention::ModelOpt.tensor_scale(1e-40).is_ok());
    }

    #[test]
    fn negative_zeros_follow_each_library() {
        let mut x = [0.0f32; BLOCK];
        x[0] = 1.0;
        x[1] = -1e-4;
        x[2] = -0.0;
        for (c, want) in [
            (Convention::CompressedTensors, -0.0f32),
            (Convention::ModelOpt, 0.0),
        ] {
            let t = c.tensor_scale(1.0).unwrap();
            let mut codes = [0u8; BLOCK];
            let _ = c.encode_block(t, &x, &mut codes);
            assert_eq!(codes[1..3], [8, 0]);
            let (_, out) = round_trip(c, t, &x);
            assert_eq!(out[1].to_bits(), want.to_bits());
        }
    }
}
