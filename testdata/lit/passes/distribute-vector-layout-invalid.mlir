// RUN: not hlo-opt --split-input-file %s --distribute-vector-layout 2>&1 | FileCheck %s

// What distribute-vector-layout refuses, each at the op, before anything changes.

#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>
func.func @no_layout(%in: tensor<64xf32>, %other: tensor<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<64xf32>, vector<64xf32>
  %u = vector.transfer_read %other[%c0], %z {in_bounds = [true]} : tensor<64xf32>, vector<64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op no nested layout reaches this vector; give it one with 'xla_gpu.layout'
  return %u : vector<64xf32>
}

// -----

#a = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>
#b = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [2], outer_tile = [1], thread_tile = [32], element_tile = [1], subgroup_strides = [0], thread_strides = [1]>
func.func @conflict(%in: tensor<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #a} : tensor<64xf32>, vector<64xf32>
  %u = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #b} : tensor<64xf32>, vector<64xf32>
  %s = arith.addf %v, %u : vector<64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'arith.addf' op conflicting layouts
  return %s : vector<64xf32>
}

// -----

// The seed's own example spreads a subgroup over 64 lanes: more than a warp.
#seed = #xla_gpu.nested_layout<subgroup_tile = [2, 1], batch_tile = [2, 4], outer_tile = [1, 1], thread_tile = [16, 4], element_tile = [1, 4], subgroup_strides = [1, 0], thread_strides = [1, 16]>
func.func @wave64(%in: tensor<64x64xf32>) -> vector<64x64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0, %c0], %z {in_bounds = [true, true], xla_gpu.layout = #seed} : tensor<64x64xf32>, vector<64x64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op the layout does not fit 'vector<64x64xf32>':
  return %v : vector<64x64xf32>
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>
func.func @wrong_shape(%in: tensor<64xf32>) -> vector<32xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<64xf32>, vector<32xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op the layout does not fit 'vector<32xf32>':
  return %v : vector<32xf32>
}

// -----

// Lanes of a reduced dimension combine by xor shuffles: a tile of 3 lanes has no butterfly.
#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [3], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>
func.func @three_lanes(%in: tensor<6xf32>, %acc: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<6xf32>, vector<6xf32>
  %r = vector.multi_reduction <add>, %v, %acc [0] : vector<6xf32> to f32
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.multi_reduction' op unsupported: a reduction across threads needs power-of-two thread tiles and strides and 32-bit elements (dimension 0: tile 3, stride 1, 'f32')
  return %r : f32
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>
func.func @masked(%in: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {xla_gpu.layout = #l} : tensor<64xf32>, vector<64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: a transfer with a layout must be in bounds, with the minor identity map
  %w = vector.transfer_write %v, %out[%c0] {in_bounds = [true]} : vector<64xf32>, tensor<64xf32>
  return %w : tensor<64xf32>
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>
func.func @element_of_a_whole_vector(%in: tensor<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<64xf32>, vector<64xf32>
  %x = vector.extract %v[5] : f32 from vector<64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.extract' op unsupported: this op on vectors with nested layouts
  return %x : f32
}

// -----

// A thread tile of 32 with stride 0 would leave all but thread id 0's elements to no thread.
#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [0]>
func.func @stride_zero(%in: tensor<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<64xf32>, vector<64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: a thread tile of 32 with stride 0
  return %v : vector<64xf32>
}

// -----

// Subgroup ids `a + 4b` for a in [0, 3) and b in [0, 2): `id mod 3` is not `a`.
#l = #xla_gpu.nested_layout<subgroup_tile = [3, 2], batch_tile = [1, 1], outer_tile = [1, 1], thread_tile = [1, 1], element_tile = [1, 1], subgroup_strides = [1, 4], thread_strides = [0, 0]>
func.func @not_nested(%in: tensor<3x2xi32>) -> vector<3x2xi32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i32
  %v = vector.transfer_read %in[%c0, %c0], %z {in_bounds = [true, true], xla_gpu.layout = #l} : tensor<3x2xi32>, vector<3x2xi32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: subgroup strides that do not nest: stride 4 is not a multiple of the 3 ids of stride 1
  return %v : vector<3x2xi32>
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [2], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [1], subgroup_strides = [100], thread_strides = [1]>
func.func @too_many_threads(%in: tensor<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<64xf32>, vector<64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: 101 subgroups of 32: more than the 1024 threads of a block
  return %v : vector<64xf32>
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [1, 1], batch_tile = [1, 1], outer_tile = [1, 1], thread_tile = [1, 1], element_tile = [64, 64], subgroup_strides = [0, 0], thread_strides = [0, 0]>
func.func @too_many_elements(%in: tensor<64x64xf32>) -> vector<64x64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0, %c0], %z {in_bounds = [true, true], xla_gpu.layout = #l} : tensor<64x64xf32>, vector<64x64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: each thread would hold 4096 elements, more than 1024
  return %v : vector<64x64xf32>
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [1, 1], batch_tile = [1, 1], outer_tile = [1, 1], thread_tile = [1, 32], element_tile = [2, 2], subgroup_strides = [0, 0], thread_strides = [0, 1]>
func.func @vector_of_higher_rank(%in: tensor<64xf32>) -> vector<2x64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true, true], permutation_map = affine_map<(d0) -> (0, d0)>, xla_gpu.layout = #l} : tensor<64xf32>, vector<2x64xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: a transfer of a rank-2 vector to a rank-1 tensor
  return %v : vector<2x64xf32>
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>
func.func @vector_argument(%in: tensor<64xf32>, %out: tensor<64xf32>, %a: vector<64xf32>) -> tensor<64xf32> {
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:1: error: 'func.func' op unsupported: a vector with a nested layout that is a block argument (a function argument or a loop-carried value)
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<64xf32>, vector<64xf32>
  %s = arith.addf %v, %a : vector<64xf32>
  %w = vector.transfer_write %s, %out[%c0] {in_bounds = [true]} : vector<64xf32>, tensor<64xf32>
  return %w : tensor<64xf32>
}

// -----

#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [1], subgroup_strides = [0], thread_strides = [1]>
func.func @dynamic_size(%in: tensor<?xf32>) -> vector<32xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<?xf32>, vector<32xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_read' op unsupported: a transfer with a layout on a tensor of dynamic size
  return %v : vector<32xf32>
}

// -----

// Thread k writes element k + 1 in the second write and thread k + 1 in the first: the
// order of the whole-vector code would need a barrier (and global writes of different
// threads are not ordered even then).
#l = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [1], subgroup_strides = [0], thread_strides = [1]>
func.func @written_twice(%in: tensor<32xf32>, %out: tensor<33xf32>) -> tensor<33xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #l} : tensor<32xf32>, vector<32xf32>
  %w1 = vector.transfer_write %v, %out[%c0] {in_bounds = [true]} : vector<32xf32>, tensor<33xf32>
  // CHECK: distribute-vector-layout-invalid.mlir:[[@LINE-1]]:3: error: 'vector.transfer_write' op unsupported: a tensor written by a distributed transfer and then used again
  %n = arith.negf %v : vector<32xf32>
  %w2 = vector.transfer_write %n, %w1[%c1] {in_bounds = [true]} : vector<32xf32>, tensor<33xf32>
  return %w2 : tensor<33xf32>
}
