//! The format ladder: every preset and every format of [`crate::core::format`] on the same
//! matrix, sorted by bits per weight, with each one's errors, collapsed channels and whether
//! it is on the Pareto front (no other entry is both smaller and more accurate).
//!
//! Integer presets run through [`crate::core::analyse_with`] at their own granularity; the formats
//! (k-quants, MXFP4, NVFP4, NF4 with and without double quantization, FP8) run their exact
//! encoders row by row. A format whose blocks do not divide the rows is listed with the
//! reason, not measured: llama.cpp and the others refuse such rows too. An entry that
//! could not be measured has no cost either (padding its rows to whole blocks would invent
//! one), and it comes after every measured entry.
//!
//! ```
//! use quantscope::core::{Matrix, format_ladder};
//!
//! let rows: Vec<Vec<f32>> = (0..4)
//!     .map(|r| (0..256).map(|i| ((i * (r + 3)) as f32 * 0.1).sin()).collect())
//!     .collect();
//! let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
//! let m = Matrix::from_rows(&refs).unwrap();
//! let l = format_ladder::format_ladder(&m, &format_ladder::Selection::all(), None);
//! let q4k = l.entries.iter().find(|e| e.name == "q4_k").unwrap();
//! assert_eq!(q4k.bits_per_weight, Some(4.5));
//! assert!(q4k.measured().is_some());
//! ```

mod measure;
mod methods;

use serde::Serialize;

use crate::core::analyse::{AnalyseError, Options, analyse_watched, analyse_weighted};
use crate::core::config::Config;
use crate::core::fallback::{self, Fallback};
use crate::core::format::registry::format_bits;
use crate::core::importance::{Importance, OutputErrors, RankingChange};
use crate::core::matrix::Matrix;
use crate::core::output::OutputStage;
use crate::core::presets::{PRESETS, PresetOptions, preset};
use crate::core::report::{Metrics, Report};

pub use crate::core::format::registry::{Coded, FORMATS, FormatInfo, format_info, grid_of};
pub use crate::core::watch::Watch;
pub use methods::add_method_entries;

/// How far a format ladder is, for its caller's progress and stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Entries done.
    pub done: usize,
    /// All entries.
    pub total: usize,
    /// The entry under way, when it has run longer than [`POLL`](crate::core::watch::POLL).
    pub within: Option<Within>,
}

/// An entry of the format ladder under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Within {
    /// Its name.
    pub name: &'static str,
    /// Rows encoded so far.
    pub rows: usize,
    /// All rows.
    pub of: usize,
}

/// Which entries a ladder holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Names of presets and formats, in any order.
    pub names: Vec<&'static str>,
}

impl Selection {
    /// Every preset and every format.
    #[must_use]
    pub fn all() -> Self {
        Self {
            names: PRESETS
                .iter()
                .map(|p| p.name)
                .chain(FORMATS.iter().map(|f| f.name))
                .collect(),
        }
    }

    /// The formats only (no integer preset).
    #[must_use]
    pub fn formats() -> Self {
        Self {
            names: FORMATS.iter().map(|f| f.name).collect(),
        }
    }

    /// A comma-separated list of names, or `all` / `formats` / `presets`.
    pub fn parse(list: &str) -> Result<Self, UnknownName> {
        let mut names = Vec::new();
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let group: Vec<&'static str> = match part {
                "all" => Self::all().names,
                "formats" => Self::formats().names,
                "presets" => PRESETS.iter().map(|p| p.name).collect(),
                name => vec![known(name).ok_or_else(|| UnknownName(name.to_string()))?],
            };
            for n in group {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        if names.is_empty() {
            return Err(UnknownName(list.to_string()));
        }
        Ok(Self { names })
    }
}

impl std::str::FromStr for Selection {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn known(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .map(|p| p.name)
        .chain(FORMATS.iter().map(|f| f.name))
        .find(|&n| n == name)
}

/// A name that is neither a preset nor a format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format or preset {0:?}: use all, formats, presets, or names from --list-presets")]
pub struct UnknownName(pub String);

/// What an entry measured on the matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    /// Errors over the whole matrix.
    pub overall: Metrics,
    /// Each channel's errors, in row order.
    pub channels: Vec<Metrics>,
    /// Rows that are not constant but reconstruct to one value.
    pub collapsed_channels: usize,
    /// The output and importance-weighted errors (with importance or activations).
    pub output: Option<OutputErrors>,
    /// It was quantized with the importance (a llama.cpp format or preset).
    pub weighted: bool,
}

/// One preset or format on the matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Its name (a preset's, a format's, or `active` for a configuration no preset gives).
    pub name: String,
    /// An integer preset (true) or a format with quantized or non-uniform metadata (false).
    pub integer: bool,
    /// What it is: the configuration summary of an integer preset, the reference of a format.
    pub about: String,
    /// Bits per weight of this matrix: payload plus every level of metadata; `None` when
    /// the entry could not be measured.
    pub bits_per_weight: Option<f64>,
    /// Bytes of this matrix in the format; `None` when the entry could not be measured.
    pub total_bytes: Option<u64>,
    /// What the bits per weight are made of, payload first, then each level of metadata
    /// (their sum is `bits_per_weight`, up to rounding); empty when the entry could not be
    /// measured.
    pub parts: Vec<CostPart>,
    /// The measurement, or why there is none (rows that its blocks do not divide, a
    /// configuration that cannot represent a block).
    pub result: Result<Measured, String>,
    /// No other measured entry has fewer (or equal) bits per weight and a lower (or equal)
    /// RMSE with one of the two strictly better.
    pub pareto: bool,
    /// The same front drawn on the output error (`output_mse` with activations, else
    /// `imatrix_mse`); false without either.
    pub pareto_output: bool,
    /// The active configuration of the explorer or `report`.
    pub active: bool,
    /// The format asked for, when the rows are not whole blocks of it and the entry is
    /// llama.cpp's fallback type instead (its name is then `q4_k -> q5_0 (rows of 384)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
}

impl Entry {
    /// The measurement, if the entry could be measured.
    #[must_use]
    pub fn measured(&self) -> Option<&Measured> {
        self.result.as_ref().ok()
    }
}

/// One part of an entry's storage, in bits per weight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostPart {
    /// What it is (`payload: 4-bit codes`, `super-block d and dmin: f16 x 2`).
    pub name: String,
    /// Its bits per weight on this matrix.
    pub bits_per_weight: f64,
}

/// Every selected entry on one matrix: the measured ones by bits per weight (then RMSE),
/// then those that could not be measured, in the order they were selected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatLadder {
    /// The matrix's shape.
    pub shape: (usize, usize),
    /// The entries.
    pub entries: Vec<Entry>,
    /// Pairs of measured entries ordered one way by weight RMSE and the other by the output
    /// error (or the importance-weighted error), the largest reversal first; empty without
    /// importance or activations.
    pub changes: Vec<RankingChange>,
}

/// What the format ladder measures besides the weights' errors.
#[derive(Clone, Copy, Default)]
pub struct Inputs<'a> {
    /// The importance llama.cpp's formats and presets quantize with.
    pub importance: Option<&'a Importance>,
    /// The stage that measures each entry's output errors.
    pub output: Option<&'a OutputStage<'a>>,
}

impl FormatLadder {
    /// The most accurate measured entry (lowest RMSE, then fewest bits) within `budget`
    /// bits per weight, if any.
    #[must_use]
    pub fn best_within(&self, budget: f64) -> Option<&Entry> {
        self.entries
            .iter()
            .filter_map(|e| Some((e, e.bits_per_weight?, e.measured()?.overall.rmse)))
            .filter(|(_, bits, _)| *bits <= budget)
            .min_by(|(_, ba, ra), (_, bb, rb)| ra.total_cmp(rb).then(ba.total_cmp(bb)))
            .map(|(e, _, _)| e)
    }
}

/// Runs every entry of `selection` on `matrix`; `active` (a preset name and the active
/// configuration) marks the preset it equals, or adds an `active` entry when it equals none.
#[must_use]
pub fn format_ladder(
    matrix: &Matrix,
    selection: &Selection,
    active: Option<(&str, &Config)>,
) -> FormatLadder {
    let done = format_ladder_with_progress(matrix, selection, active, &mut |_, _| true);
    done.unwrap_or_else(|| FormatLadder {
        shape: matrix.shape(),
        entries: Vec::new(),
        changes: Vec::new(),
    })
}

/// [`format_ladder`], calling `progress(done, total)` after each entry; it returns false to stop
/// (the result is then `None`).
pub fn format_ladder_with_progress(
    matrix: &Matrix,
    selection: &Selection,
    active: Option<(&str, &Config)>,
    progress: &mut dyn FnMut(usize, usize) -> bool,
) -> Option<FormatLadder> {
    format_ladder_inputs(matrix, selection, active, Inputs::default(), progress)
}

/// [`format_ladder_with_progress`] with [`Inputs`]: the llama.cpp formats and presets quantize
/// with the importance, each entry gains its output errors, and [`FormatLadder::changes`] names
/// the pairs whose order the output error reverses. While a format's entry runs, `progress`
/// is also called every [`POLL`](crate::core::watch::POLL) with the entries done so far, and returning false
/// stops that entry at its next row ([`format_ladder_tracked`] says how far the entry is).
pub fn format_ladder_inputs(
    matrix: &Matrix,
    selection: &Selection,
    active: Option<(&str, &Config)>,
    inputs: Inputs<'_>,
    progress: &mut dyn FnMut(usize, usize) -> bool,
) -> Option<FormatLadder> {
    format_ladder_tracked(matrix, selection, active, inputs, &mut |p| {
        progress(p.done, p.total)
    })
}

/// [`format_ladder_inputs`], telling `progress` after each entry and, every [`POLL`](crate::core::watch::POLL)
/// while a format's entry runs, that entry's rows done ([`Progress::within`]); it returns
/// false to stop, even within an entry (each core stops at its next row, and the result is
/// `None`, never a part of the ladder).
pub fn format_ladder_tracked(
    matrix: &Matrix,
    selection: &Selection,
    active: Option<(&str, &Config)>,
    inputs: Inputs<'_>,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Option<FormatLadder> {
    let (rows, cols) = matrix.shape();
    let presets: Vec<(&'static str, Config)> = selection
        .names
        .iter()
        .filter(|&&n| PRESETS.iter().any(|p| p.name == n))
        .filter_map(|&n| preset(n, PresetOptions::default()).ok().map(|c| (n, c)))
        .collect();
    // A format is active as its own entry; an integer configuration no preset gives is
    // added as `active`.
    let active_format = active.and_then(|(_, c)| c.format).map(|f| f.name);
    let active_extra =
        active.filter(|(_, c)| c.format.is_none() && !presets.iter().any(|(_, p)| p == *c));
    let total = selection.names.len() + usize::from(active_extra.is_some());
    let mut entries = Vec::with_capacity(total);
    let mut progress = |done, within| {
        progress(Progress {
            done,
            total,
            within,
        })
    };
    for (name, config) in &presets {
        let is_active = active.is_some_and(|(_, c)| c == config);
        entries.push(integer_entry(matrix, name, config, is_active, inputs));
        if !progress(entries.len(), None) {
            return None;
        }
    }
    if let Some((name, config)) = active_extra {
        let mut e = integer_entry(matrix, "active", config, true, inputs);
        e.about = format!(
            "the active configuration (from {name}): {}",
            config.summary()
        );
        entries.push(e);
        if !progress(entries.len(), None) {
            return None;
        }
    }
    for info in FORMATS.iter().filter(|f| selection.names.contains(&f.name)) {
        let done = entries.len();
        let of = matrix.shape().0;
        let within = &mut |r| {
            progress(
                done,
                Some(Within {
                    name: info.name,
                    rows: r,
                    of,
                }),
            )
        };
        let mut e =
            crate::core::watch::run(|w| format_entry(matrix, info, inputs, w), within).ok()??;
        e.active = active_format == Some(info.name);
        entries.push(e);
        if !progress(entries.len(), None) {
            return None;
        }
    }
    mark_pareto(&mut entries);
    calibrated::mark_pareto_output(&mut entries);
    let changes = calibrated::changes(&entries);
    // Measured first, by cost then error; the unmeasured after, as selected (a stable sort).
    entries.sort_by(|a, b| {
        let key = |e: &Entry| {
            e.bits_per_weight
                .zip(e.measured())
                .map(|(bits, m)| (bits, m.overall.rmse))
        };
        match (key(a), key(b)) {
            (Some((ba, ra)), Some((bb, rb))) => ba.total_cmp(&bb).then(ra.total_cmp(&rb)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    });
    Some(FormatLadder {
        shape: (rows, cols),
        entries,
        changes,
    })
}

fn integer_parts(config: &Config, n: usize, blocks: usize) -> Vec<CostPart> {
    vec![
        CostPart {
            name: format!("payload: {}-bit codes", config.bits),
            bits_per_weight: f64::from(config.bits),
        },
        CostPart {
            name: format!(
                "block metadata: {} bits x {blocks} block{}",
                config.metadata_bits_per_block(),
                if blocks == 1 { "" } else { "s" }
            ),
            bits_per_weight: blocks as f64 * config.metadata_bits_per_block() as f64
                / n.max(1) as f64,
        },
    ]
}

/// What a report measured, for the ladder, with its output errors when `inputs` ask for
/// them (an error of theirs is the entry's).
fn measured_of(r: &Report, inputs: Inputs<'_>, watch: Option<&Watch>) -> Result<Measured, String> {
    let output = match inputs.output {
        Some(stage) => stage
            .errors(r, &mut |_, _| !watch.is_some_and(Watch::stopped))
            .map_err(|e| e.to_string())?,
        None => None,
    };
    Ok(Measured {
        overall: r.overall,
        channels: r.channels.iter().map(|c| c.metrics).collect(),
        collapsed_channels: r.collapsed_channels,
        output,
        weighted: r.quantized_with.is_some(),
    })
}

fn integer_entry(
    matrix: &Matrix,
    name: &str,
    config: &Config,
    active: bool,
    inputs: Inputs<'_>,
) -> Entry {
    let (rows, cols) = matrix.shape();
    match analyse_weighted(matrix, config, inputs.importance, Options::ONE_CONFIG) {
        Ok(r) => Entry {
            name: name.to_string(),
            integer: true,
            about: about_of(&config.summary(), r.quantized_with.is_some()),
            bits_per_weight: Some(r.memory.bits_per_weight),
            total_bytes: Some(r.memory.total_bytes),
            parts: integer_parts(config, rows * cols, r.memory.blocks as usize),
            result: measured_of(&r, inputs, None),
            pareto: false,
            pareto_output: false,
            active,
            fallback: None,
        },
        Err(e) => unmeasured(name, true, config.summary(), e.to_string(), active),
    }
}

/// What an entry is, naming the quantizer that ran: ggml's reference quantizer
/// `quantize_row_<type>_ref` is, with the importance, `quantize_<type>` with the importance
/// as its `quant_weights`, as llama-quantize --imatrix calls it. Text that names no such
/// function is kept (the entry's `weighted` says the rest).
fn about_of(about: &str, weighted: bool) -> String {
    let named = about.find("quantize_row_").and_then(|start| {
        let rest = &about[start + "quantize_row_".len()..];
        let end = rest.find("_ref")?;
        let ty = &rest[..end];
        Some(format!(
            "{}quantize_{ty} with the importance as quant_weights{}",
            &about[..start],
            &rest[end + "_ref".len()..]
        ))
    });
    match named {
        Some(n) if weighted => n,
        _ => about.to_string(),
    }
}

/// An entry that could not be measured: its reason, and no cost.
fn unmeasured(name: &str, integer: bool, about: String, why: String, active: bool) -> Entry {
    Entry {
        name: name.to_string(),
        integer,
        about,
        bits_per_weight: None,
        total_bytes: None,
        parts: Vec::new(),
        result: Err(why),
        pareto: false,
        pareto_output: false,
        active,
        fallback: None,
    }
}

/// A format's entry, `None` when `watch` stopped it.
fn format_entry(
    matrix: &Matrix,
    info: &'static FormatInfo,
    inputs: Inputs<'_>,
    watch: &Watch,
) -> Option<Entry> {
    let cols = matrix.shape().1;
    match fallback::resolve(info, cols) {
        // llama-quantize's fallback type: measured as that type, named for both.
        Ok(Some((fb, config))) => {
            let mut e = integer_entry(matrix, &fb.label(), &config, false, inputs);
            e.integer = false;
            e.about = format!(
                "llama.cpp's fallback: rows of {cols} are not whole blocks of {} ({} values), so llama-quantize quantizes the tensor as {}: {}",
                info.name,
                fallback::block_of(info),
                fb.to,
                e.about
            );
            e.fallback = Some(fb);
            return Some(e);
        }
        Err(why) => {
            return format_entry_measured(matrix, info, Err(why.to_string()), inputs, watch);
        }
        Ok(None) => {}
    }
    format_entry_measured(matrix, info, Ok(()), inputs, watch)
}

/// A format's entry, measured as itself unless `refused` says why it cannot be; `None` when
/// `watch` stopped it.
fn format_entry_measured(
    matrix: &Matrix,
    info: &'static FormatInfo,
    refused: Result<(), String>,
    inputs: Inputs<'_>,
    watch: &Watch,
) -> Option<Entry> {
    let (rows, cols) = matrix.shape();
    let n = (rows * cols).max(1) as f64;
    let result = if let Err(why) = refused {
        Err(why)
    } else if inputs.importance.is_none() && inputs.output.is_none() {
        // The same figures as the format's analysis as the active configuration, without
        // what the ladder does not show.
        match measure::measure(matrix, info.coded, watch) {
            Err(AnalyseError::Stopped) => return None,
            r => r.map_err(|e| e.to_string()),
        }
    } else {
        // With importance or output errors: the whole analysis, whose report they read.
        let config = crate::core::presets::format_config(info);
        match analyse_watched(matrix, &config, inputs.importance, watch) {
            Err(AnalyseError::Stopped) => return None,
            r => r
                .map_err(|e| e.to_string())
                .and_then(|r| measured_of(&r, inputs, Some(watch))),
        }
    };
    let m = match result {
        Ok(m) => m,
        Err(why) => {
            return Some(unmeasured(
                info.name,
                false,
                info.about.to_string(),
                why,
                false,
            ));
        }
    };
    let parts = format_bits(info.coded, rows, cols);
    let bits: f64 = parts.iter().map(|(_, b)| b).sum();
    let about = about_of(info.about, m.weighted);
    Some(Entry {
        name: info.name.to_string(),
        integer: false,
        about,
        bits_per_weight: Some(bits / n),
        total_bytes: Some((bits / 8.0).ceil() as u64),
        parts: parts
            .into_iter()
            .map(|(name, b)| CostPart {
                name,
                bits_per_weight: b / n,
            })
            .collect(),
        result: Ok(m),
        pareto: false,
        pareto_output: false,
        active: false,
        fallback: None,
    })
}

fn mark_pareto(entries: &mut [Entry]) {
    let points: Vec<Option<(f64, f64)>> = entries
        .iter()
        .map(|e| Some((e.bits_per_weight?, e.measured()?.overall.rmse)))
        .collect();
    for (i, e) in entries.iter_mut().enumerate() {
        let Some((b, r)) = points[i] else { continue };
        e.pareto = !points.iter().enumerate().any(|(j, p)| {
            j != i && p.is_some_and(|(ob, or)| ob <= b && or <= r && (ob < b || or < r))
        });
    }
}

mod calibrated;

#[cfg(test)]
mod tests;
