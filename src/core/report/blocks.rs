//! A report's blocks, stored compactly: each block's parameters, statistics and clamp count
//! as a record of 32-bit words (its rectangle follows from the layout), in [`Pages`] like
//! the codes. A 4096 x 4096 matrix in groups of 8 has two million blocks: as [`Block`]s that
//! would be 168 MB, written for the first time page by page; as records it is 92 MB, in huge
//! pages where the system gives them.

use std::fmt;
use std::ops::Range;

use super::{Block, Layout};
use crate::core::pages::Pages;
use crate::core::params::{BlockParams, BlockStats};

/// Words of a [`Record`].
const WORDS: usize = 11;

/// One block as stored: [`Block`]'s fields but its rectangle, as words (f32 by their bits).
pub(crate) type Record = [u32; WORDS];

// Word indices of a record.
const SCALE: usize = 0;
const CODE_SCALE: usize = 1;
const ZERO_POINT: usize = 2;
const OFFSET: usize = 3;
const MIN: usize = 4;
const MAX: usize = 5;
const RANGE_LO: usize = 6;
const RANGE_HI: usize = 7;
/// The clamp count's low word; the high word follows.
const CLIPPED: usize = 8;
const FLAGS: usize = 10;

/// [`FLAGS`] bit: the block is degenerate.
const DEGENERATE: u32 = 1;
/// [`FLAGS`] bit: the block stores a float offset.
const HAS_OFFSET: u32 = 2;
/// [`FLAGS`] bit: the block's range was widened to include 0.
const WIDENED: u32 = 4;
/// [`FLAGS`] bit: the block's scale was formed from a negative signed extreme.
const NEGATIVE_EXTREME: u32 = 8;

/// The record of a block with these parameters, statistics and clamp count.
#[inline(always)]
#[expect(
    clippy::inline_always,
    reason = "written once per block inside the vectorised row preparation"
)]
pub(crate) fn record(p: &BlockParams, st: &BlockStats, clipped: usize) -> Record {
    let mut r = [0; WORDS];
    r[SCALE] = p.scale.to_bits();
    r[CODE_SCALE] = p.code_scale.to_bits();
    r[ZERO_POINT] = p.zero_point.cast_unsigned();
    r[OFFSET] = p.offset.map_or(0, f32::to_bits);
    r[MIN] = st.min.to_bits();
    r[MAX] = st.max.to_bits();
    r[RANGE_LO] = p.range.0.to_bits();
    r[RANGE_HI] = p.range.1.to_bits();
    r[FLAGS] = if p.degenerate { DEGENERATE } else { 0 }
        | if p.offset.is_some() { HAS_OFFSET } else { 0 }
        | if p.widened { WIDENED } else { 0 }
        | if p.negative_extreme {
            NEGATIVE_EXTREME
        } else {
            0
        };
    set_clipped(&mut r, clipped);
    r
}

/// Sets a record's clamp count.
#[inline(always)]
#[expect(
    clippy::inline_always,
    reason = "written once per block after the row loop"
)]
pub(crate) fn set_clipped(r: &mut Record, clipped: usize) {
    let n = clipped as u64;
    r[CLIPPED] = n as u32;
    r[CLIPPED + 1] = (n >> 32) as u32;
}

/// The block a record describes, over `rows` and `cols`.
fn block(r: &Record, (rows, cols): ((usize, usize), (usize, usize))) -> Block {
    let f = |i: usize| f32::from_bits(r[i]);
    Block {
        rows,
        cols,
        scale: f(SCALE),
        code_scale: f(CODE_SCALE),
        zero_point: r[ZERO_POINT].cast_signed(),
        offset: (r[FLAGS] & HAS_OFFSET != 0).then(|| f(OFFSET)),
        min: f(MIN),
        max: f(MAX),
        range: (f(RANGE_LO), f(RANGE_HI)),
        clipped: (u64::from(r[CLIPPED]) | u64::from(r[CLIPPED + 1]) << 32) as usize,
        degenerate: r[FLAGS] & DEGENERATE != 0,
        widened_to_zero: r[FLAGS] & WIDENED != 0,
        negative_extreme: r[FLAGS] & NEGATIVE_EXTREME != 0,
    }
}

/// Every block of a [`crate::core::Report`], in row-major block order. Each [`Block`] is
/// built from its record when asked for.
#[derive(Clone, PartialEq)]
pub struct Blocks {
    records: Pages<Record>,
    layout: Layout,
    shape: (usize, usize),
}

impl Blocks {
    /// The blocks of a matrix of `shape` under `layout`, one record each.
    pub(crate) fn new(records: Pages<Record>, layout: Layout, shape: (usize, usize)) -> Self {
        Self {
            records,
            layout,
            shape,
        }
    }

    /// Number of blocks.
    #[must_use]
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there are no blocks (never for a report of a matrix).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Block `i`, if there is one.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<Block> {
        Some(self.unpack(i, self.records.get(i)?))
    }

    /// Block `i`. Panics if there is no block `i`, as indexing a slice does.
    #[must_use]
    pub fn at(&self, i: usize) -> Block {
        self.unpack(i, &self.records[i])
    }

    /// Block `i` from its record.
    fn unpack(&self, i: usize, r: &Record) -> Block {
        block(r, self.layout.rect(i, self.shape.0, self.shape.1))
    }

    /// Every block in order.
    #[must_use]
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            blocks: self,
            next: 0..self.len(),
        }
    }
}

impl fmt::Debug for Blocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a Blocks {
    type Item = Block;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The blocks of a [`Blocks`] in order ([`Blocks::iter`]).
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    blocks: &'a Blocks,
    next: Range<usize>,
}

impl Iterator for Iter<'_> {
    type Item = Block;

    fn next(&mut self) -> Option<Block> {
        let i = self.next.next()?;
        self.blocks.get(i)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.next.size_hint()
    }

    fn nth(&mut self, n: usize) -> Option<Block> {
        let i = self.next.nth(n)?;
        self.blocks.get(i)
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Block> {
        let i = self.next.next_back()?;
        self.blocks.get(i)
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(offset: Option<f32>, degenerate: bool) -> BlockParams {
        BlockParams {
            code_scale: 0.1,
            scale: 0.099_975_586,
            zero_point: -129,
            code_offset: offset,
            offset,
            range: (-1.5, 2.25),
            degenerate,
            widened: offset.is_some(),
            negative_extreme: !degenerate,
            problem: None,
        }
    }

    #[test]
    fn a_record_gives_back_every_field_and_the_layouts_rectangle() {
        let st = BlockStats {
            min: -1.5,
            max: -0.0,
            extreme: -1.5,
            count: 3,
        };
        let layout = Layout::Groups {
            size: 3,
            per_row: 2,
        };
        let clipped = if usize::BITS > 32 { 1 << 33 | 5 } else { 5 };
        let records = vec![
            record(&params(None, false), &st, 0),
            record(&params(Some(-0.75), true), &st, 0),
            record(&params(None, true), &st, 2),
        ];
        let mut blocks = Blocks::new(Pages::Heap(records), layout, (2, 5));
        if let Pages::Heap(v) = &mut blocks.records {
            set_clipped(&mut v[2], clipped);
        }
        assert_eq!(blocks.len(), 3);
        let b = blocks.at(1);
        assert_eq!((b.rows, b.cols), ((0, 1), (3, 5)));
        assert_eq!(
            (b.scale, b.code_scale, b.zero_point),
            (0.099_975_586, 0.1, -129)
        );
        assert_eq!(
            (b.offset, b.range, b.degenerate),
            (Some(-0.75), (-1.5, 2.25), true)
        );
        assert_eq!(
            (b.min.to_bits(), b.max.to_bits()),
            ((-1.5f32).to_bits(), (-0.0f32).to_bits())
        );
        assert_eq!(
            (blocks.at(0).offset, blocks.at(0).degenerate),
            (None, false)
        );
        // The recorded choices: widened (here: with an offset), negative extreme (here: not
        // degenerate), each flag on its own.
        assert_eq!((b.widened_to_zero, b.negative_extreme), (true, false));
        let first = blocks.at(0);
        assert_eq!(
            (first.widened_to_zero, first.negative_extreme),
            (false, true)
        );
        let last = blocks.iter().next_back();
        assert_eq!(
            last.map(|b| (b.rows, b.cols, b.clipped)),
            Some(((1, 2), (0, 3), clipped))
        );
        assert_eq!(blocks.get(3), None);
        assert_eq!(blocks.iter().len(), 3);
        assert_eq!(
            blocks.iter().map(|b| b.len()).collect::<Vec<_>>(),
            [3, 2, 3]
        );
    }
}
