//! The exporters on the seed lesson's matrix: a snapshot of every format, and checks of the
//! properties scripts and spreadsheets rely on (JSON keys and values, CSV rows and quoting,
//! bounded table output, Markdown escaping).

use ndarray::Array2;
use quantscope::core::config::Granularity;
use quantscope::core::{Matrix, Report, analyse};
use quantscope::io::export::{ExportOptions, Format, write_report};
use serde_json::Value;

use crate::common::core as core_helpers;

use core_helpers::{lesson, lesson_config, lesson_matrix};

fn export(report: &Report, format: Format, options: ExportOptions) -> String {
    let mut out = Vec::new();
    write_report(&mut out, report, format, &options).unwrap();
    String::from_utf8(out).unwrap()
}

fn with_values() -> ExportOptions {
    ExportOptions {
        values: true,
        ladder: true,
    }
}

/// A labelled matrix whose labels need quoting in CSV and escaping in Markdown.
fn labelled() -> Report {
    let values = Array2::from_shape_vec((3, 2), vec![0.5, -1.0, 0.25, 0.75, 2.0, -2.0]).unwrap();
    let labels = vec![Some("w,\"q\"".to_string()), None, Some("a|b".to_string())];
    let matrix = Matrix::with_labels(values, labels).unwrap();
    analyse(&matrix, &lesson_config(Granularity::Channel)).unwrap()
}

// ----- snapshots of the lesson under per-tensor -----

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(export(
        &lesson(Granularity::Tensor),
        Format::Table,
        with_values()
    ));
}

#[test]
fn json_snapshot() {
    insta::assert_snapshot!(export(
        &lesson(Granularity::Tensor),
        Format::Json,
        with_values()
    ));
}

#[test]
fn csv_snapshot() {
    insta::assert_snapshot!(export(
        &lesson(Granularity::Tensor),
        Format::Csv,
        with_values()
    ));
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!(export(
        &lesson(Granularity::Tensor),
        Format::Markdown,
        with_values()
    ));
}

#[test]
fn table_snapshot_without_values_or_ladder() {
    let options = ExportOptions {
        values: false,
        ladder: false,
    };
    insta::assert_snapshot!(export(
        &lesson(Granularity::Channel),
        Format::Table,
        options
    ));
}

// ----- format names -----

#[test]
fn format_names_parse_and_print() {
    for f in Format::ALL {
        assert_eq!(f.to_string().parse::<Format>(), Ok(f));
    }
    assert_eq!("md".parse::<Format>(), Ok(Format::Markdown));
    assert_eq!(" JSON ".parse::<Format>(), Ok(Format::Json));
    assert!("xml".parse::<Format>().is_err());
}

// ----- JSON -----

fn json(report: &Report, options: ExportOptions) -> Value {
    serde_json::from_str(&export(report, Format::Json, options)).expect("the JSON export parses")
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
#[expect(clippy::too_many_lines, reason = "one assertion per documented key")]
fn json_has_every_key() {
    let v = json(&lesson(Granularity::Tensor), with_values());
    let top = [
        "config", "shape", "blocks", "channels", "overall", "memory", "ladder", "formats",
    ];
    let mut sorted_top = top.to_vec();
    sorted_top.sort_unstable();
    assert_eq!(keys(&v), sorted_top);
    for k in [
        "bits",
        "signed",
        "scheme",
        "range",
        "range_source",
        "rounding",
        "granularity",
        "axis",
        "clipping",
        "scale_dtype",
        "zero_point_bits",
        "conventions",
        "summary",
        "qmin",
        "qmax",
    ] {
        assert!(v["config"].get(k).is_some(), "config.{k}");
    }
    assert_eq!(
        v["config"]["summary"],
        "int4 symmetric narrow [-7, 7], tensor"
    );
    assert_eq!(
        (v["config"]["qmin"].as_i64(), v["config"]["qmax"].as_i64()),
        (Some(-7), Some(7))
    );
    assert_eq!(v["shape"], serde_json::json!([2, 4]));
    let block = [
        "rows",
        "cols",
        "scale",
        "zero_point",
        "offset",
        "min",
        "max",
        "clipped",
        "code_scale",
        "range",
        "degenerate",
    ];
    assert_eq!(v["blocks"].as_array().map(Vec::len), Some(1));
    assert_eq!(keys(&v["blocks"][0]).len(), block.len());
    for k in block {
        assert!(v["blocks"][0].get(k).is_some(), "blocks[0].{k}");
    }
    assert_eq!(v["blocks"][0]["rows"], serde_json::json!([0, 2]));
    assert_eq!(v["blocks"][0]["offset"], Value::Null);
    let channel = [
        "index",
        "label",
        "mae",
        "rmse",
        "max_error",
        "sqnr_db",
        "levels_used",
        "levels_available",
        "utilization",
        "collapsed",
        "constant",
        "min_code",
        "max_code",
        "clipped",
        "min",
        "max",
        "codes",
        "dequantized",
    ];
    assert_eq!(keys(&v["channels"][0]).len(), channel.len());
    for k in channel {
        assert!(v["channels"][1].get(k).is_some(), "channels[1].{k}");
    }
    for k in ["mae", "rmse", "max_error", "sqnr_db", "collapsed_channels"] {
        assert!(v["overall"].get(k).is_some(), "overall.{k}");
    }
    for k in [
        "elements",
        "bits",
        "blocks",
        "metadata_bits_per_block",
        "payload_bytes",
        "metadata_bytes",
        "total_bytes",
        "bits_per_weight",
        "ratio_to_f32",
        "ratio_to_f16",
    ] {
        assert!(v["memory"].get(k).is_some(), "memory.{k}");
    }
    let rung = [
        "granularity",
        "scales",
        "metadata_bytes",
        "bits_per_weight",
        "mae",
        "rmse",
        "max_error",
        "sqnr_db",
        "collapsed_channels",
        "active",
    ];
    assert_eq!(keys(&v["ladder"][0]).len(), rung.len());
    for k in rung {
        assert!(v["ladder"][0].get(k).is_some(), "ladder[0].{k}");
    }
}

#[test]
fn json_keys_are_in_schema_order() {
    let text = export(&lesson(Granularity::Tensor), Format::Json, with_values());
    let order = [
        "\"config\":",
        "\"summary\":",
        "\"qmin\":",
        "\"qmax\":",
        "\"shape\":",
        "\"blocks\":",
        "\"channels\":",
        "\"overall\":",
        "\"memory\":",
        "\"ladder\":",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|k| text.find(k).unwrap_or_else(|| panic!("{k}")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    let channel = text.lines().find(|l| l.contains("\"index\":0")).unwrap();
    let fields = [
        "\"index\"",
        "\"label\"",
        "\"mae\"",
        "\"sqnr_db\"",
        "\"utilization\"",
        "\"max\"",
        "\"codes\"",
    ];
    let at: Vec<usize> = fields.iter().map(|k| channel.find(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{channel}");
}

#[test]
fn json_values_per_tensor() {
    let report = lesson(Granularity::Tensor);
    let v = json(&report, with_values());
    assert_eq!(v["channels"][0]["codes"], serde_json::json!([0, 0, 0, 0]));
    assert_eq!(v["channels"][1]["codes"], serde_json::json!([5, -7, 4, -6]));
    assert_eq!(v["channels"][0]["collapsed"], true);
    assert_eq!(v["channels"][0]["label"], Value::Null);
    assert_eq!(v["overall"]["collapsed_channels"], 1);
    assert_eq!(
        v["blocks"][0]["scale"].as_f64().map(|x| x as f32),
        Some(report.blocks.at(0).scale)
    );
    assert_eq!(
        v["blocks"][0]["scale"].as_f64().map(|x| x as f32),
        Some((f64::from(3.10_f32) / 7.0) as f32)
    );
    assert_eq!(
        v["channels"][0]["mae"].as_f64(),
        Some(report.channels[0].metrics.mae)
    );
    assert_eq!(v["memory"]["bits_per_weight"].as_f64(), Some(8.0));
    let active: Vec<&str> = v["ladder"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["active"] == true)
        .map(|r| r["granularity"].as_str().unwrap())
        .collect();
    assert_eq!(active, ["tensor"]);
}

#[test]
fn json_values_per_channel() {
    let report = lesson(Granularity::Channel);
    let text = export(&report, Format::Json, with_values());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["channels"][0]["codes"], serde_json::json!([2, -4, 6, -7]));
    assert_eq!(v["channels"][0]["collapsed"], false);
    // The scale is written as an f32: the shortest text that reads back as that f32.
    let scale = (0.15_f64 / 7.0) as f32;
    assert_eq!(
        v["blocks"][0]["scale"].as_f64().map(|x| x as f32),
        Some(scale)
    );
    assert!(text.contains("\"scale\":0.021428572,"), "{text}");
    let deq: Vec<f32> = v["channels"][0]["dequantized"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(deq, report.row_dequantized(0));
    assert_eq!(deq, [2.0, -4.0, 6.0, -7.0].map(|q: f32| q * scale));
}

#[test]
fn json_leaves_out_what_was_not_asked_for() {
    let v = json(
        &lesson(Granularity::Tensor),
        ExportOptions {
            values: false,
            ladder: false,
        },
    );
    assert!(v["channels"][0].get("codes").is_none());
    assert!(v["channels"][0].get("dequantized").is_none());
    assert_eq!(v["ladder"], serde_json::json!([]));
    assert_eq!(
        json(&labelled(), with_values())["channels"][0]["label"],
        "w,\"q\""
    );
}

// ----- CSV -----

#[test]
fn csv_has_a_header_and_one_line_per_channel() {
    let text = export(
        &lesson(Granularity::Channel),
        Format::Csv,
        ExportOptions::default(),
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        "index,label,mae,rmse,max_error,sqnr_db,levels_used,levels_available,utilization,collapsed,clipped,\
         mae_tensor,rmse_tensor,mae_channel,rmse_channel,mae_group:2,rmse_group:2"
    );
    assert!(lines[1].starts_with("0,,"), "{}", lines[1]);
    let without_ladder = export(
        &lesson(Granularity::Channel),
        Format::Csv,
        ExportOptions {
            values: false,
            ladder: false,
        },
    );
    assert!(
        without_ladder
            .lines()
            .next()
            .unwrap()
            .ends_with(",collapsed,clipped")
    );
}

#[test]
fn csv_quotes_labels() {
    let text = export(&labelled(), Format::Csv, with_values());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1].starts_with("0,\"w,\"\"q\"\"\",0."), "{}", lines[1]);
    assert!(lines[2].starts_with("1,,"), "{}", lines[2]);
    assert!(lines[3].starts_with("2,a|b,"), "{}", lines[3]);
    assert!(lines[0].ends_with(",codes"));
    assert!(lines[3].ends_with(",\"7 -7\""), "{}", lines[3]);
    // Every row has as many fields as the header once quoted commas are accounted for.
    let header_fields = lines[0].split(',').count();
    assert_eq!(lines[2].split(',').count(), header_fields);
}

#[test]
fn csv_label_with_a_line_break_stays_in_one_record() {
    let values = Array2::from_shape_vec((1, 2), vec![1.0, -1.0]).unwrap();
    let matrix = Matrix::with_labels(values, vec![Some("two\nlines".into())]).unwrap();
    let report = analyse(&matrix, &lesson_config(Granularity::Tensor)).unwrap();
    let text = export(&report, Format::Csv, ExportOptions::default());
    assert!(text.contains("\n0,\"two\nlines\","), "{text}");
}

// ----- table -----

#[test]
fn table_of_a_tall_matrix_lists_16_blocks_and_every_channel() {
    let values = Array2::from_shape_fn((4096, 8), |(r, c)| {
        ((r * 8 + c) % 17) as f32 - 8.0 + r as f32 * 1e-3
    });
    let report = analyse(
        &Matrix::new(values).unwrap(),
        &lesson_config(Granularity::Channel),
    )
    .unwrap();
    assert_eq!(report.blocks.len(), 4096);
    let text = export(&report, Format::Table, ExportOptions::default());
    let blocks: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Blocks")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    // Description, header, 16 rows, "… more".
    assert_eq!(blocks.len(), 19, "{}", blocks.join("\n"));
    assert_eq!(
        blocks[18].trim(),
        "… 4080 more blocks (the JSON export lists every block)."
    );
    let channels = channel_rows(&text);
    assert_eq!(channels.len(), 4096);
    assert!(
        channels[4095].trim_start().starts_with("4095 "),
        "{}",
        channels[4095]
    );
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 100).collect();
    assert!(widest <= 100, "a line is {widest} columns wide: {wide:?}");
}

/// The rows of the Channels section of a table.
fn channel_rows(table: &str) -> Vec<&str> {
    let section = table
        .lines()
        .skip_while(|l| *l != "Channels")
        .take_while(|l| !l.is_empty());
    section
        .skip_while(|l| !l.trim_start().starts_with("#  "))
        .skip(1)
        .collect()
}

#[test]
fn table_marks_collapsed_channels_in_words() {
    let text = export(
        &lesson(Granularity::Tensor),
        Format::Table,
        ExportOptions::default(),
    );
    let rows = channel_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows[0].trim_start().starts_with("0 ") && rows[0].ends_with("  COLLAPSED"),
        "{}",
        rows[0]
    );
    assert!(rows[0].contains("0% [..........]"), "{}", rows[0]);
    assert!(!rows[1].contains("COLLAPSED"), "{}", rows[1]);
    let per_channel = export(
        &lesson(Granularity::Channel),
        Format::Table,
        ExportOptions::default(),
    );
    assert!(
        channel_rows(&per_channel)
            .iter()
            .all(|r| !r.contains("COLLAPSED"))
    );
    assert!(per_channel.contains(
        "  bits/weight = (elements x bits + blocks x metadata bits) / elements\n\
         \x20             = (8 x 4 + 2 x 32) / 8 = 12\n"
    ));
}

#[test]
fn table_truncates_long_rows_of_values() {
    let values = Array2::from_shape_fn((1, 40), |(_, c)| c as f32 - 20.0);
    let report = analyse(
        &Matrix::new(values).unwrap(),
        &lesson_config(Granularity::Tensor),
    )
    .unwrap();
    let text = export(&report, Format::Table, with_values());
    let row = text.lines().skip_while(|l| *l != "Values").last().unwrap();
    assert!(row.ends_with(" …"), "{row}");
    assert!(text.contains("The first 32 of 40 values of each channel."));
}

// ----- Markdown -----

/// Cell separators of a Markdown table row: `|` not escaped by a backslash.
fn separators(row: &str) -> usize {
    row.replace("\\\\", "")
        .replace("\\|", "")
        .matches('|')
        .count()
}

#[test]
fn markdown_escapes_pipes_in_labels() {
    let text = export(&labelled(), Format::Markdown, with_values());
    assert!(text.contains(r"| 2 | a\|b | "), "{text}");
    assert!(!text.contains("a|b"));
    assert!(text.contains("| 0 | w,\"q\" | "), "{text}");
    // Every row of every table has as many cells as its header.
    let mut tables = 0;
    let mut header = None;
    for line in text.lines() {
        match (line.starts_with('|'), header) {
            (true, None) => {
                header = Some(separators(line));
                tables += 1;
            }
            (true, Some(n)) => assert_eq!(separators(line), n, "{line}"),
            (false, _) => header = None,
        }
    }
    assert_eq!(tables, 7, "{text}");
}

#[test]
fn markdown_has_a_section_per_table_section() {
    let report = lesson(Granularity::Tensor);
    let md = export(&report, Format::Markdown, with_values());
    let table = export(&report, Format::Table, with_values());
    let headings: Vec<&str> = md.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(
        headings,
        [
            "Blocks", "Channels", "Overall", "Memory", "Ladder", "Values"
        ]
    );
    for h in headings {
        assert!(table.lines().any(|l| l == h), "{h} missing from the table");
    }
}

// ----- worked arithmetic -----

fn explained(report: &Report, format: Format, rows: &[usize]) -> String {
    use quantscope::core::explain::explain_channel;
    let matrix = lesson_matrix();
    let explain: Vec<_> = rows
        .iter()
        .map(|&r| explain_channel(&matrix, report, r))
        .collect();
    let mut out = Vec::new();
    let options = ExportOptions {
        values: false,
        ladder: false,
    };
    quantscope::io::export::write_report_explained(&mut out, report, format, &options, &explain)
        .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn table_worked_arithmetic_snapshot() {
    insta::assert_snapshot!(explained(
        &lesson(Granularity::Tensor),
        Format::Table,
        &[0, 1]
    ));
}

#[test]
fn markdown_worked_arithmetic_snapshot() {
    insta::assert_snapshot!(explained(
        &lesson(Granularity::Channel),
        Format::Markdown,
        &[0]
    ));
}

#[test]
fn worked_arithmetic_is_last_in_table_and_markdown_and_absent_from_json_and_csv() {
    let report = lesson(Granularity::Channel);
    let table = explained(&report, Format::Table, &[0]);
    let (before, section) = table.split_once("\nWorked arithmetic\n").unwrap();
    assert!(before.contains("\nMemory\n"));
    assert!(
        section.contains("  0.05 / 0.0214286 = 2.333 → round → 2 → x̂ = 0.0428571 (error -0.00714)"),
        "{section}"
    );
    let md = explained(&report, Format::Markdown, &[0]);
    assert_eq!(
        md.lines().filter_map(|l| l.strip_prefix("## ")).next_back(),
        Some("Worked arithmetic")
    );
    assert!(
        md.contains("```text\nblock 0 (rows 0..1, cols 0..4)"),
        "{md}"
    );
    for format in [Format::Json, Format::Csv] {
        let with = explained(&report, format, &[0, 1]);
        let without = export(
            &report,
            format,
            ExportOptions {
                values: false,
                ladder: false,
            },
        );
        assert_eq!(with, without, "{format}");
    }
    // Without explanations the table is what write_report writes.
    assert_eq!(
        explained(&report, Format::Table, &[]),
        export(
            &report,
            Format::Table,
            ExportOptions {
                values: false,
                ladder: false
            }
        )
    );
}
