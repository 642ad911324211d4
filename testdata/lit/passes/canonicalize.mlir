// RUN: hlo-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: hlo-opt %s --split-input-file --canonicalize --canonicalize | FileCheck %s

// What `--canonicalize` folds, and what it must leave alone. Unless a case says otherwise,
// every expectation here is also what mlir-opt 22 computes for the same input.

// Integer arithmetic wraps at the type's width.
// CHECK-LABEL: func.func @int_arith
// CHECK-DAG:     %[[M128:.*]] = arith.constant -128 : i8
// CHECK-DAG:     %[[P127:.*]] = arith.constant 127 : i8
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK-DAG:     %[[M3:.*]] = arith.constant -3 : i8
// CHECK-DAG:     %[[M1:.*]] = arith.constant -1 : i8
// CHECK-DAG:     %[[P5:.*]] = arith.constant 5 : i8
// CHECK-DAG:     %[[P1:.*]] = arith.constant 1 : i8
// CHECK-DAG:     %[[P8:.*]] = arith.constant 8 : i8
// CHECK-DAG:     %[[M5:.*]] = arith.constant -5 : i8
// CHECK-DAG:     %[[M13:.*]] = arith.constant -13 : i8
// CHECK-NOT:     arith.addi
// CHECK:         return %[[M128]], %[[P127]], %[[ZERO]], %[[M3]], %[[P127]], %[[M1]], %[[P5]], %[[M128]], %[[M1]], %[[P1]], %[[P8]], %[[M5]], %[[M13]], %[[M1]], %[[M1]] :
func.func @int_arith() -> (i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8) {
  %c127 = arith.constant 127 : i8
  %c1 = arith.constant 1 : i8
  %c16 = arith.constant 16 : i8
  %c7 = arith.constant 7 : i8
  %cm7 = arith.constant -7 : i8
  %c2 = arith.constant 2 : i8
  %cm128 = arith.constant -128 : i8
  %cm1 = arith.constant -1 : i8
  %c10 = arith.constant 10 : i8
  %0 = arith.addi %c127, %c1 : i8
  %1 = arith.subi %cm128, %c1 : i8
  %2 = arith.muli %c16, %c16 : i8
  %3 = arith.divsi %cm7, %c2 : i8
  %4 = arith.divui %cm1, %c2 : i8
  %5 = arith.remsi %cm7, %c2 : i8
  %6 = arith.remui %cm1, %c10 : i8
  %7 = arith.shli %c1, %c7 : i8
  %8 = arith.shrsi %cm128, %c7 : i8
  %9 = arith.shrui %cm128, %c7 : i8
  %10 = arith.andi %cm7, %c10 : i8
  %11 = arith.ori %cm7, %c10 : i8
  %12 = arith.xori %cm7, %c10 : i8
  %13 = arith.maxui %cm1, %c1 : i8
  %14 = arith.minsi %cm1, %c1 : i8
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14 : i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8
}

// -----

// Division by zero, signed MIN / -1 and shifts by the width or more are undefined: kept.
// CHECK-LABEL: func.func @undefined_not_folded
// CHECK:         arith.divsi
// CHECK-NEXT:    arith.divsi
// CHECK-NEXT:    arith.remui
// CHECK-NEXT:    arith.shli
// CHECK-NEXT:    arith.shrui
// CHECK-NEXT:    return
func.func @undefined_not_folded(%x: i8) -> (i8, i8, i8, i8, i8) {
  %c0 = arith.constant 0 : i8
  %cm1 = arith.constant -1 : i8
  %cm128 = arith.constant -128 : i8
  %c8 = arith.constant 8 : i8
  %0 = arith.divsi %x, %c0 : i8
  %1 = arith.divsi %cm128, %cm1 : i8
  %2 = arith.remui %cm1, %c0 : i8
  %3 = arith.shli %cm1, %c8 : i8
  %4 = arith.shrui %x, %c8 : i8
  return %0, %1, %2, %3, %4 : i8, i8, i8, i8, i8
}

// -----

// index_cast sign-extends or truncates, index_castui zero-extends; index is 64 bits.
// CHECK-LABEL: func.func @index_casts
// CHECK-DAG:     %[[A:.*]] = arith.constant -1 : index
// CHECK-DAG:     %[[B:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[C:.*]] = arith.constant 255 : index
// CHECK-DAG:     %[[D:.*]] = arith.constant -1 : i32
// CHECK-DAG:     %[[E:.*]] = arith.constant 255 : i32
// CHECK-DAG:     %[[F:.*]] = arith.constant 1 : i8
// CHECK-DAG:     %[[G:.*]] = arith.constant 35 : i64
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]] :
func.func @index_casts() -> (index, i32, index, i32, i32, i8, i64) {
  %cm1 = arith.constant -1 : i32
  %big = arith.constant 4294967297 : index
  %cm1_i8 = arith.constant -1 : i8
  %c257 = arith.constant 257 : i32
  %0 = arith.index_cast %cm1 : i32 to index
  %1 = arith.index_cast %big : index to i32
  %2 = arith.index_castui %cm1_i8 : i8 to index
  %3 = arith.extsi %cm1_i8 : i8 to i32
  %4 = arith.extui %cm1_i8 : i8 to i32
  %5 = arith.trunci %c257 : i32 to i8
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %6 = arith.muli %c5, %c7 : index
  %7 = arith.index_cast %6 : index to i64
  return %0, %1, %2, %3, %4, %5, %7 : index, i32, index, i32, i32, i8, i64
}

// -----

// Comparisons of constants and of a value with itself fold; a constant on the left moves
// to the right with the predicate mirrored.
// CHECK-LABEL: func.func @cmpi
// CHECK-SAME:    (%[[X:.*]]: i32)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[TRUE:.*]] = arith.constant true
// CHECK-DAG:     %[[FALSE:.*]] = arith.constant false
// CHECK:         %[[GT:.*]] = arith.cmpi sgt, %[[X]], %[[ONE]] : i32
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %[[X]], %[[ONE]] : i32
// CHECK-NEXT:    return %[[TRUE]], %[[FALSE]], %[[TRUE]], %[[FALSE]], %[[GT]], %[[EQ]] :
func.func @cmpi(%x: i32) -> (i1, i1, i1, i1, i1, i1) {
  %c1 = arith.constant 1 : i32
  %cm1 = arith.constant -1 : i32
  %0 = arith.cmpi slt, %cm1, %c1 : i32
  %1 = arith.cmpi ult, %cm1, %c1 : i32
  %2 = arith.cmpi sle, %x, %x : i32
  %3 = arith.cmpi ne, %x, %x : i32
  %4 = arith.cmpi slt, %c1, %x : i32
  %5 = arith.cmpi eq, %c1, %x : i32
  return %0, %1, %2, %3, %4, %5 : i1, i1, i1, i1, i1, i1
}

// -----

// Float folding rounds to nearest-even in the constant's own type (bf16 1/3, f16 overflow
// to infinity); invalid operations give the default NaN.
// CHECK-LABEL: func.func @float_arith
// CHECK-DAG:     %[[A:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[B:.*]] = arith.constant 3.339840e-01 : bf16
// CHECK-DAG:     %[[C:.*]] = arith.constant 0x7C00 : f16
// CHECK-DAG:     %[[D:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-DAG:     %[[E:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG:     %[[F:.*]] = arith.constant 0.30000000000000004 : f64
// CHECK-DAG:     %[[G:.*]] = arith.constant 9.994500e-03 : f16
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]] :
func.func @float_arith() -> (f32, bf16, f16, f32, f32, f64, f16) {
  %tiny = arith.constant 1.0e-8 : f32
  %one = arith.constant 1.0 : f32
  %0 = arith.addf %tiny, %one : f32
  %a = arith.constant 1.0 : bf16
  %b = arith.constant 3.0 : bf16
  %1 = arith.divf %a, %b : bf16
  %max = arith.constant 65504.0 : f16
  %c32 = arith.constant 32.0 : f16
  %2 = arith.addf %max, %c32 : f16
  %inf = arith.constant 0x7F800000 : f32
  %3 = arith.subf %inf, %inf : f32
  %zero = arith.constant 0.0 : f32
  %4 = arith.divf %one, %zero : f32
  %d1 = arith.constant 0.1 : f64
  %d2 = arith.constant 0.2 : f64
  %5 = arith.addf %d1, %d2 : f64
  %h = arith.constant 0.1 : f16
  %6 = arith.mulf %h, %h : f16
  return %0, %1, %2, %3, %4, %5, %6 : f32, bf16, f16, f32, f32, f64, f16
}

// -----

// The float identities IEEE 754 guarantees for every x, NaN and -0.0 included.
// CHECK-LABEL: func.func @float_identities
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-NEXT:    return %[[X]], %[[X]], %[[X]], %[[X]] :
func.func @float_identities(%x: f32) -> (f32, f32, f32, f32) {
  %negzero = arith.constant -0.0 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %0 = arith.addf %x, %negzero : f32
  %1 = arith.subf %x, %zero : f32
  %2 = arith.mulf %x, %one : f32
  %3 = arith.divf %x, %one : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// -----

// Not identities: -0.0 + 0.0 is +0.0, NaN * 0.0 is NaN, inf - inf is NaN, 0 / 0 is NaN.
// CHECK-LABEL: func.func @float_not_folded
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK:         arith.addf %[[X]],
// CHECK-NEXT:    arith.mulf %[[X]],
// CHECK-NEXT:    arith.subf %[[X]], %[[X]]
// CHECK-NEXT:    arith.subf %[[X]],
// CHECK-NEXT:    arith.divf %[[X]], %[[X]]
// CHECK-NEXT:    arith.mulf %[[X]], {{.*}} fastmath<nnan>
// CHECK-NEXT:    return
func.func @float_not_folded(%x: f32) -> (f32, f32, f32, f32, f32, f32) {
  %negzero = arith.constant -0.0 : f32
  %zero = arith.constant 0.0 : f32
  %0 = arith.addf %x, %zero : f32
  %1 = arith.mulf %x, %zero : f32
  %2 = arith.subf %x, %x : f32
  %3 = arith.subf %x, %negzero : f32
  %4 = arith.divf %x, %x : f32
  %5 = arith.mulf %x, %zero fastmath<nnan> : f32
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f32, f32, f32
}

// -----

// With no NaNs and no signed zeros promised, x * 0.0 is 0.0.
// CHECK-LABEL: func.func @fastmath_mul_zero
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    return %[[Z]], %[[Z]] :
func.func @fastmath_mul_zero(%x: f32) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %0 = arith.mulf %x, %zero fastmath<nnan,nsz> : f32
  %1 = arith.mulf %x, %zero fastmath<fast> : f32
  return %0, %1 : f32, f32
}

// -----

// x + 0.0 is x when x cannot be -0 (an exponential, an absolute value, a square): a sum's
// first add of its zero init. An x that may be -0 keeps the add (-0 + 0 is +0).
// CHECK-LABEL: func.func @add_zero_never_negative_zero
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-DAG:     %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-DAG:     %[[A:.*]] = math.absf %[[X]] : f32
// CHECK-DAG:     %[[S:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[K:.*]] = arith.addf %[[X]], %[[Z]] : f32
// CHECK-NEXT:    return %[[E]], %[[A]], %[[S]], %[[K]] :
func.func @add_zero_never_negative_zero(%x: f32) -> (f32, f32, f32, f32) {
  %zero = arith.constant 0.0 : f32
  %e = math.exp %x : f32
  %0 = arith.addf %zero, %e : f32
  %a = math.absf %x : f32
  %1 = arith.addf %a, %zero : f32
  %s = arith.mulf %x, %x : f32
  %2 = arith.addf %s, %zero : f32
  %3 = arith.addf %x, %zero : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// -----

// A constant vector position inside its dimension becomes a static one (what unrolling
// leaves); a huge, negative or out-of-range constant stays an operand.
// CHECK-LABEL: func.func @constant_positions
// CHECK-SAME:    (%[[V:.*]]: vector<4xf32>, %[[X:.*]]: f32)
// CHECK-DAG:     %[[BIG:.*]] = arith.constant 1099511627776 : index
// CHECK-DAG:     %[[NEG:.*]] = arith.constant -1 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         vector.extract %[[V]][%[[BIG]]] : f32 from vector<4xf32>
// CHECK-NEXT:    vector.extract %[[V]][%[[NEG]]] : f32 from vector<4xf32>
// CHECK-NEXT:    vector.extract %[[V]][%[[FOUR]]] : f32 from vector<4xf32>
// CHECK-NEXT:    vector.extract %[[V]][1] : f32 from vector<4xf32>
// CHECK-NEXT:    vector.insert %[[X]], %[[V]] [2] : f32 into vector<4xf32>
func.func @constant_positions(%v: vector<4xf32>, %x: f32) -> (f32, f32, f32, f32, vector<4xf32>) {
  %big = arith.constant 1099511627776 : index
  %neg = arith.constant -1 : index
  %four = arith.constant 4 : index
  %one = arith.constant 1 : index
  %two = arith.constant 2 : index
  %0 = vector.extract %v[%big] : f32 from vector<4xf32>
  %1 = vector.extract %v[%neg] : f32 from vector<4xf32>
  %2 = vector.extract %v[%four] : f32 from vector<4xf32>
  %3 = vector.extract %v[%one] : f32 from vector<4xf32>
  %4 = vector.insert %x, %v [%two] : f32 into vector<4xf32>
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, vector<4xf32>
}

// -----

// A NaN operand decides a float comparison whatever the other operand is.
// CHECK-LABEL: func.func @cmpf
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-DAG:     %[[TRUE:.*]] = arith.constant true
// CHECK-DAG:     %[[FALSE:.*]] = arith.constant false
// CHECK:         %[[GT:.*]] = arith.cmpf ogt, %[[X]],
// CHECK-NEXT:    return %[[TRUE]], %[[FALSE]], %[[FALSE]], %[[TRUE]], %[[GT]] :
func.func @cmpf(%x: f32) -> (i1, i1, i1, i1, i1) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %0 = arith.cmpf olt, %one, %two : f32
  %1 = arith.cmpf oeq, %nan, %nan : f32
  %2 = arith.cmpf ord, %x, %nan : f32
  %3 = arith.cmpf une, %nan, %x : f32
  %4 = arith.cmpf ogt, %x, %one : f32
  return %0, %1, %2, %3, %4 : i1, i1, i1, i1, i1
}

// -----

// CHECK-LABEL: func.func @select
// CHECK-SAME:    (%[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK-NEXT:    %[[S:.*]] = arith.select %[[C]], %[[A]], %[[B]] : f32
// CHECK-NEXT:    return %[[A]], %[[A]], %[[B]], %[[C]], %[[S]] :
func.func @select(%c: i1, %a: f32, %b: f32) -> (f32, f32, f32, i1, f32) {
  %true = arith.constant true
  %false = arith.constant false
  %0 = arith.select %c, %a, %a : f32
  %1 = arith.select %true, %a, %b : f32
  %2 = arith.select %false, %a, %b : f32
  %3 = arith.select %c, %true, %false : i1
  %4 = arith.select %c, %a, %b : f32
  return %0, %1, %2, %3, %4 : f32, f32, f32, i1, f32
}

// -----

// Integer identities, with the constant on either side of a commutative op.
// CHECK-LABEL: func.func @int_identities
// CHECK-SAME:    (%[[X:.*]]: i32, %{{.*}}: i32)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[ONES:.*]] = arith.constant -1 : i32
// CHECK-NEXT:    return %[[X]], %[[X]], %[[X]], %[[X]], %[[ZERO]], %[[ZERO]], %[[X]], %[[ZERO]], %[[X]], %[[X]], %[[X]], %[[ONES]], %[[ZERO]], %[[X]], %[[X]], %[[X]], %[[X]] :
func.func @int_identities(%x: i32, %y: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %cm1 = arith.constant -1 : i32
  %0 = arith.addi %x, %c0 : i32
  %1 = arith.addi %c0, %x : i32
  %2 = arith.subi %x, %c0 : i32
  %3 = arith.muli %x, %c1 : i32
  %4 = arith.muli %x, %c0 : i32
  %5 = arith.subi %x, %x : i32
  %6 = arith.divsi %x, %c1 : i32
  %7 = arith.remui %x, %c1 : i32
  %8 = arith.andi %x, %x : i32
  %9 = arith.andi %x, %cm1 : i32
  %10 = arith.ori %x, %x : i32
  %11 = arith.ori %x, %cm1 : i32
  %12 = arith.xori %x, %x : i32
  %13 = arith.xori %x, %c0 : i32
  %s = arith.subi %x, %y : i32
  %14 = arith.addi %s, %y : i32
  %a = arith.addi %x, %y : i32
  %15 = arith.subi %a, %y : i32
  %16 = arith.shli %x, %c0 : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
}

// -----

// Float x - x and x * 0 are not 0 (NaN, infinities, signs); integer ones are.
// CHECK-LABEL: func.func @int_and_float_differ
// CHECK-SAME:    (%[[I:.*]]: i32, %[[F:.*]]: f32)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[FZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[D:.*]] = arith.subf %[[F]], %[[F]] : f32
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[F]], %[[FZERO]] : f32
// CHECK-NEXT:    return %[[ZERO]], %[[ZERO]], %[[D]], %[[M]] :
func.func @int_and_float_differ(%i: i32, %f: f32) -> (i32, i32, f32, f32) {
  %c0 = arith.constant 0 : i32
  %cst = arith.constant 0.0 : f32
  %0 = arith.subi %i, %i : i32
  %1 = arith.muli %c0, %i : i32
  %2 = arith.subf %f, %f : f32
  %3 = arith.mulf %cst, %f : f32
  return %0, %1, %2, %3 : i32, i32, f32, f32
}

// -----

// CHECK-LABEL: func.func @min_max
// CHECK-SAME:    (%[[X:.*]]: i8)
// CHECK-DAG:     %[[MAX:.*]] = arith.constant 127 : i8
// CHECK-DAG:     %[[MIN:.*]] = arith.constant -128 : i8
// CHECK:         %[[U:.*]] = arith.minui %[[X]], %[[MIN]] : i8
// CHECK-NEXT:    return %[[MAX]], %[[X]], %[[X]], %[[U]] :
func.func @min_max(%x: i8) -> (i8, i8, i8, i8) {
  %max = arith.constant 127 : i8
  %min = arith.constant -128 : i8
  %0 = arith.maxsi %x, %max : i8
  %1 = arith.maxsi %x, %min : i8
  %2 = arith.minsi %x, %x : i8
  %3 = arith.minui %x, %min : i8
  return %0, %1, %2, %3 : i8, i8, i8, i8
}

// -----

// Conversions fold with their defined rounding; out-of-range fptosi and inexact truncf stay.
// CHECK-LABEL: func.func @casts
// CHECK-DAG:     %[[U8:.*]] = arith.constant 2.550000e+02 : f32
// CHECK-DAG:     %[[INF:.*]] = arith.constant 0x7C00 : f16
// CHECK-DAG:     %[[TRUNC:.*]] = arith.constant -2 : i8
// CHECK-DAG:     %[[EXT:.*]] = arith.constant -2.9000000953674316 : f64
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 5.000000e-01 : bf16
// CHECK-DAG:     %[[BITS:.*]] = arith.constant 1065353216 : i32
// CHECK:         %[[BIG:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK-NEXT:    %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:    %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT:    return %[[U8]], %[[INF]], %[[TRUNC]], %[[BIG]], %[[EXT]], %[[HALF]], %[[BITS]], %[[E]] :
func.func @casts() -> (f32, f16, i8, i32, f64, bf16, i32, f32) {
  %cm1 = arith.constant -1 : i8
  %0 = arith.uitofp %cm1 : i8 to f32
  %big = arith.constant 65535 : i32
  %1 = arith.sitofp %big : i32 to f16
  %f = arith.constant -2.9 : f32
  %2 = arith.fptosi %f : f32 to i8
  %g = arith.constant 3.0e9 : f32
  %3 = arith.fptosi %g : f32 to i32
  %4 = arith.extf %f : f32 to f64
  %half = arith.constant 0.5 : f32
  %5 = arith.truncf %half : f32 to bf16
  %one = arith.constant 1.0 : f32
  %6 = arith.bitcast %one : f32 to i32
  %third = arith.constant 0.333333343 : f32
  %t = arith.truncf %third : f32 to bf16
  %7 = arith.extf %t : bf16 to f32
  return %0, %1, %2, %3, %4, %5, %6, %7 : f32, f16, i8, i32, f64, bf16, i32, f32
}

// -----

// CHECK-LABEL: func.func @cast_chains
// CHECK-SAME:    (%[[X:.*]]: i8, %[[Y:.*]]: bf16)
// CHECK-NEXT:    %[[A:.*]] = arith.extsi %[[X]] : i8 to i64
// CHECK-NEXT:    %[[B:.*]] = arith.extui %[[X]] : i8 to i16
// CHECK-NEXT:    return %[[A]], %[[X]], %[[B]], %[[Y]] :
func.func @cast_chains(%x: i8, %y: bf16) -> (i64, i8, i16, bf16) {
  %0 = arith.extsi %x : i8 to i32
  %1 = arith.extsi %0 : i32 to i64
  %2 = arith.trunci %0 : i32 to i8
  %3 = arith.extui %x : i8 to i32
  %4 = arith.trunci %3 : i32 to i16
  %5 = arith.extf %y : bf16 to f32
  %6 = arith.truncf %5 : f32 to bf16
  return %1, %2, %4, %6 : i64, i8, i16, bf16
}

// -----

// Splat vectors fold like scalars.
// CHECK-LABEL: func.func @vectors
// CHECK-DAG:     %[[SUM:.*]] = arith.constant dense<5> : vector<4xi32>
// CHECK-DAG:     %[[CMP:.*]] = arith.constant dense<false> : vector<4xi1>
// CHECK-NEXT:    return %[[SUM]], %[[CMP]] :
func.func @vectors() -> (vector<4xi32>, vector<4xi1>) {
  %a = arith.constant dense<2> : vector<4xi32>
  %b = arith.constant dense<3> : vector<4xi32>
  %0 = arith.addi %a, %b : vector<4xi32>
  %1 = arith.cmpi sgt, %a, %b : vector<4xi32>
  return %0, %1 : vector<4xi32>, vector<4xi1>
}

// -----

// Unused pure ops go, chains included; calls stay.
// CHECK-LABEL: func.func @dead_code
// CHECK-NEXT:    call @effect
// CHECK-NEXT:    return
func.func private @effect(i32)

func.func @dead_code(%x: i32) {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %x, %c1 : i32
  %1 = arith.muli %0, %0 : i32
  func.call @effect(%x) : (i32) -> ()
  return
}

// -----

// Constants move out of loops to the start of the function, one per value.
// CHECK-LABEL: func.func @hoist
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[C0]] to %{{.*}} step %[[C1]]
// CHECK-NEXT:      arith.addi %[[I]], %[[C1]] : index
// CHECK-NOT:       arith.constant
// CHECK:           arith.mulf %{{.*}}, %[[TWO]] : f32
func.func @hoist(%n: index, %t: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<8xf32>) {
    %two = arith.constant 2.0 : f32
    %c1_0 = arith.constant 1 : index
    %j = arith.addi %i, %c1_0 : index
    %v = tensor.extract %acc[%i] : tensor<8xf32>
    %w = arith.mulf %v, %two : f32
    %u = tensor.insert %w into %acc[%j] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// scf.if on a constant becomes the branch taken, side effects included.
// CHECK-LABEL: func.func @if_constant
// CHECK-SAME:    (%[[X:.*]]: i32)
// CHECK-NEXT:    %[[A:.*]] = arith.addi %[[X]], %[[X]] : i32
// CHECK-NEXT:    %[[M:.*]] = arith.muli %[[X]], %[[X]] : i32
// CHECK-NEXT:    call @effect(%[[X]])
// CHECK-NEXT:    return %[[A]], %[[M]] :
func.func private @effect(i32)

func.func @if_constant(%x: i32) -> (i32, i32) {
  %true = arith.constant true
  %false = arith.constant false
  %0 = scf.if %true -> (i32) {
    %a = arith.addi %x, %x : i32
    scf.yield %a : i32
  } else {
    scf.yield %x : i32
  }
  %1 = scf.if %false -> (i32) {
    scf.yield %x : i32
  } else {
    %m = arith.muli %x, %x : i32
    scf.yield %m : i32
  }
  scf.if %true {
    func.call @effect(%x) : (i32) -> ()
  }
  scf.if %false {
    func.call @effect(%x) : (i32) -> ()
  }
  return %0, %1 : i32, i32
}

// -----

// Loops that run zero times become their initial values, loops that run once their body;
// a loop with unknown trips stays, a pure one with unused results goes.
// CHECK-LABEL: func.func @for_trip_counts
// CHECK-SAME:    (%[[N:.*]]: index, %[[X:.*]]: f32)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    call @effect(%[[C0]])
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:    %[[LOOP:.*]] = scf.for %{{.*}} = %[[C0]] to %[[N]] step %[[C1]] iter_args
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      func.call @effect
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[X]], %[[X]], %[[SQ]], %[[LOOP]] :
func.func private @effect(index)

func.func @for_trip_counts(%n: index, %x: f32) -> (f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r0 = scf.for %i = %c4 to %c0 step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.addf %a, %a : f32
    scf.yield %s : f32
  }
  %r1 = scf.for %i = %n to %n step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.addf %a, %a : f32
    scf.yield %s : f32
  }
  %r2 = scf.for %i = %c0 to %c4 step %c4 iter_args(%a = %x) -> (f32) {
    func.call @effect(%i) : (index) -> ()
    %s = arith.mulf %a, %a : f32
    scf.yield %s : f32
  }
  %r3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.mulf %a, %a : f32
    scf.yield %s : f32
  }
  scf.for %i = %c0 to %n step %c1 {
    %u = arith.addi %i, %i : index
  }
  scf.for %i = %c0 to %n step %c1 {
    func.call @effect(%i) : (index) -> ()
  }
  return %r0, %r1, %r2, %r3 : f32, f32, f32, f32
}

// -----

// An unsigned loop from 0 to -1 (the largest i8) runs more than once: kept.
// CHECK-LABEL: func.func @unsigned_loop
// CHECK:         scf.for unsigned
func.func @unsigned_loop(%x: f32) -> f32 {
  %c0 = arith.constant 0 : i8
  %cm1 = arith.constant -1 : i8
  %c1 = arith.constant 1 : i8
  %r = scf.for unsigned %i = %c0 to %cm1 step %c1 iter_args(%a = %x) -> (f32) : i8 {
    %s = arith.mulf %a, %a : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// Negating a comparison inverts its predicate.
// CHECK-LABEL: func.func @not_of_cmpi
// CHECK-SAME:    (%[[A:.*]]: i32, %[[B:.*]]: i32)
// CHECK-NEXT:    %[[GE:.*]] = arith.cmpi sge, %[[A]], %[[B]] : i32
// CHECK-NEXT:    %[[NE:.*]] = arith.cmpi ne, %[[A]], %[[B]] : i32
// CHECK-NEXT:    return %[[GE]], %[[NE]] :
func.func @not_of_cmpi(%a: i32, %b: i32) -> (i1, i1) {
  %true = arith.constant true
  %0 = arith.cmpi slt, %a, %b : i32
  %1 = arith.xori %0, %true : i1
  %2 = arith.cmpi eq, %a, %b : i32
  %3 = arith.xori %true, %2 : i1
  return %1, %3 : i1, i1
}

// -----

// Branches that only pick values from outside become selects; what else a branch does
// stays in an scf.if without results (and without an empty else).
// CHECK-LABEL: func.func @if_to_select
// CHECK-SAME:    (%[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK-NEXT:    %[[S0:.*]] = arith.select %[[C]], %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[S1:.*]] = arith.select %[[C]], %[[A]], %[[B]] : f32
// CHECK-NEXT:    scf.if %[[C]] {
// CHECK-NEXT:      func.call @effect()
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[S0]], %[[A]], %[[S1]] :
func.func private @effect()

func.func @if_to_select(%c: i1, %a: f32, %b: f32) -> (f32, f32, f32) {
  %r:2 = scf.if %c -> (f32, f32) {
    scf.yield %a, %a : f32, f32
  } else {
    scf.yield %b, %a : f32, f32
  }
  %s = scf.if %c -> (f32) {
    func.call @effect() : () -> ()
    scf.yield %a : f32
  } else {
    scf.yield %b : f32
  }
  return %r#0, %r#1, %s : f32, f32, f32
}

// -----

// A value computed inside a branch cannot be selected before the scf.if: kept.
// CHECK-LABEL: func.func @if_with_inner_values
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
func.func @if_with_inner_values(%c: i1, %a: f32) -> f32 {
  %r = scf.if %c -> (f32) {
    %d = arith.addf %a, %a : f32
    scf.yield %d : f32
  } else {
    scf.yield %a : f32
  }
  return %r : f32
}

// -----

// Loop-carried values yielded unchanged are their initial values; they and the unused
// ones are dropped from the loop.
// CHECK-LABEL: func.func @unchanged_iter_args
// CHECK-SAME:    (%[[N:.*]]: index, %[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK:         %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[S:.*]] = %[[X]]) -> (f32) {
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[S]], %[[X]] : f32
// CHECK-NEXT:      scf.yield %[[T]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[X]], %[[Y]], %[[R]] :
func.func @unchanged_iter_args(%n: index, %x: f32, %y: f32) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %b = %y, %s = %x) -> (f32, f32, f32) {
    %t = arith.addf %s, %a : f32
    scf.yield %a, %y, %t : f32, f32, f32
  }
  return %r#0, %r#1, %r#2 : f32, f32, f32
}

// -----

// A loop-carried value that nothing reads, in the loop or after it, is dropped; one whose
// chain only feeds itself (%lonely) stays, as in MLIR.
// CHECK-LABEL: func.func @unused_iter_args
// CHECK-SAME:    (%[[N:.*]]: index, %[[X:.*]]: f32)
// CHECK:         %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[A:.*]] = %[[X]], %[[L:.*]] = %[[X]]) -> (f32, f32) {
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[A]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[L]], %[[L]] : f32
// CHECK-NEXT:      scf.yield %[[S]], %[[M]] : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0 : f32
func.func @unused_iter_args(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %unread = %x, %lonely = %x) -> (f32, f32, f32) {
    %s = arith.addf %a, %a : f32
    %l = arith.mulf %lonely, %lonely : f32
    scf.yield %s, %s, %l : f32, f32, f32
  }
  return %r#0 : f32
}

// -----

// An atomic update that yields the element unchanged writes nothing: its result is its
// tensor (XLA's canonicalization; not an MLIR op). One that changes it stays.
// CHECK-LABEL: func.func @identity_atomic
// CHECK-SAME: (%[[T:.*]]: tensor<2x3xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK: %[[KEPT:.*]] = xla_gpu.atomic_rmw %[[T]]
// CHECK: return %[[T]], %[[KEPT]]
func.func @identity_atomic(%t: tensor<2x3xf32>, %i: index, %j: index) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %same = xla_gpu.atomic_rmw %t[%i, %j] : tensor<2x3xf32> {
  ^bb0(%current: f32):
    xla_gpu.yield %current : f32
  }
  %kept = xla_gpu.atomic_rmw %t[%i, %j] : tensor<2x3xf32> {
  ^bb0(%current: f32):
    %d = arith.addf %current, %current : f32
    xla_gpu.yield %d : f32
  }
  return %same, %kept : tensor<2x3xf32>, tensor<2x3xf32>
}
