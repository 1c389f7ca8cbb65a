//! A small SVG writer: the one drawing of each chart that the HTML report inlines and the
//! PDF report renders (through usvg and krilla-svg), so the two cannot differ.
//!
//! Coordinates are in SVG user units; the drawing scales to its container (HTML) or to
//! the page's text width (PDF). Text uses the embedded monospace font's family name, with
//! the generic `monospace` as the browser's fallback.

use std::fmt::Write as _;

/// The font family charts ask for (the PDF embeds it; a browser falls back to `monospace`).
pub(crate) const FONT_FAMILY: &str = "DejaVu Sans Mono";

/// Colours, chosen to be told apart in greyscale print as well.
pub(super) mod ink {
    /// Text, axes and original values.
    pub const TEXT: &str = "#1a1a1a";
    /// Grid lines and quantization levels.
    pub const FAINT: &str = "#c8c8c8";
    /// Reconstructed values, bars.
    pub const MAIN: &str = "#1f5fa8";
    /// Collapsed channels, errors.
    pub const ALERT: &str = "#b3261e";
    /// A second series.
    pub const SECOND: &str = "#d07a00";
}

/// An SVG drawing being built.
pub(crate) struct Svg {
    /// Width in user units.
    pub width: f64,
    /// Height in user units.
    pub height: f64,
    body: String,
}

/// How text lines up with its point.
#[derive(Clone, Copy)]
pub(super) enum Anchor {
    Start,
    Middle,
    End,
}

impl Svg {
    /// An empty drawing of `width` x `height`.
    pub fn new(width: f64, height: f64) -> Self {
        Self {
            width,
            height,
            body: String::new(),
        }
    }

    /// A line.
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), color: &str, width: f64) {
        let _ = write!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="{}"/>"#,
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            n(width)
        );
    }

    /// A filled rectangle.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str) {
        let _ = write!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"/>"#,
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0))
        );
    }

    /// An outlined rectangle.
    pub fn frame(&mut self, x: f64, y: f64, w: f64, h: f64, stroke: &str) {
        let _ = write!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{stroke}" stroke-width="1"/>"#,
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0))
        );
    }

    /// A filled circle.
    pub fn dot(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = write!(
            self.body,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{fill}"/>"#,
            n(x),
            n(y),
            n(r)
        );
    }

    /// An outlined circle.
    pub fn ring(&mut self, x: f64, y: f64, r: f64, stroke: &str) {
        let _ = write!(
            self.body,
            r#"<circle cx="{}" cy="{}" r="{}" fill="none" stroke="{stroke}" stroke-width="1.2"/>"#,
            n(x),
            n(y),
            n(r)
        );
    }

    /// A polyline through `points`.
    pub fn polyline(&mut self, points: &[(f64, f64)], color: &str, width: f64) {
        let pts: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{},{}", n(x), n(y)))
            .collect();
        let _ = write!(
            self.body,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="{}"/>"#,
            pts.join(" "),
            n(width)
        );
    }

    /// Text at `(x, y)` (the baseline), `size` units high.
    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: Anchor, color: &str, text: &str) {
        let anchor = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let _ = write!(
            self.body,
            r#"<text x="{}" y="{}" font-size="{}" text-anchor="{anchor}" fill="{color}">{}</text>"#,
            n(x),
            n(y),
            n(size),
            escape(text)
        );
    }

    /// The finished document: `title` is its accessible name.
    pub fn finish(&self, title: &str) -> String {
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" font-family="{FONT_FAMILY}, monospace"><title>{}</title>{}</svg>"#,
            escape(title),
            self.body,
            w = n(self.width),
            h = n(self.height),
        )
    }
}

/// A coordinate with two decimals at most (keeps files small).
fn n(x: f64) -> String {
    if !x.is_finite() {
        return "0".into();
    }
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// Text escaped for XML and HTML content and attributes; control characters become spaces.
pub(crate) fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c if c.is_control() => s.push(' '),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_rounds_coordinates() {
        assert_eq!(escape("a<b & \"c\"\n"), "a&lt;b &amp; &quot;c&quot; ");
        let mut svg = Svg::new(10.0, 5.0);
        svg.line((0.0, 1.234_56), (-0.0001, 2.5), "#000", 1.0);
        assert!(
            svg.finish("t")
                .contains(r#"x1="0" y1="1.23" x2="0" y2="2.5""#)
        );
    }
}
