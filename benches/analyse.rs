//! Criterion benchmarks of [`quantscope::core::analyse`] on random square matrices.
//!
//! Matrices are 256², 1024² and 4096² `f32` values, normal in each row with a per-row standard
//! deviation drawn log-uniformly from 1e-3 to 1 (like real weight rows, whose scales differ by
//! orders of magnitude), and beside them (group `gaussian_4096x4096`) a plain 4096² standard
//! normal matrix, every row alike. A fixed-seed xorshift64* generator makes every run see the
//! same data.
//!
//! Cases per size, with throughput in matrix elements:
//!
//! - `read_sum`: one plain read of the matrix (the sum of every element), the floor any
//!   analysis pays;
//! - `ort-int8_ladder`: per-channel int8 symmetric (ONNX Runtime), with the full granularity
//!   ladder;
//! - `int4-g128_ladder`: uint4 asymmetric in groups of 128 (`MatMulNBits`), with the ladder;
//! - `ort-int8_no-ladder`, `int4-g128_no-ladder`: one configuration alone
//!   (`Options::ONE_CONFIG`), what `quantscope report --no-ladder` times;
//! - at 4096², `ort-int8` with clipping, one configuration and with the ladder:
//!   `ort-int8_p99.9_no-ladder`, `ort-int8_p99.9_ladder` (`--clip percentile:99.9`) and
//!   `ort-int8_mse_no-ladder`, `ort-int8_mse_ladder` (`--clip mse`), to set beside
//!   `ort-int8_no-ladder` and `ort-int8_ladder` of the same group;
//! - at 4096², the load of that matrix from a `.npy` file (written once to a temporary
//!   directory, so the page cache holds it, as for numpy's warm `np.load`):
//!   `load_npy_f32` (the file stores `<f4`) and `load_npy_f16` (`<f2`, converted to `f32`
//!   on the way), through [`quantscope::io::load_path`] as `quantscope report` loads it.
//!
//! `benches/compare.py` times the same work with ONNX Runtime and numpy on the same machine.
//!
//! Matrices are built lazily, so a filter (`cargo bench --bench analyse -- 4096x4096/read`)
//! only allocates the sizes it runs.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput, measurement::WallTime};
use ndarray::Array2;
use quantscope::core::config::Clipping;
use quantscope::core::{Config, Matrix, Options, PresetOptions, analyse, analyse_with, preset};
use quantscope::io::load_path;

/// Side lengths of the benchmarked matrices.
const SIZES: [usize; 3] = [256, 1024, 4096];

/// Side length of the plain gaussian matrix.
const GAUSSIAN_SIDE: usize = 4096;

/// xorshift64*: small, fast and good enough for test data.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `(0, 1]`.
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller; the second value is dropped for simplicity).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// An `n x n` matrix whose rows are normal with standard deviations log-uniform in
/// `[1e-3, 1]`.
fn random_matrix(n: usize, seed: u64) -> Matrix {
    let mut rng = Rng(seed);
    let mut values = Vec::with_capacity(n * n);
    for _ in 0..n {
        let std = 10f64.powf(-3.0 * rng.uniform());
        values.extend((0..n).map(|_| (rng.normal() * std) as f32));
    }
    let values = Array2::from_shape_vec((n, n), values).expect("n * n values");
    Matrix::new(values).expect("normal samples are finite")
}

/// An `n x n` matrix of standard normal values.
fn gaussian_matrix(n: usize, seed: u64) -> Matrix {
    let mut rng = Rng(seed);
    let values = (0..n * n).map(|_| rng.normal() as f32).collect();
    let values = Array2::from_shape_vec((n, n), values).expect("n * n values");
    Matrix::new(values).expect("normal samples are finite")
}

/// Which matrix of a size a group times.
#[derive(Clone, Copy)]
enum Rows {
    /// Standard deviations log-uniform in `[1e-3, 1]` ([`random_matrix`]).
    Spread,
    /// Standard normal ([`gaussian_matrix`]).
    Gaussian,
}

/// The matrix of side `n`, built on first use.
fn matrix(n: usize, rows: Rows) -> &'static Matrix {
    static SPREAD: [OnceLock<Matrix>; SIZES.len()] = [const { OnceLock::new() }; SIZES.len()];
    static GAUSSIAN: OnceLock<Matrix> = OnceLock::new();
    let seed = 0x9e37_79b9_7f4a_7c15 ^ n as u64;
    match rows {
        Rows::Spread => {
            let i = SIZES
                .iter()
                .position(|&s| s == n)
                .expect("a benchmarked size");
            SPREAD[i].get_or_init(|| random_matrix(n, seed))
        }
        Rows::Gaussian => {
            assert_eq!(n, GAUSSIAN_SIDE, "one gaussian matrix");
            GAUSSIAN.get_or_init(|| gaussian_matrix(n, seed))
        }
    }
}

fn config(name: &str) -> Config {
    preset(name, PresetOptions::default()).expect("built-in preset")
}

/// Shortens the run for sizes where one iteration takes about a second.
fn tune(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    if n >= 4096 {
        group
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(8));
    } else {
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
    }
}

fn bench_size(c: &mut Criterion, n: usize, rows: Rows) {
    let name = match rows {
        Rows::Spread => format!("{n}x{n}"),
        Rows::Gaussian => format!("gaussian_{n}x{n}"),
    };
    let mut group = c.benchmark_group(name);
    tune(&mut group, n);
    group.throughput(Throughput::Elements((n * n) as u64));

    group.bench_function("read_sum", |b| {
        let m = matrix(n, rows);
        b.iter(|| black_box(m).values().iter().copied().sum::<f32>());
    });
    for name in ["ort-int8", "int4-g128"] {
        let cfg = config(name);
        group.bench_function(format!("{name}_ladder"), |b| {
            let m = matrix(n, rows);
            b.iter(|| analyse(black_box(m), black_box(&cfg)).expect("valid preset"));
        });
    }
    for name in ["ort-int8", "int4-g128"] {
        let cfg = config(name);
        group.bench_function(format!("{name}_no-ladder"), |b| {
            let m = matrix(n, rows);
            b.iter(|| {
                analyse_with(black_box(m), black_box(&cfg), Options::ONE_CONFIG)
                    .expect("valid preset")
            });
        });
    }
    if n >= 4096 {
        bench_clipping(&mut group, n, rows);
        if matches!(rows, Rows::Spread) {
            bench_load(&mut group, n, rows);
        }
    }
    group.finish();
}

/// The bytes of a version 1.0 `.npy` file of the matrix, its values stored as `<f4`, or as
/// `<f2` when `as_f16`.
fn npy_bytes(m: &Matrix, as_f16: bool) -> Vec<u8> {
    let (r, c) = m.values().dim();
    let descr = if as_f16 { "<f2" } else { "<f4" };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({r}, {c}), }}");
    // Magic (6), version (2) and length (2) plus the header and its newline: a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let width = if as_f16 { 2 } else { 4 };
    let mut bytes = Vec::with_capacity(10 + header.len() + r * c * width);
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    let len = u16::try_from(header.len()).expect("a short header");
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for &x in m.values() {
        if as_f16 {
            bytes.extend_from_slice(&half::f16::from_f32(x).to_le_bytes());
        } else {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    bytes
}

/// The load of the matrix from `.npy` files stored as `f32` and as `f16` (each written on
/// its bench's first call, so a filter that skips both writes neither).
fn bench_load(group: &mut BenchmarkGroup<'_, WallTime>, n: usize, rows: Rows) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (label, as_f16) in [("f32", false), ("f16", true)] {
        let path = dir.path().join(format!("weights_{label}.npy"));
        group.bench_function(format!("load_npy_{label}"), |b| {
            if !path.exists() {
                std::fs::write(&path, npy_bytes(matrix(n, rows), as_f16))
                    .expect("a writable temporary directory");
            }
            b.iter(|| load_path(black_box(&path)).expect("the file just written"));
        });
    }
}

/// `ort-int8` under percentile and MSE clipping, one configuration and with the ladder.
fn bench_clipping(group: &mut BenchmarkGroup<'_, WallTime>, n: usize, rows: Rows) {
    for (label, clipping) in [
        ("p99.9", Clipping::Percentile(99.9)),
        ("mse", Clipping::Mse),
    ] {
        let cfg = Config {
            clipping,
            ..config("ort-int8")
        };
        group.bench_function(format!("ort-int8_{label}_no-ladder"), |b| {
            let m = matrix(n, rows);
            b.iter(|| {
                analyse_with(black_box(m), black_box(&cfg), Options::ONE_CONFIG)
                    .expect("valid preset")
            });
        });
        group.bench_function(format!("ort-int8_{label}_ladder"), |b| {
            let m = matrix(n, rows);
            b.iter(|| analyse(black_box(m), black_box(&cfg)).expect("valid preset"));
        });
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    for n in SIZES {
        bench_size(&mut c, n, Rows::Spread);
    }
    bench_size(&mut c, GAUSSIAN_SIDE, Rows::Gaussian);
    c.final_summary();
}
