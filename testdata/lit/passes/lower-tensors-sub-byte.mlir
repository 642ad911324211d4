// RUN: hlo-opt %s --split-input-file --lower-tensors | FileCheck %s

// Sub-byte elements are packed, the first of a byte in its low bits: element i of an i4
// buffer is byte i / 2, shifted by (i mod 2) * 4. A read loads the byte and shifts it
// down; a write merges the element into its byte with a compare-and-swap loop, since
// another thread may write the other half of the byte at the same time. The buffer is
// half as many bytes (dereferenceable 4 for 8 elements).

// CHECK-LABEL: func.func @copy_i4(
// CHECK-SAME:      llvm.dereferenceable = 4 : i64
// CHECK-SAME:      llvm.dereferenceable = 4 : i64
// CHECK:         %[[OFF:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK:         %[[BYTE:.*]] = arith.shrui %[[OFF]], %{{.*}} : i64
// CHECK:         %[[SLOT:.*]] = arith.andi %[[OFF]], %{{.*}} : i64
// CHECK:         %[[SLOT8:.*]] = arith.trunci %[[SLOT]] : i64 to i8
// CHECK:         %[[SHIFT:.*]] = arith.muli %[[SLOT8]], %{{.*}} : i8
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[BYTE]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         %[[B:.*]] = llvm.load %[[P]] invariant : !llvm.ptr -> i8
// CHECK:         %[[S:.*]] = arith.shrui %[[B]], %[[SHIFT]] : i8
// CHECK:         %[[V:.*]] = arith.trunci %[[S]] : i8 to i4
// CHECK:         %[[OLD:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK:         scf.while (%[[W:.*]] = %[[OLD]]) : (i8) -> i8 {
// CHECK:           %[[MASK:.*]] = arith.shli %c15_i8, %[[SHIFT2:.*]] : i8
// CHECK:           %[[KEEP:.*]] = arith.xori %[[MASK]], %c-1_i8 : i8
// CHECK:           %[[KEPT:.*]] = arith.andi %[[W]], %[[KEEP]] : i8
// CHECK:           %[[WIDE:.*]] = arith.extui %[[V]] : i4 to i8
// CHECK:           %[[MOVED:.*]] = arith.shli %[[WIDE]], %[[SHIFT2]] : i8
// CHECK:           %[[NEW:.*]] = arith.ori %[[KEPT]], %[[MOVED]] : i8
// CHECK:           "llvm.cmpxchg"(%{{.*}}, %[[W]], %[[NEW]])
func.func @copy_i4(%in: tensor<8xi4>, %out: tensor<8xi4>, %i: index) -> tensor<8xi4> {
  %x = tensor.extract %in[%i] : tensor<8xi4>
  %r = tensor.insert %x into %out[%i] : tensor<8xi4>
  return %r : tensor<8xi4>
}

// -----

// A constant of i2 elements: four to a byte, held as 32-bit words (MLIR imports i8
// arrays as strings): 0b01_11_10_01_00 = 484. Element i is bits 2 * i of the buffer.
// CHECK:       llvm.mlir.global private constant @global_cst_0(dense<[484]> : tensor<1xi32>)
// CHECK-SAME:  !llvm.array<1 x i32>
// CHECK-LABEL: func.func @constant_i2(
// CHECK-SAME:      llvm.dereferenceable = 2 : i64
// CHECK:         %[[C:.*]] = llvm.mlir.addressof @global_cst_0
// CHECK:         %[[OFF:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK:         %[[BYTE:.*]] = arith.shrui %[[OFF]], %c2_i64 : i64
// CHECK:         arith.andi %[[OFF]], %c3_i64 : i64
// CHECK:         llvm.getelementptr inbounds %[[C]][%[[BYTE]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
func.func @constant_i2(%out: tensor<5xi2>, %i: index) -> tensor<5xi2> {
  %c = arith.constant dense<[0, 1, -2, -1, 1]> : tensor<5xi2>
  %x = tensor.extract %c[%i] : tensor<5xi2>
  %r = tensor.insert %x into %out[%i] : tensor<5xi2>
  return %r : tensor<5xi2>
}

// -----

// A vector read of whole bytes: one load of the packed vector at its first byte, aligned as
// far as the element offset proves (here a multiple of 8 elements: 4 bytes).
// CHECK-LABEL: func.func @read_i4(
// CHECK:         %[[OFF:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK:         %[[BYTE:.*]] = arith.shrui %[[OFF]], %{{.*}} : i64
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[BYTE]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.load %[[P]] invariant {alignment = 4 : i64} : !llvm.ptr -> vector<8xi4>
func.func @read_i4(%in: tensor<64xi4>, %i: index) -> vector<8xi4> {
  %c8 = arith.constant 8 : index
  %c0_i4 = arith.constant 0 : i4
  %at = arith.muli %i, %c8 : index
  %v = vector.transfer_read %in[%at], %c0_i4 {in_bounds = [true]} : tensor<64xi4>, vector<8xi4>
  return %v : vector<8xi4>
}

// -----

// A vector write of whole bytes: the thread owns every element of them, so one plain store
// of the packed vector (no compare-and-swap), aligned as the read is.
// CHECK-LABEL: func.func @write_i4(
// CHECK:         %[[OFF:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK:         %[[BYTE:.*]] = arith.shrui %[[OFF]], %{{.*}} : i64
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[BYTE]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.store %{{.*}}, %[[P]] {alignment = 4 : i64} : vector<8xi4>, !llvm.ptr
// CHECK-NOT:     llvm.cmpxchg
func.func @write_i4(%out: tensor<64xi4>, %v: vector<8xi4>, %i: index) -> tensor<64xi4> {
  %c8 = arith.constant 8 : index
  %at = arith.muli %i, %c8 : index
  %r = vector.transfer_write %v, %out[%at] {in_bounds = [true]} : vector<8xi4>, tensor<64xi4>
  return %r : tensor<64xi4>
}
