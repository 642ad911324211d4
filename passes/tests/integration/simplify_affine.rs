//! `simplify-affine` computes what the maps compute. Seeded random maps (dimensions and
//! symbols with random, sometimes negative ranges; sums, products, floordiv, ceildiv, mod
//! and XLA's products of two expressions, max and min)
//! are applied in a function whose operands are arguments (some with an `xla.range` narrower
//! than the map's domain) or constants. After the pass, a small interpreter of the emitted
//! `arith` runs the function at random points of the (narrowed) domain: the results must
//! equal `IndexingMap::eval`, every op marked `nsw` must stay within `i32` (what the pass
//! promises for any index width), and no `xla_gpu` op may be left. The output passes our
//! verifier and, for a sample, MLIR 22's.

use crate::common;
use indexing::{AffineExpr, IndexingMap, Interval, Variable};
use ir::dialects::arith;
use ir::dialects::func;
use ir::dialects::xla_gpu;
use ir::{Attribute, Builder, Ident, Module, NamedAttr, OpId, Type, Value};
use passes::{Pass, SimplifyAffine};
use std::collections::HashMap;

const MAPS: usize = 600;
const POINTS: usize = 40;
/// Maps also checked by real MLIR (each check builds a context; keep it a sample).
const MLIR_SAMPLE: usize = 25;

/// How one map variable is fed: its range in the map, and either a constant operand or an
/// argument with the range the function promises for it.
struct Operand {
    bounds: Interval,
    constant: Option<i64>,
    arg_range: Option<Interval>,
}

impl Operand {
    /// The values the operand can take.
    fn values(&self) -> Interval {
        match (self.constant, self.arg_range) {
            (Some(c), _) => Interval::new(c, c),
            (None, Some(r)) => r,
            (None, None) => self.bounds,
        }
    }
}

/// A variable's range: mostly small, sometimes negative, sometimes beyond `i32`.
fn random_interval(rng: &mut fastrand::Rng) -> Interval {
    let lo = match rng.u8(..8) {
        0 | 1 => rng.i64(-40..0),
        2 => rng.i64(-(1 << 34)..0),
        _ => rng.i64(0..8),
    };
    let size = match rng.u8(..8) {
        0 => rng.i64(1..3),
        1 => rng.i64(1000..100_000),
        2 => rng.i64(1 << 30..1 << 34),
        _ => rng.i64(1..64),
    };
    Interval::new(lo, lo + size - 1)
}

fn random_expr(rng: &mut fastrand::Rng, dims: usize, symbols: usize, depth: u32) -> AffineExpr {
    if depth == 0 || rng.u8(..4) == 0 {
        return match rng.usize(..dims + symbols + 1) {
            i if i < dims => AffineExpr::Dim(i),
            i if i < dims + symbols => AffineExpr::Symbol(i - dims),
            _ => AffineExpr::Constant(rng.i64(-20..20)),
        };
    }
    let sub = |rng: &mut fastrand::Rng| random_expr(rng, dims, symbols, depth - 1);
    let pair = |rng: &mut fastrand::Rng| (Box::new(sub(rng)), Box::new(sub(rng)));
    match rng.u8(..9) {
        0 | 1 => sub(rng) + sub(rng),
        2 => sub(rng) * rng.i64(-8..=8),
        3 => sub(rng).floor_div(rng.i64(1..=9)),
        4 => sub(rng).ceil_div(rng.i64(1..=9)),
        5 => sub(rng).modulo(rng.i64(1..=9)),
        6 => {
            let (a, b) = pair(rng);
            AffineExpr::Product(a, b)
        }
        7 => {
            let (a, b) = pair(rng);
            AffineExpr::Max(a, b)
        }
        _ => {
            let (a, b) = pair(rng);
            AffineExpr::Min(a, b)
        }
    }
}

fn random_map(rng: &mut fastrand::Rng) -> IndexingMap {
    let dims = rng.usize(1..=3);
    let symbols = rng.usize(0..=2);
    let var = |rng: &mut fastrand::Rng, name: String| Variable::new(name, random_interval(rng));
    let results = (0..rng.usize(1..=3))
        .map(|_| random_expr(rng, dims, symbols, 3))
        .collect();
    IndexingMap::new(
        (0..dims).map(|i| var(rng, format!("d{i}"))).collect(),
        (0..symbols).map(|i| var(rng, format!("s{i}"))).collect(),
        Vec::new(),
        results,
    )
}

fn random_operands(rng: &mut fastrand::Rng, map: &IndexingMap) -> Vec<Operand> {
    let bounds = map.dims.iter().chain(&map.range_vars).map(|v| v.bounds);
    bounds
        .map(|b| {
            let pick = |rng: &mut fastrand::Rng| rng.i64(b.lo..=b.hi);
            match rng.u8(..4) {
                0 => Operand {
                    bounds: b,
                    constant: Some(pick(rng)),
                    arg_range: None,
                },
                1 => {
                    let (x, y) = (pick(rng), pick(rng));
                    Operand {
                        bounds: b,
                        constant: None,
                        arg_range: Some(Interval::new(x.min(y), x.max(y))),
                    }
                }
                _ => Operand {
                    bounds: b,
                    constant: None,
                    arg_range: None,
                },
            }
        })
        .collect()
}

/// `func.func @f(<one index argument per non-constant operand>) -> (index, ...)` applying
/// `map`.
fn build(map: &IndexingMap, operands: &[Operand]) -> Module {
    let mut m = Module::new();
    let args = operands.iter().filter(|o| o.constant.is_none()).count();
    let results = vec![Type::INDEX; map.results.len()];
    let body = m.body();
    let mut b = Builder::at_end(&mut m, body);
    let f = b.func("f", &vec![Type::INDEX; args], &results, |b, params| {
        let mut params = params.iter();
        let values: Vec<Value> = operands
            .iter()
            .map(|o| match o.constant {
                Some(c) => b.index(c),
                None => *params.next().expect("an argument per operand"),
            })
            .collect();
        let (dims, symbols) = values.split_at(map.dims.len());
        let at = b.insertion_point();
        let r = xla_gpu::build_apply_indexing(b.module, at, map.clone(), dims, symbols);
        b.ret(&r);
    });
    set_arg_ranges(&mut m, f, operands);
    m
}

fn set_arg_ranges(m: &mut Module, f: OpId, operands: &[Operand]) {
    let lists: Vec<Attribute> = operands
        .iter()
        .filter(|o| o.constant.is_none())
        .map(|o| {
            let entries = o.arg_range.map(|r| NamedAttr {
                name: Ident::new("xla.range"),
                value: Attribute::Array(vec![Attribute::index(r.lo), Attribute::index(r.hi)]),
            });
            Attribute::dict(entries.into_iter().collect())
        })
        .collect();
    m.set_prop(f, "arg_attrs", Attribute::Array(lists));
}

/// Runs the (region-free) body of the only function on `args`; checks the `nsw` promise.
fn interpret(m: &Module, args: &[i64]) -> Vec<i64> {
    let f = m.first_op(m.body()).expect("a function");
    let entry = m.entry_block(m.region(f, 0)).expect("a body");
    let mut env: HashMap<Value, i64> = m
        .block_args(entry)
        .iter()
        .copied()
        .zip(args.iter().copied())
        .collect();
    for op in m.block_ops(entry) {
        let operands: Vec<i64> = m.operands(op).map(|v| env[&v]).collect();
        let name = m.name(op);
        if name.as_str() == func::RETURN {
            return operands;
        }
        let value = eval_op(m, op, name.as_str(), &operands);
        env.insert(m.result(op, 0), value);
    }
    panic!("no return");
}

fn eval_op(m: &Module, op: OpId, name: &str, x: &[i64]) -> i64 {
    let exact = |v: i128| {
        let nsw =
            matches!(m.prop(op, "overflowFlags"), Some(Attribute::Opaque(t)) if t.contains("nsw"));
        if nsw {
            let fits = |v: i128| i128::from(i32::MIN) <= v && v <= i128::from(i32::MAX);
            let operands_fit = x.iter().all(|&o| fits(o.into()));
            assert!(
                operands_fit && fits(v),
                "'{name}' with nsw leaves i32: {x:?} -> {v}"
            );
        }
        v as i64
    };
    match name {
        arith::CONSTANT => m
            .prop(op, "value")
            .and_then(Attribute::as_i64)
            .expect("an index constant"),
        arith::ADDI => exact(i128::from(x[0]) + i128::from(x[1])),
        arith::SUBI => exact(i128::from(x[0]) - i128::from(x[1])),
        arith::MULI => exact(i128::from(x[0]) * i128::from(x[1])),
        arith::DIVUI => ((x[0] as u64) / (x[1] as u64)) as i64,
        arith::REMUI => ((x[0] as u64) % (x[1] as u64)) as i64,
        arith::DIVSI => x[0].wrapping_div(x[1]),
        arith::REMSI => x[0].wrapping_rem(x[1]),
        arith::MAXSI => x[0].max(x[1]),
        arith::MINSI => x[0].min(x[1]),
        arith::MAXUI => (x[0] as u64).max(x[1] as u64) as i64,
        arith::MINUI => (x[0] as u64).min(x[1] as u64) as i64,
        arith::CMPI => {
            let predicate = m.prop(op, "predicate").and_then(Attribute::as_i64);
            let holds = match predicate {
                Some(2) => x[0] < x[1],
                Some(4) => x[0] > x[1],
                p => panic!("unexpected cmpi predicate {p:?}"),
            };
            i64::from(holds)
        }
        arith::SELECT => {
            if x[0] != 0 {
                x[1]
            } else {
                x[2]
            }
        }
        other => panic!("simplify-affine emitted '{other}'"),
    }
}

fn check_map(rng: &mut fastrand::Rng, index: usize) {
    let map = random_map(rng);
    let operands = random_operands(rng, &map);
    let mut m = build(&map, &operands);
    m.verify()
        .unwrap_or_else(|e| panic!("map {index}: input does not verify: {e}"));
    SimplifyAffine.run(&mut m).unwrap();
    m.verify()
        .unwrap_or_else(|e| panic!("map {index}: output does not verify: {e}\n{}", m.print()));
    let text = m.print();
    assert!(!text.contains("xla_gpu"), "map {index}: left {text}");
    for _ in 0..POINTS {
        let point: Vec<i64> = operands
            .iter()
            .map(|o| rng.i64(o.values().lo..=o.values().hi))
            .collect();
        let (dims, symbols) = point.split_at(map.dims.len());
        let expected = map.eval(dims, symbols);
        let args: Vec<i64> = point
            .iter()
            .zip(&operands)
            .filter(|(_, o)| o.constant.is_none())
            .map(|(&v, _)| v)
            .collect();
        let got = interpret(&m, &args);
        assert_eq!(
            got, expected,
            "map {index} at {point:?}\nmap: {map:?}\nlowered:\n{text}"
        );
    }
    if index < MLIR_SAMPLE {
        codegen::mlir::verify(&m.print_generic(), false)
            .unwrap_or_else(|e| panic!("map {index}: MLIR rejects the output: {e}\n{text}"));
    }
}

#[test]
fn lowered_maps_compute_what_the_maps_compute() {
    let mut rng = fastrand::Rng::with_seed(0x51a7_aff1);
    for index in 0..MAPS {
        check_map(&mut rng, index);
    }
}

#[test]
fn lit_cases_agree_with_mlir() {
    common::assert_lit_cases_agree_with_mlir("simplify-affine.mlir", &SimplifyAffine);
}
