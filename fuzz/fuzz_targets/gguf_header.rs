//! Fuzzes the GGUF header parser: any bytes, and any claimed file length, must give a
//! validated header or a `ParseError`, never a panic or an allocation beyond what the file
//! could hold; a header that parses must place every tensor inside the claimed file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quantscope::io::gguf::parse_header;

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    if let Ok(h) = parse_header(data, len) {
        assert!(h.data_start <= len && h.data_start + h.data_len == len);
        for t in &h.tensors {
            assert!(t.offset % h.alignment == 0);
            assert!(t.offset + t.bytes <= h.data_len);
        }
    }
    // The file may be longer than the bytes at hand (the data section is not read here).
    let _ = parse_header(
        data,
        len.saturating_add(u64::from(data.first().copied().unwrap_or(0)) << 20),
    );
});
