//! What the background analysis has delivered for the newest request ([`Analysis`]): the one
//! place its results are taken in.

use std::sync::Arc;

use crate::app::worker::{JobResult, Outcome};
use crate::core::{Matrix, Report};
use crate::io::text::ParseError;

/// What the analysis has delivered for the newest request: the matrix and report last
/// good, or why the newest did not give one. One writer: the request and the result.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// The last matrix that parsed.
    pub matrix: Option<Arc<Matrix>>,
    /// The last good report (for the last good matrix).
    pub report: Option<Arc<Report>>,
    /// The current text does not parse: the panes show the last good report, marked stale.
    pub parse_error: Option<ParseError>,
    /// Notes on the last text that parsed (values that underflow `f32`, a skipped header).
    pub notes: Arc<crate::io::text::Notes>,
    /// Another analysis failure (shown like a parse error).
    pub failure: Option<String>,
    /// The generation of the newest job requested.
    pub generation: u64,
    /// The report is older than the newest request (the ladder may still be coming).
    pub pending: bool,
    /// The newest request has more to send (its ladder, the pinned report, the format
    /// ladder): the event loop keeps checking for results while it is set.
    pub busy: bool,
    /// The pinned configuration A's report on the same data, when one is pinned.
    pub pinned: Option<Arc<Report>>,
    /// A (pinned) and B (the active configuration) side by side, once both have arrived.
    pub comparison: Option<Arc<crate::core::compare::Comparison>>,
    /// The format ladder of the last request that asked for one (the formats overlay).
    pub format_ladder: Option<Arc<crate::core::format_ladder::FormatLadder>>,
    /// Entries of the format ladder computed so far, of all, while it is coming.
    pub format_ladder_progress: Option<(usize, usize)>,
    /// The format ladder's entry under way, when it takes a while (replaced by the next
    /// progress; read only while [`Self::format_ladder_progress`] counts entries).
    pub format_ladder_within: Option<crate::core::format_ladder::Within>,
    /// Rows of the granularity ladder computed so far, of all, while it is coming.
    pub ladder_progress: Option<(usize, usize)>,
    /// Rows of the output errors computed so far, of all, while they are coming.
    pub output_progress: Option<(usize, usize)>,
    /// Why the importance or activations loaded do not fit the data (the report then has
    /// no output errors), from the newest job that had them.
    pub calibration_unfit: Option<String>,
    /// The method beyond rounding on this data and configuration, once it has run.
    pub methods: Option<Arc<crate::core::method::run::Methods>>,
    /// Steps of the method done so far, of all, while it runs.
    pub method_progress: Option<(usize, usize)>,
    /// Why the method could not run on this data (its message), from the newest job.
    pub method_failure: Option<String>,
}

impl Analysis {
    /// A new request: results of older ones are dropped from now on.
    pub fn request(&mut self) {
        self.generation += 1;
        self.pending = true;
        self.busy = true;
        self.ladder_progress = None;
        self.output_progress = None;
        self.method_progress = None;
    }

    /// Takes in a job's result; returns whether it was the newest request's report (the
    /// lists and explanation built from it then need refreshing).
    pub fn receive(&mut self, result: JobResult) -> bool {
        if result.generation != self.generation {
            return false;
        }
        match result.outcome {
            Outcome::Done => {
                self.busy = false;
                self.pending = false;
                self.ladder_progress = None;
                self.output_progress = None;
                self.method_progress = None;
                false
            }
            Outcome::MethodProgress(done, total) => {
                self.method_progress = Some((done.min(total), total));
                false
            }
            Outcome::Methods(result) => {
                self.method_progress = None;
                self.method_failure = result.as_ref().err().cloned();
                self.methods = result.ok();
                false
            }
            Outcome::Calibration(note) => {
                self.calibration_unfit = note;
                false
            }
            Outcome::OutputProgress(done, total) => {
                self.output_progress = Some((done.min(total), total));
                false
            }
            Outcome::Output(report) => {
                self.output_progress = None;
                self.report = Some(report);
                true
            }
            Outcome::Invalid(e) => {
                self.parse_error = Some(e);
                self.failure = None;
                self.pending = false;
                false
            }
            Outcome::Failed(e) => {
                self.failure = Some(e);
                self.pending = false;
                self.busy = false;
                self.ladder_progress = None;
                self.output_progress = None;
                false
            }
            Outcome::FormatLadderProgress(p) => {
                self.format_ladder_progress = (p.done < p.total).then_some((p.done, p.total));
                self.format_ladder_within = p.within;
                false
            }
            Outcome::LadderProgress(done, total) => {
                self.ladder_progress = (done < total).then_some((done, total));
                false
            }
            Outcome::Ladder(rungs) => {
                self.ladder_progress = None;
                if let Some(report) = &mut self.report {
                    // Copied only if something else still holds the report (nothing does
                    // in the explorer: the worker handed its only reference over).
                    Arc::make_mut(report).ladder = rungs;
                }
                self.pending = false;
                true
            }
            Outcome::FormatLadder(format_ladder) => {
                self.format_ladder = Some(format_ladder);
                self.format_ladder_progress = None;
                false
            }
            Outcome::Pinned(report) => {
                self.comparison = self
                    .report
                    .as_ref()
                    .and_then(|b| crate::core::compare::compare(&report, b).ok())
                    .map(Arc::new);
                self.pinned = Some(report);
                false
            }
            Outcome::Report {
                matrix,
                notes,
                report,
                complete,
            } => {
                self.notes = notes;
                self.parse_error = None;
                self.failure = None;
                // The comparison and the method wait for this request's.
                if !complete {
                    self.comparison = None;
                    self.methods = None;
                    self.method_failure = None;
                }
                self.matrix = Some(matrix);
                self.report = Some(report);
                self.pending = !complete;
                true
            }
        }
    }
}
