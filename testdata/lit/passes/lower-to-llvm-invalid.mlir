// RUN: not hlo-opt --split-input-file %s --lower-to-llvm 2>&1 | FileCheck %s

// What lower-to-llvm refuses at the op: MLIR's convert-math-to-llvm leaves these integer
// ops on vectors of more than one dimension unconverted (its output would keep unrealized
// casts); libdevice has no vector functions, so a vector's math is one call per lane, up to
// 4096 lanes.

func.func @absi_2d(%a: vector<2x2xi32>) -> vector<2x2xi32> {
  %r = math.absi %a : vector<2x2xi32>
  // CHECK: lower-to-llvm-invalid.mlir:[[@LINE-1]]:3: error: 'math.absi' op unsupported: 'math.absi' on 'vector<2x2xi32>' (1-d vectors only)
  return %r : vector<2x2xi32>
}

// -----

func.func @sin_of_many_lanes(%a: vector<100x100xf32>) -> vector<100x100xf32> {
  %r = math.sin %a : vector<100x100xf32>
  // CHECK: lower-to-llvm-invalid.mlir:[[@LINE-1]]:3: error: 'math.sin' op cannot call libdevice on 'vector<100x100xf32>': more than 4096 lanes
  return %r : vector<100x100xf32>
}
