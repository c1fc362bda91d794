//! Act: how a test calls each recorded function. In: a function as recorded (its demangled
//! path and DWARF signature) and the crate's API. Out: a [`target::Target`], the path a test
//! writes and the signature it calls with, or why no test can call it, from the first of the
//! call-form rules of `rules/` that answers ([`rules::RULES`]).

pub(crate) mod call;
pub(crate) mod display;
pub(crate) mod fmt_spec;
pub(crate) mod instance;
pub(crate) mod lean;
pub(crate) mod rules;
pub(crate) mod stand_ins;
pub(crate) mod std_traits;
pub(crate) mod target;
