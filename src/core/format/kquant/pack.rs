//! ggml's `block_q*_K` byte layouts (`ggml-common.h`), written and read field by field.
//!
//! | type | layout (offsets in bytes) |
//! |---|---|
//! | Q2_K | `scales[16]` @0 (low nibble scale, high nibble min), `qs[64]` @16, `d` @80, `dmin` @82 |
//! | Q3_K | `hmask[32]` @0, `qs[64]` @32, `scales[12]` @96 (6-bit, split 4 + 2), `d` @108 |
//! | Q4_K | `d` @0, `dmin` @2, `scales[12]` @4 (6-bit scales and mins), `qs[128]` @16 |
//! | Q5_K | `d` @0, `dmin` @2, `scales[12]` @4, `qh[32]` @16, `qs[128]` @48 |
//! | Q6_K | `ql[128]` @0, `qh[64]` @128, `scales[16]` (int8) @192, `d` @208 |

#![expect(
    clippy::needless_range_loop,
    reason = "the loops follow ggml's index arithmetic of the block layouts"
)]

use super::{KQuant, QK_K, SuperBlock};

fn f16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn put_f16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// 2-bit fields: byte `l` of each 32-byte group holds values `l`, `l+32`, `l+64`, `l+96`.
fn pack2(codes: &[u8; QK_K], qs: &mut [u8]) {
    for (g, q) in qs.chunks_exact_mut(32).enumerate() {
        let base = 128 * g;
        for (l, b) in q.iter_mut().enumerate() {
            let c = |o: usize| codes[base + l + o] & 3;
            *b = c(0) | (c(32) << 2) | (c(64) << 4) | (c(96) << 6);
        }
    }
}

fn unpack2(qs: &[u8], codes: &mut [u8; QK_K]) {
    for (g, q) in qs.chunks_exact(32).enumerate() {
        for (l, &b) in q.iter().enumerate() {
            for s in 0..4 {
                codes[128 * g + l + 32 * s] = (b >> (2 * s)) & 3;
            }
        }
    }
}

/// Q4_K/Q5_K's 12 bytes of 6-bit scales and mins (ggml's `get_scale_min_k4` layout).
fn pack_k4(sb: &SuperBlock, s: &mut [u8]) {
    s[..12].fill(0);
    for j in 0..8 {
        let (ls, lm) = ((sb.scales[j] as u8) & 63, sb.mins[j] & 63);
        if j < 4 {
            s[j] = ls;
            s[j + 4] = lm;
        } else {
            s[j + 4] = (ls & 0xF) | ((lm & 0xF) << 4);
            s[j - 4] |= (ls >> 4) << 6;
            s[j] |= (lm >> 4) << 6;
        }
    }
}

fn unpack_k4(s: &[u8], sb: &mut SuperBlock) {
    for j in 0..8 {
        let (d, m) = if j < 4 {
            (s[j] & 63, s[j + 4] & 63)
        } else {
            (
                (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4),
                (s[j + 4] >> 4) | ((s[j] >> 6) << 4),
            )
        };
        sb.scales[j] = d as i8;
        sb.mins[j] = m;
    }
}

/// Writes `sb` and `codes` into `out` (at least `kind.block_bytes()` long).
pub(super) fn pack(kind: KQuant, sb: &SuperBlock, codes: &[u8; QK_K], out: &mut [u8]) {
    let out = &mut out[..kind.block_bytes()];
    out.fill(0);
    match kind {
        KQuant::Q2K => {
            for j in 0..16 {
                out[j] = ((sb.scales[j] as u8) & 0xF) | (sb.mins[j] << 4);
            }
            pack2(codes, &mut out[16..80]);
            put_f16(out, 80, sb.d);
            put_f16(out, 82, sb.dmin);
        }
        KQuant::Q3K => {
            let mut low = [0u8; QK_K];
            for (j, &c) in codes.iter().enumerate() {
                if c & 7 > 3 {
                    out[j % 32] |= 1 << (j / 32);
                }
                low[j] = c & 3;
            }
            pack2(&low, &mut out[32..96]);
            let s = &mut out[96..108];
            for j in 0..16 {
                let l = ((i32::from(sb.scales[j]) + 32) & 63) as u8;
                if j < 8 {
                    s[j] = l & 0xF;
                } else {
                    s[j - 8] |= (l & 0xF) << 4;
                }
                s[j % 4 + 8] |= (l >> 4) << (2 * (j / 4));
            }
            put_f16(out, 108, sb.d);
        }
        KQuant::Q4K => {
            put_f16(out, 0, sb.d);
            put_f16(out, 2, sb.dmin);
            pack_k4(sb, &mut out[4..16]);
            for (g, q) in out[16..144].chunks_exact_mut(32).enumerate() {
                for (l, b) in q.iter_mut().enumerate() {
                    *b = (codes[64 * g + l] & 0xF) | ((codes[64 * g + l + 32] & 0xF) << 4);
                }
            }
        }
        KQuant::Q5K => {
            put_f16(out, 0, sb.d);
            put_f16(out, 2, sb.dmin);
            pack_k4(sb, &mut out[4..16]);
            let (qh, ql) = out[16..176].split_at_mut(32);
            for (g, q) in ql.chunks_exact_mut(32).enumerate() {
                for (l, b) in q.iter_mut().enumerate() {
                    let (c1, c2) = (codes[64 * g + l] & 31, codes[64 * g + l + 32] & 31);
                    qh[l] |= ((c1 >> 4) << (2 * g)) | ((c2 >> 4) << (2 * g + 1));
                    *b = (c1 & 0xF) | ((c2 & 0xF) << 4);
                }
            }
        }
        KQuant::Q6K => {
            let (ql, rest) = out.split_at_mut(128);
            let (qh, rest) = rest.split_at_mut(64);
            for g in 0..2 {
                for l in 0..32 {
                    let c = |o: usize| codes[128 * g + l + o] & 63;
                    ql[64 * g + l] = (c(0) & 0xF) | ((c(64) & 0xF) << 4);
                    ql[64 * g + l + 32] = (c(32) & 0xF) | ((c(96) & 0xF) << 4);
                    qh[32 * g + l] = (c(0) >> 4)
                        | ((c(32) >> 4) << 2)
                        | ((c(64) >> 4) << 4)
                        | ((c(96) >> 4) << 6);
                }
            }
            for j in 0..16 {
                rest[j] = sb.scales[j] as u8;
            }
            put_f16(rest, 16, sb.d);
        }
    }
}

/// Reads a super-block from `bytes` (at least `kind.block_bytes()` long).
pub(super) fn unpack(kind: KQuant, bytes: &[u8], codes: &mut [u8; QK_K]) -> SuperBlock {
    let b = &bytes[..kind.block_bytes()];
    let mut sb = SuperBlock::default();
    match kind {
        KQuant::Q2K => {
            for j in 0..16 {
                sb.scales[j] = (b[j] & 0xF) as i8;
                sb.mins[j] = b[j] >> 4;
            }
            unpack2(&b[16..80], codes);
            sb.d = f16_at(b, 80);
            sb.dmin = f16_at(b, 82);
        }
        KQuant::Q3K => {
            unpack2(&b[32..96], codes);
            for (j, c) in codes.iter_mut().enumerate() {
                *c |= ((b[j % 32] >> (j / 32)) & 1) << 2;
            }
            let s = &b[96..108];
            for j in 0..16 {
                let low = if j < 8 { s[j] & 0xF } else { s[j - 8] >> 4 };
                let sc = low | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
                sb.scales[j] = (i32::from(sc) - 32) as i8;
            }
            sb.d = f16_at(b, 108);
        }
        KQuant::Q4K => {
            sb.d = f16_at(b, 0);
            sb.dmin = f16_at(b, 2);
            unpack_k4(&b[4..16], &mut sb);
            for (g, q) in b[16..144].chunks_exact(32).enumerate() {
                for (l, &v) in q.iter().enumerate() {
                    codes[64 * g + l] = v & 0xF;
                    codes[64 * g + l + 32] = v >> 4;
                }
            }
        }
        KQuant::Q5K => {
            sb.d = f16_at(b, 0);
            sb.dmin = f16_at(b, 2);
            unpack_k4(&b[4..16], &mut sb);
            let (qh, ql) = b[16..176].split_at(32);
            for (g, q) in ql.chunks_exact(32).enumerate() {
                for (l, &v) in q.iter().enumerate() {
                    codes[64 * g + l] = (v & 0xF) | (((qh[l] >> (2 * g)) & 1) << 4);
                    codes[64 * g + l + 32] = (v >> 4) | (((qh[l] >> (2 * g + 1)) & 1) << 4);
                }
            }
        }
        KQuant::Q6K => {
            let (ql, rest) = b.split_at(128);
            let (qh, rest) = rest.split_at(64);
            for g in 0..2 {
                for l in 0..32 {
                    let (a, c, h) = (ql[64 * g + l], ql[64 * g + l + 32], qh[32 * g + l]);
                    let base = 128 * g + l;
                    codes[base] = (a & 0xF) | ((h & 3) << 4);
                    codes[base + 32] = (c & 0xF) | (((h >> 2) & 3) << 4);
                    codes[base + 64] = (a >> 4) | (((h >> 4) & 3) << 4);
                    codes[base + 96] = (c >> 4) | (((h >> 6) & 3) << 4);
                }
            }
            for j in 0..16 {
                sb.scales[j] = rest[j] as i8;
            }
            sb.d = f16_at(rest, 16);
        }
    }
    sb
}
