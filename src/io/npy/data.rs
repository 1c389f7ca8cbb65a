//! The data after a `.npy` header, in memory or in a seekable stream, converted to `f32`.

use std::io::{Read, Seek, SeekFrom};

use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
use half::{bf16, f16};

use super::header::Dtype;
use crate::core::first_not_finite_in;
use crate::core::pages::Pages;

/// The data bytes after the header, wherever they are.
pub(super) trait Data {
    /// Why the bytes could not be read.
    type Error;
    /// Decodes all `count` elements (the bytes are known to be exactly that many), with the
    /// index of the first value that is not finite, if any.
    fn decode(
        &mut self,
        count: usize,
        dtype: Dtype,
        big_endian: bool,
    ) -> Result<(Pages<f32>, Option<usize>), Self::Error>;
    /// The `f64` at element `index`, if it is there.
    fn f64_at(&mut self, index: usize, big_endian: bool) -> Option<f64>;
}

/// Data in memory.
pub(super) struct SliceData<'a>(pub(super) &'a [u8]);

impl Data for SliceData<'_> {
    type Error = std::convert::Infallible;
    fn decode(
        &mut self,
        _: usize,
        dtype: Dtype,
        big_endian: bool,
    ) -> Result<(Pages<f32>, Option<usize>), Self::Error> {
        let mut out = Vec::with_capacity(self.0.len() / dtype.size());
        decode(self.0, dtype, big_endian, &mut out);
        let first_bad = first_not_finite_in(&out);
        Ok((Pages::Heap(out), first_bad))
    }
    fn f64_at(&mut self, index: usize, big_endian: bool) -> Option<f64> {
        read_f64(self.0, index, big_endian)
    }
}

/// Data in a seekable stream, starting at byte `start`.
pub(super) struct StreamData<'a, R> {
    pub(super) reader: &'a mut R,
    pub(super) start: u64,
    /// The file the stream reads, when it is one: the values are then read from both ends
    /// of the work at once, by positioned reads from the threads ([`read_runs_at`]).
    pub(super) file: Option<&'a std::fs::File>,
}

/// 16-bit values widened at a time, from a copy of their bits: `f16` by `half`'s slice
/// conversion ([`HalfFloatSliceExt::convert_to_f32_slice`]), which uses the CPU's F16C
/// instructions where it has them, eight values per instruction; `bf16` by a shift.
const WIDEN: usize = 1024;

/// Bytes converted per read of a stream (a multiple of every element size).
pub(super) const CHUNK: usize = 1 << 16;

/// Values per read of a stream straight into the matrix: 1 MiB of `f32`, which stays in a
/// core's cache while it is converted and checked.
const DIRECT: usize = 1 << 18;

/// Values per read of `dtype`: [`DIRECT`], or [`CHUNK`]'s worth of `f64` through a buffer.
fn run_len(dtype: Dtype) -> usize {
    if dtype == Dtype::F64 {
        CHUNK / 8
    } else {
        DIRECT
    }
}

/// Buffers of one reader of runs.
struct RunBuffers {
    /// The bits of the 16-bit values being widened.
    bits: [u16; WIDEN],
    /// The bytes of `f64` values.
    wide: Vec<u8>,
}

impl Default for RunBuffers {
    fn default() -> Self {
        Self {
            bits: [0; WIDEN],
            wide: Vec::new(),
        }
    }
}

/// Fills `run` (at most [`run_len`] values) with the next values of `dtype`: `read` fills
/// the slice it is given with the run's bytes, in one call. `f32` data is read into the
/// values as it is (its bytes put in order afterwards if the file is big-endian); `f16` and
/// `bf16` data is read into the upper half of the run's bytes and widened forward in place,
/// [`WIDEN`] values at a time; `f64` data goes through a buffer.
fn fill_run(
    run: &mut [f32],
    dtype: Dtype,
    big_endian: bool,
    buffers: &mut RunBuffers,
    read: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let n = run.len();
    match dtype {
        Dtype::F32 => {
            read(bytemuck::cast_slice_mut(run))?;
            for v in run.iter_mut() {
                let raw = v.to_ne_bytes();
                *v = if big_endian {
                    f32::from_be_bytes(raw)
                } else {
                    f32::from_le_bytes(raw)
                };
            }
        }
        Dtype::F16 | Dtype::Bf16 => {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(run);
            read(&mut bytes[2 * n..])?;
            // Values j .. j + len: their bytes (at 2n + 2j ..) copied out first, then
            // widened into bytes 4j .. 4(j + len), which end at or below 2n + 2(j + len),
            // where the next values' bytes begin: no later value is overwritten.
            let mut j = 0;
            while j < n {
                let len = WIDEN.min(n - j);
                let bytes: &[u8] = bytemuck::cast_slice(run);
                let bits = &mut buffers.bits[..len];
                bytemuck::cast_slice_mut::<u16, u8>(bits)
                    .copy_from_slice(&bytes[2 * (n + j)..2 * (n + j + len)]);
                for b in bits.iter_mut() {
                    *b = if big_endian {
                        u16::from_be(*b)
                    } else {
                        u16::from_le(*b)
                    };
                }
                let to = &mut run[j..j + len];
                if dtype == Dtype::F16 {
                    bits.reinterpret_cast::<f16>().convert_to_f32_slice(to);
                } else {
                    // A bfloat16 is the upper half of the `f32` it stands for.
                    for (v, &b) in to.iter_mut().zip(bits.iter()) {
                        *v = f32::from_bits(u32::from(b) << 16);
                    }
                }
                j += len;
            }
        }
        Dtype::F64 => {
            buffers.wide.resize(n * 8, 0);
            read(&mut buffers.wide)?;
            for (v, b) in run.iter_mut().zip(buffers.wide.chunks_exact(8)) {
                let b: [u8; 8] = b.try_into().unwrap_or_default();
                let x = if big_endian {
                    f64::from_be_bytes(b)
                } else {
                    f64::from_le_bytes(b)
                };
                // Values beyond f32's range become infinities; `build` reports them.
                *v = x as f32;
            }
        }
    }
    Ok(())
}

/// The runs of `out` ([`run_len`] values each) filled from `file`'s data at byte `start` by
/// positioned reads, runs in parallel (rayon): the threads' reads, conversions and the page
/// faults of fresh memory go on at once, and no core sits idle through the load. The index
/// of the first value that is not finite, if any (the least of the runs' own).
#[cfg(unix)]
fn read_runs_at(
    file: &std::fs::File,
    start: u64,
    out: &mut [f32],
    dtype: Dtype,
    big_endian: bool,
) -> std::io::Result<Option<usize>> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;

    let len = run_len(dtype);
    let bytes_per_run = (len * dtype.size()) as u64;
    out.par_chunks_mut(len)
        .enumerate()
        .map_init(RunBuffers::default, |buffers, (i, run)| {
            let at = start + i as u64 * bytes_per_run;
            fill_run(run, dtype, big_endian, buffers, |b| {
                file.read_exact_at(b, at)
            })?;
            Ok(first_not_finite_in(run).map(|j| i * len + j))
        })
        .try_reduce(
            || None,
            |a, b| {
                Ok(match (a, b) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                })
            },
        )
}

impl<R: Read + Seek> Data for StreamData<'_, R> {
    type Error = std::io::Error;
    /// Reads straight into the matrix's values, run by run ([`fill_run`]), from both threads
    /// at once when the stream is a file with more than one run and the caller is not a
    /// thread of a rayon pool ([`read_runs_at`], on Unix).
    /// The values are allocated zeroed, which for a matrix of any size is fresh memory from
    /// the system, not a pass of writes, and from 2 MiB on memory that asks for huge pages
    /// ([`Pages`]): the read then takes one page fault per 2 MiB. Each run of values is
    /// checked for values that are not finite as soon as it is converted, while it is in
    /// cache, rather than in a pass of its own over the whole matrix afterwards.
    fn decode(
        &mut self,
        count: usize,
        dtype: Dtype,
        big_endian: bool,
    ) -> std::io::Result<(Pages<f32>, Option<usize>)> {
        let mut out = Pages::<f32>::try_zeroed(count)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        let len = run_len(dtype);
        // Not on a thread of a rayon pool: a scan's tasks already read one tensor per
        // thread, and a thread waiting there for the other half of its runs could take up
        // another tensor's task meanwhile, past the scan's `jobs` tensors in memory.
        #[cfg(unix)]
        if let Some(file) = self.file
            && count > len
            && rayon::current_thread_index().is_none()
        {
            let first_bad = read_runs_at(file, self.start, &mut out, dtype, big_endian)?;
            return Ok((out, first_bad));
        }
        self.reader.seek(SeekFrom::Start(self.start))?;
        let mut first_bad = None;
        let mut buffers = RunBuffers::default();
        for (i, run) in out.chunks_mut(len).enumerate() {
            fill_run(run, dtype, big_endian, &mut buffers, |b| {
                self.reader.read_exact(b)
            })?;
            if first_bad.is_none() {
                first_bad = first_not_finite_in(run).map(|j| i * len + j);
            }
        }
        Ok((out, first_bad))
    }
    fn f64_at(&mut self, index: usize, big_endian: bool) -> Option<f64> {
        let at = self
            .start
            .checked_add(u64::try_from(index.checked_mul(8)?).ok()?)?;
        self.reader.seek(SeekFrom::Start(at)).ok()?;
        let mut raw = [0; 8];
        self.reader.read_exact(&mut raw).ok()?;
        read_f64(&raw, 0, big_endian)
    }
}

/// `elements` as a count of values whose `f32`s fit in one allocation, if they do.
pub(crate) fn f32_count(elements: u64) -> Option<usize> {
    usize::try_from(elements)
        .ok()
        .filter(|n| n.checked_mul(4).is_some_and(|b| isize::try_from(b).is_ok()))
}

/// A tensor of `count` little-endian values of `dtype` at byte `start` of the file at
/// `path`, read through [`StreamData`]: its values, the index of the first that is not
/// finite, if any, and for `f64` data that value as stored (in `f32` it became an infinity).
pub(crate) fn read_tensor(
    path: &std::path::Path,
    start: u64,
    count: usize,
    dtype: Dtype,
) -> std::io::Result<(Pages<f32>, Option<usize>, Option<f64>)> {
    let f = std::fs::File::open(path)?;
    let mut reader = &f;
    let mut data = StreamData {
        reader: &mut reader,
        start,
        file: Some(&f),
    };
    let (values, first_bad) = data.decode(count, dtype, false)?;
    let stored = first_bad
        .filter(|_| dtype == Dtype::F64)
        .and_then(|index| data.f64_at(index, false));
    Ok((values, first_bad, stored))
}

/// Decodes data bytes (a multiple of the element size) into `f32`s, appended to `out`.
pub(crate) fn decode(data: &[u8], dtype: Dtype, big_endian: bool, out: &mut Vec<f32>) {
    macro_rules! convert {
        ($n:literal, $f:expr) => {
            out.extend(data.chunks_exact($n).map(|chunk| {
                let mut raw = [0_u8; $n];
                raw.copy_from_slice(chunk);
                if big_endian {
                    raw.reverse();
                }
                $f(raw)
            }))
        };
    }
    match dtype {
        Dtype::F16 => convert!(2, |raw| f16::from_le_bytes(raw).to_f32()),
        Dtype::F32 => convert!(4, f32::from_le_bytes),
        // Values beyond f32's range become infinities here; `build` reports them.
        Dtype::F64 => convert!(8, |raw| f64::from_le_bytes(raw) as f32),
        Dtype::Bf16 => convert!(2, |raw| bf16::from_le_bytes(raw).to_f32()),
    }
}

/// Where the element at matrix `(row, col)` sits in the file, counted in elements.
pub(super) fn file_index(row: usize, col: usize, shape: &[usize], fortran_order: bool) -> usize {
    let trailing = shape.get(1..).unwrap_or_default();
    if !fortran_order || trailing.is_empty() {
        let cols: usize = trailing.iter().product();
        return row * cols + col;
    }
    // Unravel `col` over the trailing axes in C order, then ravel everything in F order.
    let mut index = vec![0; shape.len()];
    index[0] = row;
    let mut rest = col;
    for (slot, &dim) in index[1..].iter_mut().zip(trailing).rev() {
        *slot = rest % dim;
        rest /= dim;
    }
    index
        .iter()
        .zip(shape)
        .rev()
        .fold(0, |acc, (&i, &dim)| acc * dim + i)
}

/// The `f64` at element `index` of the data, if it is there.
pub(super) fn read_f64(data: &[u8], index: usize, big_endian: bool) -> Option<f64> {
    let start = index.checked_mul(8)?;
    let mut raw: [u8; 8] = data.get(start..start.checked_add(8)?)?.try_into().ok()?;
    if big_endian {
        raw.reverse();
    }
    Some(f64::from_le_bytes(raw))
}
