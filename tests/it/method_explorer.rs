//! The method setting in the explorer (Alt-M): AWQ and GPTQ switch the built-in activations
//! on when none are, run in the worker after the output errors with progress, stop for a
//! newer job, show their output error beside round to nearest (the core's numbers), and say
//! why when they cannot run.

use crate::common::{explorer, screen as screen_text};

use explorer::{act, builtin_model};
use ndarray::Array2;
use quantscope::app::Model;
use quantscope::app::keymap::Action;
use quantscope::app::model::ImportanceMode;
use quantscope::app::setting::{Direction, Setting};
use quantscope::app::worker::{Outcome, compute};
use quantscope::core::importance::{Activations, BuiltIn, Tokens};
use quantscope::core::method::choice::Choice;
use quantscope::core::method::run::{self, Method};
use quantscope::runtime::settle;

const NEXT_METHOD: Action = Action::Change(Setting::Method, Direction::Forward);

/// Four rows of 64 columns: a quiet row, and loud ones.
fn wide_model() -> Model {
    let mut rows = Vec::new();
    for r in 0..4 {
        let scale = if r == 0 { 0.01 } else { 1.0 };
        let row: Vec<String> = (0..64)
            .map(|c| format!("{:.4}", scale * (((c * 7 + r * 3) % 13) as f64 - 6.0) / 6.0))
            .collect();
        rows.push(format!("r{r}: {}", row.join(", ")));
    }
    let mut m = Model::with_text(&(rows.join("\n") + "\n"), None);
    settle(&mut m);
    m
}

/// The built-in activations for `cols` columns, as one matrix.
fn built_in(cols: usize) -> Array2<f32> {
    let t = Activations::built_in(cols, &BuiltIn::default());
    let (n, w) = t.shape();
    let mut data = vec![0.0f32; n * w];
    t.read(0, &mut data).unwrap();
    Array2::from_shape_vec((n, w), data).unwrap()
}

#[test]
fn awq_without_activations_uses_the_built_in_ones_and_shows_the_core_numbers() {
    let mut m = wide_model();
    assert!(m.importance.loaded.is_none());
    act(&mut m, NEXT_METHOD);
    assert_eq!(m.method, Choice::Weights(Method::Awq));
    let status = m.status.clone().unwrap_or_default();
    assert!(status.contains("using the built-in ones"), "{status}");
    assert_eq!(m.importance.mode, ImportanceMode::Weigh);
    let got = m.analysis.methods.clone().expect("the method ran");
    let matrix = m.analysis.matrix.clone().unwrap();
    let x = built_in(64);
    let request = m.method_request().unwrap();
    let want = run::run(&matrix.values(), &x.view(), &request, &mut |_, _| true).unwrap();
    assert_eq!(*got, want);
    let awq = got.weight(Method::Awq).unwrap();
    let s = screen_text::screen(&m, 120, 40);
    assert!(s.contains("AWQ: output MSE"), "{s}");
    assert!(s.contains("(int4 channel, ratio"), "{s}");
    // 3 significant digits, as the pane writes them
    let ratio = awq.awq_ratio.unwrap();
    assert!(s.contains(&format!("ratio {ratio})")), "{s}");
    // the Ladder says it too, under its rungs
    let ladder = s.split("Ladder").nth(1).unwrap_or_default();
    assert!(ladder.contains("AWQ: output MSE"), "{s}");
    // GPTQ next, then the W8A8 layers, then back to round to nearest alone: no method line
    act(&mut m, NEXT_METHOD);
    assert_eq!(m.method, Choice::Weights(Method::Gptq));
    let got = m.analysis.methods.clone().expect("GPTQ ran");
    assert!(got.weight(Method::Gptq).is_some());
    assert!(screen_text::screen(&m, 120, 40).contains("GPTQ: output MSE"));
    for _ in 0..5 {
        act(&mut m, NEXT_METHOD);
    }
    assert_eq!(m.method, Choice::RTN);
    assert!(m.analysis.methods.is_none());
    assert!(!screen_text::screen(&m, 120, 40).contains("vs RTN"));
}

#[test]
fn the_method_runs_after_the_output_errors_and_stops_for_a_newer_job() {
    let mut m = wide_model();
    act(&mut m, NEXT_METHOD);
    act(&mut m, NEXT_METHOD);
    assert_eq!(m.method, Choice::Weights(Method::Gptq));
    let mut job = m.job();
    job.generation = 1;
    let mut order = Vec::new();
    compute(&job, |r| {
        order.push(match r.outcome {
            Outcome::Report { .. } => "report",
            Outcome::Output(_) => "output",
            Outcome::MethodProgress(..) => "progress",
            Outcome::Methods(Ok(_)) => "methods",
            Outcome::Done => "done",
            _ => "other",
        });
        true
    });
    order.dedup();
    let pos = |s| order.iter().position(|&o| o == s).unwrap_or(usize::MAX);
    assert!(pos("report") < pos("output"), "{order:?}");
    assert!(pos("output") < pos("progress"), "{order:?}");
    assert!(pos("progress") < pos("methods"), "{order:?}");
    assert_eq!(order.last(), Some(&"done"), "{order:?}");
    // A newer job waits: the first progress is refused, and nothing more comes.
    let mut after = Vec::new();
    let mut stopped = false;
    compute(&job, |r| {
        if stopped {
            after.push(format!("{:?}", r.outcome));
        }
        if matches!(r.outcome, Outcome::MethodProgress(..)) {
            stopped = true;
            return false;
        }
        true
    });
    assert!(stopped);
    assert!(after.is_empty(), "{after:?}");
}

#[test]
fn a_method_that_cannot_run_says_why_and_the_report_stays() {
    let mut m = wide_model();
    act(&mut m, NEXT_METHOD);
    // 9 bits: the methods take 1 to 8
    for _ in 0..5 {
        act(&mut m, Action::Change(Setting::Bits, Direction::Forward));
    }
    assert_eq!(m.config.bits, 9);
    assert!(m.analysis.report.is_some());
    assert!(m.analysis.methods.is_none());
    let e = m.analysis.method_failure.clone().unwrap_or_default();
    assert_eq!(e, "9 bits: the methods quantize weights to 1 to 8 bits");
    let s = screen_text::screen(&m, 120, 40);
    assert!(s.contains("AWQ: 9 bits"), "{s}");
    // switched off by hand: the method says what to do
    act(&mut m, Action::Change(Setting::Bits, Direction::Back));
    // Alt-W steps on, measured, off
    for _ in 0..3 {
        if m.importance.mode != ImportanceMode::Off {
            act(&mut m, Action::ToggleImportance);
        }
    }
    assert_eq!(m.importance.mode, ImportanceMode::Off);
    let e = m.analysis.method_failure.clone().unwrap_or_default();
    assert!(e.contains("Alt-W"), "{e}");
}

#[test]
fn snapshots_of_the_method_at_80x24_and_120x40() {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut m = builtin_model();
        quantscope::app::update(&mut m, quantscope::app::Message::Resized(w, h));
        act(&mut m, NEXT_METHOD);
        m.set_caption(None);
        let s = screen_text::screen(&m, w, h);
        assert!(s.contains("method      AWQ"), "{s}");
        insta::assert_snapshot!(format!("method_awq_{w}x{h}"), s);
        act(&mut m, NEXT_METHOD);
        let s = screen_text::screen(&m, w, h);
        assert!(s.contains("GPTQ"), "{s}");
        insta::assert_snapshot!(format!("method_gptq_{w}x{h}"), s);
    }
}

#[test]
fn the_worked_arithmetic_follows_the_method() {
    let mut m = wide_model();
    act(&mut m, NEXT_METHOD);
    act(&mut m, Action::ToggleExplain);
    // the method's lines come after the channel's: the pane scrolled to its end
    m.detail_scroll = u16::MAX;
    let s = screen_text::screen(&m, 120, 40);
    assert!(s.contains("AWQ at ratio"), "{s}");
    act(&mut m, NEXT_METHOD);
    m.detail_scroll = u16::MAX;
    let s = screen_text::screen(&m, 120, 40);
    assert!(s.contains("GPTQ, row 0, column 0"), "{s}");
    assert!(!s.contains("AWQ at ratio"), "{s}");
    // round to nearest: the channel's arithmetic alone
    act(&mut m, NEXT_METHOD);
    let s = screen_text::screen(&m, 120, 40);
    assert!(!s.contains("GPTQ, row"), "{s}");
    assert!(s.contains("Worked arithmetic"), "{s}");
}

#[test]
fn w8a8_and_smoothquant_show_their_error_beside_rounding() {
    use quantscope::core::method::act_quant::{ActGranularity, w8a8};
    use quantscope::core::method::smoothquant::sweep;
    let mut m = wide_model();
    for _ in 0..3 {
        act(&mut m, NEXT_METHOD);
    }
    let per_tensor = Choice::W8A8 {
        activations: ActGranularity::PerTensor,
        smoothquant: None,
    };
    assert_eq!(m.method, per_tensor);
    let matrix = m.analysis.matrix.clone().unwrap();
    let x = built_in(64);
    let want = w8a8(&matrix.values(), &x.view(), ActGranularity::PerTensor).unwrap();
    let got = m.analysis.methods.clone().expect("W8A8 ran");
    assert_eq!(got.w8a8[0].error, want.error);
    assert_eq!(got.w8a8[0].weights_only, want.error_weights_only);
    let s = screen_text::screen(&m, 220, 50);
    let line = s
        .lines()
        .find(|l| l.contains("W8A8 per tensor: output MSE") && l.contains("alone"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(line.contains(" vs RTN W8 "), "{line}");
    assert!(line.contains("(int8 weights alone)"), "{line}");
    // per-tensor W8A8 costs more than the int8 weights alone on the loud built-in columns
    assert!(want.error.overall.output_mse > want.error_weights_only.overall.output_mse);
    assert!(s.contains("method      W8A8 per tensor"), "{s}");
    // per token, then SmoothQuant's best α per tensor: beside the unsmoothed W8A8 layer
    act(&mut m, NEXT_METHOD);
    act(&mut m, NEXT_METHOD);
    assert_eq!(m.method.title(), "SQ W8A8 per tensor");
    let got = m.analysis.methods.clone().expect("SmoothQuant ran");
    let sw = sweep(&matrix.values(), &x.view(), &mut |_, _| true).unwrap();
    let best = &sw.steps[sw.best_per_tensor];
    let smoothed = got.w8a8[0].smoothquant.as_ref().unwrap();
    assert_eq!(smoothed.alpha, best.alpha);
    assert_eq!(smoothed.error, best.per_tensor);
    let s = screen_text::screen(&m, 220, 50);
    assert!(s.contains("SQ W8A8 per tensor: output MSE "), "{s}");
    assert!(best.per_tensor.overall.output_mse <= want.error.overall.output_mse);
    assert!(s.contains("W8A8 unsmoothed, α "), "{s}");
}

#[test]
fn snapshots_of_w8a8_at_80x24_and_120x40() {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut m = builtin_model();
        quantscope::app::update(&mut m, quantscope::app::Message::Resized(w, h));
        for _ in 0..4 {
            act(&mut m, NEXT_METHOD);
        }
        m.set_caption(None);
        let s = screen_text::screen(&m, w, h);
        assert!(s.contains("W8A8 per token"), "{s}");
        insta::assert_snapshot!(format!("method_w8a8_token_{w}x{h}"), s);
        for _ in 0..2 {
            act(&mut m, NEXT_METHOD);
        }
        let s = screen_text::screen(&m, w, h);
        assert!(s.contains("SQ W8A8 per token"), "{s}");
        assert!(
            s.contains("SmoothQuant at its best α, then W8A8 per token"),
            "{s}"
        );
        insta::assert_snapshot!(format!("method_smoothquant_token_{w}x{h}"), s);
    }
}
