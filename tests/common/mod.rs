//! Helpers shared by integration tests (a test file that needs them says `mod common;`).

/// A `.safetensors` file holding `tensors` (name, dtype name, shape, raw little-endian bytes):
/// the header in the order given, the data back to back.
pub fn safetensors_bytes(tensors: &[(&str, &str, &[u64], Vec<u8>)]) -> Vec<u8> {
    let mut entries = Vec::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let begin = data.len();
        data.extend_from_slice(bytes);
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape:?},\"data_offsets\":[{begin},{}]}}",
            data.len()
        ));
    }
    let header = format!("{{{}}}", entries.join(","));
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&data);
    out
}
