// RUN: hlo-opt %s --split-input-file --flatten-tensors | FileCheck %s
// RUN: not hlo-opt %s --split-input-file --flatten-tensors --lower-tensors 2>&1 | FileCheck %s --check-prefix=LOWER

// XLA's size of a dynamic dimension (XLA's spelling too): `flatten-tensors` keeps its `dim`,
// which names a dimension of the shape before flattening; `lower-tensors` loads the i32
// that XLA keeps after the data: 16 * 8 * 4 floats are 2048 bytes, dim 1 is 4 bytes on.
// The diagnostic (on stderr) comes first.

// LOWER: xla-gpu-get-dynamic-dim-size.mlir:[[# @LINE + 2]]:3: error: 'xla_gpu.get_dynamic_dim_size' op dynamic size offset is not 4-byte aligned
func.func @unaligned(%in: tensor<7xf16>) -> i32 {
  %out = xla_gpu.get_dynamic_dim_size %in 1 : tensor<7xf16>
  func.return %out : i32
}

// -----

// CHECK-LABEL: func.func @size
// CHECK: xla_gpu.get_dynamic_dim_size %{{.*}} 1 : tensor<512xf32>
// LOWER-LABEL: func.func @size
// LOWER: %[[OFFSET:.*]] = llvm.mlir.constant(2052 : i64) : i64
// LOWER: %[[ADDRESS:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LOWER: llvm.load %[[ADDRESS]] {{.*}}: !llvm.ptr -> i32
func.func @size(%in: tensor<16x8x4xf32>) -> i32 {
  %out = xla.get_dynamic_dim_size %in 1 : tensor<16x8x4xf32>
  func.return %out : i32
}

// -----

// Sub-byte elements: 512 x i4 are 256 bytes.
// LOWER-LABEL: func.func @nibbles
// LOWER: llvm.mlir.constant(264 : i64) : i64
func.func @nibbles(%in: tensor<512xi4>) -> i32 {
  %out = xla_gpu.get_dynamic_dim_size %in 2 : tensor<512xi4>
  func.return %out : i32
}

