//! A block prepared for the loop ([`Prepared`]): its constants, or the reference quantizer
//! where the specialised loop does not take it, and where a row's blocks come from
//! ([`BlockSource`]).

use super::{Clamp, Code, Consts, Kind, Lanes, clamp_of, consts_lanes, run_row};
use crate::core::config::Config;
use crate::core::kernel::Quantizer;
use crate::core::params::{BlockParams, BlockStats, ParamLanes};

/// Where a row's blocks come from, one at a time, for [`run_row`].
pub(crate) trait BlockSource {
    /// Why a block cannot be prepared.
    type Error;
    /// Whether [`BlockSource::finished`] needs each block's clamp count (otherwise only the
    /// run's total is counted, which costs less per block).
    const COUNTS: bool;
    /// Whether the loop measures the signal into [`Lanes::sig`] (values outside the
    /// vectorised chunks always add to it).
    const SIGNAL: bool;
    /// Prepares block `i` of the run, whose values are `xs`.
    fn prepare(&mut self, i: usize, xs: &[f32]) -> Result<Prepared, Self::Error>;
    /// Block `i` has been quantized; `clipped` of its codes were clamped (0 unless
    /// [`BlockSource::COUNTS`]).
    fn finished(&mut self, i: usize, clipped: usize);
}

/// A single prepared block; the loop measures the signal when `SIGNAL`.
struct One<'a, const SIGNAL: bool>(&'a Prepared);

impl<const SIGNAL: bool> BlockSource for One<'_, SIGNAL> {
    type Error = std::convert::Infallible;
    const COUNTS: bool = false;
    const SIGNAL: bool = SIGNAL;
    #[inline(always)]
    fn prepare(&mut self, _: usize, _: &[f32]) -> Result<Prepared, Self::Error> {
        Ok(*self.0)
    }
    #[inline(always)]
    fn finished(&mut self, _: usize, _: usize) {}
}

/// A block's quantizer prepared for the loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared {
    pub(super) kind: Kind,
    pub(super) k: Consts,
    /// The reference quantizer, for a block the specialised loop does not take (see the
    /// module documentation); `None` when it takes it.
    pub(super) slow: Option<Quantizer>,
    /// What the block is against the clamp ([`clamp_of`]; [`Clamp::Any`] where the loop
    /// does not take it).
    pub(super) clamp: Clamp,
}

impl Prepared {
    /// Prepares `params` (computed for a block whose values have `stats`) for `[qmin, qmax]`.
    #[must_use]
    #[inline(always)]
    pub(crate) fn new(
        config: &Config,
        params: &BlockParams,
        qmin: i32,
        qmax: i32,
        stats: &BlockStats,
    ) -> Self {
        let kind = Kind::of(config);
        let (k, [fast]) = consts_lanes(
            kind,
            &ParamLanes::of(params),
            &[stats.min],
            &[stats.max],
            qmin,
            qmax,
        );
        let k = k.get(0);
        let fast = stats.count > 0 && fast;
        let slow = (!fast).then(|| Quantizer::new(config, params, qmin, qmax));
        let clamp = if fast {
            clamp_of(kind, &k, stats.min, stats.max)
        } else {
            Clamp::Any
        };
        Self {
            kind,
            k,
            slow,
            clamp,
        }
    }

    /// The constants of the specialised loop (meaningful when [`Prepared::is_fast`]).
    #[inline(always)]
    pub(crate) fn consts(&self) -> Consts {
        self.k
    }

    /// Whether the specialised loop runs.
    pub(crate) fn is_fast(&self) -> bool {
        self.slow.is_none()
    }

    /// What the block (whose smallest and largest values were given to [`Prepared::new`])
    /// is against the clamp, as [`run_prepared`](crate::core::kernel::segment::run_prepared) takes it for a row of blocks
    /// ([`clamp_of`]; [`Clamp::Any`] where the loop does not take it).
    pub(crate) fn clamp(&self) -> Clamp {
        self.clamp
    }

    /// Quantizes `xs`, the values of this block in one row starting at column `start`; see
    /// [`run_row`]. Returns the clamp count. Without `SIGNAL`, [`Lanes::sig`] is not
    /// measured (it holds only the values outside the vectorised chunks).
    #[inline(always)]
    pub(crate) fn run<T: Code, const SIGNAL: bool>(
        &self,
        xs: &[f32],
        start: usize,
        codes: &mut [T],
        lanes: &mut Lanes,
    ) -> usize {
        let run = run_row(
            self.kind,
            &mut One::<SIGNAL>(self),
            xs.len(),
            xs,
            start,
            codes,
            lanes,
            &[],
        );
        match run {
            Ok(n) => n,
            Err(never) => match never {},
        }
    }
}
