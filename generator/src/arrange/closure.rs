//! How to build a value: a closure the program passed to the library (`ids.retain(|x| ..)`),
//! rebuilt from its recorded calls as a *replay closure*. The recorder traces the body of a
//! closure the program passes to a traced function, nested under the call that got it, so the
//! trace holds what the library gave the closure and what it answered, call by call. The test
//! passes a closure that gives back the recorded answers in order and checks each recorded
//! input it can write, and asserts after the call that it was called as many times as
//! recorded (seed 001's replay of a dependency, applied to a closure):
//!
//! ```text
//! let mut replies = vec![(3u32, false), (42u32, true)].into_iter();
//! ids.retain(|x| {
//!     let (seen, reply) = replies.next().expect("retain called its closure more often than recorded");
//!     assert_eq!(*x, seen);
//!     reply
//! });
//! assert_eq!(replies.next(), None, "retain called its closure fewer times than recorded");
//! ```
//!
//! A write the closure made through a `&mut` parameter is made again (`*x = 7u32;`). A closure
//! the library calls through `&F` (`Fn`) keeps its replies in a `RefCell`. The same closure
//! stands in a history step that replays the call on a rebuilt receiver. A closure the call
//! keeps in its result (an adaptor: `xs.iter().dedup_by(|a, b| ..)`) answers the calls the
//! program's later use of that result made (`calls.rs` says which); the test's checks of the
//! result use it as the program did, or its replies tell.
//!
//! Declined, with [`CLOSURE_ARGUMENT`]: a closure of the library itself (its calls are the
//! library's code, carved through the public calls above them), a closure whose calls were not
//! recorded (a recording made without this rule), one the call kept in an argument's state
//! (later calls on it would run it), a recorded call that did not return, and an answer or a
//! write no literal can give.

mod calls;

use carve_storage::{Call, FunctionId, FunctionInfo, Value};

use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::arrange::values::strip_ref;
use crate::body::{Binding, Effect};
use crate::reasons::CLOSURE_ARGUMENT;
use crate::syntax;

/// How many recorded calls one replay closure may give back.
const MAX_REPLIES: usize = 1024;

/// A closure argument rebuilt from its recorded calls (plain data; [`ReplayClosure::write`]
/// gives its text).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ReplayClosure {
    /// The method that got it (`retain`), named in the messages.
    callee: String,
    /// The closure's parameters as its body binds them (`x`, or `_` for one it does not use).
    params: Vec<String>,
    /// The body's statements before the answer, with `{row}` fields named as in `columns`.
    checks: Vec<String>,
    /// The names the body binds each row's values to (`seen`, `x_after`, `reply`).
    columns: Vec<String>,
    /// Per recorded call, in order: one literal per column.
    rows: Vec<Vec<String>>,
    /// The closure returns a value (the column `reply`).
    returns: bool,
    /// The library calls it through `&F` (`Fn`): the replies are kept in a `RefCell`.
    shared: bool,
    /// The call keeps it in its result, whose later use runs it: its calls are counted after
    /// the result's checks, and a replayed step cannot give it (the test's call would run it).
    pub(crate) kept: bool,
}

/// A replay closure as a test writes it.
pub(crate) struct Written {
    /// `let mut replies = [..].into_iter();`, before the call; none for a closure never called.
    pub setup: Option<Binding>,
    /// The closure expression, the call's argument.
    pub expr: String,
    /// `assert_eq!(replies.next(), None, ..)`, after the call.
    pub check: Option<Effect>,
}

/// The full name of the closure environment a recorded type is or points to:
/// `&mut app::main::{closure_env#0}` gives `app::main::{closure_env#0}`; `None` for any other
/// type, a value merely holding a closure (`Map<I, {closure_env#0}>`) included.
pub(crate) fn closure_env(ty: &str) -> Option<&str> {
    let mut ty = ty.trim();
    while let Some(rest) = ty.strip_prefix('&') {
        ty = rest.trim_start();
        ty = ty.strip_prefix("mut ").unwrap_or(ty);
    }
    // The path before the generic arguments: its last segment names the type.
    let bare = ty.split('<').next().unwrap_or(ty);
    let last = bare.rsplit("::").next().unwrap_or(bare);
    last.starts_with("{closure_env#").then_some(ty)
}

/// The replay closure for argument `arg` of `call` (made by `callee`, the method's name), when
/// the argument is a closure: `None` when it is not one, an error when it cannot be replayed.
/// `bound` is the parameter's declared trait (`FnMut`), when it has one.
pub(crate) fn replay(
    cx: &Ctx,
    call: &Call,
    arg: &carve_storage::Arg,
    callee: &str,
    bound: Option<&str>,
) -> Option<Result<ReplayClosure, &'static str>> {
    let env = closure_env(arg.value.type_name())?;
    Some(plan(cx, call, env, callee, bound))
}

fn plan(
    cx: &Ctx,
    call: &Call,
    env: &str,
    callee: &str,
    bound: Option<&str>,
) -> Result<ReplayClosure, &'static str> {
    let (function, calls, kept) = recorded(cx, call, env)?;
    // Called through `&F`: only `Fn` is asked of it. (Without the environment as a parameter,
    // the declared bound says the same.)
    let shared = match function.params.first() {
        Some(p) if closure_env(&p.type_name) == Some(env) => {
            p.type_name.starts_with('&') && !p.type_name.starts_with("&mut")
        }
        _ => bound.is_none_or(|b| b == "Fn"),
    };
    // The environment, when DWARF gives it as a parameter (a closure capturing nothing).
    let env_param = function
        .params
        .first()
        .is_some_and(|p| closure_env(&p.type_name) == Some(env));
    let params: Vec<&str> = function
        .params
        .iter()
        .skip(usize::from(env_param))
        .map(|p| p.name.as_str())
        .collect();
    let returns = function.return_type.is_some();
    let mut closure = ReplayClosure {
        callee: callee.to_string(),
        params: Vec::new(),
        checks: Vec::new(),
        columns: Vec::new(),
        rows: vec![Vec::new(); calls.len()],
        returns,
        shared,
        kept,
    };
    let checked: Vec<&str> = params
        .iter()
        .copied()
        .filter(|p| inputs(cx, &calls, p).is_some())
        .collect();
    for (i, recorded_name) in params.iter().enumerate() {
        let name = binding_name(recorded_name, i);
        let mut used = false;
        if let Some((derefs, values)) = inputs(cx, &calls, recorded_name) {
            let column = if checked.len() == 1 {
                "seen".to_string()
            } else {
                format!("seen_{name}")
            };
            closure.checks.push(format!(
                "assert_eq!({}{name}, {column});",
                "*".repeat(derefs)
            ));
            push_column(&mut closure, column, values);
            used = true;
        }
        if let Some(values) = writes(cx, &calls, recorded_name)? {
            let column = format!("{name}_after");
            closure.checks.push(format!("*{name} = {column};"));
            push_column(&mut closure, column, values);
            used = true;
        }
        closure
            .params
            .push(if used { name } else { "_".to_string() });
    }
    if returns {
        let values = calls
            .iter()
            .map(|c| {
                let ret = c.ret.as_ref()?;
                crate::arrange::literal::render_value(ret, false, cx.api).ok()
            })
            .collect::<Option<Vec<String>>>()
            .ok_or(CLOSURE_ARGUMENT)?;
        push_column(&mut closure, "reply".to_string(), values);
    }
    Ok(closure)
}

/// The closure's body and its recorded calls that the test's closure answers, and whether the
/// call kept it in its result; an error for a closure of the library, one kept in an argument's
/// state, a call that did not return and more calls than [`MAX_REPLIES`].
fn recorded<'t>(
    cx: &Ctx<'t>,
    call: &Call,
    env: &str,
) -> Result<(&'t FunctionInfo, Vec<&'t Call>, bool), &'static str> {
    // Two closures may bear one name: a test function's and the `#[test]` harness's closure
    // of the const of the same name (`test_std::dedup_by::{closure_env#0}`). The one called
    // below or after the call is the one it got.
    let bodies: Vec<&FunctionInfo> = cx
        .trace
        .functions
        .iter()
        .filter(|f| is_body_of(f, env))
        .collect();
    // A closure of the library: its calls are the library's code (decided before any walk:
    // the library's own adaptors pass it thousands of these).
    let in_library = |f: &FunctionInfo| {
        f.decl_file
            .as_deref()
            .is_some_and(|file| cx.api.contains_file(std::path::Path::new(file)))
    };
    if bodies.is_empty() || bodies.iter().any(|f| in_library(f)) {
        return Err(CLOSURE_ARGUMENT);
    }
    // Kept in an argument's state: later calls on it would run it.
    if call.after.iter().any(|a| mentions(&a.value, env)) {
        return Err(CLOSURE_ARGUMENT);
    }
    let ids: Vec<FunctionId> = bodies.iter().map(|f| f.id).collect();
    // Kept in the result (an adaptor, `xs.iter().dedup_by(|a, b| ..)`): the result runs it
    // later, as the test's checks of it do.
    let kept = call.ret.as_ref().is_some_and(|v| mentions(v, env));
    let mut calls = if kept {
        calls::while_kept(cx, call, &ids, env)
    } else {
        calls::below(cx, call, &ids)
    }
    .ok_or(CLOSURE_ARGUMENT)?;
    let called = calls.first().map_or(ids[0], |c| c.function);
    calls.retain(|c| c.function == called);
    let function: &FunctionInfo = bodies
        .into_iter()
        .find(|f| f.id == called)
        .ok_or(CLOSURE_ARGUMENT)?;
    if calls.len() > MAX_REPLIES {
        return Err(CLOSURE_ARGUMENT);
    }
    Ok((function, calls, kept))
}

/// Whether `f` is the body of the closure whose environment is `env`: a closure (`..::{{closure}}`)
/// whose first parameter is that environment, by value or by reference; or, as DWARF gives a closure that captures
/// something no parameter for its environment, `f` is `{closure#N}<G>` for `env`'s
/// `{closure_env#N}<G>`, in a function of the same name (`app::main::{closure_env#0}` and
/// `app::main::{{closure}}`; `app::{impl#0}::run::{closure_env#1}` and
/// `app::App::run::{{closure}}`).
fn is_body_of(f: &FunctionInfo, env: &str) -> bool {
    // A function taking the closure by reference first (`fn ask(f: &F, x: u32)`) is no body.
    if !f.path.ends_with("::{{closure}}") {
        return false;
    }
    if let Some(first) = f.params.first() {
        if let Some(other) = closure_env(&first.type_name) {
            return other == env;
        }
    }
    let base = env.split('<').next().unwrap_or(env);
    let Some(at) = base.rfind("::{closure_env#") else {
        return false;
    };
    let name = env[at + 2..].replacen("{closure_env#", "{closure#", 1);
    let last = |path: &str| -> String {
        let segment = path.rsplit("::").next().unwrap_or(path);
        if segment.starts_with("{closure#") {
            "{{closure}}".to_string()
        } else {
            segment.to_string()
        }
    };
    let Some(around) = f.path.strip_suffix("::{{closure}}") else {
        return false;
    };
    f.name == name && last(around) == last(&base[..at])
}

/// How to check parameter `name` of every call: the `*`s that reach its value and each call's
/// value as a literal `==` compares; `None` when one cannot be written or compared.
fn inputs(cx: &Ctx, calls: &[&Call], name: &str) -> Option<(usize, Vec<String>)> {
    let mut derefs = None;
    let mut values = Vec::with_capacity(calls.len());
    for call in calls {
        let (n, value) = through_refs(call.arg(name)?);
        if *derefs.get_or_insert(n) != n || crate::arrange::literal::is_nan(value) {
            return None;
        }
        values.push(crate::arrange::literal::render_value(value, true, cx.api).ok()?);
    }
    Some((derefs.unwrap_or(0), values))
}

/// The value behind a parameter's references (`&mut T`, `&&T`), and how many there were.
fn through_refs(value: &Value) -> (usize, &Value) {
    let mut value = value;
    let mut n = 0;
    while let Value::Ref { ty, target, .. } = value {
        if !ty.starts_with('&') {
            break;
        }
        value = target;
        n += 1;
    }
    (n, value)
}

/// The writes each call made through parameter `name` (a `&mut`), as literals; `None` when no
/// call wrote through it, an error when one did and what it wrote cannot be written.
fn writes(cx: &Ctx, calls: &[&Call], name: &str) -> Result<Option<Vec<String>>, &'static str> {
    let mut wrote = false;
    let mut values = Vec::with_capacity(calls.len());
    for call in calls {
        let Some(value) = call.arg(name) else {
            return Err(CLOSURE_ARGUMENT);
        };
        let Value::Ref { ty, target, .. } = value else {
            return Ok(None);
        };
        if !ty.starts_with("&mut") {
            return Ok(None);
        }
        let after = match call.after(name) {
            Some(after) => strip_ref(after),
            // Nothing recorded after: a zero-sized target, nothing to write.
            None if zero_sized(target) => target,
            None => return Err(CLOSURE_ARGUMENT),
        };
        wrote |= after != target.as_ref();
        values.push(crate::arrange::literal::render_value(after, false, cx.api));
    }
    if !wrote {
        return Ok(None);
    }
    values
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
        .map_err(|_| CLOSURE_ARGUMENT)
}

fn zero_sized(value: &Value) -> bool {
    match value {
        Value::Unit => true,
        Value::Struct { fields, .. } => fields.is_empty(),
        _ => false,
    }
}

/// Whether `value` is or holds a value of type `env`.
fn mentions(value: &Value, env: &str) -> bool {
    value.type_name().contains(env)
        || match value {
            Value::Ref { target, .. } => mentions(target, env),
            Value::Struct { fields, .. } | Value::Enum { fields, .. } => {
                fields.iter().any(|f| mentions(&f.value, env))
            }
            Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
                elems.iter().any(|e| mentions(e, env))
            }
            _ => false,
        }
}

/// The name the replay closure binds parameter `i` to: the recorded one where it is an
/// identifier of the program's (`x`), else `argN` (rustc names a pattern parameter `argN`).
fn binding_name(recorded: &str, i: usize) -> String {
    let reserved = ["replies", "seen", "reply", "self"];
    if syntax::is_ident(recorded)
        && !recorded.starts_with('_')
        && !recorded.starts_with("seen_")
        && !reserved.contains(&recorded)
    {
        recorded.to_string()
    } else {
        format!("arg{}", i + 1)
    }
}

fn push_column(closure: &mut ReplayClosure, column: String, values: Vec<String>) {
    closure.columns.push(column);
    for (row, value) in closure.rows.iter_mut().zip(values) {
        row.push(value);
    }
}

impl ReplayClosure {
    /// The closure's text, its replies bound to `var` (a fresh variable of the test).
    pub(crate) fn write(&self, var: &str) -> Written {
        let params = self.params.join(", ");
        if self.rows.is_empty() {
            let message = syntax::str_lit(&format!(
                "{} called its closure, which it did not in the recording",
                self.callee
            ));
            return Written {
                setup: None,
                expr: format!("|{params}| panic!({message})"),
                check: None,
            };
        }
        let next = if self.shared {
            format!("{var}.borrow_mut().next()")
        } else {
            format!("{var}.next()")
        };
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|row| match row.len() {
                0 => "()".to_string(),
                1 => row[0].clone(),
                _ => format!("({})", row.join(", ")),
            })
            .collect();
        // A `Vec`, not an array: an array's `into_iter()` gives references before edition 2021.
        let array = if rows.iter().all(|r| r == "()") {
            format!("vec![(); {}]", rows.len())
        } else {
            format!("vec![{}]", rows.join(", "))
        };
        let more = syntax::str_lit(&format!(
            "{} called its closure more often than recorded",
            self.callee
        ));
        let fewer = syntax::str_lit(&format!(
            "{} called its closure fewer times than recorded",
            self.callee
        ));
        let mut body = match self.columns.len() {
            0 => format!("{next}.expect({more});"),
            1 => format!("let {} = {next}.expect({more});", self.columns[0]),
            _ => format!("let ({}) = {next}.expect({more});", self.columns.join(", ")),
        };
        for check in &self.checks {
            body.push(' ');
            body.push_str(check);
        }
        if self.returns {
            body.push_str(" reply");
        }
        let expr = if self.shared {
            format!("std::cell::RefCell::new({array}.into_iter())")
        } else {
            format!("{array}.into_iter()")
        };
        Written {
            setup: Some(Binding {
                var: var.to_string(),
                mutable: !self.shared,
                expr,
                repeat: 1,
                times: None,
            }),
            expr: format!("|{params}| {{ {body} }}"),
            check: Some(Effect {
                actual: next,
                expected: "None".to_string(),
                message: Some(fewer),
                observe: None,
            }),
        }
    }

    /// [`ReplayClosure::write`] with a fresh variable of `b`, its setup added to `b`'s; gives
    /// the closure and the check to make after the call.
    pub(crate) fn add_to(&self, b: &mut Builder) -> (String, Option<Effect>) {
        let var = b.fresh("replies");
        let written = self.write(&var);
        b.setup.extend(written.setup);
        b.replay_closures = true;
        (written.expr, written.check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn closure(
        params: &[&str],
        checks: &[&str],
        columns: &[&str],
        rows: &[&[&str]],
    ) -> ReplayClosure {
        ReplayClosure {
            callee: "retain".into(),
            params: params.iter().map(|s| s.to_string()).collect(),
            checks: checks.iter().map(|s| s.to_string()).collect(),
            columns: columns.iter().map(|s| s.to_string()).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect(),
            returns: columns.contains(&"reply"),
            shared: false,
            kept: false,
        }
    }

    fn tidy(expr: &str) -> String {
        let file = format!("fn f() {{ let _ = {expr}; }}");
        prettyplease::unparse(&syn::parse_file(&file).expect("the closure parses"))
    }

    #[test]
    fn a_replay_closure_gives_back_the_recorded_answers_and_checks_the_recorded_inputs() {
        let c = closure(
            &["x"],
            &["assert_eq!(*x, seen);"],
            &["seen", "reply"],
            &[&["3u32", "false"], &["42u32", "true"]],
        );
        let w = c.write("replies");
        let setup = w.setup.expect("a setup");
        assert_eq!(
            (setup.var.as_str(), setup.mutable, setup.expr.as_str()),
            (
                "replies",
                true,
                "vec![(3u32, false), (42u32, true)].into_iter()"
            )
        );
        assert_eq!(
            tidy(&w.expr),
            "fn f() {\n    let _ = |x| {\n        let (seen, reply) = replies\n            .next()\n            .expect(\"retain called its closure more often than recorded\");\n        assert_eq!(*x, seen);\n        reply\n    };\n}\n"
        );
        let check = w.check.expect("a check after the call");
        assert_eq!(
            (check.actual.as_str(), check.expected.as_str()),
            ("replies.next()", "None")
        );
        assert_eq!(
            check.message.as_deref(),
            Some("\"retain called its closure fewer times than recorded\"")
        );
    }

    #[test]
    fn a_closure_called_through_a_shared_reference_keeps_its_replies_in_a_refcell() {
        let mut c = closure(&["_", "b"], &[], &["reply"], &[&["true"]]);
        c.shared = true;
        let w = c.write("replies_2");
        let setup = w.setup.expect("a setup");
        assert!(!setup.mutable);
        assert_eq!(
            setup.expr,
            "std::cell::RefCell::new(vec![true].into_iter())"
        );
        assert!(w
            .expr
            .starts_with("|_, b| { let reply = replies_2.borrow_mut().next()"));
        assert_eq!(
            w.check.expect("a check").actual,
            "replies_2.borrow_mut().next()"
        );
    }

    #[test]
    fn a_closure_with_nothing_to_give_back_still_counts_its_calls() {
        let c = closure(&["_"], &[], &[], &[&[], &[], &[]]);
        let w = c.write("replies");
        assert_eq!(w.setup.expect("a setup").expr, "vec![(); 3].into_iter()");
        assert_eq!(
            w.expr,
            "|_| { replies.next().expect(\"retain called its closure more often than recorded\"); }"
        );
    }

    #[test]
    fn a_closure_never_called_in_the_recording_panics_when_called() {
        let c = closure(&["_"], &[], &["reply"], &[]);
        let w = c.write("replies");
        assert!(w.setup.is_none() && w.check.is_none());
        assert_eq!(
            w.expr,
            "|_| panic!(\"retain called its closure, which it did not in the recording\")"
        );
    }

    #[test]
    fn a_write_through_a_mut_parameter_is_made_again() {
        let c = closure(
            &["x"],
            &["assert_eq!(*x, seen);", "*x = x_after;"],
            &["seen", "x_after"],
            &[&["1u8", "2u8"]],
        );
        let w = c.write("replies");
        assert!(w.expr.contains("let (seen, x_after) = replies.next()"));
        assert!(w.expr.ends_with("assert_eq!(*x, seen); *x = x_after; }"));
    }

    #[test]
    fn closure_environments_are_told_from_values_holding_one() {
        assert_eq!(
            closure_env("&mut app::main::{closure_env#0}"),
            Some("app::main::{closure_env#0}")
        );
        assert_eq!(
            closure_env("smallvec::{impl#14}::dedup::{closure_env#0}<[u32; 8]>"),
            Some("smallvec::{impl#14}::dedup::{closure_env#0}<[u32; 8]>")
        );
        assert_eq!(
            closure_env("core::iter::adapters::map::Map<I, app::main::{closure_env#1}>"),
            None
        );
        assert_eq!(closure_env("&u32"), None);
    }

    fn function(path: &str, name: &str, params: &[&str]) -> FunctionInfo {
        FunctionInfo {
            id: carve_storage::FunctionId(1),
            path: path.into(),
            name: name.into(),
            linkage_name: None,
            language: carve_storage::Language::Rust,
            decl_file: None,
            decl_line: None,
            low_pc: 0,
            params: params
                .iter()
                .map(|t| carve_storage::ParamInfo {
                    name: "arg".into(),
                    type_name: (*t).into(),
                })
                .collect(),
            return_type: None,
        }
    }

    #[test]
    fn a_closure_body_is_found_by_its_environment_parameter_or_by_its_name() {
        let env = "app::main::{closure_env#1}";
        // DWARF gives a closure capturing nothing its environment as first parameter.
        let by_param = function(
            "app::main::{{closure}}",
            "{closure#1}",
            &["&mut app::main::{closure_env#1}", "&u32"],
        );
        assert!(is_body_of(&by_param, env));
        let other_param = function(
            "app::main::{{closure}}",
            "{closure#1}",
            &["&app::main::{closure_env#0}", "&u32"],
        );
        assert!(!is_body_of(&other_param, env));
        // One that captures has none: its name and the function around it tell.
        let by_name = function("app::main::{{closure}}", "{closure#1}", &["&mut u32"]);
        assert!(is_body_of(&by_name, env));
        assert!(!is_body_of(
            &function("app::main::{{closure}}", "{closure#0}", &["&mut u32"]),
            env
        ));
        assert!(!is_body_of(
            &function("app::other::{{closure}}", "{closure#1}", &["&mut u32"]),
            env
        ));
        // In an impl block, DWARF's namespace is `{impl#0}`, the path names the type.
        assert!(is_body_of(
            &function("app::App::run::{{closure}}", "{closure#0}<u8>", &["u8"]),
            "app::{impl#0}::run::{closure_env#0}<u8>"
        ));
    }

    #[test]
    fn pattern_parameters_and_reserved_names_get_names_of_their_own() {
        assert_eq!(binding_name("x", 0), "x");
        assert_eq!(binding_name("arg1", 0), "arg1");
        assert_eq!(binding_name("replies", 1), "arg2");
        assert_eq!(binding_name("seen", 0), "arg1");
    }
}
