//! Deep inputs do not overflow the compiler's stack: a loop fusion of a 10,000-op chain
//! (each op using the previous one) compiles to PTX through the `hlo-emit` binary.

use std::io::Write;
use std::process::{Command, Stdio};

/// An elementwise chain of `ops` ops on f32[64,64]: add, multiply and exponential in turn.
fn chain(ops: usize) -> String {
    let shape = "f32[64,64]";
    let mut text = format!("fused {{\n  p = {shape} parameter(0)\n");
    let mut previous = "p".to_string();
    for i in 0..ops {
        let root = if i + 1 == ops { "ROOT " } else { "" };
        let op = match i % 3 {
            0 => format!("add({previous}, p)"),
            1 => format!("multiply({previous}, p)"),
            _ => format!("exponential({previous})"),
        };
        text.push_str(&format!("  {root}v{i} = {shape} {op}\n"));
        previous = format!("v{i}");
    }
    text + "}\n"
}

#[test]
fn a_ten_thousand_op_chain_compiles_to_ptx() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hlo-emit"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(chain(10_000).as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let ptx = String::from_utf8_lossy(&out.stdout);
    assert!(ptx.contains(".entry fused("), "{ptx}");
}
