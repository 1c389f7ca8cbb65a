//! The explorer's analysis in two stages: the active configuration's report first, then
//! its ladder, with the active configuration analysed once and the result the same as one
//! `analyse` call.

use std::sync::Arc;

use quantscope::app::worker::{Input, Job, Outcome, compute};
use quantscope::core::config::{Clipping, Granularity};
use quantscope::core::{Matrix, PresetOptions, analyse, analyse_staged, preset};

/// Rows whose spreads differ by decades, as real weights do.
fn matrix() -> Matrix {
    let rows: Vec<Vec<f32>> = (0..6)
        .map(|r| {
            let spread = 10f32.powi(r - 3);
            (0..96)
                .map(|c| spread * (((c * 37 + r * 11) % 23) as f32 - 11.0) / 7.0)
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
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
        let config = quantscope::core::Config {
            granularity,
            clipping,
            ..preset(name, PresetOptions::default()).unwrap()
        };
        let mut first = None;
        let rungs = analyse_staged(&m, &config, &mut |r| {
            first = Some(r);
            true
        })
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
    let out = analyse_staged(&matrix(), &config, &mut |_| {
        calls += 1;
        false
    })
    .unwrap();
    assert_eq!((out, calls), (None, 1));
}

#[test]
fn the_worker_sends_the_report_then_its_ladder_then_done() {
    let config = preset("ort-int8", PresetOptions::default()).unwrap();
    let job = Job {
        generation: 7,
        input: Input::Matrix(Arc::new(matrix())),
        config,
        pinned: None,
        formats: None,
    };
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
            Outcome::Done => "done",
            other => panic!("unexpected {other:?}"),
        });
        true
    });
    assert_eq!(kinds, ["report", "ladder", "done"]);
}
