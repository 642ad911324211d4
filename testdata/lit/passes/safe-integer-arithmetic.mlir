// RUN: hlo-opt %s --safe-integer-arithmetic | FileCheck %s

// Vectors and index values: the constants are splats; index counts as 64 bits.

// CHECK-LABEL: func.func @shaped
// CHECK-DAG:     arith.constant dense<-1> : vector<4xi32>
// CHECK-DAG:     arith.constant dense<-2147483648> : vector<4xi32>
// CHECK:         arith.divsi %arg0, %{{.*}} : vector<4xi32>
// CHECK:         arith.select %{{.*}}, %arg2, %{{.*}} : index
// CHECK-DAG:     arith.constant -9223372036854775808 : index
// CHECK:         arith.remsi %arg2, %{{.*}} : index
func.func @shaped(%arg0: vector<4xi32>, %arg1: vector<4xi32>, %arg2: index, %arg3: index)
    -> (vector<4xi32>, index, index) {
  %0 = arith.divsi %arg0, %arg1 {xla.guard_ub} : vector<4xi32>
  %1 = arith.remui %arg2, %arg3 {xla.guard_ub} : index
  %2 = arith.remsi %arg2, %arg3 {xla.guard_ub} : index
  return %0, %1, %2 : vector<4xi32>, index, index
}

// -----

// Signed 1-bit values have no safe divisor (1 is -1, by which MIN = -1 overflows): the
// results are selected without dividing, x / y = x and x % y = 0 for y = -1.

// CHECK-LABEL: func.func @bits
// CHECK-NOT:     arith.divsi
// CHECK-NOT:     arith.remsi
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %arg1, %{{.*}} : i1
// CHECK:         arith.select %[[ZERO]], %{{.*}}, %arg0 : i1
// CHECK:         arith.divui %arg0, %{{.*}} : i1
func.func @bits(%arg0: i1, %arg1: i1) -> (i1, i1, i1) {
  %0 = arith.divsi %arg0, %arg1 {xla.guard_ub} : i1
  %1 = arith.remsi %arg0, %arg1 {xla.guard_ub} : i1
  %2 = arith.divui %arg0, %arg1 {xla.guard_ub} : i1
  return %0, %1, %2 : i1, i1, i1
}
