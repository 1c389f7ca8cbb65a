//! The entry check on an encoded row: a finite value must never come back NaN or infinite.
//!
//! ggml's k-quant references do return NaN (or infinity) for super-blocks of large values:
//! `quantize_row_q{2,3,4,5,6}_K_ref` store the super-block scales `d` and `dmin` as f16, which
//! overflows to infinity once a sub-block's scale passes 65 504 (on rows of normal values, from
//! a largest magnitude of about 1.2e6 for Q2_K, 5e6 for Q4_K and Q5_K, 9e6 for Q3_K, 3e8 for
//! Q6_K), and their weighted least-squares sums overflow f32 on values near the f32 maximum. The encoders here are ggml's
//! arithmetic, so they produce the same NaN; such a row is refused with the super-block and the
//! reason instead of being reported as NaN (rows that ggml encodes to finite values, even all
//! zeros, are kept: those are its answer).

use super::{Encoded, Format, FormatError, Meta};

/// Checks the reconstruction `values` of the finite entries of `x`: the first that is not
/// finite makes the row an error naming its block. Only the k-quants can give one: MXFP4 and
/// NVFP4 never pick a grid value that overflows (their scales are at most 2^125 and 448), and
/// NF4 multiplies levels of at most 1 by a finite absmax, so their rows are not scanned again.
pub(super) fn check(
    f: Format,
    x: &[f32],
    out: &Encoded,
    values: &[f32],
) -> Result<(), FormatError> {
    if !matches!(f, Format::K(_)) {
        return Ok(());
    }
    let Some(i) = values
        .iter()
        .zip(x)
        .position(|(v, a)| !v.is_finite() && a.is_finite())
    else {
        return Ok(());
    };
    let len = f.block_len();
    let block = i / len;
    let cols = (block * len, ((block + 1) * len).min(x.len()));
    let span = &values[cols.0..cols.1];
    let what = if span.iter().any(|v| v.is_nan()) {
        "NaN"
    } else {
        "infinite values"
    };
    let amax = x[cols.0..cols.1].iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let reason = match (&out.meta, f) {
        (Meta::K(sbs), Format::K(k)) => {
            let sb = sbs.get(block).copied().unwrap_or_default();
            let name = k.name();
            let cause = if sb.d().is_infinite() {
                "its super-block scale d overflows f16"
            } else if sb.dmin().is_infinite() {
                "its super-block scale dmin overflows f16"
            } else {
                "its scale search overflows f32"
            };
            format!(
                "{name} cannot hold it: ggml's quantize_row_{}{}_ref gives {what} here ({cause}; \
                 the largest magnitude is {amax:e})",
                name[..2].to_ascii_lowercase(),
                &name[2..]
            )
        }
        _ => format!(
            "{} reconstructs the finite value {:e} as {}",
            f.name(),
            x[i],
            values[i]
        ),
    };
    Err(FormatError::NotFinite {
        row: None,
        unit: if matches!(f, Format::K(_)) {
            "super-block"
        } else {
            "block"
        },
        block,
        cols,
        reason,
    })
}
