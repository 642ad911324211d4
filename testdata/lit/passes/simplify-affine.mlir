// RUN: hlo-opt %s --split-input-file --simplify-affine | FileCheck %s

// The GELU offset after lower-tensors: the registers' ranges and the constant vector index
// (folded away) leave `th_x * 4 + bl_x * 512`, whose values fit in i32: nsw everywhere.
#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (th_x * 4 + bl_x * 512 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @gelu
// CHECK-DAG:     %[[TX:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK-DAG:     %[[BX:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C512:.*]] = arith.constant 512 : index
// CHECK-DAG:     %[[A:.*]] = arith.muli %[[TX]], %[[C4]] overflow<nsw> : index
// CHECK-DAG:     %[[B:.*]] = arith.muli %[[BX]], %[[C512]] overflow<nsw> : index
// CHECK:         %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} overflow<nsw> : index
// CHECK-NEXT:    return %[[SUM]] : index
func.func @gelu() -> index {
  %c0 = arith.constant 0 : index
  %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
  %thread_id_x = arith.index_castui %tid : i32 to index
  %ctaid = nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 24576> : i32
  %block_id_x = arith.index_castui %ctaid : i32 to index
  %dim = xla_gpu.apply_indexing #map(%thread_id_x, %block_id_x)[%c0]
  return %dim : index
}

// -----

// floordiv and mod of values known to be non-negative are unsigned; a subexpression shared by
// two results is computed once.
#map = #xla_gpu.indexing_map<"(d0) -> (d0 floordiv 8, (d0 floordiv 8) mod 4, d0 mod 8), domain: d0 in [0, 1023]">
// CHECK-LABEL: func.func @unsigned(
// CHECK-SAME:      %[[D:.*]]: index)
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[D]], %[[C8]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[QM:.*]] = arith.remui %[[Q]], %[[C4]] : index
// CHECK-NEXT:    %[[R:.*]] = arith.remui %[[D]], %[[C8]] : index
// CHECK-NEXT:    return %[[Q]], %[[QM]], %[[R]] : index, index, index
func.func @unsigned(%d: index) -> (index, index, index) {
  %r:3 = xla_gpu.apply_indexing #map(%d)
  return %r#0, %r#1, %r#2 : index, index, index
}

// -----

// An operand that may be negative: floor semantics from signed division and remainder.
#map = #xla_gpu.indexing_map<"(d0) -> (d0 floordiv 4, d0 mod 4, d0 ceildiv 4), domain: d0 in [-16, 15]">
// CHECK-LABEL: func.func @signed(
// CHECK-SAME:      %[[D:.*]]: index)
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %[[D]], %[[C4]] : index
// CHECK-NEXT:    %[[R:.*]] = arith.remsi %[[D]], %[[C4]] : index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpi slt, %[[R]], %[[C0]] : index
// CHECK-NEXT:    %[[QM1:.*]] = arith.subi %[[Q]], %[[C1]] : index
// CHECK-NEXT:    %[[FLOOR:.*]] = arith.select %[[NEG]], %[[QM1]], %[[Q]] : index
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[R]], %[[C4]] : index
// CHECK-NEXT:    %[[MOD:.*]] = arith.select %[[NEG]], %[[UP]], %[[R]] : index
// CHECK-NEXT:    %[[POS:.*]] = arith.cmpi sgt, %[[R]], %[[C0]] : index
// CHECK-NEXT:    %[[QP1:.*]] = arith.addi %[[Q]], %[[C1]] : index
// CHECK-NEXT:    %[[CEIL:.*]] = arith.select %[[POS]], %[[QP1]], %[[Q]] : index
// CHECK-NEXT:    return %[[FLOOR]], %[[MOD]], %[[CEIL]] : index, index, index
func.func @signed(%d: index) -> (index, index, index) {
  %r:3 = xla_gpu.apply_indexing #map(%d)
  return %r#0, %r#1, %r#2 : index, index, index
}

// -----

// Operand ranges narrow the domain: `xla.range` on an argument (d1 < 8 makes the division
// exact), a loop's induction variable (s0 in [0, 3]: `mod 4` goes) and the result of an
// earlier apply_indexing (in [0, 15]: `mod 16` goes).
#map = #xla_gpu.indexing_map<"(d0, d1) -> ((d0 * 8 + d1) floordiv 8), domain: d0 in [0, 15], d1 in [0, 63]">
#map1 = #xla_gpu.indexing_map<"()[s0] -> (s0 mod 4), domain: s0 in [-8, 8]">
#map2 = #xla_gpu.indexing_map<"(d0) -> (d0 floordiv 4), domain: d0 in [0, 63]">
#map3 = #xla_gpu.indexing_map<"(d0) -> (d0 mod 16), domain: d0 in [-100, 100]">
// CHECK-LABEL: func.func @ranges(
// CHECK-SAME:      %[[D0:[^:]*]]: index, %[[D1:[^:]*]]: index {xla.range = [0 : index, 7 : index]}, %[[D2:[^:]*]]: index {xla.range = [0 : index, 63 : index]})
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[D0]]) -> (index) {
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[ACC]], %[[I]] : index
// CHECK-NEXT:      scf.yield %[[S]] : index
// CHECK-NEXT:    }
// CHECK:         %[[Q:.*]] = arith.divui %[[D2]], %{{.*}} : index
// CHECK-NEXT:    return %{{.*}}, %[[Q]] : index, index
func.func @ranges(%d0: index, %d1: index {xla.range = [0 : index, 7 : index]}, %d2: index {xla.range = [0 : index, 63 : index]}) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %row = xla_gpu.apply_indexing #map(%d0, %d1)
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %row) -> (index) {
    %lane = xla_gpu.apply_indexing #map1()[%i]
    %s = arith.addi %acc, %lane : index
    scf.yield %s : index
  }
  %q = xla_gpu.apply_indexing #map2(%d2)
  %m = xla_gpu.apply_indexing #map3(%q)
  return %sum, %m : index, index
}

// -----

// Terms of a sum that use values from outside the loop come first (their partial sum can be
// hoisted); negative terms are subtracted; a constant term comes last.
#map = #xla_gpu.indexing_map<"(d0, d1) -> (d1 * 64 - d0 * 2 + 5), domain: d0 in [0, 3], d1 in [0, 100]">
// CHECK-LABEL: func.func @order(
// CHECK-SAME:      %[[OUTER:.*]]: index)
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT:      %[[A:.*]] = arith.muli %[[OUTER]], %[[C64]] overflow<nsw> : index
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[I]], %[[C2]] overflow<nsw> : index
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[A]], %[[B]] overflow<nsw> : index
// CHECK-NEXT:      %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:      %[[E:.*]] = arith.addi %[[D]], %[[C5]] overflow<nsw> : index
// CHECK-NEXT:      call @use(%[[E]]) : (index) -> ()
func.func @order(%outer: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = xla_gpu.apply_indexing #map(%i, %outer)
    func.call @use(%x) : (index) -> ()
  }
  return
}
func.func private @use(index)
