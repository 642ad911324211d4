//! The pass framework, apart from the passes: what a pass is ([`pass`]), how passes are
//! named and made ([`registry`]), how they run — verified after each, dumped, timed
//! ([`manager`], [`timing`]) — and the utilities passes share: pattern rewriting to a fixed
//! point ([`rewrite`]), constant folding ([`fold`]), constant matching and making
//! ([`constants`]), and value ranges ([`ranges`]).

pub mod constants;
pub mod fold;
pub mod manager;
pub mod pass;
pub mod ranges;
pub mod registry;
pub mod rewrite;
pub mod timing;
