//! FP8 (E4M3 and E5M2) under f32 scales per tensor, per channel (row) or per 2-D tile
//! (128x128 is the layout DeepSeek-V3 and others ship), with the scale from the region's
//! amax and the format's largest value, and the value cast with round to nearest even after
//! saturation to `[-max, max]`.
//!
//! The libraries differ in how the scale is applied, which changes codes on near-ties:
//!
//! | [`Fp8Formula`] | scale | code | reconstruction | follows |
//! |---|---|---|---|---|
//! | `Divide` | `s = amax / max` | `cast(clamp(x / s))` | `q * s` | DeepSeek-V3's reference `act_quant` kernel (`s = amax / 448`, `y = x / s`), used per 128x128 tile |
//! | `Reciprocal` | `s = amax / max` | `cast(clamp(x * (1 / s)))` | `q * s` | vLLM's `scaled_fp8_quant` (the kernel multiplies by the inverted scale) |
//! | `InverseScale` | `s = max / amax` | `cast(clamp(x * s))` | `q * (1 / s)` | Transformer Engine's delayed/current scaling with margin 0 (`scale = fp8_max / amax`, `scale_inv = 1 / scale`) |
//!
//! All arithmetic is f32. A region whose amax is 0 gets scale 0, codes 0 and reconstruction
//! 0 (this module's choice: the libraries divide by zero there, or floor the amax).

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

use std::sync::OnceLock;

use ndarray::ArrayView2;
use rayon::prelude::*;

/// The two FP8 encodings (OCP 8-bit floating point, as `ml_dtypes.float8_e4m3fn` and
/// `float8_e5m2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fp8Kind {
    /// 4 exponent bits (bias 7), 3 mantissa bits, no infinities, max 448.
    E4M3,
    /// 5 exponent bits (bias 15), 2 mantissa bits, infinities, max 57344.
    E5M2,
}

/// How the scale is applied (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fp8Formula {
    /// `x / s` with `s = amax / max` (DeepSeek-V3).
    Divide,
    /// `x * (1 / s)` with `s = amax / max` (vLLM).
    Reciprocal,
    /// `x * s` with `s = max / amax`, reconstructed with `1 / s` (Transformer Engine).
    InverseScale,
}

/// Which values share a scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fp8Layout {
    /// One scale for the whole matrix.
    Tensor,
    /// One scale per row (output channel).
    Channel,
    /// One scale per tile of `rows x cols` (partial tiles at the right and bottom edges).
    Tiles {
        /// Rows per tile.
        rows: usize,
        /// Columns per tile.
        cols: usize,
    },
}

impl Fp8Kind {
    /// Exponent bias.
    const fn bias(self) -> i32 {
        match self {
            Self::E4M3 => 7,
            Self::E5M2 => 15,
        }
    }

    /// Mantissa bits.
    const fn mbits(self) -> i32 {
        match self {
            Self::E4M3 => 3,
            Self::E5M2 => 2,
        }
    }

    /// The largest finite value.
    #[must_use]
    pub const fn max(self) -> f32 {
        match self {
            Self::E4M3 => 448.0,
            Self::E5M2 => 57344.0,
        }
    }

    /// The value of a byte (NaN for E4M3's 0x7F/0xFF and E5M2's NaNs, infinities for E5M2's).
    #[must_use]
    pub fn decode(self, b: u8) -> f32 {
        let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
        let mbits = self.mbits();
        let e = i32::from((b & 0x7F) >> mbits);
        let m = i32::from(b) & ((1 << mbits) - 1);
        let top = (1 << (7 - mbits)) - 1;
        match self {
            Self::E4M3 if e == top && m == 7 => return f32::NAN,
            Self::E5M2 if e == top => {
                return if m == 0 {
                    sign * f32::INFINITY
                } else {
                    f32::NAN
                };
            }
            _ => {}
        }
        let mag = if e == 0 {
            m as f32 * pow2(1 - self.bias() - mbits)
        } else {
            ((1 << mbits) + m) as f32 * pow2(e - self.bias() - mbits)
        };
        sign * mag
    }

    /// Round to nearest even into the format; values beyond the largest finite one (after
    /// rounding) saturate to it, NaN gives the canonical NaN byte.
    #[must_use]
    #[inline(always)]
    pub fn encode(self, x: f32) -> u8 {
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        if x.is_nan() {
            return match self {
                Self::E4M3 => 0x7F,
                Self::E5M2 => 0x7E,
            } | sign;
        }
        let a = x.abs().min(self.max());
        let (mbits, bias) = (self.mbits(), self.bias());
        let code = if a < pow2(1 - bias) {
            // Subnormal: multiples of 2^(1 - bias - mbits); rounding up to 2^mbits gives the
            // smallest normal's code, which is that same number.
            (a * pow2(bias - 1 + mbits)).round_ties_even() as u32
        } else {
            // Normal: round the f32 mantissa to `mbits` bits, half to even, on the bits (a
            // carry moves into the exponent), then rebias the exponent.
            let b = a.to_bits();
            let shift = (23 - mbits) as u32;
            let r = (b + ((1 << (shift - 1)) - 1) + ((b >> shift) & 1)) >> shift;
            r - (((127 - bias) as u32) << mbits)
        };
        sign | (code.min(u32::from(self.encode_max())) as u8)
    }

    /// The value of every byte, computed once.
    #[must_use]
    pub fn table(self) -> &'static [f32; 256] {
        static E4M3: OnceLock<[f32; 256]> = OnceLock::new();
        static E5M2: OnceLock<[f32; 256]> = OnceLock::new();
        let cell = match self {
            Self::E4M3 => &E4M3,
            Self::E5M2 => &E5M2,
        };
        cell.get_or_init(|| std::array::from_fn(|b| self.decode(b as u8)))
    }

    /// The byte of the largest finite value.
    const fn encode_max(self) -> u8 {
        match self {
            Self::E4M3 => 0x7E,
            Self::E5M2 => 0x7B,
        }
    }
}

/// `2^k` for any `k` an f32 can hold as a normal or subnormal power.
fn pow2(k: i32) -> f32 {
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1u32 << (k + 149))
    }
}

/// A complete FP8 configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fp8Scheme {
    /// E4M3 or E5M2.
    pub kind: Fp8Kind,
    /// How the scale is applied.
    pub formula: Fp8Formula,
    /// Which values share a scale.
    pub layout: Fp8Layout,
}

/// A matrix in FP8: a byte per value and the scales of its regions.
#[derive(Debug, Clone, PartialEq)]
pub struct Fp8Encoded {
    /// Rows of the matrix.
    pub rows: usize,
    /// Columns of the matrix.
    pub cols: usize,
    /// Tile height and width of the scale regions (the whole matrix per tensor, one row per
    /// channel).
    pub tile: (usize, usize),
    /// The FP8 byte of each value, row-major.
    pub codes: Vec<u8>,
    /// The scale of each region, row-major over the tile grid, as the formula stores it
    /// (`amax / max`, or `max / amax` for [`Fp8Formula::InverseScale`]).
    pub scales: Vec<f32>,
}

impl Fp8Encoded {
    /// Tiles per row of tiles.
    #[must_use]
    pub fn tiles_per_row(&self) -> usize {
        self.cols.div_ceil(self.tile.1.max(1))
    }

    /// The scale of the region holding value `(r, c)`.
    #[must_use]
    pub fn scale_at(&self, r: usize, c: usize) -> f32 {
        self.scales[(r / self.tile.0) * self.tiles_per_row() + c / self.tile.1]
    }
}

impl Fp8Scheme {
    /// Tile height and width for a `rows x cols` matrix.
    #[must_use]
    pub fn tile(&self, rows: usize, cols: usize) -> (usize, usize) {
        match self.layout {
            Fp8Layout::Tensor => (rows.max(1), cols.max(1)),
            Fp8Layout::Channel => (1, cols.max(1)),
            Fp8Layout::Tiles { rows, cols } => (rows.max(1), cols.max(1)),
        }
    }

    /// The stored scale of a region whose largest magnitude is `amax`.
    #[must_use]
    pub fn scale_of(&self, amax: f32) -> f32 {
        if amax == 0.0 {
            return 0.0;
        }
        match self.formula {
            Fp8Formula::Divide | Fp8Formula::Reciprocal => amax / self.kind.max(),
            Fp8Formula::InverseScale => self.kind.max() / amax,
        }
    }

    /// The scale of every region, row-major over the tile grid (rows of tiles in parallel).
    #[must_use]
    pub fn scales(&self, x: &ArrayView2<'_, f32>) -> Vec<f32> {
        let (rows, cols) = x.dim();
        let (th, tw) = self.tile(rows, cols);
        let per_row = cols.div_ceil(tw);
        let bands: Vec<usize> = (0..rows.div_ceil(th)).collect();
        let amax: Vec<Vec<f32>> = bands
            .par_iter()
            .map(|&b| {
                let mut m = vec![0.0f32; per_row];
                for r in b * th..((b + 1) * th).min(rows) {
                    for (c, &v) in x.row(r).iter().enumerate() {
                        let t = &mut m[c / tw];
                        *t = if v.abs() > *t { v.abs() } else { *t };
                    }
                }
                m
            })
            .collect();
        amax.into_iter()
            .flatten()
            .map(|a| self.scale_of(a))
            .collect()
    }

    /// Encodes one row given its regions' scales (`scales[c / tile width]`): codes into
    /// `codes` and reconstructions into `values`.
    pub fn encode_row(
        &self,
        x: &[f32],
        scales: &[f32],
        tile_cols: usize,
        codes: &mut [u8],
        values: &mut [f32],
    ) {
        let kind = self.kind;
        let max = kind.max();
        let table = kind.table();
        for (((xs, cs), vs), &s) in x
            .chunks(tile_cols)
            .zip(codes.chunks_mut(tile_cols))
            .zip(values.chunks_mut(tile_cols))
            .zip(scales)
        {
            if s == 0.0 {
                cs.fill(0);
                vs.fill(0.0);
                continue;
            }
            let (mul, back) = match self.formula {
                Fp8Formula::Divide => (0.0, s),
                Fp8Formula::Reciprocal => (1.0 / s, s),
                Fp8Formula::InverseScale => (s, 1.0 / s),
            };
            for ((&v, c), o) in xs.iter().zip(cs.iter_mut()).zip(vs.iter_mut()) {
                let t = match self.formula {
                    Fp8Formula::Divide => v / s,
                    _ => v * mul,
                };
                *c = kind.encode(t.clamp(-max, max));
                *o = table[usize::from(*c)] * back;
            }
        }
    }

    /// Encodes a matrix: scales first, then every row in parallel. `values` (if given with
    /// one slot per element, row-major) receives the reconstruction.
    #[must_use]
    pub fn encode(&self, x: &ArrayView2<'_, f32>, values: Option<&mut [f32]>) -> Fp8Encoded {
        let (rows, cols) = x.dim();
        let tile = self.tile(rows, cols);
        let scales = self.scales(x);
        let per_row = cols.div_ceil(tile.1);
        let mut codes = vec![0u8; rows * cols];
        let mut own = Vec::new();
        let values = if let Some(v) = values.filter(|v| v.len() == rows * cols) {
            v
        } else {
            own.resize(rows * cols, 0.0f32);
            &mut own[..]
        };
        codes
            .par_chunks_mut(cols.max(1))
            .zip(values.par_chunks_mut(cols.max(1)))
            .enumerate()
            .for_each(|(r, (cs, vs))| {
                let row = x.row(r);
                let s = &scales[(r / tile.0) * per_row..][..per_row];
                match row.as_slice() {
                    Some(xs) => self.encode_row(xs, s, tile.1, cs, vs),
                    None => self.encode_row(&row.to_vec(), s, tile.1, cs, vs),
                }
            });
        Fp8Encoded {
            rows,
            cols,
            tile,
            codes,
            scales,
        }
    }

    /// Reconstructs every value of `e`, row-major.
    #[must_use]
    pub fn decode(&self, e: &Fp8Encoded) -> Vec<f32> {
        let mut out = vec![0.0f32; e.codes.len()];
        for (i, (o, &c)) in out.iter_mut().zip(&e.codes).enumerate() {
            let s = e.scale_at(i / e.cols, i % e.cols);
            *o = if s == 0.0 {
                0.0
            } else {
                match self.formula {
                    Fp8Formula::InverseScale => self.kind.decode(c) * (1.0 / s),
                    _ => self.kind.decode(c) * s,
                }
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips() {
        for kind in [Fp8Kind::E4M3, Fp8Kind::E5M2] {
            for b in 0u8..=255 {
                let v = kind.decode(b);
                if v.is_finite() {
                    assert_eq!(kind.encode(v), b, "{kind:?} {b:#x} = {v}");
                }
            }
        }
        assert_eq!(Fp8Kind::E4M3.decode(0x7E), 448.0);
        assert_eq!(Fp8Kind::E5M2.decode(0x7B), 57344.0);
        assert_eq!(Fp8Kind::E4M3.decode(0x01), 2f32.powi(-9));
        assert_eq!(Fp8Kind::E5M2.decode(0x01), 2f32.powi(-16));
    }

    #[test]
    fn ties_round_to_even_and_saturate() {
        let k = Fp8Kind::E4M3;
        assert_eq!(k.decode(k.encode(1.0625)), 1.0); // halfway 1 and 1.125
        assert_eq!(k.decode(k.encode(1.1875)), 1.25); // halfway 1.125 and 1.25
        assert_eq!(k.decode(k.encode(464.0)), 448.0);
        assert_eq!(k.decode(k.encode(-1e9)), -448.0);
        assert_eq!(k.decode(k.encode(2f32.powi(-10))), 0.0); // halfway 0 and the smallest
    }
}
