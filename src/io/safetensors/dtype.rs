//! The element types safetensors defines: the `safetensors` crate's own [`Dtype`], with the
//! few facts quantscope needs about one.

pub use safetensors::Dtype;

/// The dtype a header names, if safetensors defines it (through the crate's own names).
#[must_use]
pub fn parse_dtype(name: &str) -> Option<Dtype> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
}

/// Size of one value in bits.
#[must_use]
pub fn bits(dtype: Dtype) -> u64 {
    dtype.bitsize() as u64
}

/// True for the floating types quantscope loads: F16, BF16, F32 and F64.
#[must_use]
pub fn is_loadable(dtype: Dtype) -> bool {
    matches!(dtype, Dtype::F16 | Dtype::BF16 | Dtype::F32 | Dtype::F64)
}
