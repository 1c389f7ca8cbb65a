//! The real binary as a user runs it: arguments, optional standard input, its output.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `quantscope args` with nothing on standard input.
pub fn quantscope(args: &[&str]) -> Output {
    quantscope_with_input(args, None)
}

/// Runs `quantscope args` with `stdin` on standard input (`None`: closed at once).
pub fn quantscope_with_input(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(args)
        // No config file of the person running the tests.
        .env("QUANTSCOPE_CONFIG", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        // The binary may stop reading early (oversized input): a broken pipe is fine.
        let _ = input.write_all(bytes);
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// Output bytes as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `quantscope args` and requires a refusal: exit status 2, nothing on standard output
/// and a message starting with `error` on standard error, which it returns.
pub fn assert_refused(args: &[&str]) -> String {
    let o = quantscope(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    assert!(err.starts_with("error"), "{args:?}: {err}");
    err
}

/// Runs `quantscope args`, requires success, and parses standard output as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    let o = quantscope(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}
