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

// -----

// Ops an earlier pass lowers are refused at the op, not handed to MLIR: the emitters'
// dialect (`simplify-affine` lowers apply_indexing) and XLA's work-item form.
#map = #xla.indexing_map<"()[s0, s1] -> (s0 * s1), domain: s0 in [0, 10], s1 in [0, 5]">
func.func @apply_indexing(%a: index, %b: index) -> index {
  %0 = xla.apply_indexing #map[%a, %b]
  // CHECK: lower-to-llvm-invalid.mlir:[[@LINE-1]]:3: error: 'xla_gpu.apply_indexing' op unsupported: 'xla_gpu.apply_indexing' (an op of the emitters' dialect, which the passes before this one lower)
  return %0 : index
}

// -----

func.func @forall(%init: tensor<8xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (8) shared_outs(%out = %init) -> (tensor<8xf32>) {
  // CHECK: lower-to-llvm-invalid.mlir:[[@LINE-1]]:3: error: 'scf.forall' op unsupported: 'scf.forall' (XLA's work-item form, which 'lower-xla-shared' lowers)
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %out[0][8][1] : tensor<8xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}

// -----

// With a 32-bit index (every shape is small), a case value beyond 32 bits would be cut.
func.func @wide_case(%i: index) -> i32 {
  %r = scf.index_switch %i -> i32
  // CHECK: lower-to-llvm-invalid.mlir:[[@LINE-1]]:3: error: 'scf.index_switch' op unsupported: 'scf.index_switch' (a case value outside 32 bits, the width of this kernel's index)
  case 4294967296 {
    %c1 = arith.constant 1 : i32
    scf.yield %c1 : i32
  }
  default {
    %c0 = arith.constant 0 : i32
    scf.yield %c0 : i32
  }
  return %r : i32
}
