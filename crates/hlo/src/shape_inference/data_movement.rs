//! Shapes of data movement: transpose, reverse, slice, pad, concatenate.

use super::*;

impl<'a> Rules<'a> {
    pub(super) fn transpose(&self) -> Result<Shape> {
        self.arity(1)?;
        let a = self.array(0)?;
        let dims = self.int_list("dimensions")?;
        self.one_entry_per_dimension("dimensions", dims.len(), a)?;
        let perm = self.dims_in_range("dimensions", dims, a.rank(), "operand")?;
        Ok(array(
            a.element_type,
            perm.iter().map(|&p| a.dims[p]).collect(),
            perm.iter().map(|&p| a.is_dynamic_dim(p)).collect(),
        ))
    }

    pub(super) fn reverse(&self) -> Result<Shape> {
        self.arity(1)?;
        let a = self.array(0)?;
        let dims = self.int_list("dimensions")?;
        self.dims_in_range("dimensions", dims, a.rank(), "operand")?;
        Ok(strip(a))
    }

    pub(super) fn slice(&self) -> Result<Shape> {
        self.arity(1)?;
        let a = self.array(0)?;
        let AttrValue::Slice(slices) = self.attr("slice")? else {
            return Err(self.written_as("slice", "{[start:limit:stride], ...}"));
        };
        self.one_entry_per_dimension("slice", slices.len(), a)?;
        let mut dims = Vec::with_capacity(slices.len());
        let mut dynamic = Vec::with_capacity(slices.len());
        for (i, s) in slices.iter().enumerate() {
            let bad = |message: String| Err(self.err(Site::Attribute("slice"), message));
            if s.stride <= 0 {
                return bad(format!(
                    "stride {} of dimension {i} must be positive",
                    s.stride
                ));
            }
            if s.start < 0 {
                return bad(format!("start {} of dimension {i} is negative", s.start));
            }
            if s.start > s.limit {
                return bad(format!(
                    "start {} of dimension {i} exceeds its limit {}",
                    s.start, s.limit
                ));
            }
            if s.limit > a.dims[i] {
                return bad(format!(
                    "limit {} of dimension {i} exceeds its size {}",
                    s.limit, a.dims[i]
                ));
            }
            let (start, limit, stride) = (
                i128::from(s.start),
                i128::from(s.limit),
                i128::from(s.stride),
            );
            // 0 <= start <= limit, so the size fits in i64.
            dims.push(((limit - start + stride - 1) / stride) as i64);
            // A dynamic dimension stays dynamic only where the slice takes all of it.
            let whole = s.start == 0 && s.stride == 1 && s.limit == a.dims[i];
            dynamic.push(a.is_dynamic_dim(i) && whole);
        }
        Ok(array(a.element_type, dims, dynamic))
    }

    pub(super) fn pad(&self) -> Result<Shape> {
        self.arity(2)?;
        let a = self.array(0)?;
        let value = self.array(1)?;
        if value.rank() != 0 || value.element_type != a.element_type {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "padding value must be a scalar of type {}, got {}",
                    a.element_type,
                    show(value)
                ),
            ));
        }
        let AttrValue::Padding(padding) = self.attr("padding")? else {
            return Err(self.written_as("padding", "low_high[_interior] per dimension"));
        };
        self.one_entry_per_dimension("padding", padding.len(), a)?;
        let mut dims = Vec::with_capacity(padding.len());
        for (i, (p, &d)) in padding.iter().zip(&a.dims).enumerate() {
            if p.interior < 0 {
                return Err(self.err(
                    Site::Attribute("padding"),
                    format!(
                        "interior padding {} of dimension {i} is negative",
                        p.interior
                    ),
                ));
            }
            if d < 0 {
                dims.push(UNBOUNDED_SIZE);
                continue;
            }
            let d = i128::from(d);
            let size = i128::from(p.low)
                + i128::from(p.high)
                + d
                + (d - 1).max(0) * i128::from(p.interior);
            let Ok(size) = i64::try_from(size) else {
                return Err(self.err(
                    Site::Attribute("padding"),
                    format!("padding makes dimension {i} too large"),
                ));
            };
            if size < 0 {
                return Err(self.err(
                    Site::Attribute("padding"),
                    format!("padding gives dimension {i} the negative size {size}"),
                ));
            }
            dims.push(size);
        }
        Ok(array(a.element_type, dims, dynamic_of(a)))
    }

    pub(super) fn concatenate(&self) -> Result<Shape> {
        self.at_least(1)?;
        let first = self.array(0)?;
        let d = self.one_dimension(first.rank())?;
        let mut total: i128 = 0;
        let mut unbounded = false;
        let mut dynamic = dynamic_of(first);
        for i in 0..self.operands.len() {
            let b = self.array(i)?;
            if b.rank() != first.rank() {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} {} does not have the rank of operand 0 {}",
                        show(b),
                        show(first)
                    ),
                ));
            }
            if b.element_type != first.element_type {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} has element type {} but operand 0 has {}",
                        b.element_type, first.element_type
                    ),
                ));
            }
            if let Some(j) = (0..b.rank()).find(|&j| j != d && b.dims[j] != first.dims[j]) {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} {} differs from operand 0 {} in dimension {j}, \
                         which is not the concatenated dimension {d}",
                        show(b),
                        show(first)
                    ),
                ));
            }
            dynamic[d] |= b.is_dynamic_dim(d);
            if b.dims[d] < 0 {
                unbounded = true;
            } else {
                total += i128::from(b.dims[d]);
            }
        }
        let mut out = first.dims.clone();
        out[d] = if unbounded {
            UNBOUNDED_SIZE
        } else {
            i64::try_from(total).map_err(|_| {
                self.err(
                    Site::Opcode,
                    format!("the concatenated dimension {d} is too large"),
                )
            })?
        };
        Ok(array(first.element_type, out, dynamic))
    }

    // ---- reductions ---------------------------------------------------------------------
}
