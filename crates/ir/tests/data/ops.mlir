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
    return %21 : f32
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
