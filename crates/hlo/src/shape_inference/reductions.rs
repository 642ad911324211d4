//! Shapes of reductions and sorts: reduce, reduce-window, sort.

use super::*;

impl<'a> Rules<'a> {
    /// `k` inputs of one shape followed by `k` scalar initial values; returns `k`.
    pub(super) fn inputs_and_inits(&self) -> Result<usize> {
        let n = self.operands.len();
        if n < 2 || !n.is_multiple_of(2) {
            return Err(self.err(
                Site::Opcode,
                format!("expected k inputs followed by k initial values, got {n} operands"),
            ));
        }
        let k = n / 2;
        let first = self.array(0)?;
        for i in 1..k {
            self.array_like_first(i, first, "input")?;
        }
        for i in 0..k {
            let init = self.array(k + i)?;
            if init.rank() != 0 {
                return Err(self.err(
                    Site::Operand(k + i),
                    format!("initial value {i} must be a scalar, got {}", show(init)),
                ));
            }
        }
        Ok(k)
    }

    /// One array per initial value, with `dims`; a tuple for several.
    pub(super) fn per_init(&self, k: usize, dims: &[i64], dynamic: &[bool]) -> Result<Shape> {
        let mut results = Vec::with_capacity(k);
        for i in 0..k {
            let init = self.array(k + i)?;
            results.push(array(init.element_type, dims.to_vec(), dynamic.to_vec()));
        }
        Ok(if k == 1 {
            results.pop().unwrap_or(Shape::Tuple(Vec::new()))
        } else {
            Shape::Tuple(results)
        })
    }

    pub(super) fn reduce(&self) -> Result<Shape> {
        let k = self.inputs_and_inits()?;
        let input = self.array(0)?;
        let dims = self.int_list("dimensions")?;
        let reduced = self.dims_in_range("dimensions", dims, input.rank(), "operand")?;
        let kept: Vec<usize> = (0..input.rank()).filter(|d| !reduced.contains(d)).collect();
        let out: Vec<i64> = kept.iter().map(|&d| input.dims[d]).collect();
        let dynamic: Vec<bool> = kept.iter().map(|&d| input.is_dynamic_dim(d)).collect();
        self.per_init(k, &out, &dynamic)
    }

    pub(super) fn reduce_window(&self) -> Result<Shape> {
        let k = self.inputs_and_inits()?;
        let input = self.array(0)?;
        let window = match self.instr.attribute("window") {
            None if input.rank() == 0 => Vec::new(),
            None => return Err(self.err(Site::Opcode, "missing window= attribute")),
            Some(attr) => match &attr.value {
                AttrValue::Raw(text) => parse_window(text)
                    .map_err(|message| self.err(Site::Attribute("window"), message))?,
                _ => return Err(self.written_as("window", "{size=.. stride=.. pad=..}")),
            },
        };
        self.one_entry_per_dimension("window", window.len(), input)?;
        let mut out = Vec::with_capacity(window.len());
        for (i, (w, &d)) in window.iter().zip(&input.dims).enumerate() {
            if d < 0 {
                out.push(UNBOUNDED_SIZE);
                continue;
            }
            let dilated = |bound: i128, dilation: i128| {
                if bound == 0 {
                    0
                } else {
                    (bound - 1) * dilation + 1
                }
            };
            let base = i128::from(w.pad_low)
                + dilated(i128::from(d), i128::from(w.base_dilation))
                + i128::from(w.pad_high);
            let size = dilated(i128::from(w.size), i128::from(w.window_dilation));
            let bound = if size > base {
                0
            } else {
                (base - size) / i128::from(w.stride) + 1
            };
            out.push(i64::try_from(bound).map_err(|_| {
                self.err(
                    Site::Attribute("window"),
                    format!("window makes dimension {i} too large"),
                )
            })?);
        }
        self.per_init(k, &out, &dynamic_of(input))
    }

    pub(super) fn sort(&self) -> Result<Shape> {
        self.at_least(1)?;
        let first = self.array(0)?;
        let mut results = Vec::with_capacity(self.operands.len());
        for i in 0..self.operands.len() {
            results.push(strip(self.array_like_first(i, first, "operand")?));
        }
        self.one_dimension(first.rank())?;
        Ok(if results.len() == 1 {
            strip(first)
        } else {
            Shape::Tuple(results)
        })
    }

    // ---- dynamic slicing ----------------------------------------------------------------
}
