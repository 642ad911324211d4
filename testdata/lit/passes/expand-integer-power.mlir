// RUN: hlo-opt %s --split-input-file --expand-integer-power | FileCheck %s

// `math.ipowi` (the elemental emitter's integer `power`) becomes exponentiation by squaring:
// an `scf.for` over every bit of the type (32 for i32, where XLA's runs 6 and is exact only
// when the power does not wrap), then the answer for a negative exponent. XLA's test
// (expand_integer_power.mlir) asks only that no `math.ipowi` is left.

// CHECK-LABEL: func.func @scalar
// CHECK-NOT:     math.ipowi
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK:         %[[LOOP:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[C32]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[BASE:.*]] = %arg0, %[[E:.*]] = %arg1) -> (i32, i32, i32)
// CHECK:           %[[PRODUCT:.*]] = arith.muli %[[ACC]], %[[BASE]] : i32
// CHECK:           arith.select %{{.*}}, %[[PRODUCT]], %[[ACC]] : i32
// CHECK:           arith.muli %[[BASE]], %[[BASE]] : i32
// CHECK:           arith.shrui %[[E]], %{{.*}} : i32
// CHECK:         %[[NEGATIVE:.*]] = arith.cmpi slt, %arg1, %{{.*}} : i32
// CHECK:         %[[RESULT:.*]] = arith.select %[[NEGATIVE]], %{{.*}}, %[[LOOP]]#0 : i32
// CHECK:         return %[[RESULT]] : i32
func.func @scalar(%arg0: i32, %arg1: i32) -> i32 {
  %0 = math.ipowi %arg0, %arg1 : i32
  func.return %0 : i32
}

// -----

// CHECK-LABEL: func.func @narrow
// CHECK-NOT:     math.ipowi
// CHECK:         arith.constant 8 : index
func.func @narrow(%arg0: i8, %arg1: i8) -> i8 {
  %0 = math.ipowi %arg0, %arg1 : i8
  func.return %0 : i8
}

// -----

// Vectors and tensors (XLA's test has both) are expanded lane by lane: the same loop over
// shaped values, the constants splats.

// CHECK-LABEL: func.func @vector
// CHECK-NOT:     math.ipowi
// CHECK-DAG:     %[[ONE:.*]] = arith.constant dense<1> : vector<4xi32>
// CHECK:         %[[LOOP:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %[[ONE]], %{{.*}} = %arg0, %{{.*}} = %arg1) -> (vector<4xi32>, vector<4xi32>, vector<4xi32>)
// CHECK:           arith.cmpi ne, %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK:         %[[NEGATIVE:.*]] = arith.cmpi slt, %arg1, %{{.*}} : vector<4xi32>
// CHECK:         arith.select %[[NEGATIVE]], %{{.*}}, %[[LOOP]]#0 : vector<4xi1>, vector<4xi32>
func.func @vector(%arg0: vector<4xi32>, %arg1: vector<4xi32>) -> vector<4xi32> {
  %0 = math.ipowi %arg0, %arg1 : vector<4xi32>
  func.return %0 : vector<4xi32>
}

// -----

// CHECK-LABEL: func.func @tensor
// CHECK-NOT:     math.ipowi
// CHECK:         scf.for {{.*}} -> (tensor<6x4xi16>, tensor<6x4xi16>, tensor<6x4xi16>)
func.func @tensor(%arg0: tensor<6x4xi16>, %arg1: tensor<6x4xi16>) -> tensor<6x4xi16> {
  %0 = math.ipowi %arg0, %arg1 : tensor<6x4xi16>
  func.return %0 : tensor<6x4xi16>
}
