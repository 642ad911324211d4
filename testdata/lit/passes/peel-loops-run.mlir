// RUN: hlo-opt %s --lower-xla-gpu-to-scf | hlo-interp - --grid=1x4 --print-elements=4 | FileCheck %s
// RUN: hlo-opt %s --peel-loops | FileCheck %s --check-prefix=IR
// RUN: hlo-opt %s --peel-loops --lower-xla-gpu-to-scf | hlo-interp - --grid=1x4 --print-elements=4 | FileCheck %s

// Run on the host, the peeled loops sum what the loop sums: thread t adds elements 4t to
// 4t + 3 of an iota, except element 15 (the constraint leaves it out), so 6, 22, 38, 39.

// IR-COUNT-2: xla_gpu.loop
// CHECK: %arg1: tensor<4xf32> = [6, 22, 38, 39]
#map = #xla_gpu.indexing_map<"(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 3], s0 in [0, 3], d0 * 4 + s0 in [0, 14]">
func.func @main(%in: tensor<16xf32>, %out: tensor<4xf32>) -> tensor<4xf32> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 3 : index]}
  %zero = arith.constant 0.0 : f32
  %r = xla_gpu.loop (%tid)[%s] -> (%i) in #map iter_args(%acc = %zero) -> (f32) {
    %x = tensor.extract %in[%i] : tensor<16xf32>
    %y = arith.addf %acc, %x : f32
    xla_gpu.yield %y : f32
  }
  %o = tensor.insert %r into %out[%tid] : tensor<4xf32>
  return %o : tensor<4xf32>
}
