//! The pointer level (after `lower-tensors`): `llvm.getelementptr`/`load`/`store` over the
//! argument buffers, address space 3 globals as per-block shared memory, constant globals,
//! `nvvm` special registers, `nvvm.barrier0`, `nvvm.shfl.sync`, libdevice calls and
//! thread-private stack arrays (`llvm.alloca`).

use crate::common;

use common::{expect_error, f32s, run, to_f32s};
use interp::{Buffer, Error, ErrorKind};

/// Each block reverses its 32 elements through shared memory and scales them by a
/// constant table: `out[b * 32 + i] = in[b * 32 + 31 - i] * table[i mod 4]`.
const REVERSE: &str = r#"
module {
  llvm.mlir.global internal @shared_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x f32>
  llvm.mlir.global private constant @table(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
  llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {
    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 32> : i32
    %bid = nvvm.read.ptx.sreg.ctaid.x : i32
    %c32 = llvm.mlir.constant(32 : i32) : i32
    %base = arith.muli %bid, %c32 : i32
    %i = arith.addi %base, %tid : i32
    %p = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    %v = llvm.load %p invariant : !llvm.ptr -> f32
    %sh = llvm.mlir.addressof @shared_0 : !llvm.ptr<3>
    %q = llvm.getelementptr %sh[0, %tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<32 x f32>
    llvm.store %v, %q : f32, !llvm.ptr<3>
    nvvm.barrier0
    %c31 = llvm.mlir.constant(31 : i32) : i32
    %rev = arith.subi %c31, %tid : i32
    %q2 = llvm.getelementptr %sh[0, %rev] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<32 x f32>
    %w = llvm.load %q2 : !llvm.ptr<3> -> f32
    %c3 = llvm.mlir.constant(3 : i32) : i32
    %k = arith.andi %tid, %c3 : i32
    %tp = llvm.mlir.addressof @table : !llvm.ptr
    %tq = llvm.getelementptr %tp[0, %k] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.array<4 x f32>
    %t = llvm.load %tq : !llvm.ptr -> f32
    %x = arith.mulf %w, %t : f32
    %o = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    llvm.store %x, %o : f32, !llvm.ptr
    llvm.return
  }
}"#;

fn input() -> Vec<f32> {
    (0..64).map(|i| i as f32).collect()
}

/// Runs `text`, a variant of [`REVERSE`], on two blocks of `threads` over [`input`].
fn run_reverse(text: &str, threads: u64) -> Result<Vec<Buffer>, Error> {
    run(text, 2, threads, vec![f32s(&input()), f32s(&[0.0; 64])])
}

#[test]
fn shared_memory_globals_and_barriers_at_the_pointer_level() {
    let out = run_reverse(REVERSE, 32).unwrap();
    let want: Vec<f32> = (0..64)
        .map(|j| {
            let (b, i) = (j / 32, j % 32);
            (b * 32 + 31 - i) as f32 * (i % 4 + 1) as f32
        })
        .collect();
    assert_eq!(to_f32s(&out[1]), want);
    // Inputs are untouched.
    assert_eq!(to_f32s(&out[0]), input());
}

#[test]
fn without_the_barrier_shared_memory_is_read_before_it_is_written() {
    let text = REVERSE.replace("    nvvm.barrier0\n", "");
    expect_error(
        run_reverse(&text, 32),
        ErrorKind::UninitializedRead,
        &[
            "byte offset 124 of @shared_0, which no thread has written",
            "'llvm.load'",
            "(block 0, thread 0)",
        ],
    );
}

#[test]
fn pointer_accesses_outside_their_buffer_are_reported() {
    let text = REVERSE.replace(
        "%p = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr, i32) -> !llvm.ptr, f32",
        "%p0 = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr, i32) -> !llvm.ptr, f32\n    %p = llvm.getelementptr inbounds %p0[1] : (!llvm.ptr) -> !llvm.ptr, f32",
    );
    expect_error(
        run_reverse(&text, 32),
        ErrorKind::OutOfBounds,
        &[
            "access of 4 bytes at byte offset 256 is outside argument #0 (256 bytes)",
            "'llvm.load'",
            "(block 1, thread 31)",
        ],
    );
    let text = REVERSE.replace(
        "llvm.store %v, %q : f32, !llvm.ptr<3>",
        "llvm.store %v, %q : f32, !llvm.ptr<3>\n    llvm.store %v, %tq0 : f32, !llvm.ptr\n",
    );
    let text = text.replace(
        "%sh = llvm.mlir.addressof @shared_0",
        "%tq0 = llvm.mlir.addressof @table : !llvm.ptr\n    %sh = llvm.mlir.addressof @shared_0",
    );
    expect_error(
        run_reverse(&text, 32),
        ErrorKind::UndefinedBehavior,
        &["store to the constant @table", "'llvm.store'"],
    );
}

/// Vector loads and stores of four floats per thread.
const VECTORS: &str = r#"
llvm.func @main(%in: !llvm.ptr {llvm.dereferenceable = 64 : i64}, %out: !llvm.ptr) {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c4 = llvm.mlir.constant(4 : i32) : i32
  %i = arith.muli %tid, %c4 : i32
  %p = llvm.getelementptr inbounds %in[%i] : (!llvm.ptr, i32) -> !llvm.ptr, f32
  %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %two = arith.constant dense<2.0> : vector<4xf32>
  %w = arith.mulf %v, %two : vector<4xf32>
  %o = llvm.getelementptr inbounds %out[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, vector<4xf32>
  llvm.store %w, %o {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}"#;

#[test]
fn vector_loads_and_stores_check_their_alignment() {
    let input: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let out = run(VECTORS, 1, 4, vec![f32s(&input), f32s(&[0.0; 16])]).unwrap();
    let want: Vec<f32> = input.iter().map(|x| x * 2.0).collect();
    assert_eq!(to_f32s(&out[1]), want);
    // The input parameter promises 64 readable bytes.
    expect_error(
        run(VECTORS, 1, 2, vec![f32s(&input[..8]), f32s(&[0.0; 16])]),
        ErrorKind::InvalidArgument,
        &["argument #0 has 32 bytes but the kernel may read 64 (llvm.dereferenceable)"],
    );
    // Off by one element, the 16-byte vector load is misaligned.
    let text = VECTORS.replace("%i = arith.muli %tid, %c4 : i32", "%m = arith.muli %tid, %c4 : i32\n  %one = arith.constant 1 : i32\n  %i = arith.addi %m, %one : i32");
    expect_error(
        run(&text, 1, 4, vec![f32s(&input), f32s(&[0.0; 16])]),
        ErrorKind::Misaligned,
        &[
            "load of vector<4xf32> at byte offset 4 of argument #0 needs 16-byte alignment",
            "'llvm.load'",
        ],
    );
}

#[test]
fn nvvm_shuffles_and_libdevice_calls() {
    let text = r#"
module {
  llvm.func @__nv_tanhf(f32) -> f32
  llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {
    %tid = nvvm.read.ptx.sreg.laneid : i32
    %p = llvm.getelementptr inbounds %in[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    %v = llvm.load %p : !llvm.ptr -> f32
    %mask = llvm.mlir.constant(-1 : i32) : i32
    %clamp = llvm.mlir.constant(31 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %x = nvvm.shfl.sync  bfly %mask, %v, %c1, %clamp : f32 -> f32
    %s = arith.addf %v, %x : f32
    %t = llvm.call @__nv_tanhf(%s) : (f32) -> f32
    %o = llvm.getelementptr inbounds %out[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    llvm.store %t, %o : f32, !llvm.ptr
    llvm.return
  }
}"#;
    let input: Vec<f32> = (0..32).map(|i| i as f32 / 64.0).collect();
    let out = run(text, 1, 32, vec![f32s(&input), f32s(&[0.0; 32])]).unwrap();
    let want: Vec<f32> = (0..32)
        .map(|l: usize| (input[l] + input[l ^ 1]).tanh())
        .collect();
    assert_eq!(to_f32s(&out[1]), want);
}

#[test]
fn special_register_ranges_are_promises() {
    expect_error(
        run_reverse(REVERSE, 33),
        ErrorKind::UndefinedBehavior,
        &[
            "the value 32 is outside the range [0, 31]",
            "'nvvm.read.ptx.sreg.tid.x'",
            "(block 0, thread 32)",
        ],
    );
}

#[test]
fn shuffles_outside_their_member_mask_are_warp_divergence() {
    let text = r#"
llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {
  %tid = nvvm.read.ptx.sreg.laneid : i32
  %p = llvm.getelementptr inbounds %in[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
  %v = llvm.load %p : !llvm.ptr -> f32
  %mask = llvm.mlir.constant(65535 : i32) : i32
  %clamp = llvm.mlir.constant(31 : i32) : i32
  %c16 = llvm.mlir.constant(16 : i32) : i32
  %x = nvvm.shfl.sync  bfly %mask, %v, %c16, %clamp : f32 -> f32
  %o = llvm.getelementptr inbounds %out[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
  llvm.store %x, %o : f32, !llvm.ptr
  llvm.return
}"#;
    expect_error(
        run(text, 1, 16, vec![f32s(&[0.0; 16]), f32s(&[0.0; 16])]),
        ErrorKind::WarpDivergence,
        &[
            "lane 0 reads lane 16, outside the shuffle's member mask 0x0000ffff",
            "'nvvm.shfl.sync'",
        ],
    );
    let neighbours = text.replace("(16 : i32)", "(1 : i32)");
    expect_error(
        run(&neighbours, 1, 32, vec![f32s(&[0.0; 32]), f32s(&[0.0; 32])]),
        ErrorKind::WarpDivergence,
        &["lane 16 executes a shuffle whose member mask 0x0000ffff excludes it"],
    );
    expect_error(
        run(text, 1, 2048, vec![f32s(&[0.0; 32]), f32s(&[0.0; 32])]),
        ErrorKind::InvalidArgument,
        &["blocks of 2048 threads (a GPU block has at most 1024)"],
    );
}

/// Each thread reverses four values through its own stack array (`llvm.alloca`), as
/// libdevice's argument reduction keeps its partial products; lifetime markers are no-ops.
/// (Written in MLIR's generic form, as the import of O3's module prints them.)
fn stack() -> String {
    // Lane `k` of the four: `in[4 * tid + k]` into slot `k`, and slot `3 - k` out to
    // `out[4 * tid + k]`.
    let lanes = |lane: fn(usize) -> String| (0..4).map(lane).collect::<Vec<_>>().join("\n    ");
    let stores = lanes(|k| {
        format!(
            "%i{k} = arith.addi %base, %c{k} : i32
    %p{k} = llvm.getelementptr inbounds %in[%i{k}] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    %v{k} = llvm.load %p{k} : !llvm.ptr -> f32
    %s{k} = llvm.getelementptr %slots[0, %c{k}] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.array<4 x f32>
    llvm.store %v{k}, %s{k} : f32, !llvm.ptr"
        )
    });
    let loads = lanes(|k| {
        format!(
            "%w{k} = llvm.load %s{} : !llvm.ptr -> f32
    %o{k} = llvm.getelementptr inbounds %out[%i{k}] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    llvm.store %w{k}, %o{k} : f32, !llvm.ptr",
            3 - k
        )
    });
    format!(
        r#"
module {{
  llvm.func @main(%in: !llvm.ptr, %out: !llvm.ptr) {{
    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 8> : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %slots = "llvm.alloca"(%one) <{{alignment = 4 : i64, elem_type = !llvm.array<4 x f32>}}> : (i32) -> !llvm.ptr
    "llvm.intr.lifetime.start"(%slots) : (!llvm.ptr) -> ()
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %c2 = llvm.mlir.constant(2 : i32) : i32
    %c3 = llvm.mlir.constant(3 : i32) : i32
    %c4 = llvm.mlir.constant(4 : i32) : i32
    %base = arith.muli %tid, %c4 : i32
    {stores}
    {loads}
    "llvm.intr.lifetime.end"(%slots) : (!llvm.ptr) -> ()
    llvm.return
  }}
}}"#
    )
}

/// [`stack`] with an alloca of `count` arrays instead of one.
fn stack_of(count: i32) -> String {
    stack().replace(
        "%slots = \"llvm.alloca\"(%one)",
        &format!(
            "%count = llvm.mlir.constant({count} : i32) : i32\n    %slots = \"llvm.alloca\"(%count)"
        ),
    )
}

/// Runs `text`, a variant of [`stack`], on one block of 8 threads over zeros.
fn run_stack(text: &str) -> Result<Vec<Buffer>, Error> {
    run(text, 1, 8, vec![f32s(&[0.0; 32]), f32s(&[0.0; 32])])
}

#[test]
fn stack_arrays_are_private_to_each_thread() {
    let input: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let out = run(&stack(), 1, 8, vec![f32s(&input), f32s(&[0.0; 32])]).unwrap();
    let want: Vec<f32> = (0..32).map(|j| (j / 4 * 4 + 3 - j % 4) as f32).collect();
    assert_eq!(to_f32s(&out[1]), want);
}

#[test]
fn stack_arrays_past_the_per_thread_limit_are_refused() {
    expect_error(
        run_stack(&stack_of(1000000)),
        ErrorKind::TooLarge,
        &[
            "'llvm.alloca' of 1000000 x 16 bytes",
            "524288 bytes of stack",
        ],
    );
}

#[test]
fn stack_arrays_of_a_negative_or_zero_count_are_errors() {
    expect_error(
        run_stack(&stack_of(-3)),
        ErrorKind::TooLarge,
        &["'llvm.alloca' of -3 x 16 bytes"],
    );
    // An empty slot holds nothing: the first store into it is out of its bounds.
    let result = run_stack(&stack_of(0));
    assert!(
        result.is_err(),
        "a store into an empty stack slot must fail"
    );
}

#[test]
fn stack_arrays_start_uninitialized() {
    let text = stack().replace("    llvm.store %v3, %s3 : f32, !llvm.ptr\n", "");
    expect_error(
        run_stack(&text),
        ErrorKind::UninitializedRead,
        &["stack slot #0"],
    );
}
