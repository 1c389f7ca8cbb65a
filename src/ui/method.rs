//! The method beyond rounding in words, for the Errors and Ladder panes' last line: its
//! output error beside round to nearest (over the layer and on the selected channel), its
//! progress while it runs, or why it could not run; and when it ran on only the first
//! tokens of large activations, how many.
//!
//! ```text
//! AWQ: output MSE 0.037 vs RTN 0.114 (int4 channel, ratio 0.35) · quiet 0.0145 vs 0.0145
//! W8A8 per tensor: output MSE 0.51 vs RTN W8 0.0021 (int8 weights alone) · r0 0.2 vs 0.001
//! SQ W8A8 per token: output MSE 0.004 vs RTN 0.009 (W8A8 unsmoothed, α 0.55)
//! GPTQ running 45%…
//! ```

use std::fmt::Write as _;

use crate::app::Model;
use crate::core::method::LayerError;
use crate::core::method::choice::Choice;
use crate::core::method::run::Methods;
use crate::ui::utilization::sig;

/// Significant digits of the errors.
const DIGITS: usize = 3;

/// The line for `model`'s method, when it is not round to nearest alone.
#[must_use]
pub fn line(model: &Model, ellipsis: &str) -> Option<String> {
    let method = model.method;
    if !method.runs() {
        return None;
    }
    let a = &model.analysis;
    let title = method.title();
    if model.stale() {
        return Some(format!("{title}: runs once the data parses"));
    }
    if let Some(e) = &a.method_failure {
        return Some(format!("{title}: {e}"));
    }
    if let Some(m) = &a.methods
        && let Some((error, rtn, rtn_name, detail)) = figures(method, m)
    {
        // The two figures first: a narrow pane cuts the rest.
        let mut s = format!(
            "{title}: output MSE {} vs {rtn_name} {} ({detail}",
            sig(error.overall.output_mse, DIGITS),
            sig(rtn.overall.output_mse, DIGITS),
        );
        if let Some(held) = m.tokens_held {
            let _ = write!(s, ", first {} of {held} tokens", m.tokens);
        }
        s.push(')');
        let i = model.selected_channel;
        if let (Some(e), Some(n)) = (error.channels.get(i), rtn.channels.get(i)) {
            let name = a
                .report
                .as_ref()
                .and_then(|rep| rep.channels.get(i))
                .map_or_else(|| format!("#{i}"), crate::ui::utilization::channel_name);
            let _ = write!(
                s,
                " · {name} {} vs {}",
                sig(e.output_mse, DIGITS),
                sig(n.output_mse, DIGITS)
            );
        }
        return Some(s);
    }
    if !a.busy {
        return Some(format!("{title}: not run"));
    }
    let progress = crate::ui::ladder::percent(a.method_progress);
    Some(format!("{title} running{progress}{ellipsis}"))
}

/// The method's error, round to nearest's beside it, what that is called, and the details
/// in parentheses: for a weight method, round to nearest with the same quantizer; for W8A8,
/// the int8 weights alone (what quantizing the activations too costs); for SmoothQuant, the
/// W8A8 layer without it.
fn figures(
    choice: Choice,
    m: &Methods,
) -> Option<(&LayerError, &LayerError, &'static str, String)> {
    match choice {
        Choice::Weights(method) => {
            let r = m.weight(method)?;
            let mut detail = m.scheme.short();
            if let Some(ratio) = r.awq_ratio {
                let _ = write!(detail, ", ratio {}", sig(ratio, 2));
            }
            if let Some(g) = &r.gptq
                && g.singular
            {
                detail.push_str(", H singular: dampened");
            }
            Some((&r.error, &r.rtn, "RTN", detail))
        }
        Choice::W8A8 { activations, .. } => {
            let r = m.w8a8.iter().find(|r| r.granularity == activations)?;
            match &r.smoothquant {
                None => Some((
                    &r.error,
                    &r.weights_only,
                    "RTN W8",
                    "int8 weights alone".to_string(),
                )),
                Some(s) => Some((
                    &s.error,
                    &r.error,
                    "RTN",
                    format!("W8A8 unsmoothed, α {}", sig(s.alpha, 2)),
                )),
            }
        }
    }
}
