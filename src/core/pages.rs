//! Zeroed buffers for a matrix's codes, in memory that asks Linux for transparent huge pages.
//!
//! A new process writing a 16 MiB code buffer for the first time takes a page fault per
//! 4 KiB page (4096 of them, each zeroing its page): several milliseconds of a 4096 x 4096
//! analysis. Where transparent huge pages are enabled only on request (`madvise`, a common
//! default), an anonymous mapping advised `MADV_HUGEPAGE` takes one fault per 2 MiB instead.
//! Buffers below 2 MiB, other systems, and any failure to map or advise use a `Vec`; the
//! contents are the same either way.
//!
//! Buffers above [`HUGE_MAX`] are mapped without the advice (4 KiB pages, still no pass of
//! zeros). Where the kernel compacts memory for advised mappings on demand (`defrag` set to
//! `madvise`, also a common default), a fault on such a mapping waits while the kernel makes
//! a free 2 MiB page when it has none, and the wait grows with the buffer: on a machine whose
//! memory was mostly page cache, loading a 671 MiB tensor into memory advised for huge pages
//! took anywhere from 0.18 to 1.3 s, where a zero-filled `Vec` of 4 KiB pages took 0.5 s
//! every time.

use std::fmt;
use std::ops::{Deref, DerefMut};

use bytemuck::Pod;
use memmap2::MmapMut;

/// The huge-page size the mapping is rounded up to, and the smallest buffer mapped.
const HUGE: usize = 2 << 20;

/// The largest buffer advised for huge pages.
const HUGE_MAX: usize = 256 << 20;

/// `len` zeroed values of `T`.
pub(crate) enum Pages<T> {
    /// An anonymous mapping of at least `len` values (page-aligned, so aligned for `T`).
    Map { map: MmapMut, len: usize },
    /// An ordinary allocation.
    Heap(Vec<T>),
}

impl<T: Pod> Pages<T> {
    /// `len` zeroed values.
    pub(crate) fn zeroed(len: usize) -> Self {
        Self::mapped(len).unwrap_or_else(|| Self::Heap(vec![T::zeroed(); len]))
    }

    /// `len` zeroed values, or `None` where the memory cannot be had (an allocation that
    /// fails would end the process): for buffers sized from a file.
    pub(crate) fn try_zeroed(len: usize) -> Option<Self> {
        if let Some(pages) = Self::mapped(len) {
            return Some(pages);
        }
        let mut v = Vec::new();
        v.try_reserve_exact(len).ok()?;
        v.resize(len, T::zeroed());
        Some(Self::Heap(v))
    }

    /// `len` zeroed values in an anonymous mapping, on Linux from 2 MiB on, advised for huge
    /// pages up to [`HUGE_MAX`]; `None` if the mapping or the advice fails.
    fn mapped(len: usize) -> Option<Self> {
        let bytes = len.checked_mul(size_of::<T>())?;
        let whole = bytes.div_ceil(HUGE).checked_mul(HUGE)?;
        if !cfg!(target_os = "linux") || bytes < HUGE {
            return None;
        }
        let map = MmapMut::map_anon(whole).ok()?;
        ((bytes > HUGE_MAX || advise_huge(&map))
            && bytemuck::try_cast_slice::<u8, T>(&map[..bytes]).is_ok())
        .then_some(Self::Map { map, len })
    }
}

/// Asks for transparent huge pages; whether the request was taken.
#[cfg(target_os = "linux")]
fn advise_huge(map: &MmapMut) -> bool {
    map.advise(memmap2::Advice::HugePage).is_ok()
}

/// Not on this system (the mapping is still used).
#[cfg(not(target_os = "linux"))]
fn advise_huge(_: &MmapMut) -> bool {
    true
}

impl<T: Pod> Deref for Pages<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            // Aligned and long enough: checked when mapped. Only the values' bytes are cast:
            // the mapping's whole length need not be a multiple of `T`'s size.
            Self::Map { map, len } => bytemuck::cast_slice(&map[..*len * size_of::<T>()]),
            Self::Heap(v) => v,
        }
    }
}

impl<T: Pod> DerefMut for Pages<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Self::Map { map, len } => bytemuck::cast_slice_mut(&mut map[..*len * size_of::<T>()]),
            Self::Heap(v) => v,
        }
    }
}

impl<T: Pod> Clone for Pages<T> {
    fn clone(&self) -> Self {
        let mut copy = Self::zeroed(self.len());
        copy.copy_from_slice(self);
        copy
    }
}

impl<T: Pod + PartialEq> PartialEq for Pages<T> {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for Pages<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self[..].fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_buffers_are_zeroed_and_writable() {
        for len in [0, 1, 1000, HUGE / 2 + 3, HUGE + 1] {
            let mut bytes = Pages::<u8>::zeroed(len);
            let mut wide = Pages::<u16>::zeroed(len);
            assert_eq!((bytes.len(), wide.len()), (len, len));
            assert!(bytes.iter().all(|&b| b == 0) && wide.iter().all(|&w| w == 0));
            for (i, (b, w)) in bytes.iter_mut().zip(wide.iter_mut()).enumerate() {
                (*b, *w) = (i as u8, i as u16);
            }
            let copy = wide.clone();
            assert_eq!(copy, wide);
            assert_eq!(bytes.last().copied(), len.checked_sub(1).map(|i| i as u8));
            assert_eq!(copy.last().copied(), len.checked_sub(1).map(|i| i as u16));
        }
        // Buffers of 2 MiB or more are mapped on Linux.
        let mapped = matches!(Pages::<u16>::zeroed(HUGE), Pages::Map { .. });
        assert_eq!(mapped, cfg!(target_os = "linux"));
        // Values whose size does not divide the mapping's length (rounded up to 2 MiB).
        let len = HUGE / 12 + 5;
        let mut odd = Pages::<[u32; 3]>::zeroed(len);
        assert_eq!(odd.len(), len);
        odd[len - 1] = [1, 2, 3];
        assert_eq!(odd.clone().last(), Some(&[1, 2, 3]));
        assert!(odd[..len - 1].iter().all(|v| *v == [0; 3]));
        // More memory than there is: refused, not an abort.
        assert!(Pages::<u64>::try_zeroed(usize::MAX / 16).is_none());
        let fits = Pages::<f32>::try_zeroed(HUGE + 1).unwrap();
        assert!(fits.len() == HUGE + 1 && fits.iter().all(|&v| v == 0.0));
        // Past the largest buffer advised for huge pages: still mapped, zeroed, writable.
        let len = HUGE_MAX / 4 + 3;
        let mut big = Pages::<f32>::zeroed(len);
        assert_eq!(matches!(big, Pages::Map { .. }), cfg!(target_os = "linux"));
        big[len - 1] = 1.0;
        assert_eq!(big.iter().filter(|&&v| v == 0.0).count(), len - 1);
    }
}
