//! Affine expressions and indexing maps compiled to postfix programs.
//!
//! `xla_gpu.loop` and `xla_gpu.apply_indexing` evaluate their maps millions of times, and
//! tensors with a layout turn every index into a physical offset. Walking
//! [`indexing::AffineExpr`] trees (boxed nodes, a result `Vec` per call) would dominate; a
//! flat postfix program over a fixed stack does not. Evaluation wraps exactly as
//! [`indexing::AffineExpr::eval`] does (a test checks that they agree).

use indexing::{AffineExpr, IndexingMap, Interval};

/// The deepest evaluation stack a compiled expression may need. Sums are evaluated deeper
/// operand first, so the depth grows with the logarithm of a sum's length at most.
const MAX_DEPTH: usize = 32;

#[derive(Clone, Copy, Debug)]
enum Step {
    Const(i64),
    Dim(u32),
    Sym(u32),
    Add,
    /// The binary steps of XLA's extensions, on the top two values.
    Product,
    Max,
    Min,
    Mul(i64),
    FloorDiv(i64),
    CeilDiv(i64),
    Mod(i64),
}

/// A compiled affine expression.
#[derive(Clone, Debug)]
pub(crate) struct Affine {
    steps: Box<[Step]>,
}

impl Affine {
    /// Compiles `e`; `None` if it would need more than [`MAX_DEPTH`] stack slots.
    pub(crate) fn new(e: &AffineExpr) -> Option<Affine> {
        let mut steps = Vec::new();
        (emit(e, &mut steps) <= MAX_DEPTH).then(|| Affine {
            steps: steps.into(),
        })
    }

    /// The value at a point (`syms`: range variables, then runtime variables).
    #[inline]
    pub(crate) fn eval(&self, dims: &[i64], syms: &[i64]) -> i64 {
        let mut stack = [0i64; MAX_DEPTH];
        let mut top = 0usize;
        for step in self.steps.iter() {
            match *step {
                Step::Const(c) => {
                    stack[top] = c;
                    top += 1;
                }
                Step::Dim(i) => {
                    stack[top] = dims[i as usize];
                    top += 1;
                }
                Step::Sym(i) => {
                    stack[top] = syms[i as usize];
                    top += 1;
                }
                Step::Add => {
                    top -= 1;
                    stack[top - 1] = stack[top - 1].wrapping_add(stack[top]);
                }
                Step::Product => {
                    top -= 1;
                    stack[top - 1] = stack[top - 1].wrapping_mul(stack[top]);
                }
                Step::Max => {
                    top -= 1;
                    stack[top - 1] = stack[top - 1].max(stack[top]);
                }
                Step::Min => {
                    top -= 1;
                    stack[top - 1] = stack[top - 1].min(stack[top]);
                }
                Step::Mul(c) => stack[top - 1] = stack[top - 1].wrapping_mul(c),
                Step::FloorDiv(d) => stack[top - 1] = stack[top - 1].div_euclid(d),
                Step::CeilDiv(d) => {
                    stack[top - 1] = stack[top - 1].wrapping_neg().div_euclid(d).wrapping_neg()
                }
                Step::Mod(m) => stack[top - 1] = stack[top - 1].rem_euclid(m),
            }
        }
        stack[0]
    }
}

/// Appends the postfix steps of `e`; returns the stack depth they need.
fn emit(e: &AffineExpr, out: &mut Vec<Step>) -> usize {
    match e {
        AffineExpr::Constant(c) => {
            out.push(Step::Const(*c));
            1
        }
        AffineExpr::Dim(i) => {
            out.push(Step::Dim(*i as u32));
            1
        }
        AffineExpr::Symbol(i) => {
            out.push(Step::Sym(*i as u32));
            1
        }
        AffineExpr::Add(a, b) => binary(a, b, Step::Add, out),
        AffineExpr::Product(a, b) => binary(a, b, Step::Product, out),
        AffineExpr::Max(a, b) => binary(a, b, Step::Max, out),
        AffineExpr::Min(a, b) => binary(a, b, Step::Min, out),
        AffineExpr::Mul(a, c) => unary(a, Step::Mul(*c), out),
        AffineExpr::FloorDiv(a, d) => unary(a, Step::FloorDiv(*d), out),
        AffineExpr::CeilDiv(a, d) => unary(a, Step::CeilDiv(*d), out),
        AffineExpr::Mod(a, m) => unary(a, Step::Mod(*m), out),
    }
}

/// A commutative binary step: the deeper operand first, so that the other one needs one
/// slot more than itself.
fn binary(a: &AffineExpr, b: &AffineExpr, step: Step, out: &mut Vec<Step>) -> usize {
    let (first, second) = if depth(a) >= depth(b) { (a, b) } else { (b, a) };
    let d1 = emit(first, out);
    let d2 = emit(second, out);
    out.push(step);
    d1.max(d2 + 1)
}

fn unary(a: &AffineExpr, step: Step, out: &mut Vec<Step>) -> usize {
    let d = emit(a, out);
    out.push(step);
    d
}

/// The stack depth `e` needs (what [`emit`] returns).
fn depth(e: &AffineExpr) -> usize {
    match e {
        AffineExpr::Constant(_) | AffineExpr::Dim(_) | AffineExpr::Symbol(_) => 1,
        AffineExpr::Add(a, b)
        | AffineExpr::Product(a, b)
        | AffineExpr::Max(a, b)
        | AffineExpr::Min(a, b) => {
            let (x, y) = (depth(a), depth(b));
            x.max(y).max(x.min(y) + 1)
        }
        AffineExpr::Mul(a, _)
        | AffineExpr::FloorDiv(a, _)
        | AffineExpr::CeilDiv(a, _)
        | AffineExpr::Mod(a, _) => depth(a),
    }
}

/// A compiled indexing map: the domain (variable ranges and constraints) and the results.
#[derive(Clone, Debug)]
pub(crate) struct Map {
    pub(crate) dims: Box<[Interval]>,
    /// Range variables, then runtime variables.
    pub(crate) syms: Box<[Interval]>,
    pub(crate) range_vars: usize,
    pub(crate) results: Box<[Affine]>,
    constraints: Box<[(Affine, Interval)]>,
}

impl Map {
    /// Compiles `map`; `None` if an expression is too deep (see [`Affine::new`]).
    pub(crate) fn new(map: &IndexingMap) -> Option<Map> {
        let results = map.results.iter().map(Affine::new).collect::<Option<_>>()?;
        let constraints = map
            .constraints
            .iter()
            .map(|(e, b)| Some((Affine::new(e)?, *b)))
            .collect::<Option<_>>()?;
        Some(Map {
            dims: map.dims.iter().map(|v| v.bounds).collect(),
            syms: (0..map.num_symbols())
                .map(|i| map.symbol(i).bounds)
                .collect(),
            range_vars: map.range_vars.len(),
            results,
            constraints,
        })
    }

    /// Whether the point lies in the domain: every variable in its range, every constraint
    /// satisfied.
    pub(crate) fn contains(&self, dims: &[i64], syms: &[i64]) -> bool {
        self.dims.iter().zip(dims).all(|(r, &x)| r.contains(x))
            && self.syms.iter().zip(syms).all(|(r, &x)| r.contains(x))
            && self
                .constraints
                .iter()
                .all(|(e, r)| r.contains(e.eval(dims, syms)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexing::{cst, dim, sym};

    /// Random expressions over two dims and two symbols.
    fn random_expr(rng: &mut fastrand::Rng, depth: u32) -> AffineExpr {
        if depth == 0 || rng.u8(0..4) == 0 {
            return match rng.u8(0..3) {
                0 => cst(rng.i64(-50..50)),
                1 => dim(rng.usize(0..2)),
                _ => sym(rng.usize(0..2)),
            };
        }
        let a = random_expr(rng, depth - 1);
        let b = Box::new(random_expr(rng, depth - 1));
        match rng.u8(0..8) {
            0 => a + *b,
            1 => a * rng.i64(-7..8),
            2 => a.floor_div(rng.i64(1..9)),
            3 => a.ceil_div(rng.i64(1..9)),
            4 => AffineExpr::Product(Box::new(a), b),
            5 => AffineExpr::Max(Box::new(a), b),
            6 => AffineExpr::Min(Box::new(a), b),
            _ => a.modulo(rng.i64(1..9)),
        }
    }

    #[test]
    fn compiled_expressions_agree_with_the_tree_evaluator() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..2000 {
            let e = random_expr(&mut rng, 6);
            let compiled = Affine::new(&e).expect("shallow enough");
            for _ in 0..8 {
                let dims = [rng.i64(-100..100), rng.i64(-100..100)];
                let syms = [rng.i64(-100..100), rng.i64(-100..100)];
                assert_eq!(compiled.eval(&dims, &syms), e.eval(&dims, &syms), "{e:?}");
            }
        }
    }

    #[test]
    fn long_sums_stay_shallow() {
        let mut e = dim(0);
        for i in 0..1000 {
            e = cst(i) + e; // right-nested
        }
        let compiled = Affine::new(&e).expect("depth 2");
        assert_eq!(compiled.eval(&[1], &[]), 1 + 999 * 1000 / 2);
    }

    #[test]
    fn map_domains() {
        let text =
            "(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 7], s0 in [0, 3], d0 * 4 + s0 in [0, 29]";
        let map: IndexingMap = text.parse().unwrap();
        let compiled = Map::new(&map).unwrap();
        for d in -1..9 {
            for s in -1..5 {
                assert_eq!(
                    compiled.contains(&[d], &[s]),
                    map.contains(&[d], &[s]),
                    "{d} {s}"
                );
            }
        }
        assert_eq!(compiled.results[0].eval(&[7], &[1]), 29);
    }
}
