//! How to build each argument of a call: the argument rules, one file each in `args/`, tried in
//! the order of [`RULES`]; the first that builds the argument (or refuses it) decides. The same
//! rules build the arguments of the call a test makes ([`call_args`], [`Place::Tested`]) and of
//! a producer call that rebuilds an object ([`Place::Producer`]). A new way to build an
//! argument is a new file in `args/` and one line here.

pub(crate) mod borrowed;
pub(crate) mod closure_env;
pub(crate) mod literal;
pub(crate) mod mapped;
pub(crate) mod mock;
pub(crate) mod rebuilt_object;
pub(crate) mod replay_closure;
pub(crate) mod site;
pub(crate) mod value_literal;

pub(crate) use site::{Built, Place, Site, Verdict};

use carve_storage::{Arg, Call};

use crate::arrange::builder::Builder;
use crate::arrange::context::Ctx;
use crate::body::Effect;
use crate::naming;
use crate::read::crate_api::FnApi;
use crate::reasons::UNDECODED;

/// An argument rule.
pub(crate) type Rule = fn(&Site, &mut Builder) -> Verdict;

/// The argument rules in the order they are tried, by name.
pub(crate) const RULES: &[(&str, Rule)] = &[
    ("mock", mock::rule),
    ("replay_closure", replay_closure::rule),
    ("mapped", mapped::rule),
    ("literal", literal::rule),
    ("value_literal", value_literal::rule),
    ("closure_env", closure_env::rule),
    ("rebuilt_object", rebuilt_object::rule),
];

/// The argument at `site` built by the first rule that decides, with the rule's name; `Err`
/// with the reason no test can pass it.
pub(crate) fn build(site: &Site, b: &mut Builder) -> Result<(&'static str, Built), &'static str> {
    let (name, decided) = decide(site, b);
    decided.map(|built| (name, built))
}

/// The rule that decided the argument at `site`, and what it decided.
pub(crate) fn decide(site: &Site, b: &mut Builder) -> (&'static str, Result<Built, &'static str>) {
    for (name, rule) in RULES {
        match rule(site, b) {
            Verdict::Built(built) => return (name, Ok(built)),
            Verdict::Refused(why) => return (name, Err(why)),
            Verdict::Pass => {}
        }
    }
    // `rebuilt_object` decides every argument that reaches it.
    ("none", Err(UNDECODED))
}

/// The arguments of the call a test makes, as Rust expressions, with what else they need.
pub(crate) struct CallArgs {
    pub(crate) exprs: Vec<String>,
    /// Per argument, a slug the test's name is made of.
    pub(crate) slugs: Vec<String>,
    /// `&mut` object arguments: (parameter, variable), whose effects the test may check.
    pub(crate) objects: Vec<(String, String)>,
    /// How many times each replay closure was called, checked first after the call.
    pub(crate) closure_checks: Vec<Effect>,
    /// The same for a closure the result keeps, checked last (the result's checks run it).
    pub(crate) closure_checks_last: Vec<Effect>,
}

/// Each of `args` (the recorded arguments but `self`, one per parameter of `api`) as the
/// test passes it, built by [`RULES`].
pub(crate) fn call_args(
    cx: &Ctx,
    b: &mut Builder,
    call: &Call,
    api: &FnApi,
    args: &[&Arg],
) -> Result<CallArgs, &'static str> {
    let mut out = CallArgs {
        exprs: Vec::with_capacity(api.params.len()),
        slugs: Vec::new(),
        objects: Vec::new(),
        closure_checks: Vec::new(),
        closure_checks_last: Vec::new(),
    };
    let same = |addr| addr;
    for (arg, param) in args.iter().copied().zip(&api.params) {
        let site = Site {
            cx,
            call,
            arg,
            param,
            callee: &api.ident,
            place: Place::Tested,
            moved: &same,
        };
        let (_, built) = build(&site, b)?;
        out.slugs.push(match built.slug {
            Some(slug) => slug.to_string(),
            None => naming::value_slug(&arg.value),
        });
        out.exprs.push(built.expr);
        out.objects.extend(built.mutated);
        if built.check_last {
            out.closure_checks_last.extend(built.check);
        } else {
            out.closure_checks.extend(built.check);
        }
    }
    Ok(out)
}
