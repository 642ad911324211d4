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
