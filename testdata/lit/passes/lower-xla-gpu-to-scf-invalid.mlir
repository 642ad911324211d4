// RUN: not hlo-opt %s --split-input-file --lower-xla-gpu-to-scf 2>&1 | FileCheck %s

// gpu.shuffle moves integers and floats; an index has no fixed width here.
// CHECK: lower-xla-gpu-to-scf-invalid.mlir:[[# @LINE + 2]]:3: error: 'xla_gpu.shuffle_reduce' op cannot shuffle a value of type 'index' (signless integers and floats only)
func.func @index(%i: index) -> index {
  %0 = xla_gpu.shuffle_reduce(%i) to 16 combiner=@max : index
  return %0 : index
}
func.func private @max(%a: index, %b: index) -> index {
  %0 = arith.maxsi %a, %b : index
  return %0 : index
}

// -----

// CHECK: lower-xla-gpu-to-scf-invalid.mlir:[[# @LINE + 2]]:3: error: 'xla_gpu.shuffle_reduce' op cannot shuffle a value of type 'vector<2xf32>' (signless integers and floats only)
func.func @vector(%v: vector<2xf32>) -> vector<2xf32> {
  %0 = xla_gpu.shuffle_reduce(%v) to 16 combiner=@add : vector<2xf32>
  return %0 : vector<2xf32>
}
func.func private @add(%a: vector<2xf32>, %b: vector<2xf32>) -> vector<2xf32> {
  %0 = arith.addf %a, %b : vector<2xf32>
  return %0 : vector<2xf32>
}
