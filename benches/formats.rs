//! Criterion benchmarks of `core::format`: each format on a 4096x4096 `f32` matrix, the whole
//! work an analysis of that format needs (quantize, dequantize, MAE/RMSE/max error/SQNR in
//! f64, collapsed rows and levels used per row), rows in parallel.
//!
//! The matrix's rows are normal with standard deviations log-uniform over three decades
//! (1e-3 to 1), and one value in 997 is a 12-sigma outlier, so block scales within a row and
//! across rows differ by orders of magnitude. A fixed-seed xorshift64* generator makes every
//! run see the same data. `benches/compare.py` times ggml's reference quantizers on the same
//! kind of matrix, in the same run, through the `format_timing` example.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};
use ndarray::ArrayView2;
use quantscope::core::format::{
    Format, Fp8Formula, Fp8Kind, Fp8Layout, Fp8Scheme, RowError, nf4, run_rows,
};

/// Side of the benchmarked matrix.
const N: usize = 4096;

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Rows with standard deviations log-uniform in [1e-3, 1] and 12-sigma outliers.
fn matrix(n: usize) -> Vec<f32> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::with_capacity(n * n);
    for _ in 0..n {
        let std = 10f64.powf(-3.0 * rng.uniform());
        for c in 0..n {
            let v = if c % 997 == 500 { 12.0 } else { rng.normal() };
            out.push((v * std) as f32);
        }
    }
    out
}

/// NF4 with double-quantized absmax values over the whole matrix: blocks of 64 in parallel,
/// the absmax values quantized, every value reconstructed from them, then measured.
fn nf4_dq(x: &[f32], values: &mut [f32]) -> RowError {
    use rayon::prelude::*;
    let mut codes = vec![0u8; x.len()];
    let absmax: Vec<f32> = x
        .par_chunks(nf4::BLOCK)
        .zip(codes.par_chunks_mut(nf4::BLOCK))
        .map(|(b, c)| nf4::encode_block(b, c))
        .collect();
    let dq = nf4::DoubleQuant::new(&absmax);
    values
        .par_chunks_mut(nf4::BLOCK)
        .zip(codes.par_chunks(nf4::BLOCK))
        .enumerate()
        .for_each(|(i, (v, c))| nf4::decode_block(dq.absmax(i), c, v));
    x.par_chunks(N)
        .zip(values.par_chunks(N))
        .map(|(a, b)| RowError::measure(a, b))
        .reduce(RowError::default, RowError::merge)
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let x = matrix(N);
    let mut values = vec![0.0f32; N * N];
    let mut group = c.benchmark_group(format!("formats {N}x{N}"));
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6))
        .throughput(Throughput::Elements((N * N) as u64));
    for format in Format::ENCODERS {
        group.bench_function(format.name(), |b| {
            b.iter(|| run_rows(format, black_box(&x), N, &mut values).expect("whole blocks"));
        });
    }
    group.bench_function("NF4-dq", |b| b.iter(|| nf4_dq(black_box(&x), &mut values)));
    let view = ArrayView2::from_shape((N, N), &x[..]).expect("n * n values");
    for (name, formula, layout) in [
        (
            "FP8-E4M3 128x128 divide",
            Fp8Formula::Divide,
            Fp8Layout::Tiles {
                rows: 128,
                cols: 128,
            },
        ),
        (
            "FP8-E4M3 channel reciprocal",
            Fp8Formula::Reciprocal,
            Fp8Layout::Channel,
        ),
    ] {
        let scheme = Fp8Scheme {
            kind: Fp8Kind::E4M3,
            formula,
            layout,
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                let e = scheme.encode(black_box(&view), Some(&mut values));
                let err = RowError::measure(&x, &values);
                (e.codes.len(), err)
            });
        });
    }
    group.finish();
    c.final_summary();
}
