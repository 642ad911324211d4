#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
module {
  func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16> {
    %thread_id_x = "gpu.thread_id"() <{dimension = #gpu<dim x>}> {xla.range = [0 : index, 127 : index]} : () -> index
    %block_id_x = "gpu.block_id"() <{dimension = #gpu<dim x>}> {xla.range = [0 : index, 24575 : index]} : () -> index
    %xla_loop = "xla_gpu.loop"(%thread_id_x, %block_id_x, %output) <{indexing_map_attr = #map, operandSegmentSizes = array<i32: 2, 1>}> ({
    ^bb0(%vector_index: index, %dim0: index, %dim1: index, %dim2: index, %iter: tensor<6x512x4096xbf16>):
      %pure_call = "xla_gpu.pure_call"(%input, %dim0, %dim1, %dim2) <{callee = @gelu}> : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
      %inserted = tensor.insert %pure_call into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
      "xla_gpu.yield"(%inserted) : (tensor<6x512x4096xbf16>) -> ()
    }) : (index, index, tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16>
    return %xla_loop : tensor<6x512x4096xbf16>
  }
  func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %i: index, %j: index, %k: index) -> bf16 {
    %extracted = tensor.extract %arg0[%i, %j, %k] : tensor<6x512x4096xbf16>
    %0 = math.tanh %extracted : bf16
    return %0 : bf16
  }
}
