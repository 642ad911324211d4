// Shared memory read before any thread wrote it (a missing sync_threads in a tiled kernel).
// RUN: not hlo-interp %s --grid=1x32 2>&1 | FileCheck %s
// CHECK: uninitialized-shared.mlir:[[# @LINE + 7]]:3: error: read of uninitialized memory: {{.*}}which no thread has written in 'tensor.extract' (block 0, thread 0)

func.func @main(%out: tensor<32xf32>) -> tensor<32xf32> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 31 : index]}
  %c31 = arith.constant 31 : index
  %shmem = xla_gpu.allocate_shared : tensor<32xf32>
  %mirror = arith.subi %c31, %tid : index
  %v = tensor.extract %shmem[%mirror] : tensor<32xf32>
  %r = tensor.insert %v into %out[%tid] : tensor<32xf32>
  return %r : tensor<32xf32>
}
