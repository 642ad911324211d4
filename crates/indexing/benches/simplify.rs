//! Simplifies 10,000 maps of the kinds the emitters build and prints maps per second
//! (median of 11 runs). A plain binary rather than criterion: no extra dependencies, and
//! one number is what the issue asks for.
//!
//! `cargo bench -p indexing --bench simplify`
//!
//! The maps, built unsimplified by composition as the emitters do:
//! * loop emitter: `(th_x, bl_x)[vector_index] -> linear index` delinearized over an
//!   output shape, with `linear < elements` as a constraint;
//! * tiled transposes: a block's 32×32 tile of a `[P, M, N] → [P, N, M]` transpose, with
//!   the block index delinearized over the tile grid and bounds constraints;
//! * row reductions: a warp per row, `s0` over the row's chunks and `s1` over a vector,
//!   the row index delinearized over the kept dimensions.

use std::hint::black_box;
use std::time::Instant;

use fastrand::Rng;
use indexing::{IndexingMap, Interval, Variable, delinearize, dim, sym};

const MAPS: usize = 10_000;
const RUNS: usize = 11;

fn var(name: &str, size: i64) -> Variable {
    Variable::new(name, Interval::new(0, size - 1))
}

fn size(rng: &mut Rng) -> i64 {
    const SIZES: [i64; 14] = [1, 2, 3, 4, 7, 8, 10, 16, 32, 100, 128, 512, 1000, 4096];
    SIZES[rng.usize(..SIZES.len())]
}

fn shape(rng: &mut Rng, rank: usize) -> Vec<i64> {
    (0..rank).map(|_| size(rng)).collect()
}

/// `(d0) -> row-major multi-index` on `[0, product - 1]`.
fn delinearization(shape: &[i64]) -> IndexingMap {
    let n: i64 = shape.iter().product();
    IndexingMap::new(
        vec![var("d0", n)],
        Vec::new(),
        Vec::new(),
        delinearize(dim(0), shape),
    )
}

fn loop_map(rng: &mut Rng) -> IndexingMap {
    let rank = rng.usize(1..=5);
    let shape = shape(rng, rank);
    let n: i64 = shape.iter().product();
    let vector = [1, 2, 4][rng.usize(..3)];
    let threads = [128, 256, 512, 1024][rng.usize(..4)].min(n.max(1));
    let blocks = (n + threads * vector - 1) / (threads * vector);
    let mut linear = IndexingMap::new(
        vec![var("th_x", threads), var("bl_x", blocks)],
        vec![var("vector_index", vector)],
        Vec::new(),
        vec![dim(1) * (threads * vector) + dim(0) * vector + sym(0)],
    );
    linear.add_constraint(linear.results[0].clone(), Interval::new(0, n - 1));
    linear.compose(&delinearization(&shape))
}

fn transpose_map(rng: &mut Rng) -> IndexingMap {
    let (p, m, n) = (size(rng), size(rng).max(2), size(rng).max(2));
    let (tiles_m, tiles_n) = ((m + 31) / 32, (n + 31) / 32);
    // (th_x, bl_x)[s0] -> (block, th_x, s0): the block picks a tile, 128 threads read it
    // as 8 passes (s0) of 4 rows of 32.
    let tile = IndexingMap::new(
        vec![var("th_x", 128), var("bl_x", p * tiles_m * tiles_n)],
        vec![var("s0", 8)],
        Vec::new(),
        vec![dim(1), dim(0), sym(0)],
    );
    let grid = delinearize(dim(0), &[p, tiles_m, tiles_n]);
    let mut read = IndexingMap::new(
        vec![
            var("d0", p * tiles_m * tiles_n),
            var("d1", 128),
            var("d2", 8),
        ],
        Vec::new(),
        Vec::new(),
        vec![
            grid[0].clone(),
            grid[1].clone() * 32 + dim(2) * 4 + dim(1).floor_div(32),
            grid[2].clone() * 32 + dim(1).modulo(32),
        ],
    );
    read.add_constraint(read.results[1].clone(), Interval::new(0, m - 1));
    read.add_constraint(read.results[2].clone(), Interval::new(0, n - 1));
    // The operand is read through a transpose of a bitcast-like reshape of [p * m * n].
    let transpose = IndexingMap::new(
        vec![var("d0", p), var("d1", m), var("d2", n)],
        Vec::new(),
        Vec::new(),
        vec![(dim(0) * m + dim(1)) * n + dim(2)],
    );
    tile.compose(&read).compose(&transpose)
}

fn reduction_map(rng: &mut Rng) -> IndexingMap {
    let kept_rank = rng.usize(1..=3);
    let kept = shape(rng, kept_rank);
    let rows: i64 = kept.iter().product();
    let row_length = [32, 100, 128, 1000, 4096, 10000][rng.usize(..6)];
    let vector = [1, 2, 4][rng.usize(..3)];
    let chunks = (row_length + 32 * vector - 1) / (32 * vector);
    let rows_per_block = 8;
    let blocks = (rows + rows_per_block - 1) / rows_per_block;
    // (th_x, bl_x)[s0, s1] -> (row, column)
    let mut reduce = IndexingMap::new(
        vec![var("th_x", 32 * rows_per_block), var("bl_x", blocks)],
        vec![var("s0", chunks), var("s1", vector)],
        Vec::new(),
        vec![
            dim(1) * rows_per_block + dim(0).floor_div(32),
            sym(0) * (32 * vector) + dim(0).modulo(32) * vector + sym(1),
        ],
    );
    reduce.add_constraint(reduce.results[0].clone(), Interval::new(0, rows - 1));
    reduce.add_constraint(reduce.results[1].clone(), Interval::new(0, row_length - 1));
    // The input is [kept..., row_length]: delinearize the row.
    let mut input_shape = kept.clone();
    input_shape.push(row_length);
    let mut results = delinearize(dim(0), &kept);
    results.push(dim(1));
    let split = IndexingMap::new(
        vec![var("d0", rows), var("d1", row_length)],
        Vec::new(),
        Vec::new(),
        results,
    );
    reduce.compose(&split)
}

fn main() {
    let mut rng = Rng::with_seed(42);
    let maps: Vec<IndexingMap> = (0..MAPS)
        .map(|i| match i % 3 {
            0 => loop_map(&mut rng),
            1 => transpose_map(&mut rng),
            _ => reduction_map(&mut rng),
        })
        .collect();
    for map in maps.iter().take(3) {
        println!("{map}\n  => {}", map.clone().simplified());
    }
    let mut rates = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut batch = maps.clone();
        let start = Instant::now();
        for map in &mut batch {
            map.simplify();
        }
        let elapsed = start.elapsed().as_secs_f64();
        black_box(&batch);
        rates.push(MAPS as f64 / elapsed);
    }
    rates.sort_by(f64::total_cmp);
    let results: usize = maps.iter().map(|m| m.results.len()).sum();
    let constraints: usize = maps.iter().map(|m| m.constraints.len()).sum();
    println!(
        "simplify: {MAPS} maps ({results} results, {constraints} constraints), median of {RUNS} \
         runs: {:.0} maps/s (min {:.0}, max {:.0})",
        rates[RUNS / 2],
        rates[0],
        rates[RUNS - 1]
    );
}
