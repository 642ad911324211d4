// RUN: hlo-opt %s --split-input-file --lower-tensors | FileCheck %s

// The seed's GELU after unrolling: the kernel's tensors become 16-byte aligned, noalias
// pointers; the input is never written, so its vector load is invariant; the offset is a
// multiple of 4 elements (th_x * 4 + bl_x * 512 + 0), so the 8-byte vectors are 8-byte
// aligned; the thread and block ids are special registers with their ranges; the function
// no longer returns the output tensor.
#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (th_x * 4 + bl_x * 512 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[IN:.*]]: !llvm.ptr {llvm.align = 16 : i64, llvm.dereferenceable = 25165824 : i64, llvm.noalias},
// CHECK-SAME:      %[[OUT:.*]]: !llvm.ptr {llvm.align = 16 : i64, llvm.dereferenceable = 25165824 : i64, llvm.noalias}) {
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
// CHECK-NEXT:    %[[TX:.*]] = arith.index_castui %[[TID]] : i32 to index
// CHECK-NEXT:    %[[CTAID:.*]] = nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 24576> : i32
// CHECK-NEXT:    %[[BX:.*]] = arith.index_castui %[[CTAID]] : i32 to index
// CHECK-NEXT:    %[[DIM:.*]] = xla_gpu.apply_indexing #{{.*}}(%[[TX]], %[[BX]])[%{{.*}}]
// CHECK-NEXT:    %[[I:.*]] = arith.index_castui %[[DIM]] : index to i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %[[IN]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
// CHECK-NEXT:    %[[V:.*]] = llvm.load %[[P]] invariant {alignment = 8 : i64} : !llvm.ptr -> vector<4xbf16>
// CHECK-NEXT:    %[[X0:.*]] = vector.extract %[[V]][0] : bf16 from vector<4xbf16>
// CHECK:         %[[R:.*]] = vector.insert %{{.*}}, %{{.*}} [3] : bf16 into vector<4xbf16>
// CHECK-NEXT:    %[[J:.*]] = arith.index_castui %[[DIM]] : index to i64
// CHECK-NEXT:    %[[Q:.*]] = llvm.getelementptr inbounds %[[OUT]][%[[J]]] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
// CHECK-NEXT:    llvm.store %[[R]], %[[Q]] {alignment = 8 : i64} : vector<4xbf16>, !llvm.ptr
// CHECK-NEXT:    return{{$}}
// CHECK-NOT:     tensor
func.func @main(%input: tensor<12582912xbf16>, %output: tensor<12582912xbf16>) -> tensor<12582912xbf16> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : bf16
  %cst_0 = arith.constant dense<0.000000e+00> : vector<4xbf16>
  %cst_1 = arith.constant 5.000000e-01 : bf16
  %cst_2 = arith.constant 1.000000e+00 : bf16
  %cst_3 = arith.constant 7.968750e-01 : bf16
  %cst_4 = arith.constant 4.467770e-02 : bf16
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
  %block_id_x = gpu.block_id  x {xla.range = [0 : index, 24575 : index]}
  %dim = xla_gpu.apply_indexing #map(%thread_id_x, %block_id_x)[%c0]
  %2 = vector.transfer_read %input[%dim], %cst {in_bounds = [true]} : tensor<12582912xbf16>, vector<4xbf16>
  %3 = vector.extract %2[0] : bf16 from vector<4xbf16>
  %4 = arith.mulf %3, %3 : bf16
  %5 = arith.mulf %4, %3 : bf16
  %6 = arith.mulf %5, %cst_4 : bf16
  %7 = arith.addf %3, %6 : bf16
  %8 = arith.mulf %7, %cst_3 : bf16
  %9 = math.tanh %8 : bf16
  %10 = arith.addf %9, %cst_2 : bf16
  %11 = arith.mulf %10, %cst_1 : bf16
  %12 = arith.mulf %3, %11 : bf16
  %13 = vector.insert %12, %cst_0 [0] : bf16 into vector<4xbf16>
  %14 = vector.extract %2[1] : bf16 from vector<4xbf16>
  %24 = vector.insert %14, %13 [1] : bf16 into vector<4xbf16>
  %25 = vector.extract %2[2] : bf16 from vector<4xbf16>
  %35 = vector.insert %25, %24 [2] : bf16 into vector<4xbf16>
  %36 = vector.extract %2[3] : bf16 from vector<4xbf16>
  %46 = vector.insert %36, %35 [3] : bf16 into vector<4xbf16>
  %47 = vector.transfer_write %46, %output[%dim] {in_bounds = [true]} : vector<4xbf16>, tensor<12582912xbf16>
  return %47 : tensor<12582912xbf16>
}

// -----

// A shared-memory tile: a private address space 3 global; every value of the tile (the
// allocation, the inserted and the synchronized tensors) is its address. The input is only
// read (invariant); the output is written (not invariant, even where it is read back).
// Scalar accesses carry the alignment their index proves, here that of one element.
// CHECK:       llvm.mlir.global private @shared_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x f32>
// CHECK-LABEL: func.func @tile(
// CHECK-SAME:      %[[IN:[^:]*]]: !llvm.ptr {{.*}}, %[[OUT:[^:]*]]: !llvm.ptr {{.*}}) -> f32 {
// CHECK:         %[[TX:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK:         %[[SHMEM:.*]] = llvm.mlir.addressof @shared_0 : !llvm.ptr<3>
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %[[IN]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[X:.*]] = llvm.load %[[P]] invariant {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:         %[[S:.*]] = llvm.getelementptr inbounds %[[SHMEM]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK-NEXT:    llvm.store %[[X]], %[[S]] {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK-NEXT:    nvvm.barrier0
// CHECK:         %[[T:.*]] = llvm.getelementptr inbounds %[[SHMEM]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK-NEXT:    %[[Y:.*]] = llvm.load %[[T]] {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK:         %[[O:.*]] = llvm.getelementptr inbounds %[[OUT]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %[[Y]], %[[O]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK:         %[[B:.*]] = llvm.getelementptr inbounds %[[OUT]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.load %[[B]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NOT:     xla_gpu
// CHECK:         return %{{.*}} : f32
func.func @tile(%in: tensor<32xf32>, %out: tensor<32xf32>) -> f32 {
  %c31 = arith.constant 31 : index
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 31 : index]}
  %shmem = xla_gpu.allocate_shared : tensor<32xf32>
  %x = tensor.extract %in[%thread_id_x] : tensor<32xf32>
  %written = tensor.insert %x into %shmem[%thread_id_x] : tensor<32xf32>
  %synced = xla_gpu.sync_threads %written : tensor<32xf32>
  %mirror = arith.subi %c31, %thread_id_x : index
  %y = tensor.extract %synced[%mirror] : tensor<32xf32>
  %stored = tensor.insert %y into %out[%thread_id_x] : tensor<32xf32>
  %back = tensor.extract %stored[%mirror] : tensor<32xf32>
  return %back : f32
}

// -----

// Tensors through scf.for iter args and scf.if results collapse onto the buffer: the loop
// keeps only its non-tensor iter arg, the branch only its non-tensor result.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME:      %[[IN:[^:]*]]: !llvm.ptr {{.*}}, %[[OUT:[^:]*]]: !llvm.ptr {{.*}}) -> f32 {
// CHECK:         %[[LOOP:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT:      %[[OFF:.*]] = arith.index_castui %[[I]] : index to i64
// CHECK-NEXT:      %[[P:.*]] = llvm.getelementptr inbounds %[[IN]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:      %[[X:.*]] = llvm.load %[[P]] invariant {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:           %[[IF:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:             llvm.store %[[X]], %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK-NEXT:        scf.yield %[[X]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[ACC]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]], %[[IF]] : f32
// CHECK-NEXT:      scf.yield %[[SUM]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[LOOP]] : f32
func.func @loop(%in: tensor<64xf32>, %out: tensor<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.000000e+00 : f32
  %r:2 = scf.for %i = %c0 to %c64 step %c1 iter_args(%t = %out, %acc = %zero) -> (tensor<64xf32>, f32) {
    %x = tensor.extract %in[%i] : tensor<64xf32>
    %positive = arith.cmpf ogt, %x, %zero : f32
    %u:2 = scf.if %positive -> (tensor<64xf32>, f32) {
      %t2 = tensor.insert %x into %t[%i] : tensor<64xf32>
      scf.yield %t2, %x : tensor<64xf32>, f32
    } else {
      scf.yield %t, %acc : tensor<64xf32>, f32
    }
    %sum = arith.addf %acc, %u#1 : f32
    scf.yield %u#0, %sum : tensor<64xf32>, f32
  }
  return %r#1 : f32
}

// -----

// A constant tensor becomes a private constant global; a 0-d tensor is read at offset 0;
// vector transfers of pred store bytes, and an offset of unknown parity only proves the
// alignment of one element.
// CHECK:       llvm.mlir.global private constant @global_cst_0(dense<[1, 5, 9, 13]> : tensor<4xi32>) {addr_space = 0 : i32, alignment = 16 : i64} : !llvm.array<4 x i32>
// CHECK-LABEL: func.func @constants(
// CHECK-SAME:      %[[SCALAR:[^:]*]]: !llvm.ptr {{.*}}, %[[PRED:[^:]*]]: !llvm.ptr {{.*}}, %[[I:[^:]*]]: index)
// CHECK:         %[[TABLE:.*]] = llvm.mlir.addressof @global_cst_0 : !llvm.ptr
// CHECK:         llvm.getelementptr inbounds %[[TABLE]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// CHECK-NEXT:    llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[S:.*]] = llvm.getelementptr inbounds %[[SCALAR]][%[[ZERO]]] : (!llvm.ptr, i64) -> !llvm.ptr, i32
// CHECK-NEXT:    llvm.load %[[S]] invariant : !llvm.ptr -> i32
// CHECK:         %[[B:.*]] = llvm.getelementptr inbounds %[[PRED]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.load %[[B]] {alignment = 1 : i64} : !llvm.ptr -> vector<2xi8>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant dense<0> : vector<2xi8>
// CHECK-NEXT:    %[[BITS:.*]] = arith.cmpi ne, %[[BYTES]], %[[Z]] : vector<2xi8>
// CHECK:         %[[WIDE:.*]] = arith.extui %{{.*}} : vector<2xi1> to vector<2xi8>
// CHECK:         llvm.store %[[WIDE]], %{{.*}} {alignment = 1 : i64} : vector<2xi8>, !llvm.ptr
func.func @constants(%scalar: tensor<i32>, %pred: tensor<8xi1>, %i: index) -> i32 {
  %table = arith.constant dense<[1, 5, 9, 13]> : tensor<4xi32>
  %c3 = arith.constant 3 : index
  %false = arith.constant false
  %k = arith.andi %i, %c3 : index
  %a = tensor.extract %table[%k] : tensor<4xi32>
  %b = tensor.extract %scalar[] : tensor<i32>
  %sum = arith.addi %a, %b : i32
  %bits = vector.transfer_read %pred[%i], %false {in_bounds = [true]} : tensor<8xi1>, vector<2xi1>
  %flipped = arith.xori %bits, %bits : vector<2xi1>
  %unused = vector.transfer_write %flipped, %pred[%i] {in_bounds = [true]} : vector<2xi1>, tensor<8xi1>
  return %sum : i32
}

// -----

// Private functions take pointers too (no kernel annotations, no invariant loads), and
// calls pass the buffer; a buffer handed to a call counts as written. The load at offset 0
// has the buffer's alignment, 16.
// CHECK-LABEL: func.func @caller(
// CHECK-SAME:      %[[T:[^:]*]]: !llvm.ptr {llvm.align = 16 : i64, llvm.dereferenceable = 64 : i64, llvm.noalias}) -> f32 {
// CHECK:         %[[X:.*]] = call @callee(%[[T]], %{{.*}}) : (!llvm.ptr, index) -> f32
// CHECK:         llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> f32
// CHECK-LABEL: func.func private @callee(
// CHECK-SAME:      %[[P:[^:]*]]: !llvm.ptr, %[[I:[^:]*]]: index {xla.range = [0 : index, 15 : index]}) -> f32 {
// CHECK:         llvm.getelementptr inbounds %[[P]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
func.func @caller(%t: tensor<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = func.call @callee(%t, %c0) : (tensor<16xf32>, index) -> f32
  %y = tensor.extract %t[%c0] : tensor<16xf32>
  %z = arith.addf %x, %y : f32
  return %z : f32
}
func.func private @callee(%t: tensor<16xf32>, %i: index {xla.range = [0 : index, 15 : index]}) -> f32 {
  %x = tensor.extract %t[%i] : tensor<16xf32>
  return %x : f32
}

// -----

// A body that is the complex add of the current value and an update (c128: an i128
// pattern, real part low), op for op as the emitters write it, is two f64 atomic adds at
// the element and one part further, of the update's halves; the body is not kept (there is
// no 128-bit atomic). Bodies that only look alike are refused: lower-tensors-invalid.mlir.
// CHECK-LABEL: func.func @complex_add
// CHECK: %[[LOW:.*]] = arith.trunci %[[UPDATE:.*]] : i128 to i64
// CHECK: arith.shrui %[[UPDATE]]
// CHECK: %[[IMAG:[0-9]+]] = llvm.getelementptr inbounds %[[REAL:[0-9]+]][1] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK: "llvm.atomicrmw"(%[[REAL]], %{{[0-9]+}}) <{bin_op = 11 : i64, ordering = 2 : i64}> : (!llvm.ptr, f64) -> f64
// CHECK: "llvm.atomicrmw"(%[[IMAG]], %{{[0-9]+}}) <{bin_op = 11 : i64, ordering = 2 : i64}> : (!llvm.ptr, f64) -> f64
// CHECK-NOT: llvm.cmpxchg
func.func @complex_add(%t: tensor<4xi128>, %update: i128, %i: index) -> tensor<4xi128> {
  %c64 = arith.constant 64 : i128
  %r = xla_gpu.atomic_rmw %t[%i] : tensor<4xi128> {
  ^bb0(%current: i128):
    %0 = arith.trunci %current : i128 to i64
    %1 = arith.shrui %current, %c64 : i128
    %2 = arith.trunci %1 : i128 to i64
    %3 = arith.bitcast %0 : i64 to f64
    %4 = arith.bitcast %2 : i64 to f64
    %5 = arith.trunci %update : i128 to i64
    %6 = arith.shrui %update, %c64 : i128
    %7 = arith.trunci %6 : i128 to i64
    %8 = arith.bitcast %5 : i64 to f64
    %9 = arith.bitcast %7 : i64 to f64
    %10 = arith.addf %3, %8 : f64
    %11 = arith.addf %4, %9 : f64
    %12 = arith.bitcast %10 : f64 to i64
    %13 = arith.bitcast %11 : f64 to i64
    %14 = arith.extui %12 : i64 to i128
    %15 = arith.extui %13 : i64 to i128
    %16 = arith.shli %15, %c64 : i128
    %17 = arith.ori %14, %16 : i128
    xla_gpu.yield %17 : i128
  }
  return %r : tensor<4xi128>
}

// -----

// An i64 body that adds the pattern as one f64 (not a c64 add) keeps the compare-and-swap
// loop.
// CHECK-LABEL: func.func @one_f64_add
// CHECK: llvm.cmpxchg
// CHECK-NOT: llvm.atomicrmw
func.func @one_f64_add(%t: tensor<4xi64>, %update: i64, %i: index) -> tensor<4xi64> {
  %r = xla_gpu.atomic_rmw %t[%i] : tensor<4xi64> {
  ^bb0(%current: i64):
    %x = arith.bitcast %current : i64 to f64
    %y = arith.bitcast %update : i64 to f64
    %z = arith.addf %x, %y : f64
    %w = arith.bitcast %z : f64 to i64
    xla_gpu.yield %w : i64
  }
  return %r : tensor<4xi64>
}
