//! Checks of shapes that the instruction writes rather than its operands decide:
//! broadcast, reshape, convert, bitcast-convert, bitcast, iota, constant, and dot (whose
//! element type is the written one).

use super::*;

impl<'a> Rules<'a> {
    /// The written result has the operand's element type.
    fn keeps_element_type(&self, result: &ArrayShape, a: &ArrayShape) -> Result<()> {
        if result.element_type == a.element_type {
            return Ok(());
        }
        Err(self.err(
            Site::Shape,
            format!(
                "result {} does not have the element type of the operand {}",
                show(result),
                show(a)
            ),
        ))
    }

    /// The written result has as many elements as the operand (when both counts are known).
    fn keeps_element_count(&self, result: &ArrayShape, a: &ArrayShape) -> Result<()> {
        match (element_count(result), element_count(a)) {
            (Some(m), Some(n)) if m != n => Err(self.err(
                Site::Shape,
                format!(
                    "result {} has {m} elements but the operand {} has {n}",
                    show(result),
                    show(a)
                ),
            )),
            _ => Ok(()),
        }
    }

    pub(super) fn broadcast(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        // As in XLA's parser, a scalar operand may leave `dimensions={}` out.
        let dims = if a.rank() == 0 {
            self.opt_int_list("dimensions")?
        } else {
            self.int_list("dimensions")?
        };
        self.one_entry_per_dimension("dimensions", dims.len(), a)?;
        let mapped = self.dims_in_range("dimensions", dims, result.rank(), "result")?;
        self.keeps_element_type(result, a)?;
        for (i, &d) in mapped.iter().enumerate() {
            if result.dims[d] != a.dims[i] {
                return Err(self.err(
                    Site::Shape,
                    format!(
                        "result {} does not match operand {}: operand dimension {i} (size {}) \
                         maps to result dimension {d} (size {})",
                        show(result),
                        show(a),
                        a.dims[i],
                        result.dims[d]
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn reshape(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        self.keeps_element_type(result, a)?;
        self.keeps_element_count(result, a)
    }

    pub(super) fn convert(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        if result.dims != a.dims {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} does not have the dimensions of the operand {}",
                    show(result),
                    show(a)
                ),
            ));
        }
        for (site, t) in [
            (Site::Operand(0), a.element_type),
            (Site::Shape, result.element_type),
        ] {
            if !t.is_array_element() {
                return Err(self.err(site, format!("cannot convert {t} values")));
            }
        }
        Ok(())
    }

    pub(super) fn bitcast_convert(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        let (from, to) = (a.element_type, result.element_type);
        let (from_bits, to_bits) = (from.bit_width(), to.bit_width());
        if from_bits == 0 || to_bits == 0 {
            return Err(self.err(
                Site::Shape,
                format!("cannot bitcast-convert {from} to {to}"),
            ));
        }
        let mut expected = a.dims.clone();
        let rule = if from_bits == to_bits {
            String::new()
        } else if from_bits > to_bits {
            let ratio = from_bits / to_bits;
            expected.push(i64::from(ratio));
            format!(": converting to the narrower {to} adds a minor dimension of size {ratio}")
        } else {
            let ratio = to_bits / from_bits;
            if a.dims.last() != Some(&i64::from(ratio)) {
                return Err(self.err(
                    Site::Operand(0),
                    format!(
                        "converting {} to the wider {to} needs a minor dimension of size {ratio}",
                        show(a)
                    ),
                ));
            }
            expected.pop();
            format!(": converting to the wider {to} removes the minor dimension of size {ratio}")
        };
        if result.dims != expected {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} does not match operand {}{rule}",
                    show(result),
                    show(a)
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn bitcast(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        let (Some(m), Some(n)) = (element_count(result), element_count(a)) else {
            return Ok(());
        };
        if result.element_type == a.element_type {
            return self.keeps_element_count(result, a);
        }
        let bits = |count: i128, t: PrimitiveType| count.checked_mul(i128::from(t.bit_width()));
        if let (Some(mb), Some(nb)) = (bits(m, result.element_type), bits(n, a.element_type))
            && mb != nb
        {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} has {mb} bits but the operand {} has {nb}",
                    show(result),
                    show(a)
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn iota(&self, written: &Shape) -> Result<()> {
        self.arity(0)?;
        let result = self.result_array(written)?;
        let dim = self.int_attr("iota_dimension")?;
        if usize::try_from(dim).map_or(true, |d| d >= result.rank()) {
            return Err(self.err(
                Site::Attribute("iota_dimension"),
                format!(
                    "iota_dimension {dim} is out of range for result of rank {}",
                    result.rank()
                ),
            ));
        }
        if !result.element_type.is_array_element() || result.element_type == PrimitiveType::Pred {
            return Err(self.err(
                Site::Shape,
                format!("result type {} is not numeric", show(result)),
            ));
        }
        Ok(())
    }

    pub(super) fn constant(&self, written: &Shape) -> Result<()> {
        self.arity(0)?;
        let Payload::Literal(literal) = &self.instr.payload else {
            return Err(self.err(Site::Opcode, "missing literal"));
        };
        if !literal_fits(literal, written) {
            return Err(self.err(
                Site::Shape,
                format!(
                    "literal {literal} does not have the shape {}",
                    written.without_layout()
                ),
            ));
        }
        Ok(())
    }
}

fn literal_fits(literal: &Literal, shape: &Shape) -> bool {
    match (literal, shape) {
        (Literal::Array(l), Shape::Array(a)) => {
            l.dims == a.dims && element_count(a).is_some_and(|n| n == l.values.len() as i128)
        }
        (Literal::Tuple(ls), Shape::Tuple(ss)) => {
            ls.len() == ss.len() && ls.iter().zip(ss).all(|(l, s)| literal_fits(l, s))
        }
        _ => false,
    }
}

impl Rules<'_> {
    /// `dot`: batch and contracted dimensions pair up, in order, with equal sizes; the
    /// result has the batch dimensions, then the left operand's others, then the right
    /// operand's (`crate::dot`). Its element type is the written one (XLA's preferred
    /// element type), of the operands' kind.
    pub(super) fn dot(&self, written: &Shape) -> Result<()> {
        self.arity(2)?;
        let (lhs, rhs) = (self.array(0)?, self.array(1)?);
        let result = self.result_array(written)?;
        let pairs = [
            ("lhs_batch_dims", "rhs_batch_dims", "batch"),
            (
                "lhs_contracting_dims",
                "rhs_contracting_dims",
                "contracting",
            ),
        ];
        for (left, right, what) in pairs {
            let l = self.dims_in_range(left, self.opt_int_list(left)?, lhs.rank(), "lhs")?;
            let r = self.dims_in_range(right, self.opt_int_list(right)?, rhs.rank(), "rhs")?;
            if l.len() != r.len() {
                return Err(self.err(
                    Site::Attribute(right),
                    format!(
                        "{} lhs {what} dimensions but {} rhs ones: they pair up",
                        l.len(),
                        r.len()
                    ),
                ));
            }
            if let Some((a, b)) = l
                .iter()
                .copied()
                .zip(r.iter().copied())
                .find(|&(a, b)| lhs.dims[a] != rhs.dims[b])
            {
                return Err(self.err(
                    Site::Attribute(right),
                    format!(
                        "{what} dimension {a} of lhs has size {} but dimension {b} of rhs {}",
                        lhs.dims[a], rhs.dims[b]
                    ),
                ));
            }
        }
        let dims = crate::dot::DotDimensions::of(self.instr).unwrap_or_else(|| unreachable!());
        for (side, batch, contracting) in [
            ("lhs", &dims.lhs_batch, &dims.lhs_contracting),
            ("rhs", &dims.rhs_batch, &dims.rhs_contracting),
        ] {
            if let Some(d) = batch.iter().find(|d| contracting.contains(d)) {
                return Err(self.err(
                    Site::Opcode,
                    format!("dimension {d} of {side} is both a batch and a contracting one"),
                ));
            }
        }
        let kind = |t: crate::primitive::PrimitiveType| (t.is_float(), t.is_int());
        if kind(result.element_type) != kind(lhs.element_type)
            || kind(lhs.element_type) != kind(rhs.element_type)
        {
            return Err(self.err(
                Site::Shape,
                format!(
                    "operands of {} and {} cannot produce {}",
                    lhs.element_type, rhs.element_type, result.element_type
                ),
            ));
        }
        let expected = dims.result_dims(&lhs.dims, &rhs.dims);
        if result.dims != expected {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} does not have the dimensions {} (batch, lhs's others, rhs's others)",
                    written.without_layout(),
                    int_list_text(&expected)
                ),
            ));
        }
        Ok(())
    }
}
