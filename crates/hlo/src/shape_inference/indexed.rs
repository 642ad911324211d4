//! Shapes of indexed reads and writes: dynamic slices and updates, gather, scatter.

use super::*;

impl<'a> Rules<'a> {
    /// Operands `first..first + rank` are integer scalars of one type.
    pub(super) fn start_indices(
        &self,
        first: usize,
        rank: usize,
        operand: &ArrayShape,
    ) -> Result<()> {
        let given = self.operands.len().saturating_sub(first);
        if given != rank {
            return Err(self.err(
                Site::Opcode,
                format!(
                    "expected {} for the operand {}, got {given}",
                    count(rank, "start index", "start indices"),
                    show(operand)
                ),
            ));
        }
        let mut index_type = None;
        for j in 0..rank {
            let index = self.array(first + j)?;
            if index.rank() != 0 || !index.element_type.is_int() {
                return Err(self.err(
                    Site::Operand(first + j),
                    format!(
                        "start index {j} must be an integer scalar, got {}",
                        show(index)
                    ),
                ));
            }
            match index_type {
                None => index_type = Some(index.element_type),
                Some(t) if t != index.element_type => {
                    return Err(self.err(
                        Site::Operand(first + j),
                        format!(
                            "start indices must all have one type, got {t} and {}",
                            index.element_type
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    pub(super) fn dynamic_slice(&self) -> Result<Shape> {
        self.at_least(1)?;
        let a = self.array(0)?;
        self.start_indices(1, a.rank(), a)?;
        let sizes = self.int_list("dynamic_slice_sizes")?;
        self.one_entry_per_dimension("dynamic_slice_sizes", sizes.len(), a)?;
        for (i, (&s, &d)) in sizes.iter().zip(&a.dims).enumerate() {
            if s < 0 || (d >= 0 && s > d) {
                return Err(self.err(
                    Site::Attribute("dynamic_slice_sizes"),
                    format!("slice size {s} of dimension {i} is out of range [0, {d}]"),
                ));
            }
        }
        Ok(array(a.element_type, sizes.to_vec(), Vec::new()))
    }

    pub(super) fn dynamic_update_slice(&self) -> Result<Shape> {
        self.at_least(2)?;
        let a = self.array(0)?;
        let update = self.array(1)?;
        if update.element_type != a.element_type {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "update has element type {} but the operand has {}",
                    update.element_type, a.element_type
                ),
            ));
        }
        if update.rank() != a.rank() {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "update {} does not have the rank of the operand {}",
                    show(update),
                    show(a)
                ),
            ));
        }
        if let Some(i) = (0..a.rank()).find(|&i| a.dims[i] >= 0 && update.dims[i] > a.dims[i]) {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "update {} is larger than the operand {} in dimension {i}",
                    show(update),
                    show(a)
                ),
            ));
        }
        self.start_indices(2, a.rank(), a)?;
        Ok(strip(a))
    }

    // ---- gather and scatter -------------------------------------------------------------

    /// The indices' bounds with the index vector dimension appended when it is implicit
    /// (`index_vector_dim` equal to the rank), and that dimension.
    pub(super) fn expanded_indices(&self, indices: &ArrayShape) -> Result<(Vec<i64>, usize)> {
        let index_vector_dim = self.int_attr("index_vector_dim")?;
        let Some(ivd) = usize::try_from(index_vector_dim)
            .ok()
            .filter(|&d| d <= indices.rank())
        else {
            return Err(self.err(
                Site::Attribute("index_vector_dim"),
                format!(
                    "index_vector_dim={index_vector_dim} is out of range for indices {} \
                     (it may be at most the rank {})",
                    show(indices),
                    indices.rank()
                ),
            ));
        };
        let mut expanded = indices.dims.clone();
        if ivd == indices.rank() {
            expanded.push(1);
        }
        Ok((expanded, ivd))
    }

    pub(super) fn integer_indices(&self, i: usize) -> Result<&'a ArrayShape> {
        let indices = self.array(i)?;
        if !indices.element_type.is_int() {
            return Err(self.err(
                Site::Operand(i),
                format!("indices type {} is not integer", show(indices)),
            ));
        }
        Ok(indices)
    }

    /// The batching dimensions of the operand (`operand_name`) and of the indices
    /// (`indices_name`): as many of each, disjoint from `excluded`, matching in size.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn batching_dims(
        &self,
        operand_name: &'static str,
        indices_name: &'static str,
        excluded_name: &str,
        excluded: &[usize],
        operand: &ArrayShape,
        indices: &ArrayShape,
        expanded: &[i64],
        ivd: usize,
    ) -> Result<Vec<usize>> {
        let operand_batching = self.sorted_dims_in_range(
            operand_name,
            self.opt_int_list(operand_name)?,
            operand.rank(),
            "operand",
        )?;
        if let Some(d) = operand_batching.iter().find(|d| excluded.contains(d)) {
            return Err(self.err(
                Site::Attribute(operand_name),
                format!("dimension {d} is in both {operand_name} and {excluded_name}"),
            ));
        }
        let indices_dims = self.opt_int_list(indices_name)?;
        let indices_batching =
            self.dims_in_range(indices_name, indices_dims, indices.rank(), "indices")?;
        if indices_batching.len() != operand_batching.len() {
            return Err(self.err(
                Site::Attribute(indices_name),
                format!(
                    "{indices_name}= has {} but {operand_name}= has {}",
                    count(indices_batching.len(), "entry", "entries"),
                    operand_batching.len()
                ),
            ));
        }
        for (&o, &i) in operand_batching.iter().zip(&indices_batching) {
            if i == ivd {
                return Err(self.err(
                    Site::Attribute(indices_name),
                    format!("dimension {i} in {indices_name} is the index_vector_dim"),
                ));
            }
            if operand.dims[o] != expanded[i] {
                return Err(self.err(
                    Site::Attribute(indices_name),
                    format!(
                        "batching dimension {o} of the operand has size {} but dimension {i} \
                         of the indices has size {}",
                        operand.dims[o], expanded[i]
                    ),
                ));
            }
        }
        Ok(operand_batching)
    }

    /// `map` (scatter_dims_to_operand_dims, start_index_map) has one entry per index
    /// vector component and names distinct operand dimensions.
    pub(super) fn index_map(
        &self,
        name: &'static str,
        expanded: &[i64],
        ivd: usize,
        operand: &ArrayShape,
    ) -> Result<()> {
        let map = self.int_list(name)?;
        let components = expanded[ivd];
        if i64::try_from(map.len()).ok() != Some(components) {
            return Err(self.err(
                Site::Attribute(name),
                format!(
                    "{name}= has {} but the index vector (dimension {ivd} of the indices) has {components}",
                    count(map.len(), "entry", "entries"),
                ),
            ));
        }
        self.dims_in_range(name, map, operand.rank(), "operand")?;
        Ok(())
    }

    pub(super) fn gather(&self) -> Result<Shape> {
        self.arity(2)?;
        let operand = self.array(0)?;
        let indices = self.integer_indices(1)?;
        let (expanded, ivd) = self.expanded_indices(indices)?;
        let offset_dims = self.int_list("offset_dims")?;
        let slice_sizes = self.int_list("slice_sizes")?;
        let output_rank = offset_dims.len() + expanded.len() - 1;
        let offset =
            self.sorted_dims_in_range("offset_dims", offset_dims, output_rank, "result")?;
        self.index_map("start_index_map", &expanded, ivd, operand)?;
        let collapsed = self.sorted_dims_in_range(
            "collapsed_slice_dims",
            self.int_list("collapsed_slice_dims")?,
            operand.rank(),
            "operand",
        )?;
        let batching = self.batching_dims(
            "operand_batching_dims",
            "start_indices_batching_dims",
            "collapsed_slice_dims",
            &collapsed,
            operand,
            indices,
            &expanded,
            ivd,
        )?;
        self.one_entry_per_dimension("slice_sizes", slice_sizes.len(), operand)?;
        let covered = offset.len() + collapsed.len() + batching.len();
        if covered != operand.rank() {
            return Err(self.err(
                Site::Attribute("offset_dims"),
                format!(
                    "offset_dims, collapsed_slice_dims and operand_batching_dims must together \
                     name the operand's {} dimensions, they name {covered}",
                    operand.rank()
                ),
            ));
        }
        for (i, (&s, &d)) in slice_sizes.iter().zip(&operand.dims).enumerate() {
            if s < 0 || (d >= 0 && s > d) {
                return Err(self.err(
                    Site::Attribute("slice_sizes"),
                    format!("slice size {s} of dimension {i} is out of range [0, {d}]"),
                ));
            }
        }
        for &d in collapsed.iter().chain(&batching) {
            if slice_sizes[d] > 1 {
                return Err(self.err(
                    Site::Attribute("slice_sizes"),
                    format!(
                        "dimension {d} is collapsed or a batching dimension, so its slice size \
                         must be 0 or 1, got {}",
                        slice_sizes[d]
                    ),
                ));
            }
        }
        let mut window_sizes = (0..operand.rank())
            .filter(|d| !collapsed.contains(d) && !batching.contains(d))
            .map(|d| slice_sizes[d]);
        let mut batch_sizes = (0..expanded.len())
            .filter(|&d| d != ivd)
            .map(|d| expanded[d]);
        let dims = (0..output_rank)
            .map(|i| {
                if offset.contains(&i) {
                    window_sizes.next()
                } else {
                    batch_sizes.next()
                }
                .unwrap_or(0)
            })
            .collect();
        Ok(array(operand.element_type, dims, Vec::new()))
    }

    pub(super) fn scatter(&self) -> Result<Shape> {
        let n = self.operands.len();
        if n < 3 || n.is_multiple_of(2) {
            return Err(self.err(
                Site::Opcode,
                format!("expected k operands, the scatter indices and k updates, got {n} operands"),
            ));
        }
        let k = (n - 1) / 2;
        let operand = self.array(0)?;
        let indices = self.integer_indices(k)?;
        let (expanded, ivd) = self.expanded_indices(indices)?;
        for i in 0..k {
            let other = self.array_like_first(i, operand, "operand")?;
            let updates = self.array(k + 1 + i)?;
            if updates.element_type != other.element_type {
                return Err(self.err(
                    Site::Operand(k + 1 + i),
                    format!(
                        "updates {i} have element type {} but operand {i} has {}",
                        updates.element_type, other.element_type
                    ),
                ));
            }
        }
        let window_dims = self.int_list("update_window_dims")?;
        let inserted = self.sorted_dims_in_range(
            "inserted_window_dims",
            self.int_list("inserted_window_dims")?,
            operand.rank(),
            "operand",
        )?;
        let batching = self.batching_dims(
            "input_batching_dims",
            "scatter_indices_batching_dims",
            "inserted_window_dims",
            &inserted,
            operand,
            indices,
            &expanded,
            ivd,
        )?;
        let covered = window_dims.len() + inserted.len() + batching.len();
        if covered != operand.rank() {
            return Err(self.err(
                Site::Attribute("update_window_dims"),
                format!(
                    "update_window_dims, inserted_window_dims and input_batching_dims must \
                     together name the operand's {} dimensions, they name {covered}",
                    operand.rank()
                ),
            ));
        }
        self.index_map("scatter_dims_to_operand_dims", &expanded, ivd, operand)?;
        let max_window: Vec<i64> = (0..operand.rank())
            .filter(|d| !inserted.contains(d) && !batching.contains(d))
            .map(|d| operand.dims[d])
            .collect();
        let scatter_sizes: Vec<i64> = (0..expanded.len())
            .filter(|&d| d != ivd)
            .map(|d| expanded[d])
            .collect();
        let updates_rank = scatter_sizes.len() + window_dims.len();
        for i in 0..k {
            let site = Site::Operand(k + 1 + i);
            let updates = self.array(k + 1 + i)?;
            if updates.rank() != updates_rank {
                return Err(self.err(
                    site,
                    format!(
                        "updates {i} {} must have rank {updates_rank}",
                        show(updates)
                    ),
                ));
            }
            let window = self.sorted_dims_in_range(
                "update_window_dims",
                window_dims,
                updates_rank,
                "updates",
            )?;
            for (&w, &max) in window.iter().zip(&max_window) {
                if max >= 0 && updates.dims[w] > max {
                    return Err(self.err(
                        site,
                        format!(
                            "updates {i} {}: window dimension {w} has size {} but the operand \
                             dimension it updates has {max}",
                            show(updates),
                            updates.dims[w]
                        ),
                    ));
                }
            }
            let scatter_dims = (0..updates_rank).filter(|d| !window.contains(d));
            for (d, &expected) in scatter_dims.zip(&scatter_sizes) {
                if updates.dims[d] != expected {
                    return Err(self.err(
                        site,
                        format!(
                            "updates {i} {}: scatter dimension {d} has size {} but the indices \
                             give {expected}",
                            show(updates),
                            updates.dims[d]
                        ),
                    ));
                }
            }
        }
        let results: Vec<Shape> = self.operands[..k]
            .iter()
            .map(|s| s.without_layout())
            .collect();
        Ok(if k == 1 {
            strip(operand)
        } else {
            Shape::Tuple(results)
        })
    }

    // ---- ops whose result is written, not inferred --------------------------------------
}
