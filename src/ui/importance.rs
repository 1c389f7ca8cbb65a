//! The importance view (`Alt-B`): which input columns matter, from the report's output
//! stage ([`crate::core::importance::OutputErrors`]): the most important columns as sorted
//! bars with their share, the share the top 1 % hold, the output error over the matrix,
//! and the important columns where values were clamped or collapsed to 0.
//!
//! ```text
//! ┌ Importance · activations built-in (Esc closes) ───────────────────────────┐
//! │ The top 1 % of columns (1 of 64) hold 28.5 % of the importance.           │
//! │ column   share                                                            │
//! │     16  28.5 % ████████████████████████████████████████                   │
//! │     48  27.9 % ███████████████████████████████████████                    │
//! │     30   1.1 % █▌                                                         │
//! │ Over the matrix: output MSE 0.0214 · output SQNR 33.1 dB · imatrix MSE 6e-6│
//! │ Columns at risk: 16 (28.5 %): 0 clamped, 2 collapsed to 0                 │
//! └───────────────────────────────────────────────────────────────────────────┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::model::ImportanceMode;
use crate::core::Report;
use crate::core::importance::{OutputErrors, OutputMetrics};
use crate::ui::Theme;
use crate::ui::help::tall_popup;
use crate::ui::utilization::{fit, sig};

/// The importance view.
#[derive(Debug)]
pub struct ImportanceOverlay<'a> {
    /// The report shown (its output errors, once computed).
    pub report: Option<&'a Report>,
    /// What is loaded, in words, and how it is used (`None`: nothing loaded).
    pub loaded: Option<(&'a str, ImportanceMode)>,
    /// Why what is loaded does not fit the data, if it does not.
    pub unfit: Option<&'a str>,
    /// Rows of the output errors done, of all, while they are coming.
    pub progress: Option<(usize, usize)>,
    /// The key that loads, and the key that switches on and off.
    pub keys: (&'a str, &'a str),
    /// Styles.
    pub theme: &'a Theme,
}

impl Widget for &ImportanceOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let popup = tall_popup(area, buf);
        let title = match self.loaded {
            Some((label, ImportanceMode::Weigh)) => {
                format!("Importance {} {label} (Esc closes)", self.theme.glyphs.sep)
            }
            Some((label, ImportanceMode::Measure)) => format!(
                "Importance {} {label}: measured only (Esc closes)",
                self.theme.glyphs.sep
            ),
            Some((label, ImportanceMode::Off)) => format!(
                "Importance {} {label}: off (Esc closes)",
                self.theme.glyphs.sep
            ),
            None => "Importance (Esc closes)".to_string(),
        };
        let block = self.theme.block(&title, true, false);
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() {
            return;
        }
        let lines = self.lines(usize::from(inner.width), usize::from(inner.height));
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}

impl ImportanceOverlay<'_> {
    fn lines(&self, width: usize, height: usize) -> Vec<Line<'static>> {
        let t = self.theme;
        let (load, toggle) = self.keys;
        let output = self.report.and_then(|r| r.output.as_ref());
        let Some(out) = output else {
            let why = match (self.loaded, self.unfit, self.progress) {
                (None, _, _) => format!(
                    "Nothing loaded. {load} loads an importance matrix (llama-imatrix's .gguf or .dat) or activations (.npy, FILE:TENSOR, channel text, or built-in: synthetic tokens with a few loud columns, no file needed)."
                ),
                (Some((_, ImportanceMode::Off)), _, _) => {
                    format!("Switched off: {toggle} switches it on.")
                }
                (Some(_), Some(why), _) => format!("It does not fit the data: {why}"),
                (Some(_), None, p) => format!(
                    "The output errors follow the weight report: computing{}{}",
                    crate::ui::ladder::percent(p),
                    t.glyphs.ellipsis
                ),
            };
            return vec![Line::styled(why, t.dim)];
        };
        let mut lines = Vec::new();
        if let Some(source) = &out.importance_source {
            let how = match self.report.and_then(|r| r.quantized_with.as_ref()) {
                Some(_) => "the codes were quantized with it (as llama-quantize --imatrix)",
                None => {
                    "the codes were quantized without it (this configuration's library takes none)"
                }
            };
            lines.push(Line::styled(
                format!("Importance from {source}; {how}."),
                t.dim,
            ));
        }
        // Lines the fixed parts take; the bars get the rest.
        let fixed = 4 + usize::from(!out.columns_at_risk.is_empty());
        let bars = height.saturating_sub(fixed + lines.len()).max(1);
        if let Some(s) = &out.importance {
            lines.push(Line::styled(
                format!(
                    "The top 1 % of columns ({} of {}) hold {} % of the importance; {} columns have importance 0.",
                    s.top_percent_columns,
                    s.columns,
                    sig(s.top_percent_share * 100.0, 3),
                    s.zero_columns
                ),
                t.text,
            ));
            lines.push(Line::styled(
                fit("column   share", width, t.glyphs.ascii),
                t.heading,
            ));
            let top = s.top.first().map_or(0.0, |&(_, share)| share);
            let room = width.saturating_sub(17);
            for &(column, share) in s.top.iter().take(bars) {
                let cells = if top > 0.0 {
                    ((share / top) * room as f64).round() as usize
                } else {
                    0
                };
                let bar = t
                    .glyphs
                    .bar_full
                    .repeat(cells.max(usize::from(share > 0.0)));
                let text = format!("{column:>6} {:>6} % {bar}", sig(share * 100.0, 3));
                let style = if share >= top && top > 0.0 {
                    t.active
                } else {
                    t.text
                };
                lines.push(Line::styled(fit(&text, width, t.glyphs.ascii), style));
            }
        }
        lines.push(Line::styled(
            format!("Over the matrix: {}", overall(&out.overall, t.glyphs.sep)),
            t.text,
        ));
        lines.push(risk_line(out, t));
        lines
    }
}

/// The measures over the matrix that the inputs give, in a line.
#[must_use]
pub fn overall(m: &OutputMetrics, sep: &str) -> String {
    let mut parts = Vec::new();
    if let Some(v) = m.output_mse {
        parts.push(format!("output MSE {}", sig(v, 4)));
    }
    if let Some(v) = m.output_sqnr_db {
        parts.push(format!("output SQNR {} dB", sig(v, 4)));
    }
    if let Some(v) = m.imatrix_mse {
        parts.push(format!("imatrix MSE {}", sig(v, 4)));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(&format!(" {sep} "))
    }
}

/// The important columns holding clamped or collapsed values.
fn risk_line(out: &OutputErrors, t: &Theme) -> Line<'static> {
    if out.columns_at_risk.is_empty() {
        return Line::styled(
            "No column holds a clamped value or a value collapsed to 0.",
            t.good,
        );
    }
    let shown: Vec<String> = out
        .columns_at_risk
        .iter()
        .map(|c| {
            format!(
                "{} ({} %): {} clamped, {} to 0",
                c.column,
                sig(c.share * 100.0, 3),
                c.clamped,
                c.zeroed
            )
        })
        .collect();
    let more = out.columns_at_risk_total.saturating_sub(shown.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Line::styled(
        format!(
            "Columns holding clamped or collapsed values, most important first: {}{more}",
            shown.join("; ")
        ),
        t.bad,
    )
}
