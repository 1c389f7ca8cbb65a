//! The formats overlay: the format ladder ([`crate::core::format_ladder`]), every preset and
//! format on the data by bits per weight, with the selected entry's reference and the
//! arithmetic of its bits per weight below.
//!
//! ```text
//! ┌ Formats on this data: * Pareto front, > active (Enter uses it, Esc closes) ┐
//! │     format           bits/w       MAE      RMSE  SQNR dB  collapsed             │
//! │ ▶ * q2_k              2.625    0.5067     1.308    10.51          0             │
//! │   > lesson            4.004     0.427    0.8158    14.62         10             │
//! │     q4_k          not measured: Q4_K needs rows of a multiple of 256 values, g… │
//! │ llama.cpp Q2_K (quantize_row_q2_K_ref): super-blocks of 256, ...                 │
//! │ 2 (payload: 2-bit codes) + 0.5 (sub-block scales and mins) + 0.125 (...) = 2.625 │
//! └──────────────────────────────────────────────────────────────────────────────────┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::core::format_ladder::{Entry, FormatLadder, Within};
use crate::ui::Theme;
use crate::ui::help::tall_popup;
use crate::ui::utilization::{fit, pad, sig};

/// The formats overlay.
#[derive(Debug)]
pub struct FormatsOverlay<'a> {
    /// The format ladder, if one has arrived.
    pub format_ladder: Option<&'a FormatLadder>,
    /// Entries done of all while a newer ladder is being computed.
    pub progress: Option<(usize, usize)>,
    /// The entry under way, when it takes a while: its rows done of all.
    pub within: Option<Within>,
    /// The selected entry.
    pub selected: usize,
    /// The Pareto front is drawn on the output error (else on the weights' RMSE).
    pub front_on_output: bool,
    /// Styles.
    pub theme: &'a Theme,
}

/// Lines below the list for the selected entry.
const DETAIL_ROWS: u16 = 4;

impl Widget for &FormatsOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let popup = tall_popup(area, buf);
        let title = match self.progress {
            Some((_, 0)) => format!(
                "Formats on this data: computing{}",
                self.theme.glyphs.ellipsis
            ),
            Some((done, total)) => format!(
                "Formats on this data: computing {done} of {total}{}{}",
                self.within
                    .map(|w| format!(" ({} {} %)", w.name, w.rows * 100 / w.of.max(1)))
                    .unwrap_or_default(),
                self.theme.glyphs.ellipsis
            ),
            None if self.front_on_output => {
                "Formats: * front on the output error, > active (Enter uses it, Esc closes)".into()
            }
            None => "Formats: * Pareto front, > active (Enter uses it, Esc closes)".into(),
        };
        let block = self.theme.block(&title, true, false);
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() {
            return;
        }
        let Some(format_ladder) = self.format_ladder.filter(|l| !l.entries.is_empty()) else {
            Paragraph::new(Line::styled(
                format!(
                    "Running every preset and format on the data{}",
                    self.theme.glyphs.ellipsis
                ),
                self.theme.dim,
            ))
            .render(inner, buf);
            return;
        };
        let changes = format_ladder.changes.len().min(2);
        let detail_rows = if inner.height >= 10 {
            DETAIL_ROWS + u16::try_from(changes).unwrap_or(0)
        } else {
            1
        };
        let [header, list, detail] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(detail_rows),
        ])
        .areas(inner);
        let width = usize::from(inner.width);
        let output = Output::of(format_ladder);
        // Names up to 16 characters, or longer (a llama.cpp fallback's `q4_k -> q5_0 (rows
        // of 384)`) when every column still fits beside them.
        let name_width = format_ladder
            .entries
            .iter()
            .map(|e| e.name.chars().count())
            .max()
            .unwrap_or(6)
            .min(16.max(width.saturating_sub(Columns::all(output))));
        let columns = Columns::fitting(width, name_width, output, self.front_on_output);
        Line::styled(
            fit(&columns.header(name_width), width, self.theme.glyphs.ascii),
            self.theme.heading,
        )
        .render(header, buf);
        let selected = self.selected.min(format_ladder.entries.len() - 1);
        let rows = usize::from(list.height).max(1);
        let first = selected.saturating_sub(rows - 1);
        let lines: Vec<Line> = format_ladder
            .entries
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, e)| {
                let pointer = if i == selected {
                    self.theme.glyphs.pointer
                } else {
                    " "
                };
                let text = format!("{pointer}{}", columns.row(e, name_width));
                let style = match (i == selected, e.measured().is_none()) {
                    (true, true) => self.theme.selected.patch(self.theme.dim),
                    (true, false) => self.theme.selected,
                    (false, true) => self.theme.dim,
                    (false, false) if e.active => self.theme.active,
                    (false, false) if columns.front(e) => self.theme.good,
                    (false, false) => self.theme.text,
                };
                Line::styled(fit(&text, width, self.theme.glyphs.ascii), style)
            })
            .collect();
        Paragraph::new(lines).render(list, buf);
        let lines = self.below(format_ladder, selected, columns, changes, detail_rows);
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .render(detail, buf);
    }
}

impl FormatsOverlay<'_> {
    /// The lines below the list: the rankings that change, the columns that did not fit,
    /// then the selected entry's reference and cost.
    fn below<'l>(
        &self,
        format_ladder: &'l FormatLadder,
        selected: usize,
        columns: Columns,
        changes: usize,
        detail_rows: u16,
    ) -> Vec<Line<'l>> {
        let mut lines = detail_lines(&format_ladder.entries[selected], self.theme);
        if let Some(hidden) = columns.hidden() {
            lines.insert(0, Line::styled(hidden, self.theme.dim));
        }
        if changes > 0 && detail_rows > 1 {
            let said: Vec<&str> = format_ladder.changes[..changes]
                .iter()
                .map(|c| c.sentence.as_str())
                .collect();
            lines.insert(
                0,
                Line::styled(
                    format!("Rankings that change: {}.", said.join("; ")),
                    self.theme.active,
                ),
            );
        }
        lines
    }
}

/// The selected entry's reference, then its bits per weight part by part, or the reason it
/// was not measured (it then has no cost).
fn detail_lines<'a>(e: &Entry, theme: &Theme) -> Vec<Line<'a>> {
    let mut lines = vec![Line::styled(format!("{}: {}", e.name, e.about), theme.dim)];
    match (&e.result, e.bits_per_weight) {
        (Ok(_), Some(bits)) => {
            let parts: Vec<String> = e
                .parts
                .iter()
                .map(|p| format!("{} ({})", sig(p.bits_per_weight, 4), p.name))
                .collect();
            lines.push(Line::styled(
                format!("bits/weight = {} = {}", parts.join(" + "), sig(bits, 5)),
                theme.text,
            ));
        }
        (Err(why), _) => lines.push(Line::styled(format!("not measured: {why}"), theme.bad)),
        (Ok(_), None) => {}
    }
    lines
}

/// Which output error the entries have: `output_mse` with activations, else
/// `imatrix_mse`, else none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    None,
    Activations,
    Imatrix,
}

impl Output {
    fn of(format_ladder: &FormatLadder) -> Self {
        let overall = format_ladder
            .entries
            .iter()
            .find_map(|e| e.measured()?.output.as_ref().map(|o| o.overall));
        match overall {
            Some(o) if o.output_mse.is_some() => Self::Activations,
            Some(o) if o.imatrix_mse.is_some() => Self::Imatrix,
            _ => Self::None,
        }
    }

    fn heading(self) -> &'static str {
        match self {
            Self::Activations => "out MSE",
            Self::Imatrix | Self::None => "imat MSE",
        }
    }
}

/// Which columns fit: MAE and SQNR go first on a narrow screen, then the output error.
#[derive(Debug, Clone, Copy)]
struct Columns {
    mae: bool,
    sqnr: bool,
    output: Output,
    /// The output column fits (when there is one).
    out: bool,
    front_on_output: bool,
}

const NUM: usize = 9;

impl Columns {
    /// Every column but the name: pointer and mark, four numbers, collapsed, and the output
    /// error when there is one.
    fn all(output: Output) -> usize {
        3 + (4 + usize::from(output != Output::None)) * NUM + 10
    }

    fn fitting(width: usize, name: usize, output: Output, front_on_output: bool) -> Self {
        // pointer + mark + name, bits/w, RMSE, collapsed always; the output error, SQNR and
        // MAE when they fit.
        let base = 1 + 2 + name + NUM + NUM + 10;
        let out = output != Output::None && width >= base + NUM;
        let extra = usize::from(out);
        Self {
            sqnr: width >= base + (1 + extra) * NUM,
            mae: width >= base + (2 + extra) * NUM,
            output,
            out,
            front_on_output: front_on_output && output != Output::None,
        }
    }

    /// The entry is on the front drawn.
    fn front(self, e: &Entry) -> bool {
        if self.front_on_output {
            e.pareto_output
        } else {
            e.pareto
        }
    }

    /// Which columns did not fit, in words, if any did not.
    fn hidden(self) -> Option<String> {
        let mut gone = Vec::new();
        if !self.mae {
            gone.push("MAE");
        }
        if !self.sqnr {
            gone.push("SQNR");
        }
        if self.output != Output::None && !self.out {
            gone.push(self.output.heading());
        }
        (!gone.is_empty()).then(|| {
            format!(
                "Not shown at this width: {} (a wider terminal shows them).",
                gone.join(", ")
            )
        })
    }

    fn header(self, name: usize) -> String {
        let mut s = format!("   {}", pad("format", name, Alignment::Left));
        s.push_str(&pad("bits/w", NUM, Alignment::Right));
        if self.mae {
            s.push_str(&pad("MAE", NUM, Alignment::Right));
        }
        s.push_str(&pad("RMSE", NUM, Alignment::Right));
        if self.out {
            s.push_str(&pad(self.output.heading(), NUM, Alignment::Right));
        }
        if self.sqnr {
            s.push_str(&pad("SQNR dB", NUM, Alignment::Right));
        }
        s.push_str(&pad("collapsed", 10, Alignment::Right));
        s
    }

    fn row(self, e: &Entry, name: usize) -> String {
        let mark = match (self.front(e), e.active) {
            (true, true) => "*>",
            (true, false) => "* ",
            (false, true) => " >",
            (false, false) => "  ",
        };
        let mut s = format!(
            "{mark}{}",
            pad(&fit(&e.name, name, false), name, Alignment::Left)
        );
        let Some((m, bits)) = e.measured().zip(e.bits_per_weight) else {
            // No figure, the reason instead (cut to the width; the whole of it below).
            let why = e.result.as_ref().err().map_or("", String::as_str);
            return format!("{s}  not measured: {why}");
        };
        s.push_str(&pad(&sig(bits, 4), NUM, Alignment::Right));
        if self.mae {
            s.push_str(&pad(&sig(m.overall.mae, 4), NUM, Alignment::Right));
        }
        s.push_str(&pad(&sig(m.overall.rmse, 4), NUM, Alignment::Right));
        if self.out {
            let o = m.output.as_ref().map(|o| o.overall);
            let v = o.and_then(|o| match self.output {
                Output::Activations => o.output_mse,
                Output::Imatrix | Output::None => o.imatrix_mse,
            });
            let text = v.map_or_else(|| "-".into(), |v| sig(v, 4));
            s.push_str(&pad(&text, NUM, Alignment::Right));
        }
        if self.sqnr {
            let q = m.overall.sqnr_db.map_or_else(|| "-".into(), |q| sig(q, 4));
            s.push_str(&pad(&q, NUM, Alignment::Right));
        }
        s.push_str(&pad(
            &m.collapsed_channels.to_string(),
            10,
            Alignment::Right,
        ));
        s
    }
}
