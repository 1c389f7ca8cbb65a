//! Numbers in captions, quoted from a report rather than typed: a scenario's `look` lines
//! and a demo step's caption write `{mae quiet tensor/channel}` and are shown with the
//! figure the core computes ([`crate::core::quote`]).
//!
//! A placeholder is `{QUANTITY [ROW] RUNG[/RUNG]}`:
//!
//! - QUANTITY: `mae` or `rmse` (of ROW: a channel's label, its 0-based index, or `all` for
//!   the whole matrix), `bits` (bits per weight) or `collapsed` (channels collapsed), the
//!   last two of the whole matrix and without ROW;
//! - RUNG: a granularity of the report's ladder, `tensor`, `channel` or `group:G`;
//!   `RUNG/RUNG` is the ratio of the quantity at the first to it at the second.
//!
//! Errors are given to 2 significant digits, ratios to 3, bits per weight to 4.

use crate::core::Report;
use crate::core::config::Granularity;
use crate::core::quote::{Of, Quantity, Quote, value};
use crate::io::export::num::sig;

/// Parses the inside of one placeholder against `report` (its labels name rows).
fn parse(inside: &str, report: &Report) -> Result<Quote, String> {
    let words: Vec<&str> = inside.split_whitespace().collect();
    let (quantity, of, rungs) = match words.as_slice() {
        [q @ ("mae" | "rmse"), row, rungs] => {
            let quantity = if *q == "mae" {
                Quantity::Mae
            } else {
                Quantity::Rmse
            };
            (quantity, row_of(row, report)?, *rungs)
        }
        ["bits", rungs] => (Quantity::Bits, Of::Matrix, *rungs),
        ["collapsed", rungs] => (Quantity::Collapsed, Of::Matrix, *rungs),
        _ => {
            return Err(format!(
                "{{{inside}}} is not a figure: write {{mae ROW RUNG}}, {{rmse ROW RUNG/RUNG}}, {{bits RUNG}} or {{collapsed RUNG}}"
            ));
        }
    };
    let granularity = |g: &str| {
        g.parse::<Granularity>()
            .map_err(|e| format!("{{{inside}}}: {e}"))
    };
    let (at, over) = match rungs.split_once('/') {
        Some((a, b)) => (granularity(a)?, Some(granularity(b)?)),
        None => (granularity(rungs)?, None),
    };
    Ok(Quote {
        quantity,
        of,
        at,
        over,
    })
}

/// A row named by its label, its index, or `all`.
fn row_of(name: &str, report: &Report) -> Result<Of, String> {
    if name == "all" {
        return Ok(Of::Matrix);
    }
    if let Some(i) = report
        .channels
        .iter()
        .position(|c| c.label.as_deref() == Some(name))
    {
        return Ok(Of::Row(i));
    }
    match name.parse::<usize>() {
        Ok(i) if i < report.channels.len() => Ok(Of::Row(i)),
        _ => Err(format!("no channel {name:?} to quote")),
    }
}

/// `text` with each placeholder replaced by its figure in `report` (which needs its
/// ladder), or why one cannot be.
pub fn fill(text: &str, report: &Report) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("a {{ without its }} in {text:?}"))?;
        let inside = &after[..close];
        let quote = parse(inside, report)?;
        let x = value(report, &quote)
            .ok_or_else(|| format!("{{{inside}}}: the report has no such figure"))?;
        let digits = match (quote.over, quote.quantity) {
            (Some(_), _) => 3,
            // A count of channels, whole however large.
            (None, Quantity::Collapsed) => 20,
            (None, Quantity::Bits) => 4,
            (None, Quantity::Mae | Quantity::Rmse) => 2,
        };
        out.push_str(&sig(x, digits));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Config, Matrix, analyse};

    fn report() -> Report {
        let m = Matrix::with_labels(
            ndarray::Array2::from_shape_vec(
                (2, 4),
                vec![0.05, -0.08, 0.12, -0.15, 2.21, -3.10, 1.77, -2.66],
            )
            .unwrap(),
            vec![Some("quiet".into()), Some("loud".into())],
        )
        .unwrap();
        analyse(&m, &Config::default()).unwrap()
    }

    #[test]
    fn placeholders_become_the_reports_figures() {
        let r = report();
        assert_eq!(
            fill("MAE {mae quiet tensor} to {mae quiet channel}, {mae 0 tensor/channel}-fold; {bits channel} bits, {collapsed tensor} collapsed", &r).unwrap(),
            "MAE 0.1 to 0.0054, 18.7-fold; 12 bits, 1 collapsed"
        );
        assert_eq!(fill("no figure here", &r).unwrap(), "no figure here");
    }

    #[test]
    fn a_bad_placeholder_says_what_is_wrong() {
        let r = report();
        for (text, says) in [
            ("{mae nobody tensor}", "no channel \"nobody\""),
            ("{mae quiet tensr}", "{mae quiet tensr}"),
            ("{speed tensor}", "is not a figure"),
            ("{mae quiet group:64}", "no such figure"),
            ("open {mae", "without its }"),
        ] {
            let e = fill(text, &r).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
