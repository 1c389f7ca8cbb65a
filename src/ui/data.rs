//! The Data pane: the editable channel text (or a loaded tensor's name and shape), with the
//! parse error's line marked in the gutter and its message under the text.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::app::editor::Editor;
use crate::app::model::EDITOR_PLACEHOLDER;
use crate::app::{Focus, Model, Source};
use crate::io::export::num::{count, sig};
use crate::io::stored::Stored;
use crate::io::text::{Notes, ParseError};
use crate::ui::Theme;
use crate::ui::editor::{EditorView, gutter_width};

/// The Data pane.
#[derive(Debug)]
pub struct DataPane<'a> {
    /// The editor.
    pub editor: &'a Editor,
    /// Where the data comes from.
    pub source: &'a Source,
    /// The current text's parse error.
    pub parse_error: Option<&'a ParseError>,
    /// Another analysis failure.
    pub failure: Option<&'a str>,
    /// Notes on the text, and how many there were.
    pub notes: &'a Notes,
    /// The text has unsaved changes.
    pub dirty: bool,
    /// The pane has focus.
    pub focused: bool,
    /// Styles.
    pub theme: &'a Theme,
}

impl<'a> DataPane<'a> {
    /// The pane for `model`.
    #[must_use]
    pub fn new(model: &'a Model, theme: &'a Theme) -> Self {
        Self {
            editor: &model.editor,
            source: &model.source,
            parse_error: model.analysis.parse_error.as_ref(),
            failure: model.analysis.failure.as_deref(),
            notes: &model.analysis.notes,
            dirty: model.dirty(),
            focused: model.focus == Focus::Editor,
            theme,
        }
    }

    fn title(&self) -> String {
        match self.source {
            Source::Text { path: Some(p) } => {
                let name = p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().to_string(),
                );
                format!(
                    "Data {} {name}{}",
                    self.theme.glyphs.sep,
                    if self.dirty { " [+]" } else { "" }
                )
            }
            Source::Text { path: None } => format!("Data{}", if self.dirty { " [+]" } else { "" }),
            Source::Tensor { name, .. } => {
                format!("Data {} {name} (read-only)", self.theme.glyphs.sep)
            }
        }
    }
}

impl Widget for &DataPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let title = self.title();
        let block = self.theme.block(&title, self.focused, false);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let message: Option<String> = self
            .parse_error
            .map(ToString::to_string)
            .or_else(|| self.failure.map(str::to_string));
        let note = if message.is_none() && matches!(self.source, Source::Text { .. }) {
            self.notes.list.first().map(|n| {
                let more = self.notes.count - 1;
                if more > 0 {
                    format!("{n} (+{more} more)")
                } else {
                    n.to_string()
                }
            })
        } else {
            None
        };
        let message_rows = match message.as_ref().or(note.as_ref()) {
            Some(m) => u16::try_from(m.chars().count() / usize::from(inner.width.max(1)) + 1)
                .unwrap_or(1)
                .min(3),
            None => 0,
        };
        let [text_area, message_area] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(message_rows.min(inner.height.saturating_sub(1))),
        ])
        .areas(inner);
        match self.source {
            Source::Tensor {
                name,
                dtype,
                matrix,
                stored,
            } => {
                let lines =
                    tensor_lines(name, dtype, matrix.shape(), stored.as_deref(), self.theme);
                Paragraph::new(lines)
                    .wrap(Wrap { trim: true })
                    .render(text_area, buf);
            }
            Source::Text { .. } => {
                EditorView {
                    editor: self.editor,
                    placeholder: EDITOR_PLACEHOLDER,
                    focused: self.focused,
                    theme: self.theme,
                }
                .render(text_area, buf);
                if let Some(err) = self
                    .parse_error
                    .filter(|e| !matches!(e.kind, crate::io::ParseErrorKind::NoValues))
                {
                    mark_error_line(self.editor, err, text_area, buf, self.theme);
                }
            }
        }
        if let Some(m) = message {
            let line = Line::from(vec![
                Span::styled(format!("{} ", self.theme.glyphs.error), self.theme.bad),
                Span::styled(m, self.theme.bad),
            ]);
            Paragraph::new(line)
                .wrap(Wrap { trim: false })
                .render(message_area, buf);
        } else if let Some(n) = note {
            let line = Line::from(vec![
                Span::styled(
                    format!("{} note: ", self.theme.glyphs.stale),
                    self.theme.stale,
                ),
                Span::styled(n, self.theme.dim),
            ]);
            Paragraph::new(line)
                .wrap(Wrap { trim: false })
                .render(message_area, buf);
        }
    }
}

/// What the pane says about a loaded tensor: its name, shape and type, or its stored view.
fn tensor_lines(
    name: &str,
    dtype: &str,
    (rows, cols): (usize, usize),
    stored: Option<&Stored>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if let Some(s) = stored {
        // The title names the file and says read-only; the room goes to what the codes say.
        let tensor = name.rsplit_once(" / ").map_or(name, |(_, t)| t);
        let mut lines = vec![Line::from(Span::styled(tensor.to_owned(), theme.heading))];
        lines.extend(stored_lines(s, theme));
        return lines;
    }
    let mut lines = vec![Line::from(Span::styled(name.to_owned(), theme.heading))];
    let stored = if dtype == "f32" || dtype.is_empty() {
        "f32".to_string()
    } else {
        format!("stored as {dtype}, analysed as f32")
    };
    lines.push(Line::from(format!(
        "{} x {}, {stored}",
        count(rows, "channel"),
        count(cols, "value")
    )));
    lines.push(Line::from(Span::styled(
        "loaded from a file: read-only",
        theme.dim,
    )));
    lines
}

/// The stored view of a quantized GGUF tensor: its type and layout, the levels its codes
/// use, what is collapsed as stored, its scales, and what the panes analyse instead. Short
/// lines, most telling first: the pane is 36 columns by 7 rows at 80x24.
fn stored_lines(s: &Stored, theme: &Theme) -> Vec<Line<'static>> {
    let (rows, cols) = s.shape;
    let mut lines = vec![
        Line::from(format!(
            "stored as {}, {} bits/w",
            s.ggml_type,
            sig(s.bits_per_weight, 6)
        )),
        Line::from(format!(
            "{rows} x {cols}, {} blocks of {}",
            s.blocks, s.block_len
        )),
        Line::from(format!(
            "levels/row: mean {} of {}, min {}",
            sig(s.mean_used(), 3),
            s.levels,
            s.min_used()
        )),
    ];
    let collapsed = format!(
        "collapsed: {}, {}",
        count(s.collapsed_rows, "row"),
        count(
            usize::try_from(s.collapsed_blocks).unwrap_or(usize::MAX),
            "block"
        )
    );
    lines.push(if s.collapsed_rows > 0 || s.collapsed_blocks > 0 {
        Line::from(Span::styled(collapsed, theme.bad))
    } else {
        Line::from(collapsed)
    });
    let sc = &s.scales;
    lines.push(Line::from(match sc.quantiles {
        Some([_, _, p50, _, _]) => format!(
            "|scale| median {}, {} zero",
            sig(f64::from(p50), 4),
            sc.zero
        ),
        None => format!("scales: all {} zero", sc.count),
    }));
    lines.push(Line::from(Span::styled(
        "analysed: its dequantized values (the original weights are not in the file)",
        theme.dim,
    )));
    lines
}

/// Paints the gutter of the error's line (when it is on screen) in the error style, with the
/// error glyph in its first cell.
fn mark_error_line(editor: &Editor, err: &ParseError, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let top = editor.view().top;
    let Some(row) = err.line.checked_sub(1).and_then(|l| l.checked_sub(top)) else {
        return;
    };
    let Ok(row) = u16::try_from(row) else {
        return;
    };
    if row >= area.height {
        return;
    }
    let y = area.y + row;
    let gutter = gutter_width(editor.lines().len()).max(1).min(area.width);
    for x in area.x..area.x + gutter {
        if let Some(cell) = buf.cell_mut((x, y)) {
            cell.set_style(theme.bad);
        }
    }
    if let Some(cell) = buf.cell_mut((area.x, y)) {
        cell.set_symbol(theme.glyphs.error);
    }
}
