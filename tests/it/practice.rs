//! Practice and presenting data: answer checking for every kind of answer, every built-in
//! exercise's answers computed by the core (and equal to the numbers its text quotes), a
//! whole exercise played through a session, and the built-in scenarios, demo scripts and
//! recall cards.

use quantscope::core::analyse;
use quantscope::core::config::Granularity;
use quantscope::core::presets::Overrides;
use quantscope::teach::assets::{
    cards, exercise, exercise_matrix, exercises, scenario, scenarios, start_exercise,
};
use quantscope::teach::exercise::{
    Ask, Exercise, ExerciseData, Expected, Outcome, POINTS_AFTER_HINT, POINTS_FIRST_TRY, Progress,
    Session, Tolerance, Verdict, check,
};
use quantscope::teach::script::{DemoFocus, demo_scripts};

/// A step of `ask` with default tolerances, for checking answers in isolation.
fn step(ask: &str, extra: &str) -> quantscope::teach::exercise::Step {
    let text = format!(
        "title = \"t\"\nintro = \"i\"\ndata = \"1, 2\"\n[[step]]\nask = \"{ask}\"\nprompt = \"p\"\nhint = \"h\"\n{extra}\n"
    );
    Exercise::from_toml(&text)
        .unwrap_or_else(|e| panic!("{ask}: {e}"))
        .steps
        .remove(0)
}

fn near(v: &Verdict) -> bool {
    matches!(v, Verdict::Near { .. })
}

fn wrong(v: &Verdict) -> bool {
    matches!(v, Verdict::Wrong { .. })
}

fn malformed(v: &Verdict) -> bool {
    matches!(v, Verdict::Malformed { .. })
}

/// The lesson's shared scale as the core stores it (an f32).
fn shared_scale() -> f64 {
    f64::from((f64::from(3.10_f32) / 7.0) as f32)
}

// ----- answer checking -----

#[test]
fn real_numbers_within_half_a_percent_are_right_and_within_5_percent_near() {
    let s = step("scale", "");
    let e = Expected::Number(shared_scale());
    for answer in [
        "0.4429",
        "0.44286",
        " 3.10/7 ",
        "3.1 / 7",
        "+0.442857",
        "4.4286e-1",
    ] {
        assert_eq!(check(&s, &e, answer), Verdict::Right, "{answer}");
    }
    for answer in ["0.44", "0.45", "3/7"] {
        let v = check(&s, &e, answer);
        assert!(near(&v), "{answer}: {v:?}");
        assert_eq!(v.to_string(), "close: check your rounding");
    }
    for answer in ["0.5", "-0.4429", "0.0214", "7"] {
        assert!(wrong(&check(&s, &e, answer)), "{answer}");
    }
    for answer in ["", "zero point four", "0.4429%", "1/0", "nan", "0.44.2"] {
        assert!(malformed(&check(&s, &e, answer)), "{answer:?}");
    }
    // A step may ask for more precision.
    let strict = step("scale", "tolerance = 0.0001\nnear = 0.001");
    assert_eq!(
        strict.tolerance,
        Tolerance {
            right: 0.0001,
            near: 0.001,
            ..Tolerance::DEFAULT
        }
    );
    assert!(near(&check(&strict, &e, "0.4428")));
    assert!(wrong(&check(&strict, &e, "0.44")));
}

#[test]
fn utilization_takes_a_fraction_or_a_percentage() {
    let s = step("utilization", "row = 0");
    let e = Expected::Number(12.0 / 14.0);
    for answer in ["86%", "86", "85.7 %", "0.857", "12/14"] {
        assert_eq!(check(&s, &e, answer), Verdict::Right, "{answer}");
    }
    assert!(near(&check(&s, &e, "83%")));
    assert!(wrong(&check(&s, &e, "50%")));
    assert!(malformed(&check(&s, &e, "most of it")));
    // A small share read off a bar to the nearest percent is right.
    let small = Expected::Number(1.0 / 14.0);
    assert_eq!(check(&s, &small, "7%"), Verdict::Right);
    assert_eq!(check(&s, &Expected::Number(0.0), "0%"), Verdict::Right);
}

#[test]
fn whole_numbers_must_match_exactly() {
    let s = step("zero_point", "");
    let e = Expected::Whole(-529);
    assert_eq!(check(&s, &e, "-529"), Verdict::Right);
    assert_eq!(
        check(&s, &e, "\u{2212}529"),
        Verdict::Right,
        "a typographic minus"
    );
    assert_eq!(check(&s, &e, "-529.0"), Verdict::Right);
    let off = check(&s, &e, "-528");
    assert_eq!(
        off,
        Verdict::Wrong {
            positions: vec![],
            off_by_one: true
        }
    );
    assert!(off.to_string().contains("off by one"), "{off}");
    assert!(wrong(&check(&s, &e, "51")));
    assert!(malformed(&check(&s, &e, "-528.7")));
    assert!(malformed(&check(&s, &e, "")));
    let levels = step("levels_used", "row = 0");
    assert_eq!(check(&levels, &Expected::Whole(4), " 4 "), Verdict::Right);
    assert!(wrong(&check(&levels, &Expected::Whole(4), "15")));
}

#[test]
fn codes_are_a_list_with_any_separators_and_must_match_exactly() {
    let s = step("codes", "row = 0");
    let e = Expected::Codes(vec![2, -4, 6, -7]);
    for answer in [
        "2, -4, 6, -7",
        "2 -4 6 -7",
        "[2,-4,6,-7]",
        "(2; -4; 6; -7)",
        "2,\u{2212}4, 6 ,-7,",
    ] {
        assert_eq!(check(&s, &e, answer), Verdict::Right, "{answer}");
    }
    let v = check(&s, &e, "2, -4, 6, -8");
    assert_eq!(
        v,
        Verdict::Wrong {
            positions: vec![3],
            off_by_one: true
        }
    );
    assert_eq!(
        v.to_string(),
        "the value at position 4 is not right (off by one: check the rounding and any ties)"
    );
    let v = check(&s, &e, "0 0 0 0");
    assert_eq!(
        v,
        Verdict::Wrong {
            positions: vec![0, 1, 2, 3],
            off_by_one: false
        }
    );
    assert_eq!(
        v.to_string(),
        "the values at positions 1, 2, 3 and 4 are not right"
    );
    let v = check(&s, &e, "2, -4, 6");
    assert_eq!(
        v.to_string(),
        "expected 4 codes, one per value of the row, but got 3"
    );
    assert!(malformed(&check(&s, &e, "2, -4, 6.5, -7")));
    assert!(malformed(&check(&s, &e, "two, four")));
    assert!(malformed(&check(&s, &e, "  ")));
}

#[test]
fn reconstructions_are_a_list_of_reals_within_tolerance() {
    let s = step("reconstruction", "row = 0");
    let e = Expected::Numbers(vec![0.042_857, -0.085_714, 0.128_571, -0.15]);
    assert_eq!(
        check(&s, &e, "0.0429, -0.0857, 0.1286, -0.15"),
        Verdict::Right
    );
    assert!(near(&check(&s, &e, "0.044, -0.087, 0.13, -0.15")));
    let v = check(&s, &e, "0, 0, 0, -0.15");
    assert_eq!(
        v,
        Verdict::Wrong {
            positions: vec![0, 1, 2],
            off_by_one: false
        }
    );
    assert!(malformed(&check(&s, &e, "0.04 -0.09")));
    assert!(malformed(&check(&s, &e, "0.04 x 1 2")));
}

#[test]
fn a_fraction_stands_for_a_number_wherever_one_goes_and_nothing_else_is_evaluated() {
    let scale = step("scale", "");
    let e = Expected::Number(3.1 / 7.0);
    for answer in ["3.1/7", "3.1 / 7", " 3.10/7 "] {
        assert_eq!(check(&scale, &e, answer), Verdict::Right, "{answer}");
    }
    for answer in ["3.1*7", "(3.1)/7", "3.1/0", "3.1//7"] {
        assert!(malformed(&check(&scale, &e, answer)), "{answer}");
    }
    // In a list, each value may be a fraction, spaces or not.
    let s = step("reconstruction", "row = 0");
    let e = Expected::Numbers(vec![0.3 / 7.0, -0.6 / 7.0]);
    assert_eq!(check(&s, &e, "0.3/7, -0.6 / 7"), Verdict::Right);
    // A whole number too, when the fraction is whole.
    let z = step("zero_point", "");
    assert_eq!(check(&z, &Expected::Whole(128), "256/2"), Verdict::Right);
    assert!(malformed(&check(&z, &Expected::Whole(128), "255/2")));
    let codes = step("codes", "row = 0");
    assert_eq!(
        check(&codes, &Expected::Codes(vec![2, -4]), "4/2, -8/2"),
        Verdict::Right
    );
}

#[test]
fn choices_by_number_or_letter() {
    let s = step(
        "choice",
        "options = [\"a\", \"b\", \"c\"]\ncorrect = 2\nwhy = \"because\"",
    );
    assert_eq!(
        s.ask,
        Ask::Choice {
            options: vec!["a".into(), "b".into(), "c".into()],
            correct: 1
        }
    );
    let e = Expected::Choice {
        correct: 1,
        options: 3,
    };
    for answer in ["2", "b", "B", "(b)", "b)", " 2. "] {
        assert_eq!(check(&s, &e, answer), Verdict::Right, "{answer}");
    }
    assert!(wrong(&check(&s, &e, "1")));
    assert!(wrong(&check(&s, &e, "c")));
    for answer in ["4", "d", "0", "", "b and c"] {
        let v = check(&s, &e, answer);
        assert_eq!(
            v,
            Verdict::Malformed {
                reason: "choose 1 to 3 (or a to c)".into()
            },
            "{answer:?}"
        );
    }
}

// ----- built-in exercises -----

/// The expected answer of step `i` of the built-in exercise `name`, computed by the core.
fn answers(name: &str) -> Vec<Expected> {
    let session = start_exercise(exercise(name).unwrap()).unwrap();
    (0..session.len())
        .map(|i| session.prepared_at(i).unwrap().expected.clone())
        .collect()
}

fn number(e: &Expected) -> f64 {
    match e {
        Expected::Number(x) => *x,
        other => panic!("not a number: {other:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1e-9)
}

#[test]
fn every_built_in_exercise_parses_and_every_answer_is_computable() {
    let all = exercises();
    assert!(all.len() >= 6, "{} exercises", all.len());
    let mut kinds = std::collections::BTreeSet::new();
    for e in all {
        assert!(!e.name.is_empty() && !e.title.is_empty() && !e.intro.is_empty());
        let name = e.name.clone();
        let session = start_exercise(e).unwrap_or_else(|err| panic!("{name}: {err}"));
        for (i, s) in session.exercise().steps.iter().enumerate() {
            kinds.insert(s.ask.name());
            assert_eq!(s.number, i + 1);
            assert!(!s.prompt.is_empty() && !s.hint.is_empty(), "{name} {i}");
            let expected = &session.prepared_at(i).unwrap().expected;
            // The computed answer, typed back, is right.
            let typed = match expected {
                Expected::Number(x) => format!("{x}"),
                Expected::Whole(x) => x.to_string(),
                Expected::Codes(c) => format!("{c:?}"),
                Expected::Numbers(v) => format!("{v:?}"),
                Expected::Choice { correct, .. } => (correct + 1).to_string(),
            };
            assert_eq!(
                check(s, expected, &typed),
                Verdict::Right,
                "{name} step {}",
                i + 1
            );
        }
    }
    for kind in [
        "scale",
        "zero_point",
        "codes",
        "bits_per_weight",
        "utilization",
        "levels_used",
        "choice",
    ] {
        assert!(kinds.contains(kind), "no built-in exercise asks for {kind}");
    }
}

#[test]
fn the_apply_now_exercise_computes_the_lessons_numbers() {
    let a = answers("per-tensor-vs-per-channel");
    assert!(close(number(&a[0]), 3.10 / 7.0), "shared scale {:?}", a[0]);
    assert_eq!(number(&a[0]), shared_scale());
    assert_eq!(a[1], Expected::Codes(vec![0, 0, 0, 0]));
    // The lesson's point: the collapsed row's error is as large as its values.
    assert!(close(number(&a[2]), 0.1), "quiet MAE, shared {:?}", a[2]);
    assert!(close(number(&a[3]), 0.15 / 7.0), "quiet scale {:?}", a[3]);
    assert_eq!(a[4], Expected::Codes(vec![2, -4, 6, -7]));
    assert!(
        (number(&a[5]) - 0.005_357_1).abs() < 1e-6,
        "quiet MAE, own scale {:?}",
        a[5]
    );
    assert!(close(number(&a[6]), 3.10 / 7.0), "loud scale {:?}", a[6]);
    assert_eq!(a[7], Expected::Codes(vec![5, -7, 4, -6]));
    assert_eq!(
        a[8],
        Expected::Choice {
            correct: 1,
            options: 4
        }
    );
}

#[test]
fn the_other_exercises_compute_the_numbers_their_text_quotes() {
    let g = answers("group-rescue");
    assert!(close(number(&g[0]), 2.8 / 7.0));
    assert_eq!(g[1], Expected::Codes(vec![0, 0, 0, 7, 0, 0, 0, 0]));
    assert!(close(number(&g[2]), 0.08 / 7.0), "{:?}", g[2]);
    assert_eq!(g[3], Expected::Codes(vec![0, 0, 0, 7, 4, -6, 7, -3]));
    assert_eq!(number(&g[4]), 12.0);

    let z = answers("asymmetric-zero-point");
    assert!(close(number(&z[0]), 1.5 / 255.0), "{:?}", z[0]);
    assert_eq!(z[1], Expected::Whole(51));
    assert_eq!(z[2], Expected::Codes(vec![0, 51, 136, 255]));

    let n = answers("narrow-vs-full");
    assert!(close(number(&n[0]), 1.6 / 7.0));
    assert_eq!(n[1], Expected::Codes(vec![7, -4, 2, -5]));
    assert!(close(number(&n[2]), 0.2));
    assert_eq!(n[3], Expected::Codes(vec![7, -5, 2, -6]));

    let b = answers("bits-per-weight");
    let bpw: Vec<f64> = b[..5].iter().map(number).collect();
    assert_eq!(bpw, [4.031_25, 4.5, 6.0, 4.5, 5.0]);

    let u = answers("utilization-bar");
    assert_eq!(u[0], Expected::Whole(4));
    assert!(close(number(&u[1]), 12.0 / 14.0));
    assert_eq!(u[2], Expected::Whole(1));
    assert!(close(number(&u[3]), 13.0 / 14.0));

    let i = answers("interview-check");
    assert!(close(number(&i[0]), 2.0 / 127.0));
    assert_eq!(i[1], Expected::Codes(vec![-127, -95, 64, 114]));
    assert!(close(number(&i[2]), 0.1 / 127.0));
    assert_eq!(i[3], Expected::Codes(vec![-127, -102, 64, 114]));
}

#[test]
fn the_generated_pair_exercise_uses_the_cores_pair_and_allows_learner_rows() {
    let e = exercise("apply-now-generated").unwrap();
    assert!(e.learner_rows);
    assert!(matches!(
        e.data,
        ExerciseData::Generated {
            seed: 7,
            columns: 4
        }
    ));
    let m = exercise_matrix(&e).unwrap();
    assert_eq!(m, quantscope::teach::exercise::generated_pair(7, 4));
    let a = answers("apply-now-generated");
    assert_eq!(
        a[1],
        Expected::Codes(vec![0, 0, 0, 0]),
        "the quiet row collapses"
    );
    // The learner's own rows work as well, and a one-row matrix is refused clearly.
    let own = quantscope::io::text::parse_text("1, -2, 3\n0.01, 0.02, -0.03").unwrap();
    let s = Session::new(e.clone(), own).unwrap();
    assert_eq!(
        s.prepared_at(3).unwrap().expected,
        Expected::Codes(vec![2, -5, 7])
    );
    let one = quantscope::io::text::parse_text("1, 2, 3").unwrap();
    let err = Session::new(e, one).unwrap_err().to_string();
    assert_eq!(
        err,
        "step 5: row 1 does not exist (the matrix has rows 0 to 0)"
    );
}

// ----- a session -----

#[test]
fn a_whole_exercise_played_through_keeps_attempts_hints_and_score() {
    let mut s = start_exercise(exercise("per-tensor-vs-per-channel").unwrap()).unwrap();
    assert_eq!(
        (s.len(), s.current(), s.score(), s.max_score()),
        (9, 0, 0, 18)
    );
    assert_eq!(s.hint(), None);

    // Step 1: right at once, 2 points; the explanation appears, the hint never did.
    assert_eq!(s.answer("0.4429"), Verdict::Right);
    assert_eq!(
        s.progress().outcome,
        Outcome::Solved {
            points: POINTS_FIRST_TRY
        }
    );
    assert_eq!(s.score(), 2);
    assert!(s.explanation().unwrap().starts_with("3.10 / 7"));
    // Answering a solved step again changes nothing.
    assert!(wrong(&s.answer("1")));
    assert_eq!((s.score(), s.progress().attempts), (2, 1));

    // Step 2: a malformed answer is not a miss; a wrong one shows the hint; then right: 1.
    assert!(s.next_step());
    assert!(malformed(&s.answer("0 0 0")));
    assert_eq!((s.progress().attempts, s.hint()), (0, None));
    assert!(wrong(&s.answer("0, 0, 0, -1")));
    assert!(s.hint().unwrap().contains("half a step"));
    assert_eq!(s.explanation(), None);
    assert_eq!(s.answer("0 0 0 0"), Verdict::Right);
    assert_eq!(
        s.progress().outcome,
        Outcome::Solved {
            points: POINTS_AFTER_HINT
        }
    );
    assert_eq!((s.score(), s.progress().attempts), (3, 2));

    // Step 3: the quiet row's MAE under the shared scale is its values' own size. Skipped
    // here (no answer, no points).
    assert!(s.next_step());
    assert_eq!(s.step().ask, quantscope::teach::exercise::Ask::Mae);

    // Step 4: near counts as a miss.
    assert!(s.next_step());
    assert!(near(&s.answer("0.021")));
    assert!(s.hint().is_some());
    assert_eq!(s.answer("0.15/7"), Verdict::Right);
    assert_eq!(s.score(), 4);

    // Step 5: revealed, no points.
    assert!(s.next_step());
    assert_eq!(*s.reveal(), Expected::Codes(vec![2, -4, 6, -7]));
    assert_eq!(s.progress().outcome, Outcome::Revealed);
    assert_eq!(s.answer("2 -4 6 -7"), Verdict::Right, "still judged");
    assert_eq!(s.score(), 4);

    // Step 6: the MAE with its own scale, worked out from the reconstructions.
    assert!(s.next_step());
    assert_eq!(s.answer("0.00536"), Verdict::Right);
    assert_eq!(s.score(), 6);

    // Step 7: the hint asked for first caps the step at 1 point.
    assert!(s.next_step());
    s.request_hint();
    assert!(s.hint().is_some());
    assert_eq!(s.answer("0.442857"), Verdict::Right);
    assert_eq!(s.score(), 7);

    // Steps 8 and 9: right at once.
    assert!(s.next_step());
    assert_eq!(s.answer("5, -7, 4, -6"), Verdict::Right);
    assert!(!s.finished());
    assert!(s.next_step());
    assert_eq!(s.answer("b"), Verdict::Right);
    assert!(s.explanation().unwrap().contains("0.005"));
    assert!(!s.next_step(), "the last step");
    assert!(!s.finished(), "step 3 was skipped");
    assert_eq!(s.score(), 11);
    let points: Vec<u32> = s.all_progress().iter().map(Progress::points).collect();
    assert_eq!(points, [2, 1, 0, 1, 0, 2, 1, 2, 2]);
    assert!(s.go_to(2));
    assert_eq!(s.answer("0.1"), Verdict::Right);
    assert!(s.finished());
    assert_eq!(s.score(), 13);

    // Moving back keeps what was done.
    assert!(s.go_to(8));
    assert!(s.previous_step());
    assert_eq!(s.current(), 7);
    assert!(s.go_to(0));
    assert!(!s.previous_step());
    assert!(!s.go_to(9));
    assert_eq!(s.score(), 13);
}

#[test]
fn a_revealed_step_can_show_its_worked_arithmetic() {
    let mut s = start_exercise(exercise("per-tensor-vs-per-channel").unwrap()).unwrap();
    s.go_to(4);
    s.reveal();
    let row = s.step().row.unwrap();
    let p = s.prepared();
    assert_eq!(p.config.granularity, Granularity::Channel);
    let e = quantscope::core::explain::explain_channel(s.matrix(), &p.report, row);
    let codes: Vec<i32> = e.values.iter().map(|v| v.code).collect();
    assert_eq!(Expected::Codes(codes), p.expected);
}

// ----- scenarios, demos, cards -----

#[test]
fn every_scenario_parses_and_analyses_under_its_suggested_configuration() {
    let all = scenarios();
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "quiet-loud",
            "calculator",
            "interview",
            "outlier",
            "one-signed",
            "degenerate",
            "gaussian-16",
            "formats",
            "loud-input",
            "act-quant-tokens",
            "smoothquant-alpha"
        ]
    );
    for s in &all {
        assert!(!s.title.is_empty() && s.title != s.name, "{}", s.name);
        assert!(!s.look.is_empty(), "{}", s.name);
        assert!(s.text.starts_with("#! title: "), "{}", s.name);
        let report = analyse(&s.matrix().unwrap(), &s.config().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        assert!(!report.channels.is_empty());
        assert_eq!(scenario(&s.name).unwrap(), *s);
    }
    let shape = |name: &str| scenario(name).unwrap().matrix().unwrap().shape();
    assert_eq!(shape("quiet-loud"), (2, 4));
    assert_eq!(shape("calculator"), (4, 5));
    assert_eq!(shape("interview"), (3, 4));
    assert_eq!(shape("outlier"), (2, 64));
    assert_eq!(shape("gaussian-16"), (16, 64));
}

#[test]
fn the_scenarios_show_what_their_headers_say() {
    let report = |name: &str| {
        let s = scenario(name).unwrap();
        analyse(&s.matrix().unwrap(), &s.config().unwrap()).unwrap()
    };
    // The explorer's default example: the quiet row collapses per tensor.
    let q = report("quiet-loud");
    assert!(q.channels[0].collapsed && !q.channels[1].collapsed);
    // Groups of 16 rescue the outlier row: its MAE falls against per channel.
    let o = report("outlier");
    let rung = |g| o.rung(g).unwrap().channels[0].mae;
    assert!(rung(Granularity::Group(16)) < rung(Granularity::Channel) / 3.0);
    assert_eq!(
        o.rung(Granularity::Channel).unwrap().channels[0].mae,
        o.rung(Granularity::Tensor).unwrap().channels[0].mae
    );
    // One-signed rows on a tight range: zero points outside [-8, 7].
    let one = report("one-signed");
    assert!(
        one.blocks
            .iter()
            .all(|b| b.zero_point < -8 || b.zero_point > 7)
    );
    // Degenerate: the all-zero row's scale is replaced.
    let d = report("degenerate");
    assert!(d.blocks.at(0).degenerate && !d.blocks.at(1).degenerate);
    // Sixteen gaussians: some collapse per tensor, none per channel; spreads a hundredfold.
    let g = report("gaussian-16");
    assert!(g.collapsed_channels >= 4, "{}", g.collapsed_channels);
    assert_eq!(g.rung(Granularity::Channel).unwrap().collapsed_channels, 0);
    let m = scenario("gaussian-16").unwrap().matrix().unwrap();
    let std: Vec<f64> = m
        .values()
        .rows()
        .into_iter()
        .map(|r| {
            let n = r.len() as f64;
            let mean = r.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
            (r.iter()
                .map(|&x| (f64::from(x) - mean).powi(2))
                .sum::<f64>()
                / n)
                .sqrt()
        })
        .collect();
    let ratio = std.iter().copied().fold(0.0, f64::max) / std.iter().copied().fold(1.0, f64::min);
    assert!(
        (50.0..200.0).contains(&ratio),
        "spreads differ {ratio:.0}-fold"
    );
}

#[test]
fn every_demo_script_parses_and_loads_only_existing_scenarios() {
    let all = demo_scripts();
    assert!(!all.is_empty());
    for d in &all {
        assert!(!d.title.is_empty());
        assert!((8..=12).contains(&d.steps.len()), "{} steps", d.steps.len());
        assert!(
            d.steps[0].scenario.is_some(),
            "the first step loads a scenario"
        );
        assert!(
            d.steps.iter().all(|s| s.caption.is_some()),
            "every step has a caption"
        );
        // Replaying the steps gives valid configurations throughout.
        let (mut preset, mut overrides) = ("lesson", Overrides::default());
        for s in &d.steps {
            (preset, overrides) = s.apply(preset, overrides);
            assert!(overrides.resolve(preset).is_ok(), "step {}", s.number);
        }
    }
    let story = &all[0];
    assert_eq!(story.name, "quiet-row");
    let focus: Vec<Option<DemoFocus>> = story.steps.iter().map(|s| s.focus).collect();
    for pane in [DemoFocus::Utilization, DemoFocus::Errors, DemoFocus::Ladder] {
        assert!(focus.contains(&Some(pane)), "{pane}");
    }
    let grans: Vec<&str> = story
        .steps
        .iter()
        .flat_map(|s| s.set.iter())
        .filter(|(k, _)| *k == "granularity")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(grans, ["channel", "channel", "group:16"]);
}

#[test]
fn recall_cards_parse_and_cover_the_lesson() {
    let cards = cards();
    assert!(cards.len() >= 8, "{}", cards.len());
    let questions: String = cards.iter().map(|c| c.question.to_lowercase()).collect();
    for topic in [
        "per-channel",
        "group",
        "metadata",
        "per-tensor",
        "collapsed",
    ] {
        assert!(questions.contains(topic), "no card about {topic}");
    }
    assert!(cards.iter().all(|c| c.answer.len() > 40));
}

/// The first fenced block of `lang` in a README under `assets/`.
fn example(readme: &str, lang: &str) -> String {
    let text =
        std::fs::read_to_string(format!("{}/assets/{readme}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let start = text.find(&format!("```{lang}\n")).unwrap() + lang.len() + 4;
    text[start..][..text[start..].find("```").unwrap()].to_string()
}

#[test]
fn the_format_documents_examples_are_valid() {
    let ex = quantscope::teach::assets::parse_exercise(
        "readme",
        &example("exercises/README.md", "toml"),
    )
    .unwrap();
    let s = start_exercise(ex).unwrap();
    assert_eq!(
        s.prepared_at(1).unwrap().expected,
        Expected::Codes(vec![0, 0, 0, 7, 4, -6, 7, -3])
    );
    let demo = quantscope::teach::script::parse_demo("readme", &example("demo/README.md", "toml"))
        .unwrap();
    assert_eq!(demo.steps.len(), 3);
    let sc = quantscope::teach::assets::parse_scenario(
        "readme",
        &example("scenarios/README.md", "text"),
    )
    .unwrap();
    assert_eq!(sc.look.len(), 2);
}

#[test]
fn the_format_exercises_answer_from_each_formats_layout_and_exponent() {
    let bits = answers("format-bits");
    assert_eq!(number(&bits[0]), 4.5, "Q4_K");
    assert_eq!(number(&bits[1]), 6.5625, "Q6_K");
    assert_eq!(number(&bits[2]), 4.25, "MXFP4");
    let mx = answers("mxfp4-exponent");
    assert_eq!(number(&mx[0]), 0.5, "2^(floor(log2 3) - 2)");
    assert!(matches!(mx[3], Expected::Whole(14)), "{:?}", mx[3]);
    // The choices were written by hand: check them against the core's reconstruction.
    let e = exercise("mxfp4-exponent").unwrap();
    let session = start_exercise(e).unwrap();
    let report = session.prepared_at(1).unwrap().report.clone();
    let y = report.row_dequantized(0);
    let zeros: Vec<usize> = (0..y.len()).filter(|&i| y[i] == 0.0).collect();
    assert_eq!(
        zeros,
        [1, 7, 9, 15, 21, 25, 31],
        "0.1, 0.05, -0.12, 0.08, -0.05, 0.11, 0.02"
    );
    assert_eq!(y[2], 0.25, "0.2 survives as 0.25");
}
