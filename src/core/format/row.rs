//! [`Format`]'s work on one row, block by block: encoding, decoding, ggml's bytes, the
//! layout table and the grids.

#![expect(
    clippy::inline_always,
    reason = "the row and block loops inline into pulp's vector dispatch, which is what vectorises them"
)]

use super::bits::{E2M1_DOUBLED, e8m0_half, ue4m3_half};
use super::kquant::{KQuant, QK_K};
use super::legacy::{self, Legacy};
use super::mx::{self, MX_BLOCK, MxKind};
use super::{Encoded, Format, FormatError, Grid, Layout, Meta, Part, SubBlock, fp4, nf4, ternary};

/// The vector inside `meta` if it is the variant `$v`, else a fresh one put there.
macro_rules! reuse {
    ($meta:expr, $v:ident) => {{
        if !matches!($meta, Meta::$v(_)) {
            *$meta = Meta::$v(Vec::new());
        }
        match $meta {
            Meta::$v(v) => {
                v.clear();
                v
            }
            _ => unreachable!("the variant was just set"),
        }
    }};
}

/// The byte and step buffers inside `meta` if it is [`Meta::Packed`], else fresh ones put
/// there.
fn reuse_packed(meta: &mut Meta) -> (&mut Vec<u8>, &mut Vec<f32>) {
    if !matches!(meta, Meta::Packed { .. }) {
        *meta = Meta::Packed {
            bytes: Vec::new(),
            steps: Vec::new(),
        };
    }
    match meta {
        Meta::Packed { bytes, steps } => (bytes, steps),
        _ => unreachable!("the variant was just set"),
    }
}

/// Encodes a row, compiled for the widest vector instructions the CPU has (chosen at run
/// time by `pulp`; every operation is IEEE-exact, so the results are the same on every path).
pub(super) fn encode(
    f: Format,
    x: &[f32],
    weights: Option<&[f32]>,
    out: &mut Encoded,
    values: &mut [f32],
) -> Result<(), FormatError> {
    pulp::Arch::new().dispatch(EncodeOp {
        f,
        x,
        weights,
        out,
        values,
    })
}

/// [`encode_any`] as a `pulp` operation, so that it is compiled with the chosen target
/// features (the closure form leaves the body outside the feature-enabled function).
struct EncodeOp<'a> {
    f: Format,
    x: &'a [f32],
    weights: Option<&'a [f32]>,
    out: &'a mut Encoded,
    values: &'a mut [f32],
}

impl pulp::WithSimd for EncodeOp<'_> {
    type Output = Result<(), FormatError>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        encode_any(self.f, self.x, self.weights, self.out, self.values)
    }
}

#[inline(always)]
fn encode_any(
    f: Format,
    x: &[f32],
    weights: Option<&[f32]>,
    out: &mut Encoded,
    values: &mut [f32],
) -> Result<(), FormatError> {
    out.format = f;
    out.codes.clear();
    out.codes.resize(x.len(), 0);
    let codes = &mut out.codes;
    match f {
        Format::K(k) => encode_k(k, x, weights, &mut out.meta, codes, values),
        Format::Mxfp4 => {
            let blocks = reuse!(&mut out.meta, Mxfp4);
            let (xs, _) = x.as_chunks::<{ fp4::MXFP4_BLOCK }>();
            let (cs, _) = codes.as_chunks_mut::<{ fp4::MXFP4_BLOCK }>();
            let (vs, _) = values.as_chunks_mut::<{ fp4::MXFP4_BLOCK }>();
            for ((xb, cb), vb) in xs.iter().zip(cs).zip(vs) {
                let e = fp4::mxfp4_encode(xb, cb);
                fp4::mxfp4_decode(e, cb, vb);
                blocks.push(e);
            }
        }
        Format::Nvfp4 => {
            let blocks = reuse!(&mut out.meta, Nvfp4);
            let (xs, _) = x.as_chunks::<{ fp4::NVFP4_BLOCK }>();
            let (cs, _) = codes.as_chunks_mut::<{ fp4::NVFP4_BLOCK }>();
            let (vs, _) = values.as_chunks_mut::<{ fp4::NVFP4_BLOCK }>();
            for ((xb, cb), vb) in xs.iter().zip(cs).zip(vs) {
                let s = fp4::nvfp4_encode(xb, cb);
                fp4::nvfp4_decode(s, cb, vb);
                blocks.push(s);
            }
        }
        Format::Mx(kind) => {
            let blocks = reuse!(&mut out.meta, Mx);
            let table = mx_table(kind);
            let (xs, _) = x.as_chunks::<MX_BLOCK>();
            let (cs, _) = codes.as_chunks_mut::<MX_BLOCK>();
            let (vs, _) = values.as_chunks_mut::<MX_BLOCK>();
            for ((xb, cb), vb) in xs.iter().zip(cs).zip(vs) {
                let e = mx::encode_block(kind, xb, cb);
                mx::decode_block(table, e, cb, vb);
                blocks.push(e);
            }
        }
        Format::Nf4 => {
            let blocks = reuse!(&mut out.meta, Nf4);
            for ((xb, cb), vb) in x
                .chunks_exact(nf4::BLOCK)
                .zip(codes.chunks_exact_mut(nf4::BLOCK))
                .zip(values.chunks_exact_mut(nf4::BLOCK))
            {
                let a = nf4::encode_block(xb, cb);
                nf4::decode_block(a, cb, vb);
                blocks.push(a);
            }
        }
        Format::Legacy(l) => {
            let Some(w) = weights.filter(|_| l.reads_importance()) else {
                return Err(FormatError::DecodeOnly(l.name()));
            };
            let blocks = reuse!(&mut out.meta, Legacy);
            legacy::weighted::encode_row(l, x, w, codes, blocks);
            let (cs, _) = codes.as_chunks::<{ legacy::BLOCK }>();
            let (vs, _) = values.as_chunks_mut::<{ legacy::BLOCK }>();
            for ((b, cb), vb) in blocks.iter().zip(cs).zip(vs) {
                l.decode(b, cb, vb);
            }
        }
        Format::I(q) => {
            let (bytes, steps) = reuse_packed(&mut out.meta);
            bytes.clear();
            bytes.resize(x.len() / q.block_len() * q.block_bytes(), 0);
            q.encode_row(x, weights, bytes)?;
            q.unpack_row(bytes, codes, steps);
            q.decode(codes, steps, values);
        }
        Format::T(t) => {
            let (bytes, steps) = reuse_packed(&mut out.meta);
            bytes.clear();
            bytes.resize(x.len() / ternary::BLOCK * t.block_bytes(), 0);
            t.encode_row(x, bytes);
            t.unpack_row(bytes, codes, steps);
            t.decode(codes, steps, values);
        }
    }
    Ok(())
}

/// A k-quant row, super-block by super-block, with the importance when given.
#[inline(always)]
fn encode_k(
    k: KQuant,
    x: &[f32],
    weights: Option<&[f32]>,
    meta: &mut Meta,
    codes: &mut [u8],
    values: &mut [f32],
) {
    let blocks = reuse!(meta, K);
    let (xs, _) = x.as_chunks::<QK_K>();
    let (cs, _) = codes.as_chunks_mut::<QK_K>();
    let (vs, _) = values.as_chunks_mut::<QK_K>();
    match weights {
        None => {
            for ((xb, cb), vb) in xs.iter().zip(cs).zip(vs) {
                let sb = k.encode_block(xb, cb);
                k.decode_block(&sb, cb, vb);
                blocks.push(sb);
            }
        }
        Some(w) => {
            let (ws, _) = w.as_chunks::<QK_K>();
            for (((xb, wb), cb), vb) in xs.iter().zip(ws).zip(cs).zip(vs) {
                let sb = k.encode_block_weighted(xb, wb, cb);
                k.decode_block(&sb, cb, vb);
                blocks.push(sb);
            }
        }
    }
}

pub(super) fn decode(e: &Encoded, out: &mut [f32]) {
    let codes = &e.codes;
    match &e.meta {
        Meta::K(blocks) => {
            let Format::K(k) = e.format else { return };
            let (cs, _) = codes.as_chunks::<QK_K>();
            let (os, _) = out.as_chunks_mut::<QK_K>();
            for ((sb, cb), ob) in blocks.iter().zip(cs).zip(os) {
                k.decode_block(sb, cb, ob);
            }
        }
        Meta::Mxfp4(blocks) => {
            let (cs, _) = codes.as_chunks::<{ fp4::MXFP4_BLOCK }>();
            let (os, _) = out.as_chunks_mut::<{ fp4::MXFP4_BLOCK }>();
            for ((&b, cb), ob) in blocks.iter().zip(cs).zip(os) {
                fp4::mxfp4_decode(b, cb, ob);
            }
        }
        Meta::Nvfp4(blocks) => {
            let (cs, _) = codes.as_chunks::<{ fp4::NVFP4_BLOCK }>();
            let (os, _) = out.as_chunks_mut::<{ fp4::NVFP4_BLOCK }>();
            for ((&b, cb), ob) in blocks.iter().zip(cs).zip(os) {
                fp4::nvfp4_decode(b, cb, ob);
            }
        }
        Meta::Mx(blocks) => {
            let Format::Mx(kind) = e.format else { return };
            let table = mx_table(kind);
            let (cs, _) = codes.as_chunks::<MX_BLOCK>();
            let (os, _) = out.as_chunks_mut::<MX_BLOCK>();
            for ((&b, cb), ob) in blocks.iter().zip(cs).zip(os) {
                mx::decode_block(table, b, cb, ob);
            }
        }
        Meta::Nf4(blocks) => {
            for ((&a, cb), ob) in blocks
                .iter()
                .zip(codes.chunks(nf4::BLOCK))
                .zip(out.chunks_mut(nf4::BLOCK))
            {
                nf4::decode_block(a, cb, ob);
            }
        }
        Meta::Legacy(blocks) => {
            let Format::Legacy(l) = e.format else { return };
            let (cs, _) = codes.as_chunks::<{ legacy::BLOCK }>();
            let (os, _) = out.as_chunks_mut::<{ legacy::BLOCK }>();
            for ((b, cb), ob) in blocks.iter().zip(cs).zip(os) {
                l.decode(b, cb, ob);
            }
        }
        Meta::Packed { steps, .. } => match e.format {
            Format::I(q) => q.decode(codes, steps, out),
            Format::T(t) => t.decode(codes, steps, out),
            _ => {}
        },
    }
}

pub(super) fn pack(f: Format, e: &Encoded) -> Vec<u8> {
    if let (Meta::Packed { bytes, .. }, Format::I(_) | Format::T(_)) = (&e.meta, f) {
        return bytes.clone();
    }
    let n_blocks = e.codes.len() / f.block_len();
    let mut out = vec![0u8; n_blocks * f.block_bytes()];
    match (&e.meta, f) {
        (Meta::K(blocks), Format::K(k)) => {
            let (cs, _) = e.codes.as_chunks::<QK_K>();
            for ((sb, cb), ob) in blocks
                .iter()
                .zip(cs)
                .zip(out.chunks_exact_mut(k.block_bytes()))
            {
                k.pack(sb, cb, ob);
            }
        }
        (Meta::Mxfp4(blocks), Format::Mxfp4) => {
            let (cs, _) = e.codes.as_chunks::<{ fp4::MXFP4_BLOCK }>();
            let (os, _) = out.as_chunks_mut::<{ fp4::MXFP4_BYTES }>();
            for ((&b, cb), ob) in blocks.iter().zip(cs).zip(os) {
                fp4::mxfp4_pack(b, cb, ob);
            }
        }
        (Meta::Nvfp4(blocks), Format::Nvfp4) => {
            let (cs, _) = e.codes.as_chunks::<{ fp4::NVFP4_BLOCK }>();
            let (os, _) = out.as_chunks_mut::<{ fp4::NVFP4_BYTES }>();
            for ((&b, cb), ob) in blocks.iter().zip(cs).zip(os) {
                fp4::nvfp4_pack(b, cb, ob);
            }
        }
        (Meta::Mx(blocks), Format::Mx(kind)) => {
            let (cs, _) = e.codes.as_chunks::<MX_BLOCK>();
            for ((&b, cb), ob) in blocks
                .iter()
                .zip(cs)
                .zip(out.chunks_exact_mut(kind.block_bytes()))
            {
                mx::pack(kind, b, cb, ob);
            }
        }
        (Meta::Nf4(blocks), Format::Nf4) => {
            let (codes, scales) = out.split_at_mut(e.codes.len() / 2);
            for (b, pair) in codes.iter_mut().zip(e.codes.chunks_exact(2)) {
                *b = (pair[0] << 4) | (pair[1] & 15);
            }
            for (o, a) in scales.chunks_exact_mut(4).zip(blocks) {
                o.copy_from_slice(&a.to_le_bytes());
            }
        }
        (Meta::Legacy(blocks), Format::Legacy(l)) => {
            let (cs, _) = e.codes.as_chunks::<{ legacy::BLOCK }>();
            for ((b, cb), ob) in blocks
                .iter()
                .zip(cs)
                .zip(out.chunks_exact_mut(l.block_bytes()))
            {
                l.pack(b, cb, ob);
            }
        }
        _ => out.clear(),
    }
    out
}

/// Each block's `B` codes read from its `block_bytes` bytes by `read`, which returns the
/// block's own numbers (scales, minima): one per block, in order.
fn blocks_of<const B: usize, M>(
    codes: &mut [u8],
    bytes: &[u8],
    block_bytes: usize,
    read: impl Fn(&[u8], &mut [u8; B]) -> M,
) -> Vec<M> {
    let (cs, _) = codes.as_chunks_mut::<B>();
    cs.iter_mut()
        .zip(bytes.chunks_exact(block_bytes))
        .map(|(cb, b)| read(b, cb))
        .collect()
}

/// [`blocks_of`] for blocks of a fixed `N` bytes, read by a function that takes them so.
fn sized_blocks_of<const B: usize, const N: usize, M>(
    codes: &mut [u8],
    bytes: &[u8],
    read: impl Fn(&[u8; N], &mut [u8; B]) -> M,
) -> Vec<M> {
    let (cs, _) = codes.as_chunks_mut::<B>();
    let (bs, _) = bytes.as_chunks::<N>();
    cs.iter_mut().zip(bs).map(|(cb, b)| read(b, cb)).collect()
}

pub(super) fn unpack(f: Format, bytes: &[u8], n: usize) -> Encoded {
    let mut codes = vec![0u8; n];
    let meta = match f {
        Format::K(k) => Meta::K(blocks_of(&mut codes, bytes, k.block_bytes(), |b, cb| {
            k.unpack(b, cb)
        })),
        Format::Mxfp4 => Meta::Mxfp4(sized_blocks_of(&mut codes, bytes, fp4::mxfp4_unpack)),
        Format::Nvfp4 => Meta::Nvfp4(sized_blocks_of(&mut codes, bytes, fp4::nvfp4_unpack)),
        Format::Mx(kind) => Meta::Mx(blocks_of(&mut codes, bytes, kind.block_bytes(), |b, cb| {
            mx::unpack(kind, b, cb)
        })),
        Format::Nf4 => {
            let (packed, scales) = bytes.split_at(n / 2);
            for (pair, &b) in codes.chunks_exact_mut(2).zip(packed) {
                pair[0] = b >> 4;
                pair[1] = b & 15;
            }
            Meta::Nf4(
                scales
                    .chunks_exact(4)
                    .map(|s| f32::from_le_bytes([s[0], s[1], s[2], s[3]]))
                    .collect(),
            )
        }
        Format::Legacy(l) => {
            Meta::Legacy(blocks_of(&mut codes, bytes, l.block_bytes(), |b, cb| {
                l.unpack(b, cb)
            }))
        }
        Format::I(q) => {
            let mut steps = Vec::new();
            q.unpack_row(bytes, &mut codes, &mut steps);
            Meta::Packed {
                bytes: bytes.to_vec(),
                steps,
            }
        }
        Format::T(t) => {
            let mut steps = Vec::new();
            t.unpack_row(bytes, &mut codes, &mut steps);
            Meta::Packed {
                bytes: bytes.to_vec(),
                steps,
            }
        }
    };
    Encoded {
        format: f,
        codes,
        meta,
    }
}

pub(super) fn sub_blocks(e: &Encoded) -> Vec<SubBlock> {
    let mut out = Vec::new();
    match (&e.meta, e.format) {
        (Meta::K(blocks), Format::K(k)) => {
            let len = k.sub_len();
            for (b, sb) in blocks.iter().enumerate() {
                for j in 0..k.sub_blocks() {
                    out.push(SubBlock {
                        start: b * QK_K + j * len,
                        len,
                        step: sb.step(j),
                        min: sb.min(j),
                    });
                }
            }
        }
        (Meta::Mxfp4(blocks), _) => {
            for (b, &x) in blocks.iter().enumerate() {
                out.push(SubBlock {
                    start: b * fp4::MXFP4_BLOCK,
                    len: fp4::MXFP4_BLOCK,
                    step: 2.0 * e8m0_half(x),
                    min: 0.0,
                });
            }
        }
        (Meta::Nvfp4(blocks), _) => {
            for (b, s) in blocks.iter().enumerate() {
                for (j, &x) in s.iter().enumerate() {
                    out.push(SubBlock {
                        start: b * fp4::NVFP4_BLOCK + j * fp4::NVFP4_SUB,
                        len: fp4::NVFP4_SUB,
                        step: 2.0 * ue4m3_half(x),
                        min: 0.0,
                    });
                }
            }
        }
        (Meta::Mx(blocks), _) => {
            for (b, &x) in blocks.iter().enumerate() {
                out.push(SubBlock {
                    start: b * MX_BLOCK,
                    len: MX_BLOCK,
                    step: mx::scale_of(x),
                    min: 0.0,
                });
            }
        }
        (Meta::Nf4(blocks), _) => {
            for (b, &a) in blocks.iter().enumerate() {
                let start = b * nf4::BLOCK;
                out.push(SubBlock {
                    start,
                    len: nf4::BLOCK.min(e.codes.len().saturating_sub(start)),
                    step: a,
                    min: 0.0,
                });
            }
        }
        (Meta::Legacy(blocks), _) => {
            for (b, lb) in blocks.iter().enumerate() {
                out.push(SubBlock {
                    start: b * legacy::BLOCK,
                    len: legacy::BLOCK,
                    step: super::bits::f16_to_f32(lb.d),
                    min: -lb.m.map_or(0.0, super::bits::f16_to_f32),
                });
            }
        }
        (Meta::Packed { steps, .. }, f @ (Format::I(_) | Format::T(_))) => {
            let len = match f {
                Format::I(q) => q.sub_len(),
                _ => ternary::BLOCK,
            };
            for (j, &step) in steps.iter().enumerate() {
                out.push(SubBlock {
                    start: j * len,
                    len,
                    step,
                    min: 0.0,
                });
            }
        }
        _ => {}
    }
    out
}

/// The values of an MX element type's codes, computed once per type.
fn mx_table(kind: MxKind) -> &'static [f32] {
    use std::sync::OnceLock;
    static TABLES: [OnceLock<Vec<f32>>; 6] = [const { OnceLock::new() }; 6];
    let i = MxKind::ALL.iter().position(|&k| k == kind).unwrap_or(0);
    TABLES[i].get_or_init(|| kind.table())
}

const fn part(name: &'static str, bits: u32) -> Part {
    Part { name, bits }
}

pub(super) fn layout(f: Format) -> Layout {
    let parts = match f {
        Format::K(k) => {
            let payload = match k {
                KQuant::Q2K => "payload: 2-bit codes",
                KQuant::Q3K => "payload: 3-bit codes",
                KQuant::Q4K => "payload: 4-bit codes",
                KQuant::Q5K => "payload: 5-bit codes",
                KQuant::Q6K => "payload: 6-bit codes",
            };
            let sub = match k {
                KQuant::Q2K => "sub-block scales and mins: 4+4 bit x 16",
                KQuant::Q3K => "sub-block scales: 6 bit x 16",
                KQuant::Q4K | KQuant::Q5K => "sub-block scales and mins: 6+6 bit x 8",
                KQuant::Q6K => "sub-block scales: int8 x 16",
            };
            let sup = if k.has_mins() {
                "super-block d, dmin: f16 x 2"
            } else {
                "super-block d: f16"
            };
            vec![
                part(payload, k.code_bits() * QK_K as u32),
                part(sub, k.sub_scale_bits()),
                part(sup, k.super_scale_bits()),
            ]
        }
        Format::Mxfp4 => vec![
            part("payload: E2M1 codes", 4 * 32),
            part("shared exponent: E8M0", 8),
        ],
        Format::Nvfp4 => vec![
            part("payload: E2M1 codes", 4 * 64),
            part("scales: UE4M3 x 4", 32),
        ],
        Format::Mx(kind) => vec![
            part(
                match kind {
                    MxKind::Fp8E4M3 => "payload: E4M3 codes",
                    MxKind::Fp8E5M2 => "payload: E5M2 codes",
                    MxKind::Fp6E2M3 => "payload: E2M3 codes",
                    MxKind::Fp6E3M2 => "payload: E3M2 codes",
                    MxKind::Fp4E2M1 => "payload: E2M1 codes",
                    MxKind::Int8 => "payload: INT8 codes",
                },
                kind.element_bits() * MX_BLOCK as u32,
            ),
            part("shared exponent: E8M0", 8),
        ],
        Format::Nf4 => vec![part("payload: NF4 codes", 4 * 64), part("absmax: f32", 32)],
        Format::Legacy(l) => {
            let meta = if matches!(l, Legacy::Q4_1 | Legacy::Q5_1) {
                part("d, m: f16 x 2", 32)
            } else {
                part("d: f16", 16)
            };
            let payload = match l.code_bits() {
                4 => "payload: 4-bit codes",
                5 => "payload: 5-bit codes",
                _ => "payload: 8-bit codes",
            };
            vec![part(payload, l.code_bits() * 32), meta]
        }
        Format::I(q) => q.parts().iter().map(|&(n, b)| part(n, b)).collect(),
        Format::T(t) => t.parts().iter().map(|&(n, b)| part(n, b)).collect(),
    };
    Layout {
        block_len: f.block_len(),
        parts,
        per_tensor_bits: 0,
    }
}

pub(super) fn grid(f: Format) -> Grid {
    let (values, uniform): (Vec<f32>, bool) = match f {
        Format::K(k) => (
            (0..1i32 << k.code_bits())
                .map(|c| (c - k.code_offset()) as f32)
                .collect(),
            true,
        ),
        Format::Mxfp4 | Format::Nvfp4 => (
            E2M1_DOUBLED.iter().map(|&v| f32::from(v) / 2.0).collect(),
            false,
        ),
        Format::Mx(kind) => (mx_table(kind).to_vec(), kind == MxKind::Int8),
        Format::Nf4 => (nf4::NF4.to_vec(), false),
        Format::Legacy(Legacy::Q8_0) => ((0u8..=255).map(|c| f32::from(c as i8)).collect(), true),
        Format::Legacy(l) => (
            (0..1i32 << l.code_bits())
                .map(|c| (c - l.code_offset()) as f32)
                .collect(),
            true,
        ),
        Format::I(q) => (q.levels().to_vec(), evenly_spaced(q.levels())),
        Format::T(t) => (t.levels().to_vec(), true),
    };
    Grid { values, uniform }
}

/// Consecutive values are equally far apart (IQ3_S's odd levels), so the grid is uniform.
fn evenly_spaced(v: &[f32]) -> bool {
    v.windows(3).all(|w| w[1] - w[0] == w[2] - w[1])
}
