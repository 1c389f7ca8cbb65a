//! Fuzzes the channel-text parser: any text must parse or give a `ParseError`, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(m) = quantscope::io::text::parse_text(text) {
            // What parses formats back into text that parses to the same matrix.
            let again = quantscope::io::text::parse_text(&quantscope::io::text::format_text(&m));
            assert_eq!(again.ok().map(|a| a.shape()), Some(m.shape()));
        }
    }
});
