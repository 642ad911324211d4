//! The graph builder: values, parameters, constants and the scalar reducers, drawn from one
//! seeded RNG; the ops themselves are in `steps.rs`.

use std::fmt::Write;

use hlo::PrimitiveType::{self, *};

/// The most elements of one array.
pub const MAX_ELEMENTS: i64 = 2048;

/// Element types the generator draws from.
pub(super) const TYPES: &[PrimitiveType] = &[
    F32, F32, F32, F16, BF16, F64, S8, S16, S32, S32, S64, U8, U16, U32, U64, Pred,
];

/// Dimension sizes: units, odd and prime sizes, powers of two.
const SIZES: &[i64] = &[1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 32, 64, 128];

/// A value of the fusion: its name, element type and dimensions.
#[derive(Clone, Debug)]
pub(super) struct Value {
    pub name: String,
    pub ty: PrimitiveType,
    pub dims: Vec<i64>,
}

impl Value {
    pub fn shape(&self) -> String {
        shape(self.ty, &self.dims)
    }

    pub fn elements(&self) -> i64 {
        self.dims.iter().product()
    }
}

pub(super) fn shape(ty: PrimitiveType, dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("{ty}[{}]", dims.join(","))
}
/// The graph being built: the body of a fusion, or of a program's computations.
pub(super) struct Graph {
    pub rng: fastrand::Rng,
    /// Instruction lines of the fusion computation, in order.
    pub body: Vec<String>,
    pub values: Vec<Value>,
    pub parameters: Vec<Value>,
    /// Each parameter's layout (`{1,0}`), or nothing for the default.
    pub layouts: Vec<String>,
    /// Scalar computations the reduces call, by name, with their text.
    pub reducers: Vec<(String, String)>,
    /// Whether the graph is an unfused program (the fusion pipeline runs on it) rather
    /// than a fusion: gathers are then written as JAX writes them, not in XLA's canonical
    /// form, and scatters are drawn (the fusion pipeline gives each a fusion it roots).
    pub unfused: bool,
    next: usize,
}

impl Graph {
    /// An empty graph drawing from `seed`.
    pub fn new(seed: u64) -> Graph {
        Graph {
            rng: fastrand::Rng::with_seed(seed),
            body: Vec::new(),
            values: Vec::new(),
            parameters: Vec::new(),
            layouts: Vec::new(),
            reducers: Vec::new(),
            unfused: false,
            next: 0,
        }
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.rng.usize(0..items.len())]
    }

    pub fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// Dimensions of rank 0 to 3 with at most [`MAX_ELEMENTS`] elements; one dimension in
    /// 256 has size 0 (an empty array: a constant after `zero-sized-hlo-elimination`, no
    /// kernel's, as in XLA; the reference and the generator's other steps must take it).
    pub fn random_dims(&mut self) -> Vec<i64> {
        let rank = self.rng.usize(0..=3);
        let mut dims = Vec::new();
        for _ in 0..rank {
            let size = if self.rng.u8(..) == 0 {
                0
            } else {
                self.pick(SIZES)
            };
            if dims.iter().product::<i64>() * size <= MAX_ELEMENTS {
                dims.push(size);
            }
        }
        dims
    }

    pub fn parameter(&mut self, ty: PrimitiveType, dims: Vec<i64>) -> Value {
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
    /// dimensions (`{0,1}`: the kernel then reads it transposed in memory), and now and
    /// then tiled as well (`{1,0:T(2,4)}`: the minor dimensions cut into tiles, padded to
    /// whole tiles).
    fn layout(&mut self, rank: usize) -> String {
        let tiled = rank >= 1 && self.rng.u8(0..6) == 0;
        if !tiled && (rank < 2 || self.rng.u8(0..4) != 0) {
            return String::new();
        }
        let mut order: Vec<usize> = (0..rank).collect();
        if self.rng.bool() {
            self.rng.shuffle(&mut order);
        }
        let list: Vec<String> = order.iter().map(usize::to_string).collect();
        let tile = if tiled {
            let tile_rank = self.rng.usize(1..=rank.min(2));
            let sizes: Vec<String> = (0..tile_rank)
                .map(|_| self.pick(&[1, 2, 4, 8]).to_string())
                .collect();
            format!(":T({})", sizes.join(","))
        } else {
            String::new()
        };
        format!("{{{}{tile}}}", list.join(","))
    }

    /// Adds `name = shape op` and returns the value.
    pub fn add(&mut self, ty: PrimitiveType, dims: Vec<i64>, op: String) -> Value {
        let name = self.fresh("v");
        let value = Value { name, ty, dims };
        self.body
            .push(format!("{} = {} {op}", value.name, value.shape()));
        self.values.push(value.clone());
        value
    }

    /// A value already built, recent ones more often (chains get deep).
    pub fn some_value(&mut self) -> Value {
        let n = self.values.len();
        let k = if self.rng.bool() {
            n - 1 - self.rng.usize(0..n.min(3))
        } else {
            self.rng.usize(0..n)
        };
        self.values[k].clone()
    }

    /// A value of `ty` and `dims`: an existing one, or a broadcast constant, or a convert.
    pub fn operand_like(&mut self, ty: PrimitiveType, dims: &[i64]) -> Value {
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
    pub fn splat(&mut self, ty: PrimitiveType, dims: &[i64], literal: &str) -> Value {
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
    pub fn literal(&mut self, ty: PrimitiveType) -> String {
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

    /// A combiner for values of `ty` (a sum, maximum or minimum; `or` for pred) and its
    /// identity, the init value XLA's emitters need.
    pub fn combiner(&mut self, ty: PrimitiveType) -> (&'static str, String) {
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
    pub fn reducer(&mut self, kind: &str, ty: PrimitiveType) -> String {
        self.define_once(format!("{kind}_{ty}"), |name| {
            format!(
                "{name} {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT r = {ty}[] {kind}(a, b)\n}}\n"
            )
        })
    }

    /// The reducer of an argmax over values of `ty` with s32 indices, defined once: the
    /// larger value, NaN above every other (as JAX's argmax), and on a tie (two NaNs
    /// included) the smaller index. A total order, so any order of combining gives one
    /// answer; without the NaN terms a NaN made the result depend on that order (the
    /// generator's bitcast-converts make NaNs; program fuzzer, seeds 3563 and 4235).
    pub fn argmax_reducer(&mut self, ty: PrimitiveType) -> String {
        self.define_once(format!("argmax_{ty}"), |name| {
            format!(
                "{name} {{\n  a = {ty}[] parameter(0)\n  ai = s32[] parameter(1)\n  b = {ty}[] parameter(2)\n  bi = s32[] parameter(3)\n  gt = pred[] compare(a, b), direction=GT\n  eq = pred[] compare(a, b), direction=EQ\n  a_nan = pred[] compare(a, a), direction=NE\n  b_nan = pred[] compare(b, b), direction=NE\n  b_number = pred[] not(b_nan)\n  above = pred[] or(gt, a_nan)\n  larger = pred[] and(above, b_number)\n  both_nan = pred[] and(a_nan, b_nan)\n  same = pred[] or(eq, both_nan)\n  first = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(same, first)\n  pick = pred[] or(larger, tie)\n  v = {ty}[] select(pick, a, b)\n  i = s32[] select(pick, ai, bi)\n  ROOT r = ({ty}[], s32[]) tuple(v, i)\n}}\n"
            )
        })
    }

    /// A sort's comparator over keys of `ty` (and values of `others`, which it reads not),
    /// defined once: `compare(a, b)` in `direction`, in total order for floats.
    pub fn comparator(
        &mut self,
        ty: PrimitiveType,
        direction: &str,
        others: &[PrimitiveType],
    ) -> String {
        let suffix: String = others.iter().map(|t| format!("_{t}")).collect();
        self.define_once(
            format!("{}_{ty}{suffix}", direction.to_lowercase()),
            |name| {
                let mut text =
                    format!("{name} {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n");
                for (i, t) in others.iter().enumerate() {
                    let _ = writeln!(
                        text,
                        "  x{i} = {t}[] parameter({})\n  y{i} = {t}[] parameter({})",
                        2 + 2 * i,
                        3 + 2 * i
                    );
                }
                let order = if ty.is_float() {
                    ", type=TOTALORDER"
                } else {
                    ""
                };
                let _ = write!(
                    text,
                    "  ROOT r = pred[] compare(a, b), direction={direction}{order}\n}}\n"
                );
                text
            },
        )
    }

    /// The computation `name`, its text made by `text` the first time it is asked for.
    fn define_once(&mut self, name: String, text: impl FnOnce(&str) -> String) -> String {
        if !self.reducers.iter().any(|(n, _)| *n == name) {
            let text = text(&name);
            self.reducers.push((name.clone(), text));
        }
        name
    }
}

pub(super) fn int_min(ty: PrimitiveType) -> String {
    if ty.is_unsigned_int() {
        return "0".to_string();
    }
    let bits = ty.bit_width();
    format!("-{}", 1u128 << (bits - 1))
}

pub(super) fn int_max(ty: PrimitiveType) -> String {
    let bits = ty.bit_width();
    let max = if ty.is_unsigned_int() {
        (1u128 << bits) - 1
    } else {
        (1u128 << (bits - 1)) - 1
    };
    max.to_string()
}
