//! An object rebuilt directly, by the rules of [`DIRECTLY`] in order: the recorded call that
//! produced its state, a part of a value a call returned, a struct literal, a public const. The other rules
//! build on these (a replayed call's pre-state, a history's maker, a derived sequence's start).

use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::rebuild::{part_of_returned, producer, public_const, struct_literal};
use crate::arrange::wanted::Wanted;
use crate::reasons::RECEIVER_NOT_REBUILT;

/// A rule that builds an object directly, from a recorded call or value: whether it did.
pub(crate) type DirectRule = fn(&Ctx, &mut Builder, Wanted) -> bool;

/// The direct rules in the order they are tried, by name.
pub(crate) const DIRECTLY: &[(&str, DirectRule)] = &[
    ("producer", producer::rule),
    ("part_of_returned", part_of_returned::rule),
    ("struct_literal", struct_literal::rule),
    ("public_const", public_const::rule),
];

/// An object in `state` from its recorded producer, a part of a value a recorded call
/// returned, a struct literal or a public const: the first rule of [`DIRECTLY`] that builds it.
pub(crate) fn rebuild_directly(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<(), &'static str> {
    decide(cx, b, w).map(|_| ())
}

/// [`rebuild_directly`], with the name of the rule that built the object.
pub(crate) fn decide(cx: &Ctx, b: &mut Builder, w: Wanted) -> Result<&'static str, &'static str> {
    DIRECTLY
        .iter()
        .find(|(_, rule)| rule(cx, b, w))
        .map(|(name, _)| *name)
        .ok_or(RECEIVER_NOT_REBUILT)
}
