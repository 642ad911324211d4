// A barrier only half of the block reaches: the threads that wait there would wait forever
// on a GPU. The interpreter reports barrier divergence at the barrier, naming both threads.
// RUN: not hlo-interp %s --grid=1x64 2>&1 | FileCheck %s
// CHECK: barrier-divergence.mlir:[[# @LINE + 9]]:5: error: barrier divergence: thread 0 waits at this barrier, but thread 16 has exited in 'gpu.barrier' (block 0, thread 0)

func.func @main(%out: tensor<64xf32>) -> tensor<64xf32> {
  %c16 = arith.constant 16 : index
  %tid = gpu.thread_id  x {xla.range = [0 : index, 63 : index]}
  %one = arith.constant 1.0 : f32
  %low = arith.cmpi ult, %tid, %c16 : index
  %r = tensor.insert %one into %out[%tid] : tensor<64xf32>
  scf.if %low {
    gpu.barrier
  }
  return %r : tensor<64xf32>
}
