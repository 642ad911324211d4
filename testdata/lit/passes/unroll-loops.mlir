// RUN: hlo-opt %s --split-input-file --unroll-loops | FileCheck %s

// The seed's GELU after vectorization: the loop over vector_index disappears, each copy
// reading and writing the vector at a constant position, the vector threaded through.
#map = #xla_gpu.indexing_map<"(th_x, bl_x, vector_index) -> (th_x * 4 + bl_x * 512 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @main
// CHECK-SAME:      (%[[INPUT:.*]]: tensor<12582912xbf16>, %[[OUTPUT:.*]]: tensor<12582912xbf16>)
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xbf16>
// CHECK:         %[[IDX:.*]] = xla_gpu.apply_indexing
// CHECK:         %[[READ:.*]] = vector.transfer_read %[[INPUT]][%[[IDX]]]
// CHECK-NOT:     scf.for
// CHECK:         %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[X0:.*]] = vector.extract %[[READ]][%[[I0]]] : bf16 from vector<4xbf16>
// CHECK:         math.tanh
// CHECK:         %[[V0:.*]] = vector.insert %{{.*}}, %[[ZERO]] [%[[I0]]] : bf16 into vector<4xbf16>
// CHECK-NEXT:    %[[I1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    vector.extract %[[READ]][%[[I1]]]
// CHECK:         %[[V1:.*]] = vector.insert %{{.*}}, %[[V0]] [%[[I1]]]
// CHECK-NEXT:    %[[I2:.*]] = arith.constant 2 : index
// CHECK:         %[[V2:.*]] = vector.insert %{{.*}}, %[[V1]] [%[[I2]]]
// CHECK-NEXT:    %[[I3:.*]] = arith.constant 3 : index
// CHECK:         %[[V3:.*]] = vector.insert %{{.*}}, %[[V2]] [%[[I3]]]
// CHECK-NEXT:    %[[W:.*]] = vector.transfer_write %[[V3]], %[[OUTPUT]][%[[IDX]]]
// CHECK-NEXT:    return %[[W]]
func.func @main(%input: tensor<12582912xbf16>, %output: tensor<12582912xbf16>) -> tensor<12582912xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %pad = arith.constant 0.000000e+00 : bf16
  %cst_1 = arith.constant 5.000000e-01 : bf16
  %cst_2 = arith.constant 1.000000e+00 : bf16
  %cst_3 = arith.constant 7.968750e-01 : bf16
  %cst_4 = arith.constant 4.467770e-02 : bf16
  %vector_0 = arith.constant dense<0.000000e+00> : vector<4xbf16>
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
  %block_id_x = gpu.block_id  x {xla.range = [0 : index, 24575 : index]}
  %0 = xla_gpu.apply_indexing #map(%thread_id_x, %block_id_x, %c0)
  %2 = vector.transfer_read %input[%0], %pad {in_bounds = [true]} : tensor<12582912xbf16>, vector<4xbf16>
  %xla_loop:2 = scf.for %vector_index = %c0 to %c4 step %c1 iter_args(%iter = %output, %iter_vector = %vector_0) -> (tensor<12582912xbf16>, vector<4xbf16>) {
    %5 = vector.extract %2[%vector_index] : bf16 from vector<4xbf16>
    %6 = arith.mulf %5, %5 : bf16
    %7 = arith.mulf %6, %5 : bf16
    %8 = arith.mulf %7, %cst_4 : bf16
    %9 = arith.addf %5, %8 : bf16
    %10 = arith.mulf %9, %cst_3 : bf16
    %11 = math.tanh %10 : bf16
    %12 = arith.addf %11, %cst_2 : bf16
    %13 = arith.mulf %12, %cst_1 : bf16
    %14 = arith.mulf %5, %13 : bf16
    %15 = vector.insert %14, %iter_vector [%vector_index] : bf16 into vector<4xbf16>
    scf.yield %iter, %15 : tensor<12582912xbf16>, vector<4xbf16>
  }
  %4 = vector.transfer_write %xla_loop#1, %output[%0] {in_bounds = [true]} : vector<4xbf16>, tensor<12582912xbf16>
  return %4 : tensor<12582912xbf16>
}

// -----

// Left alone: a loop whose unrolled copies would exceed the budget of 400 (100 trips of 5
// ops), one that calls a function, one with a bound only known at run time.
// CHECK-LABEL: func.func @not_unrolled
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           call @f
// CHECK:         scf.for
// CHECK:         return
func.func @not_unrolled(%x: f32, %n: index) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c100 = arith.constant 100 : index
  %0 = scf.for %i = %c0 to %c100 step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.mulf %a, %a : f32
    %t = arith.addf %s, %x : f32
    %u = arith.subf %t, %a : f32
    %v = arith.divf %u, %x : f32
    scf.yield %v : f32
  }
  %1 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> (f32) {
    %r = func.call @f(%a) : (f32) -> f32
    scf.yield %r : f32
  }
  %2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.mulf %a, %a : f32
    scf.yield %s : f32
  }
  return %0, %1, %2 : f32, f32, f32
}
func.func private @f(%x: f32) -> f32 {
  return %x : f32
}

// -----

// Float math weighs 20 (5 trips x (4 x 20 + 1) > 400), except cheap ops like sqrt.
// CHECK-LABEL: func.func @math_weights
// CHECK:         scf.for
// CHECK-COUNT-4:   math.tanh
// CHECK:         }
// CHECK-NOT:     scf.for
// CHECK-COUNT-20: math.sqrt
// CHECK-NEXT:    return
func.func @math_weights(%x: f32) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %0 = scf.for %i = %c0 to %c5 step %c1 iter_args(%a = %x) -> (f32) {
    %1 = math.tanh %a : f32
    %2 = math.tanh %1 : f32
    %3 = math.tanh %2 : f32
    %4 = math.tanh %3 : f32
    scf.yield %4 : f32
  }
  %5 = scf.for %i = %c0 to %c5 step %c1 iter_args(%a = %x) -> (f32) {
    %1 = math.sqrt %a : f32
    %2 = math.sqrt %1 : f32
    %3 = math.sqrt %2 : f32
    %4 = math.sqrt %3 : f32
    scf.yield %4 : f32
  }
  return %0, %5 : f32, f32
}

// -----

// A nest of small loops unrolls from the inside out; the induction variable becomes a
// constant of its own type (here i32, from 1 to 6 step 2: 1, 3, 5).
// CHECK-LABEL: func.func @nest
// CHECK-SAME:      (%[[T:.*]]: tensor<2x8xf32>, %[[X:.*]]: f32)
// CHECK-NOT:     scf.for
// CHECK:         arith.constant 6 : i32
// CHECK-NEXT:    %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[J1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[K1:.*]] = arith.index_cast %[[J1]] : i32 to index
// CHECK-NEXT:    %[[E1:.*]] = tensor.extract %[[T]][%[[O0]], %[[K1]]]
// CHECK-NEXT:    %[[S1:.*]] = arith.addf %[[X]], %[[E1]]
// CHECK-NEXT:    %[[J3:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    %[[K3:.*]] = arith.index_cast %[[J3]] : i32 to index
// CHECK-NEXT:    %[[E3:.*]] = tensor.extract %[[T]][%[[O0]], %[[K3]]]
// CHECK-NEXT:    %[[S3:.*]] = arith.addf %[[S1]], %[[E3]]
// CHECK-NEXT:    %[[J5:.*]] = arith.constant 5 : i32
// CHECK:         %[[S5:.*]] = arith.addf %[[S3]],
// CHECK-NEXT:    %[[O1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    arith.constant 1 : i32
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    tensor.extract %[[T]][%[[O1]],
// CHECK-NEXT:    arith.addf %[[S5]],
// CHECK-COUNT-2: tensor.extract %[[T]][%[[O1]],
// CHECK-NOT:     tensor.extract
// CHECK:         return
func.func @nest(%t: tensor<2x8xf32>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %i1 = arith.constant 1 : i32
  %i2 = arith.constant 2 : i32
  %i6 = arith.constant 6 : i32
  %0 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> (f32) {
    %1 = scf.for %j = %i1 to %i6 step %i2 iter_args(%b = %a) -> (f32) : i32 {
      %k = arith.index_cast %j : i32 to index
      %e = tensor.extract %t[%i, %k] : tensor<2x8xf32>
      %s = arith.addf %b, %e : f32
      scf.yield %s : f32
    }
    scf.yield %1 : f32
  }
  return %0 : f32
}

// -----

// Loops that run once or never copy no code: always unrolled, even around a call.
// CHECK-LABEL: func.func @once_or_never
// CHECK-SAME:      (%[[X:.*]]: f32)
// CHECK-NOT:     scf.for
// CHECK:         %[[R:.*]] = call @f(%[[X]])
// CHECK-NEXT:    return %[[R]], %[[X]]
func.func @once_or_never(%x: f32) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %0 = scf.for %i = %c0 to %c1 step %c7 iter_args(%a = %x) -> (f32) {
    %r = func.call @f(%a) : (f32) -> f32
    scf.yield %r : f32
  }
  %1 = scf.for %i = %c7 to %c1 step %c1 iter_args(%a = %x) -> (f32) {
    %r = func.call @f(%a) : (f32) -> f32
    scf.yield %r : f32
  }
  return %0, %1 : f32, f32
}
func.func private @f(%x: f32) -> f32 {
  return %x : f32
}

// -----

// Over the size budget (8 copies of a 4-lane `math.exp` at 20 a lane) a loop stays a loop,
// unless it is marked `xla.unroll` (the row-normalization emitter's loops over a row a
// thread keeps in registers): then it is unrolled up to ten times the budget.
// CHECK-LABEL: func.func @requested(
// CHECK:         scf.for
// CHECK:           math.exp
// CHECK:           scf.yield
// CHECK-COUNT-8: math.exp
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @requested(%v: vector<4xf32>) -> (vector<4xf32>, vector<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %kept = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %v) -> (vector<4xf32>) {
    %e = math.exp %acc : vector<4xf32>
    scf.yield %e : vector<4xf32>
  }
  %unrolled = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %v) -> (vector<4xf32>) {
    %e = math.exp %acc : vector<4xf32>
    scf.yield %e : vector<4xf32>
  } {xla.unroll}
  return %kept, %unrolled : vector<4xf32>, vector<4xf32>
}

// -----

// The request is bounded too: a marked loop of 10^9 iterations stays a loop.
// CHECK-LABEL: func.func @requested_too_long(
// CHECK:         scf.for
// CHECK:         } {xla.unroll}
func.func @requested_too_long(%x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000000000 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  } {xla.unroll}
  return %r : f32
}
