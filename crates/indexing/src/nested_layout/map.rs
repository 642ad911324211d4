//! A nested layout as an indexing map (issue 21): which vector element each
//! (thread, subgroup) and each of its local elements holds.
//!
//! `(thread_id, subgroup_id)[batch.., outer.., element..] -> (vector index..)`, with, per
//! dimension `d`:
//!
//! ```text
//! index[d] = (((sg[d] * batch_tile[d] + b[d]) * outer_tile[d] + o[d]) * thread_tile[d] + t[d])
//!            * element_tile[d] + e[d]
//! sg[d] = (subgroup_id floordiv subgroup_strides[d]) mod subgroup_tile[d]   (0 for stride 0)
//! t[d]  = (thread_id floordiv thread_strides[d]) mod thread_tile[d]          (0 for stride 0)
//! ```
//!
//! — the conceptual view `[subgroup]x[batch]x[outer]x[thread]x[element]` linearized per
//! dimension, outermost level first. The domain: thread ids below one past the largest the
//! strides reach, subgroup ids likewise, and each symbol below its tile.
//!
//! Back: [`NestedLayout::from_indexing_map`] reads the tiles off the symbols' ranges and the
//! thread and subgroup tiles and strides off the map's values at single ids, then accepts
//! the layout only if its own map agrees with the given one at every point of the domain
//! (so a map of any other form is refused, not misread).

use super::NestedLayout;
use crate::{AffineExpr, IndexingMap, Interval, Variable, cst, dim, sym};

/// Calls `f` at every point (dims, symbols) of `map`'s domain without constraints, in order,
/// until it answers false; whether it answered true everywhere.
fn for_each_point(map: &IndexingMap, mut f: impl FnMut(&[i64], &[i64]) -> bool) -> bool {
    let vars = map.dim_and_range_var_bounds();
    if vars.iter().any(|b| b.hi < b.lo) {
        return true;
    }
    let mut point: Vec<i64> = vars.iter().map(|b| b.lo).collect();
    loop {
        let (dims, symbols) = point.split_at(map.dims.len());
        if !f(dims, symbols) {
            return false;
        }
        let mut k = point.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            point[k] += 1;
            if point[k] <= vars[k].hi {
                break;
            }
            point[k] = vars[k].lo;
        }
    }
}

impl NestedLayout {
    /// The layout's indexing map (see the module documentation). `threads` and `subgroups`
    /// bound the ids (one past the largest; see [`NestedLayout::id_counts`]).
    pub fn to_indexing_map(&self) -> IndexingMap {
        let rank = self.rank();
        let (threads, subgroups) = self.id_counts();
        let virtual_id = |id: AffineExpr, tile: i64, stride: i64| {
            if stride == 0 || tile == 1 {
                cst(0)
            } else {
                id.floor_div(stride).modulo(tile)
            }
        };
        let results = (0..rank)
            .map(|d| {
                let sg = virtual_id(dim(1), self.subgroup_tile[d], self.subgroup_strides[d]);
                let t = virtual_id(dim(0), self.thread_tile[d], self.thread_strides[d]);
                let batch = sg * self.batch_tile[d] + sym(d);
                let outer = batch * self.outer_tile[d] + sym(rank + d);
                let thread = outer * self.thread_tile[d] + t;
                thread * self.element_tile[d] + sym(2 * rank + d)
            })
            .collect();
        let mut symbols = Vec::with_capacity(3 * rank);
        for (level, tiles) in [
            ("batch", &self.batch_tile),
            ("outer", &self.outer_tile),
            ("element", &self.element_tile),
        ] {
            for (d, &t) in tiles.iter().enumerate() {
                symbols.push(Variable::new(
                    format!("{level}{d}"),
                    Interval::new(0, t - 1),
                ));
            }
        }
        IndexingMap::new(
            vec![
                Variable::new("thread_id", Interval::new(0, threads - 1)),
                Variable::new("subgroup_id", Interval::new(0, subgroups - 1)),
            ],
            symbols,
            Vec::new(),
            results,
        )
    }

    /// The layout whose map is `map`, when `map` has that form: two dimensions (thread id,
    /// subgroup id) and three symbols per result (batch, outer, element), each from 0. Tile-1
    /// levels come back with stride 0 (the same distribution). `None` for any other map, or
    /// one whose domain has more than 2^20 points to compare.
    pub fn from_indexing_map(map: &IndexingMap) -> Option<NestedLayout> {
        let rank = map.results.len();
        if rank == 0 || rank > super::MAX_RANK || map.dims.len() != 2 {
            return None;
        }
        if map.range_vars.len() != 3 * rank || !map.constraints.is_empty() {
            return None;
        }
        let vars = map.dims.iter().chain(&map.range_vars);
        if vars.clone().any(|v| v.bounds.lo != 0 || v.bounds.hi < 0) {
            return None;
        }
        vars.clone()
            .try_fold(1i64, |n, v| n.checked_mul(v.bounds.hi + 1))
            .filter(|&n| n <= super::MAX_IDS)?;
        let size = |k: usize| map.range_vars[k].bounds.hi + 1;
        let batch_tile: Vec<i64> = (0..rank).map(size).collect();
        let outer_tile: Vec<i64> = (0..rank).map(|d| size(rank + d)).collect();
        let element_tile: Vec<i64> = (0..rank).map(|d| size(2 * rank + d)).collect();
        let zeros = vec![0; 3 * rank];
        // An id's virtual ids at a level: its element index over the level's span.
        let level = |id_dim: usize, count: i64, span: &dyn Fn(usize) -> i64| {
            let mut tile = vec![1i64; rank];
            let mut strides = vec![0i64; rank];
            for id in 1..count {
                let mut dims = [0, 0];
                dims[id_dim] = id;
                let index = map.eval(&dims, &zeros);
                for d in 0..rank {
                    let v = index[d] / span(d);
                    if v > 0 && strides[d] == 0 {
                        strides[d] = id;
                    }
                    tile[d] = tile[d].max(v + 1);
                }
            }
            (tile, strides)
        };
        let threads = map.dims[0].bounds.hi + 1;
        let subgroups = map.dims[1].bounds.hi + 1;
        let (thread_tile, thread_strides) = level(0, threads, &|d| element_tile[d]);
        let thread_span =
            |d: usize| element_tile[d] * thread_tile[d] * outer_tile[d] * batch_tile[d];
        let (subgroup_tile, subgroup_strides) = level(1, subgroups, &thread_span);
        let layout = NestedLayout {
            subgroup_tile,
            batch_tile,
            outer_tile,
            thread_tile,
            element_tile,
            subgroup_strides,
            thread_strides,
        };
        layout.verify(None, None).ok()?;
        let back = layout.to_indexing_map();
        if back.dims != map.dims {
            return None;
        }
        let agrees = for_each_point(map, |dims, symbols| {
            map.eval(dims, symbols) == back.eval(dims, symbols)
        });
        agrees.then_some(layout)
    }

    /// One past the largest thread id and subgroup id the strides reach: the ids a layout
    /// distributes over.
    pub fn id_counts(&self) -> (i64, i64) {
        let reach = |tile: &[i64], strides: &[i64]| {
            1 + tile
                .iter()
                .zip(strides)
                .map(|(&t, &s)| (t - 1) * s)
                .sum::<i64>()
        };
        (
            reach(&self.thread_tile, &self.thread_strides),
            reach(&self.subgroup_tile, &self.subgroup_strides),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A small deterministic generator (splitmix64) for the property tests.
    struct Random(u64);

    impl Random {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_133B_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> i64 {
            (self.next() % n) as i64
        }
    }

    /// Strides that make every level distinct: dimension `d`'s stride is the product of the
    /// tiles of the distributed dimensions after it (in a random order), 0 for some.
    fn distinct_strides(tile: &[i64], r: &mut Random) -> Vec<i64> {
        let mut order: Vec<usize> = (0..tile.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, r.below(i as u64 + 1) as usize);
        }
        let mut strides = vec![0; tile.len()];
        let mut next = 1;
        for d in order {
            if tile[d] > 1 {
                strides[d] = next;
                next *= tile[d];
            }
        }
        strides
    }

    fn random_layout(r: &mut Random) -> NestedLayout {
        let rank = 1 + r.below(3) as usize;
        let mut tile = || (0..rank).map(|_| 1 + r.below(3)).collect::<Vec<i64>>();
        let (subgroup_tile, batch_tile, outer_tile, thread_tile, element_tile) =
            (tile(), tile(), tile(), tile(), tile());
        let subgroup_strides = distinct_strides(&subgroup_tile, r);
        let thread_strides = distinct_strides(&thread_tile, r);
        NestedLayout {
            subgroup_tile,
            batch_tile,
            outer_tile,
            thread_tile,
            element_tile,
            subgroup_strides,
            thread_strides,
        }
    }

    #[test]
    fn the_map_is_a_bijection_onto_the_vector_when_strides_are_distinct() {
        let mut r = Random(21);
        let mut tested = 0;
        while tested < 200 {
            let layout = random_layout(&mut r);
            let shape: Vec<i64> = (0..layout.rank())
                .map(|d| layout.tiles().iter().map(|level| level[d]).product())
                .collect();
            // Vectors of at most 4096 elements keep the walk over the domain short.
            if shape.iter().product::<i64>() > 4096 {
                continue;
            }
            tested += 1;
            layout.verify(Some(&shape), None).unwrap();
            let map = layout.to_indexing_map();
            let mut owner: HashMap<Vec<i64>, (Vec<i64>, Vec<i64>)> = HashMap::new();
            for_each_point(&map, |dims, symbols| {
                let index = map.eval(dims, symbols);
                for (d, &i) in index.iter().enumerate() {
                    assert!(
                        (0..shape[d]).contains(&i),
                        "{layout:?}: {index:?} outside {shape:?}"
                    );
                }
                let point = (dims.to_vec(), symbols.to_vec());
                if let Some(before) = owner.insert(index.clone(), point.clone()) {
                    panic!("{layout:?}: {index:?} held by {before:?} and {point:?}");
                }
                true
            });
            let elements: i64 = shape.iter().product();
            assert_eq!(owner.len() as i64, elements, "{layout:?} misses elements");
        }
    }

    #[test]
    fn the_seeds_thread_16_holds_what_the_explanation_says() {
        let layout = NestedLayout::parse(super::super::tests::SEED).unwrap();
        let map = layout.to_indexing_map();
        // thread16 holds [:, :, :, :, 0, 1, :, :] of its subgroup's part: thread virtual
        // ids (0, 1); in subgroup 0, batch (1, 3), outer 0, element (0, 3) is vector element
        // ((1*1 + 0)*16 + 0)*1 + 0 = 16 along dim 0 and ((3*1 + 0)*4 + 1)*4 + 3 = 55 along dim 1.
        let index = map.eval(&[16, 0], &[1, 3, 0, 0, 0, 3]);
        assert_eq!(index, [16, 55]);
        // Subgroup 1 holds the other half of dim 0 (subgroup_strides [1, 0]).
        assert_eq!(map.eval(&[16, 1], &[1, 3, 0, 0, 0, 3]), [48, 55]);
        assert_eq!(layout.id_counts(), (64, 2));
    }

    /// The explanation's `threadN ... from ...[:,..,v0,v1,..]` lines and the map agree: the
    /// thread's first element (batch, outer, element 0, subgroup 0) is at `v[d] * element_tile[d]`.
    #[test]
    fn the_explanation_and_the_map_agree() {
        let mut r = Random(7);
        for _ in 0..100 {
            let layout = random_layout(&mut r);
            let shape: Vec<i64> = (0..layout.rank())
                .map(|d| layout.tiles().iter().map(|level| level[d]).product())
                .collect();
            let text = layout.explain(&shape, None, None).unwrap();
            let map = layout.to_indexing_map();
            let rank = layout.rank();
            let zeros = vec![0; 3 * rank];
            let mut lines = text.lines();
            while let Some(line) = lines.next() {
                let Some(rest) = line.strip_prefix("thread") else {
                    continue;
                };
                let thread: i64 = rest.split(' ').next().unwrap().parse().unwrap();
                let from = lines.next().unwrap();
                let slice = &from[from.rfind('[').unwrap() + 1..from.len() - 1];
                let parts: Vec<&str> = slice.split(',').collect();
                let index = map.eval(&[thread, 0], &zeros);
                for d in 0..rank {
                    let v = match parts[2 * rank + d] {
                        ":" => 0,
                        v => v.parse::<i64>().unwrap(),
                    };
                    assert_eq!(
                        index[d],
                        v * layout.element_tile[d],
                        "{layout:?} thread {thread}"
                    );
                }
            }
        }
    }

    #[test]
    fn maps_of_layouts_convert_back() {
        let mut r = Random(4);
        let mut tested = 0;
        while tested < 100 {
            let layout = random_layout(&mut r);
            let map = layout.to_indexing_map();
            let points: i64 = map
                .dims
                .iter()
                .chain(&map.range_vars)
                .map(|v| v.bounds.hi + 1)
                .product();
            if points > 4096 {
                continue;
            }
            tested += 1;
            let back = NestedLayout::from_indexing_map(&map)
                .unwrap_or_else(|| panic!("{layout:?} does not convert back"));
            // The same distribution: the same map (tile-1 levels may lose their stride).
            assert_eq!(
                back.to_indexing_map(),
                map,
                "{layout:?} came back as {back:?}"
            );
        }
        // A map of another form is refused.
        let mut other = NestedLayout::parse(super::super::tests::SEED)
            .unwrap()
            .to_indexing_map();
        other.results.swap(0, 1);
        assert!(NestedLayout::from_indexing_map(&other).is_none());
    }
}
