// RUN: hlo-opt %s --split-input-file --expand-float-ops | FileCheck %s

// f32 tanh: XLA's rational approximation, clamped with NaN-propagating max/min, the
// polynomials in FMAs, x itself for tiny |x|.
// CHECK-LABEL: func.func @tanh_f32(
// CHECK-SAME:      %[[X:.*]]: f32)
// CHECK:         %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK:         %[[TINY:.*]] = arith.cmpf olt, %[[ABS]], %{{.*}} : f32
// CHECK:         %[[LO:.*]] = arith.maximumf %[[X]], %{{.*}} : f32
// CHECK-NEXT:    %[[C:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK-NEXT:    %[[X2:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-COUNT-6: math.fma
// CHECK:         %[[P:.*]] = arith.mulf %[[C]], %{{.*}} : f32
// CHECK-COUNT-3: math.fma
// CHECK:         %[[R:.*]] = arith.divf %[[P]], %{{.*}} : f32
// CHECK-NEXT:    %[[T:.*]] = arith.select %[[TINY]], %[[X]], %[[R]] : f32
// CHECK-NEXT:    return %[[T]] : f32
func.func @tanh_f32(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// -----

// bf16 tanh (GELU's): sm_75's tanh.approx.f32 in f32, rounded back (its 2^-11 relative
// error is an eighth of a bf16 ulp); f16 tanh (ulp 2^-11) keeps the rational form; f64
// tanh is left to libdevice.
// CHECK-LABEL: func.func @tanh_bf16(
// CHECK-SAME:      %[[X:[^:]*]]: bf16, %[[Y:[^:]*]]: f64, %[[H:[^:]*]]: f16)
// CHECK:         %[[W:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT:    %[[T:.*]] = "llvm.inline_asm"(%[[W]]) <{asm_string = "tanh.approx.f32 $0, $1;", constraints = "=f,f"}> : (f32) -> f32
// CHECK-NEXT:    %[[N:.*]] = arith.truncf %[[T]] : f32 to bf16
// CHECK-NEXT:    %[[D:.*]] = math.tanh %[[Y]] : f64
// CHECK-NEXT:    %[[HW:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK:         math.absf %[[HW]] : f32
// CHECK:         %[[HT:.*]] = arith.select %{{.*}}, %[[HW]], %{{.*}} : f32
// CHECK-NEXT:    %[[HN:.*]] = arith.truncf %[[HT]] : f32 to f16
// CHECK-NEXT:    return %[[N]], %[[D]], %[[HN]] : bf16, f64, f16
func.func @tanh_bf16(%x: bf16, %y: f64, %h: f16) -> (bf16, f64, f16) {
  %0 = math.tanh %x : bf16
  %1 = math.tanh %y : f64
  %2 = math.tanh %h : f16
  return %0, %1, %2 : bf16, f64, f16
}

// -----

// f32 erf: XLA's rational approximation, saturating to copysign(1, x).
// CHECK-LABEL: func.func @erf_f32(
// CHECK-SAME:      %[[X:.*]]: f32)
// CHECK:         %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK:         %[[SAT:.*]] = arith.cmpf oge, %[[ABS]], %{{.*}} : f32
// CHECK:         %[[ONE:.*]] = math.copysign %{{.*}}, %[[X]] : f32
// CHECK:         %[[R:.*]] = arith.divf
// CHECK-NEXT:    %[[E:.*]] = arith.select %[[SAT]], %[[ONE]], %[[R]] : f32
// CHECK-NEXT:    return %[[E]] : f32
func.func @erf_f32(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// -----

// Other bf16/f16 math goes through f32, keeping its fastmath flags; fma and f16 absf are
// native, bf16 absf clears the sign bit; arith (including maximumf's NaN semantics) stays.
// CHECK-LABEL: func.func @narrow(
// CHECK-SAME:      %[[A:[^:]*]]: bf16, %[[B:[^:]*]]: f16)
// CHECK-NEXT:    %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[AW]] fastmath<afn> : f32
// CHECK-NEXT:    %[[EN:.*]] = arith.truncf %[[E]] : f32 to bf16
// CHECK-NEXT:    %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT:    %[[S:.*]] = math.sqrt %[[BW]] : f32
// CHECK-NEXT:    %[[SN:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT:    %[[AW2:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:    %[[EW:.*]] = arith.extf %[[EN]] : bf16 to f32
// CHECK-NEXT:    %[[P:.*]] = math.powf %[[AW2]], %[[EW]] : f32
// CHECK-NEXT:    %[[PN:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:    %[[F:.*]] = math.fma %[[A]], %[[EN]], %[[PN]] : bf16
// CHECK-NEXT:    %[[BITS:.*]] = arith.bitcast %[[F]] : bf16 to i16
// CHECK-NEXT:    %[[MASK:.*]] = arith.constant 32767 : i16
// CHECK-NEXT:    %[[CLEARED:.*]] = arith.andi %[[BITS]], %[[MASK]] : i16
// CHECK-NEXT:    %[[ABS:.*]] = arith.bitcast %[[CLEARED]] : i16 to bf16
// CHECK-NEXT:    %[[HABS:.*]] = math.absf %[[SN]] : f16
// CHECK-NEXT:    %[[M:.*]] = arith.maximumf %[[ABS]], %[[A]] : bf16
// CHECK-NEXT:    return %[[M]], %[[HABS]] : bf16, f16
func.func @narrow(%a: bf16, %b: f16) -> (bf16, f16) {
  %0 = math.exp %a fastmath<afn> : bf16
  %1 = math.sqrt %b : f16
  %2 = math.powf %a, %0 : bf16
  %3 = math.fma %a, %0, %2 : bf16
  %4 = math.absf %3 : bf16
  %5 = math.absf %1 : f16
  %6 = arith.maximumf %4, %a : bf16
  return %6, %5 : bf16, f16
}

// -----

// Vectors: the same expansion with splat constants.
// CHECK-LABEL: func.func @tanh_vector(
// CHECK-SAME:      %[[X:.*]]: vector<4xbf16>)
// CHECK:         %[[W:.*]] = arith.extf %[[X]] : vector<4xbf16> to vector<4xf32>
// CHECK:         arith.constant dense<4.000000e-04> : vector<4xf32>
// CHECK:         arith.cmpf olt, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:         arith.select %{{.*}}, %[[W]], %{{.*}} : vector<4xi1>, vector<4xf32>
// CHECK:         arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
func.func @tanh_vector(%x: vector<4xbf16>) -> vector<4xbf16> {
  %0 = math.tanh %x : vector<4xbf16>
  return %0 : vector<4xbf16>
}

// -----

// f32 divisions sharing a divisor: div.full.f32's own steps, the divisor's part once (the
// scale k, 1/4 above 2^126 and 2^24 below 2^-126, and rcp(d * k)), then (x * k) * r per
// division. A divisor used once and a constant divisor keep arith.divf.
// CHECK-LABEL: func.func @shared_divisor(
// CHECK-SAME:      %[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32, %[[D:[^:]*]]: f32, %[[E:[^:]*]]: f32)
// CHECK:         %[[ABS:.*]] = math.absf %[[D]] : f32
// CHECK:         %[[LARGE:.*]] = arith.cmpf ogt, %[[ABS]], %{{.*}} : f32
// CHECK-NEXT:    %[[SMALL:.*]] = arith.cmpf ult, %[[ABS]], %{{.*}} : f32
// CHECK:         %[[K1:.*]] = arith.select %[[SMALL]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[K:.*]] = arith.select %[[LARGE]], %{{.*}}, %[[K1]] : f32
// CHECK-NEXT:    %[[DK:.*]] = arith.mulf %[[D]], %[[K]] : f32
// CHECK-NEXT:    %[[R:.*]] = "llvm.inline_asm"(%[[DK]]) <{asm_string = "rcp.approx.ftz.f32 $0, $1;", constraints = "=f,f"}> : (f32) -> f32
// CHECK-NEXT:    %[[AK:.*]] = arith.mulf %[[A]], %[[K]] : f32
// CHECK-NEXT:    %[[QA:.*]] = arith.mulf %[[AK]], %[[R]] : f32
// CHECK-NEXT:    %[[BK:.*]] = arith.mulf %[[B]], %[[K]] : f32
// CHECK-NEXT:    %[[QB:.*]] = arith.mulf %[[BK]], %[[R]] : f32
// CHECK-NEXT:    %[[QE:.*]] = arith.divf %[[A]], %[[E]] : f32
// CHECK:         %[[QC:.*]] = arith.divf %[[A]], %{{.*}} : f32
// CHECK:         return %[[QA]], %[[QB]], %[[QE]], %{{.*}}
func.func @shared_divisor(%a: f32, %b: f32, %d: f32, %e: f32) -> (f32, f32, f32, f32, f32) {
  %qa = arith.divf %a, %d : f32
  %qb = arith.divf %b, %d : f32
  %qe = arith.divf %a, %e : f32
  %c3 = arith.constant 3.0 : f32
  %qc = arith.divf %a, %c3 : f32
  %qd = arith.divf %b, %c3 : f32
  return %qa, %qb, %qe, %qc, %qd : f32, f32, f32, f32, f32
}

// -----

// exp with fastmath<afn> (the emitters' mark where the argument is at most 0) becomes
// exp2(x * log2 e), scalar and vector; exp without it, and f64 exp, stay.
// CHECK-LABEL: func.func @exp_approximable(
// CHECK-SAME:      %[[X:[^:]*]]: f32, %[[V:[^:]*]]: vector<4xf32>, %[[D:[^:]*]]: f64)
// CHECK:         %[[L:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT:    %[[S:.*]] = arith.mulf %[[X]], %[[L]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp2 %[[S]] : f32
// CHECK-NEXT:    %[[LV:.*]] = arith.constant dense<1.44269502> : vector<4xf32>
// CHECK-NEXT:    %[[SV:.*]] = arith.mulf %[[V]], %[[LV]] : vector<4xf32>
// CHECK-NEXT:    %[[EV:.*]] = math.exp2 %[[SV]] : vector<4xf32>
// CHECK:         %[[P:.*]] = math.exp %[[X]] : f32
// CHECK:         %[[Q:.*]] = math.exp %[[D]] fastmath<afn> : f64
// CHECK:         return %[[E]], %[[EV]], %[[P]], %[[Q]]
func.func @exp_approximable(%x: f32, %v: vector<4xf32>, %d: f64) -> (f32, vector<4xf32>, f32, f64) {
  %e = math.exp %x fastmath<afn> : f32
  %ev = math.exp %v fastmath<afn> : vector<4xf32>
  %p = math.exp %x : f32
  %q = math.exp %d fastmath<afn> : f64
  return %e, %ev, %p, %q : f32, vector<4xf32>, f32, f64
}

// -----

// Divisions marked fastmath<arcp> (the emitters' mark for a divisor proven in [1, 2^125],
// softmax's sum of exp(x - max)): x * rcp(d), no scale, for one division as for many. One
// unmarked division among marked ones keeps the scaled form for all of them.
// CHECK-LABEL: func.func @normal_divisor(
// CHECK-SAME:      %[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32, %[[D:[^:]*]]: f32, %[[E:[^:]*]]: f32, %[[F:[^:]*]]: f32)
// CHECK-NEXT:    math.absf %[[F]] : f32
// CHECK:         %[[RE:.*]] = "llvm.inline_asm"(%[[E]]) <{asm_string = "rcp.approx.ftz.f32 $0, $1;", constraints = "=f,f"}> : (f32) -> f32
// CHECK-NEXT:    %[[R:.*]] = "llvm.inline_asm"(%[[D]]) <{asm_string = "rcp.approx.ftz.f32 $0, $1;", constraints = "=f,f"}> : (f32) -> f32
// CHECK-NEXT:    %[[QA:.*]] = arith.mulf %[[A]], %[[R]] : f32
// CHECK-NEXT:    %[[QB:.*]] = arith.mulf %[[B]], %[[R]] : f32
// CHECK-NEXT:    %[[QE:.*]] = arith.mulf %[[A]], %[[RE]] : f32
// CHECK-NOT:     arith.divf
// CHECK:         return %[[QA]], %[[QB]], %[[QE]]
func.func @normal_divisor(%a: f32, %b: f32, %d: f32, %e: f32, %f: f32) -> (f32, f32, f32, f32, f32) {
  %qa = arith.divf %a, %d fastmath<arcp> : f32
  %qb = arith.divf %b, %d fastmath<arcp> : f32
  %qe = arith.divf %a, %e fastmath<arcp> : f32
  %qf = arith.divf %a, %f fastmath<arcp> : f32
  %qg = arith.divf %b, %f : f32
  return %qa, %qb, %qe, %qf, %qg : f32, f32, f32, f32, f32
}
