// Forms `lower-xla-shared` refuses, located (run by lower-xla-shared.mlir).

// CHECK: lower-xla-shared-invalid.mlir:[[# @LINE + 3]]:3: error: 'scf.forall' op unsupported: only loops from 0 by 1 to constant bounds are the block's threads
func.func @stepped(%init: tensor<8xf32>) -> tensor<8xf32> {
  %c8 = arith.constant 8 : index
  %r = scf.forall (%i) = (0) to (8) step (2) shared_outs(%out = %init) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %out[0][8][1] : tensor<8xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}

// -----

// CHECK: lower-xla-shared-invalid.mlir:[[# @LINE + 5]]:7: error: 'tensor.parallel_insert_slice' op unsupported: a parallel write of part of a shared output (only whole outputs are lowered)
func.func @part(%init: tensor<8xf32>, %s: tensor<4xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (2) shared_outs(%out = %init) -> (tensor<8xf32>) {
    %c = arith.constant 4 : index
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %out[4][4][1] : tensor<4xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}
