//! Property tests with seeded random maps: simplification, composition, and printing
//! preserve meaning — the same results at every point of the domain, and the same domain.

use fastrand::Rng;
use indexing::{AffineExpr, IndexingMap, Interval, Variable, delinearize, dim};

/// A seeded generator; `INDEXING_SEED` (a number) varies the seeds for a longer hunt.
fn rng(seed: u64) -> Rng {
    let extra = std::env::var("INDEXING_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    Rng::with_seed(seed ^ extra.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Case counts scale with `INDEXING_CASES` (a factor; default 1).
fn cases(n: usize) -> usize {
    let factor = std::env::var("INDEXING_CASES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(1);
    n * factor.max(1)
}

/// Random expressions: leaves are variables and small constants; inner nodes add,
/// multiply by a small constant, divide/take a modulus by a small positive constant, or
/// are XLA's extensions (a product of two expressions, `max`, `min`).
fn random_expr(rng: &mut Rng, depth: u32, dims: usize, symbols: usize) -> AffineExpr {
    if depth == 0 || rng.u8(..4) == 0 {
        return match rng.u8(..5) {
            0 | 1 if dims > 0 => AffineExpr::Dim(rng.usize(..dims)),
            2 | 3 if symbols > 0 => AffineExpr::Symbol(rng.usize(..symbols)),
            _ => AffineExpr::Constant(rng.i64(-10..=10)),
        };
    }
    let mut sub = || random_expr(rng, depth - 1, dims, symbols);
    let lhs = sub();
    let rhs = random_expr(rng, depth - 1, dims, symbols);
    let product_reads_back = has_variables(&lhs) && has_variables(&rhs);
    let pair = |kind: fn(Box<AffineExpr>, Box<AffineExpr>) -> AffineExpr, lhs| {
        kind(Box::new(lhs), Box::new(rhs))
    };
    match rng.u8(..10) {
        0 | 1 => pair(AffineExpr::Add, lhs),
        2 => lhs * rng.i64(-4..=4),
        3 => lhs.floor_div(rng.i64(1..=9)),
        4 | 5 => lhs.modulo(rng.i64(1..=9)),
        6 => lhs.ceil_div(rng.i64(1..=9)),
        // A product with a variable-free side is a scaling, and reads back as one.
        7 if product_reads_back => pair(AffineExpr::Product, lhs),
        8 => pair(AffineExpr::Max, lhs),
        _ => pair(AffineExpr::Min, lhs),
    }
}

fn has_variables(e: &AffineExpr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, AffineExpr::Dim(_) | AffineExpr::Symbol(_)));
    found
}

/// The shapes emitters build: a linear combination with power-of-two-ish coefficients,
/// then `floordiv` and/or `mod` by products of such numbers.
fn structured_expr(rng: &mut Rng, dims: usize, symbols: usize) -> AffineExpr {
    const FACTORS: [i64; 9] = [1, 2, 3, 4, 6, 8, 16, 32, 64];
    let mut e = AffineExpr::Constant(if rng.u8(..3) == 0 { rng.i64(-8..=8) } else { 0 });
    for i in 0..dims + symbols {
        if rng.bool() {
            continue;
        }
        let v = if i < dims {
            AffineExpr::Dim(i)
        } else {
            AffineExpr::Symbol(i - dims)
        };
        let c = FACTORS[rng.usize(..FACTORS.len())] * if rng.u8(..8) == 0 { -1 } else { 1 };
        e = e + v * c;
    }
    for _ in 0..rng.u8(..3) {
        let d = FACTORS[rng.usize(..FACTORS.len())] * FACTORS[rng.usize(..FACTORS.len())];
        e = match rng.u8(..4) {
            0 => e.floor_div(d),
            1 => e.modulo(d),
            2 => e.floor_div(d).modulo(FACTORS[rng.usize(1..FACTORS.len())]),
            _ => e.modulo(d).floor_div(FACTORS[rng.usize(1..FACTORS.len())]),
        };
    }
    e
}

fn random_variables(rng: &mut Rng, prefix: &str, n: usize) -> Vec<Variable> {
    (0..n)
        .map(|i| {
            let lo = if rng.u8(..3) == 0 { rng.i64(-4..=4) } else { 0 };
            let width = if rng.u8(..10) == 0 {
                0
            } else {
                rng.i64(0..=15)
            };
            Variable::new(format!("{prefix}{i}"), Interval::new(lo, lo + width))
        })
        .collect()
}

fn random_map(rng: &mut Rng) -> IndexingMap {
    let (nd, nr, nt) = (rng.usize(0..=3), rng.usize(0..=2), rng.usize(0..=1));
    let dims = random_variables(rng, "d", nd);
    let range_vars = random_variables(rng, "s", nr);
    let rt_vars = random_variables(rng, "rt", nt);
    let (nd, ns) = (dims.len(), range_vars.len() + rt_vars.len());
    let structured = rng.bool();
    let results = (0..rng.usize(1..=3))
        .map(|_| {
            if structured {
                structured_expr(rng, nd, ns)
            } else {
                random_expr(rng, 4, nd, ns)
            }
        })
        .collect();
    let mut map = IndexingMap::new(dims, range_vars, rt_vars, results);
    for _ in 0..rng.usize(0..=2) {
        let e = if structured {
            structured_expr(rng, nd, ns)
        } else {
            random_expr(rng, 3, nd, ns)
        };
        let r = map.range_of(&e);
        let (lo, hi) = if r.is_empty() { (0, 0) } else { (r.lo, r.hi) };
        let a = rng.i64(lo - 2..=hi + 2);
        let b = rng.i64(lo - 2..=hi + 2);
        map.add_constraint(e, Interval::new(a.min(b), a.max(b)));
    }
    map
}

/// Points of the bounding box of `map`'s variables: all of them when there are few,
/// otherwise a sample. (dims, symbols) pairs.
fn points(rng: &mut Rng, map: &IndexingMap) -> Vec<(Vec<i64>, Vec<i64>)> {
    let vars: Vec<Interval> = map
        .dims
        .iter()
        .chain(&map.range_vars)
        .chain(&map.rt_vars)
        .map(|v| v.bounds)
        .collect();
    if vars.iter().any(|b| b.is_empty()) {
        return Vec::new();
    }
    let total: u128 = vars.iter().map(|b| b.size()).product();
    let all: Vec<Vec<i64>> = if total <= 2048 {
        let mut out = vec![vec![]];
        for b in &vars {
            out = out
                .into_iter()
                .flat_map(|p| {
                    (b.lo..=b.hi).map(move |v| {
                        let mut q = p.clone();
                        q.push(v);
                        q
                    })
                })
                .collect();
        }
        out
    } else {
        (0..400)
            .map(|_| vars.iter().map(|b| rng.i64(b.lo..=b.hi)).collect())
            .collect()
    };
    let nd = map.dims.len();
    all.into_iter()
        .map(|mut p| {
            let s = p.split_off(nd);
            (p, s)
        })
        .collect()
}

/// `b` has the same domain as `a` and the same results on it.
fn assert_equivalent(a: &IndexingMap, b: &IndexingMap, pts: &[(Vec<i64>, Vec<i64>)], what: &str) {
    for (d, s) in pts {
        let inside = a.contains(d, s);
        assert_eq!(
            inside,
            b.contains(d, s),
            "{what}: domains differ at {d:?} {s:?}\n  {a}\n  {b}"
        );
        if inside {
            assert_eq!(
                a.eval(d, s),
                b.eval(d, s),
                "{what}: results differ at {d:?} {s:?}\n  {a}\n  {b}"
            );
        }
    }
}

#[test]
fn simplified_maps_evaluate_like_the_originals() {
    let mut rng = rng(0x5eed);
    let mut changed = 0;
    for _ in 0..cases(4000) {
        let map = random_map(&mut rng);
        let simplified = map.clone().simplified();
        assert_eq!(simplified.dims.len(), map.dims.len());
        assert_eq!(simplified.num_symbols(), map.num_symbols());
        if simplified != map {
            changed += 1;
        }
        // Points from the original box: simplification only narrows variable ranges to
        // what the constraints allowed anyway.
        let pts = points(&mut rng, &map);
        assert_equivalent(&map, &simplified, &pts, "simplify");
        if simplified.is_known_empty() {
            assert!(
                pts.iter().all(|(d, s)| !map.contains(d, s)),
                "{map} is not empty"
            );
        }
        // Simplifying again changes nothing.
        let again = simplified.clone().simplified();
        assert_eq!(again, simplified, "not idempotent on {map}");
    }
    assert!(changed > cases(3000), "only {changed} maps changed");
}

#[test]
fn composition_evaluates_one_map_after_the_other() {
    let mut rng = rng(0xc0de);
    for _ in 0..cases(3000) {
        let consumer = random_map(&mut rng);
        let mut producer = random_map(&mut rng);
        // The producer's dimensions are the consumer's results.
        let k = consumer.results.len();
        while producer.dims.len() < k {
            let n = producer.dims.len();
            producer.dims.push(Variable::new(
                format!("d{n}"),
                Interval::new(0, rng.i64(0..=12)),
            ));
        }
        producer.dims.truncate(k);
        let nd = producer.dims.len();
        let ns = producer.num_symbols();
        for e in producer
            .results
            .iter_mut()
            .chain(producer.constraints.iter_mut().map(|(e, _)| e))
        {
            // Keep only variables the producer still has.
            let dims: Vec<AffineExpr> = (0..16)
                .map(|i| {
                    if i < nd {
                        dim(i)
                    } else {
                        AffineExpr::Constant(1)
                    }
                })
                .collect();
            let syms: Vec<AffineExpr> = (0..ns).map(AffineExpr::Symbol).collect();
            *e = e.substitute(&dims, &syms);
        }
        let composed = consumer.compose(&producer);
        let simplified = composed.clone().simplified();
        let (r1, t1) = (consumer.range_vars.len(), consumer.rt_vars.len());
        let r2 = producer.range_vars.len();
        for (d, s) in points(&mut rng, &composed) {
            // Composed symbols: consumer range, producer range, consumer rt, producer rt.
            let consumer_syms: Vec<i64> = s[..r1]
                .iter()
                .chain(&s[r1 + r2..r1 + r2 + t1])
                .copied()
                .collect();
            let producer_syms: Vec<i64> = s[r1..r1 + r2]
                .iter()
                .chain(&s[r1 + r2 + t1..])
                .copied()
                .collect();
            let mid = consumer.eval(&d, &consumer_syms);
            let inside =
                consumer.contains(&d, &consumer_syms) && producer.contains(&mid, &producer_syms);
            assert_eq!(
                composed.contains(&d, &s),
                inside,
                "{consumer}\n{producer}\n{composed}\nat {d:?} {s:?}"
            );
            assert_eq!(
                simplified.contains(&d, &s),
                inside,
                "{composed}\n{simplified}\nat {d:?} {s:?}"
            );
            if inside {
                let want = producer.eval(&mid, &producer_syms);
                assert_eq!(composed.eval(&d, &s), want);
                assert_eq!(
                    simplified.eval(&d, &s),
                    want,
                    "{composed}\n{simplified}\nat {d:?} {s:?}"
                );
            }
        }
    }
}

#[test]
fn print_parse_round_trips() {
    let mut rng = rng(0x9a45e);
    for _ in 0..cases(4000) {
        let map = random_map(&mut rng);
        let printed = map.to_string();
        let parsed = IndexingMap::parse(&printed).unwrap_or_else(|e| panic!("{printed}: {e}"));
        assert_eq!(parsed.to_string(), printed);
        let pts = points(&mut rng, &map);
        assert_equivalent(&map, &parsed, &pts, "parse(print)");
        // Simplified maps are canonical: parsing their text gives the same tree back.
        let simplified = map.simplified();
        let reparsed = IndexingMap::parse(&simplified.to_string()).unwrap();
        assert_eq!(reparsed, simplified, "{simplified}");
    }
}

/// The loop emitter's thread → output maps, delinearized over many shapes, simplify to
/// maps that agree with the linear index at every thread.
#[test]
fn delinearized_loop_maps_simplify_exactly() {
    let mut rng = rng(0x100b);
    for _ in 0..cases(300) {
        let rank = rng.usize(1..=4);
        let shape: Vec<i64> = (0..rank)
            .map(|_| [1, 2, 3, 4, 5, 8, 16, 24, 32][rng.usize(..9)])
            .collect();
        let n: i64 = shape.iter().product();
        let vector = [1, 2, 4][rng.usize(..3)];
        let threads = [1, 2, 4, 8, 32][rng.usize(..5)];
        let blocks = (n + threads * vector - 1) / (threads * vector);
        let mut linear = IndexingMap::new(
            vec![
                Variable::new("th_x", Interval::new(0, threads - 1)),
                Variable::new("bl_x", Interval::new(0, blocks - 1)),
            ],
            vec![Variable::new("vector_index", Interval::new(0, vector - 1))],
            Vec::new(),
            vec![dim(1) * (threads * vector) + dim(0) * vector + AffineExpr::Symbol(0)],
        );
        linear.add_constraint(linear.results[0].clone(), Interval::new(0, n - 1));
        let delinearization = IndexingMap::new(
            vec![Variable::new("d0", Interval::new(0, n - 1))],
            Vec::new(),
            Vec::new(),
            delinearize(dim(0), &shape),
        );
        let composed = linear.compose(&delinearization);
        let simplified = composed.clone().simplified();
        let pts = points(&mut rng, &composed);
        assert_equivalent(&composed, &simplified, &pts, "loop map");
        for (d, s) in &pts {
            let l = d[1] * threads * vector + d[0] * vector + s[0];
            if l < n {
                let mut want = Vec::new();
                let mut rest = l;
                for &size in shape.iter().rev() {
                    want.push(rest % size);
                    rest /= size;
                }
                want.reverse();
                assert_eq!(simplified.eval(d, s), want, "{simplified}");
            }
        }
    }
}
