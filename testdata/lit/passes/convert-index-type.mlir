// RUN: hlo-opt %s --split-input-file --convert-index-type | FileCheck %s

// Index addi/subi/muli/divui/remui are computed in an integer of the data layout's index
// width: a chain stays narrow (the casts between its ops cancel, constants are narrow
// constants) and only its result is cast back. Comparisons and signed division stay on
// index, as do ops on vectors.

// CHECK-LABEL: func.func @chain
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : i32
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : i32
// CHECK:         %[[X:.*]] = arith.index_cast %arg0 : index to i32
// CHECK:         %[[M:.*]] = arith.muli %[[X]], %[[C4]] : i32
// CHECK:         %[[R:.*]] = arith.remui %[[M]], %[[C3]] : i32
// CHECK:         %[[BACK:.*]] = arith.index_cast %[[R]] : i32 to index
// CHECK:         arith.cmpi ult, %[[BACK]], %arg1 : index
// CHECK:         arith.divsi %[[BACK]], %arg1 : index
// CHECK:         arith.addi %arg2, %arg2 : vector<2xindex>
module attributes {dlti.dl_spec = #dlti.dl_spec<#dlti.dl_entry<index, 32 : i32>>} {
  func.func @chain(%arg0: index, %arg1: index, %arg2: vector<2xindex>) -> (i1, index, vector<2xindex>) {
    %c4 = arith.constant 4 : index
    %c3 = arith.constant 3 : index
    %m = arith.muli %c4, %arg0 : index
    %r = arith.remui %m, %c3 : index
    %lt = arith.cmpi ult, %r, %arg1 : index
    %d = arith.divsi %r, %arg1 : index
    %v = arith.addi %arg2, %arg2 : vector<2xindex>
    return %lt, %d, %v : i1, index, vector<2xindex>
  }
}

// -----

// A data layout without an index entry: 64 bits.

// CHECK-LABEL: func.func @no_index_entry
// CHECK:         arith.subi %{{.*}}, %{{.*}} : i64
module attributes {dlti.dl_spec = #dlti.dl_spec<#dlti.dl_entry<i64, dense<64> : vector<2xi64>>>} {
  func.func @no_index_entry(%arg0: index, %arg1: index) -> index {
    %s = arith.subi %arg0, %arg1 : index
    return %s : index
  }
}
