//! Fuzzes the importance-matrix reader (GGUF and legacy `.dat`): any bytes must give an
//! imatrix or an `ImatrixError`, never a panic or an allocation beyond what the bytes
//! could hold; every entry of one that opens must read, or refuse, the same way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quantscope::io::imatrix::Imatrix;

fuzz_target!(|data: &[u8]| {
    let Ok(im) = Imatrix::parse("fuzz", data.to_vec()) else {
        return;
    };
    for e in im.entries() {
        if let Ok(r) = im.read(&e.name) {
            assert_eq!(r.values.len(), e.values);
        }
        let rows = e.matrices.max(1);
        let _ = im.importance(&e.name, (rows, e.columns()), None);
    }
});
