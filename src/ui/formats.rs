//! The formats overlay: the format ladder ([`crate::core::lineup`]), every preset and
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
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use crate::core::lineup::{Entry, Lineup};
use crate::ui::Theme;
use crate::ui::help::centered;
use crate::ui::utilization::{fit, pad, sig};

/// The formats overlay.
#[derive(Debug)]
pub struct FormatsOverlay<'a> {
    /// The format ladder, if one has arrived.
    pub lineup: Option<&'a Lineup>,
    /// Entries done of all while a newer ladder is being computed.
    pub progress: Option<(usize, usize)>,
    /// The selected entry.
    pub selected: usize,
    /// Styles.
    pub theme: &'a Theme,
}

/// Lines below the list for the selected entry.
const DETAIL_ROWS: u16 = 4;

impl Widget for &FormatsOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let popup = centered(
            area,
            area.width.saturating_sub(2).min(100),
            area.height.saturating_sub(1),
        );
        Clear.render(popup, buf);
        let title = match self.progress {
            Some((_, 0)) => format!(
                "Formats on this data: computing{}",
                self.theme.glyphs.ellipsis
            ),
            Some((done, total)) => format!(
                "Formats on this data: computing {done} of {total}{}",
                self.theme.glyphs.ellipsis
            ),
            None => "Formats: * Pareto front, > active (Enter uses it, Esc closes)".into(),
        };
        let block = self.theme.block(&title, true, false);
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.is_empty() {
            return;
        }
        let Some(lineup) = self.lineup.filter(|l| !l.entries.is_empty()) else {
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
        let detail_rows = if inner.height >= 10 { DETAIL_ROWS } else { 1 };
        let [header, list, detail] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(detail_rows),
        ])
        .areas(inner);
        let width = usize::from(inner.width);
        // Names up to 16 characters, or longer (a llama.cpp fallback's `q4_k -> q5_0 (rows
        // of 384)`) when every column still fits beside them.
        let name_width = lineup
            .entries
            .iter()
            .map(|e| e.name.chars().count())
            .max()
            .unwrap_or(6)
            .min(16.max(width.saturating_sub(Columns::ALL)));
        let columns = Columns::fitting(width, name_width);
        Line::styled(
            fit(&columns.header(name_width), width, self.theme.glyphs.ascii),
            self.theme.heading,
        )
        .render(header, buf);
        let selected = self.selected.min(lineup.entries.len() - 1);
        let rows = usize::from(list.height).max(1);
        let first = selected.saturating_sub(rows - 1);
        let lines: Vec<Line> = lineup
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
                    (false, false) if e.pareto => self.theme.good,
                    (false, false) => self.theme.text,
                };
                Line::styled(fit(&text, width, self.theme.glyphs.ascii), style)
            })
            .collect();
        Paragraph::new(lines).render(list, buf);
        let e = &lineup.entries[selected];
        Paragraph::new(detail_lines(e, self.theme))
            .wrap(Wrap { trim: true })
            .render(detail, buf);
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

/// Which columns fit: MAE and SQNR go first on a narrow screen.
#[derive(Debug, Clone, Copy)]
struct Columns {
    mae: bool,
    sqnr: bool,
}

const NUM: usize = 9;

impl Columns {
    /// Every column but the name: pointer and mark, four numbers, collapsed.
    const ALL: usize = 3 + 4 * NUM + 10;

    fn fitting(width: usize, name: usize) -> Self {
        // pointer + mark + name, bits/w, RMSE, collapsed always; MAE, SQNR when they fit.
        let base = 1 + 2 + name + NUM + NUM + 10;
        Self {
            sqnr: width >= base + NUM,
            mae: width >= base + 2 * NUM,
        }
    }

    fn header(self, name: usize) -> String {
        let mut s = format!("   {}", pad("format", name, Alignment::Left));
        s.push_str(&pad("bits/w", NUM, Alignment::Right));
        if self.mae {
            s.push_str(&pad("MAE", NUM, Alignment::Right));
        }
        s.push_str(&pad("RMSE", NUM, Alignment::Right));
        if self.sqnr {
            s.push_str(&pad("SQNR dB", NUM, Alignment::Right));
        }
        s.push_str(&pad("collapsed", 10, Alignment::Right));
        s
    }

    fn row(self, e: &Entry, name: usize) -> String {
        let mark = match (e.pareto, e.active) {
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
