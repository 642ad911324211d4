// RUN: hlo-interp %s --grid=1x64 --print-elements=64 | FileCheck %s --check-prefix=HOST
// RUN: hlo-opt %s --simplify-arith --canonicalize | FileCheck %s --check-prefix=RANGE
// RUN: hlo-opt %s --lower-tensors | FileCheck %s --check-prefix=LOWERED

// `gpu.lane_id` (XLA's pass tests write it) is the thread's lane in its warp: 0 to 31,
// which simplify-arith knows (the comparison folds), the interpreter computes, and
// lower-tensors reads from the `%laneid` register.

// HOST: tensor<64xi32> = [0, 1, 2, {{.*}}, 30, 31, 0, 1, 2, {{.*}}, 30, 31]
// RANGE-NOT: arith.cmpi
// LOWERED: nvvm.read.ptx.sreg.laneid range <i32, 0, 32> : i32
func.func @main(%out: tensor<64xi32>) -> tensor<64xi32> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 63 : index]}
  %lane = gpu.lane_id
  %c32 = arith.constant 32 : index
  %c0 = arith.constant 0 : index
  %in_warp = arith.cmpi ult, %lane, %c32 : index
  %v = arith.select %in_warp, %lane, %c0 : index
  %i = arith.index_cast %v : index to i32
  %r = tensor.insert %i into %out[%tid] : tensor<64xi32>
  return %r : tensor<64xi32>
}
