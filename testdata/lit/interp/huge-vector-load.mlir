// A load of more lanes than 32 bits count (2^32 + 1 of i128, c128 patterns) is refused at
// the op, not truncated to one lane.
// RUN: not hlo-interp %s --grid=1x1 2>&1 | FileCheck %s
// CHECK: huge-vector-load.mlir:[[@LINE+2]]:3: error: unsupported: loads and stores of 'vector<4294967297xi128>' in 'llvm.load'
func.func @main(%p: !llvm.ptr, %q: !llvm.ptr) {
  %v = llvm.load %p : !llvm.ptr -> vector<4294967297xi128>
  llvm.store %v, %q : vector<4294967297xi128>, !llvm.ptr
  return
}
