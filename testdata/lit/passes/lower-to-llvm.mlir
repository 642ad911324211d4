// `lower-to-llvm` hands the module to MLIR's upstream conversions: the kernel becomes an
// `llvm.func` marked `gpu.kernel`, index math is 32-bit (every shape is small), and
// transcendental math becomes a libdevice call with bf16 extended to f32 around it.
// RUN: hlo-opt %s --lower-to-llvm | FileCheck %s

// CHECK-LABEL: llvm.func @main(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr) attributes {gpu.kernel}
// CHECK: nvvm.read.ptx.sreg.tid.x : i32
// CHECK: llvm.load %{{.*}} invariant : !llvm.ptr -> vector<4xbf16>
// CHECK: "llvm.fpext"(%{{.*}}) : (bf16) -> f32
// CHECK: llvm.call @__nv_tanhf(%{{.*}}) : (f32) -> f32
// CHECK: "llvm.fptrunc"(%{{.*}}) : (f32) -> bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xbf16>, !llvm.ptr
// CHECK: llvm.return
// CHECK: llvm.func @__nv_tanhf(f32) -> f32
module {
  func.func @main(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr) attributes {gpu.kernel} {
    %0 = nvvm.read.ptx.sreg.tid.x : i32
    %1 = arith.index_cast %0 : i32 to index
    %c4 = arith.constant 4 : index
    %2 = arith.muli %1, %c4 : index
    %i = arith.index_cast %2 : index to i32
    %3 = llvm.getelementptr inbounds %arg0[%i] : (!llvm.ptr, i32) -> !llvm.ptr, bf16
    %4 = llvm.load %3 invariant : !llvm.ptr -> vector<4xbf16>
    %c0 = arith.constant 0 : index
    %5 = vector.extract %4[%c0] : bf16 from vector<4xbf16>
    %6 = arith.extf %5 : bf16 to f32
    %7 = math.tanh %6 : f32
    %8 = arith.truncf %7 : f32 to bf16
    %9 = vector.insert %8, %4 [%c0] : bf16 into vector<4xbf16>
    %10 = llvm.getelementptr inbounds %arg1[%i] : (!llvm.ptr, i32) -> !llvm.ptr, bf16
    llvm.store %9, %10 : vector<4xbf16>, !llvm.ptr
    return
  }
}
