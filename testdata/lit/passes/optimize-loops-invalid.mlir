// RUN: not hlo-opt %s --optimize-loops=max_unroll=4 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not hlo-opt %s --optimize-loops=max_unroll_factor=-1 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not hlo-opt %s --optimize-loops=4 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not hlo-opt %s --cse=aggressive=1 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not hlo-opt %s --pass-pipeline='optimize-loops{max_unroll_factor=4' 2>&1 | FileCheck %s --check-prefix=BRACE

// Pass options are checked before anything runs.

// NAME: error: --optimize-loops=max_unroll=4: the pass 'optimize-loops' has no option 'max_unroll' (it has max_unroll_factor)
// VALUE: error: --optimize-loops=max_unroll_factor=-1: max_unroll_factor=-1: not a count
// FORM: error: --optimize-loops=4: the option '4' of the pass 'optimize-loops' is not key=value
// NONE: error: --cse=aggressive=1: the pass 'cse' has no option 'aggressive'
// BRACE: error: 'optimize-loops{max_unroll_factor=4' in the pipeline 'optimize-loops{max_unroll_factor=4': options must end with '}'
func.func @f() {
  return
}
