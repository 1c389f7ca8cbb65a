//! Fuzzes the `.npy` reader (its header parser and the size checks after it): any bytes must
//! load or give an `NpyError`, never panic or allocate beyond what the bytes can hold.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = quantscope::io::npy::parse_npy(data);
});
