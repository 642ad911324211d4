#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
#map1 = #xla_gpu.indexing_map<"(d0, d1)[s0] -> (d1 mod 4, 0, (d0 floordiv 32) * 8 + s0), domain: d0 in [0, 127], d1 in [0, 959], s0 in [0, 7], d0 mod 32 in [0, 7]">
#map2 = #xla_gpu.indexing_map<"(d0) -> (d0 floordiv 32, d0 mod 32), domain: d0 in [0, 127]">
module {
  func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>, %thread_id_x: index, %block_id_x: index) -> tensor<6x512x4096xbf16> {
    %xla_loop = xla_gpu.loop (%thread_id_x, %block_id_x)[%vector_index] -> (%dim0, %dim1, %dim2) in #map iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
      %pure_call = xla_gpu.pure_call @gelu(%input, %dim0, %dim1, %dim2) : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
      %inserted = tensor.insert %pure_call into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
      xla_gpu.yield %inserted : tensor<6x512x4096xbf16>
    }
    return %xla_loop : tensor<6x512x4096xbf16>
  }
  func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %i: index, %j: index, %k: index) -> bf16 {
    %extracted = tensor.extract %arg0[%i, %j, %k] : tensor<6x512x4096xbf16>
    %0 = math.tanh %extracted : bf16
    return %0 : bf16
  }
  func.func @shared(%input: tensor<128x32xf32>, %thread_id_x: index, %block_id_x: index, %cond: i1) -> (f32, i32, index) {
    %cst = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    %shmem = xla_gpu.allocate_shared : tensor<4x1x32xf32>
    %xla_loop:2 = xla_gpu.loop (%thread_id_x, %block_id_x)[%i] -> (%ra, %rb, %rc) in #map1 iter_args(%iter = %shmem, %acc = %cst) -> (tensor<4x1x32xf32>, f32) {
      %extracted = tensor.extract %input[%thread_id_x, %rc] : tensor<128x32xf32>
      %0 = arith.addf %acc, %extracted : f32
      %1 = xla_gpu.predicated_insert %0 into %iter[%ra, %rb, %rc] if %cond : tensor<4x1x32xf32>
      xla_gpu.yield %1, %0 : tensor<4x1x32xf32>, f32
    } {xla.range = [0 : index, 42 : index]}
    %synced_tensor:2 = xla_gpu.sync_threads %xla_loop#0, %shmem : tensor<4x1x32xf32>, tensor<4x1x32xf32>
    %2:2 = xla_gpu.apply_indexing #map2(%thread_id_x)
    %3 = xla_gpu.predicated_extract %synced_tensor#0[%2#0, %c0, %2#1] if %cond else %xla_loop#1 : tensor<4x1x32xf32>
    %4 = arith.fptosi %3 : f32 to i32
    %5:2 = xla_gpu.shuffle_reduce(%3, %4) to 16 combiner=@argmax : f32, i32
    %6:3 = xla_gpu.apply_indexing #map(%thread_id_x, %block_id_x)[%c0] {xla.note}
    return %5#0, %5#1, %6#2 : f32, i32, index
  }
  func.func private @argmax(%a: f32, %ai: i32, %b: f32, %bi: i32) -> (f32, i32) {
    %0 = arith.cmpf ogt, %b, %a : f32
    %1 = arith.select %0, %b, %a : f32
    %2 = arith.select %0, %bi, %ai : i32
    return %1, %2 : f32, i32
  }
}
