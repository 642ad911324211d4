//! GPU semantics at tensor level: a transpose through shared memory with
//! `xla_gpu.sync_threads`, warp reductions (`xla_gpu.shuffle_reduce`, a `gpu.shuffle`
//! ladder), and the errors of broken kernels: missing barriers, out-of-bounds indices,
//! divergent barriers and shuffles, launches that break the IR's range promises.

use crate::common;

use common::{expect_error, f32s, run, to_f32s};
use interp::ErrorKind;

/// A 64x64 transpose by 32x32 tiles, one tile per block (4 blocks of 128 threads): the
/// first loop reads the input coalesced into a padded shared tile, the second reads the
/// tile transposed and writes the output coalesced (the seed's transpose emitter).
const TRANSPOSE: &str = r##"
#read = #xla_gpu.indexing_map<"(th, bl)[s] -> ((bl floordiv 2) * 32 + (th floordiv 32) * 8 + s, (bl mod 2) * 32 + th mod 32, (th floordiv 32) * 8 + s, 0, th mod 32), domain: th in [0, 127], bl in [0, 3], s in [0, 7]">
#write = #xla_gpu.indexing_map<"(th, bl)[s] -> ((bl mod 2) * 32 + (th floordiv 32) * 8 + s, (bl floordiv 2) * 32 + th mod 32, th mod 32, 0, (th floordiv 32) * 8 + s), domain: th in [0, 127], bl in [0, 3], s in [0, 7]">
func.func @main(%in: tensor<64x64xf32>, %out: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
  %bid = gpu.block_id  x {xla.range = [0 : index, 3 : index]}
  %shmem = xla_gpu.allocate_shared : tensor<32x1x33xf32>
  %tile = xla_gpu.loop (%tid, %bid)[%s] -> (%r, %c, %a, %b, %d) in #read iter_args(%iter = %shmem) -> (tensor<32x1x33xf32>) {
    %v = tensor.extract %in[%r, %c] : tensor<64x64xf32>
    %t = tensor.insert %v into %iter[%a, %b, %d] : tensor<32x1x33xf32>
    xla_gpu.yield %t : tensor<32x1x33xf32>
  }
  %synced = xla_gpu.sync_threads %tile : tensor<32x1x33xf32>
  %res = xla_gpu.loop (%tid, %bid)[%s] -> (%r, %c, %a, %b, %d) in #write iter_args(%iter = %out) -> (tensor<64x64xf32>) {
    %v = tensor.extract %synced[%a, %b, %d] : tensor<32x1x33xf32>
    %t = tensor.insert %v into %iter[%r, %c] : tensor<64x64xf32>
    xla_gpu.yield %t : tensor<64x64xf32>
  }
  return %res : tensor<64x64xf32>
}"##;

fn matrix() -> Vec<f32> {
    (0..64 * 64).map(|i| i as f32).collect()
}

#[test]
fn a_transpose_through_shared_memory() {
    let out = run(
        TRANSPOSE,
        4,
        128,
        vec![f32s(&matrix()), f32s(&[0.0; 64 * 64])],
    )
    .unwrap();
    let got = to_f32s(&out[1]);
    for i in 0..64 {
        for j in 0..64 {
            assert_eq!(got[i * 64 + j], (j * 64 + i) as f32, "out[{i}][{j}]");
        }
    }
}

#[test]
fn without_the_barrier_threads_read_uninitialized_shared_memory() {
    let text = TRANSPOSE
        .replace(
            "  %synced = xla_gpu.sync_threads %tile : tensor<32x1x33xf32>\n",
            "",
        )
        .replace("tensor.extract %synced", "tensor.extract %tile");
    // Thread 0 wrote column 0 of rows 0..7 itself; its second read (s = 1) is row 0,
    // column 1, which thread 1 has written only in its own view.
    expect_error(
        run(&text, 4, 128, vec![f32s(&matrix()), f32s(&[0.0; 64 * 64])]),
        ErrorKind::UninitializedRead,
        &[
            "read of 4 bytes at byte offset 4 of the shared tensor of line 7:3, which no thread has written",
            "test.mlir:14:",
            "'tensor.extract'",
            "(block 0, thread 0)",
        ],
    );
}

#[test]
fn an_out_of_bounds_index_names_the_op_and_the_thread() {
    let text = TRANSPOSE.replace(
        "((bl mod 2) * 32 + (th floordiv 32) * 8 + s, (bl floordiv 2)",
        "((bl mod 2) * 32 + (th floordiv 32) * 8 + s + 1, (bl floordiv 2)",
    );
    // Row 64 is first reached by block 1 (bl mod 2 = 1), thread 96 (rows 24..31), s = 7.
    expect_error(
        run(&text, 4, 128, vec![f32s(&matrix()), f32s(&[0.0; 64 * 64])]),
        ErrorKind::OutOfBounds,
        &[
            "index [64, 0] is out of bounds for 'tensor<64x64xf32>' (index 64 of dimension 0 of size 64)",
            "test.mlir:16:5",
            "'tensor.insert'",
            "(block 1, thread 96)",
        ],
    );
}

#[test]
fn a_launch_beyond_the_promised_range_is_reported() {
    expect_error(
        run(
            TRANSPOSE,
            4,
            256,
            vec![f32s(&matrix()), f32s(&[0.0; 64 * 64])],
        ),
        ErrorKind::UndefinedBehavior,
        &[
            "the value 128 is outside the range [0, 127]",
            "'gpu.thread_id'",
            "(block 0, thread 128)",
        ],
    );
}

/// Two warps each reduce their 32 inputs; lane 0 of each writes the sum.
const WARP_SUM: &str = r#"
func.func @main(%in: tensor<64xf32>, %out: tensor<2xf32>) -> tensor<2xf32> {
  %tid = gpu.thread_id  x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %v = tensor.extract %in[%tid] : tensor<64xf32>
  %sum = xla_gpu.shuffle_reduce(%v) to 16 combiner=@add : f32
  %lane = arith.remui %tid, %c32 : index
  %first = arith.cmpi eq, %lane, %c0 : index
  %warp = arith.divui %tid, %c32 : index
  %o = xla_gpu.predicated_insert %sum into %out[%warp] if %first : tensor<2xf32>
  return %o : tensor<2xf32>
}
func.func private @add(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  return %s : f32
}"#;

#[test]
fn shuffle_reduce_sums_a_warp() {
    let input: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let out = run(WARP_SUM, 1, 64, vec![f32s(&input), f32s(&[0.0; 2])]).unwrap();
    assert_eq!(to_f32s(&out[1]), [496.0, 1520.0]);
}

/// Every lane writes its `shuffle_reduce` to distance 2: the sum of its group of 4 lanes
/// (`l ^ 1`, `l ^ 2`), the op's semantics (`ir::dialects::xla_gpu`), which the row
/// normalization's fold across warps reads in every lane.
const GROUP_SUMS: &str = r#"
func.func @main(%in: tensor<32xf32>, %out: tensor<32xf32>) -> tensor<32xf32> {
  %tid = gpu.thread_id  x
  %v = tensor.extract %in[%tid] : tensor<32xf32>
  %sum = xla_gpu.shuffle_reduce(%v) to 2 combiner=@add : f32
  %o = tensor.insert %sum into %out[%tid] : tensor<32xf32>
  return %o : tensor<32xf32>
}
func.func private @add(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  return %s : f32
}"#;

#[test]
fn shuffle_reduce_gives_every_lane_its_groups_value() {
    let input: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let out = run(GROUP_SUMS, 1, 32, vec![f32s(&input), f32s(&[0.0; 32])]).unwrap();
    let want: Vec<f32> = (0..32).map(|l| (4 * (l / 4) * 4 + 6) as f32).collect();
    assert_eq!(to_f32s(&out[1]), want);
}

#[test]
fn a_butterfly_of_gpu_shuffles_gives_every_lane_the_sum() {
    // Step `k` adds the lane `offset` away (16, 8, 4, 2, 1): `%v{k + 1}` from `%v{k}`.
    let butterfly = [16, 8, 4, 2, 1]
        .iter()
        .enumerate()
        .map(|(k, offset)| {
            format!(
                "%c{offset} = arith.constant {offset} : i32
  %s{offset}, %ok{offset} = gpu.shuffle  xor %v{k}, %c{offset}, %w : i32
  %v{} = arith.addi %v{k}, %s{offset} : i32",
                k + 1
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ");
    let text = format!(
        r#"
func.func @main(%in: tensor<32xi32>, %out: tensor<32xi32>) -> tensor<32xi32> {{
  %tid = gpu.thread_id  x
  %w = arith.constant 32 : i32
  %v0 = tensor.extract %in[%tid] : tensor<32xi32>
  {butterfly}
  %down, %valid = gpu.shuffle  down %v0, %c16, %w : i32
  %valid32 = arith.extui %valid : i1 to i32
  %flag = arith.muli %valid32, %down : i32
  %r = arith.addi %v5, %flag : i32
  %o = tensor.insert %r into %out[%tid] : tensor<32xi32>
  return %o : tensor<32xi32>
}}"#
    );
    let input: Vec<i32> = (0..32).collect();
    let out = run(
        &text,
        1,
        32,
        vec![common::i32s(&input), common::i32s(&[0; 32])],
    )
    .unwrap();
    // Every lane has the sum 496; lanes below 16 add lane + 16 from the valid down shuffle.
    let want: Vec<i32> = (0..32)
        .map(|l| 496 + if l < 16 { l + 16 } else { 0 })
        .collect();
    assert_eq!(common::to_i32s(&out[1]), want);
}

#[test]
fn a_shuffle_some_lanes_skip_is_warp_divergence() {
    let text = WARP_SUM.replace(
        "%sum = xla_gpu.shuffle_reduce(%v) to 16 combiner=@add : f32",
        "%c16 = arith.constant 16 : index
  %low = arith.cmpi ult, %tid, %c16 : index
  %sum = scf.if %low -> (f32) {
    %s = xla_gpu.shuffle_reduce(%v) to 16 combiner=@add : f32
    scf.yield %s : f32
  } else {
    scf.yield %v : f32
  }",
    );
    let input: Vec<f32> = (0..64).map(|i| i as f32).collect();
    expect_error(
        run(&text, 1, 64, vec![f32s(&input), f32s(&[0.0; 2])]),
        ErrorKind::WarpDivergence,
        &[
            "lane 16 is in the shuffle's member mask 0xffffffff but does not execute it",
            "'xla_gpu.shuffle_reduce'",
        ],
    );
}

/// A barrier only threads below 16 reach.
const HALF_BARRIER: &str = r#"
func.func @main(%out: tensor<64xf32>) -> tensor<64xf32> {
  %tid = gpu.thread_id  x
  %c16 = arith.constant 16 : index
  %low = arith.cmpi ult, %tid, %c16 : index
  scf.if %low {
    gpu.barrier
  }
  return %out : tensor<64xf32>
}"#;

#[test]
fn a_barrier_some_threads_skip_is_barrier_divergence() {
    expect_error(
        run(HALF_BARRIER, 1, 64, vec![f32s(&[0.0; 64])]),
        ErrorKind::BarrierDivergence,
        &[
            "thread 0 waits at this barrier, but thread 16 has exited",
            "test.mlir:7:5",
            "'gpu.barrier'",
        ],
    );
    // Threads waiting at two different barriers diverge too.
    let two = HALF_BARRIER.replace(
        "    gpu.barrier\n  }",
        "    gpu.barrier\n  } else {\n    gpu.barrier\n  }",
    );
    expect_error(
        run(&two, 1, 64, vec![f32s(&[0.0; 64])]),
        ErrorKind::BarrierDivergence,
        &["thread 0 waits at this barrier while thread 16 waits at another ('gpu.barrier' at 9:5)"],
    );
    // With every thread at the barrier, the kernel completes.
    let all = HALF_BARRIER.replace(
        "%low = arith.cmpi ult, %tid, %c16",
        "%low = arith.cmpi uge, %tid, %c0",
    );
    let all = all.replace(
        "%c16 = arith.constant 16 : index",
        "%c0 = arith.constant 0 : index",
    );
    assert!(run(&all, 2, 64, vec![f32s(&[0.0; 64])]).is_ok());
}
