//! A builder with an insertion point (MLIR's `OpBuilder`), typed helpers for the standard
//! dialects, and deep cloning with a value mapping.

use crate::attrs::Attribute;
use crate::dialects::{arith, func, scf, tensor};
use crate::intern::FxHashMap;
use crate::module::{BlockId, InsertPoint, Loc, Module, OpId, OpState, RegionId, Value};
use crate::types::Type;

/// Creates ops at an insertion point; consecutive ops come out in creation order.
pub struct Builder<'m> {
    pub module: &'m mut Module,
    ip: InsertPoint,
    loc: Loc,
}

impl<'m> Builder<'m> {
    /// A builder inserting at `ip`.
    pub fn new(module: &'m mut Module, ip: InsertPoint) -> Builder<'m> {
        let mut b = Builder {
            module,
            ip,
            loc: Loc::UNKNOWN,
        };
        b.set_insertion_point(ip);
        b
    }

    /// A builder appending to `block`.
    pub fn at_end(module: &'m mut Module, block: BlockId) -> Builder<'m> {
        Builder::new(module, InsertPoint::BlockEnd(block))
    }

    /// A builder inserting before `op`.
    pub fn before(module: &'m mut Module, op: OpId) -> Builder<'m> {
        Builder::new(module, InsertPoint::Before(op))
    }

    /// Moves the insertion point. `BlockStart` and `After` are normalized to "before the next
    /// op" (or the block's end) so that a sequence of insertions keeps its order.
    pub fn set_insertion_point(&mut self, ip: InsertPoint) {
        let m = &*self.module;
        self.ip = match ip {
            InsertPoint::BlockStart(b) => match m.first_op(b) {
                Some(op) => InsertPoint::Before(op),
                None => InsertPoint::BlockEnd(b),
            },
            InsertPoint::After(op) => match m.next_op(op) {
                Some(next) => InsertPoint::Before(next),
                None => InsertPoint::BlockEnd(m.parent_block(op).expect("op in a block")),
            },
            ip => ip,
        };
    }

    pub fn insertion_point(&self) -> InsertPoint {
        self.ip
    }

    /// The location given to created ops.
    pub fn set_loc(&mut self, loc: Loc) {
        self.loc = loc;
    }

    /// Creates an op from `state` at the insertion point.
    pub fn insert(&mut self, mut state: OpState) -> OpId {
        if !state.loc.is_known() {
            state.loc = self.loc;
        }
        self.module.create_op_at(state, self.ip)
    }

    /// Creates an op with the given operands and result types.
    pub fn create(&mut self, name: &str, operands: &[Value], results: &[Type]) -> OpId {
        self.insert(OpState::new(name).operands(operands).results(results))
    }

    /// Creates a single-result op and returns its result.
    pub fn create1(&mut self, name: &str, operands: &[Value], result: Type) -> Value {
        let op = self.create(name, operands, &[result]);
        self.module.result(op, 0)
    }

    /// The block the builder inserts into.
    pub fn block(&self) -> BlockId {
        match self.ip {
            InsertPoint::BlockEnd(b) | InsertPoint::BlockStart(b) => b,
            InsertPoint::Before(op) | InsertPoint::After(op) => {
                self.module.parent_block(op).expect("op in a block")
            }
        }
    }

    // ----- arith -----

    pub fn constant(&mut self, value: Attribute) -> Value {
        arith::build_constant(self.module, self.ip, value)
    }

    pub fn index(&mut self, v: i64) -> Value {
        self.constant(Attribute::index(v))
    }

    pub fn int(&mut self, v: i128, ty: Type) -> Value {
        self.constant(Attribute::int(v, ty))
    }

    /// The integer `v` of type `ty`: a scalar constant, or a splat of a vector or tensor.
    pub fn int_like(&mut self, v: i128, ty: Type) -> Value {
        match ty.element_type() {
            Some(_) => self.constant(Attribute::dense_splat(ty, crate::Scalar::Int(v))),
            None => self.int(v, ty),
        }
    }

    /// Integer division or remainder (`arith.divsi`, `divui`, `remsi`, `remui`) defined where
    /// the hardware's is not, with XLA's results: `x / 0` is -1 (all ones), `x % 0` is `x`,
    /// and signed `MIN / -1` is `MIN` (`MIN % -1` is 0). The divisor is replaced by 1 where
    /// the instruction would trap, then the special results are selected: XLA's
    /// `SafeIntegerArithmetic` form, which the elemental emitter writes directly. Scalars,
    /// vectors and tensors alike (`index` counts as 64 bits, as it is lowered).
    pub fn guarded_division(&mut self, name: &str, x: Value, y: Value) -> Value {
        use crate::dialects::arith::{ANDI, DIVSI, DIVUI, ORI, REMSI, REMUI};
        let ty = self.module.value_type(x);
        let width = ty.element_type_or_self().int_width().unwrap_or(64);
        let remainder = name == REMSI || name == REMUI;
        let signed = name == DIVSI || name == REMSI;
        debug_assert!([DIVSI, DIVUI, REMSI, REMUI].contains(&name));
        if signed && width == 1 {
            return self.guarded_bit_division(x, y, remainder);
        }
        let zero = self.int_like(0, ty);
        let one = self.int_like(1, ty);
        let minus_one = (signed || !remainder).then(|| self.int_like(-1, ty));
        let min = signed.then(|| self.int_like(-(1i128 << (width - 1)), ty));
        let divisor_zero = self.cmpi("eq", y, zero);
        let mut overflow = None;
        let trap = match (min, minus_one) {
            (Some(min), Some(minus_one)) => {
                let x_min = self.cmpi("eq", x, min);
                let y_minus_one = self.cmpi("eq", y, minus_one);
                let o = self.binary(ANDI, x_min, y_minus_one);
                overflow = Some((o, if remainder { zero } else { min }));
                self.binary(ORI, divisor_zero, o)
            }
            _ => divisor_zero,
        };
        let divisor = self.select(trap, one, y);
        let mut q = self.binary(name, x, divisor);
        if let Some((o, on_overflow)) = overflow {
            q = self.select(o, on_overflow, q);
        }
        let on_zero = if remainder {
            x
        } else {
            minus_one.expect("made for division")
        };
        self.select(divisor_zero, on_zero, q)
    }

    /// [`Self::guarded_division`] of signed 1-bit integers, where no divisor is safe: the
    /// only non-zero one is -1 (`true`), by which `MIN` (also `true`) overflows. So `x / y`
    /// is `x` (`0 / -1 = 0`, `MIN / -1 = MIN`) and `x % y` is 0, for `y = 0` -1 and `x`.
    fn guarded_bit_division(&mut self, x: Value, y: Value, remainder: bool) -> Value {
        let ty = self.module.value_type(x);
        let zero = self.int_like(0, ty);
        let divisor_zero = self.cmpi("eq", y, zero);
        let (on_zero, otherwise) = if remainder {
            (x, zero)
        } else {
            (self.int_like(-1, ty), x)
        };
        self.select(divisor_zero, on_zero, otherwise)
    }

    pub fn float(&mut self, v: f64, ty: Type) -> Value {
        self.constant(Attribute::float(v, ty))
    }

    /// A binary op with the operands' type (`arith.addf`, `arith.muli`, `math.powf`, ...).
    pub fn binary(&mut self, name: &str, lhs: Value, rhs: Value) -> Value {
        arith::build_binary(self.module, self.ip, name, lhs, rhs)
    }

    /// A unary op with the operand's type (`math.tanh`, ...).
    pub fn unary(&mut self, name: &str, v: Value) -> Value {
        let ty = self.module.value_type(v);
        self.create1(name, &[v], ty)
    }

    pub fn addf(&mut self, a: Value, b: Value) -> Value {
        self.binary(crate::dialects::arith::ADDF, a, b)
    }

    pub fn mulf(&mut self, a: Value, b: Value) -> Value {
        self.binary(crate::dialects::arith::MULF, a, b)
    }

    pub fn addi(&mut self, a: Value, b: Value) -> Value {
        self.binary(crate::dialects::arith::ADDI, a, b)
    }

    pub fn muli(&mut self, a: Value, b: Value) -> Value {
        self.binary(crate::dialects::arith::MULI, a, b)
    }

    pub fn cmpi(&mut self, predicate: &str, a: Value, b: Value) -> Value {
        arith::build_cmpi(self.module, self.ip, predicate, a, b)
    }

    pub fn select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        let ty = self.module.value_type(a);
        self.create1(crate::dialects::arith::SELECT, &[cond, a, b], ty)
    }

    /// A cast (`arith.extf`, `arith.index_cast`, ...).
    pub fn cast(&mut self, name: &str, v: Value, to: Type) -> Value {
        arith::build_cast(self.module, self.ip, name, v, to)
    }

    // ----- tensor -----

    pub fn extract(&mut self, t: Value, indices: &[Value]) -> Value {
        tensor::build_extract(self.module, self.ip, t, indices)
    }

    pub fn insert_element(&mut self, v: Value, t: Value, indices: &[Value]) -> Value {
        tensor::build_insert(self.module, self.ip, v, t, indices)
    }

    pub fn empty(&mut self, ty: Type) -> Value {
        tensor::build_empty(self.module, self.ip, ty)
    }

    // ----- func -----

    /// `func.func @name` at the insertion point; `body` fills the entry block (it must end
    /// with a `func.return`).
    pub fn func(
        &mut self,
        name: &str,
        inputs: &[Type],
        results: &[Type],
        body: impl FnOnce(&mut Builder<'_>, &[Value]),
    ) -> OpId {
        let (op, entry) = func::build_func(self.module, name, inputs, results);
        self.module.insert_op(op, self.ip);
        let args = self.module.block_args(entry).to_vec();
        let mut inner = Builder::at_end(self.module, entry);
        inner.loc = self.loc;
        body(&mut inner, &args);
        op
    }

    pub fn ret(&mut self, values: &[Value]) -> OpId {
        func::build_return(self.module, self.ip, values)
    }

    pub fn call(&mut self, callee: &str, args: &[Value], results: &[Type]) -> OpId {
        func::build_call(self.module, self.ip, callee, args, results)
    }

    // ----- scf -----

    /// `scf.for`; `body` gets the induction variable and iter args and returns the values to
    /// yield.
    pub fn scf_for(
        &mut self,
        lb: Value,
        ub: Value,
        step: Value,
        inits: &[Value],
        body: impl FnOnce(&mut Builder<'_>, Value, &[Value]) -> Vec<Value>,
    ) -> OpId {
        let (op, block) = scf::build_for(self.module, self.ip, lb, ub, step, inits);
        let args = self.module.block_args(block).to_vec();
        let mut inner = Builder::at_end(self.module, block);
        inner.loc = self.loc;
        let yielded = body(&mut inner, args[0], &args[1..]);
        scf::build_yield(self.module, block, &yielded);
        op
    }

    /// `scf.if`; each branch returns the values to yield. Without `else_body`, the op has no
    /// else block (and must have no results).
    #[allow(clippy::type_complexity)]
    pub fn scf_if(
        &mut self,
        cond: Value,
        results: &[Type],
        then_body: impl FnOnce(&mut Builder<'_>) -> Vec<Value>,
        else_body: Option<Box<dyn FnOnce(&mut Builder<'_>) -> Vec<Value> + '_>>,
    ) -> OpId {
        let (op, then_block, else_block) =
            scf::build_if(self.module, self.ip, cond, results, else_body.is_some());
        let mut inner = Builder::at_end(self.module, then_block);
        let yielded = then_body(&mut inner);
        scf::build_yield(self.module, then_block, &yielded);
        if let (Some(block), Some(f)) = (else_block, else_body) {
            let mut inner = Builder::at_end(self.module, block);
            let yielded = f(&mut inner);
            scf::build_yield(self.module, block, &yielded);
        }
        op
    }
}

impl Module {
    /// Deep-copies `op` (with its regions) into a new detached op. Operands found in `mapping`
    /// are replaced; the clone's results and block arguments are added to `mapping`.
    pub fn clone_op(&mut self, op: OpId, mapping: &mut FxHashMap<Value, Value>) -> OpId {
        let regions: Vec<RegionId> = self.regions(op).to_vec();
        let mut new_regions = Vec::with_capacity(regions.len());
        for r in regions {
            let nr = self.create_region();
            self.clone_region_into(r, nr, mapping);
            new_regions.push(nr);
        }
        let state = OpState {
            name: self.name(op),
            operands: self
                .operands(op)
                .map(|v| *mapping.get(&v).unwrap_or(&v))
                .collect(),
            result_types: self.result_types(op),
            props: self.props(op).to_vec(),
            attrs: self.attrs(op).to_vec(),
            regions: new_regions,
            successors: self.successors(op).to_vec(),
            loc: self.loc(op),
            result_name: None,
        };
        let new = self.create_op(state);
        for i in 0..self.num_results(op) {
            let (old_v, new_v) = (self.result(op, i), self.result(new, i));
            let name = self.value_name(old_v).map(str::to_owned);
            self.set_value_name(new_v, name.as_deref());
            mapping.insert(old_v, new_v);
        }
        new
    }

    /// Clones the blocks of `from` to the end of `to` (successors remapped to the clones).
    pub fn clone_region_into(
        &mut self,
        from: RegionId,
        to: RegionId,
        mapping: &mut FxHashMap<Value, Value>,
    ) {
        let blocks = self.region_blocks(from).to_vec();
        let mut block_map = FxHashMap::default();
        for &b in &blocks {
            let types = self.block_arg_types(b);
            let nb = self.create_block(&types);
            for i in 0..types.len() {
                let (old_a, new_a) = (self.block_arg(b, i), self.block_arg(nb, i));
                let name = self.value_name(old_a).map(str::to_owned);
                self.set_value_name(new_a, name.as_deref());
                mapping.insert(old_a, new_a);
            }
            self.append_block(to, nb);
            block_map.insert(b, nb);
        }
        for &b in &blocks {
            let ops: Vec<OpId> = self.block_ops(b).collect();
            for op in ops {
                let new = self.clone_op(op, mapping);
                for i in 0..self.successors(new).len() {
                    let s = self.successors(new)[i];
                    if let Some(&ns) = block_map.get(&s) {
                        self.set_successor(new, i, ns);
                    }
                }
                self.insert_op(new, InsertPoint::BlockEnd(block_map[&b]));
            }
        }
    }
}
