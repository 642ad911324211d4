// RUN: hlo-opt %s --canonicalize --cse --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: hlo-opt %s --pass-pipeline=canonicalize,cse --dump-after-each-pass 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: hlo-opt %s --cse --canonicalize --cse --print-ir-after-change 2>&1 | FileCheck %s --check-prefix=CHANGE
// RUN: hlo-opt %s --canonicalize --cse --canonicalize --print-ir-after=canonicalize --print-ir-after-change 2>&1 | FileCheck %s --check-prefix=CHANGE-ONE
// RUN: hlo-opt %s --canonicalize --cse --print-ir-after=cse --mlir-print-op-generic 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: hlo-opt %s --canonicalize --cse --time-passes 2>&1 >/dev/null | FileCheck %s --check-prefix=TIME

// IR dumps between passes, in mlir-opt's format: a header naming the pass (class name and
// flag), the module, two blank lines. Dumps go to standard error, the result to standard
// output.

func.func @f(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.addi %c1, %c2 : i32
  %b = arith.addi %x, %a : i32
  %d = arith.addi %x, %a : i32
  %e = arith.muli %b, %d : i32
  return %e : i32
}

// ALL:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// ALL-NEXT: module {
// ALL-NEXT:   func.func @f(%[[X:.*]]: i32) -> i32 {
// ALL-NEXT:     %[[C3:.*]] = arith.constant 3 : i32
// ALL-NEXT:     %[[B:.*]] = arith.addi %[[X]], %[[C3]] : i32
// ALL-NEXT:     %[[D:.*]] = arith.addi %[[X]], %[[C3]] : i32
// ALL-NEXT:     %[[E:.*]] = arith.muli %[[B]], %[[D]] : i32
// ALL-NEXT:     return %[[E]] : i32
// ALL-NEXT:   }
// ALL-NEXT: }
// ALL-EMPTY:
// ALL-EMPTY:
// ALL-NEXT: // -----// IR Dump After CSE (cse) //----- //
// ALL-NEXT: module {
// ALL-NEXT:   func.func @f(%[[X:.*]]: i32) -> i32 {
// ALL-NEXT:     %[[C3:.*]] = arith.constant 3 : i32
// ALL-NEXT:     %[[B:.*]] = arith.addi %[[X]], %[[C3]] : i32
// ALL-NEXT:     %[[E:.*]] = arith.muli %[[B]], %[[B]] : i32
// ALL-NEXT:     return %[[E]] : i32
// ALL-NEXT:   }
// ALL-NEXT: }
// ALL-EMPTY:
// ALL-EMPTY:
// ALL-NEXT: module {
// ALL-NOT:  IR Dump

// The last cse changes nothing, so it prints nothing: the result follows directly.
// CHANGE:       // -----// IR Dump After CSE (cse) //----- //
// CHANGE-NEXT:  module {
// CHANGE:         arith.muli %[[B:.*]], %[[B]] : i32
// CHANGE:       // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHANGE-NEXT:  module {
// CHANGE:         arith.constant 3 : i32
// CHANGE:         return
// CHANGE-NEXT:  }
// CHANGE-NEXT:  }
// CHANGE-EMPTY:
// CHANGE-EMPTY:
// CHANGE-NEXT:  module {
// CHANGE-NOT:   IR Dump

// Only the first canonicalize changes something.
// CHANGE-ONE:     // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHANGE-ONE-NOT: IR Dump

// AFTER-NOT:  IR Dump After Canonicalizer
// AFTER:      // -----// IR Dump After CSE (cse) //----- //
// AFTER-NEXT: "builtin.module"() ({
// AFTER:      "arith.muli"(%[[B:.*]], %[[B]]) : (i32, i32) -> i32
// AFTER:      {{^}}}) : () -> ()
// AFTER-EMPTY:
// AFTER-EMPTY:
// AFTER-NEXT: "builtin.module"() ({
// AFTER-NOT:  IR Dump

// TIME:      ... Execution time report ...
// TIME:      Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// TIME:      ----Wall Time----  ----Name----
// TIME-NEXT: {{[0-9]+\.[0-9]+ \( *[0-9.]+%\)}}  Parser
// TIME-NEXT: {{[0-9]+\.[0-9]+ \( *[0-9.]+%\)}}  Verifier
// TIME-NEXT: {{[0-9]+\.[0-9]+ \( *[0-9.]+%\)}}  Canonicalizer
// TIME-NEXT: {{[0-9]+\.[0-9]+ \( *[0-9.]+%\)}}  CSE
// TIME-NEXT: {{[0-9]+\.[0-9]+ \( *[0-9.]+%\)}}  Output
// TIME-NEXT: {{[0-9]+\.[0-9]+ \(100.0%\)}}  Total
