// RUN: hlo-opt --split-input-file %s --distribute-vector-layout | FileCheck %s

// Vector ops on whole vectors, laid out by nested layouts (seed 004), become each thread's
// part. tools/tests/integration/distribution.rs runs every chunk of this file in the
// interpreter before (one thread) and after (the block the pass sets up) on random inputs
// and compares the outputs, then takes the distributed IR through the rest of the pipeline,
// checking it again after every pass, to PTX that ptxas accepts.

// A 16x64 tile over 2 subgroups of 32 lanes: 8x4 lanes, each lane 2 rows of 8 contiguous
// elements (vector<2x8>, held as vector<16>). A lane's row of 8 f32 is two runs of 4 (128
// bits): each run a loop over its elements, which vectorize-loads-stores makes one vector
// access. Elementwise ops stay elementwise on the parts.
// CHECK-LABEL: func.func @elementwise(
// CHECK:         %[[TID:.*]] = gpu.thread_id  x {xla.range = [0 : index, 63 : index]}
// CHECK:         %[[READ:.*]] = scf.for %[[E:.*]] = %{{.*}} to %[[C4:.*]] step
// CHECK:           %[[AT:.*]]:2 = xla_gpu.apply_indexing #{{.*}}(%[[TID]], %{{.*}}, %{{.*}}, %[[E]])
// CHECK:           tensor.extract %{{.*}}[%[[AT]]#0, %[[AT]]#1] : tensor<16x64xf32>
// CHECK:           vector.insert %{{.*}}, %{{.*}} [%{{.*}}] : f32 into vector<16xf32>
// CHECK-COUNT-3: scf.for
// CHECK:         %[[TWO:.*]] = arith.constant dense<2.000000e+00> : vector<16xf32>
// CHECK:         arith.mulf %{{.*}}, %[[TWO]] : vector<16xf32>
// CHECK:         math.exp %{{.*}} : vector<16xf32>
// CHECK-COUNT-4: tensor.insert
// CHECK-NOT:     vector<16x64xf32>
// CHECK:         return
#tile = #xla_gpu.nested_layout<subgroup_tile = [1, 2], batch_tile = [2, 1], outer_tile = [1, 1], thread_tile = [8, 4], element_tile = [1, 8], subgroup_strides = [0, 1], thread_strides = [4, 1]>
func.func @elementwise(%in: tensor<16x64xf32>, %out: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0, %c0], %z {in_bounds = [true, true], xla_gpu.layout = #tile} : tensor<16x64xf32>, vector<16x64xf32>
  %two = arith.constant dense<2.0> : vector<16x64xf32>
  %d = arith.mulf %v, %two : vector<16x64xf32>
  %e = math.exp %d : vector<16x64xf32>
  %w = vector.transfer_write %e, %out[%c0, %c0] {in_bounds = [true, true]} : vector<16x64xf32>, tensor<16x64xf32>
  return %w : tensor<16x64xf32>
}

// -----

// A row reduction over the same tile: each lane's 8 elements, then the 4 lanes of a row
// (shuffles xor 1 and 2), then the 2 subgroups (a shared tile of 2 rows, a barrier, both
// rows read back in the same order), then the accumulator.
// CHECK-LABEL: func.func @row_sum(
// CHECK-COUNT-7: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:         gpu.shuffle  xor %{{.*}}, %[[ONE:.*]], %[[WIDTH:.*]] : f32
// CHECK:         gpu.shuffle  xor %{{.*}}, %[[TWO:.*]], %[[WIDTH]] : f32
// CHECK:         %[[SHARED:.*]] = xla_gpu.allocate_shared : tensor<2x16xf32>
// CHECK:         xla_gpu.sync_threads
// CHECK:         tensor.extract %{{.*}} : tensor<2x16xf32>
// CHECK:         vector<2xf32>
// CHECK:         return
#tile = #xla_gpu.nested_layout<subgroup_tile = [1, 2], batch_tile = [2, 1], outer_tile = [1, 1], thread_tile = [8, 4], element_tile = [1, 8], subgroup_strides = [0, 1], thread_strides = [4, 1]>
func.func @row_sum(%in: tensor<16x64xf32>, %out: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0, %c0], %z {in_bounds = [true, true], xla_gpu.layout = #tile} : tensor<16x64xf32>, vector<16x64xf32>
  %acc = arith.constant dense<1.0> : vector<16xf32>
  %r = vector.multi_reduction <add>, %v, %acc [1] : vector<16x64xf32> to vector<16xf32>
  %w = vector.transfer_write %r, %out[%c0] {in_bounds = [true]} : vector<16xf32>, tensor<16xf32>
  return %w : tensor<16xf32>
}

// -----

// A column maximum (across the 8 lane rows: shuffles xor 4, 8 and 16; no subgroup step),
// and a whole-vector maximum to a scalar that every thread holds.
// CHECK-LABEL: func.func @column_and_total_max(
// CHECK:         gpu.shuffle  xor
// CHECK:         arith.maximumf
// CHECK-NOT:     xla_gpu.allocate_shared : tensor<2x64xf32>
// CHECK:         xla_gpu.allocate_shared : tensor<2x1xf32>
// CHECK:         return
#tile = #xla_gpu.nested_layout<subgroup_tile = [1, 2], batch_tile = [2, 1], outer_tile = [1, 1], thread_tile = [8, 4], element_tile = [1, 8], subgroup_strides = [0, 1], thread_strides = [4, 1]>
func.func @column_and_total_max(%in: tensor<16x64xf32>, %out: tensor<64xf32>, %total: tensor<f32>) -> (tensor<64xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %v = vector.transfer_read %in[%c0, %c0], %z {in_bounds = [true, true], xla_gpu.layout = #tile} : tensor<16x64xf32>, vector<16x64xf32>
  %acc = vector.broadcast %ninf : f32 to vector<64xf32>
  %r = vector.multi_reduction <maximumf>, %v, %acc [0] : vector<16x64xf32> to vector<64xf32>
  %w = vector.transfer_write %r, %out[%c0] {in_bounds = [true]} : vector<64xf32>, tensor<64xf32>
  %m = vector.multi_reduction <maximumf>, %v, %ninf [0, 1] : vector<16x64xf32> to f32
  %t = tensor.insert %m into %total[] : tensor<f32>
  return %w, %t : tensor<64xf32>, tensor<f32>
}

// -----

// A transpose between two layouts through a shared tile: written in the source's layout,
// read in the result's.
// CHECK-LABEL: func.func @transpose(
// CHECK:         xla_gpu.allocate_shared : tensor<32x32xi32>
// CHECK:         xla_gpu.sync_threads
// CHECK-NOT:     vector.transpose
// CHECK:         return
#rows = #xla_gpu.nested_layout<subgroup_tile = [1, 1], batch_tile = [4, 1], outer_tile = [1, 1], thread_tile = [8, 4], element_tile = [1, 8], subgroup_strides = [0, 0], thread_strides = [4, 1]>
#cols = #xla_gpu.nested_layout<subgroup_tile = [1, 1], batch_tile = [1, 4], outer_tile = [1, 1], thread_tile = [32, 1], element_tile = [1, 8], subgroup_strides = [0, 0], thread_strides = [1, 0]>
func.func @transpose(%in: tensor<32x32xi32>, %out: tensor<32x32xi32>) -> tensor<32x32xi32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i32
  %v = vector.transfer_read %in[%c0, %c0], %z {in_bounds = [true, true], xla_gpu.layout = #rows} : tensor<32x32xi32>, vector<32x32xi32>
  %t = vector.transpose %v, [1, 0] {xla_gpu.layout = #cols} : vector<32x32xi32> to vector<32x32xi32>
  %one = arith.constant dense<1> : vector<32x32xi32>
  %s = arith.addi %t, %one : vector<32x32xi32>
  %w = vector.transfer_write %s, %out[%c0, %c0] {in_bounds = [true, true]} : vector<32x32xi32>, tensor<32x32xi32>
  return %w : tensor<32x32xi32>
}

// -----

// Subgroup stride 2 over a tile of 2: ids 0 and 1 hold the first half (1 is a replica of
// 0), id 2 the second. The sum across subgroups reads the canonical rows 0 and 2 (never a
// row past the 3 subgroups there are).
// CHECK-LABEL: func.func @replicated_subgroups(
// CHECK:         gpu.thread_id  x {xla.range = [0 : index, 95 : index]}
// CHECK:         xla_gpu.allocate_shared : tensor<3x1xf32>
// CHECK:         return
#gap = #xla_gpu.nested_layout<subgroup_tile = [2], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [1], subgroup_strides = [2], thread_strides = [1]>
func.func @replicated_subgroups(%in: tensor<64xf32>, %out: tensor<f32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #gap} : tensor<64xf32>, vector<64xf32>
  %r = vector.multi_reduction <add>, %v, %z [0] : vector<64xf32> to f32
  %t = tensor.insert %r into %out[] : tensor<f32>
  return %t : tensor<f32>
}

// -----

// A reduction across subgroups inside a loop: every iteration writes the one shared tile,
// so a second barrier after the reads keeps the next iteration's writes from overtaking
// another thread's reads.
// CHECK-LABEL: func.func @reduction_in_a_loop(
// CHECK:         scf.for
// CHECK:           xla_gpu.allocate_shared : tensor<2x1xf32>
// CHECK:           xla_gpu.sync_threads
// CHECK:           tensor.extract
// CHECK:           xla_gpu.sync_threads
// CHECK:           scf.yield
#two = #xla_gpu.nested_layout<subgroup_tile = [2], batch_tile = [1], outer_tile = [1], thread_tile = [32], element_tile = [1], subgroup_strides = [1], thread_strides = [1]>
func.func @reduction_in_a_loop(%in: tensor<64xf32>, %out: tensor<f32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f32
  %v = vector.transfer_read %in[%c0], %z {in_bounds = [true], xla_gpu.layout = #two} : tensor<64xf32>, vector<64xf32>
  %sum = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f32) {
    %r = vector.multi_reduction <add>, %v, %acc [0] : vector<64xf32> to f32
    scf.yield %r : f32
  }
  %t = tensor.insert %sum into %out[] : tensor<f32>
  return %t : tensor<f32>
}
