//! Read: what `generate` starts from, as plain data. In: the trace (calls streamed in start
//! order) and the crate's directory. Out: a [`group::GroupedTrace`] (equivalent calls grouped,
//! the first distinct calls of each function kept) and the crate's public API
//! ([`crate_api::CrateApi`], read with syn), with the vocabulary every later stage speaks: types
//! as declared ([`types`]) and demangled paths ([`paths`]).

pub(crate) mod crate_api;
pub(crate) mod crate_dir;
pub(crate) mod group;
pub(crate) mod moved;
pub(crate) mod paths;
pub(crate) mod stand_ins;
pub(crate) mod tree;
pub(crate) mod types;
