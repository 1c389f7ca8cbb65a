//! NF4 as bitsandbytes stores it (QLoRA's 4-bit NormalFloat): blocks of 64 values, each
//! scaled by its absolute maximum onto 16 fixed levels in [-1, 1]; and NF4 with double
//! quantization, where the f32 absmax values are themselves stored as 8-bit codes.
//!
//! Reference: bitsandbytes 0.50.2. First level: the default (CPU) backend's
//! `bitsandbytes::quantize_4bit` (`backends/default/ops.py`): `absmax = max|x|` per block,
//! `scaled = clamp(x * (1 / max(absmax, 1e-38)), -1, 1)` in f32 (a partial last block divides
//! by its absmax instead), `code = bucketize(scaled, midpoints)` where the midpoints are
//! `(NF4[i] + NF4[i+1]) / 2` in f32, so a value exactly on a midpoint takes the lower level;
//! decoded as `NF4[code] * absmax`. The table is `get_4bit_type("nf4")` in `functional.py`.
//!
//! Double quantization (`quantize_4bit(..., compress_statistics=True)`): the absmax values
//! lose their mean (`offset = absmax.mean()`, one f32 per tensor, computed by torch in f32 in
//! its own order of additions: [`torch_mean`]) and go through
//! `quantize_blockwise(absmax - offset, blocksize=256)` with the signed 8-bit dynamic map
//! ([`DYNAMIC_MAP`]), by the same rule as the first level: per block of 256 the scale is the
//! largest magnitude, `clamp(v * (1 / scale), -1, 1)` is placed by `bucketize` on the f32
//! midpoints of the map (the default backend's `quantize_blockwise`). Decoded as
//! `DYNAMIC_MAP[code] * scale + offset`. bitsandbytes' native CPU library, which its CPU
//! dispatch prefers for this step, normalises with an approximate reciprocal: it places a
//! value that lies within about 1e-4 (relative) of a midpoint on either side, so its codes
//! can differ from these there; the rule here is the exact one its Python backend states.

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

mod dynamic;
mod mean;

pub use dynamic::DYNAMIC_MAP;
pub use mean::{GRAIN, LANES, TORCH_THREADS, torch_column_sums, torch_mean, torch_sum};

use super::{FormatError, Layout, Part};

/// Values per NF4 block (bitsandbytes' default `blocksize`).
pub const BLOCK: usize = 64;
/// Absmax values per double-quantization block.
pub const DQ_BLOCK: usize = 256;

/// bitsandbytes' NF4 levels (`get_4bit_type("nf4")`), as f32, indexed by the 4-bit code.
#[expect(clippy::excessive_precision, reason = "the digits bitsandbytes lists")]
pub const NF4: [f32; 16] = [
    -1.0,
    -0.696_192_800_998_687_7,
    -0.525_073_051_452_636_7,
    -0.394_917_488_098_144_53,
    -0.284_441_381_692_886_35,
    -0.184_773_430_228_233_34,
    -0.091_050_036_251_544_95,
    0.0,
    0.079_580_299_556_255_34,
    0.160_930_201_411_247_25,
    0.246_112_301_945_686_34,
    0.337_915_241_718_292_24,
    0.440_709_829_330_444_34,
    0.562_617_003_917_694_1,
    0.722_956_836_223_602_3,
    1.0,
];

/// NF4 with double-quantized absmax values, per 256 NF4 blocks (16 384 values): the 4-bit
/// codes, an 8-bit code per absmax, one f32 second-level scale; plus the f32 offset once
/// per tensor. About 4.127 bits per weight.
#[must_use]
pub fn dq_layout() -> Layout {
    Layout {
        block_len: BLOCK * DQ_BLOCK,
        parts: vec![
            Part {
                name: "payload: NF4 codes",
                bits: 4 * (BLOCK * DQ_BLOCK) as u32,
            },
            Part {
                name: "block absmax: 8-bit codes x 256",
                bits: 8 * DQ_BLOCK as u32,
            },
            Part {
                name: "second-level scale: f32",
                bits: 32,
            },
        ],
        per_tensor_bits: 32,
    }
}

/// The 15 midpoints `(NF4[i] + NF4[i + 1]) / 2`, in f32.
#[must_use]
pub fn midpoints() -> [f32; 15] {
    #[expect(
        clippy::manual_midpoint,
        reason = "torch's `(a + b) / 2` in f32, as bitsandbytes computes it"
    )]
    let mid = |a: f32, b: f32| (a + b) / 2.0;
    std::array::from_fn(|i| mid(NF4[i], NF4[i + 1]))
}

/// The largest magnitude of a block (NaN propagates, as torch's `max` does).
#[inline(always)]
fn absmax(x: &[f32]) -> f32 {
    x.iter().fold(0.0f32, |m, &v| {
        if v.is_nan() || m.is_nan() {
            f32::NAN
        } else {
            m.max(v.abs())
        }
    })
}

/// Quantizes one block of at most 64 values: codes into `codes`, the absmax returned. A
/// block shorter than [`BLOCK`] is the tensor's partial last block (divided, not multiplied
/// by a reciprocal, as bitsandbytes does).
#[inline(always)]
pub fn encode_block(x: &[f32], codes: &mut [u8]) -> f32 {
    let a = absmax(x);
    let bounds = midpoints();
    let clamped = a.max(1e-38);
    let full = x.len() == BLOCK;
    let recip = 1.0 / clamped;
    for (c, &v) in codes.iter_mut().zip(x) {
        let s = if full { v * recip } else { v / clamped };
        let s = s.clamp(-1.0, 1.0);
        *c = bounds.iter().map(|&b| u8::from(b < s)).sum();
    }
    a
}

/// Reconstructs one block: `NF4[code] * absmax`.
#[inline(always)]
pub fn decode_block(absmax: f32, codes: &[u8], out: &mut [f32]) {
    for (o, &c) in out.iter_mut().zip(codes) {
        *o = NF4[usize::from(c & 15)] * absmax;
    }
}

/// Double-quantized absmax values: one offset for the tensor, an 8-bit code per absmax and
/// an f32 scale per 256 of them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DoubleQuant {
    /// The mean of the absmax values, subtracted before quantizing.
    pub offset: f32,
    /// Per absmax: its index into [`DYNAMIC_MAP`].
    pub codes: Vec<u8>,
    /// Per block of 256 absmax values: the largest magnitude of `absmax - offset`.
    pub scales: Vec<f32>,
}

impl DoubleQuant {
    /// Quantizes `absmax` (all the tensor's NF4 block scales, in block order) around their
    /// mean as bitsandbytes takes it: torch's f32 `absmax.mean()` on the CPU with
    /// [`TORCH_THREADS`] threads ([`torch_mean`]).
    #[must_use]
    pub fn new(absmax: &[f32]) -> Self {
        Self::with_offset(absmax, torch_mean(absmax, TORCH_THREADS))
    }

    /// Quantizes `absmax` around a given `offset` (bitsandbytes' `absmax.mean()`).
    #[must_use]
    pub fn with_offset(absmax: &[f32], offset: f32) -> Self {
        let bounds = dynamic_midpoints();
        let mut codes = vec![0u8; absmax.len()];
        let mut scales = Vec::with_capacity(absmax.len().div_ceil(DQ_BLOCK));
        let mut centred = [0.0f32; DQ_BLOCK];
        for (a, c) in absmax.chunks(DQ_BLOCK).zip(codes.chunks_mut(DQ_BLOCK)) {
            let centred = &mut centred[..a.len()];
            for (t, &v) in centred.iter_mut().zip(a) {
                *t = v - offset;
            }
            let scale = self::absmax(centred);
            let clamped = scale.max(1e-38);
            let (full, recip) = (a.len() == DQ_BLOCK, 1.0 / clamped);
            for (code, &v) in c.iter_mut().zip(centred.iter()) {
                let s = if full { v * recip } else { v / clamped };
                *code = bucket(&bounds, s.clamp(-1.0, 1.0));
            }
            scales.push(scale);
        }
        Self {
            offset,
            codes,
            scales,
        }
    }

    /// The stored absmax of NF4 block `i`: `DYNAMIC_MAP[code] * scale + offset`.
    #[must_use]
    pub fn absmax(&self, i: usize) -> f32 {
        DYNAMIC_MAP[usize::from(self.codes[i])] * self.scales[i / DQ_BLOCK] + self.offset
    }

    /// Every stored absmax, in block order.
    #[must_use]
    pub fn absmax_all(&self) -> Vec<f32> {
        (0..self.codes.len()).map(|i| self.absmax(i)).collect()
    }

    /// The refusal of a tensor some of whose stored absmax values are not finite (the
    /// absmax values' f32 sum overflows, so torch's mean is infinite and bitsandbytes' values
    /// come back NaN), naming the first such block in a tensor of rows of `per_row` blocks;
    /// `None` when every stored absmax is finite.
    #[must_use]
    pub fn not_finite(&self, absmax: &[f32], per_row: usize) -> Option<FormatError> {
        let b = (0..self.codes.len()).find(|&i| !self.absmax(i).is_finite())?;
        let amax = absmax.iter().fold(0.0f32, |m, &a| m.max(a));
        let cause = if self.offset.is_finite() {
            format!("block {b}'s stored absmax is {}", self.absmax(b))
        } else {
            format!(
                "the absmax values' f32 mean, torch's absmax.mean(), overflows to {}",
                self.offset
            )
        };
        let per_row = per_row.max(1);
        let col = b % per_row * BLOCK;
        Some(FormatError::NotFinite {
            row: Some(b / per_row),
            unit: "block",
            block: b % per_row,
            cols: (col, col + BLOCK),
            reason: format!(
                "nf4-dq cannot hold it: bitsandbytes' double quantization gives NaN here \
                 ({cause}; the largest absmax is {amax:e})"
            ),
        })
    }
}

/// The 255 midpoints of [`DYNAMIC_MAP`], in f32.
#[must_use]
pub fn dynamic_midpoints() -> [f32; 255] {
    #[expect(
        clippy::manual_midpoint,
        reason = "torch's `(a + b) / 2` in f32, as bitsandbytes computes it"
    )]
    let mid = |a: f32, b: f32| (a + b) / 2.0;
    std::array::from_fn(|i| mid(DYNAMIC_MAP[i], DYNAMIC_MAP[i + 1]))
}

/// `torch.bucketize(v, bounds)`: how many bounds lie strictly below `v`.
fn bucket(bounds: &[f32], v: f32) -> u8 {
    bounds.partition_point(|&b| b < v).min(255) as u8
}
