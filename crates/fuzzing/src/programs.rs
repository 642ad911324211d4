//! Random valid HLO fusions, for differential fuzzing of the whole compiler: each seed gives
//! one module (an ENTRY that calls one fusion) whose fusion is a random graph of the ops the
//! emitters take: elementwise math of every type class, compare, select, clamp, convert,
//! broadcast, reshape, transpose, slice, reverse, iota, concatenate and reduce, over random
//! shapes (1, odd, prime sizes) with shared subexpressions and several outputs. Sizes stay
//! small (at most [`MAX_ELEMENTS`] per array) so that `--check` interprets every stage fast.
//!
//! The same seed gives the same text on every machine (`fastrand` with the seed; no
//! hashing of addresses), so a failure is replayed by its seed alone.

use std::fmt::Write;

use hlo::PrimitiveType::{self, *};

/// The most elements of one array.
pub const MAX_ELEMENTS: i64 = 2048;

/// Element types the generator draws from.
const TYPES: &[PrimitiveType] = &[
    F32, F32, F32, F16, BF16, F64, S8, S16, S32, S32, S64, U8, U16, U32, U64, Pred,
];

/// Dimension sizes: units, odd and prime sizes, powers of two.
const SIZES: &[i64] = &[1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 32, 64, 128];

/// A value of the fusion: its name, element type and dimensions.
#[derive(Clone, Debug)]
struct Value {
    name: String,
    ty: PrimitiveType,
    dims: Vec<i64>,
}

impl Value {
    fn shape(&self) -> String {
        shape(self.ty, &self.dims)
    }

    fn elements(&self) -> i64 {
        self.dims.iter().product()
    }
}

fn shape(ty: PrimitiveType, dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("{ty}[{}]", dims.join(","))
}

/// The fusion being built.
struct Fusion {
    rng: fastrand::Rng,
    /// Instruction lines of the fusion computation, in order.
    body: Vec<String>,
    values: Vec<Value>,
    parameters: Vec<Value>,
    /// Each parameter's layout (`{1,0}`), or nothing for the default.
    layouts: Vec<String>,
    /// Scalar computations the reduces call, by name, with their text.
    reducers: Vec<(String, String)>,
    next: usize,
}

/// The module of seed `seed`: HLO text that parses and verifies.
pub fn fusion(seed: u64) -> String {
    let mut f = Fusion {
        rng: fastrand::Rng::with_seed(seed),
        body: Vec::new(),
        values: Vec::new(),
        parameters: Vec::new(),
        layouts: Vec::new(),
        reducers: Vec::new(),
        next: 0,
    };
    let dims = f.random_dims();
    for _ in 0..f.rng.usize(1..=3) {
        let ty = f.pick(TYPES);
        f.parameter(ty, dims.clone());
    }
    for _ in 0..f.rng.usize(2..=12) {
        f.step();
    }
    f.module(seed)
}

impl Fusion {
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.rng.usize(0..items.len())]
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// Dimensions of rank 0 to 3 with at most [`MAX_ELEMENTS`] elements.
    fn random_dims(&mut self) -> Vec<i64> {
        let rank = self.rng.usize(0..=3);
        let mut dims = Vec::new();
        for _ in 0..rank {
            let size = self.pick(SIZES);
            if dims.iter().product::<i64>() * size <= MAX_ELEMENTS {
                dims.push(size);
            }
        }
        dims
    }

    fn parameter(&mut self, ty: PrimitiveType, dims: Vec<i64>) -> Value {
        let index = self.parameters.len();
        let value = Value {
            name: format!("p{index}"),
            ty,
            dims,
        };
        let layout = self.layout(value.dims.len());
        self.body.push(format!(
            "{} = {}{layout} parameter({index})",
            value.name,
            value.shape()
        ));
        self.layouts.push(layout);
        self.parameters.push(value.clone());
        self.values.push(value.clone());
        value
    }

    /// A parameter's layout: mostly none (row major), sometimes another order of the
    /// dimensions (`{0,1}`): the kernel then reads it transposed in memory.
    fn layout(&mut self, rank: usize) -> String {
        if rank < 2 || self.rng.u8(0..4) != 0 {
            return String::new();
        }
        let mut order: Vec<usize> = (0..rank).collect();
        self.rng.shuffle(&mut order);
        let list: Vec<String> = order.iter().map(usize::to_string).collect();
        format!("{{{}}}", list.join(","))
    }

    /// Adds `name = shape op` and returns the value.
    fn add(&mut self, ty: PrimitiveType, dims: Vec<i64>, op: String) -> Value {
        let name = self.fresh("v");
        let value = Value { name, ty, dims };
        self.body
            .push(format!("{} = {} {op}", value.name, value.shape()));
        self.values.push(value.clone());
        value
    }

    /// A value already built, recent ones more often (chains get deep).
    fn some_value(&mut self) -> Value {
        let n = self.values.len();
        let k = if self.rng.bool() {
            n - 1 - self.rng.usize(0..n.min(3))
        } else {
            self.rng.usize(0..n)
        };
        self.values[k].clone()
    }

    /// A value of `ty` and `dims`: an existing one, or a broadcast constant, or a convert.
    fn operand_like(&mut self, ty: PrimitiveType, dims: &[i64]) -> Value {
        let same: Vec<Value> = self
            .values
            .iter()
            .filter(|v| v.ty == ty && v.dims == dims)
            .cloned()
            .collect();
        if !same.is_empty() && self.rng.u8(0..3) > 0 {
            return same[self.rng.usize(0..same.len())].clone();
        }
        let other: Vec<Value> = self
            .values
            .iter()
            .filter(|v| v.dims == dims && v.ty != ty)
            .cloned()
            .collect();
        if !other.is_empty() && self.rng.bool() {
            let v = other[self.rng.usize(0..other.len())].clone();
            return self.add(ty, dims.to_vec(), format!("convert({})", v.name));
        }
        let literal = self.literal(ty);
        self.splat(ty, dims, &literal)
    }

    /// `literal` broadcast to `dims`.
    fn splat(&mut self, ty: PrimitiveType, dims: &[i64], literal: &str) -> Value {
        let scalar = self.add(ty, Vec::new(), format!("constant({literal})"));
        if dims.is_empty() {
            return scalar;
        }
        self.add(
            ty,
            dims.to_vec(),
            format!("broadcast({}), dimensions={{}}", scalar.name),
        )
    }

    /// A random constant of `ty`, as HLO writes it.
    fn literal(&mut self, ty: PrimitiveType) -> String {
        if ty == Pred {
            return self.rng.bool().to_string();
        }
        if ty.is_float() {
            return self
                .pick(&["0", "1", "-1", "0.5", "2", "-3.25", "1e-3", "100"])
                .to_string();
        }
        let signed = ty.is_signed_int();
        let max = if ty.bit_width() >= 32 { 1000 } else { 100 };
        let v = self.rng.i64(if signed { -max } else { 0 }..=max);
        v.to_string()
    }

    /// One random op on what exists; nothing when the op drawn does not apply.
    fn step(&mut self) {
        let v = self.some_value();
        match self.rng.u8(0..22) {
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
            _ => self.reduce(&v),
        }
    }

    fn unary(&mut self, v: &Value) {
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
        self.add(v.ty, v.dims.clone(), format!("{op}({})", v.name));
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
            ])
        };
        let w = self.operand_like(v.ty, &v.dims);
        let (a, b) = if self.rng.bool() { (v, &w) } else { (&w, v) };
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
            let size = low + high + d + (d - 1) * interior;
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
        if v.dims.is_empty() {
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
        if v.dims.is_empty() {
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
            let s = self.rng.i64(1..=d.min(4));
            let t = self.rng.i64(1..=3);
            let (low, high) = (self.rng.i64(0..=1), self.rng.i64(0..=1));
            let out = (d + low + high - s) / t + 1;
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
    /// operand.
    fn dot(&mut self, v: &Value) {
        if v.dims.len() != 2 || !(v.ty.is_float() || v.ty == S32) {
            return;
        }
        let (m, k) = (v.dims[0], v.dims[1]);
        let n = self.pick(&[1, 3, 8, 17]);
        if m * n > MAX_ELEMENTS || m * n * k > 1 << 16 {
            return;
        }
        let w = self.operand_like(v.ty, &[k, n]);
        let text = format!(
            "dot({}, {}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}",
            v.name, w.name
        );
        self.add(v.ty, vec![m, n], text);
    }

    /// A combiner for values of `ty` (a sum, maximum or minimum; `or` for pred) and its
    /// identity, the init value XLA's emitters need.
    fn combiner(&mut self, ty: PrimitiveType) -> (&'static str, String) {
        match ty {
            Pred => ("or", "false".to_string()),
            ty if ty.is_float() => match self.rng.u8(0..3) {
                0 => ("maximum", "-inf".to_string()),
                1 => ("minimum", "inf".to_string()),
                _ => ("add", "0".to_string()),
            },
            ty => match self.rng.u8(0..3) {
                0 => ("maximum", int_min(ty)),
                1 => ("minimum", int_max(ty)),
                _ => ("add", "0".to_string()),
            },
        }
    }

    /// The scalar computation `kind(a, b)` of `ty`, defined once.
    fn reducer(&mut self, kind: &str, ty: PrimitiveType) -> String {
        let name = format!("{kind}_{ty}");
        if !self.reducers.iter().any(|(n, _)| *n == name) {
            let text = format!(
                "{name} {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT r = {ty}[] {kind}(a, b)\n}}\n"
            );
            self.reducers.push((name.clone(), text));
        }
        name
    }

    /// The module: the reducers, the fusion (its ROOT one value or a tuple of up to three)
    /// and an ENTRY that calls it.
    fn module(mut self, seed: u64) -> String {
        let last = self.values.last().expect("a parameter at least").clone();
        let mut outputs = vec![last.clone()];
        for _ in 0..self.rng.usize(0..=2) {
            // XLA fuses outputs of one shape (a loop fusion writes them at one index);
            // now and then another shape, which the emitters must refuse or take.
            let v = self.some_value();
            let fits = v.dims == last.dims || self.rng.u8(0..10) == 0;
            if fits && !outputs.iter().any(|o| o.name == v.name) {
                outputs.push(v);
            }
        }
        let mut text = format!("HloModule fuzz_{seed}\n\n");
        for (_, reducer) in &self.reducers {
            text.push_str(reducer);
            text.push('\n');
        }
        text.push_str("fused_computation {\n");
        for line in &self.body {
            let _ = writeln!(text, "  {line}");
        }
        let root_shape = if outputs.len() == 1 {
            outputs[0].shape()
        } else {
            let shapes: Vec<String> = outputs.iter().map(Value::shape).collect();
            let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
            let tuple = format!("({})", shapes.join(", "));
            let _ = writeln!(text, "  ROOT out = {tuple} tuple({})", names.join(", "));
            tuple
        };
        if outputs.len() == 1 {
            // The last line becomes the ROOT (a parameter cannot be one: it is copied).
            let root = &outputs[0];
            if self.parameters.iter().any(|p| p.name == root.name) {
                let _ = writeln!(text, "  ROOT out = {root_shape} copy({})", root.name);
            } else {
                let line = text.rfind(&format!("  {} = ", root.name)).expect("defined");
                text.insert_str(line + 2, "ROOT ");
            }
        }
        text.push_str("}\n\nENTRY main {\n");
        let mut arguments = Vec::new();
        for (p, layout) in self.parameters.iter().zip(&self.layouts) {
            let _ = writeln!(
                text,
                "  {} = {}{layout} parameter({})",
                p.name,
                p.shape(),
                arguments.len()
            );
            arguments.push(p.name.clone());
        }
        let _ = writeln!(
            text,
            "  ROOT fusion = {root_shape} fusion({}), kind=kLoop, calls=fused_computation\n}}",
            arguments.join(", ")
        );
        text
    }
}

fn int_min(ty: PrimitiveType) -> String {
    if ty.is_unsigned_int() {
        return "0".to_string();
    }
    let bits = ty.bit_width();
    format!("-{}", 1u128 << (bits - 1))
}

fn int_max(ty: PrimitiveType) -> String {
    let bits = ty.bit_width();
    let max = if ty.is_unsigned_int() {
        (1u128 << bits) - 1
    } else {
        (1u128 << (bits - 1)) - 1
    };
    max.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module of the first seeds parses and verifies, and a seed gives the same text
    /// twice.
    #[test]
    fn generated_fusions_are_valid_and_deterministic() {
        for seed in 0..500 {
            let text = fusion(seed);
            assert_eq!(text, fusion(seed));
            if let Err(e) = hlo::load("fuzz.hlo", text.as_bytes()) {
                panic!("seed {seed}:\n{text}\n{e}");
            }
        }
    }
}
