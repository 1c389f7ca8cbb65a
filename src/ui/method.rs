//! The method beyond rounding in words, for the Errors and Ladder panes' last line: its
//! output error beside round to nearest with the same quantizer (over the layer and on the
//! selected channel), its progress while it runs, or why it could not run; and when it ran
//! on only the first tokens of large activations, how many.
//!
//! ```text
//! AWQ: output MSE 0.037 vs RTN 0.114 (int4 channel, ratio 0.35) · quiet 0.0145 vs 0.0145
//! GPTQ running 45%…
//! ```

use std::fmt::Write as _;

use crate::app::Model;
use crate::core::method::run::Method;
use crate::ui::utilization::sig;

/// Significant digits of the errors.
const DIGITS: usize = 3;

/// The line for `model`'s method, when it is not round to nearest alone.
#[must_use]
pub fn line(model: &Model, ellipsis: &str) -> Option<String> {
    let method = model.method;
    if method == Method::Rtn {
        return None;
    }
    let a = &model.analysis;
    if model.stale() {
        return Some(format!("{}: runs once the data parses", method.title()));
    }
    if let Some(e) = &a.method_failure {
        return Some(format!("{}: {e}", method.title()));
    }
    if let Some(m) = &a.methods
        && let Some(r) = m.weight(method)
    {
        // The two figures first: a narrow pane cuts the rest.
        let mut s = format!(
            "{}: output MSE {} vs RTN {} ({}",
            method.title(),
            sig(r.error.overall.output_mse, DIGITS),
            sig(r.rtn.overall.output_mse, DIGITS),
            m.scheme.short(),
        );
        if let Some(ratio) = r.awq_ratio {
            let _ = write!(s, ", ratio {}", sig(ratio, 2));
        }
        if let Some(g) = &r.gptq
            && g.singular
        {
            s.push_str(", H singular: dampened");
        }
        if let Some(held) = m.tokens_held {
            let _ = write!(s, ", first {} of {held} tokens", m.tokens);
        }
        s.push(')');
        let i = model.selected_channel;
        if let (Some(e), Some(n)) = (r.error.channels.get(i), r.rtn.channels.get(i)) {
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
        return Some(format!("{}: not run", method.title()));
    }
    let progress = crate::ui::ladder::percent(a.method_progress);
    Some(format!("{} running{progress}{ellipsis}", method.title()))
}
