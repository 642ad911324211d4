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

/// A buffer of `values`, each as its little-endian bytes (`to_le_bytes`).
fn le_buffer<T: Copy, const N: usize>(values: &[T], to_le: fn(T) -> [u8; N]) -> Buffer {
    Buffer::new(values.iter().flat_map(|&v| to_le(v)).collect())
}

/// The values of a buffer of `N`-byte little-endian elements (`from_le_bytes`).
fn le_values<T, const N: usize>(b: &Buffer, from_le: fn([u8; N]) -> T) -> Vec<T> {
    b.bytes()
        .chunks(N)
        .map(|c| from_le(c.try_into().unwrap()))
        .collect()
}

pub fn f32s(values: &[f32]) -> Buffer {
    le_buffer(values, f32::to_le_bytes)
}

pub fn to_f32s(b: &Buffer) -> Vec<f32> {
    le_values(b, f32::from_le_bytes)
}

pub fn i32s(values: &[i32]) -> Buffer {
    le_buffer(values, i32::to_le_bytes)
}

pub fn to_i32s(b: &Buffer) -> Vec<i32> {
    le_values(b, i32::from_le_bytes)
}

pub fn i64s(values: &[i64]) -> Buffer {
    le_buffer(values, i64::to_le_bytes)
}

pub fn to_i64s(b: &Buffer) -> Vec<i64> {
    le_values(b, i64::from_le_bytes)
}

/// The seed's GELU model (`testdata/models/gelu.hlo`) on `bf16[2,64,16]` instead of
/// `bf16[6,512,4096]`: small enough to interpret in a test.
pub fn small_gelu_hlo() -> String {
    std::fs::read_to_string(testkit::testdata("models/gelu.hlo"))
        .unwrap()
        .replace("6,512,4096", "2,64,16")
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

/// Runs `emitted`'s `@main` in the interpreter on `args` (the evaluator's arguments of
/// `computation`'s parameters) and returns its outputs, one array per output leaf. An
/// output written in place starts as its parameter (XLA aliases the two), the others as
/// bytes of `fill` (0xff shows an element the kernel never writes). Panics with the
/// emitted module when the interpreter fails.
pub fn run_emitted(
    computation: &hlo::Computation,
    emitted: &emitters::EmittedFusion,
    args: &[hlo::evaluate::HostValue],
    fill: u8,
) -> Vec<hlo::evaluate::HostArray> {
    let mut buffers = parameter_buffers(computation, args);
    let outputs = emitters::types::leaves(&computation.instruction(computation.root).shape);
    for (k, shape) in outputs.iter().enumerate() {
        match emitted.kernel.in_place.iter().find(|&&(o, _)| o == k) {
            Some(&(_, param)) => buffers.push(buffers[param].clone()),
            None => {
                let bits = shape.element_count() as usize * shape.element_type.bit_width() as usize;
                buffers.push(Buffer::new(vec![fill; bits.div_ceil(8)]));
            }
        }
    }
    let launch = Launch {
        blocks: emitted.kernel.launch.blocks,
        threads: emitted.kernel.launch.threads_per_block,
    };
    let kernel = Kernel::compile(&emitted.module, "main").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kernel.num_params(), buffers.len());
    let run = kernel
        .run(launch, buffers)
        .unwrap_or_else(|e| panic!("{e}\n{}", emitted.module.print()));
    outputs
        .iter()
        .enumerate()
        .map(|(k, shape)| run.buffers[args.len() + k].to_host_array(shape).unwrap())
        .collect()
}

/// Asserts that the interpreter's outputs are the evaluator's, element for element and
/// bit for bit (their printed forms, so that NaNs compare by payload and zeros by sign).
pub fn assert_bit_identical(
    got: &[hlo::evaluate::HostArray],
    want: &[hlo::evaluate::HostArray],
    context: &str,
) {
    assert_eq!(got.len(), want.len(), "{context}");
    for (k, (got, want)) in got.iter().zip(want).enumerate() {
        assert_eq!(got.dims(), want.dims(), "{context}");
        for i in 0..want.len() {
            let (g, w) = (got.value(i), want.value(i));
            assert!(
                format!("{g:?}") == format!("{w:?}"),
                "{context}output {k} element {i}: interpreter {g:?}, evaluator {w:?}"
            );
        }
    }
}
