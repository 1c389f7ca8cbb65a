//! The "Worked arithmetic" section: a [`ChannelExplanation`] written out in the seed
//! lesson's manner, one line per step of the arithmetic.
//!
//! ```text
//! block 0 (rows 0..1, cols 0..4): values from -0.15 to 0.12
//!   scale = absmax / qmax = 0.15 / 7 = 0.0214286
//!   zero point = 0 (symmetric)
//!   0.05 / 0.0214286 = 2.333 → round → 2 → x̂ = 0.0428571 (error -0.00714)
//! ```

use std::fmt::Write as _;

use crate::core::config::{Degenerate, QuantExpr, Rounding, SymZeroPoint};
use crate::core::explain::{
    BlockExplanation, ChannelExplanation, Clamp, FormatBlock, FormatWork, Group, ScaleFormula,
    SearchWeights, ValueExplanation, ZeroPointFormula, zero_added_after_rounding,
};
use crate::io::export::doc::{Part, Section};
use crate::io::export::num::{error, sig, value};

/// Significant digits of a ratio `x / s`.
const RATIO_DIGITS: usize = 4;
/// Significant digits of an error `x̂ − x`.
const ERROR_DIGITS: usize = 3;

/// The section for `explanations`, one channel after another.
pub(super) fn section(explanations: &[ChannelExplanation]) -> Section {
    let mut parts = vec![
        Part::Text("How each scale and zero point was formed, then every value: x / s,".into()),
        Part::Text(
            "rounded (ties called out), clamped into [qmin, qmax], the code, x̂ and its error x̂ - x."
                .into(),
        ),
    ];
    for e in explanations {
        let label = e
            .label
            .as_deref()
            .map_or_else(String::new, |l| format!(" ({l})"));
        let clamp = match e.clamp_range {
            (lo, hi) if (lo, hi) != (e.qmin, e.qmax) => format!(" clamped to [{lo}, {hi}]"),
            _ => String::new(),
        };
        let blocks = e.format.as_ref().map_or(e.blocks.len(), |w| w.blocks.len());
        let kind = e.format.as_ref().map_or_else(
            || format!("granularity {}", e.granularity),
            |w| w.name.to_string(),
        );
        parts.push(Part::Text(format!(
            "Channel {}{label}: {kind}, codes [{}, {}]{clamp}, {blocks} block{}.",
            e.row,
            e.qmin,
            e.qmax,
            if blocks == 1 { "" } else { "s" }
        )));
        parts.push(Part::Formula(lines(e)));
    }
    Section {
        title: "Worked arithmetic",
        parts,
    }
}

/// The worked arithmetic of one channel as plain lines: for each block its scale and zero
/// point, then one line per value of the row in that block, then the row's MAE.
#[must_use]
pub fn lines(e: &ChannelExplanation) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(w) = &e.format {
        format_lines(e, w, &mut out);
    }
    for (i, b) in e.blocks.iter().enumerate() {
        block_lines(e, b, &mut out);
        for v in e.values.iter().filter(|v| v.block == i) {
            out.push(format!("  {}", value_line(e, b, v)));
        }
    }
    out.push(format!("mean |error| (MAE) = {}", error(e.metrics.mae)));
    out
}

/// A format's blocks: how each scale was formed, then each value to its grid point.
fn format_lines(e: &ChannelExplanation, w: &FormatWork, out: &mut Vec<String>) {
    for (i, b) in w.blocks.iter().enumerate() {
        let indent = format_block_lines(b, out);
        if let (Some(sw), FormatBlock::KQuant { super_block, .. }) = (&w.weights, b) {
            search_weight_lines(sw, *super_block, b.cols(), out);
        }
        let (c0, c1) = b.cols();
        let groups: Vec<&Group> = w
            .groups
            .iter()
            .filter(|g| (c0..c1).contains(&g.start))
            .collect();
        if groups.is_empty() {
            for v in e.values.iter().filter(|v| v.block == i) {
                out.push(format!("{indent}{}", format_value_line(b, v)));
            }
        }
        for g in groups {
            out.push(format!("{indent}{}", group_line(w.name, g)));
            for v in e
                .values
                .iter()
                .filter(|v| (g.start..g.start + 8).contains(&v.col))
            {
                out.push(format!("{indent}  {}", lattice_value_line(v)));
            }
        }
    }
}

/// A k-quant sub-block's search weights: the rule (with the super-block's `σ²`) before
/// the super-block's first sub-block line, the weights after each sub-block line.
fn search_weight_lines(
    sw: &SearchWeights,
    super_block: usize,
    (c0, c1): (usize, usize),
    out: &mut Vec<String>,
) {
    if c0 % 256 == 0 {
        let sigma = sw
            .sigma2
            .get(super_block)
            .map(|s| format!(" = {}", value(*s)))
            .unwrap_or_default();
        let rule = if sw.sigma2.is_empty() {
            sw.rule.to_string()
        } else {
            format!("{}; σ²{sigma}", sw.rule)
        };
        let line = format!(
            "  search weights{}: {rule}",
            if sw.weighted {
                " (with the importance a of each column)"
            } else {
                ""
            }
        );
        // Before the sub-block line just written.
        let at = out.len().saturating_sub(1);
        out.insert(at, line);
    }
    let ws: Vec<String> = sw
        .values
        .get(c0..c1)
        .unwrap_or_default()
        .iter()
        .map(|&w| value(w))
        .collect();
    out.push(format!("    weights: {}", ws.join(" ")));
}

/// How a format's block scale was formed, as lines into `out`; returns the indent of the
/// block's value lines.
fn format_block_lines(b: &FormatBlock, out: &mut Vec<String>) -> &'static str {
    let (c0, c1) = b.cols();
    match *b {
        FormatBlock::KQuant {
            super_block,
            d,
            dmin,
            scale,
            min_code,
            bits,
            step,
            min,
            ..
        } => {
            if c0 % 256 == 0 {
                let mins = if dmin == 0.0 && min == 0.0 {
                    String::new()
                } else {
                    format!(", dmin = {} (f16)", value(dmin))
                };
                out.push(format!(
                    "super-block {super_block} (cols {}..{}): d = {} (f16){mins}",
                    super_block * 256,
                    super_block * 256 + 256,
                    value(d)
                ));
            }
            let mut line = format!(
                "  sub-block (cols {c0}..{c1}): scale {scale} ({bits}-bit) → step = d × {scale} = {}",
                value(step)
            );
            if min_code != 0 || min != 0.0 {
                let _ = write!(
                    line,
                    "; min {min_code} ({bits}-bit) → min = dmin × {min_code} = {}",
                    value(min)
                );
            }
            out.push(line);
            "    "
        }
        FormatBlock::Mxfp4 {
            amax,
            floor_log2,
            emax,
            exponent,
            scale,
            ..
        } => {
            out.push(mx_line((c0, c1), amax, floor_log2, emax, exponent, scale));
            "  "
        }
        FormatBlock::Nf4Dq {
            amax,
            offset,
            dq_block,
            second_scale,
            code,
            map_value,
            scale,
            ..
        } => {
            out.push(format!(
                "block (cols {c0}..{c1}): absmax = {}; double-quantized: (absmax − offset {}) / second-level scale {} (absmax block {dq_block}) = {} → 8-bit code {code} = {} → stored absmax = {} × {} + {} = {}",
                value(amax),
                value(offset),
                value(second_scale),
                value(if second_scale == 0.0 {
                    0.0
                } else {
                    (amax - offset) / second_scale
                }),
                value(map_value),
                value(map_value),
                value(second_scale),
                value(offset),
                value(scale)
            ));
            "  "
        }
        FormatBlock::Scaled {
            amax, what, scale, ..
        } => {
            out.push(format!(
                "block (cols {c0}..{c1}): the row's amax here = {}, {what} = {}",
                value(amax),
                value(scale)
            ));
            "  "
        }
    }
}

/// An MX block's shared exponent: `amax → floor(log2 amax) → e → scale`, with the clamp
/// (OCP) or the byte ggml stores where the formula leaves E8M0's range.
fn mx_line(
    (c0, c1): (usize, usize),
    amax: f32,
    floor_log2: i32,
    emax: i32,
    exponent: u8,
    scale: f32,
) -> String {
    if amax <= 0.0 {
        return format!("block (cols {c0}..{c1}): all zero → e = 0");
    }
    let raw = floor_log2 - emax + 127;
    // ggml takes floor(log2f(amax)), which rounds up to the next power of two just below it.
    let exact = f32_exponent(amax);
    let rounded = if exact.is_some_and(|e| e != floor_log2) {
        format!(" (log2f rounds up: amax is below 2^{floor_log2})")
    } else {
        String::new()
    };
    let clamped = if raw == i32::from(exponent) {
        String::new()
    } else if raw < 0 && exponent == 0 {
        " → clamped to 0".to_string()
    } else {
        format!(" → stored as {exponent}")
    };
    let mut line = format!(
        "block (cols {c0}..{c1}): amax = {} → floor(log2 amax) = {floor_log2}{rounded} → e = {floor_log2} - {emax} + 127 = {raw}{clamped} → scale 2^{} = {}",
        value(amax),
        i32::from(exponent) - 127,
        value(scale)
    );
    line.push_str(&overflowing_levels(emax, exponent, scale));
    line
}

/// The binary exponent of a positive normal `a` (`None` for subnormals and non-finite).
fn f32_exponent(a: f32) -> Option<i32> {
    let biased = ((a.to_bits() >> 23) & 0xff) as i32;
    (a.is_finite() && biased != 0).then_some(biased - 127)
}

/// E2M1's magnitudes, the elements of MXFP4.
const E2M1_LEVELS: [f32; 7] = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

/// For an E2M1 block (`emax` 2) whose scale is so large that its top levels times the scale
/// pass f32's largest value: which levels, and what that leaves (empty otherwise).
fn overflowing_levels(emax: i32, exponent: u8, scale: f32) -> String {
    if emax != 2 {
        return String::new();
    }
    let over: Vec<f32> = E2M1_LEVELS
        .into_iter()
        .filter(|&l| (l * scale).is_infinite())
        .collect();
    let Some(top) = E2M1_LEVELS
        .into_iter()
        .rev()
        .find(|&l| (l * scale).is_finite())
    else {
        return String::new();
    };
    if over.is_empty() {
        return String::new();
    }
    let e = i32::from(exponent) - 127;
    let names: Vec<String> = over.iter().map(|l| value(*l)).collect();
    format!(
        "; level{} {} × 2^{e} pass f32's largest value (they would be inf), so the largest level a value can take is {} (x̂ = {}): ggml doubles its levels and halves the scale (8 and 12 × 2^{} are the same products), and its error test finds inf for them",
        if over.len() > 1 { "s" } else { "" },
        names.join(" and "),
        value(top),
        value(top * scale),
        e - 1
    )
}

/// One value of a format's block: its ratio to the step, the grid point, `x̂`.
fn format_value_line(b: &FormatBlock, v: &ValueExplanation) -> String {
    let tail = format!(
        " → x̂ = {} (error {})",
        value(v.dequantized),
        sig(v.error, ERROR_DIGITS)
    );
    match *b {
        FormatBlock::KQuant { step, min, .. } if step != 0.0 && min == 0.0 => format!(
            "{} / {} = {} → code {} (level {}){tail}",
            value(v.x),
            value(step),
            ratio(v.ratio, false),
            v.code,
            int(v.rounded)
        ),
        FormatBlock::KQuant { step, min, .. } if step != 0.0 => format!(
            "{} → ({}) / {} = {} → code {} (level {}){tail}",
            value(v.x),
            plus(v.x, min),
            value(step),
            ratio(v.ratio, false),
            v.code,
            int(v.rounded)
        ),
        FormatBlock::Mxfp4 { scale, .. }
        | FormatBlock::Nf4Dq { scale, .. }
        | FormatBlock::Scaled { scale, .. }
            if scale != 0.0 =>
        {
            format!(
                "{} / {} = {} → nearest grid value {} (code {}){tail}",
                value(v.x),
                value(scale),
                ratio(v.ratio, false),
                value(v.rounded),
                v.code
            )
        }
        _ => format!("{}: scale 0 → code {}{tail}", value(v.x), v.code),
    }
}

/// An i-quant group of 8: the codebook point (IQ3: two of 4), its signs, the scale.
fn group_line(name: &str, g: &Group) -> String {
    let values: Vec<String> = g
        .values
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            if g.signs & (1 << j) != 0 {
                format!("-{v}")
            } else {
                v.to_string()
            }
        })
        .collect();
    let point = if name.starts_with("iq3") {
        format!("grid points #{} and #{}", g.points[0], g.points[1])
    } else {
        format!("grid point #{}", g.points[0])
    };
    let signs: String = (0..8)
        .map(|j| if g.signs & (1 << j) != 0 { '-' } else { '+' })
        .collect();
    let shift = if g.shift == 0.0 {
        String::new()
    } else {
        format!(" + {}", value(g.shift))
    };
    let s = g.scale;
    let factor = match name {
        "iq2_xxs" | "iq2_xs" | "iq2_s" => format!("({s} + 0.5) / 4"),
        "iq3_xxs" => format!("({s} + 0.5) / 2"),
        _ => format!("(2·{s} + 1)"),
    };
    format!(
        "group (cols {}..{}): {point}, signs {signs} → ({}){shift} × step {} (= d {} × {factor}, scale {s})",
        g.start,
        g.start + 8,
        values.join(", "),
        value(g.step),
        value(g.d),
    )
}

/// One value of an i-quant group: its ratio to the step, the level it got, `x̂`.
fn lattice_value_line(v: &ValueExplanation) -> String {
    format!(
        "{} (x / step = {}) → level {} (code {}) → x̂ = {} (error {})",
        value(v.x),
        ratio(v.ratio, false),
        value(v.rounded),
        v.code,
        value(v.dequantized),
        sig(v.error, ERROR_DIGITS)
    )
}

/// `a + b`, with a negative `b` in parentheses.
fn plus(a: f32, b: f32) -> String {
    if b < 0.0 {
        format!("{} + ({})", value(a), value(b))
    } else {
        format!("{} + {}", value(a), value(b))
    }
}

fn block_lines(e: &ChannelExplanation, b: &BlockExplanation, out: &mut Vec<String>) {
    out.push(format!(
        "block {} (rows {}..{}, cols {}..{}): values from {} to {}",
        b.index,
        b.rows.0,
        b.rows.1,
        b.cols.0,
        b.cols.1,
        value(b.min),
        value(b.max)
    ));
    let range = format!("[{}, {}]", value(b.range.0), value(b.range.1));
    match (b.clipping, b.widened_to_zero) {
        (Some(c), true) => out.push(format!(
            "  range clipped ({c}) and widened to include 0: {range}"
        )),
        (Some(c), false) => out.push(format!("  range clipped ({c}): {range}")),
        (None, true) => out.push(format!("  range widened to include 0: {range}")),
        (None, false) => {}
    }
    let shown = if b.degenerate.is_some() {
        sig(b.formula_value, 6)
    } else {
        value(b.computed_scale)
    };
    let formula = match b.scale {
        ScaleFormula::MaxCode {
            absmax,
            denominator,
        } => {
            let name = if i64::from(denominator) == i64::from(e.qmax) {
                "qmax"
            } else {
                "|qmin|"
            };
            format!("absmax / {name} = {} / {denominator}", value(absmax))
        }
        ScaleFormula::HalfSpan { absmax, span } => {
            format!(
                "2 × absmax / (qmax - qmin) = 2 × {} / {span}",
                value(absmax)
            )
        }
        ScaleFormula::SignedExtreme {
            extreme,
            denominator,
            ..
        } => format!(
            "v / (qmin - z) = {} / {denominator}   (v: the value of largest magnitude, sign kept)",
            value(extreme)
        ),
        ScaleFormula::Asymmetric { lo, hi, span } => {
            format!("(hi - lo) / (qmax - qmin) = ({}) / {span}", minus(hi, lo))
        }
    };
    out.push(format!("  scale = {formula} = {shown}"));
    if let Some(policy) = b.degenerate {
        out.push(format!("  degenerate: {}", degenerate(policy, b)));
    }
    if let Some(stored) = b.stored_scale {
        out.push(format!(
            "  stored as {}: {} (x̂ uses the stored scale)",
            stored.dtype,
            value(stored.value)
        ));
    }
    out.push(format!("  {}", zero_point(e, b)));
}

fn degenerate(policy: Degenerate, b: &BlockExplanation) -> String {
    match policy {
        Degenerate::One => {
            "the scale is zero or tiny; policy one uses scale 1 and zero point 0".into()
        }
        Degenerate::Flat => "the scale is 0; policy flat uses scale 1 and zero point 0".into(),
        Degenerate::Epsilon => format!(
            "the scale is below 2^-23; policy epsilon raises it to {}",
            value(b.computed_scale)
        ),
        Degenerate::Zero => match b.zero_point {
            ZeroPointFormula::FloatMin { .. } => {
                "scale 0 (policy zero): every value gets code 0 and reconstructs to the minimum"
                    .into()
            }
            _ => "scale 0 (policy zero): every value gets the zero point and reconstructs to 0"
                .into(),
        },
    }
}

fn zero_point(e: &ChannelExplanation, b: &BlockExplanation) -> String {
    let s = value(b.computed_scale);
    let range = |clamped: bool, value: i32, rounded: f64| {
        if clamped {
            format!(" → clamped to {value}")
        } else if rounded < f64::from(e.qmin) || rounded > f64::from(e.qmax) {
            format!(" (outside [{}, {}], not clamped)", e.qmin, e.qmax)
        } else {
            String::new()
        }
    };
    match b.zero_point {
        ZeroPointFormula::Fixed { rule, value } => match rule {
            SymZeroPoint::Zero => format!("zero point = {value} (symmetric)"),
            SymZeroPoint::MidHalfEven => {
                format!("zero point = round((qmin + qmax) / 2) = {value} (symmetric)")
            }
            SymZeroPoint::MidFloor => {
                format!("zero point = floor((qmin + qmax) / 2) = {value} (symmetric)")
            }
        },
        ZeroPointFormula::RoundOfShift {
            lo,
            unrounded,
            rounded,
            clamped,
            value: z,
        } => format!(
            "zero point = round(qmin - lo / s) = round({} - {} / {s}) = round({}) = {}{}",
            e.qmin,
            value(lo),
            sig(unrounded, 6),
            whole(rounded),
            range(clamped, z, rounded)
        ),
        ZeroPointFormula::ShiftOfRound {
            lo,
            ratio,
            rounded,
            clamped,
            value: z,
        } => format!(
            "zero point = qmin - round(lo / s) = {} - round({} / {s}) = {} - round({}) = {}{}",
            e.qmin,
            value(lo),
            e.qmin,
            sig(ratio, 6),
            whole(rounded),
            range(clamped, z, rounded)
        ),
        ZeroPointFormula::FloatMin { min, stored } => format!(
            "no zero point: the minimum {} is stored{}; x̂ = q × s + min",
            value(min),
            if stored == min {
                String::new()
            } else {
                format!(" as {}", value(stored))
            }
        ),
        ZeroPointFormula::Degenerate { value } => {
            format!("zero point = {value} (set by the degenerate policy)")
        }
    }
}

fn whole(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else {
        format!("{x:.0}")
    }
}

/// The rounding rule in words.
fn rule(r: Rounding) -> &'static str {
    match r {
        Rounding::HalfEven => "half to even",
        Rounding::HalfAway => "half away from zero",
        Rounding::HalfUp => "half up",
    }
}

/// A ratio with [`RATIO_DIGITS`] digits, or more when fewer would make a value that is not
/// a tie look like one (`-7.4999995` is not `-7.5`).
fn ratio(r: f32, tie: bool) -> String {
    let mut digits = RATIO_DIGITS;
    loop {
        let s = sig(f64::from(r), digits);
        let looks_tied = s.parse::<f64>().is_ok_and(|v| (v - v.floor()) == 0.5);
        if tie || !looks_tied || digits >= 9 {
            return s;
        }
        digits += 1;
    }
}

fn value_line(e: &ChannelExplanation, b: &BlockExplanation, v: &ValueExplanation) -> String {
    let z = b.zero_point.value();
    let s = value(b.computed_scale);
    let x = match b.zero_point {
        ZeroPointFormula::FloatMin { min, .. } => format!("({})", minus(v.x, min)),
        _ => value(v.x),
    };
    let tail = format!(
        " → x̂ = {} (error {})",
        value(v.dequantized),
        sig(v.error, ERROR_DIGITS)
    );
    if b.computed_scale == 0.0 {
        return format!("{}: scale 0 → code {}{tail}", value(v.x), v.code);
    }
    let mut line = match e.quant_expr {
        QuantExpr::Divide => format!("{x} / {s}"),
        QuantExpr::ReciprocalAddZero if z != 0 => format!("{x} × (1/{s}) + {z}"),
        QuantExpr::Reciprocal | QuantExpr::ReciprocalAddZero => format!("{x} × (1/{s})"),
    };
    // Writing into a String cannot fail.
    let _ = write!(line, " = {}", ratio(v.ratio, v.tie.is_some()));
    let _ = match v.tie {
        Some(r) => write!(line, " → round (tie: {}) → {}", rule(r), int(v.rounded)),
        None => write!(line, " → round → {}", int(v.rounded)),
    };
    if zero_added_after_rounding(e.quant_expr) && z != 0 {
        let sign = if z < 0 { '-' } else { '+' };
        let _ = write!(line, " {sign} {} = {}", z.unsigned_abs(), int(v.unclamped));
    }
    if let Some(Clamp::ToMin(q) | Clamp::ToMax(q)) = v.clamp {
        let _ = write!(line, " → clamped to {q}");
    }
    line.push_str(&tail);
    line
}

/// `a - b`, with a negative `b` in parentheses.
fn minus(a: f32, b: f32) -> String {
    if b < 0.0 {
        format!("{} - ({})", value(a), value(b))
    } else {
        format!("{} - {}", value(a), value(b))
    }
}

/// A rounded ratio or code, without a sign on zero.
fn int(x: f32) -> String {
    if x == 0.0 {
        "0".to_string()
    } else {
        format!("{x:.0}")
    }
}
