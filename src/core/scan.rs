//! The result of a whole-checkpoint scan ([`crate::scan`]): per floating tensor, its errors
//! and cost per tensor and per channel and the gain between them ([`gain_db`], the sort key);
//! per quantized GGUF tensor, what its stored codes use; and the tensors skipped or failed.
//! Data only, filled by the scan and written by `io::export::write_scan`.

use serde::Serialize;

use crate::core::config::Config;
use crate::core::report::{Metrics, Report};

/// The error and cost of one tensor at one granularity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Side {
    /// MAE, RMSE, max error and SQNR over the whole tensor.
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Channels that are not constant but all got one code (or reconstruct to one value).
    pub collapsed_channels: usize,
    /// Bits per weight at this granularity.
    pub bits_per_weight: f64,
}

impl Side {
    /// The whole-tensor errors, collapsed channels and bits per weight of `report`.
    #[must_use]
    pub fn of(report: &Report) -> Self {
        Self {
            metrics: report.overall,
            collapsed_channels: report.collapsed_channels,
            bits_per_weight: report.memory.bits_per_weight,
        }
    }
}

/// One analysed tensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanRow {
    /// The tensor's name.
    pub name: String,
    /// Its dtype in the file.
    pub dtype: String,
    /// Its shape in the file.
    pub shape: Vec<usize>,
    /// The matrix it was analysed as: `(rows, columns)`, trailing axes flattened.
    pub matrix: (usize, usize),
    /// How much per-channel gains over per-tensor, in dB:
    /// `20·log10(RMSE per tensor / RMSE per channel)`; `+inf` when per-channel is exact and
    /// per-tensor is not (written as `"inf"` in JSON), 0 when both are exact.
    pub gain_db: f64,
    /// Per-tensor granularity.
    pub tensor: Side,
    /// Per-channel granularity.
    pub channel: Side,
    /// Bits per weight of the configuration as given (its own granularity).
    pub bits_per_weight: f64,
    /// With a budget (the scan's `budget` option): the most accurate preset or format within
    /// it, from the format ladder of the tensor (`None` when nothing fits).
    pub best: Option<Best>,
    /// With an importance matrix that has an entry for the tensor: its importance-weighted
    /// errors.
    pub imatrix: Option<Weighted>,
    /// The format asked for, when the tensor's rows are not whole blocks of it and
    /// llama.cpp's fallback type was analysed instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<crate::core::fallback::Fallback>,
    /// With methods (`scan --method`): what they did on the tensor.
    #[serde(skip)]
    pub methods: Option<crate::core::method::scanned::TensorMethods>,
}

/// A tensor's importance-weighted errors (`imatrix_mse`, see
/// [`crate::core::importance::output`]) under an importance matrix's entry for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Weighted {
    /// The entry used.
    pub entry: String,
    /// Per tensor.
    pub tensor: Option<f64>,
    /// Per channel.
    pub channel: Option<f64>,
    /// The configuration as given, quantized with the importance where its library reads
    /// one (a llama.cpp format or preset).
    pub configured: Option<f64>,
    /// The configuration as given was quantized with the importance.
    pub quantized_with: bool,
}

/// The most accurate entry of a tensor's format ladder within a bits-per-weight budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Best {
    /// The preset's or format's name (`q4_k`, `ort-int8`).
    pub name: String,
    /// Its bits per weight on this tensor.
    pub bits_per_weight: f64,
    /// Its errors over the tensor.
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Its collapsed channels.
    pub collapsed_channels: usize,
}

/// Why a tensor was not analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Fewer than two axes (a bias, a norm's weight, a scalar).
    OneDimensional,
    /// Not F32, F16, BF16 or F64, nor a GGUF type quantscope decodes (integers, booleans,
    /// 8-bit floats, GGUF's IQ types...).
    NotFloating,
    /// A shape with no elements.
    Empty,
}

/// A tensor the scan left out on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The tensor's name.
    pub name: String,
    /// Its dtype in the file.
    pub dtype: String,
    /// Its shape in the file.
    pub shape: Vec<usize>,
    /// Why.
    pub reason: SkipReason,
}

/// A tensor that should have been analysed but could not be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failed {
    /// The tensor's name.
    pub name: String,
    /// What went wrong (a non-finite value, a block the configuration cannot represent...).
    pub error: String,
}

/// The result of a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// The file, as given.
    pub file: String,
    /// The configuration (its granularity only matters for [`ScanRow::bits_per_weight`]).
    pub config: Config,
    /// Analysed tensors, largest gain first (ties by name).
    pub rows: Vec<ScanRow>,
    /// Quantized GGUF tensors inspected as stored, by name.
    pub stored: Vec<StoredRow>,
    /// Tensors left out, by name.
    pub skipped: Vec<Skipped>,
    /// Tensors that failed, by name.
    pub failed: Vec<Failed>,
    /// The bits-per-weight budget each tensor's best format was chosen within, if any.
    pub budget: Option<f64>,
    /// The importance matrix, as given, if any.
    pub imatrix: Option<String>,
    /// Analysed tensors without an entry in the importance matrix.
    pub without_entry: usize,
    /// With methods (`scan --method`): what they were asked, and on what.
    pub methods: Option<crate::core::method::scanned::ScanMethods>,
}

/// A quantized tensor as stored: what its codes use, and what collapsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredRow {
    /// The tensor's name.
    pub name: String,
    /// Its ggml type.
    pub dtype: String,
    /// Its shape, rows first.
    pub shape: Vec<usize>,
    /// Distinct values the type's grid has.
    pub levels: usize,
    /// Mean over rows of the grid values used.
    pub mean_used: f64,
    /// Fewest grid values a row uses.
    pub min_used: usize,
    /// Rows collapsed as stored (one value, or every scale 0).
    pub collapsed_rows: usize,
    /// Blocks collapsed as stored.
    pub collapsed_blocks: u64,
    /// Blocks in the tensor.
    pub blocks: u64,
    /// Sub-block scales that are 0.
    pub zero_scales: u64,
    /// Bits per weight of the stored layout.
    pub bits_per_weight: f64,
}

/// `20·log10(rmse_tensor / rmse_channel)`, with exact reconstructions handled.
#[must_use]
pub fn gain_db(rmse_tensor: f64, rmse_channel: f64) -> f64 {
    match (rmse_tensor > 0.0, rmse_channel > 0.0) {
        (_, true) => 20.0 * (rmse_tensor / rmse_channel).log10(),
        (true, false) => f64::INFINITY,
        (false, false) => 0.0,
    }
}

impl Scan {
    /// How many tensors were skipped for one of `reasons`.
    #[must_use]
    pub fn skipped_count(&self, reasons: &[SkipReason]) -> usize {
        self.skipped
            .iter()
            .filter(|s| reasons.contains(&s.reason))
            .count()
    }
}
