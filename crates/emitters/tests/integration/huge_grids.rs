//! Launches stay legal for every shape: a loop fusion of about 1.2 * 10^12 elements needs
//! more blocks than grid.x holds (2^31 - 1), so they are spread over grid.y, and the
//! thread map still covers every element exactly once. The map is checked on a sample of
//! blocks (the first, the last, and the blocks around every multiple of 2^31 of the linear
//! block id and of the linear element index), since no host holds the output.

use emitters::{Target, emit_fusion, fusions};

const MAX_GRID_X: u64 = Target::MAX_GRID_X;
const MAX_GRID_YZ: u64 = Target::MAX_GRID_YZ;

/// The broadcast `f32[rows, cols]` of an `f32[cols]` parameter (4 elements per thread).
fn broadcast(rows: i64, cols: i64) -> String {
    format!(
        "fusion {{\n  p = f32[{cols}] parameter(0)\n  ROOT b = f32[{rows},{cols}] broadcast(p), dimensions={{1}}\n}}\n"
    )
}

/// The linear block ids to sample: first, last, and around each 2^31 boundary of the
/// block id and of the element index (`per_block` elements per block).
fn sample_blocks(blocks: u64, per_block: u64) -> Vec<u64> {
    let mut sample = vec![0, 1, blocks - 2, blocks - 1];
    let elements = blocks * per_block;
    for k in 1.. {
        let boundary = k << 31;
        if boundary >= elements {
            break;
        }
        for around in [boundary / per_block, boundary] {
            if around < blocks {
                sample.extend([
                    around.saturating_sub(1),
                    around,
                    (around + 1).min(blocks - 1),
                ]);
            }
        }
    }
    sample.sort_unstable();
    sample.dedup();
    sample
}

fn check_launch_and_map(rows: i64, cols: i64) {
    let text = broadcast(rows, cols);
    let (_, module) = hlo::load("huge.hlo", text.as_bytes()).unwrap();
    let emitted = emit_fusion(&module, fusions(&module)[0]).unwrap_or_else(|d| panic!("{d}"));
    let launch = emitted.kernel.launch;
    let [x, y, z] = launch.grid();
    assert!(
        launch.blocks > MAX_GRID_X,
        "the test needs more blocks than grid.x holds"
    );
    assert!(x <= MAX_GRID_X && y <= MAX_GRID_YZ && z == 1, "{x} {y} {z}");
    assert!(x * y >= launch.blocks && x * (y - 1) < launch.blocks);

    let map = &emitted.kernel.thread_map;
    let threads = launch.threads_per_block;
    let factor = emitted.kernel.vector_factor as u64;
    let per_block = threads * factor;
    let elements = (rows * cols) as u64;
    let mut seen = 0u64;
    // The grid's blocks past `blocks` (when y does not divide evenly) must do nothing.
    let grid_blocks = x * y;
    let mut blocks = sample_blocks(launch.blocks, per_block);
    blocks.extend(launch.blocks..grid_blocks);
    for block in blocks {
        let (bx, by) = ((block % x) as i64, (block / x) as i64);
        for thread in 0..threads as i64 {
            for v in 0..factor as i64 {
                let dims = [thread, bx, by];
                let linear = block * per_block + thread as u64 * factor + v as u64;
                if !map.contains(&dims, &[v]) {
                    assert!(
                        linear >= elements,
                        "block {block} thread {thread} v {v} skipped"
                    );
                    continue;
                }
                assert!(
                    linear < elements,
                    "block {block} thread {thread} writes past the end"
                );
                let index = map.eval(&dims, &[v]);
                let want = [(linear / cols as u64) as i64, (linear % cols as u64) as i64];
                assert_eq!(index, want, "block {block} thread {thread} v {v}");
                seen += 1;
            }
        }
    }
    assert!(seen > 0);
}

#[test]
fn a_trillion_element_broadcast_spreads_its_blocks_over_grid_y() {
    // 1.2 * 10^12 elements: 2,343,750,000 blocks of 512 elements, an even split.
    check_launch_and_map(1_200_000, 1_000_000);
}

#[test]
fn an_uneven_split_leaves_the_extra_blocks_idle() {
    // An odd element count: vector factor 1, 9,375,017,188 blocks of 128 threads over a
    // grid of 5 rows, the last block only partly in range and idle blocks past it.
    check_launch_and_map(1_200_001, 1_000_000 + 1);
}

#[test]
fn more_blocks_than_any_grid_holds_are_refused() {
    // 2^57 elements (2^59 bytes, under the verifier's 2^62): 2^48 blocks of 512, more than
    // (2^31 - 1) x 65,535.
    let text = broadcast(1 << 31, 1 << 26);
    let (source, module) = hlo::load("huge.hlo", text.as_bytes()).unwrap();
    let e = emit_fusion(&module, fusions(&module)[0]).err().unwrap();
    let message = e.render(&source);
    assert!(message.contains("huge.hlo:3:"), "{message}");
    assert!(message.contains("more than a grid holds"), "{message}");
}
