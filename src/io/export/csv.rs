//! CSV for spreadsheets and data frames: a header row, then one row per channel.
//!
//! ```text
//! index,label,mae,rmse,max_error,sqnr_db,levels_used,levels_available,utilization,
//!   collapsed,clipped
//!   then, with importance or activations (--imatrix, --activations),
//!   output_mse,output_sqnr_db,imatrix_mse (empty where the input is absent)
//!   then, with the ladder, mae_<granularity>,rmse_<granularity> for each rung
//!   (mae_tensor,rmse_tensor,mae_channel,rmse_channel,mae_group:32,...), and with
//!   activations output_mse_<granularity>, with importance imatrix_mse_<granularity>
//!   then, with the format ladder, mae_<name>,rmse_<name> for each measured entry
//!   (mae_q4_k,rmse_q4_k,mae_mxfp4,...), and output_mse_<name>, imatrix_mse_<name> as for
//!   the rungs
//!   then, with methods (--method, --act-quant, --smoothquant), per weight method
//!   <m>_output_mse,<m>_output_sqnr_db and, for awq and gptq, <m>_rtn_output_mse,
//!   <m>_rtn_output_sqnr_db (round to nearest with the same quantizer), awq_ratio (the
//!   chosen ratio, the same on every row); per W8A8 granularity w8a8_<g>_output_mse,
//!   w8a8_<g>_output_sqnr_db and, with SmoothQuant, w8a8_<g>_smoothquant_alpha (the same on
//!   every row), w8a8_<g>_smoothquant_output_mse, w8a8_<g>_smoothquant_output_sqnr_db
//!   (<m>: rtn, awq, gptq; <g>: tensor, token)
//!   then, with values, codes (the row's codes separated by spaces, in one quoted cell)
//! ```
//!
//! Fields are quoted as RFC 4180 says (a field holding a comma, a quote or a line break is
//! put in quotes, quotes doubled); lines end in `\n`. A missing label or SQNR is an empty
//! field. Floats are written in shortest round-trip form (`0.1`, `1e-7`).

use std::io::{self, Write};

use crate::core::Report;
use crate::core::importance::{OutputErrors, OutputMetrics};
use crate::core::method::OutputError;
use crate::core::method::run::{Method, Methods};
use crate::io::export::{ExportOptions, Extras};

/// The output columns a report has: `output_mse` (with activations), `imatrix_mse` (with
/// importance).
fn output_columns(o: Option<&OutputErrors>) -> (bool, bool) {
    o.map_or((false, false), |o| {
        (o.tokens.is_some(), o.importance.is_some())
    })
}

/// Per-channel output columns of a rung or entry's errors, when the report has them.
fn push_output(
    row: &mut Vec<String>,
    o: Option<&OutputErrors>,
    index: usize,
    (outputs, weighted): (bool, bool),
) {
    let m: OutputMetrics = o
        .and_then(|o| o.channels.get(index).copied())
        .unwrap_or_default();
    if outputs {
        row.push(m.output_mse.map(float).unwrap_or_default());
    }
    if weighted {
        row.push(m.imatrix_mse.map(float).unwrap_or_default());
    }
}

/// A measured entry of the format ladder: its name, each channel's errors, its output
/// errors.
type Measured<'a> = (
    &'a str,
    &'a [crate::core::Metrics],
    Option<&'a OutputErrors>,
);

/// Writes one row per channel of `report`.
pub(super) fn write(
    out: &mut impl Write,
    report: &Report,
    options: ExportOptions,
    extras: &Extras<'_>,
) -> io::Result<()> {
    let format_ladder = extras.format_ladder;
    let versus = extras.compare.map(|v| v.comparison);
    let entries: Vec<Measured<'_>> = format_ladder
        .iter()
        .flat_map(|l| &l.entries)
        .filter_map(|e| {
            e.measured()
                .map(|m| (e.name.as_str(), m.channels.as_slice(), m.output.as_ref()))
        })
        .collect();
    let cols = output_columns(report.output.as_ref());
    let rungs = if options.ladder {
        report.ladder.as_slice()
    } else {
        &[]
    };
    let mut header = header(report, rungs, &entries, cols);
    if let Some(m) = extras.methods {
        header.extend(method_header(m));
    }
    if versus.is_some() {
        header.extend(["a_mae", "a_rmse", "a_collapsed", "rmse_change"].map(String::from));
    }
    if options.values {
        header.push("codes".to_string());
    }
    line(out, header.iter().map(|h| field(h)))?;
    for c in &report.channels {
        let m = &c.metrics;
        let mut row = vec![
            c.index.to_string(),
            c.label.as_deref().map(field).unwrap_or_default(),
            float(m.mae),
            float(m.rmse),
            float(m.max_error),
            m.sqnr_db.map(float).unwrap_or_default(),
            c.levels_used.to_string(),
            c.levels_available.to_string(),
            float(c.utilization),
            c.collapsed.to_string(),
            c.clipped.to_string(),
        ];
        if let Some(o) = &report.output {
            let m = o.channels.get(c.index).copied().unwrap_or_default();
            row.extend([
                m.output_mse.map(float).unwrap_or_default(),
                m.output_sqnr_db.map(float).unwrap_or_default(),
                m.imatrix_mse.map(float).unwrap_or_default(),
            ]);
        }
        for r in rungs {
            let m = r.channels.get(c.index);
            row.push(m.map(|m| float(m.mae)).unwrap_or_default());
            row.push(m.map(|m| float(m.rmse)).unwrap_or_default());
            push_output(&mut row, r.output.as_ref(), c.index, cols);
        }
        for (_, channels, output) in &entries {
            let m = channels.get(c.index);
            row.push(m.map(|m| float(m.mae)).unwrap_or_default());
            row.push(m.map(|m| float(m.rmse)).unwrap_or_default());
            push_output(&mut row, *output, c.index, cols);
        }
        if let Some(m) = extras.methods {
            row.extend(method_cells(m, c.index));
        }
        if let Some(pair) = versus.and_then(|v| v.channels.get(c.index)) {
            row.extend([
                float(pair.a.mae),
                float(pair.a.rmse),
                pair.collapsed.0.to_string(),
                float(pair.rmse_change),
            ]);
        }
        if options.values {
            let codes: Vec<String> = report
                .row_codes(c.index)
                .iter()
                .map(i32::to_string)
                .collect();
            row.push(format!("\"{}\"", codes.join(" ")));
        }
        line(out, row.into_iter())?;
    }
    Ok(())
}

/// The header row.
fn header(
    report: &Report,
    rungs: &[crate::core::Rung],
    entries: &[Measured<'_>],
    cols: (bool, bool),
) -> Vec<String> {
    let mut header: Vec<String> = [
        "index",
        "label",
        "mae",
        "rmse",
        "max_error",
        "sqnr_db",
        "levels_used",
        "levels_available",
        "utilization",
        "collapsed",
        "clipped",
    ]
    .map(String::from)
    .to_vec();
    if report.output.is_some() {
        header.extend(["output_mse", "output_sqnr_db", "imatrix_mse"].map(String::from));
    }
    let named = |header: &mut Vec<String>, name: &str| {
        header.push(format!("mae_{name}"));
        header.push(format!("rmse_{name}"));
        if cols.0 {
            header.push(format!("output_mse_{name}"));
        }
        if cols.1 {
            header.push(format!("imatrix_mse_{name}"));
        }
    };
    for r in rungs {
        named(&mut header, &r.granularity.to_string());
    }
    for (name, _, _) in entries {
        named(&mut header, name);
    }
    header
}

/// The methods' columns.
fn method_header(methods: &Methods) -> Vec<String> {
    let mut h = Vec::new();
    for r in &methods.weights {
        let m = r.method.name();
        h.extend([format!("{m}_output_mse"), format!("{m}_output_sqnr_db")]);
        if r.method != Method::Rtn {
            h.extend([
                format!("{m}_rtn_output_mse"),
                format!("{m}_rtn_output_sqnr_db"),
            ]);
        }
        if r.method == Method::Awq {
            h.push("awq_ratio".to_string());
        }
    }
    for r in &methods.w8a8 {
        let g = format!("w8a8_{}", r.granularity.name());
        h.extend([format!("{g}_output_mse"), format!("{g}_output_sqnr_db")]);
        if r.smoothquant.is_some() {
            h.extend([
                format!("{g}_smoothquant_alpha"),
                format!("{g}_smoothquant_output_mse"),
                format!("{g}_smoothquant_output_sqnr_db"),
            ]);
        }
    }
    h
}

/// The methods' cells of channel `i`, under [`method_header`].
fn method_cells(methods: &Methods, i: usize) -> Vec<String> {
    let pair = |e: Option<&OutputError>| {
        [
            e.map(|e| float(e.output_mse)).unwrap_or_default(),
            e.and_then(|e| e.output_sqnr_db)
                .map(float)
                .unwrap_or_default(),
        ]
    };
    let mut row = Vec::new();
    for r in &methods.weights {
        row.extend(pair(r.error.channels.get(i)));
        if r.method != Method::Rtn {
            row.extend(pair(r.rtn.channels.get(i)));
        }
        if r.method == Method::Awq {
            row.push(r.awq_ratio.map(float).unwrap_or_default());
        }
    }
    for r in &methods.w8a8 {
        row.extend(pair(r.error.channels.get(i)));
        if let Some(s) = &r.smoothquant {
            row.push(float(s.alpha));
            row.extend(pair(s.error.channels.get(i)));
        }
    }
    row
}

fn line(out: &mut impl Write, fields: impl Iterator<Item = String>) -> io::Result<()> {
    for (i, f) in fields.enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(f.as_bytes())?;
    }
    out.write_all(b"\n")
}

/// A text field, quoted when it holds a comma, a quote or a line break.
pub(super) fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Shortest round-trip form, with an exponent for very small or large values.
pub(super) fn float(x: f64) -> String {
    format!("{x:?}")
}

#[cfg(test)]
mod tests {
    use super::{field, float};

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(field("up_proj.0"), "up_proj.0");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn floats_round_trip() {
        assert_eq!(float(0.1), "0.1");
        assert_eq!(float(1e-7), "1e-7");
        assert_eq!(float(1e-7).parse::<f64>(), Ok(1e-7));
    }
}
