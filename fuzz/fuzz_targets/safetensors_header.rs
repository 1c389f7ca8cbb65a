//! Fuzzes the safetensors header parser: any bytes, and any claimed file length, must give
//! a validated header or a `HeaderError`, never a panic; a header that parses must describe
//! tensors that fit the claimed file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quantscope::io::safetensors::parse_header;

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    if let Ok(h) = parse_header(data, len) {
        assert!(h.data_start <= len && h.data_start + h.data_len == len);
        for t in &h.tensors {
            assert!(t.data_offsets.0 <= t.data_offsets.1 && t.data_offsets.1 <= h.data_len);
        }
    }
    // The file may be longer than the bytes at hand (only the header is read first).
    let _ = parse_header(
        data,
        len.saturating_add(u64::from(data.first().copied().unwrap_or(0)) << 20),
    );
});
