//! How to build an object — a struct literal: no recorded call gave it, but every field is public
//! and writable (`abc::Point { x: 1, y: 2 }`); never with a trait object inside (those become
//! mocks through a producer).

use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::literal;
use crate::arrange::values::dyn_addrs;
use crate::arrange::wanted::Wanted;
use crate::body::Binding;

/// The object as a struct literal, when it holds no trait object and every part can be written.
pub(crate) fn rule(cx: &Ctx, b: &mut Builder, w: Wanted) -> bool {
    let mut state_dyns = Vec::new();
    dyn_addrs(w.state, &mut state_dyns);
    if !state_dyns.is_empty() {
        return false;
    }
    let Ok(expr) = literal::render_value(w.state, false, cx.api) else {
        return false;
    };
    b.setup.push(Binding {
        var: w.var.to_string(),
        mutable: w.mutable,
        expr,
        repeat: 1,
        times: None,
    });
    true
}

#[cfg(test)]
mod tests {
    use crate::testdata::rulebook;

    #[test]
    fn an_object_no_call_made_is_written_as_a_struct_literal() {
        let rebuilt = rulebook().rebuilt("rulebook::Point::norm1", 0, "rulebook::Point", true);
        let (rule, setup) = (rebuilt.rule, rebuilt.setup);
        assert_eq!(rule, "struct_literal");
        assert_eq!(setup, ["rulebook::Point { x: 3i32, y: -4i32 }"]);
    }
}
