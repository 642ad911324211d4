//! What `lower-tensors` makes of the lit cases is valid MLIR: each case of
//! `testdata/lit/passes/lower-tensors.mlir` is lowered, then `simplify-affine` removes the
//! remaining `xla_gpu` ops and `expand-float-ops` the bf16 tanh (as in the pipeline); our
//! verifier and MLIR 22 (generic form, no unregistered dialects) accept the result, and
//! MLIR's conversions take it to the llvm dialect. The invalid cases fail with an error at
//! the op and leave the module as it was.

use crate::common::lit_cases;
use passes::{ExpandFloatOps, LowerTensors, LowerToLlvm, Pass, SimplifyAffine};

/// Whether some op still has a tensor operand or result.
fn has_tensor_values(m: &ir::Module) -> bool {
    m.collect_ops(m.top()).into_iter().any(|op| {
        let mut types = m.operand_types(op);
        types.extend(m.result_types(op));
        types.iter().any(|t| t.is_tensor())
    })
}

#[test]
fn lowered_cases_are_valid_mlir_and_reach_the_llvm_dialect() {
    for chunk in lit_cases("lower-tensors.mlir") {
        let mut m = ir::parse_module(&chunk).unwrap();
        for pass in [&LowerTensors as &dyn Pass, &SimplifyAffine, &ExpandFloatOps] {
            pass.run(&mut m).unwrap();
            m.verify()
                .unwrap_or_else(|e| panic!("after {}: {e}\n{}", pass.name(), m.print()));
        }
        let text = m.print();
        assert!(!has_tensor_values(&m), "tensors left:\n{text}");
        codegen::mlir::verify(&m.print_generic(), false)
            .unwrap_or_else(|e| panic!("MLIR rejects\n{text}\n{e}"));
        LowerToLlvm
            .run(&mut m)
            .unwrap_or_else(|e| panic!("lower-to-llvm fails on\n{text}\n{e}"));
    }
}

#[test]
fn invalid_cases_fail_at_the_op_and_change_nothing() {
    for chunk in lit_cases("lower-tensors-invalid.mlir") {
        let mut m = ir::parse_module(&chunk).unwrap();
        let before = m.print();
        let error = LowerTensors.run(&mut m).unwrap_err();
        assert!(error.to_string().contains("error: '"), "{error}");
        assert_eq!(m.print(), before);
    }
}
