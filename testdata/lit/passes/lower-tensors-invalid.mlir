// RUN: not hlo-opt %s --split-input-file --lower-tensors 2>&1 | FileCheck %s

// What lower-tensors refuses, each with an error at the op.

func.func @two_d(%t: tensor<4x8xf32>, %i: index) -> f32 {
  %x = tensor.extract %t[%i, %i] : tensor<4x8xf32>
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'tensor.extract' op expects static 0-d or 1-d tensors (run flatten-tensors first), got 'tensor<4x8xf32>'
  return %x : f32
}

// -----

func.func @empty(%i: index, %x: f32) -> f32 {
  %t = tensor.empty() : tensor<8xf32>
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'tensor.empty' op cannot lower this op on tensors
  %u = tensor.insert %x into %t[%i] : tensor<8xf32>
  %y = tensor.extract %u[%i] : tensor<8xf32>
  return %y : f32
}

// -----

func.func @mixed(%t: tensor<8xf32>, %x: f32) -> (tensor<8xf32>, f32) {
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:1: error: 'func.func' op function has a mix of tensor and non-tensor results
  return %t, %x : tensor<8xf32>, f32
}

// -----

func.func @call(%t: tensor<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %u = func.call @id(%t) : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'func.call' op calls returning tensors are not supported
  %x = tensor.extract %u[%c0] : tensor<8xf32>
  return %x : f32
}
func.func private @id(%t: tensor<8xf32>) -> tensor<8xf32> {
  return %t : tensor<8xf32>
}

// -----

func.func @out_of_bounds(%t: tensor<8xf32>, %i: index) -> vector<4xf32> {
  %pad = arith.constant 0.000000e+00 : f32
  %v = vector.transfer_read %t[%i], %pad : tensor<8xf32>, vector<4xf32>
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op only in-bounds transfers are supported
  return %v : vector<4xf32>
}

// -----

func.func @swap(%a: tensor<8xf32>, %b: tensor<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%x = %a, %y = %b) -> (tensor<8xf32>, tensor<8xf32>) {
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'scf.for' op result #0 is not in one buffer: its regions yield different tensors
    scf.yield %y, %x : tensor<8xf32>, tensor<8xf32>
  }
  %v = tensor.extract %r#0[%c0] : tensor<8xf32>
  return %v : f32
}

// -----

#map = #xla_gpu.indexing_map<"(d0) -> (d0), domain: d0 in [0, 7]">
func.func @loop(%t: tensor<8xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %r = xla_gpu.loop (%c0)[] -> (%i) in #map iter_args(%it = %t) -> (tensor<8xf32>) {
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'xla_gpu.loop' op cannot lower this op on tensors
    %u = tensor.insert %x into %it[%i] : tensor<8xf32>
    xla_gpu.yield %u : tensor<8xf32>
  }
  return
}

// -----

func.func @shared_i4(%i: index) -> i4 {
  %s = xla_gpu.allocate_shared : tensor<64xi4>
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'xla_gpu.allocate_shared' op unsupported: shared memory of 4-bit elements ('tensor<64xi4>')
  %x = tensor.extract %s[%i] : tensor<64xi4>
  return %x : i4
}

// -----

// Packed elements at an index not known to start a byte: the vector is not whole bytes.
func.func @write_i4(%t: tensor<64xi4>, %v: vector<8xi4>, %i: index) -> tensor<64xi4> {
  %u = vector.transfer_write %v, %t[%i] {in_bounds = [true]} : vector<8xi4>, tensor<64xi4>
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_write' op unsupported: a vector transfer of 4-bit elements that is not whole bytes
  return %u : tensor<64xi4>
}

// -----

func.func @read_i2_odd(%t: tensor<64xi2>, %i: index) -> vector<3xi2> {
  %c0 = arith.constant 0 : i2
  %v = vector.transfer_read %t[%i], %c0 {in_bounds = [true]} : tensor<64xi2>, vector<3xi2>
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: a vector transfer of 2-bit elements that is not whole bytes
  return %v : vector<3xi2>
}

// -----

// A c128 body that looks like the complex add but subtracts: not two atomic adds, and
// there is no 128-bit atomic for it.
func.func @complex_subtract(%t: tensor<4xi128>, %update: i128, %i: index) -> tensor<4xi128> {
  %c64 = arith.constant 64 : i128
  %r = xla_gpu.atomic_rmw %t[%i] : tensor<4xi128> {
  // CHECK: lower-tensors-invalid.mlir:[[@LINE-1]]:3: error: 'xla_gpu.atomic_rmw' op atomic updates of elements wider than 64 bits are not supported
  ^bb0(%current: i128):
    %0 = arith.trunci %current : i128 to i64
    %1 = arith.shrui %current, %c64 : i128
    %2 = arith.trunci %1 : i128 to i64
    %3 = arith.bitcast %0 : i64 to f64
    %4 = arith.bitcast %2 : i64 to f64
    %5 = arith.trunci %update : i128 to i64
    %6 = arith.shrui %update, %c64 : i128
    %7 = arith.trunci %6 : i128 to i64
    %8 = arith.bitcast %5 : i64 to f64
    %9 = arith.bitcast %7 : i64 to f64
    %10 = arith.subf %3, %8 : f64
    %11 = arith.subf %4, %9 : f64
    %12 = arith.bitcast %10 : f64 to i64
    %13 = arith.bitcast %11 : f64 to i64
    %14 = arith.extui %12 : i64 to i128
    %15 = arith.extui %13 : i64 to i128
    %16 = arith.shli %15, %c64 : i128
    %17 = arith.ori %14, %16 : i128
    xla_gpu.yield %17 : i128
  }
  return %r : tensor<4xi128>
}
