// RUN: hlo-opt %s --split-input-file --flatten-tensors | FileCheck %s
// RUN: hlo-opt %s --split-input-file --flatten-tensors --flatten-tensors | FileCheck %s

// Every tensor becomes 1-d in its physical layout; each access gets one index, the physical
// offset, computed by one `xla_gpu.apply_indexing` into which the index maps were folded.
// A second run changes nothing (everything is flat already).

// The seed's GELU after lower-xla-gpu-to-scf: three maps for the three indices fold into
// the seed's single flat map, shared by the extract and the insert.
// CHECK: #[[MAP:.*]] = #xla_gpu.indexing_map<"(th_x, bl_x, vector_index) -> (th_x * 4 + bl_x * 512 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[IN:.*]]: tensor<12582912xbf16>, %[[OUT:.*]]: tensor<12582912xbf16>) -> tensor<12582912xbf16>
// CHECK:         %[[TX:.*]] = gpu.thread_id x
// CHECK:         %[[BX:.*]] = gpu.block_id x
// CHECK:         scf.for %[[V:.*]] = {{.*}} iter_args(%[[ITER:.*]] = %[[OUT]]) -> (tensor<12582912xbf16>)
// CHECK:           scf.if %{{.*}} -> (tensor<12582912xbf16>)
// CHECK-NEXT:        %[[I:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[TX]], %[[BX]], %[[V]])
// CHECK-NEXT:        %[[X:.*]] = tensor.extract %[[IN]][%[[I]]] : tensor<12582912xbf16>
// CHECK:             math.tanh
// CHECK:             %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : bf16
// CHECK-NEXT:        %[[INS:.*]] = tensor.insert %[[Y]] into %[[ITER]][%[[I]]] : tensor<12582912xbf16>
// CHECK-NEXT:        scf.yield %[[INS]] : tensor<12582912xbf16>
// CHECK:           } else {
// CHECK-NEXT:        scf.yield %[[ITER]] : tensor<12582912xbf16>
// CHECK:         return %{{.*}} : tensor<12582912xbf16>
// CHECK-NOT:     xla_gpu.apply_indexing
#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
#map1 = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> ((bl_x floordiv 8) mod 512), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
#map2 = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> ((bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c127 = arith.constant 127 : index
  %c24575 = arith.constant 24575 : index
  %cst = arith.constant 5.000000e-01 : bf16
  %cst_0 = arith.constant 1.000000e+00 : bf16
  %cst_1 = arith.constant 7.968750e-01 : bf16
  %cst_2 = arith.constant 4.467770e-02 : bf16
  %thread_id_x = gpu.thread_id x {xla.range = [0 : index, 127 : index]}
  %block_id_x = gpu.block_id x {xla.range = [0 : index, 24575 : index]}
  %xla_loop = scf.for %vector_index = %c0 to %c4 step %c1 iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
    %2 = arith.cmpi sge, %thread_id_x, %c0 : index
    %3 = arith.cmpi sle, %thread_id_x, %c127 : index
    %4 = arith.andi %2, %3 : i1
    %5 = arith.cmpi sge, %block_id_x, %c0 : index
    %6 = arith.cmpi sle, %block_id_x, %c24575 : index
    %7 = arith.andi %5, %6 : i1
    %inbounds = arith.andi %4, %7 : i1
    %9 = scf.if %inbounds -> (tensor<6x512x4096xbf16>) {
      %dim0 = xla_gpu.apply_indexing #map(%thread_id_x, %block_id_x)[%vector_index]
      %dim1 = xla_gpu.apply_indexing #map1(%thread_id_x, %block_id_x)[%vector_index]
      %dim2 = xla_gpu.apply_indexing #map2(%thread_id_x, %block_id_x)[%vector_index]
      %extracted = tensor.extract %input[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
      %10 = arith.mulf %extracted, %extracted : bf16
      %11 = arith.mulf %10, %extracted : bf16
      %12 = arith.mulf %11, %cst_2 : bf16
      %13 = arith.addf %extracted, %12 : bf16
      %14 = arith.mulf %13, %cst_1 : bf16
      %15 = math.tanh %14 : bf16
      %16 = arith.addf %15, %cst_0 : bf16
      %17 = arith.mulf %16, %cst : bf16
      %18 = arith.mulf %extracted, %17 : bf16
      %inserted = tensor.insert %18 into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
      scf.yield %inserted : tensor<6x512x4096xbf16>
    } else {
      scf.yield %iter : tensor<6x512x4096xbf16>
    }
    scf.yield %9 : tensor<6x512x4096xbf16>
  }
  return %xla_loop : tensor<6x512x4096xbf16>
}

// -----

// A transposed (column-major) layout: element (i, j) of a 2x3 array sits at j * 2 + i, as
// in XLA's flatten-tensors test. Plain indices get the ranges of their dimensions.
// CHECK: #[[MAP:.*]] = #xla_gpu.indexing_map<"(d0, d1) -> (d1 * 2 + d0), domain: d0 in [0, 1], d1 in [0, 2]">
// CHECK-LABEL: func.func @transposed
// CHECK-SAME:    (%[[T:.*]]: tensor<6xf32>, %[[I:.*]]: index, %[[J:.*]]: index) -> f32
// CHECK-NEXT:    %[[K:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[I]], %[[J]])
// CHECK-NEXT:    %[[X:.*]] = tensor.extract %[[T]][%[[K]]] : tensor<6xf32>
// CHECK-NEXT:    return %[[X]] : f32
func.func @transposed(%t: tensor<2x3xf32, #xla.layout<"{0,1}">>, %i: index, %j: index) -> f32 {
  %x = tensor.extract %t[%i, %j] : tensor<2x3xf32, #xla.layout<"{0,1}">>
  return %x : f32
}

// -----

// A tiled layout: f32[3,300]{1,0:T(2,128)} is 2 x 3 tiles of 2x128 elements, padded to
// 4 x 384 = 1536 elements; row 2 starts the second row of tiles, at 3 * 256. Index
// constants fold into the map.
// CHECK: #[[MAP:.*]] = #xla_gpu.indexing_map<"(d1) -> ((d1 floordiv 128) * 256 + d1 mod 128 + 768), domain: d1 in [0, 299]">
// CHECK-LABEL: func.func @tiled
// CHECK-SAME:    (%[[T:.*]]: tensor<1536xf32>, %[[J:.*]]: index, %[[V:.*]]: f32) -> tensor<1536xf32>
// CHECK-NEXT:    %[[K:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[J]])
// CHECK-NEXT:    %[[R:.*]] = tensor.insert %[[V]] into %[[T]][%[[K]]] : tensor<1536xf32>
// CHECK-NEXT:    return %[[R]] : tensor<1536xf32>
func.func @tiled(%t: tensor<3x300xf32, #xla.layout<"{1,0:T(2,128)}">>, %j: index, %v: f32) -> tensor<3x300xf32, #xla.layout<"{1,0:T(2,128)}">> {
  %c2 = arith.constant 2 : index
  %r = tensor.insert %v into %t[%c2, %j] : tensor<3x300xf32, #xla.layout<"{1,0:T(2,128)}">>
  return %r : tensor<3x300xf32, #xla.layout<"{1,0:T(2,128)}">>
}

// -----

// A 1-d tensor with a tiled layout is padded too; a constant index becomes a constant.
// CHECK-LABEL: func.func @tiled_vector
// CHECK-SAME:    (%[[T:.*]]: tensor<12xf32>) -> f32
// CHECK-NEXT:    %[[C:.*]] = arith.constant 7 : index
// CHECK-NEXT:    tensor.extract %[[T]][%[[C]]] : tensor<12xf32>
func.func @tiled_vector(%t: tensor<9xf32, #xla.layout<"{0:T(4)}">>) -> f32 {
  %c7 = arith.constant 7 : index
  %x = tensor.extract %t[%c7] : tensor<9xf32, #xla.layout<"{0:T(4)}">>
  return %x : f32
}

// -----

// A shared-memory tile: the allocation, the synchronized tensor and the loop carrying it
// are flat; a plain 1-d index needs no map, and an index used twice is one dimension.
// CHECK: #[[MAP:.*]] = #xla_gpu.indexing_map<"(d0, d1) -> (d0 * 33 + d1), domain: d0 in [0, 31], d1 in [0, 32]">
// CHECK: #[[DIAG:.*]] = #xla_gpu.indexing_map<"(d0) -> (d0 * 34), domain: d0 in [0, 31]">
// CHECK-LABEL: func.func @shared
// CHECK:         %[[TX:.*]] = gpu.thread_id x
// CHECK:         %[[S:.*]] = xla_gpu.allocate_shared : tensor<1056xf32>
// CHECK:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[S]]) -> (tensor<1056xf32>)
// CHECK-NEXT:      %[[K:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[I]], %[[TX]])
// CHECK-NEXT:      tensor.insert %{{.*}} into %[[A]][%[[K]]] : tensor<1056xf32>
// CHECK:         %[[SYNC:.*]] = xla_gpu.sync_threads %{{.*}} : tensor<1056xf32>
// CHECK:         %[[K2:.*]] = xla_gpu.apply_indexing #[[DIAG]](%[[TX]])
// CHECK-NEXT:    tensor.extract %[[SYNC]][%[[K2]]] : tensor<1056xf32>
func.func @shared(%in: tensor<32xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %thread_id_x = gpu.thread_id x {xla.range = [0 : index, 31 : index]}
  %shmem = xla_gpu.allocate_shared : tensor<32x33xf32>
  %x = tensor.extract %in[%thread_id_x] : tensor<32xf32>
  %filled = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %shmem) -> (tensor<32x33xf32>) {
    %u = tensor.insert %x into %acc[%i, %thread_id_x] : tensor<32x33xf32>
    scf.yield %u : tensor<32x33xf32>
  }
  %synced = xla_gpu.sync_threads %filled : tensor<32x33xf32>
  %y = tensor.extract %synced[%thread_id_x, %thread_id_x] : tensor<32x33xf32>
  return %y : f32
}

// -----

// Dense constants are reordered into physical order (column-major here), calls and
// function types flattened, rank-0 tensors kept.
// CHECK-LABEL: func.func @constants
// CHECK:         arith.constant dense<[1.000000e+00, 4.000000e+00, 2.000000e+00, 5.000000e+00, 3.000000e+00, 6.000000e+00]> : tensor<6xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK:         call @callee(%{{.*}}, %[[E]], %{{.*}}) : (tensor<6xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK-LABEL: func.func private @callee
// CHECK-SAME:    (%{{.*}}: tensor<6xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<f32>) -> tensor<8xf32>
func.func @constants(%s: tensor<f32>) -> tensor<2x4xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32, #xla.layout<"{0,1}">>
  %e = tensor.empty() : tensor<2x4xf32>
  %r = func.call @callee(%c, %e, %s) : (tensor<2x3xf32, #xla.layout<"{0,1}">>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
func.func private @callee(%a: tensor<2x3xf32, #xla.layout<"{0,1}">>, %b: tensor<2x4xf32>, %s: tensor<f32>) -> tensor<2x4xf32> {
  return %b : tensor<2x4xf32>
}
