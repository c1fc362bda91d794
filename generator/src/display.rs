//! Call form and observation: a type's `Display` impl, carved as the `to_string()` a user
//! writes.
//!
//! `<T as Display>::fmt(&self, f: &mut Formatter)` takes a `Formatter` no test can build, but
//! most of its calls come from `to_string()` (or `format!("{}")`), which hand it a fresh `String`
//! and default options. The recorder reads that `String` behind the `Formatter` at entry and
//! again after the call, so the text `fmt` wrote is in the trace: the test is
//! `assert_eq!(value.to_string(), "2 KiB")`. A call that wrote elsewhere (`println!` straight
//! to stdout) or with options (`{:>9}`) holds no text a test can expect, and says so.

use carve_storage::{Call, FunctionInfo, Outcome, Value};

use crate::api::{CrateApi, FnApi};
use crate::call::{Callable, Target};
use crate::literal::{self, DeclType};

/// Skip reason: the `Display` impl wrote somewhere the recorder cannot read back (stdout, a
/// file), or with formatting options (`{:>9}`), so the recording holds no `to_string()` text.
pub const TEXT_NOT_RECORDED: &str = "Display text not recorded";

/// Whether `tr` (as DWARF spells it, without arguments) is `Display`.
pub fn is_display(tr: &str) -> bool {
    tr == "core::fmt::Display"
}

/// `<ty as Display>::fmt` on a public type of the crate, as `value.to_string()`.
pub fn resolve(api: &CrateApi, info: &FunctionInfo, ty: &str) -> Target {
    let base = literal::strip_generics(ty);
    if !crate::syntax::is_path(base) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    if api.public_type(base).is_none() {
        return Target::Private;
    }
    if info.params.len() != 2 {
        return Target::Unsupported("trait impl");
    }
    let module = base
        .split("::")
        .skip(1)
        .collect::<Vec<_>>()
        .split_last()
        .map(|(_, m)| m.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("{base}::to_string"),
        subject: "to_string".to_string(),
        api: FnApi {
            name: "to_string".to_string(),
            ident: "to_string".to_string(),
            public: true,
            has_receiver: true,
            mut_receiver: false,
            params: Vec::new(),
            ret: DeclType::String,
            blocker: None,
            uninferable_generics: 0,
        },
        self_type: Some(base.to_string()),
        via_trait: None,
        display: true,
    }))
}

/// The recorded `fmt(self, f)` call as the `to_string()` call it stands for: `self` alone, and
/// the text written as the result. `Err` with the reason when the recording holds no such text.
pub fn as_to_string(call: &Call) -> Result<Call, &'static str> {
    // A `fmt` that panicked is a `to_string()` that panics: no text to expect.
    if call.outcome != Outcome::Returned {
        let mut carved = call.clone();
        carved.args.retain(|a| a.name == "self");
        carved.after.clear();
        return Ok(carved);
    }
    let (Some(this), Some(before), Some(after)) =
        (call.arg("self"), call.arg("f"), call.after("f"))
    else {
        return Err(TEXT_NOT_RECORDED);
    };
    let text = written_text(before, after).ok_or(TEXT_NOT_RECORDED)?;
    let mut carved = call.clone();
    carved.args.retain(|a| a.name == "self");
    carved.after.clear();
    carved.ret = Some(Value::Str {
        ty: "alloc::string::String".to_string(),
        value: text,
        truncated: false,
    });
    debug_assert!(carved.arg("self") == Some(this));
    Ok(carved)
}

/// What `fmt` appended to the `String` behind formatter `before`/`after`, when the formatter had
/// the options `to_string()` gives it.
fn written_text(before: &Value, after: &Value) -> Option<String> {
    let (b_opts, b_buf) = formatter_parts(before)?;
    let (_, a_buf) = formatter_parts(after)?;
    if !default_options(b_opts) {
        return None;
    }
    a_buf.strip_prefix(b_buf).map(str::to_string)
}

/// The options and the exactly read `String` buffer of a recorded `Formatter`.
fn formatter_parts(f: &Value) -> Option<(&Value, &str)> {
    let f = match f {
        Value::Ref { target, .. } => target.as_ref(),
        other => other,
    };
    let Value::Struct { ty, fields } = f else {
        return None;
    };
    if literal::strip_generics(ty) != "core::fmt::Formatter" {
        return None;
    }
    let field = |name: &str| fields.iter().find(|x| x.name == name).map(|x| &x.value);
    let mut buf = field("buf")?;
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
    if !ty.ends_with("String") {
        return None;
    }
    Some((field("options").unwrap_or(f), value))
}

/// Whether recorded formatter options are the defaults `to_string()` uses: space fill, no
/// alignment, width, precision, sign, `#`, `0` or hex-debug flag. rustc packs them into
/// `FormattingOptions { flags, width, precision }` (fill in the low 21 bits, the flags above,
/// "unknown" alignment as 3 in bits 29–30); older compilers keep separate fields.
fn default_options(options: &Value) -> bool {
    let Value::Struct { fields, .. } = options else {
        return false;
    };
    let uint = |name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| match &f.value {
                Value::Uint { value, .. } => Some(*value),
                _ => None,
            })
    };
    match (uint("flags"), uint("width"), uint("precision")) {
        (Some(flags), Some(0), Some(0)) => {
            let fill = flags & 0x1F_FFFF;
            let set = (flags >> 21) & 0xFF;
            let align = (flags >> 29) & 0b11;
            fill == u128::from(b' ') && set == 0 && align == 3
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    fn field(name: &str, value: Value) -> Field {
        Field {
            name: name.into(),
            value,
        }
    }

    fn formatter(flags: u128, width: u128, text: &str) -> Value {
        let uint = |v| Value::Uint {
            ty: "u32".into(),
            value: v,
        };
        Value::Ref {
            ty: "&mut core::fmt::Formatter".into(),
            addr: 1,
            target: Box::new(Value::Struct {
                ty: "core::fmt::Formatter".into(),
                fields: vec![
                    field(
                        "options",
                        Value::Struct {
                            ty: "core::fmt::FormattingOptions".into(),
                            fields: vec![
                                field("flags", uint(flags)),
                                field("width", uint(width)),
                                field("precision", uint(0)),
                            ],
                        },
                    ),
                    field(
                        "buf",
                        Value::Ref {
                            ty: "&mut dyn core::fmt::Write".into(),
                            addr: 2,
                            target: Box::new(Value::Str {
                                ty: "alloc::string::String".into(),
                                value: text.into(),
                                truncated: false,
                            }),
                        },
                    ),
                ],
            }),
        }
    }

    #[test]
    fn the_text_is_what_fmt_appended_with_default_options() {
        let default = 0x6000_0020;
        assert_eq!(
            written_text(&formatter(default, 0, ""), &formatter(default, 0, "2 KiB")).unwrap(),
            "2 KiB"
        );
        // `{:>9}`: width set, right alignment.
        let padded = 0x2800_0020;
        assert_eq!(
            written_text(
                &formatter(padded, 9, ""),
                &formatter(padded, 9, "    4 KiB")
            ),
            None
        );
        // A buffer that was not extended is no output of this call.
        assert_eq!(
            written_text(&formatter(default, 0, "ab"), &formatter(default, 0, "x")),
            None
        );
    }
}
