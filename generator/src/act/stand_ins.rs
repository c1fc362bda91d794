//! Which types of the recorded program get a stand-in (see `read/stand_ins.rs`), and how each
//! is declared.
//!
//! A type qualifies when a test cannot name it otherwise: it is not std's, not the library's
//! (declared or macro-made), not a dependency's, and not generic. Every recorded value of it
//! must have had the same fields, each of a type a test can name (std types, the library's
//! public types, other stand-ins) and owned (a field holding a reference would need a lifetime
//! the recording does not give). The derives are what std derives for such fields: `Debug`,
//! `Clone`, `PartialEq`, `PartialOrd`, `Default`, and `Eq`, `Ord`, `Hash` without floats, `Copy`
//! when every field is a scalar.

use std::collections::BTreeMap;

use carve_storage::{Trace, Value};

use crate::act::instance::test_spelling;
use crate::read::crate_api::CrateApi;
use crate::read::stand_ins::{StandIn, StandIns};
use crate::read::types::{Prim, Shape, TypeFacts};
use crate::syntax::is_ident;

/// The recorded fields of one candidate type, or `None` once two values disagreed.
type Fields = Option<Vec<(String, String)>>;

/// The stand-ins the tests carved from `trace` may declare.
pub(crate) fn collect(trace: &Trace, api: &CrateApi) -> StandIns {
    let mut seen: BTreeMap<String, Fields> = BTreeMap::new();
    // Whether a type is a candidate is decided once per type: deciding reads the library's
    // sources, and a trace holds many values of one type.
    let mut decided: BTreeMap<String, bool> = BTreeMap::new();
    let values = trace.calls.iter().flat_map(|c| {
        (c.args.iter().chain(&c.after))
            .map(|a| &a.value)
            .chain(c.ret.as_ref())
    });
    for value in values {
        visit(value, &mut |ty, fields| {
            let is_candidate = match decided.get(ty) {
                Some(known) => *known,
                None => *decided
                    .entry(ty.to_string())
                    .or_insert_with(|| candidate(ty, api)),
            };
            if !is_candidate {
                return;
            }
            let recorded: Vec<(String, String)> = (fields.iter())
                .map(|f| (f.name.clone(), f.value.type_name().to_string()))
                .collect();
            let entry = seen.entry(ty.to_string()).or_insert(Some(recorded.clone()));
            if entry.as_ref() != Some(&recorded) {
                *entry = None;
            }
        });
    }
    let mut kept: BTreeMap<String, Vec<(String, String)>> = seen
        .into_iter()
        .filter_map(|(ty, fields)| Some((ty, fields?)))
        .collect();
    let names = names(kept.keys());
    kept.retain(|ty, _| names.contains_key(ty));
    // A field of another candidate's type is nameable only while that one stays.
    loop {
        let facts = Candidates { api, kept: &kept };
        let before = kept.len();
        let writable: Vec<String> = (kept.iter())
            .filter(|(_, fields)| {
                fields
                    .iter()
                    .all(|(_, ty)| field_type(ty, &facts).is_some())
            })
            .map(|(ty, _)| ty.clone())
            .collect();
        kept.retain(|ty, _| writable.contains(ty));
        if kept.len() == before {
            break;
        }
    }
    let facts = Candidates { api, kept: &kept };
    let serde = serde_asked(trace, api, &kept);
    let by_path = (kept.iter())
        .map(|(ty, fields)| {
            let mut s = declare((ty, &names[ty]), fields, &kept, &facts);
            let traits = serde.get(ty.as_str()).cloned().unwrap_or_default();
            s.definition = derive_serde(&s.definition, api, &traits);
            (ty.clone(), s)
        })
        .collect();
    StandIns { by_path }
}

/// The name each type's stand-in gets: its own (`Score`), or with its module's in front where
/// two types share it (`type_errors::Foo` → `TypeErrorsFoo`); a type whose name still clashes
/// gets none.
fn names<'a>(types: impl Iterator<Item = &'a String>) -> BTreeMap<String, String> {
    let types: Vec<&String> = types.collect();
    let own = |ty: &str| last_segment(ty).to_string();
    let qualified = |ty: &str| {
        let mut parts = ty.rsplit("::");
        let name = parts.next().unwrap_or(ty);
        let module = parts.next().unwrap_or("");
        format!("{}{name}", upper_camel(module))
    };
    let count = |f: &dyn Fn(&str) -> String, name: &str| {
        types.iter().filter(|t| f(t.as_str()) == name).count()
    };
    let mut out = BTreeMap::new();
    for ty in &types {
        let name = own(ty);
        let name = if count(&own, &name) == 1 {
            name
        } else {
            qualified(ty)
        };
        let taken = types
            .iter()
            .filter(|t| t != &ty)
            .any(|t| own(t) == name || qualified(t) == name);
        if !taken && is_ident(&name) {
            out.insert(ty.to_string(), name);
        }
    }
    out
}

fn upper_camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// Per stand-in, the serde traits the library asked of it: a recorded function instantiated
/// with the type (`from_str<app::Config>`) whose signature bounds a type parameter by
/// `Deserialize` (or `DeserializeOwned`) or `Serialize`. What a stand-in derives, the
/// stand-ins in its fields derive too.
fn serde_asked<'a>(
    trace: &Trace,
    api: &CrateApi,
    kept: &'a BTreeMap<String, Vec<(String, String)>>,
) -> BTreeMap<&'a str, Vec<&'static str>> {
    let mut asked: BTreeMap<&str, Vec<&'static str>> = BTreeMap::new();
    if api.serde_derive.is_none() {
        return asked;
    }
    for f in &trace.functions {
        // Only a function instantiated with a stand-in's type has its signature looked up.
        let mentioned: Vec<&String> = (kept.keys())
            .filter(|ty| crate::read::paths::mentions_path(&f.name, ty))
            .collect();
        if mentioned.is_empty() {
            continue;
        }
        let Some(signature) = declared_signature(api, &f.path) else {
            continue;
        };
        for ty in mentioned {
            for tr in ["Deserialize", "Serialize"] {
                if signature.contains(tr) {
                    add_with_fields(&mut asked, kept, ty, tr);
                }
            }
        }
    }
    asked
}

fn add_with_fields<'a>(
    asked: &mut BTreeMap<&'a str, Vec<&'static str>>,
    kept: &'a BTreeMap<String, Vec<(String, String)>>,
    ty: &str,
    tr: &'static str,
) {
    let Some((ty, fields)) = kept.get_key_value(ty) else {
        return;
    };
    let traits = asked.entry(ty.as_str()).or_default();
    if traits.contains(&tr) {
        return;
    }
    traits.push(tr);
    for (_, field) in fields {
        for inner in kept.keys() {
            if crate::read::paths::mentions_path(field, inner) {
                add_with_fields(asked, kept, inner, tr);
            }
        }
    }
}

/// The signature the library's source gives the function at `path` (a free function or an
/// inherent method: `toml::de::from_str`, `toml::value::Value::try_into`).
fn declared_signature<'a>(api: &'a CrateApi, path: &str) -> Option<&'a str> {
    let segments = crate::act::call::parse_fn_path(path).ok()?;
    let (krate, rest) = segments.split_first()?;
    if *krate != api.crate_name {
        return None;
    }
    let (name, owners) = rest.split_last()?;
    let free = api.find_module(owners).and_then(|m| m.functions.get(name));
    let method = owners
        .split_last()
        .and_then(|(ty, module)| api.find_module(module)?.types.get(ty)?.functions.get(name));
    free.or(method).map(|f| f.signature.as_str())
}

/// `definition` with serde's derives for `traits` added to its `#[derive(..)]`.
fn derive_serde(definition: &str, api: &CrateApi, traits: &[&str]) -> String {
    let Some(krate) = &api.serde_derive else {
        return definition.to_string();
    };
    if traits.is_empty() {
        return definition.to_string();
    }
    let mut order: Vec<&str> = ["Serialize", "Deserialize"]
        .into_iter()
        .filter(|t| traits.contains(t))
        .collect();
    order.dedup();
    let added: Vec<String> = order.iter().map(|t| format!(", {krate}::{t}")).collect();
    definition.replacen(")]\n#[allow", &format!("{})]\n#[allow", added.concat()), 1)
}

/// Calls `f` with the type and fields of every struct value inside `value`.
fn visit(value: &Value, f: &mut dyn FnMut(&str, &[carve_storage::Field])) {
    match value {
        Value::Struct { ty, fields } => {
            f(ty, fields);
            fields.iter().for_each(|x| visit(&x.value, f));
        }
        Value::Enum { fields, .. } => fields.iter().for_each(|x| visit(&x.value, f)),
        Value::Tuple { elems, .. } | Value::Seq { elems, .. } => {
            elems.iter().for_each(|e| visit(e, f))
        }
        Value::Ref { target, .. } => visit(target, f),
        _ => {}
    }
}

/// Whether a recorded struct type is one a test cannot name otherwise (see the module doc).
fn candidate(ty: &str, api: &CrateApi) -> bool {
    let segments: Vec<&str> = ty.split("::").collect();
    let [first, .., name] = segments.as_slice() else {
        return false;
    };
    if !segments.iter().all(|s| is_ident(s))
        || matches!(*first, "std" | "core" | "alloc")
        || api.dev_dependencies.contains(&first.replace('_', "-"))
        || api.dev_dependencies.contains(*first)
        || api.public_type(ty).is_some()
        || api.declared_type(ty).is_some()
    {
        return false;
    }
    // A type of the library a macro made (`bitflags!`'s `struct Flags`) is not declared, but
    // its name is in the library's source: the program's own type is not.
    *first != api.crate_name || !declared_in_lib_source(api, name)
}

fn declared_in_lib_source(api: &CrateApi, name: &str) -> bool {
    api.files.iter().any(|file| {
        std::fs::read_to_string(file).is_ok_and(|src| {
            ["struct ", "enum ", "type "]
                .iter()
                .any(|kw| mentions_word(&src, &format!("{kw}{name}")))
        })
    })
}

fn mentions_word(source: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    source.match_indices(word).any(|(at, _)| {
        !source[..at].chars().last().is_some_and(ident)
            && !source[at + word.len()..].chars().next().is_some_and(ident)
    })
}

fn last_segment(ty: &str) -> &str {
    ty.rsplit("::").next().unwrap_or(ty)
}

/// The library's types and the candidates still kept, as a test can name them.
struct Candidates<'a> {
    api: &'a CrateApi,
    kept: &'a BTreeMap<String, Vec<(String, String)>>,
}

impl TypeFacts for Candidates<'_> {
    fn shape(&self, path: &str) -> Option<Shape> {
        self.api.shape(path).or_else(|| {
            self.kept.get(path).map(|fields| Shape {
                fields_public: true,
                unit: fields.is_empty(),
                comparable: true,
                debug: true,
                debug_derived: true,
            })
        })
    }
}

/// A field's recorded type as the stand-in declares it: nameable and owned.
fn field_type(ty: &str, facts: &Candidates) -> Option<String> {
    if ty.contains('&') || ty.contains('*') || ty.contains("dyn ") {
        return None;
    }
    test_spelling(ty, facts)
}

/// The stand-in's item: derives, then the struct with the recorded fields (a tuple struct when
/// they are `__0`, `__1`, …; a unit struct when there are none).
fn declare(
    (ty, name): (&str, &str),
    fields: &[(String, String)],
    kept: &BTreeMap<String, Vec<(String, String)>>,
    facts: &Candidates,
) -> StandIn {
    let name = name.to_string();
    // Written as a person does: the prelude's types by their names.
    let prelude: Vec<(String, String)> = ["Option", "Vec", "Box", "String", "Result"]
        .iter()
        .zip(["option", "vec", "boxed", "string", "result"])
        .map(|(t, m)| (format!("std::{m}::{t}"), t.to_string()))
        .collect();
    let types: Vec<String> = (fields.iter())
        .map(|(_, t)| field_type(t, facts).unwrap_or_default())
        .map(|t| crate::read::paths::spell_public(&t, &prelude))
        .collect();
    let mut derives = vec!["Debug", "Clone", "PartialEq", "PartialOrd"];
    if !has_float(ty, kept) {
        derives.extend(["Eq", "Ord", "Hash"]);
    }
    if !types.iter().any(|t| t.contains('[')) {
        derives.push("Default");
    }
    if is_copy(ty, kept) {
        derives.push("Copy");
    }
    let tuple = fields
        .iter()
        .enumerate()
        .all(|(i, (f, _))| *f == format!("__{i}"));
    let body = if fields.is_empty() {
        ";".to_string()
    } else if tuple {
        let parts: Vec<String> = types.iter().map(|t| format!("pub {t}")).collect();
        format!("({});", parts.join(", "))
    } else {
        let parts: Vec<String> = (fields.iter().zip(&types))
            .map(|((f, _), t)| format!("    pub {f}: {t},\n"))
            .collect();
        format!(" {{\n{}}}", parts.concat())
    };
    // The path is written split, so that the file's spelling of stand-in paths leaves it.
    let (module, own) = ty.rsplit_once("::").unwrap_or(("", ty));
    let definition = format!(
        "/// Stands for `{own}` of the recorded program's `{module}`: its recorded fields, std's derives.\n\
         #[derive({})]\n#[allow(dead_code)]\npub struct {name}{body}\n",
        derives.join(", ")
    );
    StandIn {
        path: ty.to_string(),
        name,
        unit: fields.is_empty(),
        definition,
    }
}

/// Whether a float is anywhere inside the stand-in's fields (no `Eq`, `Ord`, `Hash` then).
fn has_float(ty: &str, kept: &BTreeMap<String, Vec<(String, String)>>) -> bool {
    let float = |t: &str| {
        t.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .any(|w| w == "f32" || w == "f64")
    };
    fields_reach(ty, kept, &mut Vec::new(), false, &float)
}

/// Whether every field is a scalar or a `Copy` stand-in.
fn is_copy(ty: &str, kept: &BTreeMap<String, Vec<(String, String)>>) -> bool {
    let scalar = |t: &str| Prim::from_name(t).is_some();
    fields_reach(ty, kept, &mut Vec::new(), true, &scalar)
}

/// Over the field types of stand-in `ty` and, through them, of the stand-ins they name:
/// with `every`, whether each field passes `test` or is a stand-in whose fields all do;
/// without, whether some field (or one inside a stand-in it names) passes `test`. A type met
/// again on the way (a cycle) passes neither.
fn fields_reach(
    ty: &str,
    kept: &BTreeMap<String, Vec<(String, String)>>,
    seen: &mut Vec<String>,
    every: bool,
    test: &dyn Fn(&str) -> bool,
) -> bool {
    if seen.iter().any(|s| s == ty) {
        return false;
    }
    seen.push(ty.to_string());
    let mut fields = kept[ty].iter().map(|(_, t)| t.as_str());
    let mut field_passes = |t: &str| {
        let inner: Vec<&str> = if every {
            kept.contains_key(t).then_some(t).into_iter().collect()
        } else {
            (t.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')))
                .filter(|w| kept.contains_key(*w))
                .collect()
        };
        test(t)
            || inner
                .iter()
                .any(|w| fields_reach(w, kept, seen, every, test))
    };
    if every {
        fields.all(&mut field_passes)
    } else {
        fields.any(&mut field_passes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::rulebook;

    fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
        (list.iter())
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect()
    }

    fn declared(list: &[(&str, Vec<(String, String)>)]) -> BTreeMap<String, StandIn> {
        let api = &rulebook().api;
        let kept: BTreeMap<String, Vec<(String, String)>> = (list.iter())
            .map(|(t, f)| (t.to_string(), f.clone()))
            .collect();
        let facts = Candidates { api, kept: &kept };
        (kept.iter())
            .map(|(t, f)| (t.clone(), declare((t, last_segment(t)), f, &kept, &facts)))
            .collect()
    }

    #[test]
    fn only_types_no_test_can_name_otherwise_get_a_stand_in() {
        let api = &rulebook().api;
        assert!(candidate("app::Score", api));
        assert!(candidate("app::model::Score", api));
        // The library's own, std's, generic ones and paths that are no paths do not.
        assert!(!candidate("rulebook::Counter", api));
        assert!(!candidate("rulebook::Invalid", api));
        assert!(!candidate("alloc::string::String", api));
        assert!(!candidate("app::Wrap<u8>", api));
        assert!(!candidate("Score", api));
        // The program and the library may share the crate name (`src/main.rs` beside
        // `src/lib.rs`): a type the library's source does not declare is the program's.
        assert!(candidate("rulebook::Score", api));
    }

    #[test]
    fn a_stand_in_declares_the_recorded_fields_with_what_std_derives_for_them() {
        let all = declared(&[
            (
                "app::Score",
                fields(&[("points", "u32"), ("name", "alloc::string::String")]),
            ),
            ("app::Meters", fields(&[("__0", "f64")])),
            (
                "app::Pair",
                fields(&[
                    ("a", "u8"),
                    ("b", "app::Meters"),
                    (
                        "c",
                        "core::option::Option<alloc::vec::Vec<u8, alloc::alloc::Global>>",
                    ),
                ]),
            ),
            ("app::Marker", fields(&[])),
        ]);
        let score = &all["app::Score"].definition;
        assert!(
            score
                .contains("#[derive(Debug, Clone, PartialEq, PartialOrd, Eq, Ord, Hash, Default)]"),
            "{score}"
        );
        assert!(
            score.contains("pub struct Score {\n    pub points: u32,\n    pub name: String,\n}")
        );
        let meters = &all["app::Meters"].definition;
        assert!(
            meters.contains("#[derive(Debug, Clone, PartialEq, PartialOrd, Default, Copy)]"),
            "{meters}"
        );
        assert!(meters.contains("pub struct Meters(pub f64);"), "{meters}");
        // A float inside another stand-in takes `Eq`, `Ord` and `Hash` away from this one too.
        let pair = &all["app::Pair"].definition;
        assert!(pair.contains("PartialOrd, Default)]"), "{pair}");
        assert!(pair.contains("pub b: app::Meters,"), "{pair}");
        // The prelude's types by their names.
        assert!(pair.contains("pub c: Option<Vec<u8>>,"), "{pair}");
        assert!(all["app::Marker"].definition.contains("pub struct Marker;"));
        assert!(all["app::Marker"].unit);
    }

    #[test]
    fn types_of_one_name_are_told_apart_by_their_module() {
        let types: Vec<String> = ["app::type_errors::Foo", "app::arrays::Foo", "app::Score"]
            .map(String::from)
            .to_vec();
        let named = names(types.iter());
        assert_eq!(named["app::type_errors::Foo"], "TypeErrorsFoo");
        assert_eq!(named["app::arrays::Foo"], "ArraysFoo");
        assert_eq!(named["app::Score"], "Score");
        // Still the same name: neither gets one.
        let twins: Vec<String> = ["a::m::Foo", "b::m::Foo"].map(String::from).to_vec();
        assert!(names(twins.iter()).is_empty());
    }

    #[test]
    fn serde_s_derives_are_added_where_the_library_asked_for_them() {
        let mut api = rulebook().api.clone();
        let all = declared(&[("app::Config", fields(&[("port", "u16")]))]);
        let plain = &all["app::Config"].definition;
        assert_eq!(derive_serde(plain, &api, &["Deserialize"]), *plain);
        api.serde_derive = Some("serde".to_string());
        let derived = derive_serde(plain, &api, &["Deserialize", "Serialize"]);
        assert!(
            derived.contains(
                "Default, Copy, serde::Serialize, serde::Deserialize)]\n#[allow(dead_code)]"
            ),
            "{derived}"
        );
        assert_eq!(derive_serde(plain, &api, &[]), *plain);
    }

    #[test]
    fn a_field_no_test_can_name_or_holding_a_reference_gets_no_stand_in() {
        let api = &rulebook().api;
        let kept = BTreeMap::new();
        let facts = Candidates { api, kept: &kept };
        assert_eq!(field_type("&str", &facts), None);
        assert_eq!(field_type("other::Thing", &facts), None);
        assert_eq!(
            field_type("alloc::vec::Vec<u8, alloc::alloc::Global>", &facts).as_deref(),
            Some("std::vec::Vec<u8>")
        );
    }
}
