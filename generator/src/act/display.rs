//! Call form and observation: a type's `Display` impl, carved as the `to_string()` a user
//! writes.
//!
//! `<T as Display>::fmt(&self, f: &mut Formatter)` takes a `Formatter` no test can build, but
//! most of its calls come from `to_string()` (or `format!("{}")`), which hand it a fresh `String`
//! and default options. The recorder reads that `String` behind the `Formatter` at entry and
//! again after the call, so the text `fmt` wrote is in the trace: the test is
//! `assert_eq!(value.to_string(), "2 KiB")`. A call that wrote elsewhere (`println!` straight
//! to stdout) or with options (`{:>9}`) holds no text a test can expect, and says so.

use carve_storage::{Call, Outcome, Value};

use crate::act::fmt_spec;

/// Skip reason: the `Display` impl wrote somewhere the recorder cannot read back (stdout, a
/// file), or with formatting options (`{:>9}`), so the recording holds no `to_string()` text.
pub const TEXT_NOT_RECORDED: &str = "Display text not recorded";

/// The recorded `fmt(self, f)` call as the `to_string()` call it stands for: `self` alone, and
/// the text written as the result; with the format spec (`{:>10}`) when the formatter had
/// options, which the test then passes to `format!` (see [`use_format`]). `Err` with the reason
/// when the recording holds no such text.
pub fn as_to_string(call: &Call) -> Result<(Call, Option<String>), &'static str> {
    // A `fmt` that panicked is a `to_string()` that panics: no text to expect.
    if call.outcome != Outcome::Returned {
        let mut carved = call.clone();
        carved.args.retain(|a| a.name == "self");
        carved.after.clear();
        return Ok((carved, None));
    }
    let Some(this) = call.arg("self") else {
        return Err(TEXT_NOT_RECORDED);
    };
    let (text, spec) = written(call)?;
    let mut carved = call.clone();
    carved.args.retain(|a| a.name == "self");
    carved.after.clear();
    carved.ret = Some(Value::Str {
        ty: "alloc::string::String".to_string(),
        value: text,
        truncated: false,
    });
    debug_assert!(carved.arg("self") == Some(this));
    Ok((carved, spec))
}

/// Skip reason: the `Formatter`'s options are laid out in a way carve does not decode, or no
/// format string sets them, so no `format!` can hand them to the call again.
pub const OPTIONS_NOT_DECODED: &str = "formatting options not decoded";

/// The text a returned `fmt(self, f)` call wrote, and the format spec of its options (`None`
/// for the defaults `to_string()` gives): what the recorder caught at the formatter's
/// `dyn Write` ([`carve_storage::WRITTEN_EFFECT`]), else what it appended to a `String` buffer.
pub fn written(call: &Call) -> Result<(String, Option<String>), &'static str> {
    if call.outcome != Outcome::Returned || !returned_ok(call.ret.as_ref()) {
        return Err(TEXT_NOT_RECORDED);
    }
    let (name, before) = formatter_arg(call).ok_or(TEXT_NOT_RECORDED)?;
    let text = match call.after(carve_storage::WRITTEN_EFFECT) {
        Some(Value::Str {
            value,
            truncated: false,
            ..
        }) => value.clone(),
        Some(_) => return Err(TEXT_NOT_RECORDED),
        None => {
            let after = call.after(name).ok_or(TEXT_NOT_RECORDED)?;
            let (Some(b_buf), Some(a_buf)) = (string_buffer(before), string_buffer(after)) else {
                return Err(TEXT_NOT_RECORDED);
            };
            a_buf
                .strip_prefix(b_buf)
                .ok_or(TEXT_NOT_RECORDED)?
                .to_string()
        }
    };
    let options = fmt_spec::decode(before).ok_or(OPTIONS_NOT_DECODED)?;
    if options.is_default() {
        return Ok((text, None));
    }
    let spec = options.spec("").ok_or(OPTIONS_NOT_DECODED)?;
    Ok((text, Some(spec)))
}

/// The call's `&mut Formatter` argument (`f`, `formatter`: whatever the impl named it).
fn formatter_arg(call: &Call) -> Option<(&str, &Value)> {
    call.args.iter().find_map(|a| {
        let Value::Ref { target, .. } = &a.value else {
            return None;
        };
        let Value::Struct { ty, .. } = target.as_ref() else {
            return None;
        };
        (a.name != "self" && crate::read::types::strip_generics(ty) == "core::fmt::Formatter")
            .then_some((a.name.as_str(), &a.value))
    })
}

/// `fmt` returned `Ok(())` (an `Err` means the text is not what `to_string()` would give).
fn returned_ok(ret: Option<&Value>) -> bool {
    match ret {
        Some(Value::Enum { variant, .. }) => variant == "Ok",
        // `fmt::Result` whose value was not kept: the call returned, which is all we know.
        _ => false,
    }
}

/// A carved `value.to_string()` test whose recorded formatter had options: the act becomes
/// `format!("{:>10}", value)`.
pub fn use_format(callee: &mut String, args: &mut Vec<String>, spec: &str) -> bool {
    let Some(var) = callee.strip_suffix(".to_string") else {
        return false;
    };
    if !args.is_empty() || !crate::syntax::is_ident(var) {
        return false;
    }
    *args = vec![crate::syntax::str_lit(spec), var.to_string()];
    *callee = "format!".to_string();
    true
}

/// The exactly read `String` buffer of a recorded `Formatter`.
fn string_buffer(f: &Value) -> Option<&str> {
    let f = match f {
        Value::Ref { target, .. } => target.as_ref(),
        other => other,
    };
    let Value::Struct { ty, fields } = f else {
        return None;
    };
    if crate::read::types::strip_generics(ty) != "core::fmt::Formatter" {
        return None;
    }
    let mut buf = fields.iter().find(|x| x.name == "buf").map(|x| &x.value)?;
    while let Value::Ref { target, .. } = buf {
        buf = target;
    }
    let Value::Str {
        ty,
        value,
        truncated: false,
    } = buf
    else {
        return None;
    };
    ty.ends_with("String").then_some(value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::{Arg, CallId, Field, FunctionId};

    fn text(ty: &str, text: &str) -> Value {
        Value::Str {
            ty: ty.into(),
            value: text.into(),
            truncated: false,
        }
    }

    /// A recorded `&mut Formatter` (rustc 1.95's layout) over `buf`.
    fn formatter(flags: u128, width: u128, buf: Value) -> Value {
        let uint = |ty: &str, v| Value::Uint {
            ty: ty.into(),
            value: v,
        };
        Value::Ref {
            ty: "&mut core::fmt::Formatter".into(),
            addr: 1,
            target: Box::new(Value::Struct {
                ty: "core::fmt::Formatter".into(),
                fields: vec![
                    Field::new(
                        "options",
                        Value::Struct {
                            ty: "core::fmt::FormattingOptions".into(),
                            fields: vec![
                                Field::new("flags", uint("u32", flags)),
                                Field::new("width", uint("u16", width)),
                                Field::new("precision", uint("u16", 0)),
                            ],
                        },
                    ),
                    Field::new(
                        "buf",
                        Value::Ref {
                            ty: "&mut dyn core::fmt::Write".into(),
                            addr: 2,
                            target: Box::new(buf),
                        },
                    ),
                ],
            }),
        }
    }

    fn string(s: &str) -> Value {
        text("alloc::string::String", s)
    }

    fn fmt_call(before: Value, after: Vec<Arg>) -> Call {
        Call {
            id: CallId(1),
            parent: None,
            function: FunctionId(1),
            thread: 1,
            depth: 0,
            args: vec![
                Arg {
                    name: "self".into(),
                    value: Value::Uint {
                        ty: "u64".into(),
                        value: 2048,
                    },
                },
                Arg {
                    name: "f".into(),
                    value: before,
                },
            ],
            outcome: Outcome::Returned,
            ret: Some(Value::Enum {
                ty: "core::result::Result<(), core::fmt::Error>".into(),
                variant: "Ok".into(),
                fields: vec![Field::new("__0", Value::Unit)],
            }),
            after,
            objects: vec![],
            touches: vec![],
        }
    }

    fn after(name: &str, value: Value) -> Vec<Arg> {
        vec![Arg {
            name: name.into(),
            value,
        }]
    }

    const DEFAULT: u128 = 0x6000_0020;
    const RIGHT_WIDTH: u128 = 0x2800_0020;

    #[test]
    fn the_text_is_what_fmt_appended_to_a_string_buffer() {
        let call = fmt_call(
            formatter(DEFAULT, 0, string("")),
            after("f", formatter(DEFAULT, 0, string("2 KiB"))),
        );
        assert_eq!(written(&call), Ok(("2 KiB".into(), None)));
        // A buffer that was not extended is no output of this call.
        let call = fmt_call(
            formatter(DEFAULT, 0, string("ab")),
            after("f", formatter(DEFAULT, 0, string("x"))),
        );
        assert_eq!(written(&call), Err(TEXT_NOT_RECORDED));
    }

    #[test]
    fn the_formatter_is_found_whatever_the_impl_named_it() {
        let mut call = fmt_call(
            formatter(DEFAULT, 0, string("")),
            after("formatter", formatter(DEFAULT, 0, string("https://x/"))),
        );
        call.args[1].name = "formatter".into();
        assert_eq!(written(&call), Ok(("https://x/".into(), None)));
    }

    #[test]
    fn the_text_caught_at_a_dyn_write_comes_with_the_spec_of_the_options() {
        let stdout = || Value::Pointer {
            ty: "&mut dyn core::fmt::Write".into(),
            addr: 0x7fff,
        };
        let call = fmt_call(
            formatter(RIGHT_WIDTH, 10, stdout()),
            after(carve_storage::WRITTEN_EFFECT, text("&str", "    1.0 kB")),
        );
        assert_eq!(
            written(&call),
            Ok(("    1.0 kB".into(), Some("{:>10}".into())))
        );
        // Nothing caught (or caught past the limit): no text.
        let call = fmt_call(formatter(RIGHT_WIDTH, 10, stdout()), vec![]);
        assert_eq!(written(&call), Err(TEXT_NOT_RECORDED));
        let cut = Value::Str {
            ty: "&str".into(),
            value: "abc".into(),
            truncated: true,
        };
        let call = fmt_call(
            formatter(DEFAULT, 0, stdout()),
            after(carve_storage::WRITTEN_EFFECT, cut),
        );
        assert_eq!(written(&call), Err(TEXT_NOT_RECORDED));
    }

    #[test]
    fn a_formatted_act_passes_the_spec_to_format() {
        let (mut callee, mut args) = ("size.to_string".to_string(), vec![]);
        assert!(use_format(&mut callee, &mut args, "{:>10}"));
        assert_eq!(
            format!("{callee}({})", args.join(", ")),
            "format!(\"{:>10}\", size)"
        );
    }
}
