//! Tensor, vector and pointer ops: `tensor.*`, the predicated and shared-memory ops of
//! `xla_gpu`, `vector.*`, and `llvm.getelementptr`/`load`/`store`/`mlir.addressof` with the
//! module globals they reach.

use super::ops::scalar_bits;
use super::{Exit, FnCx};
use crate::error::{Result, fail};
use crate::inst::{GepTerm, GlobalDef, Inst, Pos, SharedDef, Src, Transfer};
use crate::layout::{MemTy, llvm_size};
use crate::scalar::ScalarTy;
use crate::value::{Mem, write_le};
use ir::dialects::llvm;
use ir::dialects::llvm::GEP_DYNAMIC_INDEX;
use ir::dialects::vector;
use ir::dialects::xla_gpu;
use ir::dialects::{dense_ints, operand_segments};
use ir::{Attribute, DYNAMIC, DenseValues, OpId, Type};

impl FnCx<'_, '_> {
    fn tensor_ty(&mut self, op: OpId, t: Type) -> Result<u32> {
        self.b.tensor(t).map_err(|e| self.b.error_at(op, e))
    }

    pub(super) fn extract(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let predicated = m.is(op, xla_gpu::PREDICATED_EXTRACT);
        let t = if predicated { 2 } else { 0 };
        let ty = self.tensor_ty(op, m.value_type(m.operand(op, t)))?;
        let inst = Inst::Extract {
            tensor: self.operand(op, t),
            ty,
            indices: self.operands(op, t + 1..m.num_operands(op)),
            dst: self.results(op),
            pred: predicated.then(|| (self.operand(op, 0), self.operand(op, 1))),
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn insert(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let predicated = m.is(op, xla_gpu::PREDICATED_INSERT);
        let v = usize::from(predicated);
        let ty = self.tensor_ty(op, m.value_type(m.operand(op, v + 1)))?;
        let inst = Inst::Insert {
            value: self.operand(op, v),
            tensor: self.src(op, v + 1),
            ty,
            indices: self.operands(op, v + 2..m.num_operands(op)),
            dst: self.results(op),
            pred: predicated.then(|| self.operand(op, 0)),
        };
        self.emit(op, inst);
        Ok(())
    }

    /// `xla_gpu.atomic_rmw`: read the element into the body's argument, run the body, write
    /// what it yields. Nothing runs between the read and the write (the body holds no
    /// barrier or shuffle), so the update is atomic among the simulated threads.
    pub(super) fn atomic_rmw(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let ty = self.tensor_ty(op, m.value_type(m.operand(op, 0)))?;
        let indices = self.operands(op, 1..m.num_operands(op));
        let body = self.body_block(op)?;
        if ir::dialects::xla_gpu::atomic_rmw_is_packed(m, op) {
            let e = fail!(Unsupported, "an atomic update of a vector of elements");
            return Err(self.err(op, e));
        }
        let current = self.defs(m.block_args(body));
        let tensor = self.operand(op, 0);
        // The read is an extract: memory as it is now (the threads in between are not run).
        self.emit(
            op,
            Inst::Extract {
                tensor,
                ty,
                indices: indices.clone(),
                dst: current,
                pred: None,
            },
        );
        let new = self.temp();
        self.region_body(body, Exit::Yield(&[new]))?;
        let inst = Inst::AtomicWrite {
            value: new,
            tensor: self.src(op, 0),
            ty,
            indices,
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn empty(&mut self, op: OpId) -> Result<()> {
        let ty = self.tensor_ty(op, self.m.value_type(self.m.result(op, 0)))?;
        let dst = self.results(op);
        self.emit(op, Inst::Empty { ty, dst });
        Ok(())
    }

    pub(super) fn allocate_shared(&mut self, op: OpId) -> Result<()> {
        let ty = self.tensor_ty(op, self.m.value_type(self.m.result(op, 0)))?;
        let slot = match self.b.shared_ids.get(&op) {
            Some(&slot) => slot,
            None => {
                let tt = &self.b.tensors[ty as usize];
                let loc = self.m.loc(op);
                let def = SharedDef {
                    name: format!("the shared tensor of line {}:{}", loc.line, loc.col),
                    bytes: tt.bytes(),
                    elem_bits: tt.elem_bits,
                };
                self.b.shared.push(def);
                let slot = self.b.shared.len() as u32 - 1;
                self.b.shared_ids.insert(op, slot);
                slot
            }
        };
        let dst = self.results(op);
        self.emit(op, Inst::AllocShared { slot, dst });
        Ok(())
    }

    pub(super) fn transfer(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let read = m.is(op, vector::TRANSFER_READ);
        let groups = operand_segments(m, op, 4)
            .map_err(|msg| fail!(InvalidIr, "{msg}"))
            .map_err(|e| self.err(op, e))?;
        // Operand groups: read (tensor, indices, padding, mask); write (vector, tensor,
        // indices, mask).
        let (tensor, other) = if read { (0, groups[2].start) } else { (1, 0) };
        let tensor_ty = m.value_type(m.operand(op, tensor));
        let vector_ty = if read {
            m.value_type(m.result(op, 0))
        } else {
            m.value_type(m.operand(op, 0))
        };
        let ty = self.tensor_ty(op, tensor_ty)?;
        let vector_shape: Box<[i64]> = vector_ty.shape().unwrap_or(&[]).into();
        let rank = tensor_ty.rank().unwrap_or(0);
        let map = match m.prop(op, "permutation_map") {
            Some(Attribute::Opaque(text)) => permutation(text, rank),
            _ => None,
        };
        let in_bounds: Option<Box<[bool]>> = m
            .prop(op, "in_bounds")
            .and_then(Attribute::as_array)
            .and_then(|a| a.iter().map(Attribute::as_bool).collect());
        let (Some(dims), Some(in_bounds)) = (map, in_bounds) else {
            let e = fail!(Unsupported, "this permutation map or in_bounds attribute");
            return Err(self.err(op, e));
        };
        if dims.len() != vector_shape.len() || in_bounds.len() != dims.len() {
            let e = fail!(InvalidIr, "a permutation map of the wrong rank");
            return Err(self.err(op, e));
        }
        let transfer = Transfer {
            tensor: if read {
                Src {
                    reg: self.operand(op, tensor),
                    take: false,
                }
            } else {
                self.src(op, tensor)
            },
            ty,
            indices: self.operands(op, groups[if read { 1 } else { 2 }].clone()),
            vector_shape,
            dims,
            in_bounds,
            other: self.operand(op, other),
            dst: self.results(op),
        };
        let inst = if read {
            Inst::TransferRead(Box::new(transfer))
        } else {
            Inst::TransferWrite(Box::new(transfer))
        };
        self.emit(op, inst);
        Ok(())
    }

    /// The positions of `vector.extract`/`insert`; dynamic ones are the operands from
    /// `first_dynamic` on.
    fn positions(&mut self, op: OpId, first_dynamic: usize) -> Result<Box<[Pos]>> {
        let Some(statics) = dense_ints(self.m.prop(op, "static_position")) else {
            let e = fail!(InvalidIr, "no static_position");
            return Err(self.err(op, e));
        };
        let mut next = first_dynamic;
        Ok(statics
            .into_iter()
            .map(|s| {
                if s == DYNAMIC {
                    next += 1;
                    Pos::Dynamic(self.operand(op, next - 1))
                } else {
                    Pos::Static(s)
                }
            })
            .collect())
    }

    pub(super) fn vector_extract(&mut self, op: OpId) -> Result<()> {
        let shape = self.vector_shape(op, 0);
        let pos = self.positions(op, 1)?;
        self.lane_access(op, None, 0, shape, pos)
    }

    pub(super) fn vector_insert(&mut self, op: OpId) -> Result<()> {
        let shape = self.vector_shape(op, 1);
        let pos = self.positions(op, 2)?;
        self.lane_access(op, Some(0), 1, shape, pos)
    }

    /// Reads the lanes at `pos` of operand `vector` (of `shape`; a struct of scalars is held
    /// as a vector of its fields), or, given operand `value`, writes it there: the `vector`
    /// ops and the `llvm` element and struct-field ops alike.
    pub(super) fn lane_access(
        &mut self,
        op: OpId,
        value: Option<usize>,
        vector: usize,
        shape: Box<[i64]>,
        pos: Box<[Pos]>,
    ) -> Result<()> {
        let dst = self.results(op);
        let inst = match value {
            Some(value) => Inst::VecInsert {
                value: self.operand(op, value),
                vector: self.src(op, vector),
                shape,
                pos,
                dst,
            },
            None => Inst::VecExtract {
                vector: self.operand(op, vector),
                shape,
                pos,
                dst,
            },
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn broadcast(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let from = m.value_type(m.operand(op, 0));
        let to = m.value_type(m.result(op, 0));
        let inst = Inst::Broadcast {
            src: self.operand(op, 0),
            from: from.is_vector().then(|| from.shape().unwrap_or(&[]).into()),
            to: to.shape().unwrap_or(&[]).into(),
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn gep(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let raw = dense_ints(m.prop(op, "rawConstantIndices")).unwrap_or_default();
        let mut ty = m.prop(op, "elem_type").and_then(Attribute::as_type);
        let mut next = 1;
        let mut terms = Vec::new();
        for index in raw {
            let Some(t) = ty else {
                let e = fail!(Unsupported, "indexing into this element type");
                return Err(self.err(op, e));
            };
            let (stride, inner) = llvm_size(t).map_err(|e| self.err(op, e))?;
            let stride = stride as i64;
            terms.push(if index == GEP_DYNAMIC_INDEX {
                next += 1;
                let v = m.operand(op, next - 1);
                let width = self.int_width(op, v)?;
                GepTerm::Scaled {
                    reg: self.reg(v),
                    width,
                    stride,
                }
            } else {
                GepTerm::Bytes(index * stride)
            });
            ty = inner;
        }
        let inst = Inst::Gep {
            base: self.operand(op, 0),
            terms: terms.into(),
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn mem_ty(&mut self, op: OpId, t: Type) -> Result<(MemTy, u64)> {
        let ty = MemTy::new(t).map_err(|e| self.err(op, e))?;
        let align = self.m.prop(op, "alignment").and_then(Attribute::as_i64);
        let align = align.map_or(ty.natural_alignment(), |a| a.max(1) as u64);
        Ok((ty, align))
    }

    pub(super) fn load(&mut self, op: OpId) -> Result<()> {
        let (ty, align) = self.mem_ty(op, self.m.value_type(self.m.result(op, 0)))?;
        let inst = Inst::Load {
            ptr: self.operand(op, 0),
            ty,
            align,
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn store(&mut self, op: OpId) -> Result<()> {
        let (ty, align) = self.mem_ty(op, self.m.value_type(self.m.operand(op, 0)))?;
        let inst = Inst::Store {
            value: self.operand(op, 0),
            ptr: self.operand(op, 1),
            ty,
            align,
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn alloca(&mut self, op: OpId) -> Result<()> {
        let ty = self.m.prop(op, "elem_type").and_then(Attribute::as_type);
        let Some(ty) = ty else {
            let e = fail!(InvalidIr, "'llvm.alloca' without an element type");
            return Err(self.err(op, e));
        };
        let (elem_bytes, _) = llvm_size(ty).map_err(|e| self.err(op, e))?;
        let count = self.m.operand(op, 0);
        let width = self.int_width(op, count)?;
        let inst = Inst::Alloca {
            count: self.reg(count),
            width,
            elem_bytes,
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    pub(super) fn address_of(&mut self, op: OpId) -> Result<()> {
        let name = self
            .m
            .prop(op, "global_name")
            .and_then(Attribute::as_symbol);
        let global = name.and_then(|n| self.b.symbols.lookup(n));
        let Some(global) = global.filter(|&g| self.m.is(g, llvm::MLIR_GLOBAL)) else {
            let e = fail!(Unsupported, "the address of @{}", name.unwrap_or("?"));
            return Err(self.err(op, e));
        };
        let mem = self
            .global(global)
            .map_err(|e| self.b.error_at(global, e))?;
        let dst = self.results(op);
        self.emit(op, Inst::AddressOf { mem, dst });
        Ok(())
    }

    /// The storage of an `llvm.mlir.global`: shared memory in address space 3, global
    /// memory otherwise.
    fn global(&mut self, g: OpId) -> Result<Mem> {
        if let Some(&slot) = self.b.shared_ids.get(&g) {
            return Ok(Mem::Shared(slot));
        }
        if let Some(&i) = self.b.global_ids.get(&g) {
            return Ok(Mem::Global(self.b.num_params + i));
        }
        let m = self.m;
        let name = format!("@{}", m.symbol_name(g).unwrap_or("?"));
        let Some(ty) = m.prop(g, "global_type").and_then(Attribute::as_type) else {
            return Err(fail!(InvalidIr, "a global without a type"));
        };
        let (bytes, _) = llvm_size(ty)?;
        let bytes = crate::host_bytes(Some(bytes), &format_args!("global {name}"))?;
        // An initializer region that returns `undef` (how LLVM's `global ... undef`
        // imports) leaves the storage uninitialized, as no region does; others are not run.
        if let Some(&region) = m.regions(g).first()
            && let Some(&block) = m.region_blocks(region).first()
        {
            let undef_only = m
                .block_ops(block)
                .all(|op| m.is(op, llvm::MLIR_UNDEF) || m.is(op, llvm::RETURN));
            if !undef_only {
                return Err(fail!(Unsupported, "globals with an initializer region"));
            }
        }
        let value = m.prop(g, "value");
        if m.prop(g, "addr_space").and_then(Attribute::as_i64) == Some(3) {
            if value.is_some() {
                return Err(fail!(Unsupported, "initialized shared memory"));
            }
            self.b.shared.push(SharedDef {
                name,
                bytes,
                elem_bits: 8,
            });
            let slot = self.b.shared.len() as u32 - 1;
            self.b.shared_ids.insert(g, slot);
            return Ok(Mem::Shared(slot));
        }
        let init = value.map(|v| global_bytes(v, ty)).transpose()?;
        if let Some(init) = &init
            && init.len() != bytes
        {
            return Err(fail!(
                InvalidIr,
                "an initializer of {} bytes for '{ty}' ({bytes} bytes)",
                init.len()
            ));
        }
        self.b.globals.push(GlobalDef {
            name,
            init,
            bytes,
            constant: m.prop(g, "constant").is_some(),
        });
        let i = self.b.globals.len() as u32 - 1;
        self.b.global_ids.insert(g, i);
        Ok(Mem::Global(self.b.num_params + i))
    }
}

/// A global's initial bytes: a dense attribute's elements in order, a string's bytes, or a
/// scalar of the global's type.
fn global_bytes(value: &Attribute, ty: Type) -> Result<Vec<u8>> {
    let encode = |scalars: &[ir::Scalar], elem: ScalarTy| -> Result<Vec<u8>> {
        let mut out = vec![0; scalars.len() * elem.bytes()];
        for (chunk, &v) in out.chunks_mut(elem.bytes()).zip(scalars) {
            match v {
                ir::Scalar::Int(i) if elem.is_wide() => {
                    chunk.copy_from_slice(&(i as u128).to_le_bytes())
                }
                _ => write_le(chunk, scalar_bits(v, elem)?),
            }
        }
        Ok(out)
    };
    match value {
        Attribute::String(s) => Ok(s.as_bytes().to_vec()),
        Attribute::Dense { ty: dense, values } => {
            let elem = dense.element_type().and_then(ScalarTy::of);
            let Some(elem) = elem else {
                return Err(fail!(Unsupported, "globals of '{dense}'"));
            };
            let n = dense.num_elements().unwrap_or(0) as usize;
            match values {
                DenseValues::Splat(v) => encode(&vec![*v; n], elem),
                DenseValues::Elements(vs) => encode(vs, elem),
            }
        }
        _ => {
            let scalar = match value {
                Attribute::Int(v, _) => ir::Scalar::Int(*v),
                Attribute::Float(f, _) => ir::Scalar::Float(*f),
                Attribute::Bool(b) => ir::Scalar::Int(i128::from(*b)),
                _ => return Err(fail!(Unsupported, "global initializer {value}")),
            };
            match ScalarTy::of(ty) {
                Some(elem) => encode(&[scalar], elem),
                None => Err(fail!(Unsupported, "global initializer {value} for '{ty}'")),
            }
        }
    }
}

/// The tensor dimension each result of a transfer's permutation map walks
/// (`affine_map<(d0, d1) -> (d1)>`), or `None` for a broadcast result (`0`).
fn permutation(text: &str, rank: usize) -> Option<Box<[Option<usize>]>> {
    let body = text.strip_prefix("affine_map<")?.strip_suffix('>')?;
    let (lhs, rhs) = body.split_once("->")?;
    let dims: Vec<&str> = lhs
        .trim()
        .strip_prefix('(')?
        .strip_suffix(')')?
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect();
    if dims.len() != rank {
        return None;
    }
    rhs.trim()
        .strip_prefix('(')?
        .strip_suffix(')')?
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| {
            if r == "0" {
                Some(None)
            } else {
                dims.iter().position(|d| *d == r).map(Some)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_maps() {
        assert_eq!(
            permutation("affine_map<(d0, d1) -> (d1)>", 2).as_deref(),
            Some(&[Some(1)][..])
        );
        assert_eq!(
            permutation("affine_map<(d0, d1) -> (d0, 0)>", 2).as_deref(),
            Some(&[Some(0), None][..])
        );
        assert_eq!(permutation("affine_map<(d0) -> (d0 + 1)>", 1), None);
        assert_eq!(permutation("affine_map<(d0) -> (d0)>", 2), None);
    }
}
