//! Parse, verify and print throughput on a generated module of 100,000 arith ops (100
//! functions of 1,000 ops: constants, float and integer arithmetic, compares, selects, casts),
//! in custom and generic form. Prints ops/second, the median of 11 runs. A plain binary rather
//! than criterion: no extra dependencies, and these numbers are what the issue asks for.
//!
//! `cargo bench -p ir --bench parse_print`

use ir::dialects::arith;
use ir::{Builder, Module, Registry, Type, parse_module_with};
use std::hint::black_box;
use std::time::Instant;

const FUNCS: usize = 100;
const OPS_PER_FUNC: usize = 1_000;
const RUNS: usize = 11;

fn build() -> Module {
    let mut m = Module::new();
    let body = m.body();
    let mut b = Builder::at_end(&mut m, body);
    for f in 0..FUNCS {
        b.func(
            &format!("f{f}"),
            &[Type::F32, Type::F32, Type::I32, Type::INDEX],
            &[Type::F32],
            |b, args| {
                let (mut x, y, mut n, i) = (args[0], args[1], args[2], args[3]);
                let mut emitted = 0;
                while emitted + 8 < OPS_PER_FUNC {
                    let c = b.float(0.5 + emitted as f64, Type::F32);
                    let s = b.addf(x, c);
                    let p = b.mulf(s, y);
                    let cmp = b.create1(arith::CMPF, &[p, x], Type::I1);
                    b.module.set_prop(
                        b.module.defining_op(cmp).unwrap(),
                        "predicate",
                        ir::Attribute::i64(4),
                    );
                    x = b.select(cmp, p, x);
                    let k = b.int(emitted as i128, Type::I32);
                    n = b.addi(n, k);
                    let _ = b.cast(arith::INDEX_CAST, i, Type::I32);
                    emitted += 8;
                }
                b.ret(&[x]);
                let _ = n;
            },
        );
    }
    m
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn measure(what: &str, ops: usize, mut f: impl FnMut()) {
    let times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    let t = median(times);
    println!(
        "{what:<24} {:>8.2} ms   {:>6.2} M ops/s",
        t * 1e3,
        ops as f64 / t / 1e6
    );
}

fn main() {
    let m = build();
    let ops = m.num_ops();
    let pretty = m.print();
    let generic = m.print_generic();
    println!(
        "module: {ops} ops, {} KiB custom, {} KiB generic",
        pretty.len() / 1024,
        generic.len() / 1024
    );
    let registry = Registry::standard();
    measure("parse (custom)", ops, || {
        black_box(parse_module_with(black_box(&pretty), "bench", registry.clone()).unwrap());
    });
    measure("parse (generic)", ops, || {
        black_box(parse_module_with(black_box(&generic), "bench", registry.clone()).unwrap());
    });
    let parsed = parse_module_with(&pretty, "bench", registry.clone()).unwrap();
    assert_eq!(parsed.print(), pretty);
    measure("print (custom)", ops, || {
        black_box(parsed.print());
    });
    measure("print (generic)", ops, || {
        black_box(parsed.print_generic());
    });
    measure("verify", ops, || {
        parsed.verify().unwrap();
    });
    measure("parse+verify+print", ops, || {
        let m = parse_module_with(black_box(&pretty), "bench", registry.clone()).unwrap();
        m.verify().unwrap();
        black_box(m.print());
    });
}
