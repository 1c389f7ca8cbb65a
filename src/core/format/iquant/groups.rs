//! The groups of 8 values of an i-quant lattice block as stored, for the worked arithmetic
//! and the codebook's utilization: which codebook point each group is (two points of 4 for
//! IQ3), its signs and its sub-block's scale, read from ggml's bytes as `dequantize_row_iq*`
//! reads them.

use super::IQuant;
use super::tables::{
    IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS,
};
use crate::core::format::bits::f16_to_f32;

/// One group of 8 values of a lattice block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Group {
    /// The first value's column in the row.
    pub start: usize,
    /// The codebook point's index (IQ3: the two 4-value points, first and second half).
    pub points: [u16; 2],
    /// The point's 8 values before signs (IQ1: -1, 0 or 1; the others magnitudes).
    pub values: [i8; 8],
    /// Bit `j` set: value `j` is negated (IQ1 keeps its signs in the point: 0).
    pub signs: u8,
    /// The sub-block's integer scale as stored.
    pub scale: u8,
    /// The super-block's f16 `d`, as f32.
    pub d: f32,
    /// What a signed value (plus the shift) is multiplied by: `d` times the scale's factor.
    pub step: f32,
    /// IQ1's shift added to each value before the step (±1/8); 0 for the others.
    pub shift: f32,
}

impl IQuant {
    /// Points in the type's codebook (`None` for IQ4, whose 16 levels are per value).
    #[must_use]
    pub const fn grid_points(self) -> Option<usize> {
        match self {
            Self::Iq1S | Self::Iq1M => Some(IQ1S_GRID.len()),
            Self::Iq2Xxs => Some(IQ2XXS_GRID.len()),
            Self::Iq2Xs => Some(IQ2XS_GRID.len()),
            Self::Iq2S => Some(IQ2S_GRID.len()),
            Self::Iq3Xxs => Some(IQ3XXS_GRID.len()),
            Self::Iq3S => Some(IQ3S_GRID.len()),
            Self::Iq4Xs | Self::Iq4Nl => None,
        }
    }

    /// The row's groups of 8 from ggml's bytes (whole blocks), in column order; empty for
    /// IQ4.
    #[must_use]
    pub fn groups(self, bytes: &[u8]) -> Vec<Group> {
        let mut out = Vec::new();
        if self.grid_points().is_none() {
            return out;
        }
        for (blk, b) in bytes.chunks_exact(self.block_bytes()).enumerate() {
            let at = blk * 256;
            match self {
                Self::Iq1S => iq1s(b, at, &mut out),
                Self::Iq1M => iq1m(b, at, &mut out),
                Self::Iq3Xxs | Self::Iq3S => iq3(b, at, self == Self::Iq3S, &mut out),
                _ => iq2(self, b, at, &mut out),
            }
        }
        out
    }

    /// Distinct codebook points `bytes` use (IQ3: of its 4-value points), or `None` for IQ4.
    #[must_use]
    pub fn points_used(self, bytes: &[u8]) -> Option<usize> {
        let n = self.grid_points()?;
        let mut seen = vec![false; n];
        let halves = if matches!(self, Self::Iq3Xxs | Self::Iq3S) {
            2
        } else {
            1
        };
        for g in self.groups(bytes) {
            for &p in &g.points[..halves] {
                if let Some(s) = seen.get_mut(usize::from(p)) {
                    *s = true;
                }
            }
        }
        Some(seen.iter().filter(|&&s| s).count())
    }
}

fn bytes8(v: u64) -> [i8; 8] {
    v.to_le_bytes().map(|b| b as i8)
}

fn d_of(b: &[u8]) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[0], b[1]]))
}

fn iq1s(b: &[u8], at: usize, out: &mut Vec<Group>) {
    let d = d_of(b);
    for ib in 0..8 {
        let qh = u16::from_le_bytes([b[34 + 2 * ib], b[35 + 2 * ib]]);
        let scale = ((qh >> 12) & 7) as u8;
        let shift = if qh & 0x8000 == 0 { 0.125 } else { -0.125 };
        for k in 0..4 {
            let g = u16::from(b[2 + 4 * ib + k]) | (((qh >> (3 * k)) & 7) << 8);
            out.push(Group {
                start: at + 32 * ib + 8 * k,
                points: [g, 0],
                values: bytes8(IQ1S_GRID[usize::from(g)]),
                signs: 0,
                scale,
                d,
                step: d * f32::from(2 * scale + 1),
                shift,
            });
        }
    }
}

fn iq1m(b: &[u8], at: usize, out: &mut Vec<Group>) {
    let sc: [u16; 4] = std::array::from_fn(|i| u16::from_le_bytes([b[48 + 2 * i], b[49 + 2 * i]]));
    let dbits =
        (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
    let d = f16_to_f32(dbits);
    for ib in 0..16 {
        let scale = ((sc[ib / 4] >> (3 * (ib % 4))) & 7) as u8;
        let qh = b[32 + ib];
        for k in 0..2 {
            let nib = qh >> (4 * k);
            let g = u16::from(b[2 * ib + k]) | (u16::from(nib & 7) << 8);
            out.push(Group {
                start: at + 16 * ib + 8 * k,
                points: [g, 0],
                values: bytes8(IQ1S_GRID[usize::from(g)]),
                signs: 0,
                scale,
                d,
                step: d * f32::from(2 * scale + 1),
                shift: if nib & 0x08 == 0 { 0.125 } else { -0.125 },
            });
        }
    }
}

fn iq2(q: IQuant, b: &[u8], at: usize, out: &mut Vec<Group>) {
    let d = d_of(b);
    for g in 0..32 {
        let (point, grid, signs, scale) = match q {
            IQuant::Iq2Xxs => {
                let o = 2 + 8 * (g / 4);
                let aux = u32::from_le_bytes([b[o + 4], b[o + 5], b[o + 6], b[o + 7]]);
                let p = u16::from(b[o + g % 4]);
                let signs = KSIGNS_IQ2XS[((aux >> (7 * (g % 4))) & 127) as usize];
                (p, IQ2XXS_GRID[usize::from(p)], signs, (aux >> 28) as u8)
            }
            IQuant::Iq2Xs => {
                let v = u16::from_le_bytes([b[2 + 2 * g], b[3 + 2 * g]]);
                let scale = (b[66 + g / 4] >> (4 * ((g / 2) % 2))) & 15;
                let p = v & 511;
                (
                    p,
                    IQ2XS_GRID[usize::from(p)],
                    KSIGNS_IQ2XS[usize::from(v >> 9)],
                    scale,
                )
            }
            _ => {
                let hi = u16::from((b[66 + g / 4] >> (2 * (g % 4))) & 3);
                let p = u16::from(b[2 + g]) | (hi << 8);
                let scale = (b[74 + g / 4] >> (4 * ((g / 2) % 2))) & 15;
                (p, IQ2S_GRID[usize::from(p)], b[34 + g], scale)
            }
        };
        out.push(Group {
            start: at + 8 * g,
            points: [point, 0],
            values: bytes8(grid),
            signs,
            scale,
            d,
            step: d * (0.5 + f32::from(scale)) * 0.25,
            shift: 0.0,
        });
    }
}

fn iq3(b: &[u8], at: usize, s: bool, out: &mut Vec<Group>) {
    let d = d_of(b);
    for ib in 0..8 {
        let (scale, step, signs): (u8, f32, [u8; 4]) = if s {
            let ls = (b[106 + ib / 2] >> (4 * (ib % 2))) & 15;
            let o = 74 + 4 * ib;
            (
                ls,
                d * f32::from(1 + 2 * ls),
                [b[o], b[o + 1], b[o + 2], b[o + 3]],
            )
        } else {
            let o = 66 + 4 * ib;
            let aux = u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            (
                (aux >> 28) as u8,
                d * (0.5 + (aux >> 28) as f32) * 0.5,
                std::array::from_fn(|k| KSIGNS_IQ2XS[((aux >> (7 * k)) & 127) as usize]),
            )
        };
        for (k, &sign) in signs.iter().enumerate() {
            let point = |i: usize| -> (u16, u32) {
                if s {
                    let p = u16::from(b[2 + i]) | (u16::from((b[66 + i / 8] >> (i % 8)) & 1) << 8);
                    (p, IQ3S_GRID[usize::from(p)])
                } else {
                    (u16::from(b[2 + i]), IQ3XXS_GRID[usize::from(b[2 + i])])
                }
            };
            let (p0, g0) = point(8 * ib + 2 * k);
            let (p1, g1) = point(8 * ib + 2 * k + 1);
            let v = (u64::from(g1) << 32) | u64::from(g0);
            out.push(Group {
                start: at + 32 * ib + 8 * k,
                points: [p0, p1],
                values: bytes8(v),
                signs: sign,
                scale,
                d,
                step,
                shift: 0.0,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each group's point, signs, shift and step give back the decoder's values bit for bit,
    /// and the points counted used are the distinct points of the groups.
    #[test]
    fn groups_rebuild_the_decoded_row() {
        let x: Vec<f32> = (0..512)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.013 * if i % 97 == 3 { 9.0 } else { 1.0 })
            .collect();
        let w: Vec<f32> = (0..512).map(|i| 0.5 + (i % 7) as f32).collect();
        for q in IQuant::ALL {
            let mut bytes = vec![0u8; 512 / q.block_len() * q.block_bytes()];
            q.encode_row(&x, Some(&w), &mut bytes).unwrap();
            let (mut codes, mut steps) = (vec![0u8; 512], Vec::new());
            q.unpack_row(&bytes, &mut codes, &mut steps);
            let mut y = vec![0.0f32; 512];
            q.decode(&codes, &steps, &mut y);
            let groups = q.groups(&bytes);
            if q.grid_points().is_none() {
                assert!(groups.is_empty());
                continue;
            }
            assert_eq!(groups.len(), 64, "{q:?}");
            for g in &groups {
                for j in 0..8 {
                    let v = f32::from(g.values[j]);
                    let v = if g.signs & (1 << j) != 0 { -v } else { v };
                    let got = g.step * (v + g.shift);
                    assert_eq!(
                        got.to_bits(),
                        y[g.start + j].to_bits(),
                        "{q:?} {}",
                        g.start + j
                    );
                }
            }
            let used = q.points_used(&bytes).unwrap();
            assert!(used > 1 && used <= q.grid_points().unwrap(), "{q:?} {used}");
        }
    }
}
