//! GPTQ (Frantar et al. 2022) for one layer, as the reference `gptq.py` runs it
//! (IST-DASLab/gptq at commit 2d65066: `GPTQ.add_batch`, `GPTQ.fasterquant`, and `quant.py`'s
//! `Quantizer` and `quantize`):
//!
//! ```text
//! H = 2/T Σ x xᵀ                         add_batch: (√(2/T) X)ᵀ (√(2/T) X) in f32
//! dead = diag(H) == 0:  H_jj = 1, W[:, j] = 0
//! act-order: columns by diag(H), largest first
//! H += 1 % of mean(diag(H)) on the diagonal          (the dampening)
//! U = cholesky(cholesky_inverse(cholesky(H)), upper)      H⁻¹ = Uᵀ U
//! for each block of 128 columns, for each column i in it:
//!     q_i = quantize(w_i);  err = (w_i − q_i) / U_ii
//!     w_j −= err · U_ij  for the block's columns j ≥ i
//! then the later blocks' columns: W[:, i2:] −= Err · U[i1:i2, i2:]
//! ```
//!
//! `Quantizer.find_params` per output channel (or per group of columns, found when the
//! loop reaches the group's first column, from the columns as the earlier blocks left them):
//! `xmin = min(min, 0)`, `xmax = max(max, 0)`; symmetric: `xmax = max(|xmin|, xmax)` and,
//! where `xmin < 0`, `xmin = −xmax`; both 0: `[−1, 1]`; `scale = (xmax − xmin) / maxq`,
//! `zero = round(−xmin / scale)` (symmetric: `(maxq + 1) / 2`); `q = clamp(round(w / scale) +
//! zero, 0, maxq)`, `ŵ = scale · (q − zero)`. Without groups the parameters come from `W`
//! before dead columns are zeroed, as in the reference.
//!
//! Each row's arithmetic depends only on that row and `U`, so rows run in parallel; the
//! block update is one product (faer's). Float order differs from MKL's and LAPACK's in `H`,
//! in the Cholesky factors and in the block products, so exactness is statistical: on the
//! reference's own fixtures, the same scales (without groups, bit for bit), at least 99.9 % of
//! the codes, and the output MSE within 1 %.

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;
use serde::Serialize;

use super::{LayerError, MethodError, Progress, check_inputs, linalg};
use crate::core::format::nf4::torch_mean;

/// GPTQ's settings, the reference's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GptqConfig {
    /// Bits per weight, 1 to 8.
    pub bits: u32,
    /// Symmetric quantizer (`--sym`); asymmetric by default.
    pub sym: bool,
    /// Columns per group; `None` for one scale per output channel.
    pub group: Option<usize>,
    /// Columns in order of `diag(H)`, largest first (`--act-order`).
    pub act_order: bool,
    /// Columns per lazy block (128).
    pub block: usize,
    /// The dampening, a fraction of the mean diagonal (0.01).
    pub percdamp: f32,
}

impl Default for GptqConfig {
    fn default() -> Self {
        Self {
            bits: 4,
            sym: false,
            group: None,
            act_order: false,
            block: 128,
            percdamp: 0.01,
        }
    }
}

/// One channel's (or one group's) quantizer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Params {
    /// `scale`.
    pub scale: f32,
    /// `zero` (an integer held in f32).
    pub zero: f32,
}

/// `Quantizer.find_params` on one channel's values.
#[must_use]
pub fn find_params(x: &[f32], maxq: f32, sym: bool) -> Params {
    let (lo, hi) = x
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let mut xmin = lo.min(0.0);
    let mut xmax = hi.max(0.0);
    if sym {
        xmax = xmin.abs().max(xmax);
        if xmin < 0.0 {
            xmin = -xmax;
        }
    }
    if xmin == 0.0 && xmax == 0.0 {
        xmin = -1.0;
        xmax = 1.0;
    }
    let scale = (xmax - xmin) / maxq;
    let zero = if sym {
        f32::midpoint(maxq, 1.0)
    } else {
        (-xmin / scale).round_ties_even()
    };
    Params { scale, zero }
}

/// `quant.quantize`: the code of `x` and its value.
#[must_use]
pub fn quantize(x: f32, p: Params, maxq: f32) -> (f32, f32) {
    let q = ((x / p.scale).round_ties_even() + p.zero).clamp(0.0, maxq);
    (q, p.scale * (q - p.zero))
}

/// What happened to `H` on the way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hessian {
    /// Columns whose `H_jj` is 0 (their input is always 0): `H_jj` set to 1, weights to 0.
    pub dead_columns: Vec<usize>,
    /// What the dampening added to the diagonal.
    pub damp: f32,
    /// The mean of `diag(H)` it was 1 % of.
    pub mean_diagonal: f32,
    /// Fewer tokens than columns: `H` has rank at most `tokens` and is singular without the
    /// dampening.
    pub singular: bool,
    /// Tokens.
    pub tokens: usize,
}

impl Hessian {
    /// What to tell a user about `H`, when there is something to tell.
    #[must_use]
    pub fn note(&self, columns: usize) -> Option<String> {
        let mut parts = Vec::new();
        if self.singular {
            parts.push(format!(
                "H = 2/T XᵀX is singular: {} tokens for {} columns give it rank at most {}; \
                 the dampening added {} (1 % of its mean diagonal {}) to every diagonal entry, \
                 which makes it invertible, and GPTQ's updates lean on that",
                self.tokens, columns, self.tokens, self.damp, self.mean_diagonal
            ));
        }
        if !self.dead_columns.is_empty() {
            parts.push(format!(
                "{} dead input column{} (always 0 in the activations): weights set to 0",
                self.dead_columns.len(),
                if self.dead_columns.len() == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// GPTQ's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Gptq {
    /// The settings.
    pub config: GptqConfig,
    /// Codes in `[0, 2^b − 1]`, in the original column order.
    pub codes: Array2<u8>,
    /// Per row, one quantizer per group in the order the loop met them (one without groups).
    pub params: Array2<Params>,
    /// The column order (the identity without act-order).
    pub perm: Vec<usize>,
    /// `ŵ`, in the original column order.
    pub w_hat: Array2<f32>,
    /// The Hessian's story.
    pub hessian: Hessian,
    /// Each column's `(w − q)² / U_ii²` summed over rows, halved (the reference's `Losses`),
    /// in the original column order.
    pub column_losses: Vec<f64>,
    /// The output error of `Ŵ`.
    pub error: LayerError,
    /// The output error of round to nearest with the same quantizer.
    pub error_rtn: LayerError,
}

/// One column's error pushed onward, for the worked arithmetic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Push {
    /// The column (original order).
    pub column: usize,
    /// The row.
    pub row: usize,
    /// `w` before rounding (with earlier columns' errors already pushed in).
    pub w: f32,
    /// Its value after rounding.
    pub q: f32,
    /// `U_ii`.
    pub d: f32,
    /// `(w − q) / U_ii`.
    pub err: f32,
    /// The next columns of the block (original order): `(column, U_ij, w_j before, w_j
    /// after)`.
    pub onward: Vec<(usize, f32, f32, f32)>,
}

fn check_config(c: &GptqConfig, cols: usize) -> Result<(), MethodError> {
    if !(1..=8).contains(&c.bits) {
        return Err(MethodError::Bits { bits: c.bits });
    }
    if let Some(g) = c.group
        && g == 0
    {
        return Err(MethodError::Group {
            group: g,
            columns: cols,
        });
    }
    Ok(())
}

/// `H = (√(2/T) X)ᵀ (√(2/T) X)`, as `add_batch` with the tokens as one batch of `T` samples.
#[must_use]
pub fn hessian(x: &ArrayView2<'_, f32>) -> Array2<f32> {
    let t = x.nrows();
    let f = (2.0f64 / t as f64).sqrt() as f32;
    let xs = x.mapv(|v| f * v);
    linalg::gram(&xs.view())
}

/// GPTQ on `w` (`[out, in]`) with activations `x` (`[tokens, in]`); `progress` is told after
/// each column (all rows at once). `trace` asks for one column's error pushed onward: the
/// `(row, column)` to follow.
pub fn gptq(
    w: &ArrayView2<'_, f32>,
    x: &ArrayView2<'_, f32>,
    config: GptqConfig,
    trace: Option<(usize, usize)>,
    progress: Progress<'_>,
) -> Result<(Gptq, Option<Push>), MethodError> {
    check_inputs(w, x)?;
    let (rows, cols) = w.dim();
    check_config(&config, cols)?;
    let maxq = ((1u32 << config.bits) - 1) as f32;
    let mut h = hessian(x);
    let diag: Vec<f32> = (0..cols).map(|j| h[(j, j)]).collect();
    let dead: Vec<usize> = (0..cols).filter(|&j| diag[j] == 0.0).collect();
    // Per-channel parameters come from W before its dead columns are zeroed.
    let channel: Vec<Params> = w
        .rows()
        .into_iter()
        .map(|r| find_params(&r.to_vec(), maxq, config.sym))
        .collect();
    let mut wm = w.to_owned();
    for &j in &dead {
        h[(j, j)] = 1.0;
        wm.column_mut(j).fill(0.0);
    }
    let perm: Vec<usize> = if config.act_order {
        let d: Vec<f32> = (0..cols).map(|j| h[(j, j)]).collect();
        let mut p: Vec<usize> = (0..cols).collect();
        p.sort_by(|&a, &b| d[b].total_cmp(&d[a]));
        p
    } else {
        (0..cols).collect()
    };
    let mut hp = Array2::<f32>::zeros((cols, cols));
    for (a, &pa) in perm.iter().enumerate() {
        for (b, &pb) in perm.iter().enumerate() {
            hp[(a, b)] = h[(pa, pb)];
        }
    }
    let mut wp = wm.select(Axis(1), &perm).as_standard_layout().into_owned();
    let d: Vec<f32> = (0..cols).map(|j| hp[(j, j)]).collect();
    let mean_diagonal = torch_mean(&d, 1);
    let damp = config.percdamp * mean_diagonal;
    for j in 0..cols {
        hp[(j, j)] += damp;
    }
    let hessian = Hessian {
        dead_columns: dead,
        damp,
        mean_diagonal,
        singular: x.nrows() < cols,
        tokens: x.nrows(),
    };
    let u = linalg::inverse_cholesky_upper(&hp)
        .map_err(|_| MethodError::NotPositiveDefinite { damp })?;
    let state = Loop {
        u: &u,
        maxq,
        config,
        channel: &channel,
        trace: trace.map(|(r, c)| (r, perm.iter().position(|&p| p == c).unwrap_or(0))),
    };
    let out = state.run(&mut wp, progress)?;
    let mut codes = Array2::<u8>::zeros((rows, cols));
    let mut w_hat = Array2::<f32>::zeros((rows, cols));
    let mut column_losses = vec![0.0f64; cols];
    for (k, &c) in perm.iter().enumerate() {
        codes.column_mut(c).assign(&out.codes.column(k));
        w_hat.column_mut(c).assign(&out.q.column(k));
        column_losses[c] = out.losses[k];
    }
    let error = LayerError::of(x, w, &w_hat.view());
    let rtn = rtn(w, config, maxq);
    let error_rtn = LayerError::of(x, w, &rtn.view());
    let push = out.push.map(|mut p| {
        p.column = perm[p.column];
        for o in &mut p.onward {
            o.0 = perm[o.0];
        }
        p
    });
    Ok((
        Gptq {
            config,
            codes,
            params: out.params,
            perm,
            w_hat,
            hessian,
            column_losses,
            error,
            error_rtn,
        },
        push,
    ))
}

/// Round to nearest with GPTQ's `Quantizer` (`config`'s bits, symmetry and groups; bits
/// must be 1 to 8): per channel, or per group of the original columns.
#[must_use]
pub fn round_to_nearest(w: &ArrayView2<'_, f32>, config: GptqConfig) -> Array2<f32> {
    rtn(w, config, ((1u32 << config.bits.clamp(1, 8)) - 1) as f32)
}

/// Round to nearest with GPTQ's quantizer: per channel, or per group of the original columns.
fn rtn(w: &ArrayView2<'_, f32>, config: GptqConfig, maxq: f32) -> Array2<f32> {
    let cols = w.ncols();
    let g = config.group.unwrap_or(cols).max(1);
    let mut out = w.to_owned();
    for mut row in out.rows_mut() {
        let vals = row.to_vec();
        for (k, chunk) in vals.chunks(g).enumerate() {
            let p = find_params(chunk, maxq, config.sym);
            for (j, &v) in chunk.iter().enumerate() {
                row[k * g + j] = quantize(v, p, maxq).1;
            }
        }
    }
    out
}

/// The column loop's fixed inputs.
struct Loop<'a> {
    u: &'a Array2<f32>,
    maxq: f32,
    config: GptqConfig,
    channel: &'a [Params],
    /// `(row, permuted column)`.
    trace: Option<(usize, usize)>,
}

/// The column loop's results, in permuted column order.
struct LoopOut {
    codes: Array2<u8>,
    q: Array2<f32>,
    params: Array2<Params>,
    losses: Vec<f64>,
    push: Option<Push>,
}

impl Loop<'_> {
    #[expect(
        clippy::too_many_lines,
        reason = "the reference's loop, kept in one piece to read beside it"
    )]
    fn run(&self, w: &mut Array2<f32>, progress: Progress<'_>) -> Result<LoopOut, MethodError> {
        let (rows, cols) = w.dim();
        let bs = self.config.block.max(1);
        let groups = self.config.group.map_or(1, |g| cols.div_ceil(g));
        let none = Params {
            scale: 0.0,
            zero: 0.0,
        };
        let mut params = Array2::from_elem((rows, groups), none);
        if self.config.group.is_none() {
            for (r, p) in self.channel.iter().enumerate() {
                params[(r, 0)] = *p;
            }
        }
        let mut codes = Array2::<u8>::zeros((rows, cols));
        let mut q = Array2::<f32>::zeros((rows, cols));
        let mut losses = vec![0.0f64; cols];
        let mut push = None;
        let mut i1 = 0;
        while i1 < cols {
            let i2 = (i1 + bs).min(cols);
            let count = i2 - i1;
            let mut w1 = w.slice_axis(Axis(1), (i1..i2).into()).to_owned();
            let mut err1 = Array2::<f32>::zeros((rows, count));
            for i in 0..count {
                let col = i1 + i;
                if let Some(g) = self.config.group
                    && col % g == 0
                {
                    let end = (col + g).min(cols);
                    let data = w.as_slice().unwrap_or(&[]);
                    let found: Vec<Params> = (0..rows)
                        .into_par_iter()
                        .map(|r| {
                            let part = &data[r * cols + col..r * cols + end];
                            find_params(part, self.maxq, self.config.sym)
                        })
                        .collect();
                    for (r, p) in found.into_iter().enumerate() {
                        params[(r, col / g)] = p;
                    }
                }
                let gi = self.config.group.map_or(0, |g| col / g);
                let d = self.u[(col, col)];
                let us = self.u.as_slice().unwrap_or(&[]);
                let hrow = &us[col * cols + i1..col * cols + i2];
                if let Some((tr, tc)) = self.trace
                    && tc == col
                {
                    push = Some(self.follow(
                        w1.row(tr).as_slice().unwrap_or(&[]),
                        i,
                        col,
                        params[(tr, gi)],
                        tr,
                        hrow,
                    ));
                }
                let w1s = w1.as_slice_mut().unwrap_or(&mut []);
                let e1s = err1.as_slice_mut().unwrap_or(&mut []);
                let results: Vec<(f32, f32, f32)> = w1s
                    .par_chunks_mut(count)
                    .zip(e1s.par_chunks_mut(count))
                    .enumerate()
                    .map(|(r, (wr, er))| {
                        let p = params[(r, gi)];
                        let wv = wr[i];
                        let (code, qv) = quantize(wv, p, self.maxq);
                        let e = (wv - qv) / d;
                        for j in i..count {
                            wr[j] -= e * hrow[j];
                        }
                        er[i] = e;
                        (code, qv, wv)
                    })
                    .collect();
                let mut loss = 0.0f64;
                for (r, (code, qv, wv)) in results.into_iter().enumerate() {
                    codes[(r, col)] = code as u8;
                    q[(r, col)] = qv;
                    let e = f64::from(wv) - f64::from(qv);
                    loss += e * e / (f64::from(d) * f64::from(d)) / 2.0;
                }
                losses[col] = loss;
                if !progress(col + 1, cols) {
                    return Err(MethodError::Cancelled);
                }
            }
            if i2 < cols {
                let ws = w.as_slice_mut().ok_or(MethodError::Empty {
                    what: "the weights",
                })?;
                let us = self.u.as_slice().unwrap_or(&[]);
                linalg::sub_mul(
                    &mut ws[i2..],
                    (rows, cols - i2, cols),
                    err1.as_slice().unwrap_or(&[]),
                    count,
                    (&us[i1 * cols + i2..], cols),
                );
            }
            i1 = i2;
        }
        Ok(LoopOut {
            codes,
            q,
            params,
            losses,
            push,
        })
    }

    /// Row `row`'s column `col` (position `i` of its block, whose values are `w1`) and its
    /// error pushed onto the next three columns of the block.
    fn follow(
        &self,
        w1: &[f32],
        i: usize,
        col: usize,
        p: Params,
        row: usize,
        hrow: &[f32],
    ) -> Push {
        let wv = w1[i];
        let (_, qv) = quantize(wv, p, self.maxq);
        let d = self.u[(col, col)];
        let err = (wv - qv) / d;
        let onward = (i + 1..w1.len().min(i + 4))
            .map(|j| (col + j - i, hrow[j], w1[j], w1[j] - err * hrow[j]))
            .collect();
        Push {
            column: col,
            row,
            w: wv,
            q: qv,
            d,
            err,
            onward,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn find_params_follows_the_reference_quantizer() {
        let p = find_params(&[-1.0, 0.5, 2.0], 15.0, false);
        assert_eq!(p.scale, 0.2);
        assert_eq!(p.zero, 5.0);
        // all non-negative: the range still starts at 0
        let p = find_params(&[0.5, 1.5], 15.0, false);
        assert_eq!((p.scale, p.zero), (0.1, 0.0));
        // symmetric with no negative value keeps xmin = 0 and the zero point 8
        let p = find_params(&[0.5, 1.5], 15.0, true);
        assert_eq!((p.scale, p.zero), (0.1, 8.0));
        // 1.5 clamps to the top code, 15 − 8 = 7 steps: the row loses half its range
        assert_eq!(quantize(1.5, p, 15.0), (15.0, 0.1f32 * 7.0));
        // all zero: [-1, 1]
        let p = find_params(&[0.0, 0.0], 15.0, false);
        // all zero: [-1, 1], zero = round(1 / (2/15)) = round(7.4999995) = 7
        assert_eq!((p.scale, p.zero), (2.0 / 15.0, 7.0));
    }

    #[test]
    fn one_token_per_column_is_rounding_and_fewer_tokens_are_said() {
        // X = I: H = 2/T I, so GPTQ pushes nothing (U is diagonal) and rounds like RTN
        let w = array![[0.1f32, -0.7, 0.33], [1.0, 0.2, -0.4]];
        let x = Array2::<f32>::eye(3);
        let (g, _) = gptq(
            &w.view(),
            &x.view(),
            GptqConfig::default(),
            None,
            &mut |_, _| true,
        )
        .unwrap();
        assert_eq!(g.error, g.error_rtn);
        assert!(!g.hessian.singular);
        let x = array![[1.0f32, 0.0, 2.0]];
        let (g, _) = gptq(
            &w.view(),
            &x.view(),
            GptqConfig::default(),
            None,
            &mut |_, _| true,
        )
        .unwrap();
        assert!(g.hessian.singular);
        assert_eq!(g.hessian.dead_columns, vec![1]);
        let note = g.hessian.note(3).unwrap();
        assert!(note.contains("1 tokens for 3 columns"), "{note}");
        assert!(note.contains("1 dead input column "), "{note}");
        assert_eq!(g.w_hat.column(1).to_vec(), vec![0.0, 0.0]);
        let r = gptq(
            &w.view(),
            &x.view(),
            GptqConfig::default(),
            None,
            &mut |c, _| c < 2,
        );
        assert_eq!(r.unwrap_err(), MethodError::Cancelled);
    }
}
