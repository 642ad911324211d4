// `xla_gpu.insert` refused where XLA refuses it, located (run by xla-gpu-insert.mlir).

// CHECK: xla-gpu-insert-invalid.mlir:[[# @LINE + 3]]:3: error: 'xla_gpu.insert' op expects 2 indices (the map's dimensions), but got 1
#map1 = #xla.indexing_map<"(d0, d1) -> (d0, d1), domain: d0 in [0, 32], d1 in [0, 2]">
func.func @indices(%input: !xla_gpu.indexed_vector<32x64xf32, #map1>, %i: index, %output: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = xla_gpu.insert %input(%i) into %output at #map1 : !xla_gpu.indexed_vector<32x64xf32, #map1> -> tensor<32x64xf32>
  func.return %0 : tensor<32x64xf32>
}

// -----

// CHECK: xla-gpu-insert-invalid.mlir:[[# @LINE + 3]]:3: error: 'xla_gpu.insert' op source must be an '!xla_gpu.indexed_vector', but got 'vector<2xf32>'
#map1 = #xla.indexing_map<"(d0, d1) -> (d0, d1), domain: d0 in [0, 32], d1 in [0, 2]">
func.func @source(%input: vector<2xf32>, %i: index, %output: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = xla_gpu.insert %input(%i, %i) into %output at #map1 : vector<2xf32> -> tensor<32x64xf32>
  func.return %0 : tensor<32x64xf32>
}

// -----

// CHECK: xla-gpu-insert-invalid.mlir:[[# @LINE + 3]]:3: error: 'xla_gpu.insert' op expects a destination tensor of rank 2 (the map's results), but got 'tensor<64xf32>'
#map1 = #xla.indexing_map<"(d0, d1) -> (d0, d1), domain: d0 in [0, 32], d1 in [0, 2]">
func.func @rank(%input: !xla_gpu.indexed_vector<64xf32, #map1>, %i: index, %output: tensor<64xf32>) -> tensor<64xf32> {
  %0 = xla_gpu.insert %input(%i, %i) into %output at #map1 : !xla_gpu.indexed_vector<64xf32, #map1> -> tensor<64xf32>
  func.return %0 : tensor<64xf32>
}
