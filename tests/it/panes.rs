//! The result panes (utilization, errors, ladder, detail) rendered into buffers: snapshots
//! of the seed lesson at fixed sizes, and checks that can fail: the collapsed word, the
//! active-column marker, scrolling, staying inside the area, and no panic at any size.

use ndarray::Array2;
use quantscope::core::config::Granularity;
use quantscope::core::view::SortKey;
use quantscope::core::{Matrix, Options, Report, analyse, analyse_with};
use quantscope::ui::Theme;
use quantscope::ui::detail::DetailPane;
use quantscope::ui::errors::ErrorsPane;
use quantscope::ui::ladder::LadderPane;
use quantscope::ui::utilization::UtilizationPane;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::Widget;

use crate::common::core as core_helpers;

use core_helpers::lesson_config as config;

// ----- fixtures -----

fn lesson_matrix() -> Matrix {
    let values = Array2::from_shape_vec(
        (2, 4),
        vec![0.05, -0.08, 0.12, -0.15, 2.21, -3.10, 1.77, -2.66],
    )
    .unwrap();
    Matrix::with_labels(values, vec![Some("quiet".into()), Some("loud".into())]).unwrap()
}

fn lesson(granularity: Granularity) -> Report {
    analyse(&lesson_matrix(), &config(granularity)).unwrap()
}

/// Deterministic values in [-1, 1) with a few larger ones (a 64-bit LCG).
fn random_matrix(rows: usize, cols: usize, labels: bool) -> Matrix {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let values = (0..rows * cols)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (state >> 40) as f32 / (1u64 << 24) as f32;
            if state.is_multiple_of(97) {
                8.0 * (u - 0.5)
            } else {
                2.0 * u - 1.0
            }
        })
        .collect();
    let values = Array2::from_shape_vec((rows, cols), values).unwrap();
    let labels = (0..rows)
        .map(|r| labels.then(|| format!("layer.{r}.weight")))
        .collect();
    Matrix::with_labels(values, labels).unwrap()
}

fn plain() -> Theme {
    Theme::new(false, false)
}

fn ascii() -> Theme {
    Theme::new(false, true)
}

// ----- rendering -----

/// Renders `widget` into a `width` x `height` buffer.
fn render(widget: impl Widget, width: u16, height: u16) -> Buffer {
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    widget.render(buf.area, &mut buf);
    buf
}

/// The buffer's text, one line per row, skipping the cells hidden by wide symbols.
fn text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut skip = 0;
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            if skip == 0 {
                out.push_str(cell.symbol());
            }
            skip = skip.max(unicode_cells(cell.symbol())).saturating_sub(1);
        }
        out.push('\n');
    }
    out
}

/// Terminal cells a symbol takes (ratatui's own measure).
fn unicode_cells(symbol: &str) -> usize {
    ratatui::text::Span::raw(symbol).width()
}

fn draw(widget: impl Widget, width: u16, height: u16) -> String {
    text(&render(widget, width, height))
}

struct Panes<'a> {
    report: Option<&'a Report>,
    matrix: Option<&'a Matrix>,
    selected: usize,
    stale: bool,
    theme: &'a Theme,
}

impl<'a> Panes<'a> {
    fn new(report: Option<&'a Report>, matrix: Option<&'a Matrix>, theme: &'a Theme) -> Self {
        Self {
            report,
            matrix,
            selected: 0,
            stale: false,
            theme,
        }
    }

    fn utilization(&self) -> UtilizationPane<'a> {
        UtilizationPane {
            report: self.report,
            selected: self.selected,
            order: &[],
            sort: SortKey::Index,
            collapsed_only: false,
            comparison: None,
            focused: false,
            stale: self.stale,
            theme: self.theme,
        }
    }

    fn errors(&self) -> ErrorsPane<'a> {
        ErrorsPane {
            report: self.report,
            metric: quantscope::app::ErrorMetric::Mae,
            compared: Granularity::Group(32),
            comparison: None,
            selected: self.selected,
            order: &[],
            collapsed_only: false,
            focused: false,
            stale: self.stale,
            method: None,
            theme: self.theme,
        }
    }

    fn ladder(&self) -> LadderPane<'a> {
        LadderPane {
            report: self.report,
            selected: self.selected,
            focused: false,
            stale: self.stale,
            pending: false,
            progress: None,
            pinned: None,
            method: None,
            theme: self.theme,
        }
    }

    fn detail(&self) -> DetailPane<'a> {
        DetailPane {
            report: self.report,
            matrix: self.matrix,
            channel: self.selected,
            focused: false,
            stale: self.stale,
            scroll: 0,
            theme: self.theme,
        }
    }

    /// Pane number `pane` (utilization, errors, ladder, detail) drawn into `area` of `buf`.
    fn render_into(&self, pane: usize, area: Rect, buf: &mut Buffer) {
        match pane {
            0 => (&self.utilization()).render(area, buf),
            1 => (&self.errors()).render(area, buf),
            2 => (&self.ladder()).render(area, buf),
            _ => (&self.detail()).render(area, buf),
        }
    }

    /// Every pane drawn at `width` x `height`.
    fn all(&self, width: u16, height: u16) -> [String; 4] {
        [
            draw(&self.utilization(), width, height),
            draw(&self.errors(), width, height),
            draw(&self.ladder(), width, height),
            draw(&self.detail(), width, height),
        ]
    }
}

// ----- snapshots -----

/// Every pane of the lesson under `granularity` at 40x7 and 80x12, in one snapshot each.
fn lesson_snapshots(granularity: Granularity, name: &str) {
    let report = lesson(granularity);
    let matrix = lesson_matrix();
    let theme = plain();
    let panes = Panes::new(Some(&report), Some(&matrix), &theme);
    let small = panes.all(40, 7);
    let large = panes.all(80, 12);
    let names = ["utilization", "errors", "ladder", "detail"];
    for ((pane, small), large) in names.into_iter().zip(small).zip(large) {
        insta::assert_snapshot!(
            format!("{pane}_{name}"),
            format!("40x7\n{small}\n80x12\n{large}")
        );
    }
}

#[test]
fn lesson_per_tensor() {
    lesson_snapshots(Granularity::Tensor, "tensor");
}

#[test]
fn lesson_per_channel() {
    lesson_snapshots(Granularity::Channel, "channel");
}

#[test]
fn ascii_utilization_and_detail() {
    let report = lesson(Granularity::Tensor);
    let matrix = lesson_matrix();
    let theme = ascii();
    let panes = Panes::new(Some(&report), Some(&matrix), &theme);
    insta::assert_snapshot!("ascii_utilization", draw(&panes.utilization(), 40, 7));
    insta::assert_snapshot!("ascii_detail", draw(&panes.detail(), 80, 12));
}

#[test]
fn detail_with_plot() {
    let report = lesson(Granularity::Tensor);
    let matrix = lesson_matrix();
    for (name, theme) in [("unicode", plain()), ("ascii", ascii())] {
        let mut panes = Panes::new(Some(&report), Some(&matrix), &theme);
        panes.selected = 1;
        insta::assert_snapshot!(format!("detail_plot_{name}"), draw(&panes.detail(), 80, 20));
        // Tall enough for the 15 levels' grid: the quiet row collapses onto the middle level.
        panes.selected = 0;
        insta::assert_snapshot!(format!("detail_grid_{name}"), draw(&panes.detail(), 80, 40));
    }
}

#[test]
fn no_report() {
    let theme = plain();
    let panes = Panes::new(None, None, &theme);
    insta::assert_snapshot!("no_report", panes.all(40, 7).join("\n"));
}

// ----- checks -----

#[test]
fn collapsed_word_follows_the_granularity() {
    let theme = plain();
    let tensor = lesson(Granularity::Tensor);
    let channel = lesson(Granularity::Channel);
    let line_of = |report: &Report, label: &str| {
        let screen = draw(&Panes::new(Some(report), None, &theme).utilization(), 60, 6);
        screen
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line_of(&tensor, "quiet").contains("✗ COLLAPSED"),
        "{}",
        line_of(&tensor, "quiet")
    );
    assert!(!line_of(&tensor, "loud").contains("COLLAPSED"));
    assert!(!line_of(&channel, "quiet").contains("COLLAPSED"));
    let summary = draw(
        &Panes::new(Some(&tensor), None, &theme).utilization(),
        60,
        6,
    );
    assert!(summary.contains("1 of 2 collapsed"), "{summary}");
}

#[test]
fn active_marker_moves_with_the_granularity() {
    let theme = plain();
    for (granularity, marked, unmarked) in [
        (Granularity::Tensor, "● tensor", "● channel"),
        (Granularity::Channel, "● channel", "● tensor"),
    ] {
        let report = lesson(granularity);
        let panes = Panes::new(Some(&report), None, &theme);
        for width in [40, 90] {
            let screen = draw(&panes.errors(), width, 8);
            let heading = screen.lines().nth(1).unwrap();
            assert!(
                heading.contains(marked),
                "{granularity} at {width}: {heading}"
            );
            assert!(
                !heading.contains(unmarked),
                "{granularity} at {width}: {heading}"
            );
        }
        let ladder = draw(&panes.ladder(), 80, 8);
        let active = ladder.lines().find(|l| l.contains('●')).unwrap();
        assert!(active.contains(&granularity.to_string()), "{active}");
    }
}

#[test]
fn missing_rung_shows_a_dash_and_a_note() {
    let theme = plain();
    let report = lesson(Granularity::Tensor);
    let screen = draw(&Panes::new(Some(&report), None, &theme).errors(), 40, 7);
    assert!(screen.contains("group:32"), "{screen}");
    assert!(screen.lines().nth(2).unwrap().contains('—'), "{screen}");
    assert!(screen.contains("no group:32 rung"), "{screen}");
}

#[test]
fn ladder_arithmetic_describes_the_selected_rung() {
    let theme = plain();
    let report = lesson(Granularity::Tensor);
    let mut panes = Panes::new(Some(&report), None, &theme);
    panes.selected = 1;
    let screen = draw(&panes.ladder(), 100, 8);
    let m = report.rung(Granularity::Channel).unwrap().memory;
    let want = format!(
        "channel: bits/weight = ({} × {} + {} × {}) / {} = {:.3}",
        m.elements, m.bits, m.blocks, m.metadata_bits_per_block, m.elements, m.bits_per_weight
    );
    assert!(screen.contains(&want), "{screen}");
    // With no line to spare it moves into the border.
    let short = draw(&panes.ladder(), 100, 5);
    assert!(
        short.lines().last().unwrap().contains("bits/weight"),
        "{short}"
    );
}

#[test]
fn ladder_pending_without_rungs_says_so() {
    let theme = plain();
    let report = analyse_with(
        &lesson_matrix(),
        &config(Granularity::Tensor),
        Options::ONE_CONFIG,
    )
    .unwrap();
    let mut pane = Panes::new(Some(&report), None, &theme).ladder();
    pane.pending = true;
    assert!(draw(&pane, 40, 5).contains("ladder: computing…"));
    // With its progress once the first slice of rows is done, in the title too.
    pane.progress = Some((1536, 4096));
    let screen = draw(&pane, 40, 5);
    assert!(screen.contains("ladder: computing 37%…"), "{screen}");
    assert!(screen.contains("Ladder · computing 37%…"), "{screen}");
    pane.progress = None;
    pane.pending = false;
    assert!(draw(&pane, 40, 5).contains("ladder: not computed"));
    // And the errors pane shows dashes for every column.
    let errors = draw(&Panes::new(Some(&report), None, &theme).errors(), 40, 7);
    assert!(errors.contains("ladder not computed"), "{errors}");
}

#[test]
fn long_lists_scroll_to_the_selected_line() {
    let theme = plain();
    let matrix = random_matrix(4096, 8, false);
    let report = analyse(&matrix, &config(Granularity::Channel)).unwrap();
    for selected in [0, 1, 2047, 4000, 4095, 10_000] {
        let mut panes = Panes::new(Some(&report), Some(&matrix), &theme);
        panes.selected = selected;
        let want = format!("▶ ch {}", selected.min(4095));
        for screen in [
            draw(&panes.utilization(), 50, 9),
            draw(&panes.errors(), 50, 9),
        ] {
            let line = screen.lines().find(|l| l.contains('▶')).unwrap_or_default();
            assert!(
                line.contains(&format!("{want} ")),
                "selected {selected}: {screen}"
            );
        }
    }
}

#[test]
fn stale_numbers_are_dimmed() {
    let theme = plain();
    let report = lesson(Granularity::Tensor);
    let mut panes = Panes::new(Some(&report), None, &theme);
    let fresh = render(&panes.utilization(), 60, 6);
    panes.stale = true;
    let stale = render(&panes.utilization(), 60, 6);
    let counts = |buf: &Buffer| {
        (0..buf.area.width)
            .find(|&x| buf[(x, 1)].symbol() == "/")
            .map(|x| buf[(x, 1)].modifier)
            .unwrap()
    };
    assert!(!counts(&fresh).contains(Modifier::DIM));
    assert!(counts(&stale).contains(Modifier::DIM));
    assert!(text(&stale).lines().next().unwrap().contains("stale"));
}

#[test]
fn labels_are_cut_to_the_area() {
    let long = "a.very.long.label.that.goes.on.and.on.and.on.forever.and.ever.weight";
    let values = Array2::from_shape_vec((3, 2), vec![0.5, -1.0, 0.25, 0.75, 2.0, -2.0]).unwrap();
    let labels = vec![
        Some(long.to_string()),
        Some("😀🚀 émoji 漢字 label 😀🚀😀🚀😀🚀".to_string()),
        None,
    ];
    let matrix = Matrix::with_labels(values, labels).unwrap();
    let report = analyse(&matrix, &config(Granularity::Tensor)).unwrap();
    for theme in [plain(), ascii()] {
        let panes = Panes::new(Some(&report), Some(&matrix), &theme);
        let inside = Rect::new(2, 1, 36, 8);
        for pane in 0..4 {
            let mut buf = Buffer::empty(Rect::new(0, 0, 40, 10));
            panes.render_into(pane, inside, &mut buf);
            for y in 0..10 {
                for x in 0..40 {
                    if !inside.contains((x, y).into()) {
                        assert_eq!(
                            buf[(x, y)].symbol(),
                            " ",
                            "drew outside at {x},{y}:\n{}",
                            text(&buf)
                        );
                    }
                }
            }
            let screen = text(&buf);
            if theme.glyphs.ascii {
                assert!(screen.is_ascii(), "{screen}");
            }
        }
        let screen = draw(&panes.utilization(), 36, 6);
        assert!(
            screen.contains(if theme.glyphs.ascii { '~' } else { '…' }),
            "{screen}"
        );
    }
}

#[test]
fn ascii_mode_draws_ascii_only() {
    let theme = ascii();
    let report = lesson(Granularity::Tensor);
    let matrix = lesson_matrix();
    let mut panes = Panes::new(Some(&report), Some(&matrix), &theme);
    panes.stale = true;
    panes.selected = 1;
    for (w, h) in [(40, 7), (80, 12), (80, 24), (120, 30)] {
        for screen in panes.all(w, h) {
            assert!(screen.is_ascii(), "{w}x{h}:\n{screen}");
        }
    }
}

#[test]
fn tiny_and_huge_areas_do_not_panic() {
    let matrix = lesson_matrix();
    let one = Matrix::from_rows(&[&[0.5]]).unwrap();
    let wide = random_matrix(3, 1000, true);
    let reports = [
        (lesson(Granularity::Tensor), matrix.clone()),
        (lesson(Granularity::Channel), matrix),
        (
            analyse(&one, &config(Granularity::Tensor)).unwrap(),
            one.clone(),
        ),
        (analyse(&one, &config(Granularity::Group(1))).unwrap(), one),
        (
            analyse(&wide, &config(Granularity::Group(32))).unwrap(),
            wide,
        ),
    ];
    for theme in [plain(), ascii(), Theme::new(true, false)] {
        for (report, matrix) in &reports {
            for selected in [0, 1, 99] {
                let mut panes = Panes::new(Some(report), Some(matrix), &theme);
                panes.selected = selected;
                panes.stale = selected == 1;
                for (w, h) in [
                    (0, 0),
                    (1, 1),
                    (2, 2),
                    (3, 3),
                    (5, 3),
                    (0, 10),
                    (10, 0),
                    (12, 4),
                    (30, 13),
                    (80, 24),
                ] {
                    panes.all(w, h);
                }
            }
        }
    }
}

#[test]
fn big_matrix_renders_in_a_big_area() {
    let theme = plain();
    let matrix = random_matrix(4096, 64, true);
    let report = analyse(&matrix, &config(Granularity::Group(32))).unwrap();
    assert!(report.rung(Granularity::Group(32)).is_some());
    let mut panes = Panes::new(Some(&report), Some(&matrix), &theme);
    panes.selected = 3000;
    let [utilization, errors, ladder, detail] = panes.all(200, 60);
    assert!(utilization.contains("▶ layer.3000.weight"), "{utilization}");
    assert!(errors.contains("● group:32"), "{errors}");
    assert!(ladder.contains("group:32"), "{ladder}");
    assert!(detail.contains("┈ grid: 15 levels"), "{detail}");
    // On a short pane the 15 levels are too dense for lines.
    let short = draw(&panes.detail(), 200, 20);
    assert!(short.contains("no grid: 15 levels"), "{short}");
}

#[test]
fn huge_report_utilization_renders_the_window_only() {
    let theme = plain();
    let matrix = random_matrix(4096, 4096, false);
    let report = analyse_with(&matrix, &config(Granularity::Channel), Options::ONE_CONFIG).unwrap();
    let mut panes = Panes::new(Some(&report), Some(&matrix), &theme);
    panes.selected = 4095;
    let screen = draw(&panes.utilization(), 120, 40);
    assert!(screen.contains("▶ ch 4095"), "{screen}");
    // The detail pane subsamples the 4096 columns.
    let detail = draw(&panes.detail(), 120, 40);
    assert!(detail.contains("1 column in"), "{detail}");
}

#[test]
fn the_stored_view_draws_ascii_only_and_fits_any_area() {
    use quantscope::app::StoredView;
    use quantscope::core::stored::RowOrder;
    use quantscope::ui::stored::StoredOverlay;
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/gguf/types.gguf");
    let g = quantscope::io::gguf::Gguf::open(&path).unwrap();
    for name in ["q4_k", "q6_k", "q8_0", "mxfp4"] {
        let stored = quantscope::io::stored::inspect(&g, g.info(name).unwrap()).unwrap();
        let view = StoredView::new(&stored, RowOrder::default());
        for theme in [ascii(), plain()] {
            let overlay = StoredOverlay {
                stored: &stored,
                view: &view,
                keys: ["Esc", "n", "f"],
                theme: &theme,
            };
            for (w, h) in [
                (0, 0),
                (1, 1),
                (20, 5),
                (40, 10),
                (80, 24),
                (120, 40),
                (300, 8),
            ] {
                let screen = draw(&overlay, w, h);
                if theme.glyphs.ascii {
                    assert!(screen.is_ascii(), "{name} {w}x{h}:\n{screen}");
                }
                if (w, h) == (80, 24) {
                    assert!(screen.contains("as stored"), "{name}:\n{screen}");
                }
            }
        }
    }
}
