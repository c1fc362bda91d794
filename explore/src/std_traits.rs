//! Standard traits' methods the run called on a public type (`Iterator::next`,
//! `IntoIterator::into_iter`, `Display::fmt`, `FromStr::from_str`, `PartialEq::eq`,
//! `PartialOrd::partial_cmp`, `Ord::cmp`, `Clone::clone`), explored as a test calls them, and
//! the calls whose recorded results were objects of another explored type, which fill that
//! type's slots.

use std::collections::{BTreeMap, BTreeSet};

use carve_generator::{type_arguments, CrateApi, TypeApi};

use crate::api::{
    last_segment, object_index, Callable, Explorable, Made, Param, Pass, PoolKind, Receiver, Ret,
};

/// How a test drains an iterator: the rest of its items, at most 1000 (an iterator may not
/// end).
pub(crate) const DRAIN: &str = "by_ref().take(1000).collect::<Vec<_>>";

/// The methods of standard traits a public type implements that the run called, as a test
/// calls them: `Iterator::next` as `recv.next()` (its `Option` compared through `Debug`; and
/// the rest of the items as `recv.by_ref().take(1000).collect::<Vec<_>>()`),
/// `Display::fmt` as `recv.to_string()` (and with format specs when the impl reads the
/// formatter's options: `formats.rs`),
/// `FromStr::from_str` as `<T as FromStr>::from_str(s)`
/// (a constructor: its `Ok` fills a slot), `PartialEq::eq`, `PartialOrd::partial_cmp` and
/// `Ord::cmp` as `a.eq(&b)` with both objects from the type's slots (a hand-written equality
/// is code like any other: smallvec's compares two vectors item by item), `Clone::clone` as
/// `a.clone()` into a slot, `Iterator::size_hint` and `IntoIterator::into_iter` as
/// `recv.size_hint()` and `recv.into_iter()` (the slot what it makes goes to is found by
/// [`made_elsewhere`]). Recorded under the trait's path:
/// `<shlex::Shlex as core::iter::traits::iterator::Iterator>::next`,
/// `<smallvec::SmallVec<A> as core::cmp::PartialEq<smallvec::SmallVec<B>>>::eq`.
pub(crate) fn std_trait_methods(
    out: &mut Explorable,
    (type_path, recorded): (&str, &str),
    (api, ty): (&CrateApi, &TypeApi),
    called: &BTreeSet<String>,
) {
    if !ty.public {
        return;
    }
    let traits = impls_anywhere(api, ty);
    let formats = crate::formats::reads_options(api, ty);
    for (tr, method) in [
        ("Iterator", "next"),
        ("Iterator", "size_hint"),
        ("IntoIterator", "into_iter"),
        ("Display", "fmt"),
        ("FromStr", "from_str"),
        ("PartialEq", "eq"),
        ("PartialOrd", "partial_cmp"),
        ("Ord", "cmp"),
        ("Clone", "clone"),
    ] {
        if !traits.contains(tr) {
            continue;
        }
        let Some(path) = recorded_trait_method(called, recorded, &format!("{tr}>::{method}"))
        else {
            continue;
        };
        let object = object_index(out, type_path, ty);
        if method == "next" {
            // Besides one item, the rest at once (at most a bound's worth: an iterator may
            // not end): a parser's later events are where most of its lines are.
            out.callables.push(Callable {
                path: format!("{}collect", path.trim_end_matches("next")),
                call: DRAIN.to_string(),
                ..std_trait_callable(method, String::new(), type_path, object)
            });
        }
        let callable = std_trait_callable(method, path, type_path, object);
        if method == "fmt" && formats {
            out.callables.extend(crate::formats::formatted(&callable));
        }
        out.callables.push(callable);
    }
}

/// Standard trait method `method` recorded as `path`, on object type `object` (a test names
/// it `type_path`), as [`std_trait_methods`] calls it. What `into_iter` makes is found later,
/// by what the run's calls returned ([`made_elsewhere`]).
fn std_trait_callable(method: &str, path: String, type_path: &str, object: usize) -> Callable {
    let receiver = Some(Receiver {
        object,
        mutable: matches!(method, "next" | "into_iter"),
        by_value: method == "into_iter",
    });
    let other = || {
        vec![Param {
            name: "other".to_string(),
            kind: PoolKind::Object(object),
            pass: Pass::Ref,
        }]
    };
    let (call, receiver, params, makes, ret) = match method {
        "fmt" => (
            "to_string".to_string(),
            receiver,
            Vec::new(),
            None,
            Ret::Text,
        ),
        "eq" => {
            let ret = Ret::Scalar("bool".to_string());
            ("eq".to_string(), receiver, other(), None, ret)
        }
        "partial_cmp" | "cmp" => (method.to_string(), receiver, other(), None, Ret::Other),
        "clone" => (
            "clone".to_string(),
            receiver,
            Vec::new(),
            Some((object, Made::Plain)),
            Ret::Other,
        ),
        "from_str" => (
            format!("<{type_path} as std::str::FromStr>::from_str"),
            None,
            vec![Param {
                name: "s".to_string(),
                kind: PoolKind::Str,
                pass: Pass::Value,
            }],
            Some((object, Made::Result)),
            Ret::Other,
        ),
        // `next`, `size_hint`, `into_iter`.
        _ => (method.to_string(), receiver, Vec::new(), None, Ret::Other),
    };
    Callable {
        path,
        call,
        receiver,
        params,
        makes,
        ret,
    }
}

/// A call the run made whose result was a value of another explored object type fills a slot
/// of that type (`Url::origin` makes the `Origin` whose methods are explored; `into_iter` an
/// iterator), when the run made it on the instance explored and it returned the instance
/// explored, or made a type with the receiver's arguments: smallvec's `into_iter` was called
/// on a `SmallVec<[i64; 4]>` and made an `IntoIter<[i64; 4]>`, so on the `SmallVec<[u32; 8]>`
/// explored it makes an `IntoIter<[u32; 8]>` (the instance [`recorded_instances`] gives
/// `IntoIter` then).
///
/// A result inside an `Ok` or a `Some` fills a slot only of a type nothing else makes (no
/// constructor of its own, no `Default`, no plain result of another call): glob's `Paths`,
/// which only `glob_with` gives. Where the type has a maker, such a call stays a call of its
/// own: url's `ParseOptions::parse` filling `Url` slots besides `Url::parse` cost url's
/// search about a tenth of the lines it reached beyond the run (three seeds, 1,500,000
/// sequences each).
///
/// [`recorded_instances`]: crate::generic_types::recorded_instances
pub(crate) fn made_elsewhere(
    out: &mut Explorable,
    results: &BTreeMap<String, BTreeSet<(Option<String>, String)>>,
) {
    fill_from_results(out, results, false);
    fill_from_results(out, results, true);
}

/// One pass of [`made_elsewhere`]: plain results, or (`wrapped`) results inside an `Ok` or a
/// `Some` of types nothing made before.
fn fill_from_results(
    out: &mut Explorable,
    results: &BTreeMap<String, BTreeSet<(Option<String>, String)>>,
    wrapped: bool,
) {
    let objects = out.objects.clone();
    let made_already: BTreeSet<usize> = (out.callables.iter())
        .filter_map(|c| c.makes.map(|(o, _)| o))
        .chain((objects.iter().enumerate()).filter_map(|(i, o)| o.default.then_some(i)))
        .collect();
    for c in out.callables.iter_mut().filter(|c| c.makes.is_none()) {
        let Some(recorded) = results.get(&c.path) else {
            continue;
        };
        let made_on = |receiver: &Option<String>, ty: &String| match (c.receiver, receiver) {
            (None, _) => Some(ty.clone()),
            (Some(r), Some(t)) if same_instance(t, &objects[r.object].path) => Some(ty.clone()),
            (Some(r), Some(t)) => with_receivers_arguments(t, ty, &objects[r.object].path),
            (Some(_), None) => None,
        };
        let made = (recorded.iter())
            .filter_map(|(receiver, ty)| {
                let (inner, made) = unwrapped(ty);
                let fits = (made == Made::Returned) != wrapped;
                Some((made_on(receiver, &inner).filter(|_| fits)?, made))
            })
            .find_map(|(ty, made)| {
                let o = objects.iter().position(|o| same_instance(&ty, &o.path))?;
                (!wrapped || !made_already.contains(&o)).then_some((o, made))
            });
        if made.is_some() {
            c.makes = made;
        }
    }
}

/// A recorded result type as the object it holds and how: `T` of a `Result<T, E>` (filled
/// when `Ok`) or an `Option<T>` (when `Some`), else the type itself (glob's `glob_with` gives
/// a `Result<Paths, PatternError>`, and the `Paths` is what `next` is explored on).
fn unwrapped(ty: &str) -> (String, Made) {
    let first_argument = || {
        let (name, rest) = ty.split_once('<')?;
        let inside = rest.strip_suffix('>')?;
        let first = carve_generator::split_top(inside, ",").into_iter().next()?;
        Some((name.rsplit("::").next()?.trim(), first.trim().to_string()))
    };
    match first_argument() {
        Some(("Result", inner)) => (inner, Made::ReturnedOk),
        Some(("Option", inner)) => (inner, Made::ReturnedSome),
        _ => (ty.to_string(), Made::Returned),
    }
}

/// The type a call on `written` (a receiver as a test writes it) makes, when on `receiver`
/// (as recorded) it made `made`, another type with the receiver's type arguments:
/// `smallvec::IntoIter<[u32; 8]>` on a `smallvec::SmallVec<[u32; 8]>`, when a
/// `smallvec::SmallVec<[i64; 4]>` made a `smallvec::IntoIter<[i64; 4]>`.
fn with_receivers_arguments(receiver: &str, made: &str, written: &str) -> Option<String> {
    let made_base = crate::generic_types::made_alike(receiver, made)?;
    let (_, written_args) = written.split_once('<')?;
    Some(format!("{made_base}<{written_args}"))
}

/// Whether the recorded type `recorded` is the type a test writes as `written`: the same name,
/// and each type argument `written` keeps the recorded one as a pool writes it
/// (`smallvec::IntoIter<[u32; 8]>` and `smallvec::IntoIter<[u32; 8]>`; `url::origin::Origin`
/// and `url::Origin`).
fn same_instance(recorded: &str, written: &str) -> bool {
    let (Ok(r), Ok(w)) = (
        syn::parse_str::<syn::Type>(recorded),
        syn::parse_str::<syn::Type>(written),
    ) else {
        return false;
    };
    let (Some(r), Some(w)) = (last_segment(&r), last_segment(&w)) else {
        return false;
    };
    let (r_args, w_args) = (type_arguments(r), type_arguments(w));
    r.ident == w.ident
        && w_args.len() <= r_args.len()
        && (w_args.iter().zip(&r_args)).all(|(w, r)| {
            let pooled = crate::generic_types::pooled_type;
            pooled(r).is_some_and(|r| Some(r) == pooled(w))
        })
}

/// The traits `ty` implements, with those of impls written in another module, which the
/// crate's API notes under the name the impl gives the type there (`impl FromStr for ByteSize`
/// in bytesize's `parse`, where `ByteSize` is imported): a type of that name the module does
/// not declare. (Two types of one name in two modules may mix their traits: a call that does
/// not compile is then taken out of the harness with the reason.)
pub(crate) fn impls_anywhere(api: &CrateApi, ty: &TypeApi) -> BTreeSet<String> {
    (with_impls_elsewhere(api, ty))
        .flat_map(|t| t.traits.iter().cloned())
        .collect()
}

/// `ty` and the entries the crate's API makes for it where an impl of another module names it
/// (see [`impls_anywhere`]).
pub(crate) fn with_impls_elsewhere<'a>(
    api: &'a CrateApi,
    ty: &'a TypeApi,
) -> impl Iterator<Item = &'a TypeApi> {
    let elsewhere = (api.modules.values()).filter_map(|m| m.types.get(&ty.name));
    std::iter::once(ty).chain(elsewhere.filter(|t| !t.declared))
}

/// The recorded path of the trait method `tail` (`FromStr>::from_str`) of the type recorded as
/// `recorded`, as the run called it: `<bytesize::ByteSize as core::str::traits::FromStr>::from_str`,
/// or, for an impl in another module than the type, as rustc names it there:
/// `bytesize::parse::<impl core::str::traits::FromStr for bytesize::ByteSize>::from_str`.
pub(crate) fn recorded_trait_method(
    called: &BTreeSet<String>,
    recorded: &str,
    tail: &str,
) -> Option<String> {
    // `<shlex::Shlex as …`, or a generic type's `<smallvec::IntoIter<A> as …`.
    let head = format!("<{recorded}");
    let (tr, method) = tail.split_once(">::")?;
    let in_module = format!("{tr} for {recorded}>::{method}");
    called
        .iter()
        .find(|p| {
            let of_type = p
                .strip_prefix(&head)
                .is_some_and(|rest| rest.starts_with(" as ") || rest.starts_with('<'));
            (of_type && trait_method(p) == Some((tr, method)))
                || (p.contains("<impl ") && p.ends_with(&in_module))
        })
        .cloned()
}

/// The trait's name (its generic arguments left out) and the method of a path recorded as
/// `<T as path::Trait<Args>>::method`: `<smallvec::SmallVec<A> as
/// core::cmp::PartialEq<smallvec::SmallVec<B>>>::eq` is (`PartialEq`, `eq`).
fn trait_method(path: &str) -> Option<(&str, &str)> {
    let (head, method) = path.rsplit_once(">::")?;
    let (_, tr) = head.split_once(" as ")?;
    let tr = tr.split('<').next()?;
    Some((tr.rsplit("::").next()?, method))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_type_is_the_instance_written_when_its_name_and_kept_arguments_agree() {
        let recorded = "smallvec::IntoIter<[u32; 8]>";
        assert!(same_instance(recorded, "smallvec::IntoIter<[u32; 8]>"));
        assert!(!same_instance(recorded, "smallvec::IntoIter<[i64; 4]>"));
        assert!(!same_instance(
            recorded,
            "smallvec::Drain<'static, [u32; 8]>"
        ));
        assert!(same_instance("url::origin::Origin", "url::Origin"));
        // Defaulted parameters are left out of the written instance.
        let lru = "lru::LruCache<u64, alloc::string::String, hashbrown::DefaultHashBuilder>";
        assert!(same_instance(lru, "lru::LruCache<u64, String>"));
    }

    #[test]
    fn a_result_inside_ok_fills_a_slot_only_of_a_type_nothing_else_makes() {
        let load = |ex: &mut Explorable| {
            let mut c = crate::testdata::getter("load", "u8");
            (c.path, c.call, c.receiver) = ("g::load".into(), "g::load".into(), None);
            ex.callables.push(c);
        };
        let results: BTreeMap<String, BTreeSet<(Option<String>, String)>> = [(
            "g::load".to_string(),
            [(None, "core::result::Result<g::Gauge, g::E>".to_string())].into(),
        )]
        .into();
        // `Gauge::new` and `Default` make gauges: `load` stays a call of its own.
        let mut ex = crate::testdata::gauge_api(Vec::new());
        load(&mut ex);
        made_elsewhere(&mut ex, &results);
        assert_eq!(ex.callables[1].makes, None);
        // Nothing else makes one: `load`'s `Ok` fills the slot.
        let mut ex = crate::testdata::gauge_api(Vec::new());
        ex.callables.clear();
        ex.objects[0].default = false;
        load(&mut ex);
        made_elsewhere(&mut ex, &results);
        assert_eq!(ex.callables[0].makes, Some((0, Made::ReturnedOk)));
    }

    #[test]
    fn a_result_or_an_option_gives_the_object_inside_it_as_recorded() {
        let cases = [
            (
                "core::result::Result<glob::Paths, glob::PatternError>",
                ("glob::Paths", Made::ReturnedOk),
            ),
            (
                "core::option::Option<smallvec::IntoIter<[i64; 4]>>",
                ("smallvec::IntoIter<[i64; 4]>", Made::ReturnedSome),
            ),
            (
                "core::result::Result<a::Map<u8, (u8, u8)>, a::E>",
                ("a::Map<u8, (u8, u8)>", Made::ReturnedOk),
            ),
            ("roll::Back", ("roll::Back", Made::Returned)),
            (
                "alloc::vec::Vec<u8>",
                ("alloc::vec::Vec<u8>", Made::Returned),
            ),
        ];
        for (ty, (inner, made)) in cases {
            assert_eq!(unwrapped(ty), (inner.to_string(), made), "{ty}");
        }
    }

    #[test]
    fn a_type_made_with_the_receivers_arguments_is_made_with_the_explored_receivers() {
        let (receiver, made) = (
            "smallvec::SmallVec<[i64; 4]>",
            "smallvec::IntoIter<[i64; 4]>",
        );
        assert_eq!(
            with_receivers_arguments(receiver, made, "smallvec::SmallVec<[u32; 8]>").as_deref(),
            Some("smallvec::IntoIter<[u32; 8]>")
        );
        // Another type's arguments than the receiver's: nothing follows.
        let iter = "lru::Iter<'_, u64, alloc::string::String>";
        let lru = "lru::LruCache<u64, alloc::string::String, hashbrown::DefaultHashBuilder>";
        assert_eq!(
            with_receivers_arguments(lru, iter, "lru::LruCache<u64, String>"),
            None
        );
    }

    #[test]
    fn a_trait_method_path_names_its_trait_without_generic_arguments() {
        let eq = "<smallvec::SmallVec<A> as core::cmp::PartialEq<smallvec::SmallVec<B>>>::eq";
        assert_eq!(trait_method(eq), Some(("PartialEq", "eq")));
        let next = "<shlex::Shlex as core::iter::traits::iterator::Iterator>::next";
        assert_eq!(trait_method(next), Some(("Iterator", "next")));
        assert_eq!(trait_method("shlex::split"), None);
        let called: BTreeSet<String> = [eq.to_string()].into();
        assert_eq!(
            recorded_trait_method(&called, "smallvec::SmallVec<A>", "PartialEq>::eq").as_deref(),
            Some(eq)
        );
        assert_eq!(
            recorded_trait_method(&called, "smallvec::SmallVec<A>", "Ord>::cmp"),
            None
        );
    }

    #[test]
    fn a_std_trait_method_is_found_under_either_path_rustc_gives_it() {
        let called: BTreeSet<String> = [
            "bytesize::parse::<impl core::str::traits::FromStr for bytesize::ByteSize>::from_str",
            "<shlex::Shlex as core::iter::traits::iterator::Iterator>::next",
        ]
        .map(String::from)
        .into();
        assert_eq!(
            recorded_trait_method(&called, "bytesize::ByteSize", "FromStr>::from_str").as_deref(),
            Some("bytesize::parse::<impl core::str::traits::FromStr for bytesize::ByteSize>::from_str")
        );
        assert_eq!(
            recorded_trait_method(&called, "shlex::Shlex", "Iterator>::next").as_deref(),
            Some("<shlex::Shlex as core::iter::traits::iterator::Iterator>::next")
        );
        assert_eq!(
            recorded_trait_method(&called, "bytesize::Unit", "FromStr>::from_str"),
            None
        );
    }
}
