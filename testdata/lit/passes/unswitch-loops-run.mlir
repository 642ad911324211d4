// RUN: hlo-interp %s --grid=4x1 --print-elements=16 | FileCheck %s
// RUN: hlo-opt %s --unswitch-loops | FileCheck %s --check-prefix=IR
// RUN: hlo-opt %s --unswitch-loops | hlo-interp - --grid=4x1 --print-elements=16 | FileCheck %s

// Run on the host, the unswitched kernel writes what the original writes: blocks 0-2 write
// their four elements doubled, block 3 writes nothing (every buffer starts as iota).

// IR:      scf.if
// IR-NEXT:   scf.for
// CHECK: %arg1: tensor<16xf32> = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 12, 13, 14, 15]
func.func @main(%in: tensor<16xf32>, %out: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %block = gpu.block_id  x {xla.range = [0 : index, 3 : index]}
  %in_range = arith.cmpi ult, %block, %c3 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<16xf32>) {
    %next = scf.if %in_range -> (tensor<16xf32>) {
      %base = arith.muli %block, %c4 : index
      %j = arith.addi %base, %i : index
      %x = tensor.extract %in[%j] : tensor<16xf32>
      %y = arith.addf %x, %x : f32
      %u = tensor.insert %y into %acc[%j] : tensor<16xf32>
      scf.yield %u : tensor<16xf32>
    } else {
      scf.yield %acc : tensor<16xf32>
    }
    scf.yield %next : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
