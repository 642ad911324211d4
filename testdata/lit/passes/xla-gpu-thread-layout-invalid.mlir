// XLA's GPU tensor encoding refused when malformed, located (run by xla-gpu-thread-layout.mlir).

// CHECK: xla-gpu-thread-layout-invalid.mlir:[[# @LINE + 1]]:63: error: unknown memory space 'global' (XLA's are 'shmem' and 'registers')
func.func private @space(%in0: tensor<42xf32, #xla_gpu.layout<"global", "(d0) -> (), domain: d0 in [0, 42]">>)

// -----

// CHECK: xla-gpu-thread-layout-invalid.mlir:[[# @LINE + 1]]:70: error: invalid indexing map: column 10: unknown variable 'd1'
func.func private @map(%in0: tensor<42xf32, #xla_gpu.layout<"shmem", "(d0) -> (d1), domain: d0 in [0, 42]">>)
