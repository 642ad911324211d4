//! Tensors and vectors: value semantics, constants, `tensor.empty`, layouts, vector
//! transfers with padding and masking, and how threads' writes to the outputs combine.

use crate::common;

use common::{expect_error, f32s, run, to_f32s};
use interp::{Buffer, ErrorKind};

#[test]
fn tensors_are_values_and_constants_are_not_modified() {
    // The loop inserts into the same constant each iteration: every iteration starts from
    // the constant, so only the last iteration's write survives.
    let text = r#"
func.func @main(%out: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %k) -> (tensor<4xf32>) {
    %fresh = tensor.insert %zero into %k[%i] : tensor<4xf32>
    %v = tensor.extract %fresh[%c0] : tensor<4xf32>
    %w = tensor.extract %acc[%i] : tensor<4xf32>
    %s = arith.addf %v, %w : f32
    %next = tensor.insert %s into %acc[%i] : tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  %o = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<4xf32>) {
    %v = tensor.extract %t[%i] : tensor<4xf32>
    %next = tensor.insert %v into %acc[%i] : tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  return %o : tensor<4xf32>
}"#;
    let out = run(text, 1, 1, vec![f32s(&[0.0; 4])]).unwrap();
    // Element 0: 0 (fresh[0] zeroed) + 1; the others: fresh[0] (1) + k[i].
    assert_eq!(to_f32s(&out[0]), [1.0, 3.0, 4.0, 5.0]);
}

#[test]
fn reading_an_unwritten_element_of_tensor_empty_is_an_error() {
    let text = r#"
func.func @main(%out: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %a = tensor.insert %one into %e[%c0] : tensor<2xf32>
  %x = tensor.extract %a[%c0] : tensor<2xf32>
  %y = tensor.extract %a[%c1] : tensor<2xf32>
  %o = tensor.insert %y into %out[%c0] : tensor<2xf32>
  return %o : tensor<2xf32>
}"#;
    expect_error(
        run(text, 1, 1, vec![f32s(&[0.0; 2])]),
        ErrorKind::UninitializedRead,
        &[
            "element 1 of a 'tensor<2xf32>' from tensor.empty",
            "test.mlir:9:3",
            "'tensor.extract'",
        ],
    );
}

#[test]
fn laid_out_tensors_read_their_physical_positions() {
    // A 2x3 column-major input: element (i, j) sits at j * 2 + i. The kernel transposes
    // it into a row-major 3x2 output.
    let text = r#"
func.func @main(%in: tensor<2x3xf32, #xla.layout<"{0,1}">>, %out: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %o = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %out) -> (tensor<3x2xf32>) {
    %r = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %a) -> (tensor<3x2xf32>) {
      %v = tensor.extract %in[%i, %j] : tensor<2x3xf32, #xla.layout<"{0,1}">>
      %w = tensor.insert %v into %b[%j, %i] : tensor<3x2xf32>
      scf.yield %w : tensor<3x2xf32>
    }
    scf.yield %r : tensor<3x2xf32>
  }
  return %o : tensor<3x2xf32>
}"#;
    // Physical input [a00, a10, a01, a11, a02, a12] = [0, 1, 2, 3, 4, 5]: a(i, j) = 2j + i.
    let out = run(
        text,
        1,
        1,
        vec![f32s(&[0., 1., 2., 3., 4., 5.]), f32s(&[0.0; 6])],
    )
    .unwrap();
    // out(j, i) = a(i, j), row-major: [a00, a10, a01, a11, a02, a12].
    assert_eq!(to_f32s(&out[1]), [0., 1., 2., 3., 4., 5.]);
}

#[test]
fn vector_transfers_pad_mask_and_permute() {
    let text = r#"
#col = affine_map<(d0, d1) -> (d0)>
func.func @main(%in: tensor<3x4xf32>, %out: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c14 = arith.constant 14 : index
  %pad = arith.constant -1.0 : f32
  %row = vector.transfer_read %in[%c2, %c2], %pad {in_bounds = [false]} : tensor<3x4xf32>, vector<4xf32>
  %col = vector.transfer_read %in[%c1, %c1], %pad {permutation_map = #col, in_bounds = [false]} : tensor<3x4xf32>, vector<4xf32>
  %w0 = vector.transfer_write %row, %out[%c0] {in_bounds = [true]} : vector<4xf32>, tensor<16xf32>
  %w1 = vector.transfer_write %col, %w0[%c4] {in_bounds = [true]} : vector<4xf32>, tensor<16xf32>
  %x = vector.insert %pad, %col [0] : f32 into vector<4xf32>
  %w2 = vector.transfer_write %x, %w1[%c8] {in_bounds = [true]} : vector<4xf32>, tensor<16xf32>
  %w3 = vector.transfer_write %row, %w2[%c14] {in_bounds = [false]} : vector<4xf32>, tensor<16xf32>
  return %w3 : tensor<16xf32>
}"#;
    let input: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let out = run(text, 1, 1, vec![f32s(&input), f32s(&[0.0; 16])]).unwrap();
    assert_eq!(
        to_f32s(&out[1]),
        [
            10., 11., -1., -1., // row 2 from column 2, padded
            5., 9., -1., -1., // column 1 from row 1, padded
            -1., 9., -1., -1., // the column with lane 0 replaced
            0., 0., 10., 11., // lanes past the end dropped
        ]
    );
    let oob = text.replace(
        "%w3 = vector.transfer_write %row, %w2[%c14] {in_bounds = [false]}",
        "%w3 = vector.transfer_write %row, %w2[%c14] {in_bounds = [true]}",
    );
    expect_error(
        run(&oob, 1, 1, vec![f32s(&input), f32s(&[0.0; 16])]),
        ErrorKind::OutOfBounds,
        &[
            "index [16] is out of bounds for 'tensor<16xf32>'",
            "'vector.transfer_write'",
        ],
    );
}

#[test]
fn vector_extract_insert_and_broadcast_in_two_dimensions() {
    let text = r#"
func.func @main(%out: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant dense<[1.0, 2.0]> : vector<2xf32>
  %b = vector.broadcast %k : vector<2xf32> to vector<2x2xf32>
  %ones = arith.constant dense<[[5.0], [6.0]]> : vector<2x1xf32>
  %s = vector.broadcast %ones : vector<2x1xf32> to vector<2x2xf32>
  %sum = arith.addf %b, %s : vector<2x2xf32>
  %row1 = vector.extract %sum[%c1] : vector<2xf32> from vector<2x2xf32>
  %seven = arith.constant 7.0 : f32
  %row = vector.insert %seven, %row1 [1] : f32 into vector<2xf32>
  %m = vector.insert %row, %sum [0] : vector<2xf32> into vector<2x2xf32>
  %e = vector.extract %m[1, 0] : f32 from vector<2x2xf32>
  %flat0 = vector.extract %m[0] : vector<2xf32> from vector<2x2xf32>
  %flat1 = vector.extract %m[1] : vector<2xf32> from vector<2x2xf32>
  %w0 = vector.transfer_write %flat0, %out[%c0] {in_bounds = [true]} : vector<2xf32>, tensor<8xf32>
  %c2 = arith.constant 2 : index
  %w1 = vector.transfer_write %flat1, %w0[%c2] {in_bounds = [true]} : vector<2xf32>, tensor<8xf32>
  %c4 = arith.constant 4 : index
  %w2 = tensor.insert %e into %w1[%c4] : tensor<8xf32>
  return %w2 : tensor<8xf32>
}"#;
    let out = run(text, 1, 1, vec![f32s(&[0.0; 8])]).unwrap();
    // sum = [[6, 7], [7, 8]]; row 0 becomes [7, 7] (row 1 with lane 1 set to 7).
    assert_eq!(to_f32s(&out[0]), [7., 7., 7., 8., 7., 0., 0., 0.]);
}

/// Each thread writes `f(thread)` to element `g(thread)` of the output.
fn scatter(value: &str, index: &str) -> String {
    format!(
        r#"
func.func @main(%out: tensor<8xf32>) -> tensor<8xf32> {{
  %tid = gpu.thread_id  x
  %c2 = arith.constant 2 : index
  %i = {index}
  %ti = arith.index_cast %tid : index to i32
  %tf = arith.sitofp %ti : i32 to f32
  %v = {value}
  %o = tensor.insert %v into %out[%i] : tensor<8xf32>
  return %o : tensor<8xf32>
}}"#
    )
}

#[test]
fn threads_writes_to_the_output_combine() {
    let text = scatter("arith.addf %tf, %tf : f32", "arith.addi %tid, %tid : index");
    let out = run(&text, 1, 4, vec![f32s(&[-1.0; 8])]).unwrap();
    assert_eq!(to_f32s(&out[0]), [0., -1., 2., -1., 4., -1., 6., -1.]);
    // Two threads writing the same value to one element agree.
    let text = scatter("arith.constant 3.0 : f32", "arith.remui %tid, %c2 : index");
    let out = run(&text, 1, 4, vec![f32s(&[0.0; 8])]).unwrap();
    assert_eq!(to_f32s(&out[0]), [3., 3., 0., 0., 0., 0., 0., 0.]);
}

#[test]
fn different_values_for_one_element_are_a_write_conflict() {
    let text = scatter("arith.addf %tf, %tf : f32", "arith.remui %tid, %c2 : index");
    expect_error(
        run(&text, 1, 4, vec![f32s(&[0.0; 8])]),
        ErrorKind::WriteConflict,
        &[
            "this thread writes 4 to element 0 of argument #0, which thread 0 of block 0 wrote as 0",
            "'func.return'",
            "(block 0, thread 2)",
        ],
    );
}

#[test]
fn results_must_be_the_outputs_updated_in_place() {
    let text = r#"
func.func @main(%in: tensor<2xf32>, %out: tensor<2xf32>) -> tensor<2xf32> {
  return %in : tensor<2xf32>
}"#;
    expect_error(
        run(text, 1, 1, vec![f32s(&[0.0; 2]), f32s(&[0.0; 2])]),
        ErrorKind::Unsupported,
        &["result #0 is not parameter #1 updated in place"],
    );
    let wrong_size = run(text, 1, 1, vec![f32s(&[0.0; 3]), f32s(&[0.0; 2])]);
    expect_error(
        wrong_size,
        ErrorKind::InvalidArgument,
        &["argument #0 has 12 bytes but 'tensor<2xf32>' needs 8"],
    );
}

#[test]
fn a_loop_may_yield_one_iter_arg_twice() {
    // The yield reads %a for both iter args; moving it into the second must not leave the
    // first empty for the next iteration.
    let text = r#"
func.func @main(%out: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %out, %b = %out) -> (tensor<2xf32>, tensor<2xf32>) {
    %x = tensor.extract %a[%c0] : tensor<2xf32>
    %y = arith.addf %x, %one : f32
    %a2 = tensor.insert %y into %a[%c0] : tensor<2xf32>
    %z = tensor.extract %b[%c1] : tensor<2xf32>
    scf.yield %a2, %a2 : tensor<2xf32>, tensor<2xf32>
  }
  %v = tensor.extract %r#0[%c0] : tensor<2xf32>
  %res = tensor.insert %v into %r#1[%c1] : tensor<2xf32>
  return %res : tensor<2xf32>
}"#;
    let out = Buffer::for_tensor(ir::parse_type("tensor<2xf32>").unwrap()).unwrap();
    assert_eq!(out.len(), 8);
    let out = run(text, 1, 1, vec![out]).unwrap();
    assert_eq!(to_f32s(&out[0]), [3.0, 3.0]);
    let twice = text.replace("scf.yield %a2, %a2", "scf.yield %a, %a");
    let twice = twice.replace("%a2 = tensor.insert %y into %a[%c0] : tensor<2xf32>\n", "");
    let out = run(&twice, 1, 1, vec![f32s(&[0.0; 2])]).unwrap();
    assert_eq!(to_f32s(&out[0]), [0.0, 0.0]);
}

/// Every thread of two blocks adds its id to element `id mod 3` of the output with
/// `xla_gpu.atomic_rmw`: the updates of different threads to one element all land (with
/// `tensor.insert` they would be a write conflict), on top of what the output held.
#[test]
fn atomic_updates_of_one_element_by_many_threads_all_land() {
    let text = r#"
func.func @main(%out: tensor<3xf32>) -> tensor<3xf32> {
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %t = gpu.thread_id x
  %b = gpu.block_id x
  %base = arith.muli %b, %c4 : index
  %id = arith.addi %base, %t : index
  %i = arith.remui %id, %c3 : index
  %n = arith.index_cast %id : index to i32
  %x = arith.sitofp %n : i32 to f32
  %r = xla_gpu.atomic_rmw %out[%i] : tensor<3xf32> {
  ^bb0(%current: f32):
    %s = arith.addf %current, %x : f32
    xla_gpu.yield %s : f32
  }
  return %r : tensor<3xf32>
}"#;
    let out = run(text, 2, 4, vec![f32s(&[100.0, 200.0, 300.0])]).unwrap();
    // Ids 0..8: 0+3+6 to element 0, 1+4+7 to element 1, 2+5 to element 2.
    assert_eq!(to_f32s(&out[0]), [109.0, 212.0, 307.0]);
}
