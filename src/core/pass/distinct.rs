//! Counting the distinct codes of a row.
//!
//! Up to 256 levels a row's code offsets are bytes, kept as a 256-bit set. With AVX2, 32
//! codes at a time are looked up in the set with byte shuffles (the set's 32 bytes are two
//! 16-entry tables, indexed by bits 3..7 of the code, and the bit within the byte by bits
//! 0..3), and only codes not yet in it are added one by one: each distinct code is added
//! once, so a row of thousands of codes costs a few vector operations per 32 codes plus a
//! little per distinct code. Without AVX2 every code sets a flag byte. More levels use one
//! bit per offset.

use super::code_range;
use crate::core::kernel::segment::Code;

/// The distinct codes of a row, reused from row to row.
pub(super) struct Distinct {
    /// One bit per offset for more than 256 levels (empty otherwise).
    words: Vec<u64>,
}

/// How many distinct codes a row has, and its smallest and largest offset (`(0, 0, 0)` for
/// an empty row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counted {
    pub used: u32,
    pub lo: i32,
    pub hi: i32,
}

impl Distinct {
    pub(super) fn new(levels: u32) -> Self {
        Self {
            words: if levels > 256 {
                vec![0; (levels as usize).div_ceil(64)]
            } else {
                Vec::new()
            },
        }
    }

    /// The distinct codes of `codes`.
    pub(super) fn count<T: Code>(&mut self, codes: &[T]) -> Counted {
        if let Some(bytes) = T::as_bytes(codes) {
            return from_set(&byte_set(bytes));
        }
        self.words.fill(0);
        for &c in codes {
            let off = c.index();
            if let Some(w) = self.words.get_mut(off / 64) {
                *w |= 1 << (off % 64);
            }
        }
        let used = self.words.iter().map(|w| w.count_ones()).sum();
        let (lo, hi) = code_range(codes);
        Counted { used, lo, hi }
    }
}

/// A set of byte offsets: bit `c % 64` of word `c / 64` for offset `c`.
type ByteSet = [u64; 4];

/// The count and range of a [`ByteSet`].
fn from_set(words: &ByteSet) -> Counted {
    let used = words.iter().map(|w| w.count_ones()).sum();
    let lo = words
        .iter()
        .enumerate()
        .find(|(_, w)| **w != 0)
        .map_or(0, |(i, w)| i * 64 + w.trailing_zeros() as usize);
    let hi = words
        .iter()
        .enumerate()
        .rev()
        .find(|(_, w)| **w != 0)
        .map_or(0, |(i, w)| i * 64 + 63 - w.leading_zeros() as usize);
    Counted {
        used,
        lo: lo as i32,
        hi: hi as i32,
    }
}

/// Adds byte `c` to `set`.
#[inline(always)]
fn insert(set: &mut ByteSet, c: u8) {
    set[usize::from(c >> 6)] |= 1 << (c & 63);
}

/// The set of the bytes of `codes`.
fn byte_set(codes: &[u8]) -> ByteSet {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        return simd.vectorize(
            #[inline(always)]
            || byte_set_avx2(simd, codes),
        );
    }
    byte_set_scalar(codes)
}

/// [`byte_set`] with a flag byte per value.
fn byte_set_scalar(codes: &[u8]) -> ByteSet {
    let mut flags = [0u8; 256];
    for &c in codes {
        flags[usize::from(c)] = 1;
    }
    let (words, _) = flags.as_chunks::<64>();
    std::array::from_fn(|w| {
        words[w]
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &f)| acc | (u64::from(f) << i))
    })
}

/// [`byte_set`] with AVX2 lookups (see the module documentation).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn byte_set_avx2(simd: pulp::x86::V3, codes: &[u8]) -> ByteSet {
    use std::arch::x86_64::__m256i;

    let (sse2, avx, avx2) = (simd.sse2, simd.avx, simd.avx2);
    let mut set: ByteSet = [0; 4];
    // Each half of the set (codes below 128, and from 128) as 16 bytes, in both 128-bit
    // lanes (byte shuffles stay in a lane); byte `i` of a half holds codes `8i..8i + 8`.
    let tables = |set: &ByteSet| -> (__m256i, __m256i) {
        let half = |a: u64, b: u64| {
            avx2._mm256_broadcastsi128_si256(sse2._mm_set_epi64x(b as i64, a as i64))
        };
        (half(set[0], set[1]), half(set[2], set[3]))
    };
    let (mut t_lo, mut t_hi) = tables(&set);
    let bit_of: __m256i = pulp::cast(std::array::from_fn::<u8, 32, _>(|i| 1 << (i % 8)));
    let nibble = avx._mm256_set1_epi8(0x0f);
    let seven = avx._mm256_set1_epi8(7);
    let zero = avx._mm256_setzero_si256();
    let (blocks, tail) = codes.as_chunks::<32>();
    for block in blocks {
        let c: __m256i = pulp::cast(*block);
        // Bits 3..7 of each byte: the byte within a half, and (bit 7) which half.
        let index = avx2._mm256_and_si256(avx2._mm256_srli_epi16::<3>(c), nibble);
        let byte = avx2._mm256_blendv_epi8(
            avx2._mm256_shuffle_epi8(t_lo, index),
            avx2._mm256_shuffle_epi8(t_hi, index),
            c,
        );
        let bit = avx2._mm256_shuffle_epi8(bit_of, avx2._mm256_and_si256(c, seven));
        let absent = avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(byte, bit), zero);
        let mut mask = avx2._mm256_movemask_epi8(absent) as u32;
        if mask != 0 {
            while mask != 0 {
                insert(&mut set, block[mask.trailing_zeros() as usize]);
                mask &= mask - 1;
            }
            (t_lo, t_hi) = tables(&set);
        }
    }
    for &c in tail {
        insert(&mut set, c);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(codes: &[u8]) -> Counted {
        let mut flags = [false; 256];
        for &c in codes {
            flags[usize::from(c)] = true;
        }
        Counted {
            used: flags.iter().filter(|&&f| f).count() as u32,
            lo: codes.iter().copied().min().map_or(0, i32::from),
            hi: codes.iter().copied().max().map_or(0, i32::from),
        }
    }

    #[test]
    fn byte_sets_count_every_distinct_code() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![255],
            (0..=255).collect(),
            (0..=255).rev().collect(),
            vec![7; 100],
            vec![128; 33],
        ];
        for len in [1, 31, 32, 33, 64, 95, 1000, 4096] {
            for spread in [1u64, 2, 16, 100, 256] {
                let center = (next() % 256) as i64;
                cases.push(
                    (0..len)
                        .map(|_| {
                            let d = (next() % spread) as i64 - (spread / 2) as i64;
                            (center + d).clamp(0, 255) as u8
                        })
                        .collect(),
                );
            }
        }
        let mut distinct = Distinct::new(256);
        for codes in &cases {
            let want = reference(codes);
            assert_eq!(from_set(&byte_set_scalar(codes)), want, "{codes:?}");
            assert_eq!(distinct.count(codes), want, "{codes:?}");
            let wide: Vec<u16> = codes.iter().map(|&c| u16::from(c)).collect();
            assert_eq!(Distinct::new(300).count(&wide), want, "{codes:?}");
        }
    }
}
