//! HLO opcodes and their text spellings.

use crate::spelled::spelled_enum;

spelled_enum! {
    /// Every opcode XLA's HLO text can name. Parsing accepts all of them; which ones the
    /// emitters compile is decided (and refused with "unsupported: ...") there.
    pub enum Opcode {
        Abs => "abs",
        Acos => "acos",
        Acosh => "acosh",
        Add => "add",
        AddDependency => "add-dependency",
        AfterAll => "after-all",
        AllGather => "all-gather",
        AllGatherDone => "all-gather-done",
        AllGatherStart => "all-gather-start",
        AllReduce => "all-reduce",
        AllReduceDone => "all-reduce-done",
        AllReduceStart => "all-reduce-start",
        AllToAll => "all-to-all",
        And => "and",
        Asin => "asin",
        Asinh => "asinh",
        AsyncDone => "async-done",
        AsyncStart => "async-start",
        AsyncUpdate => "async-update",
        Atan => "atan",
        Atan2 => "atan2",
        Atanh => "atanh",
        BatchNormGrad => "batch-norm-grad",
        BatchNormInference => "batch-norm-inference",
        BatchNormTraining => "batch-norm-training",
        Bitcast => "bitcast",
        BitcastConvert => "bitcast-convert",
        Broadcast => "broadcast",
        Call => "call",
        Cbrt => "cbrt",
        Ceil => "ceil",
        Cholesky => "cholesky",
        Clamp => "clamp",
        Clz => "count-leading-zeros",
        CollectiveBroadcast => "collective-broadcast",
        CollectivePermute => "collective-permute",
        CollectivePermuteDone => "collective-permute-done",
        CollectivePermuteStart => "collective-permute-start",
        Compare => "compare",
        Complex => "complex",
        Concatenate => "concatenate",
        Conditional => "conditional",
        Constant => "constant",
        Convert => "convert",
        Convolution => "convolution",
        Copy => "copy",
        CopyDone => "copy-done",
        CopyStart => "copy-start",
        Cos => "cosine",
        Cosh => "cosh",
        CustomCall => "custom-call",
        Divide => "divide",
        Domain => "domain",
        Dot => "dot",
        DynamicReshape => "dynamic-reshape",
        DynamicSlice => "dynamic-slice",
        DynamicUpdateSlice => "dynamic-update-slice",
        Erf => "erf",
        Exp => "exponential",
        Expm1 => "exponential-minus-one",
        Fft => "fft",
        Floor => "floor",
        Fusion => "fusion",
        Gather => "gather",
        GetDimensionSize => "get-dimension-size",
        GetTupleElement => "get-tuple-element",
        Imag => "imag",
        Infeed => "infeed",
        Iota => "iota",
        IsFinite => "is-finite",
        Log => "log",
        Log1p => "log-plus-one",
        Logistic => "logistic",
        Map => "map",
        Maximum => "maximum",
        Minimum => "minimum",
        Multiply => "multiply",
        Negate => "negate",
        Not => "not",
        OptimizationBarrier => "opt-barrier",
        Or => "or",
        Outfeed => "outfeed",
        Pad => "pad",
        Parameter => "parameter",
        PartitionId => "partition-id",
        PopulationCount => "popcnt",
        Power => "power",
        RaggedAllToAll => "ragged-all-to-all",
        RaggedDot => "ragged-dot",
        Real => "real",
        Recv => "recv",
        RecvDone => "recv-done",
        Reduce => "reduce",
        ReducePrecision => "reduce-precision",
        ReduceScatter => "reduce-scatter",
        ReduceWindow => "reduce-window",
        Remainder => "remainder",
        ReplicaId => "replica-id",
        Reshape => "reshape",
        Reverse => "reverse",
        Rng => "rng",
        RngBitGenerator => "rng-bit-generator",
        RngGetAndUpdateState => "rng-get-and-update-state",
        RoundNearestAfz => "round-nearest-afz",
        RoundNearestEven => "round-nearest-even",
        Rsqrt => "rsqrt",
        Scatter => "scatter",
        Select => "select",
        SelectAndScatter => "select-and-scatter",
        Send => "send",
        SendDone => "send-done",
        SetDimensionSize => "set-dimension-size",
        ShiftLeft => "shift-left",
        ShiftRightArithmetic => "shift-right-arithmetic",
        ShiftRightLogical => "shift-right-logical",
        Sign => "sign",
        Sin => "sine",
        Sinh => "sinh",
        Slice => "slice",
        Sort => "sort",
        Sqrt => "sqrt",
        StochasticConvert => "stochastic-convert",
        Subtract => "subtract",
        Tan => "tan",
        Tanh => "tanh",
        TopK => "topk",
        Transpose => "transpose",
        TriangularSolve => "triangular-solve",
        Tuple => "tuple",
        While => "while",
        Xor => "xor",
    }
}

impl Opcode {
    /// Elementwise ops with one operand whose result has the operand's shape.
    pub fn is_elementwise_unary(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Abs | Acos
                | Acosh
                | Asin
                | Asinh
                | Atan
                | Atanh
                | Cbrt
                | Ceil
                | Clz
                | Cos
                | Cosh
                | Erf
                | Exp
                | Expm1
                | Floor
                | Log
                | Log1p
                | Logistic
                | Negate
                | Not
                | PopulationCount
                | RoundNearestAfz
                | RoundNearestEven
                | Rsqrt
                | Sign
                | Sin
                | Sinh
                | Sqrt
                | Tan
                | Tanh
                | Copy
        )
    }

    /// Elementwise ops with two operands of one shape and a result of that shape.
    pub fn is_elementwise_binary(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            Add | And
                | Atan2
                | Divide
                | Maximum
                | Minimum
                | Multiply
                | Or
                | Power
                | Remainder
                | ShiftLeft
                | ShiftRightArithmetic
                | ShiftRightLogical
                | Subtract
                | Xor
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut names: Vec<&str> = Opcode::ALL.iter().map(|o| o.name()).collect();
        for &op in Opcode::ALL {
            assert_eq!(Opcode::from_name(op.name()), Some(op));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Opcode::ALL.len());
    }
}
