//! The HTML and PDF reports without a browser or a PDF reader: what they contain, that the
//! HTML loads nothing and runs nothing, the comparison section, and the size bound on a
//! matrix of thousands of channels. tests/it/render.rs opens them in Chromium and poppler.

use quantscope::core::compare::compare;
use quantscope::core::config::{Config, Granularity};
use quantscope::core::figures::{WORST, figures};
use quantscope::core::{Matrix, Report, analyse};
use quantscope::io::export::{
    Charts, Document, ExportOptions, Extras, Paper, Versus, write_document,
};

fn quiet_loud() -> Matrix {
    Matrix::from_rows(&[&[0.05, -0.08, 0.12, -0.15], &[2.21, -3.10, 1.77, -2.66]]).unwrap()
}

/// `rows` channels of 64 values, every 97th one quiet.
fn many(rows: usize) -> Matrix {
    let data: Vec<Vec<f32>> = (0..rows)
        .map(|r| {
            let quiet = if r % 97 == 0 { 0.01 } else { 1.0 };
            (0..64)
                .map(|c| (((r * 31 + c * 17) % 29) as f32 / 14.0 - 1.0) * quiet)
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

fn write(
    matrix: &Matrix,
    report: &Report,
    format: Document,
    versus: Option<Versus<'_>>,
) -> Vec<u8> {
    let f = figures(matrix, report).unwrap();
    let mut out = Vec::new();
    write_document(
        &mut out,
        report,
        format,
        &ExportOptions::default(),
        &Extras::default(),
        &Charts {
            figures: Some(&f),
            versus,
            paper: Paper::A4,
        },
    )
    .unwrap();
    out
}

#[test]
fn html_has_the_table_sections_and_a_chart_with_words_for_each() {
    let m = quiet_loud();
    let r = analyse(&m, &Config::default()).unwrap();
    let html = String::from_utf8(write(&m, &r, Document::Html, None)).unwrap();
    for section in ["Blocks", "Channels", "Overall", "Memory", "Ladder"] {
        assert!(html.contains(&format!("<h2>{section}</h2>")), "{section}");
    }
    let figures = html.matches("<figure").count();
    // Two value plots, utilization, error per granularity, bits per weight against RMSE.
    assert_eq!(figures, 5);
    assert_eq!(html.matches("<svg").count(), figures);
    assert_eq!(html.matches("<figcaption>").count(), figures);
    assert!(
        html.contains("0.05 -&gt; 0, -0.08 -&gt; 0"),
        "the quiet row's values and codes"
    );
    assert!(html.contains("COLLAPSED"));
    assert!(
        html.contains("<pre>bits/weight = (elements x bits + blocks x metadata bits) / elements\n"),
        "a formula keeps its lines"
    );
    assert!(!html.contains("<script"), "no script");
    let external: Vec<&str> = html
        .match_indices("http")
        .map(|(i, _)| &html[i..(i + 40).min(html.len())])
        .filter(|s| !s.starts_with("http://www.w3.org/2000/svg") && !s.starts_with("http-equiv"))
        .collect();
    assert!(external.is_empty(), "nothing to load: {external:?}");
    assert!(html.contains("default-src 'none'"));
}

#[test]
fn a_comparison_ends_both_formats() {
    let m = quiet_loud();
    let a = analyse(&m, &Config::default()).unwrap();
    let b = analyse(
        &m,
        &Config {
            granularity: Granularity::Channel,
            ..Config::default()
        },
    )
    .unwrap();
    let c = compare(&a, &b).unwrap();
    let versus = Versus {
        a: &a,
        comparison: &c,
    };
    let html = String::from_utf8(write(&m, &b, Document::Html, Some(versus))).unwrap();
    // Kept under the target directory for a person to open.
    std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("comparison.html"),
        &html,
    )
    .unwrap();
    let section = &html[html
        .find("<h2>Comparison</h2>")
        .expect("a Comparison section")..];
    assert!(
        section.contains("granularity: tensor -&gt; channel"),
        "{section}"
    );
    // One section, the table format's, with the chart before its per-channel table.
    assert_eq!(html.matches("<h2>Comparison</h2>").count(), 1);
    let chart = section
        .find("RMSE per channel, A against B")
        .expect("the chart");
    let table = section.find("RMSE A</th>").expect("the per-channel table");
    assert!(chart < table, "{section}");
    // A collapses the quiet row, B does not.
    assert!(
        section.contains("<td class=\"r\">0.107</td><td class=\"r\">0.006268</td><td class=\"r\">-0.1007</td><td>COLLAPSED / -</td>"),
        "{section}"
    );
    let without = String::from_utf8(write(&m, &b, Document::Html, None)).unwrap();
    assert!(!without.contains("Comparison"));
    let pdf = write(&m, &b, Document::Pdf, Some(versus));
    assert!(pdf.starts_with(b"%PDF-"));
    assert!(pdf.len() > write(&m, &b, Document::Pdf, None).len());
}

#[test]
fn thousands_of_channels_are_summarised_within_the_bound() {
    let m = many(4096);
    let r = analyse(&m, &Config::default()).unwrap();
    let html = String::from_utf8(write(&m, &r, Document::Html, None)).unwrap();
    assert!(html.contains(&format!("The {WORST} worst of 4096 channels")));
    assert!(html.contains("Utilization of the code range, all channels"));
    assert!(html.contains("distribution"));
    // The Channels table lists the worst, not all 4096.
    let channels =
        &html[html.find("<h2>Channels</h2>").unwrap()..html.find("<h2>Overall</h2>").unwrap()];
    assert!(channels.matches("COLLAPSED").count() <= WORST + 1);
    assert!(html.len() < 400_000, "HTML of {} bytes", html.len());
    let pdf = write(&m, &r, Document::Pdf, None);
    assert!(pdf.len() < 400_000, "PDF of {} bytes", pdf.len());
}
