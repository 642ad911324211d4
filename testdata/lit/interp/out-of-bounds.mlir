// A kernel that reads one element past the end of its input: the interpreter names the op,
// its location, the index and the first thread that does it.
// RUN: not hlo-interp %s --grid=2x32 2>&1 | FileCheck %s
// CHECK: out-of-bounds.mlir:[[# @LINE + 10]]:3: error: out-of-bounds access: index [64] is out of bounds for 'tensor<64xf32>' (index 64 of dimension 0 of size 64) in 'tensor.extract' (block 1, thread 31)

func.func @main(%in: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32> {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %tid = gpu.thread_id  x {xla.range = [0 : index, 31 : index]}
  %bid = gpu.block_id  x {xla.range = [0 : index, 1 : index]}
  %base = arith.muli %bid, %c32 : index
  %i = arith.addi %base, %tid : index
  %next = arith.addi %i, %c1 : index
  %v = tensor.extract %in[%next] : tensor<64xf32>
  %r = tensor.insert %v into %out[%i] : tensor<64xf32>
  return %r : tensor<64xf32>
}
