//! Counting the distinct codes of a row.
//!
//! Up to 256 levels a row's code offsets are bytes, kept as a 256-bit set. With AVX2:
//!
//! - Up to 16 levels, each code's bit is looked up with a byte shuffle (the low or the high
//!   byte of a 16-bit set) and ORed into two accumulators: two shuffles and two ORs per 32
//!   codes.
//! - Up to 256 levels, the first blocks of the row add every code to the set (a table load
//!   and an OR per code, with no branch), since nearly all their codes are new. After that,
//!   32 codes at a time are looked up in the set with byte shuffles (its 32 bytes are two
//!   16-entry tables, indexed by bits 3..7 of the code, and the bit within the byte by bits
//!   0..3), and only codes not yet in it are added. Blocks are looked up in groups against
//!   the set as it was before the group, so the lookups do not wait for each other; the first
//!   two new codes of a block are added without a branch, as most blocks have none, one or
//!   two.
//!
//! Without AVX2 every code sets a flag byte. More levels use one bit per offset.

use super::code_range;
use crate::core::kernel::segment::Code;

/// The distinct codes of a row, reused from row to row.
pub(super) struct Distinct {
    /// One bit per offset for more than 256 levels (empty otherwise).
    words: Vec<u64>,
    /// At most [`SMALL`] levels.
    small: bool,
}

/// The most levels of the two-shuffle count.
const SMALL: u32 = 16;

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
            small: levels <= SMALL,
        }
    }

    /// The distinct codes of `codes`.
    pub(super) fn count<T: Code>(&mut self, codes: &[T]) -> Counted {
        if let Some(bytes) = T::as_bytes(codes) {
            return from_set(&byte_set(bytes, self.small));
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

/// The set of the bytes of `codes`; `small` when every byte is below [`SMALL`].
fn byte_set(codes: &[u8], small: bool) -> ByteSet {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        return simd.vectorize(
            #[inline(always)]
            || {
                if small {
                    small_set_avx2(simd, codes)
                } else {
                    byte_set_avx2(simd, codes)
                }
            },
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

/// Each offset's bit in the 32-byte set (byte `c / 8`, bit `c % 8`), and an empty set last.
#[cfg(target_arch = "x86_64")]
static ONE_HOT: [[u8; 32]; 257] = {
    let mut t = [[0u8; 32]; 257];
    let mut c = 0;
    while c < 256 {
        t[c][c >> 3] = 1 << (c & 7);
        c += 1;
    }
    t
};

/// Blocks of 32 codes at the start of a row whose codes are all added.
#[cfg(target_arch = "x86_64")]
const SEED: usize = 8;

/// Blocks of 32 codes looked up in the same set.
#[cfg(target_arch = "x86_64")]
const GROUP: usize = 8;

/// [`byte_set`] for bytes below [`SMALL`], with AVX2 (see the module documentation).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn small_set_avx2(simd: pulp::x86::V3, codes: &[u8]) -> ByteSet {
    use std::arch::x86_64::__m256i;

    let avx2 = simd.avx2;
    // Byte shuffles index by the low 4 bits in each 128-bit lane: codes 0..8 give their bit
    // from `low`, codes 8..16 from `high`.
    let low: __m256i = pulp::cast(std::array::from_fn::<u8, 32, _>(|i| {
        if i % 16 < 8 { 1 << (i % 8) } else { 0 }
    }));
    let high: __m256i = pulp::cast(std::array::from_fn::<u8, 32, _>(|i| {
        if i % 16 < 8 { 0 } else { 1 << (i % 8) }
    }));
    let mut lo = simd.avx._mm256_setzero_si256();
    let mut hi = lo;
    let (blocks, tail) = codes.as_chunks::<32>();
    for block in blocks {
        let c: __m256i = pulp::cast(*block);
        lo = avx2._mm256_or_si256(lo, avx2._mm256_shuffle_epi8(low, c));
        hi = avx2._mm256_or_si256(hi, avx2._mm256_shuffle_epi8(high, c));
    }
    let fold = |v: __m256i| pulp::cast::<_, [u8; 32]>(v).iter().fold(0u8, |a, &b| a | b);
    let mut set: ByteSet = [u64::from(fold(lo)) | (u64::from(fold(hi)) << 8), 0, 0, 0];
    for &c in tail {
        insert(&mut set, c);
    }
    set
}

/// [`byte_set`] with AVX2 lookups (see the module documentation).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn byte_set_avx2(simd: pulp::x86::V3, codes: &[u8]) -> ByteSet {
    use std::arch::x86_64::__m256i;

    let (avx, avx2) = (simd.avx, simd.avx2);
    let or = |a, b| avx2._mm256_or_si256(a, b);
    let one_hot = |c: usize| -> __m256i { pulp::cast(ONE_HOT[c]) };
    // Each half of the set (codes below 128, and from 128) as 16 bytes, in both 128-bit
    // lanes (byte shuffles stay in a lane).
    let tables = |set: __m256i| -> (__m256i, __m256i) {
        (
            avx2._mm256_permute2x128_si256::<0x00>(set, set),
            avx2._mm256_permute2x128_si256::<0x11>(set, set),
        )
    };
    let bit_of: __m256i = pulp::cast(std::array::from_fn::<u8, 32, _>(|i| 1 << (i % 8)));
    let nibble = avx._mm256_set1_epi8(0x0f);
    let seven = avx._mm256_set1_epi8(7);
    let zero = avx._mm256_setzero_si256();

    let (blocks, tail) = codes.as_chunks::<32>();
    let (first, blocks) = blocks.split_at(blocks.len().min(SEED));
    // The set as 32 bytes, in a register: byte `i` holds codes `8i..8i + 8` (so read as four
    // little-endian words it is a `ByteSet`). Four of them while seeding, so that the ORs
    // do not wait for each other.
    let mut seed = [zero; 4];
    for block in first {
        for quad in block.as_chunks::<4>().0 {
            for (s, &c) in seed.iter_mut().zip(quad) {
                *s = or(*s, one_hot(usize::from(c)));
            }
        }
    }
    let mut set = or(or(seed[0], seed[1]), or(seed[2], seed[3]));
    // Adds `code` when `new` (the empty set's row otherwise).
    let add =
        |set, code: u8, new: bool| or(set, one_hot(if new { usize::from(code) } else { 256 }));
    for group in blocks.chunks(GROUP) {
        let (t_lo, t_hi) = tables(set);
        let mut masks = [0u32; GROUP];
        for (mask, block) in masks.iter_mut().zip(group) {
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
            *mask = avx2._mm256_movemask_epi8(absent) as u32;
        }
        for (&mask, block) in masks.iter().zip(group) {
            // A code new in two blocks of the group is added twice, which changes nothing.
            let second = mask & mask.wrapping_sub(1);
            set = add(set, block[(mask.trailing_zeros() & 31) as usize], mask != 0);
            set = add(
                set,
                block[(second.trailing_zeros() & 31) as usize],
                second != 0,
            );
            let mut rest = second & second.wrapping_sub(1);
            while rest != 0 {
                set = add(set, block[rest.trailing_zeros() as usize], true);
                rest &= rest - 1;
            }
        }
    }
    let mut set: ByteSet = pulp::cast(set);
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
            // Below 16 levels, as int4 codes are.
            cases.push((0..len).map(|_| (next() % 16) as u8).collect());
            cases.push((0..len).map(|_| 3 + (next() % 5) as u8).collect());
        }
        let mut distinct = Distinct::new(256);
        for codes in &cases {
            let want = reference(codes);
            assert_eq!(from_set(&byte_set_scalar(codes)), want, "{codes:?}");
            assert_eq!(distinct.count(codes), want, "{codes:?}");
            if codes.iter().all(|&c| u32::from(c) < SMALL) {
                assert_eq!(Distinct::new(SMALL).count(codes), want, "{codes:?}");
            }
            let wide: Vec<u16> = codes.iter().map(|&c| u16::from(c)).collect();
            assert_eq!(Distinct::new(300).count(&wide), want, "{codes:?}");
        }
    }
}
