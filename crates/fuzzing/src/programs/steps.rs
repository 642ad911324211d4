//! The ops the generator draws: one method per op (or family), each adding what it needs
//! to the graph and doing nothing when it does not apply to the value drawn.

use hlo::PrimitiveType::*;

use super::graph::{Graph, MAX_ELEMENTS, TYPES, Value, int_min, shape};

impl Graph {
    /// One random op on what exists; nothing when the op drawn does not apply.
    pub fn step(&mut self) {
        let v = self.some_value();
        // An empty array takes elementwise ops, reshapes and transposes, and the ops that
        // make a non-empty result of it (`zero-sized-hlo-elimination`'s rewrites):
        // reductions, windows over padding, pads, concatenates, a dot contracting nothing.
        // Slices, gathers and dynamic slices have no element to start from.
        if v.elements() == 0 {
            match self.rng.u8(0..10) {
                0 => self.unary(&v),
                1 => self.binary(&v),
                2 => self.reshape(&v),
                3 => self.transpose(&v),
                4 => self.reduce(&v),
                5 => self.argmax(&v),
                6 => self.concatenate(&v),
                7 => self.pad(&v),
                8 => self.reduce_window(&v),
                _ => self.dot(&v),
            }
            return;
        }
        match self.rng.u8(0..27) {
            0..=2 => self.unary(&v),
            3..=5 => self.binary(&v),
            6 => self.compare_select(&v),
            7 => self.clamp(&v),
            8 => {
                let ty = self.pick(TYPES);
                self.add(ty, v.dims.clone(), format!("convert({})", v.name));
            }
            9 => self.reshape(&v),
            10 => self.transpose(&v),
            11 => self.slice(&v),
            12 => self.reverse(&v),
            13 => self.iota(&v),
            14 => self.concatenate(&v),
            15 => self.pad(&v),
            16 => self.dynamic_slice(&v),
            17 => self.dynamic_update_slice(&v),
            18 => self.narrow_round_trip(&v),
            19 => self.reduce_window(&v),
            20 => self.dot(&v),
            21 => self.argmax(&v),
            22 => self.gather(&v),
            23 => self.scatter(&v),
            24 => self.bitcast_convert(&v),
            25 => self.complex_round_trip(&v),
            26 => self.sort(&v),
            _ => self.reduce(&v),
        }
    }

    pub fn unary(&mut self, v: &Value) {
        let op = if v.ty == Pred {
            "not"
        } else if v.ty.is_float() {
            self.pick(&[
                "negate",
                "abs",
                "exponential",
                "log",
                "sqrt",
                "rsqrt",
                "tanh",
                "logistic",
                "sine",
                "cosine",
                "floor",
                "ceil",
                "sign",
                "exponential-minus-one",
                "log-plus-one",
                "cbrt",
                "round-nearest-even",
                "round-nearest-afz",
                "tan",
                "erf",
            ])
        } else if v.ty.is_signed_int() {
            self.pick(&[
                "negate",
                "abs",
                "not",
                "popcnt",
                "count-leading-zeros",
                "sign",
            ])
        } else {
            self.pick(&["negate", "not", "popcnt", "count-leading-zeros"])
        };
        // A periodic function of a large argument turns the ulp by which a kernel may
        // legitimately differ before it (libdevice's `expf`, `div.full`) into any output:
        // its operand is clamped to a small range, as XLA's tests draw trig inputs. Large
        // arguments on exact inputs are `testdata/lit/check/trig-large-arguments.hlo`.
        let operand = match op {
            "sine" | "cosine" => self.clamped(v, "4"),
            "tan" => self.clamped(v, "1.2"),
            _ => v.clone(),
        };
        self.add(v.ty, v.dims.clone(), format!("{op}({})", operand.name));
    }

    /// `v` clamped into `[-bound, bound]`.
    fn clamped(&mut self, v: &Value, bound: &str) -> Value {
        let lo = self.splat(v.ty, &v.dims, &format!("-{bound}"));
        let hi = self.splat(v.ty, &v.dims, bound);
        let text = format!("clamp({}, {}, {})", lo.name, v.name, hi.name);
        self.add(v.ty, v.dims.clone(), text)
    }

    fn binary(&mut self, v: &Value) {
        let op = if v.ty == Pred {
            self.pick(&["and", "or", "xor"])
        } else if v.ty.is_float() {
            self.pick(&[
                "add",
                "subtract",
                "multiply",
                "divide",
                "maximum",
                "minimum",
                "power",
                "atan2",
                "remainder",
            ])
        } else {
            self.pick(&[
                "add",
                "subtract",
                "multiply",
                "divide",
                "remainder",
                "maximum",
                "minimum",
                "and",
                "or",
                "xor",
                "shift-left",
                "shift-right-logical",
                "shift-right-arithmetic",
                "power",
            ])
        };
        let w = self.operand_like(v.ty, &v.dims);
        let (mut a, b) = if self.rng.bool() {
            (v.clone(), w)
        } else {
            (w, v.clone())
        };
        if op == "power" && v.ty.is_float() {
            // A negative base has a real power at integer exponents only: an exponent one
            // rounding away from an integer (`x / x` by a 2-ulp division) turns its result
            // into NaN. That is right, and no bound can say so; the base is taken positive.
            a = self.add(a.ty, a.dims.clone(), format!("abs({})", a.name));
        }
        let text = format!("{op}({}, {})", a.name, b.name);
        self.add(v.ty, v.dims.clone(), text);
    }

    fn compare_select(&mut self, v: &Value) {
        let w = self.operand_like(v.ty, &v.dims);
        let direction = self.pick(&["EQ", "NE", "LT", "LE", "GT", "GE"]);
        let p = self.add(
            Pred,
            v.dims.clone(),
            format!("compare({}, {}), direction={direction}", v.name, w.name),
        );
        if self.rng.bool() {
            let text = format!("select({}, {}, {})", p.name, v.name, w.name);
            self.add(v.ty, v.dims.clone(), text);
        }
    }

    fn clamp(&mut self, v: &Value) {
        if v.ty == Pred {
            return;
        }
        let lo = self.literal(v.ty);
        let hi = self.literal(v.ty);
        let lo = self.splat(v.ty, &v.dims, &lo);
        let hi = self.splat(v.ty, &v.dims, &hi);
        let text = format!("clamp({}, {}, {})", lo.name, v.name, hi.name);
        self.add(v.ty, v.dims.clone(), text);
    }

    /// The same elements under other dimensions: the sizes' prime factors regrouped.
    fn reshape(&mut self, v: &Value) {
        let mut factors = Vec::new();
        for &d in &v.dims {
            let mut d = d;
            let mut p = 2;
            while d > 1 {
                while d % p == 0 {
                    factors.push(p);
                    d /= p;
                }
                p += 1;
            }
        }
        // An empty array reshapes to another empty one.
        if v.elements() == 0 {
            factors.push(0);
        }
        self.rng.shuffle(&mut factors);
        let mut dims: Vec<i64> = Vec::new();
        for f in factors {
            match dims.last_mut() {
                Some(last) if self.rng.bool() => *last *= f,
                _ => dims.push(f),
            }
        }
        if self.rng.u8(0..4) == 0 {
            dims.insert(self.rng.usize(0..=dims.len()), 1);
        }
        self.add(v.ty, dims, format!("reshape({})", v.name));
    }

    fn transpose(&mut self, v: &Value) {
        if v.dims.len() < 2 {
            return;
        }
        let mut permutation: Vec<usize> = (0..v.dims.len()).collect();
        self.rng.shuffle(&mut permutation);
        let dims = permutation.iter().map(|&p| v.dims[p]).collect();
        let list: Vec<String> = permutation.iter().map(usize::to_string).collect();
        let text = format!("transpose({}), dimensions={{{}}}", v.name, list.join(","));
        self.add(v.ty, dims, text);
    }

    fn slice(&mut self, v: &Value) {
        if v.dims.is_empty() {
            return;
        }
        let mut ranges = Vec::new();
        let mut dims = Vec::new();
        for &d in &v.dims {
            let start = self.rng.i64(0..d);
            let limit = self.rng.i64(start + 1..=d);
            let stride = self.rng.i64(1..=3);
            ranges.push(format!("[{start}:{limit}:{stride}]"));
            dims.push((limit - start + stride - 1) / stride);
        }
        let text = format!("slice({}), slice={{{}}}", v.name, ranges.join(", "));
        self.add(v.ty, dims, text);
    }

    fn reverse(&mut self, v: &Value) {
        let reversed: Vec<String> = (0..v.dims.len())
            .filter(|_| self.rng.bool())
            .map(|d| d.to_string())
            .collect();
        let text = format!("reverse({}), dimensions={{{}}}", v.name, reversed.join(","));
        self.add(v.ty, v.dims.clone(), text);
    }

    fn iota(&mut self, v: &Value) {
        if v.dims.is_empty() {
            return;
        }
        let ty = self.pick(&[S32, S64, U32, F32, F16, BF16, S8]);
        let dimension = self.rng.usize(0..v.dims.len());
        self.add(
            ty,
            v.dims.clone(),
            format!("iota(), iota_dimension={dimension}"),
        );
    }

    /// `v` and a value of its shape, along a dimension that keeps the result small.
    fn concatenate(&mut self, v: &Value) {
        if v.dims.is_empty() || v.elements() * 2 > MAX_ELEMENTS {
            return;
        }
        let w = self.operand_like(v.ty, &v.dims);
        let dimension = self.rng.usize(0..v.dims.len());
        let mut dims = v.dims.clone();
        dims[dimension] *= 2;
        let text = format!(
            "concatenate({}, {}), dimensions={{{dimension}}}",
            v.name, w.name
        );
        self.add(v.ty, dims, text);
    }

    /// Edge padding, negative (cropping) too, and interior padding.
    fn pad(&mut self, v: &Value) {
        if v.dims.is_empty() {
            return;
        }
        let mut config = Vec::new();
        let mut dims = Vec::new();
        for &d in &v.dims {
            let interior = self.rng.i64(0..=2);
            let low = self.rng.i64(-(d / 2)..=3);
            let high = self.rng.i64(-(d / 2)..=3);
            let size = low + high + d + (d - 1).max(0) * interior;
            if size < 1 {
                return;
            }
            config.push(format!("{low}_{high}_{interior}"));
            dims.push(size);
        }
        if dims.iter().product::<i64>() > MAX_ELEMENTS {
            return;
        }
        let value = self.literal(v.ty);
        let padding = self.add(v.ty, Vec::new(), format!("constant({value})"));
        let text = format!(
            "pad({}, {}), padding={}",
            v.name,
            padding.name,
            config.join("x")
        );
        self.add(v.ty, dims, text);
    }

    /// A start index per dimension: a constant or a new parameter (in range or not, signed
    /// or not: XLA clamps them).
    fn start_indices(&mut self, rank: usize) -> Vec<String> {
        let ty = self.pick(&[S32, S64, U32, S8]);
        (0..rank)
            .map(|_| {
                if self.rng.bool() {
                    let at = self.rng.i64(-3..=20);
                    let at = if ty.is_unsigned_int() { at.abs() } else { at };
                    self.add(ty, Vec::new(), format!("constant({at})")).name
                } else {
                    self.parameter(ty, Vec::new()).name
                }
            })
            .collect()
    }

    fn dynamic_slice(&mut self, v: &Value) {
        if v.dims.is_empty() || v.elements() == 0 {
            return;
        }
        let sizes: Vec<i64> = v.dims.iter().map(|&d| self.rng.i64(1..=d)).collect();
        let starts = self.start_indices(v.dims.len());
        let list: Vec<String> = sizes.iter().map(i64::to_string).collect();
        let text = format!(
            "dynamic-slice({}, {}), dynamic_slice_sizes={{{}}}",
            v.name,
            starts.join(", "),
            list.join(",")
        );
        self.add(v.ty, sizes, text);
    }

    fn dynamic_update_slice(&mut self, v: &Value) {
        if v.dims.is_empty() || v.elements() == 0 {
            return;
        }
        let sizes: Vec<i64> = v.dims.iter().map(|&d| self.rng.i64(1..=d)).collect();
        let update = self.operand_like(v.ty, &sizes);
        let starts = self.start_indices(v.dims.len());
        let text = format!(
            "dynamic-update-slice({}, {}, {})",
            v.name,
            update.name,
            starts.join(", ")
        );
        self.add(v.ty, v.dims.clone(), text);
    }

    /// A value through a narrow type and back: the f8 and f4 formats and the sub-byte
    /// integers take converts and data movement only.
    fn narrow_round_trip(&mut self, v: &Value) {
        let narrow = self.pick(&[F8E4M3FN, F8E5M2, F8E4M3, F8E3M4, F4E2M1FN, S4, U4, S2]);
        let there = self.add(narrow, v.dims.clone(), format!("convert({})", v.name));
        let moved = if !v.dims.is_empty() && self.rng.bool() {
            let text = format!("reverse({}), dimensions={{0}}", there.name);
            self.add(narrow, v.dims.clone(), text)
        } else {
            there
        };
        // Other ops do not take the narrow values: they leave the pool.
        self.values.retain(|v| v.ty != narrow);
        let back = self.pick(&[F32, F16, BF16, S32]);
        self.add(back, moved.dims.clone(), format!("convert({})", moved.name));
    }

    /// A sum, maximum or minimum over some dimensions, its init the reducer's identity.
    fn reduce(&mut self, v: &Value) {
        if v.dims.is_empty() {
            return;
        }
        let (kind, init) = self.combiner(v.ty);
        let reduced: Vec<usize> = (0..v.dims.len()).filter(|_| self.rng.bool()).collect();
        let reduced = if reduced.is_empty() {
            vec![self.rng.usize(0..v.dims.len())]
        } else {
            reduced
        };
        let dims: Vec<i64> = (0..v.dims.len())
            .filter(|d| !reduced.contains(d))
            .map(|d| v.dims[d])
            .collect();
        let reducer = self.reducer(kind, v.ty);
        let init = self.add(v.ty, Vec::new(), format!("constant({init})"));
        let list: Vec<String> = reduced.iter().map(usize::to_string).collect();
        let text = format!(
            "reduce({}, {}), dimensions={{{}}}, to_apply={reducer}",
            v.name,
            init.name,
            list.join(",")
        );
        self.add(v.ty, dims, text);
    }

    /// A window of random size, stride and padding slid over every dimension, combined
    /// as a reduce would.
    fn reduce_window(&mut self, v: &Value) {
        if v.dims.is_empty() {
            return;
        }
        let (kind, init) = self.combiner(v.ty);
        let (mut size, mut stride, mut pad, mut dims) = (vec![], vec![], vec![], vec![]);
        for &d in &v.dims {
            // Over an empty dimension the window lies on padding alone (or nowhere).
            let s = self.rng.i64(1..=d.clamp(1, 4));
            let t = self.rng.i64(1..=3);
            let (low, high) = (self.rng.i64(0..=1), self.rng.i64(0..=1));
            let padded = d + low + high;
            let out = if padded >= s { (padded - s) / t + 1 } else { 0 };
            size.push(s.to_string());
            stride.push(t.to_string());
            pad.push(format!("{low}_{high}"));
            dims.push(out);
        }
        let reducer = self.reducer(kind, v.ty);
        let init = self.add(v.ty, Vec::new(), format!("constant({init})"));
        let text = format!(
            "reduce-window({}, {}), window={{size={} stride={} pad={}}}, to_apply={reducer}",
            v.name,
            init.name,
            size.join("x"),
            stride.join("x"),
            pad.join("x")
        );
        self.add(v.ty, dims, text);
    }

    /// A matrix product of `v` (rank 2, float or 32-bit integer) with a new `[k, n]`
    /// operand; of rank 3, a batched one (`[b, m, k] x [b, k, n]`, the batch dimension
    /// first, as JAX's `einsum('bmk,bkn->bmn')`).
    fn dot(&mut self, v: &Value) {
        let batched = v.dims.len() == 3;
        if !(v.dims.len() == 2 || batched) || !(v.ty.is_float() || v.ty == S32) {
            return;
        }
        let (batch, m, k) = if batched {
            (vec![v.dims[0]], v.dims[1], v.dims[2])
        } else {
            (vec![], v.dims[0], v.dims[1])
        };
        let b: i64 = batch.iter().product();
        let n = self.pick(&[1, 3, 8, 17]);
        if b * m * n > MAX_ELEMENTS || b * m * n * k > 1 << 16 {
            return;
        }
        let w = self.operand_like(v.ty, &[batch.clone(), vec![k, n]].concat());
        let text = if batched {
            format!(
                "dot({}, {}), lhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_batch_dims={{0}}, rhs_contracting_dims={{1}}",
                v.name, w.name
            )
        } else {
            format!(
                "dot({}, {}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}",
                v.name, w.name
            )
        };
        self.add(v.ty, [batch, vec![m, n]].concat(), text);
    }

    /// The largest element of `v` along one dimension and its index, as JAX's `argmax`:
    /// a variadic reduce of `v` and an iota, whose reducer keeps the larger value and, on a
    /// tie, the smaller index (so any order of combining gives one answer); the value and
    /// the index are read back with `get-tuple-element`.
    fn argmax(&mut self, v: &Value) {
        if v.dims.is_empty() || v.ty == Pred {
            return;
        }
        let along = self.rng.usize(0..v.dims.len());
        let iota = self.add(
            S32,
            v.dims.clone(),
            format!("iota(), iota_dimension={along}"),
        );
        let dims: Vec<i64> = (0..v.dims.len())
            .filter(|&d| d != along)
            .map(|d| v.dims[d])
            .collect();
        let lowest = if v.ty.is_float() {
            "-inf".to_string()
        } else {
            int_min(v.ty)
        };
        let init = self.add(v.ty, Vec::new(), format!("constant({lowest})"));
        let zero = self.add(S32, Vec::new(), "constant(0)".to_string());
        let reducer = self.argmax_reducer(v.ty);
        let name = self.fresh("v");
        let (value_shape, index_shape) = (shape(v.ty, &dims), shape(S32, &dims));
        self.body.push(format!(
            "{name} = ({value_shape}, {index_shape}) reduce({}, {}, {}, {}), dimensions={{{along}}}, to_apply={reducer}",
            v.name, iota.name, init.name, zero.name
        ));
        self.add(
            v.ty,
            dims.clone(),
            format!("get-tuple-element({name}), index=0"),
        );
        self.add(S32, dims, format!("get-tuple-element({name}), index=1"));
    }

    /// A reduction broadcast back over `v` and combined with it, as a softmax or a norm
    /// does: `v - max(v)`, `v / sum(v)`; the reduced value now and then reshaped with its
    /// unit dimensions kept and dropped again, as JAX prints `keepdims`.
    pub fn normalize(&mut self, v: &Value) {
        if v.dims.is_empty() || v.ty == Pred {
            return;
        }
        let (kind, init) = self.combiner(v.ty);
        let rank = v.dims.len();
        let first_reduced = self.rng.usize(0..rank);
        let kept: Vec<usize> = (0..first_reduced).collect();
        let reduced: Vec<String> = (first_reduced..rank).map(|d| d.to_string()).collect();
        let reducer = self.reducer(kind, v.ty);
        let init = self.add(v.ty, Vec::new(), format!("constant({init})"));
        let dims: Vec<i64> = kept.iter().map(|&d| v.dims[d]).collect();
        let text = format!(
            "reduce({}, {}), dimensions={{{}}}, to_apply={reducer}",
            v.name,
            init.name,
            reduced.join(",")
        );
        let mut r = self.add(v.ty, dims.clone(), text);
        if self.rng.bool() {
            // JAX's keepdims: to unit dimensions, an identity broadcast, and back.
            let mut unit = dims.clone();
            unit.extend(std::iter::repeat_n(1, rank - first_reduced));
            let kept_unit = self.add(v.ty, unit.clone(), format!("reshape({})", r.name));
            let all: Vec<String> = (0..rank).map(|d| d.to_string()).collect();
            let text = format!(
                "broadcast({}), dimensions={{{}}}",
                kept_unit.name,
                all.join(",")
            );
            let same = self.add(v.ty, unit, text);
            r = self.add(v.ty, dims, format!("reshape({})", same.name));
        }
        let list: Vec<String> = kept.iter().map(usize::to_string).collect();
        let text = format!("broadcast({}), dimensions={{{}}}", r.name, list.join(","));
        let back = self.add(v.ty, v.dims.clone(), text);
        let op = if v.ty.is_float() {
            self.pick(&["subtract", "divide", "multiply", "add"])
        } else {
            self.pick(&["subtract", "add", "maximum"])
        };
        let text = format!("{op}({}, {})", v.name, back.name);
        self.add(v.ty, v.dims.clone(), text);
    }

    /// Rows of `v` (rank 2) at indices of a new parameter (the check draws indices in and
    /// out of range, which XLA clamps). In a fusion in XLA's canonical form (no collapsed
    /// dimension) and reshaped; in a program in the forms JAX lowers: `table[ids]` with 1-d
    /// or 2-d ids (the index vector implicit), and `take_along_axis` (a batching dimension,
    /// the index vector last), which the fusion pipeline normalizes.
    fn gather(&mut self, v: &Value) {
        if v.dims.len() != 2 {
            return;
        }
        let (rows, cols) = (v.dims[0], v.dims[1]);
        let n = self.pick(&[1, 3, 8, 17]);
        if n * cols > MAX_ELEMENTS {
            return;
        }
        let index_type = self.pick(&[S32, S64, U32, S8]);
        if !self.unfused {
            let ids = self.parameter(index_type, vec![n, 1]);
            let text = format!(
                "gather({}, {}), offset_dims={{1,2}}, collapsed_slice_dims={{}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,{cols}}}",
                v.name, ids.name
            );
            let gathered = self.add(v.ty, vec![n, 1, cols], text);
            self.add(v.ty, vec![n, cols], format!("reshape({})", gathered.name));
            return;
        }
        match self.rng.u8(0..3) {
            0 => {
                let ids = self.parameter(index_type, vec![n]);
                let text = format!(
                    "gather({}, {}), offset_dims={{1}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,{cols}}}",
                    v.name, ids.name
                );
                self.add(v.ty, vec![n, cols], text);
            }
            1 => {
                let m = self.pick(&[2, 3]);
                if m * n * cols > MAX_ELEMENTS {
                    return;
                }
                let ids = self.parameter(index_type, vec![m, n]);
                let text = format!(
                    "gather({}, {}), offset_dims={{2}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=2, slice_sizes={{1,{cols}}}",
                    v.name, ids.name
                );
                self.add(v.ty, vec![m, n, cols], text);
            }
            _ => {
                // `take_along_axis(v, ids, axis=1)`: row r's ids pick from row r.
                if rows * n > MAX_ELEMENTS {
                    return;
                }
                let ids = self.parameter(index_type, vec![rows, n, 1]);
                let text = format!(
                    "gather({}, {}), offset_dims={{}}, collapsed_slice_dims={{1}}, start_index_map={{1}}, operand_batching_dims={{0}}, start_indices_batching_dims={{0}}, index_vector_dim=2, slice_sizes={{1,1}}",
                    v.name, ids.name
                );
                self.add(v.ty, vec![rows, n], text);
            }
        }
    }

    /// `v` (rank 2) with rows combined with updates at indices of a new parameter (repeated
    /// and out of range too: such updates are dropped). Float rows take a maximum or a
    /// minimum, whose result does not depend on the order of the updates; integers any
    /// combiner. Programs only: a scatter roots its fusion and updates a buffer in place,
    /// which the fusion pipeline arranges.
    fn scatter(&mut self, v: &Value) {
        if !self.unfused || v.dims.len() != 2 || v.ty == Pred {
            return;
        }
        let cols = v.dims[1];
        let n = self.pick(&[1, 2, 5]);
        let ids = self.parameter(S32, vec![n, 1]);
        let updates = self.operand_like(v.ty, &[n, cols]);
        let kind = match self.combiner(v.ty) {
            ("add", _) if v.ty.is_float() => "maximum",
            (kind, _) => kind,
        };
        let reducer = self.reducer(kind, v.ty);
        let text = format!(
            "scatter({}, {}, {}), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply={reducer}",
            v.name, ids.name, updates.name
        );
        self.add(v.ty, v.dims.clone(), text);
    }

    /// `v` in order along one of its dimensions, as JAX sorts: `jnp.sort` (a comparator
    /// `LT` or `GT`, in total order for floats, as JAX writes it), `jnp.argsort` (the
    /// positions sorted along, from an iota, both read back with `get-tuple-element`), or
    /// `lax.top_k` (a `topk` of the last dimension, the largest or the smallest `k`).
    /// Programs only: a sort roots a kernel of its own, which the fusion pipeline arranges.
    fn sort(&mut self, v: &Value) {
        if !self.unfused || v.dims.is_empty() || v.ty == Pred {
            return;
        }
        let along = self.rng.usize(0..v.dims.len());
        let direction = self.pick(&["LT", "GT"]);
        let stable = self.rng.bool();
        match self.rng.u8(0..3) {
            0 => {
                let less = self.comparator(v.ty, direction, &[]);
                let text = format!(
                    "sort({}), dimensions={{{along}}}, is_stable={stable}, to_apply={less}",
                    v.name
                );
                self.add(v.ty, v.dims.clone(), text);
            }
            1 => {
                let iota = self.add(
                    S32,
                    v.dims.clone(),
                    format!("iota(), iota_dimension={along}"),
                );
                let less = self.comparator(v.ty, direction, &[S32]);
                let name = self.fresh("v");
                self.body.push(format!(
                    "{name} = ({}, {}) sort({}, {}), dimensions={{{along}}}, is_stable={stable}, to_apply={less}",
                    v.shape(),
                    iota.shape(),
                    v.name,
                    iota.name
                ));
                self.add(
                    v.ty,
                    v.dims.clone(),
                    format!("get-tuple-element({name}), index=0"),
                );
                self.add(
                    S32,
                    v.dims.clone(),
                    format!("get-tuple-element({name}), index=1"),
                );
            }
            _ => {
                let last = v.dims.len() - 1;
                let k = self.rng.i64(1..=v.dims[last]);
                let mut dims = v.dims.clone();
                dims[last] = k;
                let name = self.fresh("v");
                self.body.push(format!(
                    "{name} = ({}, {}) topk({}), k={k}, largest={}",
                    shape(v.ty, &dims),
                    shape(S32, &dims),
                    v.name,
                    direction == "GT"
                ));
                self.add(
                    v.ty,
                    dims.clone(),
                    format!("get-tuple-element({name}), index=0"),
                );
                self.add(S32, dims, format!("get-tuple-element({name}), index=1"));
            }
        }
    }

    /// `v`'s bits as another type of their width: an integer's as a float (NaNs and
    /// infinities among them), or a float parameter's as an integer. Only a parameter's:
    /// a computed float is right within a rounding bound, and its bits, compared exactly as
    /// an integer, would not be.
    fn bitcast_convert(&mut self, v: &Value) {
        let parameter = self.parameters.iter().any(|p| p.name == v.name);
        if v.ty.is_float() && !parameter {
            return;
        }
        let to = match v.ty {
            F32 => self.pick(&[S32, U32]),
            S32 | U32 => F32,
            F16 => self.pick(&[S16, U16, BF16]),
            BF16 => self.pick(&[S16, F16]),
            S16 | U16 => self.pick(&[F16, BF16]),
            F64 => self.pick(&[S64, U64]),
            S64 | U64 => F64,
            S8 => U8,
            U8 => S8,
            _ => return,
        };
        self.add(to, v.dims.clone(), format!("bitcast-convert({})", v.name));
    }

    /// `v` and another value as the parts of a complex number (c64 from f32, c128 from
    /// f64), through complex arithmetic and back to a real part, an imaginary part or a
    /// magnitude.
    fn complex_round_trip(&mut self, v: &Value) {
        let complex = match v.ty {
            F32 => C64,
            F64 => C128,
            _ => return,
        };
        let w = self.operand_like(v.ty, &v.dims);
        let dims = v.dims.clone();
        let c = self.add(
            complex,
            dims.clone(),
            format!("complex({}, {})", v.name, w.name),
        );
        let op = self.pick(&["add", "subtract", "multiply", "negate"]);
        let text = if op == "negate" {
            format!("negate({})", c.name)
        } else {
            format!("{op}({}, {})", c.name, c.name)
        };
        let d = self.add(complex, dims.clone(), text);
        // Other ops do not take complex values: they leave the pool.
        self.values.retain(|x| x.ty != complex);
        let part = self.pick(&["real", "imag", "abs"]);
        self.add(v.ty, dims, format!("{part}({})", d.name));
    }
}
