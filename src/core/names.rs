//! The names of configuration values, as the command line spells them, and one parser for
//! `key: value` settings shared by scenario headers, exercises and demo scripts.
//!
//! Every configuration enum gets [`FromStr`] and [`Display`](fmt::Display) (plus `name()`
//! for the enums without data), so `x.to_string().parse() == Ok(x)`. Parsing trims
//! surrounding spaces and ignores ASCII case; the words are the command line's
//! (`quantscope report --help`):
//!
//! | setting | values |
//! |---|---|
//! | `scheme` | `symmetric` (`sym`), `asymmetric` (`asym`) |
//! | `bits` | 1 to 16 |
//! | `signed` | `signed`, `unsigned`, `true`, `false` |
//! | `range` | `full`, `narrow`, `QMIN..QMAX` |
//! | `range-source` | `tight`, `include-zero` |
//! | `rounding` | `half-even`, `half-away`, `half-up` |
//! | `granularity` | `tensor`, `channel`, `group:G` |
//! | `axis` | `0` (rows), `1` (columns) |
//! | `clip` | `none`, `percentile:P` (0 < P ≤ 100), `mse` |
//! | `scale-dtype` | `f32`, `f16`, `bf16` |
//! | `zero-point-bits` | 0 to 32 |
//! | `reduce-range` | `true`, `false` |
//! | `sym-scale` | `max-code`, `half-span`, `signed-extreme`, `signed-min-max` |
//! | `sym-zero-point` | `zero`, `mid-half-even`, `mid-floor` |
//! | `asym-zero-point` | `round-of-shift`, `shift-of-round`, `float-min` |
//! | `clamp-zero-point` | `true`, `false` |
//! | `quant-expr` | `divide`, `reciprocal`, `reciprocal-add-zero` |
//! | `code-clamp` | `range`, `type` |
//! | `non-finite` | `zero-point`, `nan-to-zero`, `zero` |
//! | `arith` | `f64`, `f32` |
//! | `degenerate` | `one`, `flat`, `epsilon`, `zero` |
//!
//! [`apply_setting`] sets one of these on an [`Overrides`]; keys may also be written with
//! underscores (`range_source`). [`settings`] lists an [`Overrides`] back as such pairs.

use std::fmt;
use std::str::FromStr;

use crate::core::config::{
    Arith, AsymZeroPoint, Axis, Clipping, CodeClamp, Degenerate, NonFinite, QuantExpr, RangeKind,
    RangeSource, Rounding, ScaleDtype, Scheme, SymScale, SymZeroPoint,
};
use crate::core::presets::Overrides;

/// Every setting key [`apply_setting`] knows, with the values it takes, in the order
/// [`settings`] lists them.
pub const SETTINGS: [(&str, &str); 21] = [
    ("scheme", "symmetric or asymmetric"),
    ("bits", "a whole number from 1 to 16"),
    ("signed", "signed, unsigned, true or false"),
    ("range", "full, narrow or QMIN..QMAX"),
    ("range-source", "tight or include-zero"),
    ("rounding", "half-even, half-away or half-up"),
    ("granularity", "tensor, channel or group:G"),
    ("axis", "0 (rows) or 1 (columns)"),
    (
        "clip",
        "none, percentile:P (0 < P <= 100), mse or mse-weighted",
    ),
    ("scale-dtype", "f32, f16 or bf16"),
    ("zero-point-bits", "a whole number from 0 to 32"),
    ("reduce-range", "true or false"),
    (
        "sym-scale",
        "max-code, half-span, signed-extreme or signed-min-max",
    ),
    ("sym-zero-point", "zero, mid-half-even or mid-floor"),
    (
        "asym-zero-point",
        "round-of-shift, shift-of-round or float-min",
    ),
    ("clamp-zero-point", "true or false"),
    ("quant-expr", "divide, reciprocal or reciprocal-add-zero"),
    ("code-clamp", "range or type"),
    ("non-finite", "zero-point, nan-to-zero or zero"),
    ("arith", "f64 or f32"),
    ("degenerate", "one, flat, epsilon or zero"),
];

/// A name or setting that is not one of the accepted spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The key is not one of [`SETTINGS`].
    #[error("unknown setting {key:?}; the settings are {}", setting_keys())]
    UnknownSetting {
        /// The key as written.
        key: String,
    },
    /// The value is not one the setting takes.
    #[error("{what} must be {expected}, not {value:?}")]
    BadValue {
        /// The setting (its key).
        what: &'static str,
        /// The accepted values, in words.
        expected: &'static str,
        /// The value as written.
        value: String,
    },
}

fn setting_keys() -> String {
    SETTINGS.map(|(k, _)| k).join(", ")
}

fn bad(what: &'static str, value: &str) -> NameError {
    let expected = SETTINGS
        .iter()
        .find(|(k, _)| *k == what)
        .map_or("a known value", |(_, e)| *e);
    NameError::BadValue {
        what,
        expected,
        value: value.to_string(),
    }
}

fn normal(s: &str) -> String {
    s.trim().to_ascii_lowercase()
}

/// An enum without data whose values have names: what the command line, scenario headers
/// and the explorer list and parse ([`FromStr`] accepts the name and the aliases).
pub trait Named: Sized + Copy + 'static {
    /// Every value, in the order the command line lists them.
    const VALUES: &'static [Self];
    /// The value's name.
    fn name(self) -> &'static str;
    /// Other spellings [`FromStr`] accepts for it.
    fn aliases(self) -> &'static [&'static str];
}

/// `FromStr`, `Display`, `name()`, `ALL` and [`Named`] for an enum without data, from one
/// table.
macro_rules! names {
    ($ty:ident, $key:literal, [$($variant:ident => $name:literal $(| $alias:literal)*),+ $(,)?]) => {
        impl $ty {
            /// Every value, in the order the command line lists them.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The name the command line and settings use.
            #[must_use]
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        impl Named for $ty {
            const VALUES: &'static [Self] = Self::ALL;

            fn name(self) -> &'static str {
                $ty::name(self)
            }

            fn aliases(self) -> &'static [&'static str] {
                match self {
                    $(Self::$variant => &[$($alias),*]),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $ty {
            type Err = NameError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match normal(s).as_str() {
                    $($name $(| $alias)* => Ok(Self::$variant),)+
                    _ => Err(bad($key, s)),
                }
            }
        }
    };
}

names!(Scheme, "scheme", [
    Symmetric => "symmetric" | "sym",
    Asymmetric => "asymmetric" | "asym",
]);
names!(RangeSource, "range-source", [
    Tight => "tight",
    IncludeZero => "include-zero",
]);
names!(Rounding, "rounding", [
    HalfEven => "half-even",
    HalfAway => "half-away",
    HalfUp => "half-up",
]);
names!(Axis, "axis", [Rows => "0", Columns => "1"]);
names!(SymScale, "sym-scale", [
    MaxCode => "max-code",
    HalfSpan => "half-span",
    SignedExtreme => "signed-extreme",
    SignedMinMax => "signed-min-max",
]);
names!(SymZeroPoint, "sym-zero-point", [
    Zero => "zero",
    MidHalfEven => "mid-half-even",
    MidFloor => "mid-floor",
]);
names!(AsymZeroPoint, "asym-zero-point", [
    RoundOfShift => "round-of-shift",
    ShiftOfRound => "shift-of-round",
    FloatMin => "float-min",
]);
names!(QuantExpr, "quant-expr", [
    Divide => "divide",
    Reciprocal => "reciprocal",
    ReciprocalAddZero => "reciprocal-add-zero",
]);
names!(CodeClamp, "code-clamp", [Range => "range", Type => "type"]);
names!(NonFinite, "non-finite", [
    ZeroPoint => "zero-point",
    NanToZero => "nan-to-zero",
    Zero => "zero",
]);
names!(Arith, "arith", [F64 => "f64", F32 => "f32"]);
names!(Degenerate, "degenerate", [
    One => "one",
    Flat => "flat",
    Epsilon => "epsilon",
    Zero => "zero",
]);

impl ScaleDtype {
    /// Every storage type.
    pub const ALL: &'static [Self] = &[Self::F32, Self::F16, Self::Bf16];
}

impl Named for ScaleDtype {
    const VALUES: &'static [Self] = Self::ALL;

    fn name(self) -> &'static str {
        ScaleDtype::name(self)
    }

    fn aliases(self) -> &'static [&'static str] {
        &[]
    }
}

impl fmt::Display for ScaleDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ScaleDtype {
    type Err = NameError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match normal(s).as_str() {
            "f32" => Ok(Self::F32),
            "f16" => Ok(Self::F16),
            "bf16" => Ok(Self::Bf16),
            _ => Err(bad("scale-dtype", s)),
        }
    }
}

impl fmt::Display for RangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("full"),
            Self::Narrow => f.write_str("narrow"),
            Self::Custom { qmin, qmax } => write!(f, "{qmin}..{qmax}"),
        }
    }
}

impl FromStr for RangeKind {
    type Err = NameError;

    /// `full`, `narrow` or `QMIN..QMAX` (whether the range fits the type is checked by
    /// [`crate::core::Config::validate`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match normal(s).as_str() {
            "full" => Ok(Self::Full),
            "narrow" => Ok(Self::Narrow),
            t => t
                .split_once("..")
                .and_then(|(a, b)| {
                    Some(Self::Custom {
                        qmin: a.trim().parse().ok()?,
                        qmax: b.trim().parse().ok()?,
                    })
                })
                .ok_or_else(|| bad("range", s)),
        }
    }
}

impl fmt::Display for Clipping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::Percentile(p) => write!(f, "percentile:{p}"),
            Self::Mse => f.write_str("mse"),
            Self::MseWeighted => f.write_str("mse-weighted"),
        }
    }
}

impl FromStr for Clipping {
    type Err = NameError;

    /// `none` (also `minmax`, `min-max`), `mse`, `mse-weighted` or `percentile:P` with
    /// 0 < P ≤ 100.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match normal(s).as_str() {
            "none" | "minmax" | "min-max" => Ok(Self::None),
            "mse" => Ok(Self::Mse),
            "mse-weighted" => Ok(Self::MseWeighted),
            t => t
                .strip_prefix("percentile:")
                .and_then(|p| p.trim().parse::<f64>().ok())
                .filter(|p| *p > 0.0 && *p <= 100.0)
                .map(Self::Percentile)
                .ok_or_else(|| bad("clip", s)),
        }
    }
}

fn parse_bool(what: &'static str, value: &str) -> Result<bool, NameError> {
    match normal(value).as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(what, value)),
    }
}

fn parse_u8_in(what: &'static str, value: &str, min: u8, max: u8) -> Result<u8, NameError> {
    value
        .trim()
        .parse::<u8>()
        .ok()
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| bad(what, value))
}

/// The canonical spelling of `key` (underscores read as hyphens, case ignored), if it is
/// one of [`SETTINGS`].
#[must_use]
pub fn setting_key(key: &str) -> Option<&'static str> {
    let k = normal(key).replace('_', "-");
    SETTINGS.iter().map(|(k, _)| *k).find(|name| *name == k)
}

/// Sets `key` to `value` on `overrides`.
///
/// `key` is one of [`SETTINGS`] (underscores may stand for hyphens); `value` uses the
/// spellings in the [module documentation](self). Whether the whole configuration is
/// valid (a custom range inside the type, for instance) is checked later by
/// [`Overrides::resolve`].
pub fn apply_setting(overrides: &mut Overrides, key: &str, value: &str) -> Result<(), NameError> {
    let Some(key) = setting_key(key) else {
        return Err(NameError::UnknownSetting {
            key: key.to_string(),
        });
    };
    let o = overrides;
    match key {
        "scheme" => o.scheme = Some(value.parse()?),
        "bits" => o.bits = Some(parse_u8_in(key, value, 1, 16)?),
        "signed" => {
            o.signed = Some(match normal(value).as_str() {
                "signed" | "true" => true,
                "unsigned" | "false" => false,
                _ => return Err(bad(key, value)),
            });
        }
        "range" => o.range = Some(value.parse()?),
        "range-source" => o.range_source = Some(value.parse()?),
        "rounding" => o.rounding = Some(value.parse()?),
        "granularity" => {
            o.granularity = Some(value.parse().map_err(|_| bad(key, value))?);
        }
        "axis" => o.axis = Some(value.parse()?),
        "clip" => o.clipping = Some(value.parse()?),
        "scale-dtype" => o.scale_dtype = Some(value.parse()?),
        "zero-point-bits" => o.zero_point_bits = Some(parse_u8_in(key, value, 0, 32)?),
        "reduce-range" => o.reduce_range = parse_bool(key, value)?,
        "sym-scale" => o.sym_scale = Some(value.parse()?),
        "sym-zero-point" => o.sym_zero_point = Some(value.parse()?),
        "asym-zero-point" => o.asym_zero_point = Some(value.parse()?),
        "clamp-zero-point" => o.clamp_zero_point = Some(parse_bool(key, value)?),
        "quant-expr" => o.quant_expr = Some(value.parse()?),
        "code-clamp" => o.code_clamp = Some(value.parse()?),
        "non-finite" => o.non_finite = Some(value.parse()?),
        "arith" => o.arith = Some(value.parse()?),
        _ => o.degenerate = Some(value.parse()?),
    }
    Ok(())
}

/// The fields `overrides` sets, as `(key, value)` pairs in [`SETTINGS`] order; applying
/// them with [`apply_setting`] to an empty [`Overrides`] gives `overrides` back.
#[must_use]
pub fn settings(overrides: &Overrides) -> Vec<(&'static str, String)> {
    let o = overrides;
    let all: [(&str, Option<String>); 21] = [
        ("scheme", o.scheme.map(|v| v.to_string())),
        ("bits", o.bits.map(|v| v.to_string())),
        (
            "signed",
            o.signed
                .map(|v| if v { "signed" } else { "unsigned" }.to_string()),
        ),
        ("range", o.range.map(|v| v.to_string())),
        ("range-source", o.range_source.map(|v| v.to_string())),
        ("rounding", o.rounding.map(|v| v.to_string())),
        ("granularity", o.granularity.map(|v| v.to_string())),
        ("axis", o.axis.map(|v| v.to_string())),
        ("clip", o.clipping.map(|v| v.to_string())),
        ("scale-dtype", o.scale_dtype.map(|v| v.to_string())),
        ("zero-point-bits", o.zero_point_bits.map(|v| v.to_string())),
        ("reduce-range", o.reduce_range.then(|| "true".to_string())),
        ("sym-scale", o.sym_scale.map(|v| v.to_string())),
        ("sym-zero-point", o.sym_zero_point.map(|v| v.to_string())),
        ("asym-zero-point", o.asym_zero_point.map(|v| v.to_string())),
        (
            "clamp-zero-point",
            o.clamp_zero_point.map(|v| v.to_string()),
        ),
        ("quant-expr", o.quant_expr.map(|v| v.to_string())),
        ("code-clamp", o.code_clamp.map(|v| v.to_string())),
        ("non-finite", o.non_finite.map(|v| v.to_string())),
        ("arith", o.arith.map(|v| v.to_string())),
        ("degenerate", o.degenerate.map(|v| v.to_string())),
    ];
    all.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

/// Every setting of a configuration, as [`settings`] lists overrides: what the
/// configuration is, whatever preset it came from.
#[must_use]
pub fn settings_of(config: &crate::core::Config) -> Vec<(&'static str, String)> {
    let c = config;
    let v = &c.conventions;
    settings(&Overrides {
        scheme: Some(c.scheme),
        reduce_range: false,
        bits: Some(c.bits),
        signed: Some(c.signed),
        range: Some(c.range),
        range_source: Some(c.range_source),
        rounding: Some(c.rounding),
        granularity: Some(c.granularity),
        axis: Some(c.axis),
        clipping: Some(c.clipping),
        scale_dtype: Some(c.scale_dtype),
        zero_point_bits: Some(c.zero_point_bits),
        sym_scale: Some(v.sym_scale),
        sym_zero_point: Some(v.sym_zero_point),
        asym_zero_point: Some(v.asym_zero_point),
        clamp_zero_point: Some(v.clamp_zero_point),
        quant_expr: Some(v.quant_expr),
        code_clamp: Some(v.code_clamp),
        non_finite: Some(v.non_finite),
        arith: Some(v.arith),
        degenerate: Some(v.degenerate),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::Granularity;

    fn round_trips<T>(all: &[T])
    where
        T: Copy + fmt::Display + FromStr<Err = NameError> + PartialEq + fmt::Debug,
    {
        for &v in all {
            assert_eq!(v.to_string().parse::<T>(), Ok(v), "{v}");
            assert_eq!(
                format!("  {}  ", v.to_string().to_uppercase()).parse::<T>(),
                Ok(v)
            );
        }
    }

    #[test]
    fn every_name_parses_back() {
        round_trips(Scheme::ALL);
        round_trips(RangeSource::ALL);
        round_trips(Rounding::ALL);
        round_trips(Axis::ALL);
        round_trips(SymScale::ALL);
        round_trips(SymZeroPoint::ALL);
        round_trips(AsymZeroPoint::ALL);
        round_trips(QuantExpr::ALL);
        round_trips(CodeClamp::ALL);
        round_trips(NonFinite::ALL);
        round_trips(Arith::ALL);
        round_trips(Degenerate::ALL);
        round_trips(ScaleDtype::ALL);
        round_trips(&[
            RangeKind::Full,
            RangeKind::Narrow,
            RangeKind::Custom { qmin: -4, qmax: 3 },
        ]);
        round_trips(&[
            Clipping::None,
            Clipping::Mse,
            Clipping::MseWeighted,
            Clipping::Percentile(99.9),
            Clipping::Percentile(100.0),
        ]);
    }

    #[test]
    fn aliases_and_the_command_lines_words() {
        assert_eq!("sym".parse(), Ok(Scheme::Symmetric));
        assert_eq!("asym".parse(), Ok(Scheme::Asymmetric));
        assert_eq!(
            " -4 .. 3 ".parse(),
            Ok(RangeKind::Custom { qmin: -4, qmax: 3 })
        );
        assert_eq!("min-max".parse(), Ok(Clipping::None));
        assert_eq!("1".parse(), Ok(Axis::Columns));
        assert_eq!(Axis::Rows.to_string(), "0");
        assert_eq!(RangeKind::Custom { qmin: 0, qmax: 7 }.to_string(), "0..7");
    }

    #[test]
    fn bad_values_say_what_is_accepted() {
        let e = "diagonal".parse::<Scheme>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "scheme must be symmetric or asymmetric, not \"diagonal\""
        );
        assert!("percentile:0".parse::<Clipping>().is_err());
        assert!("percentile:101".parse::<Clipping>().is_err());
        assert!("percentile:x".parse::<Clipping>().is_err());
        assert!("-4..".parse::<RangeKind>().is_err());
        assert!("2".parse::<Axis>().is_err());
        assert!("f8".parse::<ScaleDtype>().is_err());
    }

    #[test]
    fn apply_setting_sets_each_field() {
        let mut o = Overrides::default();
        for (k, v) in [
            ("scheme", "asym"),
            ("bits", "8"),
            ("signed", "unsigned"),
            ("range", "0..127"),
            ("range_source", "include-zero"),
            ("rounding", "half-away"),
            ("granularity", "group:32"),
            ("axis", "1"),
            ("clip", "percentile:99"),
            ("scale-dtype", "f16"),
            ("zero-point-bits", "4"),
            ("reduce-range", "true"),
            ("sym-scale", "half-span"),
            ("sym-zero-point", "mid-floor"),
            ("asym-zero-point", "float-min"),
            ("clamp-zero-point", "false"),
            ("quant-expr", "reciprocal"),
            ("code_clamp", "type"),
            ("non-finite", "nan-to-zero"),
            ("Arith", "f32"),
            ("degenerate", "epsilon"),
        ] {
            apply_setting(&mut o, k, v).unwrap_or_else(|e| panic!("{k}: {e}"));
        }
        assert_eq!(o.scheme, Some(Scheme::Asymmetric));
        assert_eq!(o.bits, Some(8));
        assert_eq!(o.signed, Some(false));
        assert_eq!(o.range, Some(RangeKind::Custom { qmin: 0, qmax: 127 }));
        assert_eq!(o.range_source, Some(RangeSource::IncludeZero));
        assert_eq!(o.rounding, Some(Rounding::HalfAway));
        assert_eq!(o.granularity, Some(Granularity::Group(32)));
        assert_eq!(o.axis, Some(Axis::Columns));
        assert_eq!(o.clipping, Some(Clipping::Percentile(99.0)));
        assert_eq!(o.scale_dtype, Some(ScaleDtype::F16));
        assert_eq!(o.zero_point_bits, Some(4));
        assert!(o.reduce_range);
        assert_eq!(o.sym_scale, Some(SymScale::HalfSpan));
        assert_eq!(o.sym_zero_point, Some(SymZeroPoint::MidFloor));
        assert_eq!(o.asym_zero_point, Some(AsymZeroPoint::FloatMin));
        assert_eq!(o.clamp_zero_point, Some(false));
        assert_eq!(o.quant_expr, Some(QuantExpr::Reciprocal));
        assert_eq!(o.code_clamp, Some(CodeClamp::Type));
        assert_eq!(o.non_finite, Some(NonFinite::NanToZero));
        assert_eq!(o.arith, Some(Arith::F32));
        assert_eq!(o.degenerate, Some(Degenerate::Epsilon));
        // Listing the settings and applying them again gives the same overrides.
        let listed = settings(&o);
        assert_eq!(listed.len(), SETTINGS.len());
        let mut again = Overrides::default();
        for (k, v) in &listed {
            apply_setting(&mut again, k, v).unwrap();
        }
        assert_eq!(again, o);
    }

    #[test]
    fn apply_setting_refuses_unknown_keys_and_bad_values() {
        let mut o = Overrides::default();
        let e = apply_setting(&mut o, "colour", "red").unwrap_err();
        assert!(matches!(e, NameError::UnknownSetting { .. }));
        assert!(e.to_string().contains("scheme, bits, signed"), "{e}");
        for (k, v) in [
            ("bits", "0"),
            ("bits", "17"),
            ("bits", "four"),
            ("signed", "maybe"),
            ("granularity", "group:0"),
            ("zero-point-bits", "33"),
            ("reduce-range", "yes"),
        ] {
            let e = apply_setting(&mut o, k, v).unwrap_err();
            assert!(
                matches!(&e, NameError::BadValue { what, .. } if *what == k),
                "{k}={v}: {e}"
            );
        }
        assert_eq!(o, Overrides::default(), "a refused value changes nothing");
        assert_eq!(settings(&Overrides::default()), vec![]);
    }
}
