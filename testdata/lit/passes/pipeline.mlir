// RUN: hlo-opt %s --cse --canonicalize --cse --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: hlo-opt %s --pass-pipeline=canonicalize,cse,canonicalize --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: hlo-opt %s --canonicalize -o %t && FileCheck %s --check-prefix=RESULT < %t
// RUN: cat %s | hlo-opt - --canonicalize | FileCheck %s --check-prefix=RESULT
// RUN: hlo-opt %s | FileCheck %s --check-prefix=NONE
// RUN: not hlo-opt %s --pass-pipeline=canonicalize,frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not hlo-opt %s --pass-pipeline=cse --canonicalize 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not hlo-opt %s --print-ir-after=frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN-DUMP
// RUN: not hlo-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: hlo-opt --help | FileCheck %s --check-prefix=HELP

// How hlo-opt builds its pipeline: pass flags run in command-line order (repeats
// allowed), or --pass-pipeline lists them; without passes the input is verified and printed.

func.func @f(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %x, %c0 : i32
  return %0 : i32
}

// ORDER:      IR Dump After CSE (cse)
// ORDER:      IR Dump After Canonicalizer (canonicalize)
// ORDER:      IR Dump After CSE (cse)
// ORDER-NOT:  IR Dump After

// PIPELINE:     IR Dump After Canonicalizer (canonicalize)
// PIPELINE:     IR Dump After CSE (cse)
// PIPELINE:     IR Dump After Canonicalizer (canonicalize)
// PIPELINE-NOT: IR Dump After

// RESULT:      func.func @f(%[[X:.*]]: i32) -> i32 {
// RESULT-NEXT:   return %[[X]] : i32

// NONE:      arith.addi
// NONE-NEXT: return

// UNKNOWN: error: unknown pass 'frobnicate' in the pipeline 'canonicalize,frobnicate'
// BOTH: error: --pass-pipeline cannot be combined with pass flags
// UNKNOWN-DUMP: error: --print-ir-after: unknown pass 'frobnicate'
// MISSING: error: cannot read '{{.*}}pipeline.mlir.missing'

// HELP:      Usage: hlo-opt [OPTIONS] <INPUT>
// HELP:      --split-input-file
// HELP:      --mlir-print-op-generic
// HELP:      --pass-pipeline <PASSES>
// HELP:      --mlir-print-ir-after-all
// HELP:      --print-ir-after <PASS>
// HELP:      --print-ir-after-change
// HELP:      --time-passes
// HELP:      Passes (run in the order given):
// HELP:      --canonicalize
// HELP-NEXT:   Fold constants
// HELP:      --cse
// HELP-NEXT:   Eliminate common subexpressions
