// RUN: hlo-opt %s --split-input-file --vectorize-loads-stores | FileCheck %s

// Contiguous, aligned element accesses in small loops become vector transfers hoisted out
// of the loop; everything else stays as it is.

// The seed's flattened GELU: the load becomes a transfer_read of vector<4xbf16> before the
// loop, the store a vector iter arg written back after it, both at the map's offset for
// vector_index = 0.
// CHECK: #[[MAP:.*]] = #xla_gpu.indexing_map<"(th_x, bl_x, vector_index) -> (th_x * 4 + bl_x * 512 + vector_index)
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[IN:.*]]: tensor<12582912xbf16>, %[[OUT:.*]]: tensor<12582912xbf16>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[TX:.*]] = gpu.thread_id x
// CHECK-DAG:     %[[BX:.*]] = gpu.block_id x
// CHECK:         %[[BASE:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[TX]], %[[BX]], %[[C0]])
// CHECK:         %[[PAD:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-NEXT:    %[[VIN:.*]] = vector.transfer_read %[[IN]][%[[BASE]]], %[[PAD]] {in_bounds = [true]} : tensor<12582912xbf16>, vector<4xbf16>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xbf16>
// CHECK-NEXT:    %[[LOOP:.*]]:2 = scf.for %[[V:.*]] = %[[C0]] to %{{.*}} step %{{.*}} iter_args(%[[ITER:.*]] = %[[OUT]], %[[ACC:.*]] = %[[ZERO]]) -> (tensor<12582912xbf16>, vector<4xbf16>)
// CHECK-NEXT:      %[[X:.*]] = vector.extract %[[VIN]][%[[V]]] : bf16 from vector<4xbf16>
// CHECK-NEXT:      arith.mulf %[[X]], %[[X]] : bf16
// CHECK:           math.tanh
// CHECK:           %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : bf16
// CHECK-NEXT:      %[[FILLED:.*]] = vector.insert %[[Y]], %[[ACC]] [%[[V]]] : bf16 into vector<4xbf16>
// CHECK-NEXT:      scf.yield %[[ITER]], %[[FILLED]] : tensor<12582912xbf16>, vector<4xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[W:.*]] = vector.transfer_write %[[LOOP]]#1, %[[OUT]][%[[BASE]]] {in_bounds = [true]} : vector<4xbf16>, tensor<12582912xbf16>
// CHECK-NEXT:    return %[[W]] : tensor<12582912xbf16>
#map = #xla_gpu.indexing_map<"(th_x, bl_x, vector_index) -> (th_x * 4 + bl_x * 512 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
func.func @main(%input: tensor<12582912xbf16>, %output: tensor<12582912xbf16>) -> tensor<12582912xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 5.000000e-01 : bf16
  %cst_0 = arith.constant 1.000000e+00 : bf16
  %cst_1 = arith.constant 7.968750e-01 : bf16
  %cst_2 = arith.constant 4.467770e-02 : bf16
  %thread_id_x = gpu.thread_id x {xla.range = [0 : index, 127 : index]}
  %block_id_x = gpu.block_id x {xla.range = [0 : index, 24575 : index]}
  %xla_loop = scf.for %vector_index = %c0 to %c4 step %c1 iter_args(%iter = %output) -> (tensor<12582912xbf16>) {
    %dim = xla_gpu.apply_indexing #map(%thread_id_x, %block_id_x, %vector_index)
    %extracted = tensor.extract %input[%dim] : tensor<12582912xbf16>
    %2 = arith.mulf %extracted, %extracted : bf16
    %3 = arith.mulf %2, %extracted : bf16
    %4 = arith.mulf %3, %cst_2 : bf16
    %5 = arith.addf %extracted, %4 : bf16
    %6 = arith.mulf %5, %cst_1 : bf16
    %7 = math.tanh %6 : bf16
    %8 = arith.addf %7, %cst_0 : bf16
    %9 = arith.mulf %8, %cst : bf16
    %10 = arith.mulf %extracted, %9 : bf16
    %inserted = tensor.insert %10 into %iter[%dim] : tensor<12582912xbf16>
    scf.yield %inserted : tensor<12582912xbf16>
  }
  return %xla_loop : tensor<12582912xbf16>
}

// -----

// The induction variable as the index: the base is the lower bound. Eight f16 are 128
// bits, the widest access allowed.
// CHECK-LABEL: func.func @iv_index
// CHECK-SAME:    (%[[T:.*]]: tensor<64xf16>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[V:.*]] = vector.transfer_read %[[T]][%[[C0]]], %{{.*}} {in_bounds = [true]} : tensor<64xf16>, vector<8xf16>
// CHECK:         scf.for %[[I:.*]] = %[[C0]]
// CHECK-NEXT:      vector.extract %[[V]][%[[I]]] : f16 from vector<8xf16>
// CHECK-NOT:     tensor.extract
func.func @iv_index(%t: tensor<64xf16>) -> f16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f16
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f16) {
    %x = tensor.extract %t[%i] : tensor<64xf16>
    %s = arith.addf %acc, %x : f16
    scf.yield %s : f16
  }
  return %sum : f16
}

// -----

// Not vectorized: stride 2 (not contiguous), a trip count of 3 (not a power of two), a base
// of th_x * 2 for four elements (not provably aligned), eight f32 (256 bits).
// CHECK-LABEL: func.func @not_vectorized
// CHECK-NOT:     vector.
// CHECK-COUNT-4: tensor.extract
// CHECK-NOT:     vector.
#stride2 = #xla_gpu.indexing_map<"(th_x, v) -> (th_x * 8 + v * 2), domain: th_x in [0, 127], v in [0, 3]">
#unaligned = #xla_gpu.indexing_map<"(th_x, v) -> (th_x * 2 + v), domain: th_x in [0, 127], v in [0, 3]">
#wide = #xla_gpu.indexing_map<"(th_x, v) -> (th_x * 8 + v), domain: th_x in [0, 127], v in [0, 7]">
func.func @not_vectorized(%t: tensor<1024xf32>, %th_x: index) -> (f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %a = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %i = xla_gpu.apply_indexing #stride2(%th_x, %v)
    %x = tensor.extract %t[%i] : tensor<1024xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  %b = scf.for %v = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = tensor.extract %t[%v] : tensor<1024xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  %c = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %i = xla_gpu.apply_indexing #unaligned(%th_x, %v)
    %x = tensor.extract %t[%i] : tensor<1024xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  %d = scf.for %v = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %i = xla_gpu.apply_indexing #wide(%th_x, %v)
    %x = tensor.extract %t[%i] : tensor<1024xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  return %a, %b, %c, %d : f32, f32, f32, f32
}

// -----

// Not vectorized: a read of the tensor the loop writes (its init, and its iter arg), a read
// nested in an scf.if (it might not run), and a store into an iter arg that is also read.
// CHECK-LABEL: func.func @conflicts
// CHECK-NOT:     vector.
// CHECK-COUNT-3: tensor.extract
// CHECK:         tensor.insert
// CHECK-NOT:     vector.
func.func @conflicts(%t: tensor<64xf32>, %cond: i1) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %t) -> (tensor<64xf32>) {
    %x = tensor.extract %t[%v] : tensor<64xf32>
    %y = tensor.extract %acc[%v] : tensor<64xf32>
    %z = scf.if %cond -> (f32) {
      %w = tensor.extract %t[%v] : tensor<64xf32>
      scf.yield %w : f32
    } else {
      scf.yield %x : f32
    }
    %s = arith.addf %y, %z : f32
    %u = tensor.insert %s into %acc[%v] : tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// Two outputs written in one loop (a multi-output fusion): each gets its own vector iter
// arg and write-back; both share the base offset.
// CHECK-LABEL: func.func @two_outputs
// CHECK-SAME:    (%[[A:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[TX:.*]]: index, %[[X:.*]]: f32)
// CHECK:         %[[BASE:.*]] = xla_gpu.apply_indexing #{{.*}}(%[[TX]], %[[C0:.*]])
// CHECK:         %[[LOOP:.*]]:4 = scf.for %[[V:.*]] = {{.*}} iter_args(%[[IA:.*]] = %[[A]], %[[IB:.*]] = %[[B]], %[[VA:.*]] = %{{.*}}, %[[VB:.*]] = %{{.*}}) -> (tensor<64xf32>, tensor<64xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-NEXT:      %[[NA:.*]] = vector.insert %[[X]], %[[VA]] [%[[V]]]
// CHECK-NEXT:      %[[NB:.*]] = vector.insert %[[X]], %[[VB]] [%[[V]]]
// CHECK-NEXT:      scf.yield %[[IA]], %[[IB]], %[[NA]], %[[NB]]
// CHECK:         %[[WA:.*]] = vector.transfer_write %[[LOOP]]#2, %[[A]][%[[BASE]]]
// CHECK:         %[[WB:.*]] = vector.transfer_write %[[LOOP]]#3, %[[B]][%[[BASE]]]
// CHECK:         return %[[WA]], %[[WB]]
#map = #xla_gpu.indexing_map<"(th_x, v) -> (th_x * 4 + v), domain: th_x in [0, 15], v in [0, 3]">
func.func @two_outputs(%a: tensor<64xf32>, %b: tensor<64xf32>, %th_x: index, %x: f32) -> (tensor<64xf32>, tensor<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %v = %c0 to %c4 step %c1 iter_args(%ia = %a, %ib = %b) -> (tensor<64xf32>, tensor<64xf32>) {
    %i = xla_gpu.apply_indexing #map(%th_x, %v)
    %ua = tensor.insert %x into %ia[%i] : tensor<64xf32>
    %ub = tensor.insert %x into %ib[%i] : tensor<64xf32>
    scf.yield %ua, %ub : tensor<64xf32>, tensor<64xf32>
  }
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xf32>
}
