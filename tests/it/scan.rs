//! `quantscope scan` and the safetensors flags of `report`: the scan's four formats on a small
//! generated checkpoint, its order and footer, and the real binary.

use half::f16;
use quantscope::core::config::Granularity;
use quantscope::core::{Config, Options, PresetOptions, analyse_with, preset};
use quantscope::io::export::Format;
use quantscope::io::load_tensor;
use quantscope::scan::{Scan, ScanOptions, SkipReason, scan, scan_with, write_scan};

use crate::common::files;
use crate::common::run;

use files::{TempFile, f32_bytes as f32s, safetensors_bytes, temp_file as temp};
use run::{assert_refused, quantscope, text};

/// Three matrices (one where a quiet row collapses per tensor, one of even rows, an f16
/// conv weight) and three tensors the scan skips (a bias, integer ids, a scalar).
fn checkpoint() -> TempFile {
    let conv: Vec<u8> = [0.5_f32, -0.25, 0.75, -1.0, 0.01, -0.02, 0.03, -0.04]
        .iter()
        .flat_map(|&x| f16::from_f32(x).to_le_bytes())
        .collect();
    temp(
        "checkpoint.safetensors",
        &safetensors_bytes(&[
            ("bias", "F32", &[4], f32s(&[0.1, 0.2, 0.3, 0.4])),
            (
                "even.weight",
                "F32",
                &[2, 4],
                f32s(&[1.0, -0.5, 0.25, -0.75, 0.9, -0.6, 0.3, -0.8]),
            ),
            ("conv.weight", "F16", &[2, 1, 2, 2], conv),
            ("ids", "I64", &[2, 2], vec![0; 32]),
            (
                "quiet_loud.weight",
                "F32",
                &[2, 4],
                f32s(&[0.05, -0.08, 0.12, -0.15, 2.21, -3.10, 1.77, -2.66]),
            ),
            ("scale", "F32", &[], f32s(&[2.0])),
        ]),
    )
}

fn lesson() -> Config {
    preset("lesson", PresetOptions::default()).unwrap()
}

fn render(scan: &Scan, format: Format) -> String {
    let mut out = Vec::new();
    write_scan(&mut out, scan, format).unwrap();
    String::from_utf8(out)
        .unwrap()
        .replace(&scan.file, "[file]")
}

#[test]
fn rows_are_sorted_by_gain_and_skipped_tensors_counted() {
    let path = checkpoint();
    let s = scan(&path, &lesson()).unwrap();
    let names: Vec<&str> = s.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["quiet_loud.weight", "conv.weight", "even.weight"]);
    assert!(s.rows.windows(2).all(|w| w[0].gain_db >= w[1].gain_db));
    let skipped: Vec<(&str, SkipReason)> = s
        .skipped
        .iter()
        .map(|k| (k.name.as_str(), k.reason))
        .collect();
    assert_eq!(
        skipped,
        [
            ("bias", SkipReason::OneDimensional),
            ("ids", SkipReason::NotFloating),
            ("scale", SkipReason::OneDimensional),
        ]
    );
    assert!(s.failed.is_empty());
    let top = &s.rows[0];
    assert_eq!(top.tensor.collapsed_channels, 1, "the quiet row collapses");
    assert_eq!(top.channel.collapsed_channels, 0);
    assert_eq!(s.rows[1].matrix, (2, 4), "the conv weight is flattened");
    assert_eq!(s.rows[1].shape, [2, 1, 2, 2]);
    // The gain is the SQNR difference (the signal is the same on both sides).
    for r in &s.rows {
        let diff = r.channel.metrics.sqnr_db.unwrap() - r.tensor.metrics.sqnr_db.unwrap();
        assert!(
            (r.gain_db - diff).abs() < 1e-9,
            "{}: {} vs {diff}",
            r.name,
            r.gain_db
        );
    }
    // One job at a time gives the same result.
    let one = scan_with(
        &path,
        &lesson(),
        ScanOptions {
            jobs: Some(1),
            ..ScanOptions::default()
        },
        &quantscope::scan::NoProgress,
    )
    .unwrap();
    assert_eq!(one, s);
}

#[test]
fn every_number_is_the_cores() {
    let path = checkpoint();
    let config = preset("q8_0", PresetOptions::default()).unwrap();
    let s = scan(&path, &config).unwrap();
    let row = s.rows.iter().find(|r| r.name == "even.weight").unwrap();
    let m = load_tensor(&path, "even.weight").unwrap();
    let at = |granularity| {
        analyse_with(
            &m,
            &Config {
                granularity,
                ..config
            },
            Options::ONE_CONFIG,
        )
        .unwrap()
    };
    let t = at(Granularity::Tensor);
    let c = at(Granularity::Channel);
    assert_eq!(row.tensor.metrics, t.overall);
    assert_eq!(row.channel.metrics, c.overall);
    assert_eq!(row.tensor.collapsed_channels, t.collapsed_channels);
    assert_eq!(
        row.bits_per_weight,
        at(config.granularity).memory.bits_per_weight,
        "bits/w of q8_0's own groups"
    );
}

#[test]
fn table_snapshot() {
    let s = scan(&checkpoint(), &lesson()).unwrap();
    insta::assert_snapshot!("scan_table", render(&s, Format::Table));
}

#[test]
fn markdown_has_the_table_and_the_footer() {
    let s = scan(&checkpoint(), &lesson()).unwrap();
    let md = render(&s, Format::Markdown);
    assert!(
        md.starts_with("quantscope scan: \\[file\\]") || md.starts_with("quantscope scan: [file]"),
        "{md}"
    );
    assert!(md.contains("| tensor | dtype | shape | gain dB |"), "{md}");
    assert!(md.contains("|---|---|---|--:|"), "{md}");
    assert!(
        md.contains("| quiet\\_loud.weight | F32 | \\[2, 4\\] |"),
        "{md}"
    );
    assert!(
        md.trim_end()
            .ends_with("skipped 3 tensors: 1-D or not floating"),
        "{md}"
    );
    let table_rows = md.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(table_rows, 1 + 3, "header and one row per tensor");
}

#[test]
fn json_parses_and_holds_every_row() {
    let s = scan(&checkpoint(), &lesson()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&render(&s, Format::Json)).unwrap();
    let tensors = v["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 3);
    assert_eq!(tensors[0]["name"], "quiet_loud.weight");
    assert_eq!(tensors[0]["shape"], serde_json::json!([2, 4]));
    assert_eq!(tensors[1]["matrix"], serde_json::json!([2, 4]));
    assert_eq!(tensors[0]["tensor"]["collapsed_channels"], 1);
    assert_eq!(tensors[0]["tensor"]["bits_per_weight"], 8.0);
    assert_eq!(tensors[0]["channel"]["bits_per_weight"], 12.0);
    assert_eq!(
        tensors[0]["gain_db"].as_f64().unwrap(),
        s.rows[0].gain_db,
        "full precision"
    );
    assert_eq!(v["config"]["granularity"], "tensor");
    assert_eq!(
        v["config"]["summary"],
        "int4 symmetric narrow [-7, 7], tensor"
    );
    assert_eq!(v["compared"], serde_json::json!(["tensor", "channel"]));
    let skipped: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        skipped,
        ["one-dimensional", "not-floating", "one-dimensional"]
    );
    assert_eq!(v["failed"], serde_json::json!([]));
}

#[test]
fn csv_has_a_header_and_one_line_per_tensor() {
    let s = scan(&checkpoint(), &lesson()).unwrap();
    let csv = render(&s, Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 3);
    let width = lines[0].split(',').count();
    assert_eq!(width, 19);
    assert!(lines.iter().all(|l| l.split(',').count() == width), "{csv}");
    assert!(
        lines[1].starts_with("quiet_loud.weight,F32,2x4,2,4,"),
        "{csv}"
    );
    assert!(
        lines[2].starts_with("conv.weight,F16,2x1x2x2,2,4,"),
        "{csv}"
    );
}

#[test]
fn tensors_that_fail_are_listed_and_the_rest_still_scanned() {
    let path = temp(
        "bad-values.safetensors",
        &safetensors_bytes(&[
            ("good", "F32", &[1, 2], f32s(&[1.0, -1.0])),
            ("nan", "F32", &[1, 2], f32s(&[1.0, f32::NAN])),
        ]),
    );
    let s = scan(&path, &lesson()).unwrap();
    assert_eq!(s.rows.len(), 1);
    assert_eq!(s.failed.len(), 1);
    assert_eq!(s.failed[0].name, "nan");
    assert!(
        s.failed[0].error.contains("row 0, column 1"),
        "{}",
        s.failed[0].error
    );
    let table = render(&s, Format::Table);
    assert!(table.contains("  failed 1 tensor:\n"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("nan ") && l.contains("row 0, column 1")),
        "{table}"
    );
}

#[test]
fn the_scan_command_writes_each_format_and_nothing_to_stderr_off_a_terminal() {
    let path = checkpoint();
    let file = path.to_str().unwrap();
    for format in ["table", "json", "csv", "markdown"] {
        let o = quantscope(&["scan", file, "--format", format, "--jobs", "2"]);
        assert!(o.status.success(), "{format}: {}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "{format}: {}", text(&o.stderr));
        assert!(!o.stdout.is_empty());
    }
    let o = quantscope(&["scan", file, "--preset", "ort-int8", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["bits"], 8);
    assert_eq!(v["tensors"].as_array().unwrap().len(), 3);
}

#[test]
fn the_scan_command_refuses_bad_input_with_exit_2_and_nothing_on_stdout() {
    let npy = temp("m.npy", b"\x93NUMPY");
    let junk = temp("junk.safetensors", b"not a safetensors file at all");
    let path = checkpoint();
    for args in [
        vec!["scan", npy.to_str().unwrap()],
        vec!["scan", junk.to_str().unwrap()],
        vec!["scan", "/nonexistent/model.safetensors"],
        vec!["scan", path.to_str().unwrap(), "--bits", "17"],
        vec!["scan", path.to_str().unwrap(), "--jobs", "0"],
    ] {
        assert_refused(&args);
    }
}

#[test]
fn report_lists_tensors_and_loads_one_by_name() {
    let path = checkpoint();
    let file = path.to_str().unwrap();
    let o = quantscope(&["report", file, "--list-tensors"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["name", "dtype", "shape", "bytes"]
    );
    assert!(lines[2].starts_with("conv.weight"), "{out}");
    assert!(
        lines[2].contains("F16") && lines[2].contains("[2, 1, 2, 2]"),
        "{out}"
    );
    assert!(lines[2].trim_end().ends_with(" 16"), "{out}");
    assert_eq!(lines.last(), Some(&"6 tensors, 132 bytes"), "{out}");

    let o = quantscope(&[
        "report",
        file,
        "--tensor",
        "conv.weight",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["shape"], serde_json::json!([2, 4]));

    // Several floating tensors and no name: the message says how to choose.
    let o = quantscope(&["report", file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("--tensor NAME"),
        "{}",
        text(&o.stderr)
    );

    let txt = temp("m.txt", b"1 2\n3 4\n");
    for args in [
        vec!["report", file, "--tensor", "ids"],
        vec!["report", file, "--tensor", "nope"],
        vec!["report", txt.to_str().unwrap(), "--tensor", "x"],
        vec!["report", txt.to_str().unwrap(), "--list-tensors"],
        vec!["report", "--list-tensors"],
        vec!["report", "--tensor", "x"],
    ] {
        assert_refused(&args);
    }
}

#[test]
fn scan_help_snapshot() {
    let o = quantscope(&["scan", "--help"]);
    assert!(o.status.success());
    insta::assert_snapshot!("scan_help", text(&o.stdout));
}

#[test]
fn the_tensor_list_comes_in_every_format() {
    let path = checkpoint();
    let file = path.to_str().unwrap();
    let run = |format: &str| {
        let o = quantscope(&["report", file, "--list-tensors", "--format", format]);
        assert!(o.status.success(), "{format}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let tensors = json["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 6);
    let conv = tensors.iter().find(|t| t["name"] == "conv.weight").unwrap();
    assert_eq!(conv["dtype"], "F16");
    assert_eq!(conv["shape"], serde_json::json!([2, 1, 2, 2]));
    assert_eq!(conv["bytes"], 16);
    assert_eq!(conv["loadable"], true);
    assert_eq!(json["total_bytes"], 132);
    assert!(tensors.iter().any(|t| t["loadable"] == false));

    let csv = run("csv");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("name,dtype,shape,bytes,loadable,kind"));
    assert!(
        csv.lines()
            .any(|l| l == "conv.weight,F16,2x1x2x2,16,true,float"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 7, "{csv}");

    let md = run("markdown");
    assert!(
        md.starts_with("| name | dtype | shape | bytes |\n|---|---|---|---:|\n"),
        "{md}"
    );
    assert!(
        md.contains(r"| conv.weight | F16 | \[2, 1, 2, 2\] | 16 |"),
        "{md}"
    );
    assert!(md.trim_end().ends_with("6 tensors, 132 bytes"), "{md}");
}

/// Rows of 256 whose spreads differ by decades: every format can take them.
fn wide_checkpoint() -> (TempFile, Vec<f32>) {
    let values: Vec<f32> = (0..4 * 256)
        .map(|i| {
            let (r, c) = (i / 256, i % 256);
            10f32.powi(r - 2) * (((c * 37 + r * 11) % 29) as f32 - 14.0) / 9.0
        })
        .collect();
    let file = temp(
        "wide.safetensors",
        &safetensors_bytes(&[("w", "F32", &[4, 256], f32s(&values))]),
    );
    (file, values)
}

#[test]
fn a_budget_picks_each_tensors_most_accurate_preset_or_format_within_it() {
    use quantscope::core::Matrix;
    use quantscope::core::format_ladder::{Selection, format_ladder};
    let (path, values) = wide_checkpoint();
    let budget = |b: f64| {
        scan_with(
            &path,
            &lesson(),
            ScanOptions {
                budget: Some(b),
                ..ScanOptions::default()
            },
            &quantscope::scan::NoProgress,
        )
        .unwrap()
    };
    let s = budget(4.5);
    let best = s.rows[0].best.clone().expect("something fits 4.5 bits");
    let rows: Vec<&[f32]> = values.chunks(256).collect();
    let ladder = format_ladder(&Matrix::from_rows(&rows).unwrap(), &Selection::all(), None);
    let want = ladder.best_within(4.5).unwrap();
    assert_eq!(best.name, want.name);
    assert!(best.bits_per_weight <= 4.5);
    assert_eq!(best.metrics, want.measured().unwrap().overall);
    // Nothing is that small.
    assert_eq!(budget(1.0).rows[0].best, None);
    let table = render(&s, Format::Table);
    assert!(table.contains("best <= 4.5"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("w ") && l.contains(&best.name)),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&render(&s, Format::Json)).unwrap();
    assert_eq!(json["budget"], 4.5);
    assert_eq!(json["tensors"][0]["best"]["name"], best.name.as_str());
    let csv = render(&s, Format::Csv);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "best_name").unwrap();
    assert_eq!(
        csv.lines().nth(1).unwrap().split(',').nth(at),
        Some(best.name.as_str())
    );
    // Without a budget, no such column.
    assert!(!render(&scan(&path, &lesson()).unwrap(), Format::Csv).contains("best_name"));
}

#[test]
fn a_budget_that_is_not_a_positive_number_is_refused() {
    let (path, _) = wide_checkpoint();
    let file = path.to_str().unwrap();
    for bad in ["0", "-1", "four", "inf"] {
        let o = quantscope(&["scan", file, "--budget", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            text(&o.stderr).contains("not a budget"),
            "{bad}: {}",
            text(&o.stderr)
        );
    }
}
