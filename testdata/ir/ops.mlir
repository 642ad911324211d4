// Every op of every dialect the pipeline uses, one chunk per dialect group: the standard
// dialects (builtin, func, arith, math, scf, tensor), MLIR 22's vector, gpu, llvm and nvvm,
// and the seed's xla_gpu. Printing is a fixed point in both syntaxes.
// RUN: hlo-opt --split-input-file %s > %t.pretty
// RUN: hlo-opt --split-input-file %t.pretty > %t.pretty2
// RUN: diff %t.pretty %t.pretty2
// RUN: hlo-opt --split-input-file --mlir-print-op-generic %s > %t.generic
// RUN: hlo-opt --split-input-file --mlir-print-op-generic %t.generic > %t.generic2
// RUN: diff %t.generic %t.generic2
// RUN: hlo-opt --split-input-file %t.generic | diff %t.pretty -
// RUN: FileCheck %s < %t.pretty
// CHECK: func.func @math
// CHECK: math.acos
// CHECK: arith.negf
// CHECK: // -----
// CHECK-DAG: vector.transfer_read
// CHECK-DAG: gpu.thread_id  x
// CHECK-DAG: llvm.getelementptr
// CHECK-DAG: nvvm.read.ptx.sreg.tid.x
// CHECK: // -----
// CHECK: xla_gpu.loop
// CHECK: xla_gpu.shuffle_reduce
module {
  func.func @arith(%a: i32, %b: i32, %x: f32, %y: f32, %i: index, %v: vector<4xf32>) -> (f32, i1) {
    %c0 = arith.constant 0 : index
    %c7_i32 = arith.constant 7 : i32
    %c-1_i8 = arith.constant -1 : i8
    %true = arith.constant true
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>
    %cst_1 = arith.constant dense<0.000000e+00> : vector<4xf32>
    %cst_2 = arith.constant dense<true> : vector<4xi1>
    %c-170141183460469231731687303715884105728_i128 = arith.constant -170141183460469231731687303715884105728 : i128
    %cst_3 = arith.constant dense<[-170141183460469231731687303715884105728, 170141183460469231731687303715884105727]> : tensor<2xi128>
    %0 = arith.addf %x, %y fastmath<fast> : f32
    %1 = arith.subf %0, %y : f32
    %2 = arith.mulf %1, %cst fastmath<nnan,ninf> : f32
    %3 = arith.divf %2, %y : f32
    %4 = arith.remf %3, %y : f32
    %5 = arith.maximumf %4, %y : f32
    %6 = arith.minimumf %5, %y : f32
    %7 = arith.maxnumf %6, %y : f32
    %8 = arith.minnumf %7, %y : f32
    %9 = arith.addi %a, %b overflow<nsw> : i32
    %10 = arith.subi %9, %b : i32
    %11 = arith.muli %10, %c7_i32 overflow<nsw, nuw> : i32
    %12 = arith.divsi %11, %b : i32
    %13 = arith.divui %12, %b : i32
    %14 = arith.remsi %13, %b : i32
    %15 = arith.remui %14, %b : i32
    %16 = arith.andi %15, %b : i32
    %17 = arith.ori %16, %b : i32
    %18 = arith.xori %17, %b : i32
    %19 = arith.shli %18, %b : i32
    %20 = arith.shrsi %19, %b : i32
    %21 = arith.shrui %20, %b : i32
    %22 = arith.maxsi %21, %b : i32
    %23 = arith.minui %22, %b : i32
    %24 = arith.cmpi slt, %23, %a : i32
    %25 = arith.cmpf olt, %8, %x : f32
    %26 = arith.cmpf une, %8, %x fastmath<fast> : f32
    %27 = arith.andi %24, %25 : i1
    %28 = arith.select %27, %8, %x : f32
    %29 = arith.select %cst_2, %v, %cst_1 : vector<4xi1>, vector<4xf32>
    %30 = arith.addf %29, %v : vector<4xf32>
    %31 = arith.truncf %28 : f32 to bf16
    %32 = arith.extf %31 : bf16 to f32
    %33 = arith.extsi %c-1_i8 : i8 to i32
    %34 = arith.extui %c-1_i8 : i8 to i64
    %35 = arith.trunci %34 : i64 to i16
    %36 = arith.sitofp %33 : i32 to f32
    %37 = arith.uitofp %35 : i16 to f16
    %38 = arith.fptosi %32 : f32 to i32
    %39 = arith.fptoui %32 : f32 to i8
    %40 = arith.index_cast %i : index to i32
    %41 = arith.index_cast %a : i32 to index
    %42 = arith.bitcast %x : f32 to i32
    %43 = arith.cmpi eq, %41, %c0 : index
    %44 = arith.xori %43, %true : i1
    return %36, %44 : f32, i1
  }
  func.func @math(%x: f32, %y: f32, %z: f32, %i: i32) -> f32 {
    %0 = math.tanh %x : f32
    %1 = math.exp %0 : f32
    %2 = math.exp2 %1 : f32
    %3 = math.expm1 %2 : f32
    %4 = math.log %3 : f32
    %5 = math.log1p %4 : f32
    %6 = math.sqrt %5 : f32
    %7 = math.rsqrt %6 fastmath<afn> : f32
    %8 = math.sin %7 : f32
    %9 = math.cos %8 : f32
    %10 = math.tan %9 : f32
    %11 = math.atan2 %10, %y : f32
    %12 = math.erf %11 : f32
    %13 = math.absf %12 : f32
    %14 = math.floor %13 : f32
    %15 = math.ceil %14 : f32
    %16 = math.round %15 : f32
    %17 = math.roundeven %16 : f32
    %18 = math.powf %17, %y : f32
    %19 = math.cbrt %18 : f32
    %20 = math.copysign %19, %z : f32
    %21 = math.fma %20, %y, %z : f32
    %22 = math.absi %i : i32
    %23 = math.acos %21 : f32
    %24 = math.asin %23 : f32
    %25 = math.acosh %24 : f32
    %26 = math.asinh %25 : f32
    %27 = math.atanh %26 : f32
    %28 = math.cosh %27 : f32
    %29 = math.sinh %28 : f32
    %30 = math.atan %29 : f32
    %31 = math.erfc %30 : f32
    %32 = arith.negf %31 : f32
    return %32 : f32
  }
  func.func @control(%n: index, %t: tensor<4x?xf32>, %c: i1) -> (tensor<4x?xf32>, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 0.000000e+00 : f32
    %dim = arith.constant 8 : index
    %empty = tensor.empty(%dim) : tensor<4x?xf32>
    %r:2 = scf.for %iv = %c0 to %n step %c1 iter_args(%acc = %empty, %sum = %cst) -> (tensor<4x?xf32>, f32) {
      %extracted = tensor.extract %t[%c0, %iv] : tensor<4x?xf32>
      %s = arith.addf %sum, %extracted : f32
      %inserted = tensor.insert %s into %acc[%c0, %iv] : tensor<4x?xf32>
      scf.yield %inserted, %s : tensor<4x?xf32>, f32
    }
    scf.for %iv = %c0 to %n step %c1 {
      %extracted = tensor.extract %t[%c1, %iv] : tensor<4x?xf32>
    }
    %lb = arith.constant 0 : i32
    %ub = arith.constant 10 : i32
    %step = arith.constant 2 : i32
    %w = scf.for unsigned %j = %lb to %ub step %step iter_args(%x = %cst) -> (f32)  : i32 {
      scf.yield %x : f32
    }
    %v = scf.if %c -> (f32) {
      scf.yield %r#1 : f32
    } else {
      %e = tensor.empty() : tensor<2xf32>
      scf.yield %w : f32
    }
    scf.if %c {
      %u = arith.addf %v, %v : f32
    }
    return %r#0, %v : tensor<4x?xf32>, f32
  }
  func.func private @decl(f32 {xla.slice_index = 0 : i64}, index) -> (f32 {x.y}, i32) attributes {no_inline}
  func.func public @caller(%arg0: f32 {xla.range = [0 : index, 127 : index]}) -> (f32, i32) {
    %c0 = arith.constant 0 : index
    %0:2 = call @decl(%arg0, %c0) {tag = "t"} : (f32, index) -> (f32, i32)
    return %0#0, %0#1 : f32, i32
  }
}
// -----
#map = affine_map<(d0, d1) -> (d0)>
module {
  llvm.mlir.global internal @shared_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<128 x f32>
  llvm.mlir.global private constant @table(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
  llvm.mlir.global internal @counter() {addr_space = 0 : i32} : i32 {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
  llvm.mlir.global internal constant @name("gelu\00") {addr_space = 0 : i32}
  llvm.func @__nv_tanhf(f32) -> f32
  llvm.func @printf(!llvm.ptr {llvm.noundef}, ...) -> i32
  llvm.func internal @helper(%arg0: f32) -> f32 attributes {no_unwind} {
    llvm.return %arg0 : f32
  }
  llvm.func @kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr) {
    %0 = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
    %1 = nvvm.read.ptx.sreg.ctaid.x : i32
    %2 = nvvm.read.ptx.sreg.ntid.y : i32
    %3 = nvvm.read.ptx.sreg.nctaid.z : i32
    %4 = nvvm.read.ptx.sreg.laneid range <i32, 0, 32> : i32
    %5 = llvm.mlir.constant(4 : i32) : i32
    %6 = llvm.mlir.constant(5.000000e-01 : f32) : f32
    %7 = llvm.mlir.constant(dense<0.000000e+00> : vector<4xbf16>) : vector<4xbf16>
    %8 = llvm.mlir.constant(-1 : i32) : i32
    %9 = llvm.getelementptr inbounds %arg0[%0] : (!llvm.ptr, i32) -> !llvm.ptr, bf16
    %10 = llvm.load %9 invariant : !llvm.ptr -> vector<4xbf16>
    %11 = llvm.load %9 {alignment = 8 : i64} : !llvm.ptr -> vector<4xbf16>
    %12 = llvm.load volatile %arg1 atomic acquire {alignment = 4 : i64} : !llvm.ptr -> f32
    %13 = llvm.getelementptr %arg1[%1] : (!llvm.ptr, i32) -> !llvm.ptr, vector<4xbf16>
    llvm.store %10, %13 {alignment = 8 : i64} : vector<4xbf16>, !llvm.ptr
    llvm.store %7, %13 : vector<4xbf16>, !llvm.ptr
    %14 = llvm.mlir.addressof @shared_0 : !llvm.ptr<3>
    %15 = llvm.getelementptr inbounds|nuw %14[0, %0] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<128 x f32>
    %16 = llvm.getelementptr nusw %14[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
    %17 = llvm.load %15 : !llvm.ptr<3> -> f32
    %18 = llvm.call @__nv_tanhf(%17) : (f32) -> f32
    %19 = llvm.call @helper(%18) {fastmathFlags = #llvm.fastmath<fast>} : (f32) -> f32
    llvm.store %19, %16 : f32, !llvm.ptr<3>
    nvvm.barrier0
    %20 = nvvm.shfl.sync  bfly %8, %19, %2, %3 : f32 -> f32
    %21 = nvvm.shfl.sync  down %8, %0, %2, %3 : i32 -> i32
    %22 = nvvm.shfl.sync  idx %8, %19, %2, %3 {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
    %23 = llvm.mlir.addressof @name : !llvm.ptr
    %24 = llvm.call @printf(%23, %20) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f32) -> i32
    llvm.return
  }
  llvm.func @special_registers() -> i32 {
    %0 = nvvm.read.ptx.sreg.tid.x : i32
    %1 = nvvm.read.ptx.sreg.tid.y : i32
    %2 = nvvm.read.ptx.sreg.tid.z : i32
    %3 = nvvm.read.ptx.sreg.ntid.x : i32
    %4 = nvvm.read.ptx.sreg.ntid.y : i32
    %5 = nvvm.read.ptx.sreg.ntid.z range <i32, 1, 1025> : i32
    %6 = nvvm.read.ptx.sreg.ctaid.x : i32
    %7 = nvvm.read.ptx.sreg.ctaid.y : i32
    %8 = nvvm.read.ptx.sreg.ctaid.z : i32
    %9 = nvvm.read.ptx.sreg.nctaid.x : i32
    %10 = nvvm.read.ptx.sreg.nctaid.y : i32
    %11 = nvvm.read.ptx.sreg.nctaid.z : i32
    %12 = nvvm.read.ptx.sreg.laneid : i32
    %13 = nvvm.read.ptx.sreg.warpsize : i32
    llvm.return %13 : i32
  }
  func.func @vector(%input: tensor<12582912xbf16>, %output: tensor<12582912xbf16>, %m: tensor<4x16xf32>, %i: index, %f: f32) -> tensor<12582912xbf16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.000000e+00 : bf16
    %cst_0 = arith.constant 5.000000e-01 : bf16
    %vector_0 = arith.constant dense<0.000000e+00> : vector<4xbf16>
    %cst_1 = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : vector<4xf32>
    %0 = vector.transfer_read %input[%i], %cst {in_bounds = [true]} : tensor<12582912xbf16>, vector<4xbf16>
    %xla_loop:2 = scf.for %vector_index = %c0 to %c4 step %c1 iter_args(%iter = %output, %iter_vector = %vector_0) -> (tensor<12582912xbf16>, vector<4xbf16>) {
      %1 = vector.extract %0[%vector_index] : bf16 from vector<4xbf16>
      %2 = arith.mulf %1, %cst_0 : bf16
      %3 = vector.insert %2, %iter_vector [%vector_index] : bf16 into vector<4xbf16>
      scf.yield %iter, %3 : tensor<12582912xbf16>, vector<4xbf16>
    }
    %4 = vector.extract %0[3] : bf16 from vector<4xbf16>
    %5 = vector.insert %4, %xla_loop#1 [0] : bf16 into vector<4xbf16>
    %6 = vector.transfer_write %5, %xla_loop#0[%i] {in_bounds = [true]} : vector<4xbf16>, tensor<12582912xbf16>
    %7 = vector.transfer_write %5, %6[%c0] : vector<4xbf16>, tensor<12582912xbf16>
    %8 = vector.transfer_read %m[%i, %c0], %f : tensor<4x16xf32>, vector<4xf32>
    %9 = vector.transfer_read %m[%c0, %i], %f {permutation_map = #map} : tensor<4x16xf32>, vector<4xf32>
    %10 = vector.broadcast %f : f32 to vector<4xf32>
    %11 = vector.broadcast %10 : vector<4xf32> to vector<2x4xf32>
    %12 = vector.extract %11[1] : vector<4xf32> from vector<2x4xf32>
    %13 = vector.extract %11[%i, 2] : f32 from vector<2x4xf32>
    %14 = vector.insert %cst_1, %11 [0] : vector<4xf32> into vector<2x4xf32>
    %15 = arith.addf %12, %8 : vector<4xf32>
    %16 = arith.addf %15, %9 : vector<4xf32>
    %17 = vector.transfer_write %16, %m[%c1, %c0] {in_bounds = [true]} : vector<4xf32>, tensor<4x16xf32>
    %18 = vector.multi_reduction <add>, %11, %10 [0] : vector<2x4xf32> to vector<4xf32>
    %19 = vector.multi_reduction <maximumf>, %11, %f [0, 1] : vector<2x4xf32> to f32
    %20 = vector.transpose %11, [1, 0] : vector<2x4xf32> to vector<4x2xf32>
    %21 = vector.from_elements %f, %f : vector<2xf32>
    return %7 : tensor<12582912xbf16>
  }
  func.func @gpu(%v: f32, %offset: i32, %width: i32) -> f32 {
    %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
    %thread_id_y = gpu.thread_id  y upper_bound 4
    %block_id_x = gpu.block_id  x upper_bound 1024 {xla.range = [0 : index, 1023 : index]}
    %block_id_z = gpu.block_id  z
    %block_dim_x = gpu.block_dim  x
    %grid_dim_y = gpu.grid_dim  y upper_bound 16
    %lane_id = gpu.lane_id
    %lane_id_0 = gpu.lane_id upper_bound 32
    %0:2 = gpu.shuffle  xor %v, %offset, %width : f32
    %1:2 = gpu.shuffle  down %0#0, %offset, %width : f32
    %2:2 = gpu.shuffle  up %1#0, %offset, %width : f32
    %3:2 = gpu.shuffle  idx %2#0, %offset, %width : f32
    %4:2 = gpu.shuffle  xor %offset, %offset, %width : i32
    gpu.barrier
    return %3#0 : f32
  }
}
// -----
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
  func.func @scatter_add(%output: tensor<10x5xf32>, %i: index, %j: index, %x: f32) -> tensor<10x5xf32> {
    %0 = xla_gpu.atomic_rmw %output[%i, %j] : tensor<10x5xf32> {
    ^bb0(%current: f32):
      %1 = arith.addf %current, %x : f32
      xla_gpu.yield %1 : f32
    }
    return %0 : tensor<10x5xf32>
  }
  func.func @xla_only(%in: tensor<16x8xf32>, %in_i: tensor<16x8xi32>, %f: f32, %i: i32) -> (tensor<8xf32>, tensor<8xi32>, i32) {
    %0:2 = xla_gpu.reduce(%in, %in_i) inits(%f, %i) dimensions=[0] combiner=@argmax : tensor<16x8xf32>, tensor<16x8xi32> to tensor<8xf32>, tensor<8xi32>
    %1 = xla_gpu.get_dynamic_dim_size %in 1 : tensor<16x8xf32>
    return %0#0, %0#1, %1 : tensor<8xf32>, tensor<8xi32>, i32
  }
}
