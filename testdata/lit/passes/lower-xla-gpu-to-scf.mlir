// RUN: hlo-opt %s --split-input-file --lower-xla-gpu-to-scf | FileCheck %s

// The seed's GELU loop after inlining: a bounds check of the dimensions, and in an scf.if on
// it one scf.for over vector_index holding one apply_indexing per map result, then the body.
// The check needs no range variable, so it sits above the loop: the loop body is bare, as
// vectorize-loads-stores wants it.
#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-DAG:   #[[MAP0:.*]] = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-DAG:   #[[MAP1:.*]] = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> ((bl_x floordiv 8) mod 512), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-DAG:   #[[MAP2:.*]] = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> ((bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[INPUT:.*]]: tensor<6x512x4096xbf16>, %[[OUTPUT:.*]]: tensor<6x512x4096xbf16>)
// CHECK:         %[[TX:.*]] = gpu.thread_id  x
// CHECK:         %[[BX:.*]] = gpu.block_id  x
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C127:.*]] = arith.constant 127 : index
// CHECK-DAG:     %[[C24575:.*]] = arith.constant 24575 : index
// CHECK:         %[[A:.*]] = arith.cmpi sge, %[[TX]], %[[C0]] : index
// CHECK-NEXT:    %[[B:.*]] = arith.cmpi sle, %[[TX]], %[[C127]] : index
// CHECK-NEXT:    %[[TX_OK:.*]] = arith.andi %[[A]], %[[B]] : i1
// CHECK-NEXT:    %[[C:.*]] = arith.cmpi sge, %[[BX]], %[[C0]] : index
// CHECK-NEXT:    %[[D:.*]] = arith.cmpi sle, %[[BX]], %[[C24575]] : index
// CHECK-NEXT:    %[[BX_OK:.*]] = arith.andi %[[C]], %[[D]] : i1
// CHECK-NEXT:    %[[IN:.*]] = arith.andi %[[TX_OK]], %[[BX_OK]] : i1
// CHECK-NEXT:    %[[IF:.*]] = scf.if %[[IN]] -> (tensor<6x512x4096xbf16>) {
// CHECK-NEXT:      %[[LOOP:.*]] = scf.for %[[VI:.*]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[ITER:.*]] = %[[OUTPUT]]) -> (tensor<6x512x4096xbf16>) {
// CHECK-NEXT:        %[[D0:.*]] = xla_gpu.apply_indexing #[[MAP0]](%[[TX]], %[[BX]])[%[[VI]]]
// CHECK-NEXT:        %[[D1:.*]] = xla_gpu.apply_indexing #[[MAP1]](%[[TX]], %[[BX]])[%[[VI]]]
// CHECK-NEXT:        %[[D2:.*]] = xla_gpu.apply_indexing #[[MAP2]](%[[TX]], %[[BX]])[%[[VI]]]
// CHECK-NEXT:        %[[X:.*]] = tensor.extract %[[INPUT]][%[[D0]], %[[D1]], %[[D2]]]
// CHECK:             math.tanh
// CHECK:             %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : bf16
// CHECK-NEXT:        %[[NEW:.*]] = tensor.insert %[[Y]] into %[[ITER]][%[[D0]], %[[D1]], %[[D2]]]
// CHECK-NEXT:        scf.yield %[[NEW]] : tensor<6x512x4096xbf16>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[LOOP]] : tensor<6x512x4096xbf16>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[OUTPUT]] : tensor<6x512x4096xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[IF]]
func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16> {
  %cst = arith.constant 5.000000e-01 : bf16
  %cst_0 = arith.constant 1.000000e+00 : bf16
  %cst_1 = arith.constant 7.968750e-01 : bf16
  %cst_2 = arith.constant 4.467770e-02 : bf16
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
  %block_id_x = gpu.block_id  x {xla.range = [0 : index, 24575 : index]}
  %xla_loop = xla_gpu.loop (%thread_id_x, %block_id_x)[%vector_index] -> (%dim0, %dim1, %dim2) in #map iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
    %extracted = tensor.extract %input[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
    %0 = arith.mulf %extracted, %extracted : bf16
    %1 = arith.mulf %0, %extracted : bf16
    %2 = arith.mulf %1, %cst_2 : bf16
    %3 = arith.addf %extracted, %2 : bf16
    %4 = arith.mulf %3, %cst_1 : bf16
    %5 = math.tanh %4 : bf16
    %6 = arith.addf %5, %cst_0 : bf16
    %7 = arith.mulf %6, %cst : bf16
    %8 = arith.mulf %extracted, %7 : bf16
    %inserted = tensor.insert %8 into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
    xla_gpu.yield %inserted : tensor<6x512x4096xbf16>
  }
  return %xla_loop : tensor<6x512x4096xbf16>
}

// -----

// A constraint (the grid overshoots 100 elements): its expression is computed by an
// apply_indexing of a map without constraints and checked before the dimensions.
#map = #xla_gpu.indexing_map<"(th_x)[s0] -> (th_x * 4 + s0), domain: th_x in [0, 31], s0 in [0, 3], th_x * 4 + s0 in [0, 99]">
// CHECK:       #[[MAP:.*]] = #xla_gpu.indexing_map<"(th_x)[s0] -> (th_x * 4 + s0), domain: th_x in [0, 31], s0 in [0, 3]">
// CHECK-LABEL: func.func @constrained
// CHECK:         %[[TX:.*]] = gpu.thread_id  x
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C99:.*]] = arith.constant 99 : index
// CHECK-DAG:     %[[C31:.*]] = arith.constant 31 : index
// CHECK:         scf.for %[[S:.*]] = %[[C0]] to %{{.*}} step %{{.*}} iter_args(%[[ITER:.*]] = %{{.*}})
// CHECK-NEXT:      %[[LIN:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[TX]])[%[[S]]]
// CHECK-NEXT:      %[[A:.*]] = arith.cmpi sge, %[[LIN]], %[[C0]] : index
// CHECK-NEXT:      %[[B:.*]] = arith.cmpi sle, %[[LIN]], %[[C99]] : index
// CHECK-NEXT:      %[[LIN_OK:.*]] = arith.andi %[[A]], %[[B]] : i1
// CHECK-NEXT:      %[[C:.*]] = arith.cmpi sge, %[[TX]], %[[C0]] : index
// CHECK-NEXT:      %[[D:.*]] = arith.cmpi sle, %[[TX]], %[[C31]] : index
// CHECK-NEXT:      %[[TX_OK:.*]] = arith.andi %[[C]], %[[D]] : i1
// CHECK-NEXT:      %[[IN:.*]] = arith.andi %[[LIN_OK]], %[[TX_OK]] : i1
// CHECK-NEXT:      scf.if %[[IN]] -> (tensor<100xf32>) {
// CHECK-NEXT:        %[[I:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[TX]])[%[[S]]]
// CHECK-NEXT:        tensor.extract %{{.*}}[%[[I]]]
// CHECK-NOT:     xla_gpu.loop
func.func @constrained(%input: tensor<100xf32>, %output: tensor<100xf32>) -> tensor<100xf32> {
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 31 : index]}
  %xla_loop = xla_gpu.loop (%thread_id_x)[%s] -> (%linear) in #map iter_args(%iter = %output) -> (tensor<100xf32>) {
    %x = tensor.extract %input[%linear] : tensor<100xf32>
    %inserted = tensor.insert %x into %iter[%linear] : tensor<100xf32>
    xla_gpu.yield %inserted : tensor<100xf32>
  }
  return %xla_loop : tensor<100xf32>
}

// -----

// A constraint on the outer range variable only (a masked tile row) is checked between the
// loops: the inner loop, which it does not name, runs inside the scf.if, whole. Its map is
// the outer loop's: only the range variables bound so far.
#map = #xla_gpu.indexing_map<"(th_x)[s0, s1] -> (s0 * 64 + th_x * 2 + s1), domain: th_x in [0, 31], s0 in [0, 3], s1 in [0, 1], s0 * 32 + th_x in [0, 99]">
// CHECK:       #[[CHECK_MAP:.*]] = #xla_gpu.indexing_map<"(th_x)[s0] -> (s0 * 32 + th_x), domain: th_x in [0, 31], s0 in [0, 3]">
// CHECK-LABEL: func.func @constrained_outer
// CHECK:         scf.for %[[S0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ITER:.*]] = %{{.*}})
// CHECK-NEXT:      %[[ROW:.*]] = xla_gpu.apply_indexing #[[CHECK_MAP]](%{{.*}})[%[[S0]]]
// CHECK:           scf.if %{{.*}} -> (tensor<200xf32>) {
// CHECK-NEXT:        scf.for %[[S1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[INNER:.*]] = %[[ITER]])
// CHECK-NEXT:          %[[I:.*]] = xla_gpu.apply_indexing #{{.*}}(%{{.*}})[%[[S0]], %[[S1]]]
// CHECK-NEXT:          tensor.extract %{{.*}}[%[[I]]]
// CHECK-NEXT:          tensor.insert %{{.*}} into %[[INNER]][%[[I]]]
// CHECK-NEXT:          scf.yield
// CHECK-NEXT:        }
func.func @constrained_outer(%input: tensor<200xf32>, %output: tensor<200xf32>) -> tensor<200xf32> {
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 31 : index]}
  %xla_loop = xla_gpu.loop (%thread_id_x)[%s, %v] -> (%linear) in #map iter_args(%iter = %output) -> (tensor<200xf32>) {
    %x = tensor.extract %input[%linear] : tensor<200xf32>
    %inserted = tensor.insert %x into %iter[%linear] : tensor<200xf32>
    xla_gpu.yield %inserted : tensor<200xf32>
  }
  return %xla_loop : tensor<200xf32>
}

// -----

// Two range variables: two nested loops from each lower bound to its upper bound + 1, both
// iter args threaded through both. A result that is a range variable or a constant needs no
// apply_indexing. The check of the dimension goes above both loops.
#map = #xla_gpu.indexing_map<"(d0)[s0, s1] -> (s0, d0 + s1 * 2, 7), domain: d0 in [0, 1], s0 in [0, 2], s1 in [1, 4]">
// CHECK:       #[[MAP:.*]] = #xla_gpu.indexing_map<"(d0)[s0, s1] -> (d0 + s1 * 2), domain: d0 in [0, 1], s0 in [0, 2], s1 in [1, 4]">
// CHECK-LABEL: func.func @two_symbols
// CHECK-SAME:      (%[[T:.*]]: tensor<3x10x8xf32>, %[[INIT:.*]]: f32, %[[D0:.*]]: index)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[C7:.*]] = arith.constant 7 : index
// CHECK:         arith.cmpi sge, %[[D0]], %[[C0]]
// CHECK-NEXT:    arith.cmpi sle, %[[D0]], %[[C1]]
// CHECK-NEXT:    %[[IN:.*]] = arith.andi
// CHECK-NEXT:    %[[IF:.*]]:2 = scf.if %[[IN]] -> (f32, f32) {
// CHECK-NEXT:      %[[OUTER:.*]]:2 = scf.for %[[I:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[S0:.*]] = %[[INIT]], %[[P0:.*]] = %[[INIT]]) -> (f32, f32) {
// CHECK-NEXT:        %[[INNER:.*]]:2 = scf.for %[[J:.*]] = %[[C1]] to %[[C5]] step %[[C1]] iter_args(%[[S1:.*]] = %[[S0]], %[[P1:.*]] = %[[P0]]) -> (f32, f32) {
// CHECK-NEXT:          %[[B:.*]] = xla_gpu.apply_indexing #[[MAP]](%[[D0]])[%[[I]], %[[J]]]
// CHECK-NEXT:          %[[X:.*]] = tensor.extract %[[T]][%[[I]], %[[B]], %[[C7]]]
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[S1]], %[[X]]
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[P1]], %[[X]]
// CHECK-NEXT:          scf.yield %[[S]], %[[P]] : f32, f32
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.yield %[[INNER]]#0, %[[INNER]]#1 : f32, f32
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[OUTER]]#0, %[[OUTER]]#1 : f32, f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[INIT]], %[[INIT]] : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.addf %[[IF]]#0, %[[IF]]#1
func.func @two_symbols(%input: tensor<3x10x8xf32>, %init: f32, %d0: index) -> f32 {
  %r:2 = xla_gpu.loop (%d0)[%i, %j] -> (%a, %b, %c) in #map iter_args(%sum = %init, %prod = %init) -> (f32, f32) {
    %x = tensor.extract %input[%a, %b, %c] : tensor<3x10x8xf32>
    %s = arith.addf %sum, %x : f32
    %p = arith.mulf %prod, %x : f32
    xla_gpu.yield %s, %p : f32, f32
  }
  %r2 = arith.addf %r#0, %r#1 : f32
  return %r2 : f32
}

// -----

// Without range variables there is no scf.for; a dimension with a one-point range is
// checked with `eq`.
#map = #xla_gpu.indexing_map<"(d0) -> (d0 floordiv 2), domain: d0 in [3, 3]">
// CHECK-LABEL: func.func @no_symbols
// CHECK-SAME:      (%[[T:.*]]: tensor<8xf32>, %[[D0:.*]]: index)
// CHECK-NOT:     scf.for
// CHECK:         %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi eq, %[[D0]], %[[C3]] : index
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK-NEXT:      %[[A:.*]] = xla_gpu.apply_indexing #{{.*}}(%[[D0]])
// CHECK-NEXT:      %[[X:.*]] = tensor.extract %[[T]][%[[A]]]
// CHECK-NEXT:      scf.yield %[[X]] : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %{{.*}} : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @no_symbols(%t: tensor<8xf32>, %d0: index) -> f32 {
  %f = arith.constant 0.0 : f32
  %r = xla_gpu.loop (%d0)[] -> (%a) in #map iter_args(%acc = %f) -> (f32) {
    %x = tensor.extract %t[%a] : tensor<8xf32>
    xla_gpu.yield %x : f32
  }
  return %r : f32
}

// -----

// CHECK-LABEL: func.func @predicated
// CHECK-SAME:      (%[[T:.*]]: tensor<8xf32>, %[[I:.*]]: index, %[[C:.*]]: i1, %[[V:.*]]: f32)
// CHECK-NEXT:    %[[INS:.*]] = scf.if %[[C]] -> (tensor<8xf32>) {
// CHECK-NEXT:      %[[NEW:.*]] = tensor.insert %[[V]] into %[[T]][%[[I]]] : tensor<8xf32>
// CHECK-NEXT:      scf.yield %[[NEW]] : tensor<8xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[T]] : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[EXT:.*]] = scf.if %[[C]] -> (f32) {
// CHECK-NEXT:      %[[E:.*]] = tensor.extract %[[T]][%[[I]]] : tensor<8xf32>
// CHECK-NEXT:      scf.yield %[[E]] : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[V]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[INS]], %[[EXT]]
func.func @predicated(%t: tensor<8xf32>, %i: index, %c: i1, %v: f32) -> (tensor<8xf32>, f32) {
  %0 = xla_gpu.predicated_insert %v into %t[%i] if %c : tensor<8xf32>
  %1 = xla_gpu.predicated_extract %t[%i] if %c else %v : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, f32
}

// -----

// A warp reduction to distance 4: shuffles at 4, 2 and 1 (width 32), each followed by the
// combiner on (own values, shuffled values). f32 shuffles as it is, bf16 through i16 zero
// extended to i32, f64 through i64 in two 32-bit halves.
// CHECK-LABEL: func.func @shuffle
// CHECK-SAME:      (%[[A:.*]]: f32, %[[B:.*]]: bf16, %[[C:.*]]: f64)
// CHECK-DAG:     %[[W:.*]] = arith.constant 32 : i32
// CHECK-DAG:     %[[D4:.*]] = arith.constant 4 : i32
// CHECK:         %[[SA:.*]]:2 = gpu.shuffle  xor %[[A]], %[[D4]], %[[W]] : f32
// CHECK-NEXT:    %[[BI:.*]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK-NEXT:    %[[BW:.*]] = arith.extui %[[BI]] : i16 to i32
// CHECK-NEXT:    %[[SB:.*]]:2 = gpu.shuffle  xor %[[BW]], %[[D4]], %[[W]] : i32
// CHECK-NEXT:    %[[BN:.*]] = arith.trunci %[[SB]]#0 : i32 to i16
// CHECK-NEXT:    %[[B2:.*]] = arith.bitcast %[[BN]] : i16 to bf16
// CHECK-NEXT:    %[[CI:.*]] = arith.bitcast %[[C]] : f64 to i64
// CHECK-NEXT:    %[[LO:.*]] = arith.trunci %[[CI]] : i64 to i32
// CHECK-NEXT:    %[[SLO:.*]]:2 = gpu.shuffle  xor %[[LO]], %[[D4]], %[[W]] : i32
// CHECK-NEXT:    %[[LO2:.*]] = arith.extui %[[SLO]]#0 : i32 to i64
// CHECK-NEXT:    %[[C32:.*]] = arith.constant 32 : i64
// CHECK-NEXT:    %[[HI_W:.*]] = arith.shrui %[[CI]], %[[C32]] : i64
// CHECK-NEXT:    %[[HI:.*]] = arith.trunci %[[HI_W]] : i64 to i32
// CHECK-NEXT:    %[[SHI:.*]]:2 = gpu.shuffle  xor %[[HI]], %[[D4]], %[[W]] : i32
// CHECK-NEXT:    %[[HI2:.*]] = arith.extui %[[SHI]]#0 : i32 to i64
// CHECK-NEXT:    %[[HI3:.*]] = arith.shli %[[HI2]], %[[C32]] : i64
// CHECK-NEXT:    %[[CJ:.*]] = arith.ori %[[LO2]], %[[HI3]] : i64
// CHECK-NEXT:    %[[C2:.*]] = arith.bitcast %[[CJ]] : i64 to f64
// CHECK-NEXT:    %[[R4:.*]]:3 = call @combine(%[[A]], %[[B]], %[[C]], %[[SA]]#0, %[[B2]], %[[C2]])
// CHECK-NEXT:    %[[D2:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    gpu.shuffle  xor %[[R4]]#0, %[[D2]], %[[W]] : f32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %[[D2]], %[[W]] : i32
// CHECK:         %[[R2:.*]]:3 = call @combine(%[[R4]]#0, %[[R4]]#1, %[[R4]]#2,
// CHECK-NEXT:    %[[D1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    gpu.shuffle  xor %[[R2]]#0, %[[D1]], %[[W]] : f32
// CHECK-COUNT-3: gpu.shuffle  xor %{{.*}}, %[[D1]], %[[W]] : i32
// CHECK:         %[[R1:.*]]:3 = call @combine(%[[R2]]#0, %[[R2]]#1, %[[R2]]#2,
// CHECK-NEXT:    return %[[R1]]#0, %[[R1]]#1, %[[R1]]#2
// CHECK-NOT:     xla_gpu
func.func @shuffle(%a: f32, %b: bf16, %c: f64) -> (f32, bf16, f64) {
  %0:3 = xla_gpu.shuffle_reduce(%a, %b, %c) to 4 combiner=@combine : f32, bf16, f64
  return %0#0, %0#1, %0#2 : f32, bf16, f64
}
func.func private @combine(%a: f32, %b: bf16, %c: f64, %a2: f32, %b2: bf16, %c2: f64) -> (f32, bf16, f64) {
  %0 = arith.addf %a, %a2 : f32
  %1 = arith.maximumf %b, %b2 : bf16
  %2 = arith.addf %c, %c2 : f64
  return %0, %1, %2 : f32, bf16, f64
}

// -----

// Narrow integers are zero-extended to 32 bits and truncated back.
// CHECK-LABEL: func.func @shuffle_i1
// CHECK-NEXT:    %[[W:.*]] = arith.constant 32 : i32
// CHECK-NEXT:    %[[D:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[X:.*]] = arith.extui %{{.*}} : i1 to i32
// CHECK-NEXT:    %[[S:.*]]:2 = gpu.shuffle  xor %[[X]], %[[D]], %[[W]] : i32
// CHECK-NEXT:    %[[N:.*]] = arith.trunci %[[S]]#0 : i32 to i1
// CHECK-NEXT:    call @or(%{{.*}}, %[[N]])
func.func @shuffle_i1(%p: i1) -> i1 {
  %0 = xla_gpu.shuffle_reduce(%p) to 1 combiner=@or : i1
  return %0 : i1
}
func.func private @or(%a: i1, %b: i1) -> i1 {
  %0 = arith.ori %a, %b : i1
  return %0 : i1
}

// -----

// `xla.unroll` (unroll fully: the values stay in registers) goes to every loop of the nest.
#map = #xla_gpu.indexing_map<"(th_x)[s0, s1] -> (s0 * 64 + th_x * 2 + s1), domain: th_x in [0, 31], s0 in [0, 1], s1 in [0, 1]">
// CHECK-LABEL: func.func @unrolled
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:           } {xla.unroll}
// CHECK:         } {xla.unroll}
func.func @unrolled(%input: tensor<128xf32>, %init: f32) -> f32 {
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 31 : index]}
  %sum = xla_gpu.loop (%thread_id_x)[%s0, %s1] -> (%linear) in #map iter_args(%acc = %init) -> (f32) {
    %x = tensor.extract %input[%linear] : tensor<128xf32>
    %next = arith.addf %acc, %x : f32
    xla_gpu.yield %next : f32
  } {xla.unroll}
  return %sum : f32
}
