// RUN: not hlo-opt --split-input-file %s --lower-to-llvm 2>&1 | FileCheck %s

// What lower-to-llvm refuses at the op: MLIR's convert-math-to-llvm leaves these integer
// ops on vectors of more than one dimension unconverted (its output would keep unrealized
// casts), and libdevice has no vector functions (1-d vectors are called per lane).

func.func @absi_2d(%a: vector<2x2xi32>) -> vector<2x2xi32> {
  %r = math.absi %a : vector<2x2xi32>
  // CHECK: lower-to-llvm-invalid.mlir:[[@LINE-1]]:3: error: 'math.absi' op unsupported: 'math.absi' on 'vector<2x2xi32>' (1-d vectors only)
  return %r : vector<2x2xi32>
}

// -----

func.func @sin_2d(%a: vector<2x2xf32>) -> vector<2x2xf32> {
  %r = math.sin %a : vector<2x2xf32>
  // CHECK: lower-to-llvm-invalid.mlir:[[@LINE-1]]:3: error: 'math.sin' op cannot call libdevice on 'vector<2x2xf32>'
  return %r : vector<2x2xf32>
}
