//! CSV for spreadsheets and data frames: a header row, then one row per channel.
//!
//! ```text
//! index,label,mae,rmse,max_error,sqnr_db,levels_used,levels_available,utilization,
//!   collapsed,clipped
//!   then, with the ladder, mae_<granularity>,rmse_<granularity> for each rung
//!   (mae_tensor,rmse_tensor,mae_channel,rmse_channel,mae_group:32,...)
//!   then, with the format ladder, mae_<name>,rmse_<name> for each measured entry
//!   (mae_q4_k,rmse_q4_k,mae_mxfp4,...)
//!   then, with values, codes (the row's codes separated by spaces, in one quoted cell)
//! ```
//!
//! Fields are quoted as RFC 4180 says (a field holding a comma, a quote or a line break is
//! put in quotes, quotes doubled); lines end in `\n`. A missing label or SQNR is an empty
//! field. Floats are written in shortest round-trip form (`0.1`, `1e-7`).

use std::io::{self, Write};

use crate::core::Report;
use crate::io::export::{ExportOptions, Extras};

/// Writes one row per channel of `report`.
pub(super) fn write(
    out: &mut impl Write,
    report: &Report,
    options: ExportOptions,
    extras: &Extras<'_>,
) -> io::Result<()> {
    let lineup = extras.lineup;
    let versus = extras.compare.map(|v| v.comparison);
    let entries: Vec<(&str, &[crate::core::Metrics])> = lineup
        .iter()
        .flat_map(|l| &l.entries)
        .filter_map(|e| {
            e.measured()
                .map(|m| (e.name.as_str(), m.channels.as_slice()))
        })
        .collect();
    let rungs = if options.ladder {
        report.ladder.as_slice()
    } else {
        &[]
    };
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
    for r in rungs {
        header.push(format!("mae_{}", r.granularity));
        header.push(format!("rmse_{}", r.granularity));
    }
    for (name, _) in &entries {
        header.push(format!("mae_{name}"));
        header.push(format!("rmse_{name}"));
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
        for r in rungs {
            let m = r.channels.get(c.index);
            row.push(m.map(|m| float(m.mae)).unwrap_or_default());
            row.push(m.map(|m| float(m.rmse)).unwrap_or_default());
        }
        for (_, channels) in &entries {
            let m = channels.get(c.index);
            row.push(m.map(|m| float(m.mae)).unwrap_or_default());
            row.push(m.map(|m| float(m.rmse)).unwrap_or_default());
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
