//! Which public calls can be explored: in, the crate's API (read with syn by the generator) and
//! the functions the recording reached; out, plain-data [`Callable`]s whose arguments all come
//! from value pools and whose receivers live in object slots.
//!
//! Explored: free functions and inherent associated functions the run called, whose every
//! parameter is poolable (integers, `bool`, `char`, floats, `&str`/`String`, slices and `Vec`s
//! of integers, by value or behind `&`), methods taking `&self`, `&mut self` or `self` (the
//! object leaves its slot; a builder's `-> Self` fills one again), and the
//! constructors (`-> Self`, `-> Result<Self, E>`, `-> Option<Self>`) that fill the slots.
//! The functions the recording reached are called: a public function the program never ran
//! may delete files or open sockets; the run says which ones are safe to call, and those that
//! read what a test cannot control (clock, environment, writes) are left out. When the crate
//! can only compute (neither its code nor its dependencies' names a way to touch the world,
//! `pure.rs`), its other public functions are called too.

use std::collections::{BTreeMap, BTreeSet};

use carve_generator::{type_arguments, CrateApi, FnApi, ModuleApi, TypeApi};
use carve_storage::Trace;
use serde::Serialize;

/// The kind of values one pool holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum PoolKind {
    /// A primitive scalar by its Rust name: `i32`, `bool`, `char`, `f64`...
    Scalar(String),
    /// Text, as `&str` (a `String` is made from it).
    Str,
    /// A slice of primitive integers by the element's name: `u8` for bytes.
    Slice(String),
    /// A non-zero integer (`NonZeroUsize`, `NonZero<u32>`) by the integer's name: mostly a
    /// capacity (`LruCache::new(cap)`).
    NonZero(String),
    /// `None` or `Some` of a scalar or text (`Url::set_port(Option<u16>)`).
    Option(Box<PoolKind>),
    /// A list of texts, made from the text pool: `&[&str]`, `Vec<&str>`, or what an
    /// `IntoIterator<Item = &str>` takes (`shlex::try_join(words)`).
    Texts,
    /// A range of the named integer, made from its pool: what `R: RangeBounds<usize>` takes
    /// (`drain(1..3)`).
    Range(String),
    /// A closure, by the function pointer type that holds it (`fn(&mut u32) -> bool`): what
    /// `F: FnMut(&mut T) -> bool` takes. A few closures of each shape (`closures.rs`).
    Closure(String),
    /// An object of explored type N, from its slots, not a pool (`&Pattern`, `MatchOptions`):
    /// behind `&` (`Pass::Ref`) or a clone (`Pass::Value`).
    Object(usize),
}

/// How a pooled value is handed to the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Pass {
    /// As it is in the pool (`i32`, `&str`, `&[u8]`).
    Value,
    /// Behind a reference (`&i32`).
    Ref,
    /// Owned (`String`, `Vec<u8>`).
    Owned,
    /// A reference to an owned one (`&String`, `&Vec<u8>`).
    RefOwned,
    /// A mutable reference to an owned copy (`&mut [u8]`, `&mut Vec<u8>`, `&mut String`):
    /// a buffer the call writes into.
    MutOwned,
    /// An owned list as an iterator that does not tell its length up front
    /// (`vec![1, 2].into_iter().filter(|_| true)`, a size hint of 0): what takes an
    /// `IntoIterator` may trust the hint (smallvec's `insert_many` reserves for it, then
    /// inserts the rest one at a time).
    Unsized,
}

/// One parameter after the receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Param {
    pub name: String,
    pub kind: PoolKind,
    pub pass: Pass,
}

/// A type whose values live in object slots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectType {
    /// How a test names it: `bounds::Gauge`.
    pub path: String,
    /// The type's name: `Gauge`.
    pub name: String,
    /// Implements `Default` (a slot starts filled).
    pub default: bool,
    /// Written with `<'static>`: the type has a lifetime parameter (the harness found out).
    pub borrows: bool,
    /// Implements `Copy`: an argument of the type is passed as it is, not cloned.
    pub copy: bool,
}

/// Most getters asserted of one object.
const MAX_GETTERS: usize = 6;

/// How a struct literal's callable ends its `call`: `glob::MatchOptions { .. }` makes the
/// struct from its parameters, one per field, in order.
const LITERAL: &str = " { .. }";

/// How the callable of a value written as it is ends its `call`: `similar::Algorithm::Lcs
/// (value)` is the value `similar::Algorithm::Lcs` (a variant, an associated const, a flag).
const VALUE: &str = " (value)";

impl Callable {
    /// The call of `target` (its path, or `recv.method`) with `args`: `target(a, b)`, or for a
    /// struct literal `Type { field: a, other: b }`.
    pub fn written(&self, target: &str, args: &[String]) -> String {
        if let Some(op) = crate::operators::written(target, args) {
            return op;
        }
        if let Some(formatted) = crate::formats::written(target) {
            return formatted;
        }
        if let Some(value) = target.strip_suffix(VALUE) {
            return value.to_string();
        }
        match target.strip_suffix(LITERAL) {
            Some(ty) => {
                let fields: Vec<String> = (self.params.iter())
                    .zip(args)
                    .map(|(p, a)| format!("{}: {a}", p.name))
                    .collect();
                format!("{ty} {{ {} }}", fields.join(", "))
            }
            None => format!("{target}({})", args.join(", ")),
        }
    }

    /// Whether it collects its result into `Collected` (`trait_calls.rs`): no call the run
    /// made, so none of its calls is the recording's own.
    pub fn into_collected(&self) -> bool {
        self.call.contains(crate::trait_calls::INTO_COLLECTED)
    }

    /// Whether it drains an iterator (`recv.by_ref().take(1000).collect::<Vec<_>>()`).
    pub fn drains(&self) -> bool {
        self.call == crate::std_traits::DRAIN
    }

    /// Whether it writes a value as it is (a struct literal, a variant, a const): no crate code
    /// runs, and what it gives is what the test wrote, not an outcome.
    pub fn writes_value(&self) -> bool {
        self.call.ends_with(LITERAL) || self.call.ends_with(VALUE)
    }

    /// Whether it is `Display` with a format spec (`formats.rs`): one function with
    /// `to_string`, sharing its outcomes, counted once.
    pub fn is_format_spec(&self) -> bool {
        self.call.ends_with(crate::formats::FORMAT)
    }

    /// Whether it is an operator (`operators.rs`): `a + b`, `recv += b`.
    pub fn is_operator(&self) -> bool {
        self.call.ends_with(crate::operators::OPERATOR)
    }

    /// Whether it holds, makes or takes an object of type `o`.
    pub fn uses_object(&self, o: usize) -> bool {
        self.receiver.is_some_and(|r| r.object == o)
            || self.makes.is_some_and(|m| m.0 == o)
            || self.params.iter().any(|p| p.kind == PoolKind::Object(o))
    }

    /// Whether a call changes its receiver in place (`&mut self`).
    pub fn mutates_receiver(&self) -> bool {
        self.receiver.is_some_and(|r| r.mutable && !r.by_value)
    }

    /// The object slot a call (its pool and slot indices, `digits`) takes its receiver from.
    pub fn receiver_slot(&self, digits: &[u64]) -> Option<(usize, u64)> {
        (self.receiver).map(|r| (r.object, digits.first().copied().unwrap_or(0)))
    }

    /// The object slot a call (its pool and slot indices, `digits`) filled with what it made,
    /// given its `outcome`: its last index, when it makes an object and that outcome filled
    /// it (a maker's `Err`, `None` or panic fills nothing, [`Made::fills`]).
    pub fn filled_slot(
        &self,
        digits: &[u64],
        outcome: Option<&crate::harness::run::CallOutcome>,
    ) -> Option<(usize, u64)> {
        (self.makes)
            .filter(|(_, how)| how.fills(outcome))
            .map(|(t, _)| (t, digits.last().copied().unwrap_or(0)))
    }

    /// The same call with each owned list at `places` (among its parameters) given as an
    /// iterator that does not tell its length (`Pass::Unsized`); `None` when none is.
    pub fn unsized_twin(&self, places: &[usize]) -> Option<Callable> {
        let mut twin = self.clone();
        let mut any = false;
        for &at in places {
            if let Some(p) = twin.params.get_mut(at) {
                if p.pass == Pass::Owned && matches!(p.kind, PoolKind::Slice(_)) {
                    p.pass = Pass::Unsized;
                    any = true;
                }
            }
        }
        any.then_some(twin)
    }

    /// Whether it is the twin [`Self::unsized_twin`] made.
    pub fn is_unsized_twin(&self) -> bool {
        self.params.iter().any(|p| p.pass == Pass::Unsized)
    }

    /// The object slots a call (its pool and slot indices, `digits`) reads: its receiver's and
    /// its object arguments'.
    pub fn slots_read(&self, digits: &[u64]) -> Vec<(usize, u64)> {
        let mut at = digits.iter().copied();
        let mut out = Vec::new();
        if let Some(r) = self.receiver {
            out.push((r.object, at.next().unwrap_or(0)));
        }
        for p in &self.params {
            let slot = at.next().unwrap_or(0);
            if let PoolKind::Object(o) = p.kind {
                out.push((o, slot));
            }
        }
        out
    }

    /// Whether it reads an object of type `object` and answers something: a `&self` method
    /// that makes nothing and returns a value a test can check, not `to_string` or a format,
    /// an operator, a value written as it is or a collection into `Collected` (what
    /// [`Explorable::getters`] and `lookups.rs`'s lookups choose from).
    pub fn reads(&self, object: usize) -> bool {
        self.receiver
            .is_some_and(|r| r.object == object && !r.mutable && !r.by_value)
            && self.makes.is_none()
            && !matches!(self.ret, Ret::Unit)
            && self.call != "to_string"
            && !(self.is_format_spec()
                || self.is_operator()
                || self.writes_value()
                || self.into_collected())
    }
}

impl Explorable {
    /// The cheap getters of object type `object` (callable indices): `&self` methods with no
    /// argument that make nothing (`ratio()`, `len()`), what a test reads an object's state by
    /// when its `Debug` does not say it; at most [`MAX_GETTERS`].
    pub fn getters(&self, object: usize) -> Vec<usize> {
        self.callables
            .iter()
            .enumerate()
            .filter(|(_, c)| c.reads(object) && c.params.is_empty())
            .map(|(i, _)| i)
            .take(MAX_GETTERS)
            .collect()
    }

    /// Per callable, whether a sequence can start with it: its receiver and object arguments
    /// are of types whose slots start filled (`Default`).
    pub fn can_come_first(&self) -> Vec<bool> {
        let filled = |o: usize| self.objects[o].default;
        (self.callables.iter())
            .map(|c| {
                c.receiver.is_none_or(|r| filled(r.object))
                    && c.params.iter().all(|p| match p.kind {
                        PoolKind::Object(o) => filled(o),
                        _ => true,
                    })
            })
            .collect()
    }

    /// Whether no call holds or makes an object (an object type whose calls were all left out
    /// counts for nothing): nothing carries state from one call to the next.
    pub fn stateless(&self) -> bool {
        !self
            .callables
            .iter()
            .any(|c| c.receiver.is_some() || c.makes.is_some())
    }
}

impl ObjectType {
    /// The type as the harness's slots hold it.
    pub fn slot_type(&self) -> String {
        if self.borrows {
            format!("{}<'static>", self.path)
        } else {
            self.path.clone()
        }
    }
}

/// Takes object type `o` out, with the callables that use it (each left out with `why`).
pub(crate) fn remove_object(ex: &mut Explorable, o: usize, why: &str) {
    let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut ex.callables)
        .into_iter()
        .partition(|c| c.uses_object(o));
    ex.left_out
        .extend(gone.into_iter().map(|c| (c.path, why.to_string())));
    ex.callables = kept;
    ex.objects.remove(o);
    let shift = |i: &mut usize| {
        if *i > o {
            *i -= 1;
        }
    };
    for c in &mut ex.callables {
        if let Some(r) = &mut c.receiver {
            shift(&mut r.object);
        }
        if let Some((m, _)) = &mut c.makes {
            shift(m);
        }
        for p in &mut c.params {
            if let PoolKind::Object(a) = &mut p.kind {
                shift(a);
            }
        }
    }
}

/// How a call's result fills an object slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Made {
    Plain,
    Result,
    Option,
    /// As `Plain`, an object of another type than the call's own that the run got from it
    /// (`Roll::backwards` gives a `Back`): when the call does not compile filling a slot (a
    /// borrowing iterator cannot outlive its receiver's slot), it stays as a call of its own.
    Returned,
    /// As `Result` and `Option`, an object of another type than the call's own (or a free
    /// function's) that the run got from it inside an `Ok` or a `Some` (glob's `glob_with`
    /// gives a `Result<Paths, PatternError>`); as `Returned`, a call of its own when that
    /// does not compile.
    ReturnedOk,
    ReturnedSome,
}

impl Made {
    /// Whether a call that makes an object this way filled its slot, by what the harness
    /// answered: a panic, an `Err` or a `None` fills nothing (with no answer, a crash's
    /// reproducer, it is taken as filled).
    pub fn fills(self, outcome: Option<&crate::harness::run::CallOutcome>) -> bool {
        use crate::harness::run::CallOutcome;
        let returned = match outcome {
            Some(CallOutcome::Returned(Some(t))) => Some(t.as_str()),
            Some(CallOutcome::Panicked(_)) => return false,
            _ => None,
        };
        match self.shape() {
            Made::Result => returned.is_none_or(|t| t.starts_with("Ok(")),
            Made::Option => returned.is_none_or(|t| t.starts_with("Some(")),
            _ => true,
        }
    }

    /// What the call gives the object in: `Plain` (itself), `Result` or `Option`.
    pub fn shape(self) -> Made {
        match self {
            Made::Plain | Made::Returned => Made::Plain,
            Made::Result | Made::ReturnedOk => Made::Result,
            Made::Option | Made::ReturnedSome => Made::Option,
        }
    }

    /// Whether the object is another type's than the call's own: a call of its own when
    /// filling a slot does not compile.
    pub fn elsewhere(self) -> bool {
        matches!(self, Made::Returned | Made::ReturnedOk | Made::ReturnedSome)
    }
}

/// What an assertion on the result can compare with a literal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Ret {
    Unit,
    /// A primitive scalar by name.
    Scalar(String),
    /// `String` or `&str`.
    Text,
    /// `Option` of a scalar or text; `true` when it holds a reference to it (`Option<&u64>`).
    Option(Box<Ret>, bool),
    /// `Result` of a scalar or text (`Result<String, QuoteError>`).
    Result(Box<Ret>),
    /// Anything else: compared through its `Debug` text.
    Other,
}

/// A method's receiver: an object slot of `object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Receiver {
    pub object: usize,
    pub mutable: bool,
    /// `self` by value: the call takes the object out of its slot (a builder's `-> Self`
    /// puts what it returns into the slot its result picks).
    pub by_value: bool,
}

/// One explorable function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Callable {
    /// The recorded path: `bounds::Gauge::raise`.
    pub path: String,
    /// What a call writes before the arguments: the full path (`bounds::Gauge::new`), or the
    /// method's identifier for a method (`raise`).
    pub call: String,
    pub receiver: Option<Receiver>,
    pub params: Vec<Param>,
    /// The object slot type its result fills, and how.
    pub makes: Option<(usize, Made)>,
    pub ret: Ret,
}

/// The crate's explorable calls and the object types they use.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Explorable {
    pub crate_name: String,
    pub objects: Vec<ObjectType>,
    pub callables: Vec<Callable>,
    /// Functions the run reached that are not explored, and why.
    pub left_out: Vec<(String, String)>,
    /// The crate's functions the run never reached that were considered (the crate can only
    /// compute: `pure.rs`).
    #[serde(skip)]
    pub never_reached: BTreeSet<String>,
    /// Where the explored functions that read files run, when some do.
    #[serde(skip)]
    pub world: Option<crate::world::World>,
}

/// What the run says about the functions it called: (argument name, type) of each distinct
/// call shape per path, and the paths that read what a test cannot control.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub(crate) arg_types: BTreeMap<String, BTreeSet<Vec<(String, String)>>>,
    pub(crate) touching: BTreeSet<String>,
    /// The types each path was called on (`None`: no receiver) and returned, as recorded.
    pub(crate) results: BTreeMap<String, BTreeSet<(Option<String>, String)>>,
    /// Each path's declared parameter and return types, from the run's function table (the
    /// first of a path's instances): also of functions the run has no call of.
    pub(crate) declared: BTreeMap<String, crate::operators::Declared>,
}

/// The type a recorded argument value was, when a pool holds such values: `u32`, `&str`.
fn recorded_type(v: &carve_storage::Value) -> Option<String> {
    use carve_storage::Value;
    match v {
        Value::Int { ty, .. } | Value::Uint { ty, .. } | Value::Float { ty, .. } => {
            Some(ty.clone())
        }
        Value::Bool { .. } => Some("bool".into()),
        Value::Char { .. } => Some("char".into()),
        Value::Str { .. } => Some("&str".into()),
        _ => None,
    }
}

impl Seen {
    /// What the run says, in one pass over its calls: the paths it called, and per path the
    /// types of its arguments, whether it read what a test cannot control, and the types it
    /// was called on and returned by value (`smallvec::SmallVec<[i64; 4]>` giving
    /// `smallvec::IntoIter<[i64; 4]>`).
    pub(crate) fn of(trace: &Trace) -> (BTreeSet<String>, Seen) {
        let paths: BTreeMap<_, _> = trace.functions.iter().map(|f| (f.id, &f.path)).collect();
        let mut called = BTreeSet::new();
        let mut seen = Seen::default();
        for f in &trace.functions {
            let params = f.params.iter().map(|p| p.type_name.clone()).collect();
            (seen.declared.entry(f.path.clone())).or_insert((params, f.return_type.clone()));
        }
        for c in &trace.calls {
            let Some(&path) = paths.get(&c.function) else {
                continue;
            };
            called.insert(path.clone());
            // Files read are rebuilt for the calls (`world.rs`); a clock, the environment or a
            // write is what a test cannot control.
            if c.touches.iter().any(|t| !crate::world::is_file_read(t)) {
                seen.touching.insert(path.clone());
            }
            let types = (c.args.iter())
                .filter_map(|a| Some((a.name.clone(), recorded_type(&a.value)?)))
                .collect();
            seen.arg_types
                .entry(path.clone())
                .or_default()
                .insert(types);
            let Some(ret) = c.ret.as_ref().filter(|r| !r.type_name().starts_with('&')) else {
                continue;
            };
            let receiver = (c.args.iter().find(|a| a.name == "self"))
                .map(|a| crate::generic_types::referent_type(&a.value).to_string());
            (seen.results.entry(path.clone()).or_default())
                .insert((receiver, ret.type_name().to_string()));
        }
        (called, seen)
    }
}

/// Why the run reached no function explore can match to the crate's API, when it reached
/// some of the crate's: methods of a generic type (recorded with its parameters,
/// `lru::LruCache<K,V,S>::put`) and methods of the crate's traits on other types
/// (`<str as unicode_width::UnicodeWidthStr>::width`), which explore does not call yet.
pub fn why_none_matched(called: &BTreeSet<String>, krate: &str) -> Option<String> {
    let prefix = format!("{krate}::");
    let owned = |p: &&String| p.starts_with(&prefix) && !p.contains("{{closure}}");
    let generic: Vec<&String> = called
        .iter()
        .filter(owned)
        .filter(|p| {
            p.rsplit_once("::")
                .is_some_and(|(owner, _)| owner.ends_with('>'))
        })
        .collect();
    let traits: Vec<&String> = called
        .iter()
        .filter(|p| p.starts_with('<') && p.contains(&format!(" as {prefix}")))
        .collect();
    let name = |what: &str, paths: &[&String]| {
        let s = if paths.len() == 1 { "" } else { "s" };
        let first = paths.first()?;
        Some(format!("{} method{s} {what} (`{first}`…)", paths.len()))
    };
    let parts: Vec<String> = [
        name("of generic types", &generic),
        name("of its traits on other types", &traits),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "the run reached {}, which explore does not call yet",
            parts.join(" and ")
        )
    })
}

/// The functions the run never reached number at most this many times the calls of those it
/// reached ([`Explorable::beyond_within`], which says what other shares gave).
const BEYOND_SHARE: u64 = 2;

/// The explorable calls of `api` among the functions `trace` reached: those it recorded calls
/// of, and those it reached a line of (`lines_reached`, by path: a function every call of which
/// was inlined has lines but no call).
///
/// With `beyond`, also the crate's public functions the run never reached (the crate can only
/// compute: `pure.rs`), those explored listed by [`Explorable::beyond_run`].
pub fn explorable(
    api: &CrateApi,
    trace: &Trace,
    lines_reached: &BTreeSet<String>,
    beyond: bool,
) -> Explorable {
    let (mut called, seen) = Seen::of(trace);
    called.extend(lines_reached.iter().cloned());
    // Not for a crate the run reached none of the functions of: nothing says it is the one.
    let never = match never_reached(api, &called) {
        (never, reached_some) if beyond && reached_some => never,
        _ => BTreeSet::new(),
    };
    called.extend(never.iter().cloned());
    let mut out = explorable_reaching(api, (&called, &seen), trace);
    out.never_reached = never;
    out
}

impl Explorable {
    /// The functions explored that the run never reached.
    pub fn beyond_run(&self) -> Vec<String> {
        let paths = self.callables.iter().map(|c| &c.path);
        let beyond: BTreeSet<&String> = paths.filter(|p| self.never_reached.contains(*p)).collect();
        beyond.into_iter().cloned().collect()
    }

    /// Keeps, of the functions the run never reached, those with the fewest `calls` first
    /// (their number of distinct calls: the product of their indices' radices), while they
    /// number no more than [`BEYOND_SHARE`] times the calls of the functions the run reached:
    /// those keep a third of the search. All of indexmap's 111 made its space 37 times larger,
    /// and its search killed 3 of the carved suite's survivors in the functions the run reached
    /// (6 without them, 10 and 9 with shares of 1 and 2); bytesize's killed 49, 42 and 51.
    pub fn beyond_within(&mut self, calls: impl Fn(&Callable) -> u64) {
        let never = &self.never_reached;
        let (beyond, reached): (Vec<&Callable>, Vec<&Callable>) =
            self.callables.iter().partition(|c| never.contains(&c.path));
        let reached_calls = (reached.iter().map(|c| calls(c))).fold(0, u64::saturating_add);
        let budget = reached_calls.saturating_mul(BEYOND_SHARE);
        // A path's calls together: a generic function's instances, `Display`'s format specs.
        let mut by_path: BTreeMap<&str, u64> = BTreeMap::new();
        for c in beyond {
            let n = by_path.entry(c.path.as_str()).or_default();
            *n = n.saturating_add(calls(c));
        }
        let mut cheapest: Vec<(u64, &str)> = by_path.into_iter().map(|(p, n)| (n, p)).collect();
        cheapest.sort();
        let mut spent = 0u64;
        let taken: BTreeSet<String> = (cheapest.into_iter())
            .take_while(|(n, _)| {
                spent = spent.saturating_add(*n);
                spent <= budget
            })
            .map(|(_, p)| p.to_string())
            .collect();
        let never = &self.never_reached;
        (self.callables).retain(|c| !never.contains(&c.path) || taken.contains(&c.path));
        drop_unmakeable(self);
    }

    /// The functions the run reached that are not explored, and why (a function the run never
    /// reached that cannot be explored is not reported: the run never asked for it).
    pub fn left_out_of_the_run(&self) -> Vec<(String, String)> {
        (self.left_out.iter())
            .filter(|(path, _)| !self.never_reached.contains(path))
            .cloned()
            .collect()
    }
}

/// The recorded paths of the crate's functions and its types' inherent methods that the run
/// reached no form of: `indexmap::map::IndexMap::capacity` when the run called neither it nor
/// `indexmap::map::IndexMap<K,V,S>::capacity`; and whether it reached some.
fn never_reached(api: &CrateApi, called: &BTreeSet<String>) -> (BTreeSet<String>, bool) {
    let mut never = BTreeSet::new();
    let mut reached_some = false;
    for module in api.modules.values() {
        let (_, prefix) = module_paths(api, module);
        for f in module.functions.values() {
            let path = format!("{prefix}::{}", f.name);
            if called.contains(&path) {
                reached_some = true;
            } else {
                never.insert(path);
            }
        }
        for ty in module.types.values() {
            let head = format!("{prefix}::{}<", ty.name);
            for f in ty.functions.values() {
                let plain = format!("{prefix}::{}::{}", ty.name, f.name);
                let tail = format!(">::{}", f.name);
                let generic = (called.range(head.clone()..))
                    .take_while(|p| p.starts_with(&head))
                    .any(|p| p.ends_with(&tail));
                if generic || called.contains(&plain) {
                    reached_some = true;
                } else {
                    never.insert(plain);
                }
            }
        }
    }
    (never, reached_some)
}

/// The explorable calls of `api` among the paths `called`, the run's calls read as `seen`.
fn explorable_reaching(
    api: &CrateApi,
    (called, seen): (&BTreeSet<String>, &Seen),
    trace: &Trace,
) -> Explorable {
    let instances = crate::generic_types::recorded_instances(trace);
    let run = (called, seen, &instances);
    // Twice: a parameter of an object type is drawn from that type's slots, and the first
    // pass finds every type a slot can hold, whatever order the modules come in; a type with
    // values a test writes as they are (an enum's variants) can be such a type from the start.
    let first = explorable_knowing(api, run, &value_types(api));
    if first.objects.is_empty() {
        return first;
    }
    let mut out = explorable_knowing(api, run, &first.objects);
    drop_idle_values(&mut out);
    out
}

/// The public, non-generic types with values a test writes as they are (`similar::Algorithm`,
/// `pulldown_cmark::Options`), as object types.
fn value_types(api: &CrateApi) -> Vec<ObjectType> {
    let mut out = Vec::new();
    for module in api.modules.values() {
        let (here, prefix) = module_paths(api, module);
        for ty in module.types.values() {
            let plain = ty.public && !ty.generic && ty.lifetimes == 0 && ty.type_params.is_empty();
            if !plain || ty.values.is_empty() {
                continue;
            }
            let path = if module.reachable {
                format!("{here}::{}", ty.name)
            } else {
                match api.public_path(&format!("{prefix}::{}", ty.name)) {
                    Some(p) => p,
                    None => continue,
                }
            };
            object_index_in(&mut out, &path, ty);
        }
    }
    out
}

/// An object type only values written as they are make and nothing else uses goes, with
/// those makers (they were never the run's calls: nothing to report).
fn drop_idle_values(out: &mut Explorable) {
    let mut o = 0;
    while o < out.objects.len() {
        let used = (out.callables.iter()).any(|c| !c.writes_value() && c.uses_object(o));
        if used {
            o += 1;
            continue;
        }
        let reported = out.left_out.len();
        remove_object(out, o, "");
        out.left_out.truncate(reported);
    }
}

/// The explorable calls, starting from the object types `known`; what the run called, the
/// argument types it gave and the generic types' instances it used read once by the caller.
fn explorable_knowing(
    api: &CrateApi,
    (called, seen, instances): (&BTreeSet<String>, &Seen, &BTreeMap<String, String>),
    known: &[ObjectType],
) -> Explorable {
    let mut out = Explorable {
        crate_name: api.crate_name.clone(),
        objects: known.to_vec(),
        ..Explorable::default()
    };
    for module in api.modules.values() {
        let (here, prefix) = module_paths(api, module);
        let recorded = |name: &str| format!("{prefix}::{name}");
        // Where a test names an item of the module: here when the module is public all the
        // way, else where a `pub use` puts it (`pulldown_cmark::parse::Parser` is
        // `pulldown_cmark::Parser`), under the same name.
        let written_for = |name: &str| -> Option<String> {
            if module.reachable {
                return Some(here.clone());
            }
            let public = api.public_path(&recorded(name))?;
            public
                .strip_suffix(&format!("::{name}"))
                .map(str::to_string)
        };
        for f in module.functions.values() {
            let path = recorded(&f.name);
            if called.contains(&path) {
                let Some(written) = written_for(&f.name) else {
                    out.left_out.push((path, "not public".to_string()));
                    continue;
                };
                let call = format!("{written}::{}", f.ident);
                consider(&mut out, (path, call), f, None, seen);
            }
        }
        for ty in module.types.values() {
            let Some(written) = written_for(&ty.name) else {
                continue;
            };
            crate::generic_types::consider_type(
                &mut out,
                (api, &written, &prefix),
                ty,
                called,
                (seen, instances),
            );
            if crate::generic_types::handles(ty) {
                continue;
            }
            let type_path = format!("{written}::{}", ty.name);
            for f in ty.functions.values() {
                let path = recorded(&format!("{}::{}", ty.name, f.name));
                if called.contains(&path) {
                    let call = format!("{type_path}::{}", f.ident);
                    let owner = (type_path.clone(), ty);
                    consider(&mut out, (path, call), f, Some(owner), seen);
                }
            }
            if let Some(c) = struct_literal(&type_path, ty, known) {
                out.callables.push(c);
            }
            out.callables.extend(written_values(&type_path, ty, known));
            crate::std_traits::std_trait_methods(
                &mut out,
                (&type_path, &recorded(&ty.name)),
                (api, ty),
                called,
            );
            crate::operators::operator_methods(
                &mut out,
                (&type_path, &recorded(&ty.name)),
                ty,
                (called, &seen.declared),
            );
        }
    }
    crate::trait_calls::on_pooled_types(&mut out, api, (called, &seen.declared));
    crate::std_traits::made_elsewhere(&mut out, &seen.results);
    drop_unmakeable(&mut out);
    out
}

/// A module's path as a test writes it (`crate::r#type`) and as the run recorded it
/// (`crate::type`).
pub(crate) fn module_paths(api: &CrateApi, module: &ModuleApi) -> (String, String) {
    let base: Vec<&str> = std::iter::once(api.crate_name.as_str())
        .chain(module.path.iter().map(String::as_str))
        .collect();
    let recorded: Vec<&str> = base.iter().map(|s| s.trim_start_matches("r#")).collect();
    (base.join("::"), recorded.join("::"))
}

/// Adds `f` to `out` as a callable, or to `left_out` with the reason.
fn consider(
    out: &mut Explorable,
    (path, call): (String, String),
    f: &FnApi,
    owner: Option<(String, &TypeApi)>,
    seen: &Seen,
) {
    match callables(out, (&path, call), f, owner, seen) {
        Ok(cs) => out.callables.extend(cs),
        Err(why) => out.left_out.push((path, why.to_string())),
    }
}

/// The callables of `f`: one, or one per instance of its type parameters the run called.
fn callables(
    out: &mut Explorable,
    (path, call): (&str, String),
    f: &FnApi,
    owner: Option<(String, &TypeApi)>,
    seen: &Seen,
) -> Result<Vec<Callable>, &'static str> {
    let sig = callable_signature(f, path, seen)?;
    if owner.as_ref().is_some_and(|(_, t)| t.generic || !t.public) {
        return Err("its type is generic or not public");
    }
    let recorded = seen.arg_types.get(path);
    let instances = match (f.blocker, generic_kinds(&sig.generics)) {
        (None, Some(g)) => vec![g],
        _ => match recorded_instances(&sig, recorded) {
            Some(instances) => instances,
            None => return filled_in(out, (path, call), f, (&owner, &sig), recorded),
        },
    };
    instances
        .iter()
        .map(|generics| callable(out, (path, call.clone()), f, (&owner, &sig), generics))
        .collect()
}

/// The callable of generic `f` with each type parameter as its bound or the run's calls make
/// it stand for a type (`old: &T` called with `&str`s: `str`), written into the signature.
fn filled_in(
    out: &mut Explorable,
    (path, call): (&str, String),
    f: &FnApi,
    (owner, sig): (&Option<(String, &TypeApi)>, &syn::Signature),
    recorded: Option<&BTreeSet<Vec<(String, String)>>>,
) -> Result<Vec<Callable>, &'static str> {
    let plain = crate::generic_types::Instance::default();
    let args = crate::generic_types::method_args(sig, &plain, recorded).ok_or("generic")?;
    let filled = crate::generic_types::instantiate(sig, &args);
    let c = callable(out, (path, call), f, (owner, &filled), &BTreeMap::new())?;
    let twin = c.unsized_twin(&crate::generic_types::iterator_params(sig));
    Ok(std::iter::once(c).chain(twin).collect())
}

/// The signature of `f` (recorded as `path`), when nothing but its generics keeps a test from
/// calling it: it is public, read nothing a test cannot control, and has no other blocker.
pub(crate) fn callable_signature(
    f: &FnApi,
    path: &str,
    seen: &Seen,
) -> Result<syn::Signature, &'static str> {
    if !f.public {
        return Err("not public");
    }
    if seen.touching.contains(path) {
        return Err("it read what a test cannot control (clock, environment, files...)");
    }
    if let Some(blocker) = f.blocker.filter(|b| *b != "generic") {
        return Err(blocker);
    }
    parse_signature(&f.signature).ok_or("its signature was not read")
}

/// Most instances of one generic function explored.
const MAX_INSTANCES: usize = 8;

/// The type parameters of `sig` as the run's calls instantiated them, each read from the
/// recorded argument of a parameter typed by it alone (`i: I` recorded as a `u32`); `None`
/// when some type parameter cannot be read that way.
fn recorded_instances(
    sig: &syn::Signature,
    recorded: Option<&BTreeSet<Vec<(String, String)>>>,
) -> Option<Vec<BTreeMap<String, PoolKind>>> {
    let mut params = Vec::new();
    for p in &sig.generics.params {
        match p {
            syn::GenericParam::Lifetime(_) => {}
            syn::GenericParam::Type(t) => {
                let name = t.ident.to_string();
                let arg = sig.inputs.iter().find_map(|input| match input {
                    syn::FnArg::Typed(pt) if is_named(&pt.ty, &name) => match pt.pat.as_ref() {
                        syn::Pat::Ident(i) => Some(i.ident.to_string()),
                        _ => None,
                    },
                    _ => None,
                })?;
                params.push((name, arg));
            }
            syn::GenericParam::Const(_) => return None,
        }
    }
    let mut out: Vec<BTreeMap<String, PoolKind>> = Vec::new();
    for call in recorded? {
        let instance: Option<BTreeMap<String, PoolKind>> = params
            .iter()
            .map(|(name, arg)| {
                let (_, ty) = call.iter().find(|(a, _)| a == arg)?;
                let kind = if ty == "&str" {
                    PoolKind::Str
                } else {
                    PoolKind::Scalar(ty.clone())
                };
                Some((name.clone(), kind))
            })
            .collect();
        if let Some(i) = instance.filter(|i| !out.contains(i)) {
            out.push(i);
        }
    }
    out.truncate(MAX_INSTANCES);
    (!out.is_empty()).then_some(out)
}

pub(crate) fn callable(
    out: &mut Explorable,
    (path, call): (&str, String),
    f: &FnApi,
    (owner, sig): (&Option<(String, &TypeApi)>, &syn::Signature),
    generics: &BTreeMap<String, PoolKind>,
) -> Result<Callable, &'static str> {
    let mut receiver = None;
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => {
                let (mutable, by_value) = match &r.kind {
                    syn::ReceiverKind::Reference(_, _, mutable) => (mutable.is_some(), false),
                    syn::ReceiverKind::Value => (true, true),
                    _ => return Err("takes self through a pointer type (`self: Box<Self>`)"),
                };
                let (ty_path, ty) = owner.as_ref().ok_or("a receiver outside an impl")?;
                receiver = Some(Receiver {
                    object: object_index(out, ty_path, ty),
                    mutable,
                    by_value,
                });
            }
            syn::FnArg::Typed(pt) => {
                let (kind, pass) = generic_param(&pt.ty, generics)
                    .or_else(|| param_kind(&pt.ty))
                    .or_else(|| object_param(&pt.ty, &out.objects))
                    .ok_or("a parameter no pool holds")?;
                let name = match pt.pat.as_ref() {
                    syn::Pat::Ident(p) => p.ident.to_string(),
                    _ => "_".to_string(),
                };
                params.push(Param { name, kind, pass });
            }
        }
    }
    let (makes, ret) = match &sig.output {
        syn::ReturnType::Default => (None, Ret::Unit),
        syn::ReturnType::Type(_, ty) if returns_address(ty) => {
            return Err("it returns a raw pointer (an address differs from run to run)")
        }
        syn::ReturnType::Type(_, ty) => {
            let makes = owner
                .as_ref()
                .and_then(|(p, t)| made(ty, &t.name).map(|m| (object_index(out, p, t), m)));
            (makes, ret_form(ty))
        }
    };
    let call = if receiver.is_some() {
        f.ident.clone()
    } else {
        call
    };
    Ok(Callable {
        path: path.to_string(),
        call,
        receiver,
        params,
        makes,
        ret,
    })
}

/// A maker of `ty` (a test names it `path`) as a struct literal, when the type is one an
/// explored call holds or takes (`known`: glob's `MatchOptions`, made by the run only with
/// its defaults) and every field is public and a pool holds its values: the options a run
/// never gave are one literal away.
fn struct_literal(path: &str, ty: &TypeApi, known: &[ObjectType]) -> Option<Callable> {
    let object = known.iter().position(|o| o.path == path)?;
    let plain = ty.public && ty.is_struct && !ty.unit && !ty.generic && ty.lifetimes == 0;
    let named = ty
        .fields
        .iter()
        .all(|f| f.public && f.name.parse::<usize>().is_err());
    if !plain || !named || ty.fields.is_empty() {
        return None;
    }
    let params = ty
        .fields
        .iter()
        .map(|f| {
            let (kind, pass) = param_kind(&syn::parse_str(&f.ty).ok()?)?;
            (pass == Pass::Value).then(|| Param {
                name: f.name.clone(),
                kind,
                pass,
            })
        })
        .collect::<Option<Vec<Param>>>()?;
    Some(Callable {
        path: format!("{path}{LITERAL}"),
        call: format!("{path}{LITERAL}"),
        receiver: None,
        params,
        makes: Some((object, Made::Plain)),
        ret: Ret::Other,
    })
}

/// The makers of `ty` (a test names it `path`) that are its values written as they are
/// (`similar::Algorithm::Lcs`, `pulldown_cmark::Options::ENABLE_TABLES`), when it is a type an
/// explored call holds or takes (`known`): the values a run never passed.
fn written_values(path: &str, ty: &TypeApi, known: &[ObjectType]) -> Vec<Callable> {
    let Some(object) = known.iter().position(|o| o.path == path) else {
        return Vec::new();
    };
    ty.values
        .iter()
        .map(|v| Callable {
            path: format!("{path}::{v}{VALUE}"),
            call: format!("{path}::{v}{VALUE}"),
            receiver: None,
            params: Vec::new(),
            makes: Some((object, Made::Plain)),
            ret: Ret::Other,
        })
        .collect()
}

/// A parameter typed by an explored object type, by value or behind `&` (`options:
/// MatchOptions`, `other: &Pattern`): drawn from that type's slots. A type written with
/// arguments is not matched (an instance's are not known here).
fn object_param(ty: &syn::Type, objects: &[ObjectType]) -> Option<(PoolKind, Pass)> {
    let (inner, pass) = match ty {
        syn::Type::Reference(r) if r.mutability.is_none() => (r.elem.as_ref(), Pass::Ref),
        syn::Type::Reference(_) => return None,
        ty => (ty, Pass::Value),
    };
    let seg = last_segment(inner)?;
    if !matches!(seg.arguments, syn::PathArguments::None) {
        return None;
    }
    let name = seg.ident.to_string();
    let at = objects
        .iter()
        .position(|o| o.name == name && !o.path.contains('<'))?;
    Some((PoolKind::Object(at), pass))
}

pub(crate) fn parse_signature(signature: &str) -> Option<syn::Signature> {
    let item: syn::TraitItemFn = syn::parse_str(&format!("{signature};")).ok()?;
    Some(item.sig)
}

pub(crate) fn object_index(out: &mut Explorable, path: &str, ty: &TypeApi) -> usize {
    object_index_in(&mut out.objects, path, ty)
}

fn object_index_in(objects: &mut Vec<ObjectType>, path: &str, ty: &TypeApi) -> usize {
    if let Some(i) = objects.iter().position(|o| o.path == path) {
        return i;
    }
    objects.push(ObjectType {
        path: path.to_string(),
        name: ty.name.clone(),
        default: ty.traits.contains("Default"),
        borrows: false,
        copy: ty.traits.contains("Copy"),
    });
    objects.len() - 1
}

/// Methods of a type no slot can hold a value of (no `Default`, no explored constructor) go.
pub(crate) fn drop_unmakeable(out: &mut Explorable) {
    // Until nothing more goes: a maker that goes may leave another call without its object.
    loop {
        let makeable: BTreeSet<usize> = out
            .objects
            .iter()
            .enumerate()
            .filter(|(_, o)| o.default)
            .map(|(i, _)| i)
            .chain(out.callables.iter().filter_map(|c| c.makes.map(|(o, _)| o)))
            .collect();
        let why = |c: &Callable| {
            if c.receiver.is_some_and(|r| !makeable.contains(&r.object)) {
                return Some("no explored constructor or Default makes its receiver");
            }
            let object_arg =
                |p: &Param| matches!(p.kind, PoolKind::Object(o) if !makeable.contains(&o));
            c.params
                .iter()
                .any(object_arg)
                .then_some("no explored constructor or Default makes its object argument")
        };
        let (kept, gone): (Vec<_>, Vec<_>) = std::mem::take(&mut out.callables)
            .into_iter()
            .partition(|c| why(c).is_none());
        let done = gone.is_empty();
        for c in gone {
            // Once per function: `Display` is one function with many format specs.
            let left = (c.path.clone(), why(&c).unwrap_or_default().to_string());
            if !out.left_out.contains(&left) {
                out.left_out.push(left);
            }
        }
        out.callables = kept;
        if done {
            return;
        }
    }
}

const SCALARS: [&str; 16] = [
    "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
    "usize", "f32", "f64",
];

/// The single identifier a type path is, with its generic arguments.
pub(crate) fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        syn::Type::Paren(p) => last_segment(&p.elem),
        syn::Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

fn scalar_name(ty: &syn::Type) -> Option<String> {
    let seg = last_segment(ty)?;
    let name = seg.ident.to_string();
    (matches!(seg.arguments, syn::PathArguments::None) && SCALARS.contains(&name.as_str()))
        .then_some(name)
}

fn integer_name(ty: &syn::Type) -> Option<String> {
    scalar_name(ty).filter(|n| is_integer(n))
}

fn is_integer(name: &str) -> bool {
    SCALARS.contains(&name) && !matches!(name, "bool" | "char" | "f32" | "f64")
}

/// The one type argument of `Name<T>` when the path ends in `name`.
fn only_argument<'t>(ty: &'t syn::Type, name: &str) -> Option<&'t syn::Type> {
    let seg = last_segment(ty)?;
    if seg.ident != name {
        return None;
    }
    type_arguments(seg).into_iter().next()
}

/// Whether `ty` names `name` anywhere in it (`Self` in `Result<Self, Self::Error>`).
pub(crate) fn names(ty: &syn::Type, name: &str) -> bool {
    use quote::ToTokens;
    ty.to_token_stream()
        .to_string()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == name)
}

pub(crate) fn is_named(ty: &syn::Type, name: &str) -> bool {
    last_segment(ty)
        .is_some_and(|s| s.ident == name && matches!(s.arguments, syn::PathArguments::None))
}

/// A trait bound with one type argument, as the trait's name and the argument: `AsRef<[u8]>`
/// gives ("AsRef", `[u8]`).
pub(crate) fn trait_and_argument(bound: &syn::TypeParamBound) -> Option<(String, &syn::Type)> {
    let syn::TypeParamBound::Trait(t) = bound else {
        return None;
    };
    let seg = t.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return None;
    };
    let [syn::GenericArgument::Type(arg)] = a.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    Some((seg.ident.to_string(), arg))
}

/// The pool a bound stands for when it has one: `AsRef<[u8]>` takes a `&[u8]`, `AsRef<str>`
/// and `Into<String>` a `&str`, `Into<u64>` a `u64`.
fn bound_kind(bound: &syn::TypeParamBound) -> Option<PoolKind> {
    let (name, arg) = trait_and_argument(bound)?;
    match name.as_str() {
        "AsRef" => match arg {
            syn::Type::Slice(s) => Some(PoolKind::Slice(integer_name(&s.elem)?)),
            t if is_named(t, "str") => Some(PoolKind::Str),
            _ => None,
        },
        "Into" if is_named(arg, "String") => Some(PoolKind::Str),
        "RangeBounds" => Some(PoolKind::Range(integer_name(arg)?)),
        "Into" => Some(PoolKind::Scalar(scalar_name(arg)?)),
        _ => None,
    }
}

/// The pools a function's type parameters stand for (each with exactly one bound `bound_kind`
/// knows, lifetimes aside); `None` when some other generic makes the call unwritable.
pub(crate) fn generic_kinds(generics: &syn::Generics) -> Option<BTreeMap<String, PoolKind>> {
    if generics.where_clause.is_some() {
        return None;
    }
    let mut out = BTreeMap::new();
    for p in &generics.params {
        match p {
            syn::GenericParam::Lifetime(_) => {}
            syn::GenericParam::Type(t) => {
                let bounds: Vec<_> = t.bounds.iter().collect();
                let [bound] = bounds[..] else { return None };
                let kind = bound_kind(bound)
                    .or_else(|| texts_bound(bound))
                    .or_else(|| param_kind(&stand_in(bound)?).map(|k| k.0))?;
                out.insert(t.ident.to_string(), kind);
            }
            syn::GenericParam::Const(_) => return None,
        }
    }
    Some(out)
}

/// A parameter typed by a type parameter or `impl Trait` whose bound names a pool.
pub(crate) fn generic_param(
    ty: &syn::Type,
    generics: &BTreeMap<String, PoolKind>,
) -> Option<(PoolKind, Pass)> {
    let kind = match ty {
        syn::Type::ImplTrait(i) => {
            let bounds: Vec<_> = i.bounds.iter().collect();
            let [bound] = bounds[..] else { return None };
            bound_kind(bound)
                .or_else(|| texts_bound(bound))
                .or_else(|| param_kind(&stand_in(bound)?).map(|k| k.0))?
        }
        _ => {
            let seg = last_segment(ty)?;
            generics.get(&seg.ident.to_string())?.clone()
        }
    };
    // A list of texts goes as a `Vec<&str>`: a `&[&str]`'s items are `&&str`.
    let pass = if kind == PoolKind::Texts {
        Pass::Owned
    } else {
        Pass::Value
    };
    Some((kind, pass))
}

/// The type whose values a parameter bounded by `bound` takes from a pool, where one stands in
/// for the bound: a function pointer for a closure bound (`FnMut(&mut T) -> bool` takes a
/// `fn(&mut T) -> bool`), a pair of `Bound`s for `RangeBounds<usize>`.
pub(crate) fn stand_in(bound: &syn::TypeParamBound) -> Option<syn::Type> {
    let syn::TypeParamBound::Trait(t) = bound else {
        return None;
    };
    let seg = t.path.segments.last()?;
    match (&seg.arguments, seg.ident.to_string().as_str()) {
        (syn::PathArguments::Parenthesized(p), "Fn" | "FnMut" | "FnOnce") => {
            let inputs = p.inputs.iter();
            let output = &p.output;
            Some(syn::parse_quote!(fn(#(#inputs),*) #output))
        }
        (_, "RangeBounds") => {
            let (_, int) = trait_and_argument(bound)?;
            let int = integer_name(int)?;
            syn::parse_str(&format!("(std::ops::Bound<{int}>, std::ops::Bound<{int}>)")).ok()
        }
        _ => None,
    }
}

/// `IntoIterator<Item = &str>` takes a list of texts.
fn texts_bound(bound: &syn::TypeParamBound) -> Option<PoolKind> {
    let item = crate::generic_types::iterator_item(bound)?;
    is_str_ref(item).then_some(PoolKind::Texts)
}

/// `&str` (any lifetime).
fn is_str_ref(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Reference(r) if r.mutability.is_none() && is_named(&r.elem, "str"))
}

/// The pool a parameter of type `ty` draws from, and how the value is passed.
pub fn param_kind(ty: &syn::Type) -> Option<(PoolKind, Pass)> {
    if let syn::Type::Reference(r) = ty {
        if r.mutability.is_some() {
            // A buffer the call writes into: a copy of a pooled one.
            return match r.elem.as_ref() {
                syn::Type::Slice(s) => {
                    Some((PoolKind::Slice(integer_name(&s.elem)?), Pass::MutOwned))
                }
                inner if is_named(inner, "String") => Some((PoolKind::Str, Pass::MutOwned)),
                inner => {
                    let elem = only_argument(inner, "Vec")?;
                    Some((PoolKind::Slice(integer_name(elem)?), Pass::MutOwned))
                }
            };
        }
        return match r.elem.as_ref() {
            syn::Type::Slice(s) if is_str_ref(&s.elem) => Some((PoolKind::Texts, Pass::Value)),
            syn::Type::Slice(s) => Some((PoolKind::Slice(integer_name(&s.elem)?), Pass::Value)),
            inner if is_named(inner, "str") => Some((PoolKind::Str, Pass::Value)),
            inner if is_named(inner, "String") => Some((PoolKind::Str, Pass::RefOwned)),
            // A pooled slice or text behind one more reference: `&self` of a blanket impl on
            // `&[u8]` (hex's `ToHex`) takes a `&&[u8]`.
            syn::Type::Reference(inner) if inner.mutability.is_none() => {
                match param_kind(r.elem.as_ref())? {
                    (kind @ (PoolKind::Slice(_) | PoolKind::Str), Pass::Value) => {
                        Some((kind, Pass::Ref))
                    }
                    _ => None,
                }
            }
            inner => {
                if let Some(elem) = only_argument(inner, "Vec") {
                    return Some((PoolKind::Slice(integer_name(elem)?), Pass::RefOwned));
                }
                Some((PoolKind::Scalar(scalar_name(inner)?), Pass::Ref))
            }
        };
    }
    if is_named(ty, "String") {
        return Some((PoolKind::Str, Pass::Owned));
    }
    if let syn::Type::FnPtr(f) = ty {
        let kind = crate::closures::kind(f)?;
        return Some((kind, Pass::Value));
    }
    if let syn::Type::Tuple(t) = ty {
        // A range, as the harness holds it: `(Bound<usize>, Bound<usize>)`.
        let ints: Vec<String> = (t.elems.iter())
            .filter_map(|e| integer_name(only_argument(e, "Bound")?))
            .collect();
        return match &ints[..] {
            [a, b] if a == b => Some((PoolKind::Range(a.clone()), Pass::Value)),
            _ => None,
        };
    }
    if let Some(int) = non_zero(ty) {
        return Some((PoolKind::NonZero(int), Pass::Value));
    }
    if let Some(inner) = only_argument(ty, "Option") {
        return match param_kind(inner)? {
            (k @ (PoolKind::Scalar(_) | PoolKind::Str), Pass::Value) => {
                Some((PoolKind::Option(Box::new(k)), Pass::Value))
            }
            _ => None,
        };
    }
    if let Some(elem) = only_argument(ty, "Vec") {
        if is_str_ref(elem) {
            return Some((PoolKind::Texts, Pass::Owned));
        }
        return Some((PoolKind::Slice(integer_name(elem)?), Pass::Owned));
    }
    Some((PoolKind::Scalar(scalar_name(ty)?), Pass::Value))
}

/// The integer a non-zero type holds: `NonZeroUsize` and `NonZero<usize>` give `usize`.
fn non_zero(ty: &syn::Type) -> Option<String> {
    if let Some(int) = only_argument(ty, "NonZero") {
        return integer_name(int);
    }
    let seg = last_segment(ty)?;
    let name = seg
        .ident
        .to_string()
        .strip_prefix("NonZero")?
        .to_lowercase();
    (matches!(seg.arguments, syn::PathArguments::None) && is_integer(&name)).then_some(name)
}

/// Whether a return type `ty` of a function of type `name` fills a slot of it.
fn made(ty: &syn::Type, name: &str) -> Option<Made> {
    // `Self`, `Gauge`, or a generic type's instance (`LruCache<u64, String>`).
    let is_it =
        |t: &syn::Type| is_named(t, "Self") || last_segment(t).is_some_and(|s| s.ident == name);
    if is_it(ty) {
        return Some(Made::Plain);
    }
    if only_argument(ty, "Result").is_some_and(is_it) {
        return Some(Made::Result);
    }
    if only_argument(ty, "Option").is_some_and(is_it) {
        return Some(Made::Option);
    }
    None
}

/// `T` of `Result<T, E>` (or of a crate's `Result<T>` alias).
fn result_ok(ty: &syn::Type) -> Option<&syn::Type> {
    let seg = last_segment(ty)?;
    if seg.ident != "Result" {
        return None;
    }
    type_arguments(seg).into_iter().next()
}

/// A raw pointer or a `NonNull`: what a test would assert is an address.
fn returns_address(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Ptr(_) => true,
        syn::Type::Paren(p) => returns_address(&p.elem),
        t => last_segment(t).is_some_and(|s| s.ident == "NonNull"),
    }
}

pub(crate) fn ret_form(ty: &syn::Type) -> Ret {
    if let Some(inner) = only_argument(ty, "Option") {
        let (inner, by_ref) = match inner {
            // `Some(&mut 5)` is no literal a test compares with: through its `Debug` text.
            syn::Type::Reference(r) if r.mutability.is_some() => return Ret::Other,
            syn::Type::Reference(r) if !is_named(&r.elem, "str") => (r.elem.as_ref(), true),
            t => (t, false),
        };
        return match ret_form(inner) {
            r @ (Ret::Scalar(_) | Ret::Text) => Ret::Option(Box::new(r), by_ref),
            _ => Ret::Other,
        };
    }
    if let Some(ok) = result_ok(ty) {
        return match ret_form(ok) {
            r @ (Ret::Scalar(_) | Ret::Text) => Ret::Result(Box::new(r)),
            _ => Ret::Other,
        };
    }
    if let syn::Type::Tuple(t) = ty {
        if t.elems.is_empty() {
            return Ret::Unit;
        }
    }
    if let syn::Type::Reference(r) = ty {
        if is_named(&r.elem, "str") {
            return Ret::Text;
        }
        return Ret::Other;
    }
    if is_named(ty, "String") {
        return Ret::Text;
    }
    scalar_name(ty).map_or(Ret::Other, Ret::Scalar)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_that_reached_only_generic_types_methods_and_trait_methods_says_so() {
        let called: BTreeSet<String> = [
            "lru::LruCache<K,V,S>::put",
            "lru::LruCache<K,V,S>::put::{{closure}}",
            "lru::LruCache<K,V>::new",
            "<str as unicode_width::UnicodeWidthStr>::width",
            "core::fmt::write",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            super::why_none_matched(&called, "lru").as_deref(),
            Some(
                "the run reached 2 methods of generic types (`lru::LruCache<K,V,S>::put`…), \
                 which explore does not call yet"
            )
        );
        assert_eq!(
            super::why_none_matched(&called, "unicode_width").as_deref(),
            Some(
                "the run reached 1 method of its traits on other types (`<str as \
                 unicode_width::UnicodeWidthStr>::width`…), which explore does not call yet"
            )
        );
        assert_eq!(super::why_none_matched(&called, "hex"), None);
    }

    use super::*;

    fn kind(src: &str) -> Option<(PoolKind, Pass)> {
        param_kind(&syn::parse_str(src).unwrap())
    }

    #[test]
    fn poolable_parameters_name_their_pool_and_how_they_are_passed() {
        let scalar = |n: &str| PoolKind::Scalar(n.to_string());
        let slice = |n: &str| PoolKind::Slice(n.to_string());
        assert_eq!(kind("i32"), Some((scalar("i32"), Pass::Value)));
        assert_eq!(kind("&u8"), Some((scalar("u8"), Pass::Ref)));
        assert_eq!(kind("&str"), Some((PoolKind::Str, Pass::Value)));
        assert_eq!(kind("&'a str"), Some((PoolKind::Str, Pass::Value)));
        assert_eq!(kind("String"), Some((PoolKind::Str, Pass::Owned)));
        assert_eq!(kind("&String"), Some((PoolKind::Str, Pass::RefOwned)));
        assert_eq!(kind("&[u8]"), Some((slice("u8"), Pass::Value)));
        assert_eq!(kind("Vec<i64>"), Some((slice("i64"), Pass::Owned)));
        assert_eq!(kind("&Vec<u16>"), Some((slice("u16"), Pass::RefOwned)));
        // Buffers the call writes into.
        assert_eq!(kind("&mut [u8]"), Some((slice("u8"), Pass::MutOwned)));
        assert_eq!(kind("&mut Vec<u8>"), Some((slice("u8"), Pass::MutOwned)));
        assert_eq!(kind("&mut String"), Some((PoolKind::Str, Pass::MutOwned)));
        // Lists of texts.
        assert_eq!(kind("&[&str]"), Some((PoolKind::Texts, Pass::Value)));
        assert_eq!(kind("Vec<&'a str>"), Some((PoolKind::Texts, Pass::Owned)));
        assert_eq!(kind("&[String]"), None);
    }

    #[test]
    fn a_parameter_of_an_explored_object_type_is_drawn_from_its_slots() {
        let ex = crate::testdata::gauge_api(Vec::new());
        let param = |src: &str| object_param(&syn::parse_str(src).unwrap(), &ex.objects);
        assert_eq!(param("Gauge"), Some((PoolKind::Object(0), Pass::Value)));
        assert_eq!(param("&g::Gauge"), Some((PoolKind::Object(0), Pass::Ref)));
        for refused in ["&mut Gauge", "Gauge<u8>", "Meter"] {
            assert_eq!(param(refused), None, "{refused}");
        }
        // The slots a call reads: its receiver's, then its object arguments'.
        let call = Callable {
            params: vec![
                Param {
                    name: "n".into(),
                    kind: PoolKind::Scalar("u8".into()),
                    pass: Pass::Value,
                },
                Param {
                    name: "other".into(),
                    kind: PoolKind::Object(0),
                    pass: Pass::Ref,
                },
            ],
            ..crate::testdata::getter("near", "bool")
        };
        assert_eq!(call.slots_read(&[1, 7, 0]), vec![(0, 1), (0, 0)]);
    }

    #[test]
    fn a_struct_of_public_pooled_fields_is_made_by_a_literal() {
        let field = |name: &str, ty: &str, public| carve_generator::FieldApi {
            name: name.into(),
            public,
            ty: ty.into(),
        };
        let options = TypeApi {
            name: "MatchOptions".into(),
            public: true,
            is_struct: true,
            fields: vec![
                field("case_sensitive", "bool", true),
                field("depth", "u8", true),
            ],
            ..TypeApi::default()
        };
        let known = [ObjectType {
            path: "glob::MatchOptions".into(),
            name: "MatchOptions".into(),
            default: true,
            borrows: false,
            copy: true,
        }];
        let c = struct_literal("glob::MatchOptions", &options, &known).unwrap();
        assert_eq!(c.makes, Some((0, Made::Plain)));
        let args = ["false".to_string(), "3u8".to_string()];
        assert_eq!(
            c.written(&c.call, &args),
            "glob::MatchOptions { case_sensitive: false, depth: 3u8 }"
        );
        // A private field, a field no pool holds, or a type no explored call uses: none.
        let private = TypeApi {
            fields: vec![field("case_sensitive", "bool", false)],
            ..options.clone()
        };
        assert!(struct_literal("glob::MatchOptions", &private, &known).is_none());
        let unpooled = TypeApi {
            fields: vec![field("path", "PathBuf", true)],
            ..options.clone()
        };
        assert!(struct_literal("glob::MatchOptions", &unpooled, &known).is_none());
        assert!(struct_literal("glob::MatchOptions", &options, &[]).is_none());
    }

    #[test]
    fn a_call_whose_object_argument_nothing_makes_is_left_out_with_why() {
        let mut ex = crate::testdata::gauge_api(Vec::new());
        // A second type, `Meter`, with no `Default` and no maker; `Gauge::new` takes one.
        ex.objects.push(ObjectType {
            path: "g::Meter".into(),
            name: "Meter".into(),
            default: false,
            borrows: false,
            copy: false,
        });
        ex.callables[0].params.push(Param {
            name: "meter".into(),
            kind: PoolKind::Object(1),
            pass: Pass::Ref,
        });
        ex.callables.push(crate::testdata::getter("level", "u8"));
        ex.objects[0].default = false;
        drop_unmakeable(&mut ex);
        // `new` goes for its argument; then `level`, whose receiver nothing makes any more.
        assert!(ex.callables.is_empty(), "{:?}", ex.callables);
        let reasons: Vec<&str> = ex.left_out.iter().map(|l| l.1.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "no explored constructor or Default makes its object argument",
                "no explored constructor or Default makes its receiver"
            ]
        );
    }

    #[test]
    fn taking_an_object_type_out_renumbers_the_object_arguments_after_it() {
        let mut ex = crate::testdata::gauge_api(Vec::new());
        let mut other = ex.objects[0].clone();
        other.path = "g::Meter".into();
        other.name = "Meter".into();
        ex.objects.push(other);
        let takes = |o: usize| Callable {
            path: format!("g::reads_{o}"),
            call: format!("g::reads_{o}"),
            receiver: None,
            params: vec![Param {
                name: "m".into(),
                kind: PoolKind::Object(o),
                pass: Pass::Ref,
            }],
            makes: None,
            ret: Ret::Unit,
        };
        ex.callables.extend([takes(0), takes(1)]);
        remove_object(&mut ex, 0, "gone");
        // `Gauge::new` and the call taking a gauge go; the meter is object 0 now.
        let paths: Vec<&str> = ex.callables.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["g::reads_1"]);
        assert_eq!(ex.callables[0].params[0].kind, PoolKind::Object(0));
        assert_eq!(ex.objects[0].name, "Meter");
    }

    #[test]
    fn an_object_type_no_call_holds_or_makes_carries_no_state() {
        let mut ex = crate::testdata::gauge_api(Vec::new());
        assert!(!ex.stateless());
        // Only a free function is left: the gauge type is still known, but nothing holds one.
        ex.callables[0].makes = None;
        assert!(ex.stateless());
    }

    #[test]
    fn parameters_no_pool_holds_are_refused() {
        for src in [
            "&mut i32",
            "Gauge",
            "&[String]",
            "Vec<f64>",
            "Option<Gauge>",
            "Option<String>",
            "&mut str",
            "&mut [String]",
        ] {
            assert_eq!(kind(src), None, "{src}");
        }
        let option = |k| Some((PoolKind::Option(Box::new(k)), Pass::Value));
        assert_eq!(kind("Option<u8>"), option(PoolKind::Scalar("u8".into())));
        assert_eq!(kind("Option<&str>"), option(PoolKind::Str));
    }

    #[test]
    fn bounded_type_parameters_take_the_pool_their_bound_names() {
        let generic = |sig: &str, param: &str| {
            let sig = parse_signature(sig).unwrap();
            let kinds = generic_kinds(&sig.generics)?;
            generic_param(&syn::parse_str(param).unwrap(), &kinds)
        };
        let bytes = Some((PoolKind::Slice("u8".into()), Pass::Value));
        assert_eq!(generic("fn encode<T: AsRef<[u8]>>(data: T)", "T"), bytes);
        assert_eq!(
            generic("fn f(data: impl AsRef<[u8]>)", "impl AsRef<[u8]>"),
            bytes
        );
        assert_eq!(
            generic("fn kib<V: Into<u64>>(size: V)", "V"),
            Some((PoolKind::Scalar("u64".into()), Pass::Value))
        );
        assert_eq!(
            generic("fn f<S: Into<String>>(s: S)", "S"),
            Some((PoolKind::Str, Pass::Value))
        );
        // A list of texts goes as a `Vec<&str>`.
        let texts = Some((PoolKind::Texts, Pass::Owned));
        assert_eq!(
            generic(
                "fn try_join<'a, I: IntoIterator<Item = &'a str>>(words: I)",
                "I"
            ),
            texts
        );
        assert_eq!(
            generic(
                "fn f(w: impl IntoIterator<Item = &'static str>)",
                "impl IntoIterator<Item = &'static str>"
            ),
            texts
        );
        assert_eq!(generic("fn f<I: IntoIterator<Item = u8>>(w: I)", "I"), None);
        assert_eq!(
            generic("fn drain<R: RangeBounds<usize>>(&mut self, range: R)", "R"),
            Some((PoolKind::Range("usize".into()), Pass::Value))
        );
        assert_eq!(generic("fn f<T: Clone>(t: T)", "T"), None);
        assert_eq!(generic("fn f<T>(t: T) where T: AsRef<str>", "T"), None);
    }

    #[test]
    fn a_generic_function_is_explored_as_the_run_instantiated_it() {
        let sig = parse_signature("fn format<I: Integer>(&mut self, i: I) -> &str").unwrap();
        let calls = |shapes: &[&[(&str, &str)]]| -> BTreeSet<Vec<(String, String)>> {
            shapes
                .iter()
                .map(|s| {
                    s.iter()
                        .map(|(a, t)| (a.to_string(), t.to_string()))
                        .collect()
                })
                .collect()
        };
        let recorded = calls(&[&[("i", "u32")], &[("i", "i64")], &[("i", "u32")]]);
        let got = recorded_instances(&sig, Some(&recorded)).unwrap();
        let kinds: Vec<_> = got.iter().map(|g| g["I"].clone()).collect();
        assert_eq!(
            kinds,
            vec![
                PoolKind::Scalar("i64".into()),
                PoolKind::Scalar("u32".into())
            ]
        );
        // A type parameter no argument is typed by alone cannot be read from the run (an
        // instance that does not compile is taken out when the harness builds).
        let sig = parse_signature("fn f<T: Tr>(x: Vec<T>) -> usize").unwrap();
        assert_eq!(
            recorded_instances(&sig, Some(&calls(&[&[("x", "u8")]]))),
            None
        );
        assert_eq!(recorded_instances(&sig, None), None);
    }

    #[test]
    fn constructors_are_told_by_their_return_type() {
        let m = |src: &str| made(&syn::parse_str(src).unwrap(), "Gauge");
        assert_eq!(m("Self"), Some(Made::Plain));
        assert_eq!(m("Gauge"), Some(Made::Plain));
        assert_eq!(m("Result<Self, Error>"), Some(Made::Result));
        assert_eq!(m("Option<Gauge>"), Some(Made::Option));
        assert_eq!(m("u8"), None);
        assert_eq!(m("Vec<Gauge>"), None);
    }

    #[test]
    fn return_types_say_how_a_result_is_compared() {
        let r = |src: &str| ret_form(&syn::parse_str(src).unwrap());
        assert_eq!(r("()"), Ret::Unit);
        assert_eq!(r("u8"), Ret::Scalar("u8".into()));
        assert_eq!(r("&str"), Ret::Text);
        assert_eq!(r("String"), Ret::Text);
        assert_eq!(
            r("Result<u8, E>"),
            Ret::Result(Box::new(Ret::Scalar("u8".into())))
        );
        assert_eq!(
            r("Result<String, QuoteError>"),
            Ret::Result(Box::new(Ret::Text))
        );
        assert_eq!(r("Result<Gauge, E>"), Ret::Other);
        let u64r = Box::new(Ret::Scalar("u64".into()));
        assert_eq!(r("Option<u64>"), Ret::Option(u64r.clone(), false));
        assert_eq!(r("Option<&'a u64>"), Ret::Option(u64r, true));
        assert_eq!(r("Option<&mut u64>"), Ret::Other);
        assert_eq!(r("Option<&str>"), Ret::Option(Box::new(Ret::Text), false));
        assert_eq!(r("Option<Gauge>"), Ret::Other);
        let address = |src: &str| returns_address(&syn::parse_str(src).unwrap());
        assert!(address("*const u32") && address("*mut A::Item") && address("NonNull<u8>"));
        assert!(!address("&[u32]") && !address("usize"));
    }

    #[test]
    fn functions_the_run_never_reached_take_at_most_twice_the_calls_of_those_it_did_fewest_first() {
        use crate::testdata::{gauge_api, getter};
        // `new` and `level` (reached) have 5 calls each, `a`, `b`, `c` (never reached) 1, 3
        // and 17: twice 10 holds the first two.
        let mut ex = gauge_api(["level", "a", "b", "c"].map(|n| getter(n, "u8")).to_vec());
        ex.never_reached = ["a", "b", "c"].map(|n| format!("g::Gauge::{n}")).into();
        let calls = |c: &Callable| match c.path.rsplit("::").next() {
            Some("a") => 1,
            Some("b") => 3,
            Some("c") => 17,
            _ => 5,
        };
        ex.beyond_within(calls);
        let paths: Vec<&str> = ex.callables.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "g::Gauge::new",
                "g::Gauge::level",
                "g::Gauge::a",
                "g::Gauge::b"
            ]
        );
        assert_eq!(ex.beyond_run(), ["g::Gauge::a", "g::Gauge::b"]);
        // Not said to be left out: the run never asked for it.
        assert!(ex.left_out_of_the_run().is_empty());
    }
}
