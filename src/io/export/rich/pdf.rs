//! A vector PDF of the report through krilla: text in an embedded monospace font (so it is
//! selectable and needs no system font), tables set as the table format sets them, and each
//! chart's SVG drawn through usvg and krilla-svg with its text kept as text.
//!
//! Layout is a single column flowed onto A4 or Letter pages: each table is set at the
//! largest size up to the body size at which its widest line fits; a chart is scaled to the
//! text width and moved to the next page rather than split; every page has its number.

use std::io;

use krilla::Document as Pdf;
use krilla::geom::{PathBuilder, Point, Rect, Size, Transform};
use krilla::metadata::Metadata;
use krilla::page::PageSettings;
use krilla::surface::Surface;
use krilla::text::{Font, TextDirection};
use krilla_svg::{SurfaceExt, SvgSettings};

use crate::io::export::doc::{Doc, Figure, Part};
use crate::io::export::rich::Paper;
use crate::io::export::svg::FONT_FAMILY;

/// DejaVu Sans Mono, the font of every PDF report (licence: assets/fonts/LICENSE-DejaVu.txt).
pub const FONT: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSansMono.ttf");

/// Page margin, points.
const MARGIN: f32 = 42.0;
/// The font's advance width in ems (every glyph: 1233 of 2048 units).
const ADVANCE: f32 = 1233.0 / 2048.0;
/// Body text size, points.
const BODY: f32 = 8.5;
/// Caption size.
const CAPTION: f32 = 7.5;
/// Smallest size a table is set at; a wider table runs past the margin.
const SMALLEST: f32 = 4.0;
/// Line height as a multiple of the size.
const LEADING: f32 = 1.3;
/// A figure's table is set under it when it has at most this many rows (its caption gives
/// the key numbers of a longer one).
const PRINTED_ROWS: usize = 16;

/// One thing on a page.
enum Item {
    /// A line of text at a size.
    Line(String, f32),
    /// A horizontal rule.
    Rule,
    /// Vertical space.
    Space(f32),
    /// A chart, scaled to a width and height.
    Chart(Box<usvg::Tree>, f32, f32),
    /// Keeps the next `f32` points on the same page (a title with what follows it).
    Keep(f32),
}

impl Item {
    fn height(&self) -> f32 {
        match self {
            Self::Line(_, size) => size * LEADING,
            Self::Rule => 4.0,
            Self::Space(h) | Self::Keep(h) | Self::Chart(_, _, h) => *h,
        }
    }
}

/// The PDF of `doc` on `paper`.
pub(super) fn render(doc: &Doc, paper: Paper) -> io::Result<Vec<u8>> {
    let font = Font::new(krilla::Data::from(FONT), 0)
        .ok_or_else(|| io::Error::other("the embedded font could not be read"))?;
    let mut svg_options = usvg::Options {
        font_family: FONT_FAMILY.to_string(),
        ..usvg::Options::default()
    };
    {
        let db = svg_options.fontdb_mut();
        db.load_font_data(FONT.to_vec());
        db.set_monospace_family(FONT_FAMILY);
        db.set_sans_serif_family(FONT_FAMILY);
    }
    let (page_w, page_h) = paper.points();
    let width = page_w - 2.0 * MARGIN;
    let items = layout(doc, width, &svg_options)?;
    let pages = paginate(items, page_h - 2.0 * MARGIN - 14.0);
    let mut pdf = Pdf::new();
    pdf.set_metadata(
        Metadata::new()
            .title(doc.header.clone())
            .creator("quantscope".to_string()),
    );
    let settings =
        PageSettings::from_wh(page_w, page_h).ok_or_else(|| io::Error::other("bad page size"))?;
    let count = pages.len();
    for (n, page_items) in pages.into_iter().enumerate() {
        let mut page = pdf.start_page_with(settings.clone());
        let mut surface = page.surface();
        let mut y = MARGIN;
        for item in &page_items {
            draw(&mut surface, &font, item, y, width);
            y += item.height();
        }
        let footer = format!("page {} of {count}", n + 1);
        let x = page_w - MARGIN - footer.chars().count() as f32 * CAPTION * ADVANCE;
        surface.draw_text(
            Point::from_xy(x, page_h - MARGIN / 2.0),
            font.clone(),
            CAPTION,
            &footer,
            false,
            TextDirection::Auto,
        );
        surface.finish();
        page.finish();
    }
    pdf.finish()
        .map_err(|e| io::Error::other(format!("could not write the PDF: {e:?}")))
}

fn draw(surface: &mut Surface<'_>, font: &Font, item: &Item, y: f32, width: f32) {
    match item {
        Item::Line(text, size) => surface.draw_text(
            Point::from_xy(MARGIN, y + size),
            font.clone(),
            *size,
            text,
            false,
            TextDirection::Auto,
        ),
        Item::Rule => {
            let mut path = PathBuilder::new();
            if let Some(rect) = Rect::from_xywh(MARGIN, y + 1.5, width, 0.6) {
                path.push_rect(rect);
            }
            if let Some(path) = path.finish() {
                surface.draw_path(&path);
            }
        }
        Item::Chart(tree, w, h) => {
            if let Some(size) = Size::from_wh(*w, *h) {
                surface.push_transform(&Transform::from_translate(MARGIN, y));
                surface.draw_svg(tree, size, SvgSettings::default());
                surface.pop();
            }
        }
        Item::Space(_) | Item::Keep(_) => {}
    }
}

/// `doc` as a column of items `width` points wide.
fn layout(doc: &Doc, width: f32, svg_options: &usvg::Options<'_>) -> io::Result<Vec<Item>> {
    let mut items = vec![Item::Line("quantscope report".to_string(), 16.0)];
    wrap(&mut items, &doc.header, BODY, width);
    for section in &doc.sections {
        items.push(Item::Space(10.0));
        items.push(Item::Keep(80.0));
        items.push(Item::Line(section.title.to_string(), 12.0));
        items.push(Item::Rule);
        for part in &section.parts {
            match part {
                Part::Text(text) => wrap(&mut items, text, BODY, width),
                Part::Formula(lines) => fitted(&mut items, lines, width),
                Part::Grid(grid) => fitted(&mut items, &grid_lines(grid)?, width),
                Part::Figure(figure) => figure_items(&mut items, figure, width, svg_options)?,
            }
            items.push(Item::Space(3.0));
        }
    }
    Ok(items)
}

fn figure_items(
    items: &mut Vec<Item>,
    figure: &Figure,
    width: f32,
    svg_options: &usvg::Options<'_>,
) -> io::Result<()> {
    let tree = usvg::Tree::from_str(&figure.svg.finish(&figure.title), svg_options)
        .map_err(|e| io::Error::other(format!("chart {:?}: {e}", figure.title)))?;
    let w = width;
    let h = (figure.svg.height / figure.svg.width) as f32 * w;
    items.push(Item::Space(4.0));
    items.push(Item::Chart(Box::new(tree), w, h));
    wrap(
        items,
        &format!("{}. {}", figure.title, figure.caption),
        CAPTION,
        width,
    );
    if let Some(table) = figure
        .table
        .as_ref()
        .filter(|t| t.rows.len() <= PRINTED_ROWS)
    {
        fitted(items, &grid_lines(table)?, width);
    }
    Ok(())
}

/// A grid's lines, as the table format sets them.
fn grid_lines(grid: &crate::io::export::doc::Grid) -> io::Result<Vec<String>> {
    let mut buf = Vec::new();
    crate::io::export::table::write_grid(&mut buf, grid)?;
    Ok(String::from_utf8_lossy(&buf)
        .lines()
        .map(str::to_string)
        .collect())
}

/// Lines set at the largest size (up to the body size) at which the widest fits.
fn fitted(items: &mut Vec<Item>, lines: &[String], width: f32) {
    let widest = lines
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1)
        .max(1);
    let size = (width / (widest as f32 * ADVANCE)).clamp(SMALLEST, BODY);
    items.extend(lines.iter().map(|l| Item::Line(l.clone(), size)));
}

/// `text` broken at spaces into lines `width` points wide (a longer word is cut).
fn wrap(items: &mut Vec<Item>, text: &str, size: f32, width: f32) {
    let per_line = ((width / (size * ADVANCE)) as usize).max(10);
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > per_line {
            if !line.is_empty() {
                items.push(Item::Line(std::mem::take(&mut line), size));
            }
            let rest = word.split_off(per_line);
            items.push(Item::Line(word.into_iter().collect(), size));
            word = rest;
        }
        let len = line.chars().count();
        if len > 0 && len + 1 + word.len() > per_line {
            items.push(Item::Line(std::mem::take(&mut line), size));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.extend(word);
    }
    if !line.is_empty() {
        items.push(Item::Line(line, size));
    }
}

/// Items grouped into pages of `height` points: a chart or a kept block that does not fit
/// starts a new page; space at the top of a page is dropped.
fn paginate(items: Vec<Item>, height: f32) -> Vec<Vec<Item>> {
    let mut pages = vec![Vec::new()];
    let mut used = 0.0;
    for item in items {
        let need = item.height();
        if used > 0.0 && used + need > height {
            pages.push(Vec::new());
            used = 0.0;
        }
        if used == 0.0 && matches!(item, Item::Space(_) | Item::Keep(_)) {
            continue;
        }
        if matches!(item, Item::Keep(_)) {
            continue;
        }
        used += need;
        if let Some(page) = pages.last_mut() {
            page.push(item);
        }
    }
    pages.retain(|p| !p.is_empty());
    if pages.is_empty() {
        pages.push(Vec::new());
    }
    pages
}
