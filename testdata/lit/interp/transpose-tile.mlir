// A 64x64 transpose through a padded shared tile (the seed's transpose emitter, by hand):
// with the barrier it runs and transposes; without it, a thread reads a tile element another
// thread has not published yet.
// RUN: hlo-interp %s --grid=4x128 --print-elements=4 | FileCheck %s
// CHECK: @main: 4 x 128 threads, {{[0-9]+}} ops executed
// CHECK: %arg0: tensor<64x64xf32> = [0, 1, 2, 3, ...]
// CHECK: %arg1: tensor<64x64xf32> = [0, 64, 128, 192, ...]

#read = #xla_gpu.indexing_map<"(th, bl)[s] -> ((bl floordiv 2) * 32 + (th floordiv 32) * 8 + s, (bl mod 2) * 32 + th mod 32, (th floordiv 32) * 8 + s, 0, th mod 32), domain: th in [0, 127], bl in [0, 3], s in [0, 7]">
#write = #xla_gpu.indexing_map<"(th, bl)[s] -> ((bl mod 2) * 32 + (th floordiv 32) * 8 + s, (bl floordiv 2) * 32 + th mod 32, th mod 32, 0, (th floordiv 32) * 8 + s), domain: th in [0, 127], bl in [0, 3], s in [0, 7]">
func.func @main(%in: tensor<64x64xf32>, %out: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
  %bid = gpu.block_id  x {xla.range = [0 : index, 3 : index]}
  %shmem = xla_gpu.allocate_shared : tensor<32x1x33xf32>
  %tile = xla_gpu.loop (%tid, %bid)[%s] -> (%r, %c, %a, %b, %d) in #read iter_args(%iter = %shmem) -> (tensor<32x1x33xf32>) {
    %v = tensor.extract %in[%r, %c] : tensor<64x64xf32>
    %t = tensor.insert %v into %iter[%a, %b, %d] : tensor<32x1x33xf32>
    xla_gpu.yield %t : tensor<32x1x33xf32>
  }
  %synced = xla_gpu.sync_threads %tile : tensor<32x1x33xf32>
  %res = xla_gpu.loop (%tid, %bid)[%s] -> (%r, %c, %a, %b, %d) in #write iter_args(%iter = %out) -> (tensor<64x64xf32>) {
    %v = tensor.extract %synced[%a, %b, %d] : tensor<32x1x33xf32>
    %t = tensor.insert %v into %iter[%r, %c] : tensor<64x64xf32>
    xla_gpu.yield %t : tensor<64x64xf32>
  }
  return %res : tensor<64x64xf32>
}
