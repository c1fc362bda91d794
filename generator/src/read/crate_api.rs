//! The public face of the recorded program's library crate, read from its source with `syn`.
//!
//! Starting at the lib root, `mod x;` items are followed to `x.rs` / `x/mod.rs` (or their
//! `#[path]`) and inline `mod x { }` blocks are walked, recording for every module whether it is
//! reachable from outside (`pub` all the way down from the root), its `pub fn` items and the
//! associated functions of its inherent `impl Type` blocks. `pub use` re-exports are not followed.
//!
//! Traits are read too, with each method's signature rewritten so a test file outside the crate
//! can write it (`fn ask(&self, a: &dyn abc::Answerer) -> i32`): that is what a `mock!` needs.
//! Struct fields (and whether they are `pub`) and the traits a type derives or implements tell
//! the planner whether a value can be written as a literal and compared with `assert_eq!`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

mod load;
pub(crate) mod macros;
pub(crate) mod manifest;
mod scope;
mod signatures;

pub(crate) fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests;

use crate::read::types::DeclType;

/// The library crate of the recorded program.
#[derive(Debug, Clone, Default)]
pub struct CrateApi {
    /// The name tests use for it (`[lib] name`, or the package name with `-` → `_`).
    pub crate_name: String,
    /// The directory holding its `Cargo.toml`.
    pub dir: PathBuf,
    /// `src/lib.rs` or the `[lib] path`.
    pub lib_root: PathBuf,
    /// Modules by path below the crate root (`[]` is the root, `["lexer"]` is `crate::lexer`).
    pub modules: BTreeMap<Vec<String>, ModuleApi>,
    /// Every source file of the lib's module tree (canonical where possible).
    pub files: BTreeSet<PathBuf>,
    /// Module files that were declared but could not be read or parsed; their items are unknown.
    pub unreadable: Vec<(PathBuf, String)>,
    /// Names listed under `[dev-dependencies]` (and `[dependencies]`) of the crate's manifest.
    pub dev_dependencies: BTreeSet<String>,
    /// Non-generic `type Name = ...;` aliases by name (several when names repeat across modules).
    aliases: BTreeMap<String, Vec<DeclType>>,
    /// `pub use` in reachable modules: (where the item or module is defined, the public path
    /// it is reachable by), full paths with the crate name (`carve::store::Store` →
    /// `carve::Store`). A glob (`pub use store::*`) maps a module: `carve::store` → `carve`.
    pub reexports: Vec<Reexport>,
    /// Where the crate was when the trace was recorded, when that is not `dir` (a trace moved
    /// with its crate, `read/moved.rs`): its recorded source files are read under `dir`.
    pub recorded_root: Option<PathBuf>,
    /// Types of the recorded program the tests declare stand-ins for (`read/stand_ins.rs`),
    /// filled in from the trace once the API is read.
    pub stand_ins: crate::read::stand_ins::StandIns,
    /// How a test derives serde's traits, when the manifest lets it (`serde` with its `derive`
    /// feature, or `serde_derive`): a stand-in derives them where the library asks for them.
    pub serde_derive: Option<String>,
}

/// One `pub use` of a reachable module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reexport {
    /// Where it is defined: `shop::store::Store` (or the module `shop::store` for a glob).
    pub from: String,
    /// How a test names it: `shop::Store` (or the module re-exporting the glob: `shop`).
    pub to: String,
    /// `pub use store::*`: everything inside `from` is reachable inside `to`.
    pub glob: bool,
}

/// One module of the library.
#[derive(Debug, Clone)]
pub struct ModuleApi {
    /// Path below the crate root, as written (`r#type` stays raw).
    pub path: Vec<String>,
    /// The file the module's items are written in.
    pub file: PathBuf,
    /// `pub` all the way from the crate root.
    pub reachable: bool,
    /// Declared `pub` itself (what a glob re-export of its parent takes along).
    pub public: bool,
    /// Free functions by (unraw) name.
    pub functions: BTreeMap<String, FnApi>,
    /// Types with inherent impls (or public definitions) by name.
    pub types: BTreeMap<String, TypeApi>,
    /// Traits defined in the module by name.
    pub traits: BTreeMap<String, TraitApi>,
    /// `pub const` items by (unraw) name.
    pub consts: BTreeMap<String, ConstApi>,
}

/// A `pub const` of a module: a value a test can name (`httparse::EMPTY_HEADER`).
#[derive(Debug, Clone)]
pub struct ConstApi {
    /// The name as it must be written.
    pub ident: String,
    /// The last segment of its type's path, without generic arguments (`Header`); empty for a
    /// type that is no path (a reference, an array).
    pub type_name: String,
    /// Its initializer's tokens (`syn::Expr` is not `Send`: parsed again where it is read).
    pub expr: String,
    /// What `{:?}` printed for it in a program built against the crate, when it was asked
    /// (`verify/consts.rs`): the compiler's own value of an initializer carve cannot read
    /// (a `const fn` call).
    pub probed: Option<String>,
}

/// A trait and what a `mock!` of it needs.
#[derive(Debug, Clone, Default)]
pub struct TraitApi {
    pub name: String,
    /// Defined as `pub`.
    pub public: bool,
    /// Why carve cannot write a `mock!` of it (generics, associated items...).
    pub blocker: Option<&'static str>,
    /// Required and provided methods, in declaration order.
    pub methods: Vec<TraitMethodApi>,
}

/// One method of a trait.
#[derive(Debug, Clone)]
pub struct TraitMethodApi {
    /// The name without `r#`.
    pub name: String,
    /// The signature as a test file writes it, without the trailing `;`:
    /// `fn ask(&self, a: &dyn abc::Answerer) -> i32`.
    pub signature: String,
    /// Parameters after the receiver.
    pub params: Vec<ParamApi>,
    pub ret: DeclType,
    /// Takes `&mut self`.
    pub mut_receiver: bool,
    /// The return type as written in the test file (`Box<dyn dao::Rows>`), `()` when none.
    pub ret_written: String,
    /// `unsafe` or `async`: no test calls it as written (nor replays it), whatever the type.
    pub blocker: Option<&'static str>,
}

/// A field of a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldApi {
    /// `name`, or `0`, `1`... for tuple structs.
    pub name: String,
    pub public: bool,
    /// Its type's tokens as written (`bool`, `Vec < u8 >`).
    pub ty: String,
}

/// A struct, enum, union or type alias and the functions of its inherent impls.
#[derive(Debug, Clone, Default)]
pub struct TypeApi {
    pub name: String,
    /// Defined as `pub` in this module.
    pub public: bool,
    /// Its definition is in the source syn read; `false` when only impls of it were seen (a
    /// macro defined it: `bitflags!`).
    pub declared: bool,
    /// An impl with type or const parameters (`impl<T> Stack<T>`): callers would have to name them.
    pub generic: bool,
    /// Some impl is generic in a way a test cannot fill in. Not so for type parameters with one
    /// trait bound each (`impl<R: Repo> Service<R>`): mocks go in and the compiler infers them.
    pub unmockable_generic: bool,
    pub functions: BTreeMap<String, FnApi>,
    /// A struct (not an enum, union or alias).
    pub is_struct: bool,
    /// A struct without braces or parentheses (`struct A;`).
    pub unit: bool,
    /// The struct's fields in declaration order.
    pub fields: Vec<FieldApi>,
    /// Last path segment of every trait it derives or implements (`Debug`, `PartialEq`...).
    pub traits: BTreeSet<String>,
    /// Those of `traits` it derives (whose output is known: a derived `Debug`).
    pub derives: BTreeSet<String>,
    /// The type parameters its definition declares, in order (`K`, `V`, then `S = …`).
    pub type_params: Vec<TypeParamApi>,
    /// How many lifetime parameters its definition declares (`Parser<'input, F>`: one).
    pub lifetimes: usize,
    /// Values of the type a caller writes as they are, each after the type's path: an enum's
    /// variants without fields (`Myers`), its public associated consts of its own type
    /// (`ZERO`), a `bitflags!` type's flags and `empty()` and `all()` (`ENABLE_TABLES`).
    pub values: Vec<String>,
    /// Its `Display` impl reads the formatter's options (`f.width()`, `f.precision()`,
    /// `f.align()`...): a caller's format spec (`{:>12.3}`) changes what its code does.
    pub display_reads_options: bool,
}

/// A type parameter of a type's definition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeParamApi {
    pub name: String,
    /// Has a default (`S = DefaultHasher`): a caller may leave it out, and so does a test.
    pub defaulted: bool,
}

/// A function's signature as far as calling it with literals goes.
#[derive(Debug, Clone)]
pub struct FnApi {
    /// The name without `r#`.
    pub name: String,
    /// The name as it must be written (`r#match` for a keyword).
    pub ident: String,
    /// Declared `pub` (not `pub(crate)` or narrower).
    pub public: bool,
    /// Takes `self` in some form: a method, not an associated function.
    pub has_receiver: bool,
    /// Takes `&mut self`.
    pub mut_receiver: bool,
    /// Takes `self` by value (a call moves the receiver); known for inherent methods only.
    pub self_by_value: bool,
    pub params: Vec<ParamApi>,
    /// `DeclType::Unit` when there is no `->`.
    pub ret: DeclType,
    /// The return type as written (`Option<&'a str>`), `()` when there is none; what
    /// [`DeclType`] leaves out (generic arguments) is read from it where needed.
    pub ret_written: String,
    /// The return type is written `Result<(), E>` (see `observe::zero_sized_ok`).
    pub ret_ok_unit: bool,
    /// Why a test cannot call it with literals even when it is public (`async`, `unsafe`...).
    pub blocker: Option<&'static str>,
    /// Its own type parameters, when some argument does not pin them all down
    /// (`fn from_lines<Old, New, T>(old: Old, new: New)` where `T` is an associated type's
    /// value): the call names the recorded instance (see `instance::fn_turbofish`).
    pub uninferable_generics: usize,
    /// The signature as the source writes it (`fn raise(&mut self, by: u8) -> Result<u8, E>`,
    /// token spacing aside), for readers that need more than `DeclType` keeps (slices, generic
    /// containers, the receiver's form); empty for calls carve makes up (`to_string`...).
    pub signature: String,
}

/// One declared parameter.
#[derive(Debug, Clone)]
pub struct ParamApi {
    /// The binding's name, or `_` for patterns.
    pub name: String,
    pub ty: DeclType,
    /// The trait a mock can stand in for: the one trait bound of a generic parameter (`repo: R`
    /// with `R: Repo`, `&R`, `&mut R`) or of `impl Repo` (`crate::Repo` as a test writes it).
    pub bound: Option<String>,
}

impl CrateApi {
    /// The module at `path` below the crate root.
    pub fn module(&self, path: &[String]) -> Option<&ModuleApi> {
        self.modules.get(path)
    }
    /// Finds a module by unraw'd names (DWARF has `type` where the source has `r#type`).
    pub fn find_module(&self, path: &[String]) -> Option<&ModuleApi> {
        self.module(path).or_else(|| {
            self.modules.values().find(|m| {
                m.path.len() == path.len()
                    && m.path
                        .iter()
                        .zip(path)
                        .all(|(a, b)| a.trim_start_matches("r#") == b)
            })
        })
    }
    /// The module and item name of a recorded full path (`abc::sub::Item`) in this crate.
    pub(crate) fn split_path(&self, path: &str) -> Option<(&ModuleApi, String)> {
        let segments: Vec<String> = path.split("::").map(str::to_string).collect();
        let (krate, rest) = segments.split_first()?;
        let (name, module) = rest.split_last()?;
        if krate != &self.crate_name {
            return None;
        }
        Some((self.find_module(module)?, name.clone()))
    }
    /// The crate's types of the name `name` (as a signature writes a type: its last segment),
    /// in any module.
    pub(crate) fn types_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a TypeApi> {
        self.modules.values().filter_map(move |m| m.types.get(name))
    }
    /// A type the crate's source declares at `path`, public or not (not one only impls show).
    pub fn declared_type(&self, path: &str) -> Option<&TypeApi> {
        let (module, name) = self.split_path(path)?;
        module.types.get(&name).filter(|t| t.declared)
    }
    /// A type by its recorded path, when a test can name it (public, reachable module).
    pub fn public_type(&self, path: &str) -> Option<&TypeApi> {
        let (module, name) = self.split_path(path)?;
        let ty = module.types.get(&name)?;
        ((module.reachable || self.public_path(path).is_some()) && ty.public).then_some(ty)
    }
    /// A trait the crate declares at `path`, public or not.
    pub fn declared_trait(&self, path: &str) -> Option<&TraitApi> {
        let (module, name) = self.split_path(path)?;
        module.traits.get(&name)
    }
    /// A trait by its recorded path, when a test can name it.
    pub fn public_trait(&self, path: &str) -> Option<&TraitApi> {
        let (module, name) = self.split_path(path)?;
        let tr = module.traits.get(&name)?;
        ((module.reachable || self.public_path(path).is_some()) && tr.public).then_some(tr)
    }
    /// How a test names the item defined at `path` when a `pub use` makes it reachable from
    /// outside a private module: `shop::store::Store` → `shop::Store`. `None` when no
    /// re-export covers it (the item may still be reachable where it is defined).
    pub fn public_path(&self, path: &str) -> Option<String> {
        // A re-export of a re-export (`pub use inner::*` in a private module that the root
        // re-exports again, `pub use self::abstraction::Trait` in a private `text` whose items
        // the root re-exports with `pub use text::*`): follow a few links, every re-export that
        // covers the path at each link (breadth first: the shortest chain wins), until a
        // spelling is reachable. Taking only the first re-export that matched could follow a
        // glob into a private module's path (`similar::abstraction::DiffableStr`) and stop there.
        let mut frontier = vec![path.to_string()];
        let mut seen: BTreeSet<String> = frontier.iter().cloned().collect();
        for _ in 0..4 {
            let mut next_frontier = Vec::new();
            for path in &frontier {
                for r in &self.reexports {
                    let next = if !r.glob && *path == r.from {
                        r.to.clone()
                    } else if let Some(rest) = path
                        .strip_prefix(&r.from)
                        .and_then(|rest| rest.strip_prefix("::"))
                    {
                        // A glob re-exports the module's public items, not the modules inside it
                        // that are private: `text::*` does not make `text::abstraction::X` public.
                        if r.glob && rest.contains("::") && !self.glob_reaches(&r.from, rest) {
                            continue;
                        }
                        format!("{}::{rest}", r.to)
                    } else {
                        continue;
                    };
                    if self.reachable_path(&next) {
                        return Some(next);
                    }
                    if seen.insert(next.clone()) {
                        next_frontier.push(next);
                    }
                }
            }
            if next_frontier.is_empty() {
                return None;
            }
            frontier = next_frontier;
        }
        None
    }
    /// Whether a glob re-export of the module at `module` reaches `rest` (`inner::Item`): its
    /// first segment must be a public module there (a glob takes only what is `pub`).
    fn glob_reaches(&self, module: &str, rest: &str) -> bool {
        let first = rest.split("::").next().unwrap_or(rest);
        let mut segments: Vec<String> = module.split("::").skip(1).map(str::to_string).collect();
        segments.push(first.to_string());
        self.find_module(&segments).is_some_and(|m| m.public)
    }
    /// Whether the module holding the item at `path` (full, with the crate name) is reachable.
    fn reachable_path(&self, path: &str) -> bool {
        let segments: Vec<String> = path.split("::").map(str::to_string).collect();
        let Some((_, rest)) = segments.split_first() else {
            return false;
        };
        let module = &rest[..rest.len().saturating_sub(1)];
        // `Type::method`: the module is one segment further up.
        self.find_module(module)
            .or_else(|| self.find_module(&module[..module.len().saturating_sub(1)]))
            .is_some_and(|m| m.reachable)
    }
    /// Whether recorded source file `file` is one of the lib's source files.
    pub fn contains_file(&self, file: &Path) -> bool {
        self.files.contains(&canonical(&self.local_file(file)))
    }
    /// Where recorded source file `file` is now: under `dir` when the trace was recorded with
    /// the crate elsewhere ([`CrateApi::recorded_root`]), else where the trace says.
    pub fn local_file(&self, file: &Path) -> PathBuf {
        match self
            .recorded_root
            .as_ref()
            .and_then(|root| file.strip_prefix(root).ok())
        {
            Some(rest) => self.dir.join(rest),
            None => file.to_path_buf(),
        }
    }
}

impl crate::read::types::TypeFacts for CrateApi {
    fn shape(&self, path: &str) -> Option<crate::read::types::Shape> {
        let Some(ty) = self.public_type(path) else {
            return self.stand_ins.shape(path);
        };
        let debug = ty.traits.contains("Debug");
        Some(crate::read::types::Shape {
            fields_public: ty.fields.iter().all(|f| f.public),
            unit: ty.unit,
            comparable: debug && ty.traits.contains("PartialEq"),
            debug,
            debug_derived: ty.derives.contains("Debug"),
        })
    }

    fn unseen_type_nameable(&self, path: &str) -> bool {
        path.starts_with(&format!("{}::", self.crate_name))
            && self.declared_type(path).is_none()
            && (self.reachable_path(path) || self.public_path(path).is_some())
    }
}
