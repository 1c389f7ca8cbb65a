//! Number formatting for people: significant digits, `%g` style.

/// Significant digits of errors and SQNR.
pub(super) const ERROR_DIGITS: usize = 4;
/// Significant digits of scales, offsets and values.
pub(super) const VALUE_DIGITS: usize = 6;

/// `x` with `digits` significant digits: fixed notation when the decimal exponent is in
/// `-4..digits`, scientific (`1.234e-5`) otherwise, trailing zeros dropped (C's `%g`).
pub(crate) fn sig(x: f64, digits: usize) -> String {
    significant(x, digits, -4)
}

/// `x` with `digits` significant digits, in fixed notation when the decimal exponent is in
/// `smallest_fixed..digits` and scientific otherwise, trailing zeros dropped. Shared by the
/// exporters (`%g`: -4) and the panes (-3, which keeps numbers short).
pub(crate) fn significant(x: f64, digits: usize, smallest_fixed: i64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let digits = digits.max(1);
    // Rounding can carry into a new decade (9.99996 -> 1.000e1), so the exponent is read
    // back from the rounded scientific form.
    let scientific = format!("{:.*e}", digits - 1, x);
    let Some((mantissa, exp)) = scientific.split_once('e') else {
        return scientific;
    };
    let exp: i64 = exp.parse().unwrap_or(0);
    if exp < smallest_fixed || exp >= digits as i64 {
        format!("{}e{exp}", trim_zeros(mantissa))
    } else {
        let decimals = (digits as i64 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

/// An error or SQNR value.
pub(super) fn error(x: f64) -> String {
    sig(x, ERROR_DIGITS)
}

/// A scale, offset or value stored as `f32`.
pub(super) fn value(x: f32) -> String {
    sig(f64::from(x), VALUE_DIGITS)
}

/// An optional SQNR in dB; `-` when there is none (zero error or zero signal).
pub(super) fn sqnr(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), error)
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `n` and the noun, in the plural unless `n` is 1: `1 tensor`, `2 tensors`, `0 channels`.
#[must_use]
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_like_percent_g() {
        for (x, digits, want) in [
            (0.0, 4, "0"),
            (0.1, 4, "0.1"),
            (0.442_857_142_857, 6, "0.442857"),
            (0.15 / 7.0, 6, "0.0214286"),
            (-3.1, 4, "-3.1"),
            (9.999_96, 4, "10"),
            (123_456.0, 4, "1.235e5"),
            (0.000_123_456, 4, "0.0001235"),
            (0.000_012_345_6, 4, "1.235e-5"),
            (20.8, 6, "20.8"),
            (1.0, 6, "1"),
            (f64::INFINITY, 4, "inf"),
        ] {
            assert_eq!(sig(x, digits), want, "{x} to {digits} digits");
        }
    }

    #[test]
    fn f32_values_print_their_short_form() {
        assert_eq!(value(2.21), "2.21");
        assert_eq!(value(0.15 / 7.0), "0.0214286");
        assert_eq!(sqnr(None), "-");
    }
}
