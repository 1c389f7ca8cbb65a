//! The activations the explorer's methods read: once per calibration and shape (a second job,
//! a keystroke later, reads none for its method), and only their first tokens up to the
//! methods' bound, which the result and the method's line say.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ndarray::Array2;
use quantscope::app::calibration::{Calibration, TokensFrom};
use quantscope::app::worker::{Input, Job, Outcome, Worker};
use quantscope::core::importance::{Activations, Tokens, TokensError};
use quantscope::core::method::run::{Method, Methods, Request, Scheme};
use quantscope::core::method::tokens::{MAX_TOKENS, budget};
use quantscope::core::{Matrix, PresetOptions, preset};

/// Activations that count the tokens read from them.
struct Counting {
    inner: Activations,
    read: AtomicUsize,
}

impl Tokens for Counting {
    fn shape(&self) -> (usize, usize) {
        self.inner.shape()
    }

    fn read(&self, first: usize, out: &mut [f32]) -> Result<(), TokensError> {
        let width = self.inner.shape().1;
        self.read.fetch_add(out.len() / width, Ordering::SeqCst);
        self.inner.read(first, out)
    }

    fn name(&self) -> String {
        "counted".to_string()
    }
}

fn counting(tokens: usize, width: usize) -> Arc<Counting> {
    let x = Array2::from_shape_fn((tokens, width), |(t, c)| {
        let v = ((t * 31 + c * 17) % 23) as f32 / 11.0 - 1.0;
        if c == 3 { 12.0 * v } else { v }
    });
    Arc::new(Counting {
        inner: Activations::new(x, "counted"),
        read: AtomicUsize::new(0),
    })
}

fn matrix(rows: usize, cols: usize) -> Matrix {
    Matrix::new(Array2::from_shape_fn((rows, cols), |(r, c)| {
        ((r * 7 + c * 5) % 19) as f32 / 9.0 - 1.0
    }))
    .unwrap()
}

fn job(calibration: &Arc<Calibration>, m: &Arc<Matrix>, bits: u8, method: Method) -> Job {
    let mut config = preset("ort-int8", PresetOptions::default()).unwrap();
    config.bits = bits;
    Job {
        generation: 1,
        input: Input::Matrix(Arc::clone(m)),
        config,
        pinned: None,
        formats: None,
        calibration: Some(Arc::clone(calibration)),
        method: Some(Request {
            methods: vec![method],
            scheme: Scheme::of(&config),
            ..Request::default()
        }),
        weigh: true,
    }
}

/// Runs `job` on `worker`; the methods' result.
fn run(worker: &mut Worker, job: &Job) -> Arc<Methods> {
    let mut got = None;
    worker.run(job, |r| {
        if let Outcome::Methods(m) = r.outcome {
            got = Some(m.expect("the method ran"));
        }
        true
    });
    got.expect("a methods outcome")
}

fn calibration(tokens: &Arc<Counting>) -> Arc<Calibration> {
    Arc::new(Calibration {
        label: "activations counted".to_string(),
        spec: "counted".to_string(),
        imatrix: None,
        tokens: TokensFrom::File(Arc::clone(tokens) as Arc<dyn Tokens>),
    })
}

/// The tokens each job reads on one worker, with the method and without it.
fn reads(c: &Arc<Calibration>, tokens: &Counting, jobs: &[Job]) -> (Vec<usize>, Vec<usize>) {
    let mut with = Vec::new();
    let mut worker = Worker::default();
    for j in jobs {
        run(&mut worker, j);
        with.push(tokens.read.swap(0, Ordering::SeqCst));
    }
    let mut without = Vec::new();
    let mut worker = Worker::default();
    for j in jobs {
        let j = Job {
            method: None,
            calibration: Some(Arc::clone(c)),
            ..j.clone()
        };
        worker.run(&j, |_| true);
        without.push(tokens.read.swap(0, Ordering::SeqCst));
    }
    (with, without)
}

#[test]
fn a_second_job_with_the_same_calibration_reads_no_tokens_for_its_method() {
    let (count, width) = (300, 16);
    let tokens = counting(count, width);
    let c = calibration(&tokens);
    let m = Arc::new(matrix(6, width));
    // GPTQ, then another setting (3 bits), then AWQ: the output errors read the tokens as
    // they stream, each job; the method reads them with the first job only
    let jobs = [
        job(&c, &m, 4, Method::Gptq),
        job(&c, &m, 3, Method::Gptq),
        job(&c, &m, 3, Method::Awq),
    ];
    let (with, without) = reads(&c, &tokens, &jobs);
    assert!(without.iter().all(|&n| n > 0), "{without:?}");
    assert_eq!(with[0], without[0] + count, "{with:?} {without:?}");
    assert_eq!(with[1..], without[1..], "{with:?} {without:?}");
    // the same results as a worker that reads them afresh each time
    let mut worker = Worker::default();
    let kept: Vec<_> = jobs.iter().map(|j| run(&mut worker, j)).collect();
    for (j, k) in jobs.iter().zip(&kept) {
        assert_eq!(run(&mut Worker::default(), j), *k);
    }
    assert_ne!(kept[0], kept[1]);
    // a calibration loaded again is read again, as the first time
    tokens.read.store(0, Ordering::SeqCst);
    run(
        &mut worker,
        &job(&calibration(&tokens), &m, 4, Method::Gptq),
    );
    assert_eq!(tokens.read.load(Ordering::SeqCst), with[0]);
}

#[test]
fn another_shape_reads_again() {
    let tokens = counting(100, 16);
    let c = calibration(&tokens);
    // more rows, the same width: the activations still fit, and are read again
    let jobs = [
        job(&c, &Arc::new(matrix(6, 16)), 4, Method::Gptq),
        job(&c, &Arc::new(matrix(8, 16)), 4, Method::Gptq),
    ];
    let (with, without) = reads(&c, &tokens, &jobs);
    assert_eq!(with[0], without[0] + 100, "{with:?} {without:?}");
    assert_eq!(with[1], without[1] + 100, "{with:?} {without:?}");
}

#[test]
fn many_tokens_are_cut_to_the_bound_and_the_result_says_so() {
    let count = MAX_TOKENS + 904;
    let width = 8;
    assert_eq!(budget(count, width), MAX_TOKENS);
    let tokens = counting(count, width);
    let c = calibration(&tokens);
    let m = Arc::new(matrix(4, width));
    let got = run(&mut Worker::default(), &job(&c, &m, 4, Method::Gptq));
    assert_eq!((got.tokens, got.tokens_held), (MAX_TOKENS, Some(count)));
    // the method ran on exactly the first tokens
    let mut x = vec![0.0f32; MAX_TOKENS * width];
    tokens.inner.read(0, &mut x).unwrap();
    let x = Array2::from_shape_vec((MAX_TOKENS, width), x).unwrap();
    let job = job(&c, &m, 4, Method::Gptq);
    let want = quantscope::core::method::run::run(
        &m.values(),
        &x.view(),
        job.method.as_ref().unwrap(),
        &mut |_, _| true,
    )
    .unwrap();
    assert_eq!(got.weights, want.weights);
}

#[test]
fn the_method_line_says_how_many_tokens_it_ran_on() {
    use quantscope::app::keymap::Action;
    use quantscope::app::setting::{Direction, Setting};
    let mut m = crate::common::explorer::builtin_model();
    crate::common::explorer::act(&mut m, Action::Change(Setting::Method, Direction::Forward));
    let mut methods = (*m.analysis.methods.clone().expect("AWQ ran")).clone();
    let s = crate::common::screen::screen(&m, 120, 40);
    assert!(!s.contains("tokens)"), "{s}");
    methods.tokens_held = Some(20_000);
    let ran = methods.tokens;
    m.analysis.methods = Some(Arc::new(methods));
    let s = crate::common::screen::screen(&m, 160, 40);
    assert!(s.contains(&format!("first {ran} of 20000 tokens)")), "{s}");
}
