//! Fuzzes the reading of `.npy` activations: any bytes must give a `(tokens, width)` whose
//! values the bytes hold, or an error, never a panic; a shape that is accepted reads back
//! from the same bytes as a matrix of as many values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quantscope::io::activations::npy_tokens;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((tokens, width))) = npy_tokens(data) {
        assert!(width >= 1);
        // At least one byte per value, and the matrix reader agrees on the count.
        assert!(tokens.saturating_mul(width) <= data.len());
        if let Ok(m) = quantscope::io::parse_npy(data) {
            let (r, c) = m.shape();
            assert_eq!(r * c, tokens * width);
        }
    }
});
