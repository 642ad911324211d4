//! The functions kernels compute by approximation, and how far from the evaluator.
//!
//! The evaluator computes `exp`, `log`, `tanh`... with the host's libm (within an ulp of
//! the exact value) and complex functions in f64 rounded once. A kernel calls libdevice
//! (`__nv_expf`, ...: at most 4 ulps for every function here, by CUDA's table of maximum
//! errors; most 1 or 2) or computes a complex function in the part type by a scaled formula
//! (`emitters::elemental::complex`: a few roundings). The interpreter runs libdevice's
//! bodies after LLVM's O3, so from that stage on the results differ by those ulps. An
//! output of the function's type hides them within its tolerance; an output of a wider type
//! does not (`convert(log-plus-one(x))` to f64, compared at f64's bound, or a dot of such
//! values whose terms cancel): `--check` gives such outputs the bound of the function's type.

use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;

/// Whether kernels compute `op` on operands of type `operand` by an approximation: the
/// transcendental float functions, and every complex function (all but negate, real,
/// imag and the arithmetic of parts).
pub fn is_approximated(op: Opcode, operand: PrimitiveType) -> bool {
    use Opcode::*;
    if operand.is_complex() {
        return op.is_elementwise_unary() && !matches!(op, Negate | Real | Imag) || op == Power;
    }
    operand.is_float()
        && matches!(
            op,
            Exp | Expm1
                | Log
                | Log1p
                | Tanh
                | Sin
                | Cos
                | Tan
                | Atan2
                | Power
                | Cbrt
                | Rsqrt
                | Logistic
                | Erf
        )
}
