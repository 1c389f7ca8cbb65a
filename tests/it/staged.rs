//! The explorer's analysis in two stages: the active configuration's report first, then
//! its ladder, with the active configuration analysed once and the result the same as one
//! `analyse` call.

use std::sync::Arc;

use quantscope::app::worker::{Input, Job, Outcome, compute};
use quantscope::core::config::{Clipping, Granularity};
use quantscope::core::{
    Config, Matrix, PresetOptions, Report, Rung, analyse, analyse_staged, preset,
};

/// `rows` rows of `cols` values whose spreads differ by decades, as real weights do: row
/// `r` spreads over `10^exponent(r)`, its values on a grid of `levels` steps of `1 / step`.
fn decades(
    (rows, cols): (usize, usize),
    exponent: impl Fn(i32) -> i32,
    levels: usize,
    step: f32,
) -> Matrix {
    let rows: Vec<Vec<f32>> = (0..rows)
        .map(|r| {
            let spread = 10f32.powi(exponent(r as i32));
            let half = (levels / 2) as f32;
            (0..cols)
                .map(|c| spread * (((c * 37 + r * 11) % levels) as f32 - half) / step)
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

/// Six rows of 96 values over six decades.
fn matrix() -> Matrix {
    decades((6, 96), |r| r - 3, 23, 7.0)
}

#[test]
fn the_report_then_its_rungs_equal_one_analysis() {
    let m = matrix();
    for (name, granularity, clipping) in [
        ("ort-int8", Granularity::Channel, Clipping::None),
        ("lesson", Granularity::Tensor, Clipping::None),
        ("int4-g128", Granularity::Group(32), Clipping::Mse),
        ("q4_1", Granularity::Group(32), Clipping::None),
    ] {
        let config = Config {
            granularity,
            clipping,
            ..preset(name, PresetOptions::default()).unwrap()
        };
        let mut first = None;
        let rungs = analyse_staged(
            &m,
            &config,
            &mut |r| {
                first = Some(r);
                true
            },
            &mut |_, _| true,
        )
        .unwrap()
        .unwrap();
        let mut staged = first.expect("the report comes first");
        assert!(
            staged.ladder.is_empty(),
            "{name}: the first report has no ladder"
        );
        staged.ladder = rungs;
        assert_eq!(staged, analyse(&m, &config).unwrap(), "{name}");
    }
}

#[test]
fn stopping_after_the_report_skips_the_ladder() {
    let config = preset("ort-int8", PresetOptions::default()).unwrap();
    let mut calls = 0;
    let mut told = 0;
    let out = analyse_staged(
        &matrix(),
        &config,
        &mut |_| {
            calls += 1;
            false
        },
        &mut |_, _| {
            told += 1;
            true
        },
    )
    .unwrap();
    assert_eq!((out, calls, told), (None, 1, 0));
}

/// A matrix large enough for the ladder to go in slices: 600 rows of 512 values whose
/// spreads differ by decades.
fn large() -> Matrix {
    decades((600, 512), |r| r % 7 - 4, 101, 13.0)
}

/// `analyse_staged` of `m`: its first report, its rungs and the progress it told.
fn staged_with_progress(m: &Matrix, config: &Config) -> (Report, Vec<Rung>, Vec<(usize, usize)>) {
    let mut first = None;
    let mut told = Vec::new();
    let rungs = analyse_staged(
        m,
        config,
        &mut |r| {
            first = Some(r);
            true
        },
        &mut |done, total| {
            told.push((done, total));
            true
        },
    )
    .unwrap()
    .unwrap();
    (first.unwrap(), rungs, told)
}

/// Each eighth of the 600 rows of [`large`] once, in order.
fn eighths() -> Vec<(usize, usize)> {
    (1..=8).map(|k| (k * 75, 600)).collect()
}

#[test]
fn a_large_ladder_reports_its_progress_and_the_same_rungs() {
    let m = large();
    let config = Config {
        clipping: Clipping::Mse,
        ..preset("ort-int8", PresetOptions::default()).unwrap()
    };
    let (mut staged, rungs, told) = staged_with_progress(&m, &config);
    assert_eq!(told, eighths());
    staged.ladder = rungs;
    assert_eq!(staged, analyse(&m, &config).unwrap());
}

#[test]
fn a_ladder_inside_a_thread_pool_tells_the_same_progress_and_rungs() {
    // As a scan analyses its tensors: on a thread of a pool of its own, here of one thread.
    let m = large();
    let config = preset("ort-int8", PresetOptions::default()).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let (_, rungs, told) = pool.install(|| staged_with_progress(&m, &config));
    assert_eq!(told, eighths());
    assert_eq!(rungs, analyse(&m, &config).unwrap().ladder);
}

#[test]
fn stopping_the_ladder_midway_returns_nothing() {
    let config = preset("ort-int8", PresetOptions::default()).unwrap();
    let mut told = 0;
    let out = analyse_staged(&large(), &config, &mut |_| true, &mut |_, _| {
        told += 1;
        false
    })
    .unwrap();
    assert_eq!((out, told), (None, 1));
}

/// A job that analyses `matrix` under `config` alone (nothing pinned, no formats, no
/// calibration), numbered `generation`.
fn matrix_job(generation: u64, matrix: Matrix, config: Config) -> Job {
    Job {
        generation,
        input: Input::Matrix(Arc::new(matrix)),
        config,
        pinned: None,
        formats: None,
        calibration: None,
        method: None,
        weigh: false,
    }
}

#[test]
fn the_worker_sends_the_report_then_its_ladder_then_done() {
    let config = preset("ort-int8", PresetOptions::default()).unwrap();
    let job = matrix_job(7, matrix(), config);
    let mut kinds = Vec::new();
    compute(&job, |r| {
        assert_eq!(r.generation, 7);
        kinds.push(match r.outcome {
            Outcome::Report {
                report, complete, ..
            } => {
                assert!(!complete && report.ladder.is_empty());
                "report"
            }
            Outcome::Ladder(rungs) => {
                assert!(rungs.iter().filter(|r| r.active).count() == 1);
                "ladder"
            }
            Outcome::LadderProgress(..) => "progress",
            Outcome::Done => "done",
            other => panic!("unexpected {other:?}"),
        });
        true
    });
    assert_eq!(kinds, ["report", "ladder", "done"]);
}

#[test]
fn the_worker_sends_the_ladders_progress_before_the_ladder() {
    let config = preset("ort-int8", PresetOptions::default()).unwrap();
    let job = matrix_job(3, large(), config);
    let mut seen = Vec::new();
    compute(&job, |r| {
        seen.push(match r.outcome {
            Outcome::Report { .. } => "report".to_string(),
            Outcome::LadderProgress(done, total) => {
                assert!(done < total, "{done} of {total}");
                "progress".to_string()
            }
            Outcome::Ladder(_) => "ladder".to_string(),
            Outcome::Done => "done".to_string(),
            other => panic!("unexpected {other:?}"),
        });
        true
    });
    let progress = seen.iter().filter(|k| *k == "progress").count();
    assert_eq!(progress, 7, "{seen:?}");
    assert_eq!(seen.first().map(String::as_str), Some("report"));
    assert_eq!(&seen[seen.len() - 2..], ["ladder", "done"]);
}

#[test]
fn the_explorer_shows_the_ladders_progress_until_the_ladder_arrives() {
    use quantscope::app::model::Analysis;
    let config = preset("ort-int8", PresetOptions::default()).unwrap();
    let mut analysis = Analysis::default();
    analysis.request();
    let job = matrix_job(analysis.generation, large(), config);
    let mut shown = Vec::new();
    compute(&job, |r| {
        let ladder = matches!(r.outcome, Outcome::Ladder(_));
        analysis.receive(r);
        shown.push((analysis.ladder_progress, analysis.pending));
        if ladder {
            assert!(!analysis.report.as_ref().unwrap().ladder.is_empty());
        }
        true
    });
    // The report (no progress yet), seven slices' progress, the ladder, done.
    assert_eq!(shown[0], (None, true));
    let told: Vec<(usize, usize)> = shown[1..8].iter().map(|s| s.0.unwrap()).collect();
    assert!(told.windows(2).all(|w| w[0].0 < w[1].0), "{told:?}");
    assert!(shown[1..8].iter().all(|s| s.1), "{shown:?}");
    assert_eq!(&shown[8..], [(None, false), (None, false)]);
    // A new request forgets the old progress.
    analysis.ladder_progress = Some((1, 2));
    analysis.request();
    assert_eq!(analysis.ladder_progress, None);
}
