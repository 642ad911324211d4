//! XLA's current spelling of the emitter dialect, read as ours.
//!
//! The seeds and this project write the emitters' shared dialect `xla_gpu` (`xla_gpu.loop`,
//! `#xla_gpu.indexing_map<...>`); XLA has since renamed it `xla` (`xla.loop`,
//! `xla.apply_indexing`, `xla.pure_call`, `xla.atomic_rmw`, `xla.yield`,
//! `#xla.indexing_map<...>`). The reader takes both, as the nested layout takes IREE's
//! spelling; the printer writes ours. Our own `#xla.layout<...>` tensor encoding and the
//! `xla.range` / `xla.invariant` attributes keep their names: only the op names the registry
//! knows as `xla_gpu.*` and the indexing map attribute are read through the alias.
//!
//! XLA's `xla.workgroup_id x` (the block index, which XLA's `lower-xla-shared` turns into
//! `gpu.block_id x`) is read as `gpu.block_id`, the op every pass here knows: the two have
//! the same syntax and meaning.

use std::borrow::Cow;

use crate::registry::Registry;

/// The op name `name` means here: `xla_gpu.<op>` for XLA's `xla.<op>` when the registry
/// knows the former, `gpu.block_id` for `xla.workgroup_id`, else `name` as written (the
/// only borrowed answer: a renamed op is owned, in custom and generic form alike).
pub(super) fn op_name<'n>(registry: &Registry, name: &'n str) -> Cow<'n, str> {
    if name == "xla.workgroup_id" && registry.lookup(name).is_none() {
        return Cow::Owned(crate::dialects::gpu::BLOCK_ID.to_owned());
    }
    match name.strip_prefix("xla.") {
        Some(op) if registry.lookup(name).is_none() => {
            let ours = format!("xla_gpu.{op}");
            match registry.lookup(&ours) {
                Some(_) => Cow::Owned(ours),
                None => Cow::Borrowed(name),
            }
        }
        _ => Cow::Borrowed(name),
    }
}

/// Whether `#name<...>` is an indexing map: ours, or XLA's spelling of it.
pub(super) fn is_indexing_map(name: &str) -> bool {
    matches!(name, "xla_gpu.indexing_map" | "xla.indexing_map")
}
