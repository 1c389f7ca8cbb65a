//! What a format costs and what it can represent: bits per weight from the real block
//! layout, split into payload and metadata, and the grid of values its codes stand for.

/// One part of a block's storage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    /// What the part is ("payload: 4-bit codes", "sub-block scales and mins: 6+6 bit x 8").
    pub name: &'static str,
    /// Bits per block.
    pub bits: u32,
}

/// A block layout: how many values a block holds and what its bytes are made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Values per block.
    pub block_len: usize,
    /// The block's parts, payload first, then metadata from the finest to the coarsest.
    pub parts: Vec<Part>,
    /// Bits stored once per tensor (NF4 with double quantization: the f32 offset), 0 else.
    pub per_tensor_bits: u32,
}

impl Layout {
    /// Bits of one block.
    #[must_use]
    pub fn block_bits(&self) -> u32 {
        self.parts.iter().map(|p| p.bits).sum()
    }

    /// Bits per weight from the block layout alone (payload + metadata), without the
    /// per-tensor bits.
    #[must_use]
    pub fn bits_per_weight(&self) -> f64 {
        f64::from(self.block_bits()) / self.block_len as f64
    }

    /// Bits per weight of a tensor of `n` values: whole blocks (the last one padded) plus the
    /// per-tensor bits.
    #[must_use]
    pub fn bits_per_weight_of(&self, n: usize) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let blocks = n.div_ceil(self.block_len.max(1)) as f64;
        (blocks * f64::from(self.block_bits()) + f64::from(self.per_tensor_bits)) / n as f64
    }

    /// Each part's bits per weight, in order (`payload + sub-scales + super-scales`).
    #[must_use]
    pub fn parts_per_weight(&self) -> Vec<(&'static str, f64)> {
        self.parts
            .iter()
            .map(|p| (p.name, f64::from(p.bits) / self.block_len as f64))
            .collect()
    }
}

/// The values a format's codes stand for, in units of the block's scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The value of each code (index = stored code). Codes that stand for the same value
    /// (E2M1's two zeros) appear twice; NaN codes are NaN.
    pub values: Vec<f32>,
    /// Whether consecutive values are equally spaced (integer codes) or not (E2M1, NF4, FP8).
    pub uniform: bool,
}

/// How much of a grid a set of codes uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Distinct finite values the grid has.
    pub levels: usize,
    /// Distinct values the codes use.
    pub used: usize,
    /// The smallest and largest grid value used (`None` for no codes).
    pub span: Option<(f32, f32)>,
}

impl Grid {
    /// Distinct finite values.
    #[must_use]
    pub fn levels(&self) -> usize {
        let mut v: Vec<f32> = self
            .values
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        v.sort_by(f32::total_cmp);
        v.dedup_by(|a, b| a == b);
        v.len()
    }

    /// How much of the grid `codes` use: distinct values (codes of equal value count once)
    /// and their span.
    #[must_use]
    pub fn usage(&self, codes: &[u8]) -> Usage {
        let mut seen = [false; 256];
        for &c in codes {
            seen[usize::from(c)] = true;
        }
        let mut used: Vec<f32> = seen
            .iter()
            .enumerate()
            .filter(|&(c, &s)| s && c < self.values.len())
            .map(|(c, _)| self.values[c])
            .collect();
        used.sort_by(f32::total_cmp);
        used.dedup_by(|a, b| a == b);
        let finite: Vec<f32> = used.iter().copied().filter(|x| x.is_finite()).collect();
        Usage {
            levels: self.levels(),
            used: used.len(),
            span: finite.first().zip(finite.last()).map(|(&a, &b)| (a, b)),
        }
    }
}
