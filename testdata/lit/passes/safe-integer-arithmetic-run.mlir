// RUN: hlo-opt %s --safe-integer-arithmetic | FileCheck %s
// RUN: hlo-opt %s --safe-integer-arithmetic | hlo-interp - --grid=1x4 --print-elements=20 | FileCheck %s --check-prefix=HOST
// RUN: not hlo-interp %s --grid=1x4 2>&1 | FileCheck %s --check-prefix=UB

// Divisions and remainders marked xla.guard_ub get XLA's results where the instruction's
// are undefined: x / 0 = -1 (all ones), x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0. The marked
// op is replaced (the mark goes with it); unmarked ones stay. Run on the host, the rewritten
// kernel gives those results for i8 pairs (MIN, -1), (5, 0), (-7, 2), (7, -2) (printed as
// unsigned bytes); before the rewrite the interpreter stops at the first undefined division.

// CHECK-LABEL: func.func @main
// CHECK-DAG:     %[[MIN:.*]] = arith.constant -128 : i8
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %[[Y:.*]], %{{.*}} : i8
// CHECK:         %[[DIVISOR:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Y]] : i8
// CHECK:         %[[Q:.*]] = arith.divsi %[[X:.*]], %[[DIVISOR]] : i8
// CHECK-NOT:     xla.guard_ub
// CHECK:         arith.divui %[[X]], %{{.*}} : i8
// CHECK:         arith.remsi %[[X]], %{{.*}} : i8
// CHECK:         arith.remui %[[X]], %{{.*}} : i8
// CHECK:         arith.divsi %[[X]], %{{.*}} : i8
// CHECK-NOT:     arith.select
// HOST: @main: 1 x 4 threads
// HOST: %arg0: tensor<20xi8> = [128, 0, 0, 128, 214, 255, 255, 5, 5, 1, 253, 124, 255, 1, 254, 253, 0, 1, 7, 2]
// UB: safe-integer-arithmetic-run.mlir:[[# @LINE + 7]]:3: error: undefined behavior: signed division overflow in 'arith.divsi' (block 0, thread 0)
func.func @main(%out: tensor<20xi8>) -> tensor<20xi8> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 3 : index]}
  %xs = arith.constant dense<[-128, 5, -7, 7]> : tensor<4xi8>
  %ys = arith.constant dense<[-1, 0, 2, -2]> : tensor<4xi8>
  %x = tensor.extract %xs[%tid] : tensor<4xi8>
  %y = tensor.extract %ys[%tid] : tensor<4xi8>
  %sdiv = arith.divsi %x, %y {xla.guard_ub} : i8
  %udiv = arith.divui %x, %y {xla.guard_ub} : i8
  %srem = arith.remsi %x, %y {xla.guard_ub} : i8
  %urem = arith.remui %x, %y {xla.guard_ub} : i8
  %c5 = arith.constant 5 : index
  %c1 = arith.constant 1 : index
  %base = arith.muli %tid, %c5 : index
  %i1 = arith.addi %base, %c1 : index
  %i2 = arith.addi %i1, %c1 : index
  %i3 = arith.addi %i2, %c1 : index
  %i4 = arith.addi %i3, %c1 : index
  %o0 = tensor.insert %sdiv into %out[%base] : tensor<20xi8>
  %o1 = tensor.insert %udiv into %o0[%i1] : tensor<20xi8>
  %o2 = tensor.insert %srem into %o1[%i2] : tensor<20xi8>
  %o3 = tensor.insert %urem into %o2[%i3] : tensor<20xi8>
  %three = arith.constant 3 : i8
  %plain = arith.divsi %x, %three : i8
  %o4 = tensor.insert %plain into %o3[%i4] : tensor<20xi8>
  return %o4 : tensor<20xi8>
}
