// RUN: hlo-opt %s | FileCheck %s
// RUN: hlo-opt %s | hlo-opt - | FileCheck %s

// XLA's current spelling of the emitter dialect (`xla.*` ops, `#xla.indexing_map`, `/` for
// `floordiv`, a domain written across adjacent strings with a comma after its last item,
// `xla.workgroup_id` for `gpu.block_id`, in custom and generic form; a declaration with named
// arguments, as MLIR reads it; a layout as its minor-to-major order, `dense<[0, 1]>`),
// as XLA's own pass tests write it, is read as ours and printed as ours; the printed IR
// reads back the same.

#map = #xla.indexing_map<"(d0)[s0] -> (d0 / 4 + s0),"
  "domain:"
  "d0 in [0, 63],"
  "s0 in [0, 3],">
func.func private @declared(%x: f32) -> f32
func.func private @column_major(%t: tensor<2x3xf32, dense<[0, 1]> : tensor<2xi64>>) -> f32
func.func private @add(%a: f32, %b: f32) -> f32 {
  %sum = arith.addf %a, %b : f32
  return %sum : f32
}
func.func @main(%in: tensor<64xf32>, %out: tensor<64xf32>, %d0: index) -> tensor<64xf32> {
  %block = xla.workgroup_id  y {xla.range = [0 : index, 3 : index]}
  %block_z = "xla.workgroup_id"() <{dimension = #gpu<dim z>}> : () -> index
  %i = xla.apply_indexing #map(%d0)[%block]
  %x = tensor.extract %in[%i] : tensor<64xf32>
  %y = xla.pure_call @add(%x, %x) : (f32, f32) -> f32
  %r = tensor.insert %y into %out[%d0] : tensor<64xf32>
  return %r : tensor<64xf32>
}

// CHECK: #[[MAP:.*]] = #xla_gpu.indexing_map<"(d0)[s0] -> (d0 floordiv 4 + s0), domain: d0 in [0, 63], s0 in [0, 3]">
// CHECK: func.func private @declared(f32) -> f32
// CHECK: func.func private @column_major(tensor<2x3xf32, #xla.layout<"{0,1}">>) -> f32
// CHECK: %[[BLOCK:.*]] = gpu.block_id  y {xla.range = [0 : index, 3 : index]}
// CHECK: gpu.block_id  z
// CHECK: xla_gpu.apply_indexing #[[MAP]](%d0)[%[[BLOCK]]]
// CHECK: xla_gpu.pure_call @add(
