// The interpreter folds a `vector.reduce` lane by lane into instructions, so one of more
// lanes than it unrolls (2^16) is refused at the op, not compiled into millions of them.
// RUN: not hlo-interp %s --grid=1x1 2>&1 | FileCheck %s
// CHECK: huge-vector-reduce.mlir:[[@LINE+4]]:3: error: unsupported: a reduction of 'vector<100000xf32>' (at most 65536 lanes are folded) in 'llvm.intr.vector.reduce.fadd'
func.func @main(%p: !llvm.ptr, %q: !llvm.ptr) {
  %v = llvm.load %p : !llvm.ptr -> vector<100000xf32>
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %s = "llvm.intr.vector.reduce.fadd"(%zero, %v) : (f32, vector<100000xf32>) -> f32
  llvm.store %s, %q : f32, !llvm.ptr
  return
}
