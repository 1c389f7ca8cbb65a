//! The headless command as a user runs it: the real binary, its output and exit codes.

use std::process::Output;

use crate::common::files;
use crate::common::run;

use files::temp_file;

fn quantscope(args: &[&str], stdin: Option<&str>) -> Output {
    run::quantscope_with_input(args, stdin.map(str::as_bytes))
}

fn stdout(o: &Output) -> String {
    run::text(&o.stdout)
}

fn stderr(o: &Output) -> String {
    run::text(&o.stderr)
}

/// Runs `quantscope args` and requires exit status 2 with `needle` in the message.
fn refused_saying(args: &[&str], needle: &str) {
    let o = quantscope(args, None);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
}

#[test]
fn help_lists_the_commands_and_flags() {
    let top = quantscope(&["--help"], None);
    assert!(top.status.success());
    insta::assert_snapshot!("top_help", stdout(&top));
    let report = quantscope(&["report", "--help"], None);
    assert!(report.status.success());
    insta::assert_snapshot!("report_help", stdout(&report));
}

#[test]
fn list_presets_prints_one_line_each() {
    let o = quantscope(&["report", "--list-presets"], None);
    assert!(o.status.success());
    let out = stdout(&o);
    // The presets, then a blank line and the formats of the format ladder, then the
    // clipping modes.
    let (presets, formats) = out.split_once("\n\n").expect("two lists");
    let (formats, clippings) = formats.split_once("\n\n").expect("three lists");
    assert!(formats.starts_with("Formats"), "{formats}");
    assert!(clippings.starts_with("Clipping"), "{clippings}");
    assert_eq!(clippings.lines().count(), 1 + 4);
    assert_eq!(
        formats.lines().count(),
        1 + quantscope::core::format_ladder::FORMATS.len()
    );
    // Each OCP MX format names the specification's section it follows.
    let mx: Vec<&str> = formats.lines().filter(|l| l.starts_with("mx")).collect();
    assert_eq!(mx.len(), 7, "{formats}");
    for l in mx.iter().filter(|l| !l.starts_with("mxfp4 ")) {
        assert!(l.contains("OCP Microscaling v1.0 spec (section 6.3"), "{l}");
    }
    let names: Vec<&str> = presets
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "lesson",
            "calculator",
            "ort-int8",
            "ort-uint8",
            "ort-int4",
            "ort-uint4",
            "torch-qint8",
            "torch-quint8",
            "q8_0",
            "q4_0",
            "q4_1",
            "q5_0",
            "q5_1",
            "int4-g128"
        ]
    );
}

#[test]
fn the_builtin_example_reports_the_collapsed_quiet_row() {
    let o = quantscope(&["report", "--format", "json", "--values"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["channels"][0]["label"], "quiet");
    assert_eq!(v["channels"][0]["collapsed"], true);
    assert_eq!(v["channels"][0]["codes"], serde_json::json!([0, 0, 0, 0]));
    assert_eq!(v["config"]["qmin"], -7);
    let o = quantscope(
        &[
            "report",
            "--format",
            "json",
            "--values",
            "--granularity",
            "channel",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["channels"][0]["codes"], serde_json::json!([2, -4, 6, -7]));
    assert_eq!(v["channels"][0]["collapsed"], false);
}

#[test]
fn every_format_is_written_from_stdin() {
    for format in ["table", "json", "csv", "markdown", "html", "pdf"] {
        let o = quantscope(
            &["report", "-", "--format", format, "--preset", "ort-int8"],
            Some("a: 1, -2, 3\nb: 0.1 0.2 0.3\n"),
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{format}");
        assert!(stderr(&o).is_empty(), "{format}: {}", stderr(&o));
    }
    let csv = quantscope(&["report", "-", "--format", "csv"], Some("1 2\n3 4\n5 6\n"));
    assert_eq!(
        stdout(&csv).lines().count(),
        4,
        "header plus one line per channel"
    );
}

#[test]
fn output_goes_to_a_file_and_an_unwritable_one_is_an_error() {
    let dir = temp_file("placeholder", b"").with_file_name("out");
    std::fs::create_dir_all(&dir).unwrap();
    let pdf = dir.join("report.pdf");
    let o = quantscope(
        &[
            "report",
            "-f",
            "pdf",
            "--paper",
            "letter",
            "-o",
            pdf.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"));
    let html = dir.join("report.html");
    let o = quantscope(
        &[
            "report",
            "--ascii",
            "-f",
            "html",
            "-o",
            html.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    let missing = dir.join("no-such-dir").join("report.pdf");
    let o = quantscope(
        &["report", "-f", "pdf", "-o", missing.to_str().unwrap()],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: could not write "),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("report.pdf"), "{}", stderr(&o));
    refused_saying(
        &["report", "--list-tensors", "-f", "html"],
        "--format html is for an analysis",
    );
    refused_saying(
        &["report", "-f", "pdf", "--paper", "a5"],
        "expected a4 or letter",
    );
}

#[test]
fn bad_input_exits_2_with_line_and_column_and_nothing_on_stdout() {
    let o = quantscope(&["report", "-"], Some("1, 2, 3\n4, 5, 0.4x\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(err.contains("line 2, col 7"), "{err}");
    assert!(err.contains("\"0.4x\""), "{err}");

    let ragged = quantscope(&["report", "-"], Some("1, 2, 3\n4, 5\n"));
    assert_eq!(ragged.status.code(), Some(2));
    assert!(ragged.stdout.is_empty());
    assert!(stderr(&ragged).contains("line 2"), "{}", stderr(&ragged));

    let empty = quantscope(&["report", "-"], Some("# nothing\n\n"));
    assert_eq!(empty.status.code(), Some(2));
    assert!(empty.stdout.is_empty());
}

#[test]
fn bad_flags_and_files_exit_2() {
    for args in [
        vec!["report", "--bits", "17"],
        vec!["report", "--preset", "q3_k"],
        vec!["report", "--granularity", "group:0"],
        vec!["report", "--clip", "percentile:0"],
        vec!["report", "--range", "-9..7", "--bits", "4"],
        vec!["report", "/nonexistent/channels.txt"],
    ] {
        run::assert_refused(&args);
    }
    let bad_npy = temp_file("bad.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'");
    let o = quantscope(&["report", bad_npy.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
fn flags_after_a_preset_override_its_fields() {
    let o = quantscope(
        &[
            "report",
            "--format",
            "json",
            "--preset",
            "q4_0",
            "--granularity",
            "channel",
            "--scale-dtype",
            "f32",
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["granularity"], "channel");
    assert_eq!(v["config"]["scale_dtype"], "f32");
    assert_eq!(v["config"]["bits"], 4);
    assert_eq!(v["blocks"].as_array().unwrap().len(), 2);
}

#[test]
fn timings_go_to_stderr_and_no_ladder_skips_it() {
    let o = quantscope(
        &["report", "--format", "json", "--timings", "--no-ladder"],
        None,
    );
    assert!(o.status.success());
    let err = stderr(&o);
    for step in ["load", "analyse", "write"] {
        assert!(err.contains(step), "{err}");
    }
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ladder"].as_array().map_or(0, Vec::len), 0);
}

#[test]
fn text_files_by_extension() {
    let csv = temp_file("w.csv", b"0.1,0.2,0.3\n-0.1,-0.2,-0.3\n");
    let o = quantscope(&["report", csv.to_str().unwrap(), "--format", "csv"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 3);
}

#[test]
fn scenarios_are_listed_and_reported_with_their_settings() {
    let list = quantscope(&["report", "--list-scenarios"], None);
    assert!(list.status.success());
    let names: Vec<String> = stdout(&list)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    for n in [
        "quiet-loud",
        "calculator",
        "interview",
        "outlier",
        "one-signed",
        "degenerate",
        "gaussian-16",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
    let top = quantscope(&["--list-scenarios"], None);
    assert_eq!(stdout(&top), stdout(&list));
    // The outlier scenario suggests groups; a flag still overrides a field.
    let o = quantscope(
        &[
            "report",
            "--scenario",
            "outlier",
            "--format",
            "json",
            "--no-ladder",
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["config"]["granularity"]
            .as_str()
            .unwrap_or("")
            .starts_with("group:"),
        "{}",
        v["config"]
    );
    let o = quantscope(
        &[
            "report",
            "--scenario",
            "outlier",
            "--format",
            "json",
            "--granularity",
            "tensor",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["granularity"], "tensor");
    refused_saying(&["report", "--scenario", "nope"], "--list-scenarios");
}

#[test]
fn explain_adds_the_worked_arithmetic_to_the_table_and_markdown() {
    let o = quantscope(&["report", "--explain", "--granularity", "channel"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Worked arithmetic"), "{out}");
    assert!(out.contains("0.15 / 7"), "{out}");
    let md = quantscope(&["report", "--explain", "--format", "markdown"], None);
    assert!(stdout(&md).contains("## Worked arithmetic"));
    let json = quantscope(&["report", "--explain", "--format", "json"], None);
    assert!(!stdout(&json).contains("Worked arithmetic"));
}

#[test]
fn demo_and_practice_list_their_built_ins() {
    let d = quantscope(&["demo", "--list"], None);
    assert!(d.status.success());
    assert!(stdout(&d).starts_with("quiet-row"), "{}", stdout(&d));
    let p = quantscope(&["practice", "--list"], None);
    assert!(p.status.success());
    assert!(stdout(&p).lines().count() >= 6, "{}", stdout(&p));
    let bad = quantscope(&["practice", "nope"], None);
    assert_eq!(bad.status.code(), Some(2));
    let bad = quantscope(&["demo", "nope"], None);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn without_a_terminal_the_explorer_says_so_in_one_line_and_exits_2() {
    for args in [&[][..], &["demo"][..], &["practice"][..]] {
        let o = quantscope(args, None);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("needs a terminal"), "{err}");
        assert!(err.contains("quantscope report"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn ascii_applies_to_every_output_format_and_the_worked_arithmetic() {
    let plain = quantscope(&["report", "--explain"], None);
    assert!(
        stdout(&plain).contains('→'),
        "the test needs a symbol to replace"
    );
    let labelled = "é: 0.05, -0.08\nloud: 2.21, -3.1\n";
    for format in ["table", "markdown", "json", "csv"] {
        let o = quantscope(
            &[
                "report",
                "-",
                "--ascii",
                "--explain",
                "--values",
                "--format",
                format,
            ],
            Some(labelled),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(out.is_ascii(), "{format}: {out}");
        assert!(
            out.contains("\\u{e9}"),
            "{format}: the label is escaped, not dropped"
        );
    }
    let o = quantscope(&["report", "--ascii", "--explain"], None);
    assert!(stdout(&o).contains("-> round ->"), "{}", stdout(&o));
}

#[test]
fn counts_of_one_are_singular() {
    let o = quantscope(&["report", "-"], Some("1, 2\n3\n"));
    let err = stderr(&o);
    assert!(err.contains("channel 2 has 1 value but"), "{err}");
}

#[test]
fn values_that_underflow_f32_are_noted_on_stderr() {
    let o = quantscope(
        &["report", "-", "--no-ladder"],
        Some("a: 1e-50, 1, 2\nb: 2e-40, 3, 4\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("note: line 1, col 4: 1e-50 is too small for f32 and reads as 0"),
        "{err}"
    );
    assert!(
        err.contains("note: line 2, col 4: 2e-40 is subnormal"),
        "{err}"
    );
    assert!(!stdout(&o).contains("note:"));
}
