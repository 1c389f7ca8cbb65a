//! What can be drawn over the panes ([`Overlay`]), and the state of the lists among them:
//! the tensor picker and the stored view of a quantized tensor.

use std::path::PathBuf;

use ratatui_textarea::TextArea;

/// A question or prompt drawn over the panes.
#[derive(Debug, Clone)]
pub enum Overlay {
    /// The key help.
    Help,
    /// "Quit without saving?"
    ConfirmQuit,
    /// "Save as:" with the name typed so far (a one-line editor).
    SaveAs(Box<TextArea<'static>>),
    /// "Export report:" with the file name typed so far (`.html` or `.pdf`).
    Export(Box<TextArea<'static>>),
    /// The built-in scenarios, with the selected line.
    Scenarios {
        /// Selected line.
        selected: usize,
    },
    /// "Replace the unsaved text with this scenario?"
    ConfirmScenario(usize),
    /// "Replace the unsaved text with the demo?"
    ConfirmDemo,
    /// The tensors of a checkpoint to pick from, filtered by the typed text.
    Tensors(Box<TensorPicker>),
    /// The format ladder: every preset and format on the data, with the selected line.
    Formats {
        /// Selected line.
        selected: usize,
    },
    /// The stored view of a quantized GGUF tensor: its rows' levels used, collapse, scales
    /// and layout ([`crate::app::Source::stored`]).
    Stored(Box<StoredView>),
    /// The command palette.
    Palette(Box<crate::app::palette::Palette>),
    /// "Importance or activations:" with the file name typed so far.
    Importance(Box<TextArea<'static>>),
    /// The importance per input column of the data on screen.
    ImportanceView,
}

/// The stored view's state: which rows are listed, in what order, and the selected one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredView {
    /// How the rows are listed.
    pub row_order: crate::core::stored::RowOrder,
    /// The rows listed, in order (from the core's [`crate::core::stored::Stored::row_order`]).
    pub order: Vec<usize>,
    /// The selected position in `order`.
    pub selected: usize,
}

impl StoredView {
    /// The view of `stored`'s rows listed as `row_order` says, the first selected.
    #[must_use]
    pub fn new(
        stored: &crate::core::stored::Stored,
        row_order: crate::core::stored::RowOrder,
    ) -> Self {
        Self {
            row_order,
            order: stored.row_order(row_order),
            selected: 0,
        }
    }

    /// Lists the rows as `row_order` says, keeping the selected row selected when it is still
    /// listed.
    pub fn reorder(
        &mut self,
        stored: &crate::core::stored::Stored,
        row_order: crate::core::stored::RowOrder,
    ) {
        let row = self.order.get(self.selected).copied();
        self.row_order = row_order;
        self.order = stored.row_order(row_order);
        self.selected = row
            .and_then(|r| self.order.iter().position(|&o| o == r))
            .unwrap_or(0);
    }

    /// The selected row, if any is listed.
    #[must_use]
    pub fn selected_row(&self) -> Option<usize> {
        self.order.get(self.selected).copied()
    }
}

/// The tensor picker's state.
#[derive(Debug, Clone)]
pub struct TensorPicker {
    /// The file.
    pub path: PathBuf,
    /// Its tensors; those that cannot be opened are listed greyed with the reason.
    pub tensors: Vec<crate::io::checkpoint::Entry>,
    /// The filter being typed.
    pub filter: TextArea<'static>,
    /// Selected line of the filtered list.
    pub selected: usize,
}

impl TensorPicker {
    /// Selects the first listed tensor of two or more dimensions that can be opened, or the
    /// first listed one when there is none.
    pub fn select_first_matrix(&mut self) {
        self.selected = self
            .visible()
            .iter()
            .position(|t| t.shape.len() >= 2 && t.not_loadable().is_none())
            .unwrap_or(0);
    }

    /// The tensors whose name contains the filter (ignoring case), in order.
    #[must_use]
    pub fn visible(&self) -> Vec<&crate::io::checkpoint::Entry> {
        let filter = self.filter.lines().join("").to_lowercase();
        self.tensors
            .iter()
            .filter(|t| t.name.to_lowercase().contains(&filter))
            .collect()
    }
}

impl Overlay {
    /// A tensor picker over `tensors` of the file at `path`, the first matrix selected (a
    /// 1-D bias or norm listed before it is not what one opens a checkpoint for).
    #[must_use]
    pub fn tensor_picker(path: PathBuf, tensors: Vec<crate::io::checkpoint::Entry>) -> Self {
        let mut filter = TextArea::default();
        filter.set_placeholder_text("type to filter by name");
        let mut picker = TensorPicker {
            path,
            tensors,
            filter,
            selected: 0,
        };
        picker.select_first_matrix();
        Self::Tensors(Box::new(picker))
    }
}
