// `scf.forall` refused where MLIR refuses it, located (run by scf-forall.mlir).

// CHECK: scf-forall-invalid.mlir:[[# @LINE + 2]]:26: error: expected 2 bounds (one per induction variable), got 1
func.func @bounds() {
  scf.forall (%i, %j) in (8) {
  }
  return
}

// -----

// CHECK: scf-forall-invalid.mlir:[[# @LINE + 2]]:3: error: 'scf.forall' op requires steps to be positive, got 0
func.func @step() {
  scf.forall (%i) = (0) to (8) step (0) {
  }
  return
}

// -----

// CHECK: scf-forall-invalid.mlir:[[# @LINE + 3]]:5: error: 'scf.forall.in_parallel' op expected only 'tensor.parallel_insert_slice' ops, found 'arith.constant'
func.func @writes(%init: tensor<8xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (8) shared_outs(%out = %init) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
      %c = arith.constant 0 : index
    }
  }
  return %r : tensor<8xf32>
}

// -----

// CHECK: scf-forall-invalid.mlir:[[# @LINE + 4]]:7: error: 'tensor.parallel_insert_slice' op expected 1 static_sizes entries (the destination's rank)
func.func @slice(%init: tensor<8xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (8) shared_outs(%out = %init) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %out[0][8, 1][1] : tensor<8xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}

// -----

// CHECK: scf-forall-invalid.mlir:[[# @LINE + 4]]:7: error: 'tensor.parallel_insert_slice' op offset 0 is out-of-bounds: 8 >= 8
func.func @out_of_bounds(%init: tensor<8xf32>, %s: tensor<1xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (8) shared_outs(%out = %init) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %out[8][1][1] : tensor<1xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}

// -----

// CHECK: scf-forall-invalid.mlir:[[# @LINE + 4]]:7: error: 'tensor.parallel_insert_slice' op slice along dimension 0 runs out-of-bounds: 8 >= 8
func.func @runs_out(%init: tensor<8xf32>, %s: tensor<4xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (8) shared_outs(%out = %init) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %out[2][4][2] : tensor<4xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}
