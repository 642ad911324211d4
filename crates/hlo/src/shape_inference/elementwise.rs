//! Shapes of elementwise ops and tuples: unary and binary ops, compare, complex, select,
//! clamp, get-tuple-element.

use super::*;

impl<'a> Rules<'a> {
    pub(super) fn unary(&self) -> Result<Shape> {
        use Opcode::*;
        self.arity(1)?;
        let a = self.array(0)?;
        let ty = a.element_type;
        let (float, complex, int) = (ty.is_float(), ty.is_complex(), ty.is_int());
        let signed = ty.is_signed_int() || float;
        let component = ty.complex_component().unwrap_or(ty);
        let (ok, result, expected) = match self.op {
            Floor | Ceil | RoundNearestAfz | RoundNearestEven | Erf | ReducePrecision => {
                (float, ty, "floating-point")
            }
            IsFinite => (float, PrimitiveType::Pred, "floating-point"),
            Abs => (
                signed || complex,
                component,
                "signed integer, floating-point or complex",
            ),
            Real | Imag => (float || complex, component, "floating-point or complex"),
            Clz | PopulationCount => (int, ty, "integer"),
            Not => (int || ty == PrimitiveType::Pred, ty, "pred or integer"),
            Negate => (
                int || float || complex,
                ty,
                "integer, floating-point or complex",
            ),
            Sign => (
                signed || complex,
                ty,
                "signed integer, floating-point or complex",
            ),
            _ => (float || complex, ty, "floating-point or complex"),
        };
        if !ok {
            return Err(self.err(
                Site::Operand(0),
                format!("operand type {} is not {expected}", show(a)),
            ));
        }
        Ok(Shape::Array(ArrayShape {
            element_type: result,
            layout: None,
            ..a.clone()
        }))
    }

    /// Two array operands of one shape.
    pub(super) fn same_shape_pair(&self) -> Result<&'a ArrayShape> {
        self.arity(2)?;
        let a = self.array(0)?;
        let b = self.array(1)?;
        if !a.compatible(b) {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "operands must have the same shape, got {} and {}",
                    show(a),
                    show(b)
                ),
            ));
        }
        Ok(a)
    }

    pub(super) fn binary(&self) -> Result<Shape> {
        use Opcode::*;
        let a = self.same_shape_pair()?;
        let ty = a.element_type;
        let (float, complex, int) = (ty.is_float(), ty.is_complex(), ty.is_int());
        let (ok, expected) = match self.op {
            And | Or | Xor => (int || ty == PrimitiveType::Pred, "pred or integer"),
            ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => (int, "integer"),
            Atan2 => (float || complex, "floating-point or complex"),
            Remainder => (int || float, "integer or floating-point"),
            Power => (
                int || float || complex,
                "integer, floating-point or complex",
            ),
            _ => (ty.is_array_element(), "numeric"),
        };
        if !ok {
            return Err(self.err(
                Site::Operand(0),
                format!("operand type {} is not {expected}", show(a)),
            ));
        }
        Ok(strip(a))
    }

    pub(super) fn compare(&self) -> Result<Shape> {
        let a = self.same_shape_pair()?;
        if !a.element_type.is_array_element() {
            return Err(self.err(
                Site::Operand(0),
                format!("operand type {} cannot be compared", show(a)),
            ));
        }
        self.attr("direction")?;
        Ok(array(PrimitiveType::Pred, a.dims.clone(), dynamic_of(a)))
    }

    pub(super) fn complex(&self) -> Result<Shape> {
        let a = self.same_shape_pair()?;
        let element_type = match a.element_type {
            PrimitiveType::F32 => PrimitiveType::C64,
            PrimitiveType::F64 => PrimitiveType::C128,
            _ => {
                return Err(self.err(
                    Site::Operand(0),
                    format!("operand type {} is not f32 or f64", show(a)),
                ));
            }
        };
        Ok(Shape::Array(ArrayShape {
            element_type,
            layout: None,
            ..a.clone()
        }))
    }

    pub(super) fn select(&self) -> Result<Shape> {
        self.arity(3)?;
        let pred = self.array(0)?;
        if pred.element_type != PrimitiveType::Pred {
            return Err(self.err(
                Site::Operand(0),
                format!("predicate type {} is not pred", show(pred)),
            ));
        }
        let (on_true, on_false) = (self.operands[1], self.operands[2]);
        if !on_true.compatible(on_false) {
            return Err(self.err(
                Site::Operand(2),
                format!(
                    "on-true and on-false operands must have the same shape, got {} and {}",
                    on_true.without_layout(),
                    on_false.without_layout()
                ),
            ));
        }
        let pred_fits =
            pred.rank() == 0 || matches!(on_true, Shape::Array(t) if t.dims == pred.dims);
        if !pred_fits {
            return Err(self.err(
                Site::Operand(0),
                format!(
                    "predicate {} must be a scalar or have the dimensions of the operands {}",
                    show(pred),
                    on_true.without_layout()
                ),
            ));
        }
        Ok(on_true.without_layout())
    }

    pub(super) fn clamp(&self) -> Result<Shape> {
        self.arity(3)?;
        let x = self.array(1)?;
        for (i, name) in [(0, "min"), (2, "max")] {
            let bound = self.array(i)?;
            if bound.element_type != x.element_type {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "{name} has element type {} but the operand has {}",
                        bound.element_type, x.element_type
                    ),
                ));
            }
            if bound.rank() != 0 && bound.dims != x.dims {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "{name} {} must be a scalar or have the shape of the operand {}",
                        show(bound),
                        show(x)
                    ),
                ));
            }
        }
        Ok(strip(x))
    }

    // ---- tuples -----------------------------------------------------------------------

    pub(super) fn get_tuple_element(&self) -> Result<Shape> {
        self.arity(1)?;
        let index = self.int_attr("index")?;
        let Shape::Tuple(elements) = self.operands[0] else {
            return Err(self.err(
                Site::Operand(0),
                format!(
                    "operand must be a tuple, got {}",
                    self.operands[0].without_layout()
                ),
            ));
        };
        usize::try_from(index)
            .ok()
            .and_then(|i| elements.get(i))
            .cloned()
            .ok_or_else(|| {
                self.err(
                    Site::Attribute("index"),
                    format!(
                        "index {index} is out of range for a tuple of {}",
                        count(elements.len(), "element", "elements")
                    ),
                )
            })
    }

    // ---- index transforms -------------------------------------------------------------
}
