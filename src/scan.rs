//! A whole-checkpoint scan: every floating tensor of a checkpoint (a `.safetensors` file,
//! a sharded one, or a `.gguf` file) analysed per tensor and per channel under one scheme,
//! to find the layers where per-channel scales matter most; and every quantized GGUF
//! tensor of two or more dimensions inspected as stored ([`StoredRow`]: the levels its
//! rows use, rows and blocks collapsed as stored).
//!
//! ```text
//! headers ─▶ candidates (floating or decodable, ≥ 2 axes) ─rayon, `jobs` at a time─▶ per tensor:
//!     float:     load ─▶ analyse(tensor granularity) ─▶ analyse(channel granularity)
//!                      [─▶ analyse(the configuration's own granularity, for its bits per weight)]
//!     quantized: decode its rows a few at a time ─▶ levels used, collapsed rows and blocks
//! ─▶ rows sorted by gain, stored rows by name, skipped and failed tensors
//! ```
//!
//! Every number comes from [`analyse_with`]; the only arithmetic here is the sort key,
//! [`ScanRow::gain_db`] = `20·log10(RMSE per tensor / RMSE per channel)`, which equals
//! `SQNR per channel − SQNR per tensor` (and `10·log10` of the ratio of the two MSEs)
//! whenever the tensor is not all zero.
//!
//! Each tensor is loaded inside its task, so at most `jobs` tensors are in memory at once.
//! The module writes nothing to a terminal: progress is reported through [`Progress`], and
//! [`write_scan`] writes the result as a table, JSON, CSV or Markdown into any `impl Write`.

mod methods;
mod stored;
mod weighted;

pub use methods::{MethodScan, ScanTokens};

use std::path::Path;

use rayon::prelude::*;

use crate::core::config::{Config, ConfigError, Granularity};
use crate::core::format_ladder::{Selection, format_ladder};
use crate::core::scan::gain_db;
pub use crate::core::scan::{
    Best, Failed, Scan, ScanRow, Side, SkipReason, Skipped, StoredRow, Weighted,
};
use crate::core::{Options, analyse_with};
use crate::io::checkpoint::{Checkpoint, CheckpointError, Entry, Kind};
use crate::io::imatrix::{Imatrix, ImatrixError};

/// Writes a scan in any format (kept here for callers of the scan).
pub use crate::io::export::write_scan;

/// Why a scan could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The checkpoint could not be opened.
    #[error(transparent)]
    File(#[from] CheckpointError),
    /// The worker threads could not be started.
    #[error("cannot start {jobs} worker threads: {message}")]
    Threads {
        /// Threads asked for.
        jobs: usize,
        /// What rayon said.
        message: String,
    },
}

/// Receives progress from a running scan, from any of its threads.
pub trait Progress: Sync {
    /// The scan will analyse `total` tensors.
    fn start(&self, total: usize);
    /// One tensor is done (analysed or failed).
    fn tensor_done(&self, name: &str);
}

/// Progress that goes nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: usize) {}
    fn tensor_done(&self, _: &str) {}
}

/// How to run a scan.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScanOptions {
    /// Tensors analysed at once (and so held in memory at once); `None` for one per core.
    pub jobs: Option<usize>,
    /// Also run every preset and format on each float tensor and keep the most accurate
    /// within this many bits per weight ([`ScanRow::best`]).
    pub budget: Option<f64>,
}

/// Scans the file at `path` under `config`, one tensor per core at a time, silently.
pub fn scan(path: &Path, config: &Config) -> Result<Scan, ScanError> {
    scan_with(path, config, ScanOptions::default(), &NoProgress)
}

/// Scans the file at `path` under `config` with explicit options and progress.
pub fn scan_with(
    path: &Path,
    config: &Config,
    options: ScanOptions,
    progress: &dyn Progress,
) -> Result<Scan, ScanError> {
    scan_weighted(path, config, options, None, progress)
}

/// [`scan_with`] with an importance matrix: each tensor with an entry in it gains its
/// importance-weighted errors ([`ScanRow::imatrix`]); an entry that does not fit its tensor
/// (another width, a count of 0, values that are not finite) fails that tensor.
pub fn scan_weighted(
    path: &Path,
    config: &Config,
    options: ScanOptions,
    imatrix: Option<&Imatrix>,
    progress: &dyn Progress,
) -> Result<Scan, ScanError> {
    scan_methods(path, config, options, (imatrix, None), progress)
}

/// [`scan_weighted`] with methods beyond rounding ([`MethodScan`]): each tensor whose width
/// the activations fit gains their results ([`ScanRow::methods`]), and the others say why not.
pub fn scan_methods(
    path: &Path,
    config: &Config,
    options: ScanOptions,
    (imatrix, methods): (Option<&Imatrix>, Option<&MethodScan>),
    progress: &dyn Progress,
) -> Result<Scan, ScanError> {
    config.validate()?;
    let file = Checkpoint::open(path)?;
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    for t in file.entries() {
        let reason = if t.kind == Kind::Other {
            Some(SkipReason::NotFloating)
        } else if t.shape.len() < 2 {
            Some(SkipReason::OneDimensional)
        } else if t.shape.contains(&0) {
            Some(SkipReason::Empty)
        } else {
            None
        };
        match reason {
            Some(reason) => skipped.push(Skipped {
                name: t.name,
                dtype: t.dtype,
                shape: t.shape,
                reason,
            }),
            None => candidates.push(t),
        }
    }
    skipped.sort_by(|a, b| a.name.cmp(&b.name));
    // Largest first, so that the last tasks to finish are short ones.
    candidates.sort_by_key(|t| std::cmp::Reverse(t.bytes));
    progress.start(candidates.len());
    let mut builder = rayon::ThreadPoolBuilder::new().stack_size(crate::core::ANALYSIS_STACK);
    if let Some(jobs) = options.jobs {
        builder = builder.num_threads(jobs.max(1));
    }
    let pool = builder.build().map_err(|e| ScanError::Threads {
        jobs: options.jobs.unwrap_or(0),
        message: e.to_string(),
    })?;
    let results: Vec<Result<Done, Failed>> = pool.install(|| {
        candidates
            .par_iter()
            .with_max_len(1)
            .map(|t| {
                let result = match t.kind {
                    Kind::Quantized => stored::scan_stored(&file, t).map(Done::Stored),
                    _ => scan_one(&file, t, config, options.budget, (imatrix, methods))
                        .map(|r| Done::Row(Box::new(r))),
                };
                progress.tensor_done(&t.name);
                result
            })
            .collect()
    });
    let (mut rows, mut stored, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok(Done::Row(row)) => rows.push(*row),
            Ok(Done::Stored(row)) => stored.push(row),
            Err(f) => failed.push(f),
        }
    }
    rows.sort_by(|a, b| b.gain_db.total_cmp(&a.gain_db).then(a.name.cmp(&b.name)));
    let without_entry = if imatrix.is_some() {
        rows.iter().filter(|r| r.imatrix.is_none()).count()
    } else {
        0
    };
    stored.sort_by(|a, b| a.name.cmp(&b.name));
    failed.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Scan {
        file: path.display().to_string(),
        config: *config,
        rows,
        stored,
        skipped,
        failed,
        budget: options.budget,
        imatrix: imatrix.map(|i| i.file().to_owned()),
        without_entry,
        methods: methods.map(MethodScan::describe),
    })
}

/// One finished tensor.
enum Done {
    Row(Box<ScanRow>),
    Stored(StoredRow),
}

/// Loads and analyses one tensor.
fn scan_one(
    file: &Checkpoint,
    t: &Entry,
    config: &Config,
    budget: Option<f64>,
    (imatrix, methods): (Option<&Imatrix>, Option<&MethodScan>),
) -> Result<ScanRow, Failed> {
    let fail = |error: String| Failed {
        name: t.name.clone(),
        error,
    };
    let matrix = file.load(&t.name).map_err(|e| fail(e.to_string()))?;
    let importance = match imatrix.map(|im| im.importance(&t.name, matrix.shape(), None)) {
        None | Some(Err(ImatrixError::NoEntry { .. })) => None,
        Some(Err(e)) => return Err(fail(e.to_string())),
        Some(Ok(i)) => Some(i),
    };
    let mut fallback = None;
    let mut at = |granularity| {
        analyse_with(
            &matrix,
            &Config {
                granularity,
                ..*config
            },
            Options::ONE_CONFIG,
        )
        .map(|r| {
            // A format applied through llama.cpp's fallback (the same at every granularity:
            // a format fixes its blocks).
            fallback = fallback.or(r.fallback);
            Side::of(&r)
        })
        .map_err(|e| fail(format!("{granularity}: {e}")))
    };
    let tensor = at(Granularity::Tensor)?;
    let channel = at(Granularity::Channel)?;
    let bits_per_weight = match config.granularity {
        Granularity::Tensor => tensor.bits_per_weight,
        Granularity::Channel => channel.bits_per_weight,
        g @ Granularity::Group(_) => at(g)?.bits_per_weight,
    };
    Ok(ScanRow {
        name: t.name.clone(),
        dtype: t.dtype.clone(),
        shape: t.shape.clone(),
        matrix: matrix.shape(),
        gain_db: gain_db(tensor.metrics.rmse, channel.metrics.rmse),
        tensor,
        channel,
        bits_per_weight,
        best: budget.and_then(|b| best_within(&matrix, b)),
        imatrix: importance
            .map(|i| weighted::weighted(&matrix, config, &i))
            .transpose()
            .map_err(fail)?,
        fallback,
        methods: methods.map(|m| m.run(&matrix)),
    })
}

/// The most accurate preset or format of the matrix's format ladder within `budget` bits
/// per weight.
fn best_within(matrix: &crate::core::Matrix, budget: f64) -> Option<Best> {
    let ladder = format_ladder(matrix, &Selection::all(), None);
    let e = ladder.best_within(budget)?;
    let m = e.measured()?;
    Some(Best {
        name: e.name.clone(),
        bits_per_weight: e.bits_per_weight?,
        metrics: m.overall,
        collapsed_channels: m.collapsed_channels,
    })
}
