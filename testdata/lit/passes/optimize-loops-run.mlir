// RUN: hlo-interp %s --grid=1x4 --print-elements=4 | FileCheck %s
// RUN: hlo-opt %s --optimize-loops | FileCheck %s --check-prefix=IR
// RUN: hlo-opt %s --optimize-loops | hlo-interp - --grid=1x4 --print-elements=4 | FileCheck %s

// Run on the host, the loop unrolled by 6 (12 iterations of size 47: 400 / 47 = 8, and 6
// is the largest divisor of 12 below it) computes what the loop computes: each thread sums
// i * (tid + 1) over i < 12, 66 (tid + 1); the exp and log (whose result is never taken)
// only weigh the body.

// IR: scf.for {{.*}} step %c6
// CHECK: %arg0: tensor<4xf32> = [66, 132, 198, 264]
func.func @main(%out: tensor<4xf32>) -> tensor<4xf32> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 3 : index]}
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  %t1 = arith.addi %tid, %c1 : index
  %r = scf.for %i = %c0 to %c12 step %c1 iter_args(%acc = %zero) -> (f32) {
    %p = arith.muli %i, %t1 : index
    %pi = arith.index_cast %p : index to i32
    %pf = arith.sitofp %pi : i32 to f32
    %e = math.exp %acc : f32
    %l = math.log %e : f32
    %keep = arith.cmpf ogt, %l, %l : f32
    %base = arith.select %keep, %l, %acc : f32
    %next = arith.addf %base, %pf : f32
    scf.yield %next : f32
  }
  %o = tensor.insert %r into %out[%tid] : tensor<4xf32>
  return %o : tensor<4xf32>
}
