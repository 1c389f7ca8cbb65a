//! Judging a learner's typed answer against the answer the core computed.
//!
//! - Real numbers (scale, MAE, bits per weight, utilization) are right within a relative
//!   tolerance (0.5 % by default) and near within 5 %; a utilization may be typed as `86%`
//!   (or `86`: numbers above 1 are read as percentages).
//! - Wherever a number goes (a single answer, each value of a list, a whole number) a
//!   fraction `a/b` may stand for it: `3.10/7`, `0.15 / 7`, `256/2`. No other expression
//!   is evaluated: `3.1*7` or `(3.1)/7` is refused with a message saying what to type.
//! - Whole numbers (zero point, levels used) and codes must match exactly. Codes are typed
//!   as a list with any separators (`2, -4, 6, -7`, `[2 -4 6 -7]`); a list of the wrong
//!   length is malformed, and says how many values are expected.
//! - A choice is typed as its number (`2`) or letter (`b`).
//!
//! A malformed answer is not a miss: the learner is told what to type instead.

use std::fmt;

use crate::teach::exercise::{Ask, Step};

/// How close a real-number answer must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative error up to which the answer is right.
    pub right: f64,
    /// Relative error up to which the answer is near ("close: check your rounding").
    pub near: f64,
    /// Absolute error that also counts as right (half a percentage point for utilization,
    /// so that a bar read as `7%` for 1/14 is right); `near` allows five times as much.
    pub absolute: f64,
}

impl Tolerance {
    /// Right within 0.5 %, near within 5 %.
    pub const DEFAULT: Self = Self {
        right: 0.005,
        near: 0.05,
        absolute: 1e-12,
    };

    /// [`Tolerance::DEFAULT`], plus half a percentage point either way.
    pub const UTILIZATION: Self = Self {
        absolute: 0.005,
        ..Self::DEFAULT
    };
}

/// A step's answer, computed by the core (a choice's comes from the file).
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// A real number: a scale, an MAE, bits per weight, a utilization (as a fraction).
    Number(f64),
    /// A whole number: a zero point, a count of levels.
    Whole(i64),
    /// A row's codes.
    Codes(Vec<i32>),
    /// A row's reconstructions.
    Numbers(Vec<f64>),
    /// The right option (0-based) of `options`.
    Choice {
        /// 0-based index of the right option.
        correct: usize,
        /// Number of options.
        options: usize,
    },
}

/// The judgement of one answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Right.
    Right,
    /// Within the near tolerance but not the right one: most likely a rounding slip.
    Near {
        /// `|answer − expected| / |expected|` (the largest over a list).
        relative_error: f64,
    },
    /// Wrong.
    Wrong {
        /// 0-based positions that differ, for a list; empty for a single answer.
        positions: Vec<usize>,
        /// Every difference is exactly one code or one unit (a rounding or tie slip).
        off_by_one: bool,
    },
    /// Not an answer of the right form; not counted as a miss.
    Malformed {
        /// What to type instead.
        reason: String,
    },
}

impl Verdict {
    /// True for [`Verdict::Right`].
    #[must_use]
    pub fn is_right(&self) -> bool {
        matches!(self, Self::Right)
    }

    /// True for [`Verdict::Near`] and [`Verdict::Wrong`]: the answers that count as a miss.
    #[must_use]
    pub fn is_miss(&self) -> bool {
        matches!(self, Self::Near { .. } | Self::Wrong { .. })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Right => f.write_str("right"),
            Self::Near { .. } => f.write_str("close: check your rounding"),
            Self::Wrong {
                positions,
                off_by_one,
            } => {
                // Positions in the list, counted from 1, so they are not read as values.
                match positions.as_slice() {
                    [] => f.write_str("not right")?,
                    [p] => write!(f, "the value at position {} is not right", p + 1)?,
                    ps => {
                        let (last, rest) = ps.split_last().unwrap_or((&0, &[]));
                        let rest: Vec<String> = rest.iter().map(|p| (p + 1).to_string()).collect();
                        write!(
                            f,
                            "the values at positions {} and {} are not right",
                            rest.join(", "),
                            last + 1
                        )?;
                    }
                }
                if *off_by_one {
                    f.write_str(" (off by one: check the rounding and any ties)")?;
                }
                Ok(())
            }
            Self::Malformed { reason } => f.write_str(reason),
        }
    }
}

fn malformed(reason: impl Into<String>) -> Verdict {
    Verdict::Malformed {
        reason: reason.into(),
    }
}

/// Unicode minus signs and dashes read as `-`.
fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2212}' | '\u{2013}' | '\u{2012}' => '-',
            c => c,
        })
        .collect()
}

fn number(token: &str) -> Option<f64> {
    let t = token.trim();
    let t = t.strip_prefix('+').unwrap_or(t);
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A number or a fraction `a/b` (the one expression answers may use, wherever a number
/// goes: a single answer, each value of a list, a whole number).
fn fraction(t: &str) -> Option<f64> {
    match t.split_once('/') {
        Some((a, b)) => match (number(a), number(b)) {
            (Some(a), Some(b)) if b != 0.0 => Some(a / b).filter(|x| x.is_finite()),
            _ => None,
        },
        None => number(t),
    }
}

/// A number or a fraction `a/b`.
fn real(text: &str) -> Result<f64, String> {
    let t = normalise(text);
    if t.is_empty() {
        return Err("type a number".into());
    }
    fraction(&t).ok_or_else(|| {
        format!(
            "{:?} is not a number (type e.g. 0.0214 or 0.15/7)",
            text.trim()
        )
    })
}

fn whole(token: &str) -> Option<i64> {
    let t = token.strip_prefix('+').unwrap_or(token);
    t.parse::<i64>().ok().or_else(|| {
        fraction(t)
            .filter(|x| x.fract() == 0.0 && x.abs() < 1e15)
            .map(|x| x as i64)
    })
}

fn tokens(text: &str) -> Vec<String> {
    // A fraction keeps its parts together even when typed with spaces (`0.15 / 7`).
    let mut joined = String::new();
    for part in normalise(text).split('/') {
        if !joined.is_empty() {
            joined.truncate(joined.trim_end().len());
            joined.push('/');
        }
        joined.push_str(if joined.is_empty() {
            part
        } else {
            part.trim_start()
        });
    }
    joined
        .split(|c: char| c.is_whitespace() || ",;[]()|".contains(c))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

fn relative(answer: f64, expected: f64) -> f64 {
    if expected == 0.0 {
        if answer == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        ((answer - expected) / expected).abs()
    }
}

/// Where `answer` falls: 0 right, 1 near, 2 wrong.
fn grade(answer: f64, expected: f64, t: Tolerance) -> u8 {
    let diff = (answer - expected).abs();
    if diff <= t.right * expected.abs() || diff <= t.absolute {
        0
    } else if diff <= t.near * expected.abs() || diff <= 5.0 * t.absolute {
        1
    } else {
        2
    }
}

fn check_number(step: &Step, expected: f64, answer: &str) -> Verdict {
    let trimmed = answer.trim();
    let (body, percent) = match trimmed.strip_suffix('%') {
        Some(b) => (b, true),
        None => (trimmed, false),
    };
    let mut value = match real(body) {
        Ok(v) => v,
        Err(reason) => return malformed(reason),
    };
    if step.ask == Ask::Utilization && (percent || value > 1.0) {
        value /= 100.0;
    } else if percent {
        return malformed("type a number without %");
    }
    match grade(value, expected, step.tolerance) {
        0 => Verdict::Right,
        1 => Verdict::Near {
            relative_error: relative(value, expected),
        },
        _ => Verdict::Wrong {
            positions: Vec::new(),
            off_by_one: false,
        },
    }
}

fn check_whole(expected: i64, answer: &str) -> Verdict {
    let t = normalise(answer);
    if t.is_empty() {
        return malformed("type a whole number");
    }
    match whole(&t) {
        Some(v) if v == expected => Verdict::Right,
        Some(v) => Verdict::Wrong {
            positions: Vec::new(),
            off_by_one: v.abs_diff(expected) == 1,
        },
        None => malformed(format!("{:?} is not a whole number", answer.trim())),
    }
}

fn count_error(what: &str, want: usize, got: usize) -> Verdict {
    malformed(format!(
        "expected {want} {what}, one per value of the row, but got {got}"
    ))
}

fn check_codes(expected: &[i32], answer: &str) -> Verdict {
    let toks = tokens(answer);
    if toks.is_empty() {
        return malformed(format!(
            "type the {} codes as a list, like 2, -4, 6, -7",
            expected.len()
        ));
    }
    let mut codes = Vec::with_capacity(toks.len());
    for t in &toks {
        match whole(t) {
            Some(v) => codes.push(v),
            None => return malformed(format!("{t:?} is not a whole number: codes are integers")),
        }
    }
    if codes.len() != expected.len() {
        return count_error("codes", expected.len(), codes.len());
    }
    let positions: Vec<usize> = (0..codes.len())
        .filter(|&i| codes[i] != i64::from(expected[i]))
        .collect();
    if positions.is_empty() {
        return Verdict::Right;
    }
    let off_by_one = positions
        .iter()
        .all(|&i| codes[i].abs_diff(i64::from(expected[i])) == 1);
    Verdict::Wrong {
        positions,
        off_by_one,
    }
}

fn check_numbers(step: &Step, expected: &[f64], answer: &str) -> Verdict {
    let toks = tokens(answer);
    let mut values = Vec::with_capacity(toks.len());
    for t in &toks {
        match real(t) {
            Ok(v) => values.push(v),
            Err(reason) => return malformed(reason),
        }
    }
    if values.len() != expected.len() {
        return count_error("values", expected.len(), values.len());
    }
    let grades: Vec<u8> = values
        .iter()
        .zip(expected)
        .map(|(&a, &e)| grade(a, e, step.tolerance))
        .collect();
    match grades.iter().max() {
        Some(0) | None => Verdict::Right,
        Some(1) => Verdict::Near {
            relative_error: values
                .iter()
                .zip(expected)
                .map(|(&a, &e)| relative(a, e))
                .fold(0.0, f64::max),
        },
        _ => Verdict::Wrong {
            positions: (0..grades.len()).filter(|&i| grades[i] == 2).collect(),
            off_by_one: false,
        },
    }
}

fn check_choice(correct: usize, options: usize, answer: &str) -> Verdict {
    let t = normalise(answer).to_ascii_lowercase();
    let t = t
        .trim_start_matches('(')
        .trim_end_matches(['.', ')'])
        .trim();
    let last = (b'a' + (options.min(26) as u8) - 1) as char;
    let pick = match t.as_bytes() {
        [c @ b'a'..=b'z'] => Some(usize::from(c - b'a')),
        _ => t.parse::<usize>().ok().and_then(|n| n.checked_sub(1)),
    };
    match pick {
        Some(p) if p < options => {
            if p == correct {
                Verdict::Right
            } else {
                Verdict::Wrong {
                    positions: Vec::new(),
                    off_by_one: false,
                }
            }
        }
        _ => malformed(format!("choose 1 to {options} (or a to {last})")),
    }
}

/// Judges `answer` to `step` against `expected` (from [`super::expected`]).
#[must_use]
pub fn check(step: &Step, expected: &Expected, answer: &str) -> Verdict {
    match expected {
        Expected::Number(e) => check_number(step, *e, answer),
        Expected::Whole(e) => check_whole(*e, answer),
        Expected::Codes(e) => check_codes(e, answer),
        Expected::Numbers(e) => check_numbers(step, e, answer),
        Expected::Choice { correct, options } => check_choice(*correct, *options, answer),
    }
}
