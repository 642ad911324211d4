//! Nested layouts (seed 004): how a vector is spread over the GPU hierarchy —
//! subgroups, batches, outers, threads, elements — as IREE's
//! `#iree_vector_ext.nested_layout` says it, written here `#xla_gpu.nested_layout<...>`.
//!
//! Each level is a list of tile counts, one per vector dimension; the vector's extent along
//! dimension `i` is the product of the five levels' counts there. Subgroups and threads
//! also have strides: `virtual_subgroup_id[i] = (subgroup_id / subgroup_strides[i]) %
//! subgroup_tile[i]` (threads alike), and a stride of 0 means the dimension is not
//! distributed at that level (every subgroup or thread holds index 0 there).
//!
//! [`NestedLayout::parse`] reads the text (either spelling), [`NestedLayout::verify`] states
//! what a layout must satisfy, and [`NestedLayout::explain`] prints the seed's view of it:
//! the conceptual vector, each subgroup's and thread's part, and the order of subgroup ids.

mod map;

use std::fmt::Write as _;

/// At most this many vector dimensions: the conceptual view has five per dimension.
pub const MAX_RANK: usize = 7;
/// At most this many subgroups or threads per subgroup (products of their tiles): the
/// explanation lists each one.
pub const MAX_IDS: i64 = 1 << 20;

/// The levels' names, in the seed's order (tiles, then strides).
const FIELDS: [&str; 7] = [
    "subgroup_tile",
    "batch_tile",
    "outer_tile",
    "thread_tile",
    "element_tile",
    "subgroup_strides",
    "thread_strides",
];

/// A nested layout (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NestedLayout {
    pub subgroup_tile: Vec<i64>,
    pub batch_tile: Vec<i64>,
    pub outer_tile: Vec<i64>,
    pub thread_tile: Vec<i64>,
    pub element_tile: Vec<i64>,
    pub subgroup_strides: Vec<i64>,
    pub thread_strides: Vec<i64>,
}

/// A problem with a layout's text or its values, at a byte offset of the text when it has
/// one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError {
    pub offset: usize,
    pub message: String,
}

fn error(offset: usize, message: impl Into<String>) -> LayoutError {
    LayoutError {
        offset,
        message: message.into(),
    }
}

impl NestedLayout {
    /// Reads `#xla_gpu.nested_layout<f = [..], ...>` (or `#iree_vector_ext.nested_layout`),
    /// with the seven fields named and in the seed's order. Values are only parsed here;
    /// [`NestedLayout::verify`] checks them.
    pub fn parse(text: &str) -> Result<NestedLayout, LayoutError> {
        let mut p = Cursor { text, at: 0 };
        p.skip_space();
        let rest = &text[p.at..];
        let prefix = ["#xla_gpu.nested_layout", "#iree_vector_ext.nested_layout"]
            .into_iter()
            .find(|prefix| rest.starts_with(prefix))
            .ok_or_else(|| {
                error(
                    p.at,
                    "expected '#xla_gpu.nested_layout<' (or '#iree_vector_ext.nested_layout<')",
                )
            })?;
        p.at += prefix.len();
        p.expect("<")?;
        let mut layout = NestedLayout::default();
        for (k, (field, list)) in FIELDS.iter().zip(layout.lists_mut()).enumerate() {
            if k > 0 {
                p.expect(",")?;
            }
            p.skip_space();
            if !text[p.at..].starts_with(field) {
                return Err(error(
                    p.at,
                    format!(
                        "expected '{field}' (the fields in order: {})",
                        FIELDS.join(", ")
                    ),
                ));
            }
            p.at += field.len();
            p.expect("=")?;
            *list = p.list()?;
        }
        p.expect(">")?;
        p.skip_space();
        if p.at != text.len() {
            return Err(error(p.at, "unexpected text after the layout"));
        }
        Ok(layout)
    }

    /// The seven lists, in the seed's order ([`FIELDS`]).
    fn lists(&self) -> [&[i64]; 7] {
        [
            &self.subgroup_tile,
            &self.batch_tile,
            &self.outer_tile,
            &self.thread_tile,
            &self.element_tile,
            &self.subgroup_strides,
            &self.thread_strides,
        ]
    }

    /// The seven lists to fill, in the seed's order ([`FIELDS`]).
    fn lists_mut(&mut self) -> [&mut Vec<i64>; 7] {
        [
            &mut self.subgroup_tile,
            &mut self.batch_tile,
            &mut self.outer_tile,
            &mut self.thread_tile,
            &mut self.element_tile,
            &mut self.subgroup_strides,
            &mut self.thread_strides,
        ]
    }

    /// The five tile levels, outermost first.
    fn tiles(&self) -> [&[i64]; 5] {
        [
            &self.subgroup_tile,
            &self.batch_tile,
            &self.outer_tile,
            &self.thread_tile,
            &self.element_tile,
        ]
    }

    /// The vector shape the layout covers: per dimension, the product of its five tiles
    /// (saturating; [`NestedLayout::verify`] reports products past 2^63).
    pub fn shape(&self) -> Vec<i64> {
        (0..self.rank())
            .map(|d| {
                self.tiles()
                    .iter()
                    .fold(1i64, |n, level| n.saturating_mul(level[d]))
            })
            .collect()
    }

    pub fn rank(&self) -> usize {
        self.subgroup_tile.len()
    }

    /// Checks the layout: every list has the same rank (1 to [`MAX_RANK`]), tiles are
    /// positive, strides are not negative, every product fits in 64 bits, each dimension's
    /// tiles multiply to `vector_shape` (when given), and no two virtual thread ids (nor
    /// subgroup ids) of distributed dimensions name the same thread (subgroup); with
    /// `subgroup_size`, thread ids stay below it.
    pub fn verify(
        &self,
        vector_shape: Option<&[i64]>,
        subgroup_size: Option<i64>,
    ) -> Result<(), String> {
        let rank = self.rank();
        if rank == 0 || rank > MAX_RANK {
            return Err(format!(
                "a nested layout has 1 to {MAX_RANK} dimensions, this one {rank}"
            ));
        }
        for (name, list) in FIELDS.iter().zip(self.lists()) {
            if list.len() != rank {
                return Err(format!(
                    "{name} has {} entries, subgroup_tile {rank}",
                    list.len()
                ));
            }
            let strides = name.ends_with("strides");
            if let Some(&v) = list.iter().find(|&&v| v < 0 || (!strides && v == 0)) {
                let want = if strides { "not negative" } else { "positive" };
                return Err(format!("{name} has {v}; its entries must be {want}"));
            }
        }
        for d in 0..rank {
            let extent = self
                .tiles()
                .iter()
                .try_fold(1i64, |n, level| n.checked_mul(level[d]))
                .ok_or_else(|| format!("the tiles of dimension {d} multiply past 2^63"))?;
            if let Some(shape) = vector_shape {
                if shape.len() != rank {
                    return Err(format!(
                        "the vector has {} dimensions, the layout {rank}",
                        shape.len()
                    ));
                }
                if extent != shape[d] {
                    return Err(format!(
                        "the tiles of dimension {d} multiply to {extent}, but the vector has {}",
                        shape[d]
                    ));
                }
            }
        }
        for (what, tile) in [
            ("thread", &self.thread_tile),
            ("subgroup", &self.subgroup_tile),
        ] {
            tile.iter()
                .try_fold(1i64, |n, &t| n.checked_mul(t))
                .filter(|&n| n <= MAX_IDS)
                .ok_or_else(|| format!("the {what} tiles multiply past {MAX_IDS}"))?;
        }
        let threads = distinct_ids("thread", &self.thread_tile, &self.thread_strides)?;
        distinct_ids("subgroup", &self.subgroup_tile, &self.subgroup_strides)?;
        if let Some(size) = subgroup_size
            && threads > size
        {
            return Err(format!(
                "thread ids reach {}, past the subgroup size {size}",
                threads - 1
            ));
        }
        Ok(())
    }

    /// The conceptual view `vector<[s..]x[b..]x[o..]x[t..]x[e..]>`.
    pub fn conceptual_view(&self) -> String {
        self.view(&[0, 1, 2, 3, 4])
    }

    /// `vector<...>` of the levels `levels` (indices into [`NestedLayout::tiles`]).
    fn view(&self, levels: &[usize]) -> String {
        let tiles = self.tiles();
        let groups: Vec<String> = levels
            .iter()
            .map(|&l| format!("[{}]", join(tiles[l], "x")))
            .collect();
        format!("vector<{}>", groups.join("x"))
    }

    /// The shape of the vector one thread holds: batch × outer × element per dimension.
    pub fn thread_shape(&self) -> Vec<i64> {
        (0..self.rank())
            .map(|d| self.batch_tile[d] * self.outer_tile[d] * self.element_tile[d])
            .collect()
    }

    /// The virtual ids of subgroup or thread `id` along each dimension.
    fn virtual_ids(id: i64, tile: &[i64], strides: &[i64]) -> Vec<i64> {
        tile.iter()
            .zip(strides)
            .map(|(&t, &s)| if s == 0 { 0 } else { (id / s) % t })
            .collect()
    }

    /// The subgroup (or thread) id of each virtual id, in row-major order of the virtual
    /// ids: `sum_i(strides[i] * v[i]) % prod_i(tile[i])`.
    fn ids_in_order(tile: &[i64], strides: &[i64]) -> Vec<(Vec<i64>, i64)> {
        let count: i64 = tile.iter().product();
        (0..count)
            .map(|linear| {
                let mut v = vec![0; tile.len()];
                let mut rest = linear;
                for d in (0..tile.len()).rev() {
                    v[d] = rest % tile[d];
                    rest /= tile[d];
                }
                let id = v.iter().zip(strides).map(|(a, b)| a * b).sum::<i64>() % count;
                (v, id)
            })
            .collect()
    }

    /// The seed's explanation of the layout on a vector of `shape` (verified first):
    /// the conceptual view, the per-thread shape, the order of subgroup ids (folded `mod
    /// subgroups` when given), then what each subgroup and each thread of a subgroup holds.
    pub fn explain(
        &self,
        shape: &[i64],
        subgroups: Option<i64>,
        subgroup_size: Option<i64>,
    ) -> Result<String, String> {
        self.verify(Some(shape), subgroup_size)?;
        let mut out = String::new();
        let full = self.conceptual_view();
        let _ = writeln!(out, "vector: vector<{}>", join(shape, "x"));
        let _ = writeln!(out, "conceptual view: {full}");
        let _ = writeln!(
            out,
            "per thread: {} (conceptual view {})",
            format_args!("vector<{}>", join(&self.thread_shape(), "x")),
            self.view(&[1, 2, 4])
        );
        let _ = writeln!(out, "indexing map: {}", self.to_indexing_map().simplified());
        let order = Self::ids_in_order(&self.subgroup_tile, &self.subgroup_strides);
        let virtual_ids: Vec<String> = order
            .iter()
            .map(|(v, _)| v.iter().map(|i| format!("[{i}]")).collect::<String>())
            .collect();
        let _ = writeln!(out, "virtual subgroup ids: {}", virtual_ids.join(", "));
        let ids: Vec<i64> = order.iter().map(|&(_, id)| id).collect();
        let _ = writeln!(out, "subgroup ids: {}", join(&ids, ", "));
        let used = ids.len() as i64;
        if let Some(n) = subgroups {
            let folded: Vec<i64> = ids.iter().map(|id| id % n).collect();
            let _ = writeln!(
                out,
                "subgroup ids mod {n} (the hardware's subgroups): {}",
                join(&folded, ", ")
            );
        }
        let per_subgroup = self.view(&[1, 2, 3, 4]);
        for s in 0..subgroups.unwrap_or(used) {
            let v = Self::virtual_ids(s, &self.subgroup_tile, &self.subgroup_strides);
            let _ = writeln!(
                out,
                "subgroup{s} : {per_subgroup}\nfrom {full}{}",
                slice(&v, &self.subgroup_strides, 0, self.rank())
            );
        }
        let per_thread = self.view(&[1, 2, 4]);
        let threads: i64 = self.thread_tile.iter().product();
        for t in 0..threads {
            let v = Self::virtual_ids(t, &self.thread_tile, &self.thread_strides);
            let _ = writeln!(
                out,
                "thread{t} : {per_thread}\nfrom {per_subgroup}{}",
                slice(&v, &self.thread_strides, 2, self.rank())
            );
        }
        Ok(out)
    }
}

/// The canonical text: `#xla_gpu.nested_layout<subgroup_tile = [..], ...>`, the fields in
/// the seed's order.
impl std::fmt::Display for NestedLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fields: Vec<String> = FIELDS
            .iter()
            .zip(self.lists())
            .map(|(name, list)| format!("{name} = [{}]", join(list, ", ")))
            .collect();
        write!(f, "#xla_gpu.nested_layout<{}>", fields.join(", "))
    }
}

/// `[:,..,v0,v1,..,:]`: `ids` at the level `level` (0-based among the levels shown) of a view
/// of `rank`-wide levels, ':' elsewhere and where the stride is 0 (not distributed).
fn slice(ids: &[i64], strides: &[i64], level: usize, rank: usize) -> String {
    let levels = if level == 0 { 5 } else { 4 };
    let mut parts = Vec::with_capacity(levels * rank);
    for l in 0..levels {
        for d in 0..rank {
            parts.push(if l == level && strides[d] != 0 {
                ids[d].to_string()
            } else {
                ":".to_string()
            });
        }
    }
    format!("[{}]", parts.join(","))
}

/// Checks that distinct virtual ids of the distributed dimensions give distinct ids; returns
/// one past the largest id.
fn distinct_ids(what: &str, tile: &[i64], strides: &[i64]) -> Result<i64, String> {
    let mut seen = std::collections::HashSet::new();
    let count = tile
        .iter()
        .zip(strides)
        .filter(|(_, s)| **s != 0)
        .try_fold(1i64, |n, (t, _)| n.checked_mul(*t))
        .filter(|&n| n <= MAX_IDS)
        .ok_or_else(|| format!("more than {MAX_IDS} distributed {what} ids"))?;
    let mut largest = 0;
    for linear in 0..count {
        let mut rest = linear;
        let mut id = 0i64;
        for d in (0..tile.len()).rev().filter(|&d| strides[d] != 0) {
            let v = rest % tile[d];
            rest /= tile[d];
            id = v
                .checked_mul(strides[d])
                .and_then(|x| id.checked_add(x))
                .ok_or_else(|| format!("{what} ids overflow 64 bits"))?;
        }
        if !seen.insert(id) {
            return Err(format!(
                "two {what}s share {what} id {id}: the {what} strides overlap"
            ));
        }
        largest = largest.max(id);
    }
    largest
        .checked_add(1)
        .ok_or_else(|| format!("{what} ids overflow 64 bits"))
}

fn join(values: &[i64], sep: &str) -> String {
    values
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

/// A position in the text being parsed.
struct Cursor<'t> {
    text: &'t str,
    at: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        while self.text[self.at..].starts_with(char::is_whitespace) {
            self.at += self.text[self.at..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), LayoutError> {
        self.skip_space();
        if self.text[self.at..].starts_with(token) {
            self.at += token.len();
            Ok(())
        } else {
            Err(error(self.at, format!("expected '{token}'")))
        }
    }

    /// `[n, n, ...]` of 64-bit integers (possibly negative, checked later).
    fn list(&mut self) -> Result<Vec<i64>, LayoutError> {
        self.expect("[")?;
        let mut out = Vec::new();
        self.skip_space();
        if self.text[self.at..].starts_with(']') {
            self.at += 1;
            return Ok(out);
        }
        loop {
            self.skip_space();
            let start = self.at;
            let bytes = self.text.as_bytes();
            if bytes.get(self.at) == Some(&b'-') {
                self.at += 1;
            }
            while bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
                self.at += 1;
            }
            let number = &self.text[start..self.at];
            let value = number.parse::<i64>().map_err(|_| {
                error(
                    start,
                    format!(
                        "expected a 64-bit integer, found '{}'",
                        self.text[start..].chars().take(20).collect::<String>()
                    ),
                )
            })?;
            out.push(value);
            if out.len() > MAX_RANK {
                return Err(error(start, format!("more than {MAX_RANK} entries")));
            }
            self.skip_space();
            match self.text.as_bytes().get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(out);
                }
                _ => return Err(error(self.at, "expected ',' or ']'")),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const SEED: &str = "#iree_vector_ext.nested_layout<subgroup_tile = [2, 1], batch_tile = [2, 4], \
        outer_tile = [1, 1], thread_tile = [16, 4], element_tile = [1, 4], \
        subgroup_strides = [1, 0], thread_strides = [1, 16]>";

    #[test]
    fn the_seeds_layout_parses_and_verifies() {
        let l = NestedLayout::parse(SEED).unwrap();
        l.verify(Some(&[64, 64]), Some(64)).unwrap();
        assert_eq!(
            l.conceptual_view(),
            "vector<[2x1]x[2x4]x[1x1]x[16x4]x[1x4]>"
        );
        assert_eq!(l.thread_shape(), [2, 16]);
        assert!(l.verify(Some(&[64, 64]), Some(32)).is_err());
    }

    #[test]
    fn the_seeds_subgroup_order() {
        let order = NestedLayout::ids_in_order(&[4, 2], &[1, 4]);
        let ids: Vec<i64> = order.iter().map(|&(_, id)| id).collect();
        assert_eq!(ids, [0, 4, 1, 5, 2, 6, 3, 7]);
    }

    #[test]
    fn hostile_values_are_errors() {
        let with = |tiles: &str| {
            NestedLayout::parse(&format!(
                "#xla_gpu.nested_layout<subgroup_tile = {tiles}, batch_tile = {tiles}, \
                 outer_tile = {tiles}, thread_tile = {tiles}, element_tile = {tiles}, \
                 subgroup_strides = {tiles}, thread_strides = {tiles}>"
            ))
        };
        assert!(with("[0]").unwrap().verify(None, None).is_err());
        assert!(with("[]").unwrap().verify(None, None).is_err());
        assert!(with("[4294967296]").unwrap().verify(None, None).is_err());
        assert!(with("[1, 1, 1, 1, 1, 1, 1, 1]").is_err());
        assert!(with("[99999999999999999999]").is_err());
        assert!(with("[-1]").unwrap().verify(None, None).is_err());
        // A stride whose largest id is i64::MAX: one past it overflows.
        let huge = NestedLayout::parse(
            "#xla_gpu.nested_layout<subgroup_tile = [2], batch_tile = [1], outer_tile = [1], \
             thread_tile = [32], element_tile = [1], subgroup_strides = [9223372036854775807], \
             thread_strides = [1]>",
        )
        .unwrap();
        assert!(huge.verify(None, None).unwrap_err().contains("overflow"));
    }
}
