//! `report --compare SPEC`: the report (B) against another configuration of the same matrix
//! (A) in every format, from the seed lesson's quiet and loud rows: per tensor (B) the quiet
//! row collapses, per channel (A) it does not.

use crate::common::run;

use run::{quantscope, text};

const A: &str = "lesson,granularity=channel";

fn report(format: &str) -> String {
    let o = quantscope(&[
        "report",
        "--scenario",
        "quiet-loud",
        "--no-ladder",
        "--compare",
        A,
        "--format",
        format,
    ]);
    assert!(o.status.success(), "{format}: {}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn the_table_and_markdown_end_with_what_differs_and_both_sides() {
    let table = report("table");
    let section = table
        .split_once("\nComparison\n")
        .expect("a Comparison section")
        .1;
    assert!(
        section.contains("A: int4 symmetric narrow [-7, 7], channel"),
        "{section}"
    );
    assert!(
        section.contains("What differs: granularity: channel -> tensor."),
        "{section}"
    );
    let quiet = section
        .lines()
        .find(|l| l.trim_start().starts_with("0  quiet"))
        .expect("the quiet row");
    assert!(quiet.ends_with("- / COLLAPSED"), "{quiet}");
    let overall: Vec<&str> = section
        .lines()
        .find(|l| l.trim_start().starts_with("B "))
        .unwrap()
        .split_whitespace()
        .collect();
    // B is the report above: its collapsed count and bits per weight.
    assert_eq!(overall[4..], ["1", "8"], "{section}");
    let md = report("markdown");
    assert!(md.contains("## Comparison"), "{md}");
    assert!(md.contains("| 0 | quiet |"), "{md}");
}

#[test]
fn json_holds_both_reports_and_the_comparison() {
    let v: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    assert_eq!(v["a"]["config"]["granularity"], "channel");
    assert_eq!(v["b"]["config"]["granularity"], "tensor");
    assert_eq!(
        v["comparison"]["differences"],
        serde_json::json!([{"key": "granularity", "a": "channel", "b": "tensor"}])
    );
    assert_eq!(v["comparison"]["collapsed"], serde_json::json!([0, 1]));
    let quiet = &v["comparison"]["channels"][0];
    assert_eq!(quiet["collapsed"], serde_json::json!([false, true]));
    let change = quiet["rmse_change"].as_f64().unwrap();
    let (a, b) = (
        v["a"]["channels"][0]["rmse"].as_f64().unwrap(),
        v["b"]["channels"][0]["rmse"].as_f64().unwrap(),
    );
    assert!((change - (b - a)).abs() < 1e-12, "{change} vs {}", b - a);
}

#[test]
fn csv_adds_a_columns_per_channel() {
    let csv = report("csv");
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| rows[0].iter().position(|h| *h == name).unwrap();
    assert_eq!(rows[1][col("label")], "quiet");
    assert_eq!(rows[1][col("collapsed")], "true");
    assert_eq!(rows[1][col("a_collapsed")], "false");
    let a_rmse: f64 = rows[1][col("a_rmse")].parse().unwrap();
    let b_rmse: f64 = rows[1][col("rmse")].parse().unwrap();
    assert!(a_rmse < b_rmse / 10.0, "per channel rescues the quiet row");
}

#[test]
fn html_has_the_comparison_section() {
    let html = report("html");
    assert!(html.contains("Comparison"), "{html}");
    assert!(html.contains("channel -&gt; tensor") || html.contains("channel -> tensor"));
}

#[test]
fn a_bad_spec_is_one_clear_message_and_exit_2() {
    for (spec, says) in [
        ("nope", "unknown preset \"nope\""),
        ("lesson,bits", "\"bits\" is not a setting: write key=value"),
        (
            "q4_k,bits=3",
            "q4_k is a format with its own block layout: its bits is fixed",
        ),
        ("lesson,granularity=sideways", "granularity"),
    ] {
        let o = quantscope(&["report", "--scenario", "quiet-loud", "--compare", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}");
        assert!(o.stdout.is_empty(), "{spec}");
        assert!(
            text(&o.stderr).contains(says),
            "{spec}: {}",
            text(&o.stderr)
        );
    }
    // A format whose blocks do not fit the rows is refused after the analysis, by name.
    let o = quantscope(&["report", "--scenario", "quiet-loud", "--compare", "q4_k"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--compare q4_k: Q4_K needs rows of a multiple of 256"));
}

#[test]
fn every_text_format_matches_its_golden_output() {
    // The whole outputs, reviewed once: a change to any number or word shows in the diff.
    insta::assert_snapshot!("compare_table", report("table"));
    insta::assert_snapshot!("compare_markdown", report("markdown"));
    insta::assert_snapshot!("compare_csv", report("csv"));
    insta::assert_snapshot!("compare_json", report("json"));
}
