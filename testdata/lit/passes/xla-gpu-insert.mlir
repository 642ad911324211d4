// XLA's `xla_gpu.insert` of an indexed vector into a tensor: read, verified and printed.
// The indexed vector's type is kept as text with its map written out, so the printer's
// aliases cannot make it name another map. The passes refuse the op where they meet it
// (our emitters write elements with `tensor.insert`).
// RUN: hlo-opt %s | FileCheck %s
// RUN: hlo-opt %s | hlo-opt - | FileCheck %s
// RUN: not hlo-opt %s --lower-xla-gpu-to-scf --flatten-tensors --lower-tensors 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: not hlo-opt %S/xla-gpu-insert-invalid.mlir --split-input-file 2>&1 | FileCheck %S/xla-gpu-insert-invalid.mlir

#map = #xla.indexing_map<"(d0, d1)[s0, s1] -> (d1*32+d0*2+s0, s1), domain: d0 in [0, 32], d1 in [0, 8], s0 in [0, 1], s1 in [0, 1]">
#map1 = #xla.indexing_map<"(d0, d1) -> (d0 mod 16, d1), domain: d0 in [0, 32], d1 in [0, 2]">

// CHECK: #[[$AT:.*]] = #xla_gpu.indexing_map<"(d0, d1) -> (d0 mod 16, d1), domain: d0 in [0, 32], d1 in [0, 2]">
// CHECK-LABEL: func.func @insert
// CHECK-SAME: %input: !xla_gpu.indexed_vector<32x64xf32, #xla_gpu.indexing_map<"(d0, d1)[s0, s1] -> (d1 * 32 + d0 * 2 + s0, s1), domain: d0 in [0, 32], d1 in [0, 8], s0 in [0, 1], s1 in [0, 1]">>
// CHECK: xla_gpu.insert %input(%i, %j) into %output at #[[$AT]] : !xla_gpu.indexed_vector<32x64xf32, #xla_gpu.indexing_map<"(d0, d1)[s0, s1] -> (d1 * 32
// CHECK-SAME: -> tensor<32x64xf32>
// LOWER: xla-gpu-insert.mlir:[[# @LINE + 3]]:3: error: 'xla_gpu.insert' op cannot flatten 'tensor<32x64xf32>': unsupported op
func.func @insert(%input: !xla_gpu.indexed_vector<32x64xf32, #map>,
    %i: index, %j: index, %output: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = xla_gpu.insert %input(%i, %j) into %output at #map1
    : !xla_gpu.indexed_vector<32x64xf32, #map> -> tensor<32x64xf32>
  func.return %0 : tensor<32x64xf32>
}
