//! Helpers shared by the interpreter's tests: parsing IR text, typed buffers, running.

#![allow(dead_code)] // each test file uses its own subset

use interp::{Buffer, Error, Kernel, Launch};

/// Parses IR text named `test.mlir` (so errors read `test.mlir:LINE:COL`).
pub fn parse(text: &str) -> ir::Module {
    ir::parse_module_with(text, "test.mlir", ir::Registry::standard())
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Runs `@main` of `text` on `args`; returns the argument buffers afterwards.
pub fn run(text: &str, blocks: u64, threads: u64, args: Vec<Buffer>) -> Result<Vec<Buffer>, Error> {
    let m = parse(text);
    m.verify().unwrap_or_else(|e| panic!("{e}\n{text}"));
    Kernel::compile(&m, "main")?
        .run(Launch { blocks, threads }, args)
        .map(|r| r.buffers)
}

pub fn f32s(values: &[f32]) -> Buffer {
    Buffer::new(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

pub fn to_f32s(b: &Buffer) -> Vec<f32> {
    b.bytes()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn i32s(values: &[i32]) -> Buffer {
    Buffer::new(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

pub fn to_i32s(b: &Buffer) -> Vec<i32> {
    b.bytes()
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn i64s(values: &[i64]) -> Buffer {
    Buffer::new(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

pub fn to_i64s(b: &Buffer) -> Vec<i64> {
    b.bytes()
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Asserts that `r` failed with `kind` and that its message contains each of `parts`.
pub fn expect_error<T: std::fmt::Debug>(
    r: Result<T, Error>,
    kind: interp::ErrorKind,
    parts: &[&str],
) -> Error {
    let e = r.expect_err("the interpreter should report an error");
    let text = e.to_string();
    assert_eq!(e.kind, kind, "{text}");
    for p in parts {
        assert!(text.contains(p), "'{p}' missing from: {text}");
    }
    e
}

/// One buffer per array leaf of `computation`'s parameters, holding `args` (the evaluator's
/// arguments) in each parameter's layout: the kernel's input arguments.
pub fn parameter_buffers(
    computation: &hlo::Computation,
    args: &[hlo::evaluate::HostValue],
) -> Vec<Buffer> {
    let params: Vec<hlo::ArrayShape> = computation
        .parameters()
        .into_iter()
        .flat_map(|p| emitters::types::leaves(&computation.instruction(p).shape))
        .cloned()
        .collect();
    args.iter()
        .zip(&params)
        .map(|(a, shape)| {
            Buffer::from_host_array(a.as_array().unwrap(), shape.layout.as_ref()).unwrap()
        })
        .collect()
}
