//! The work the runtime does on the model's behalf: the model asks for it as data
//! ([`Effect`]) and does no I/O itself.

use std::path::PathBuf;
use std::sync::Arc;

use crate::core::{Matrix, Report};

/// Work the runtime must do on the model's behalf (the model does no I/O).
#[derive(Debug, Clone)]
pub enum Effect {
    /// Analyse the current data and configuration in the background ([`Model::job`](crate::app::Model::job) says
    /// what; the job is built when the runtime sends it, so that a burst of keys asks for
    /// one analysis of the text they leave).
    Analyse,
    /// Load tensor `name` of the checkpoint at `path` (a .safetensors or .gguf file, or a
    /// sharded one); `request` numbers it, so
    /// that only the newest request's tensor is shown.
    LoadTensor {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// The request's number ([`Model::load_request`](crate::app::Model::load_request) when it was made).
        request: u64,
    },
    /// List the tensors of the checkpoint at `path` (for the picker).
    ListTensors {
        /// The file.
        path: PathBuf,
    },
    /// Write `text` to `path` atomically.
    Save {
        /// Destination.
        path: PathBuf,
        /// Contents.
        text: String,
    },
    /// Load an importance matrix or activations (`spec`), checked against `matrix` (the
    /// data on screen, when analysed) whose tensor name is `tensor`.
    LoadImportance {
        /// A file, `FILE:TENSOR`, or `built-in`.
        spec: String,
        /// The data on screen.
        matrix: Option<Arc<Matrix>>,
        /// The tensor's name, to find its imatrix entry by.
        tensor: Option<String>,
        /// The request's number ([`ImportanceState::request`](crate::app::model::ImportanceState::request) when it was made).
        request: u64,
    },
    /// Write the matrix `report`'s configuration reconstructs to `path` (`.npy` or
    /// `.safetensors`, one tensor named `tensor`) atomically.
    WriteDequantized {
        /// Destination.
        path: PathBuf,
        /// The report whose reconstruction is written.
        report: Arc<Report>,
        /// The tensor's name in a `.safetensors` file.
        tensor: String,
    },
    /// Write the report of `job` as `document` to `path` atomically.
    Export {
        /// Destination.
        path: PathBuf,
        /// HTML or PDF.
        document: crate::io::export::rich::Document,
        /// What the report is of.
        job: Box<ExportJob>,
    },
}

/// What an exported report shows: the analysed matrix and its report (with its ladder), and
/// the pinned configuration A with the comparison when one is pinned.
#[derive(Debug, Clone)]
pub struct ExportJob {
    /// The matrix the report is of.
    pub matrix: Arc<Matrix>,
    /// The active configuration's report (B, when one is pinned).
    pub report: Arc<Report>,
    /// The pinned configuration A's report and A against B.
    pub versus: Option<(Arc<Report>, Arc<crate::core::compare::Comparison>)>,
    /// The format ladder, when one was computed for this data.
    pub format_ladder: Option<Arc<crate::core::format_ladder::FormatLadder>>,
    /// The method beyond rounding, when one ran on this data.
    pub methods: Option<Arc<crate::core::method::run::Methods>>,
}
