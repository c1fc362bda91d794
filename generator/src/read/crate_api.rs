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

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::visit_mut::VisitMut;

use crate::error::GenerateError;
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
}

/// A field of a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldApi {
    /// `name`, or `0`, `1`... for tuple structs.
    pub name: String,
    pub public: bool,
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
    pub params: Vec<ParamApi>,
    /// `DeclType::Unit` when there is no `->`.
    pub ret: DeclType,
    /// The return type is written `Result<(), E>` (see `observe::zero_sized_ok`).
    pub ret_ok_unit: bool,
    /// Why a test cannot call it with literals even when it is public (`async`, `unsafe`...).
    pub blocker: Option<&'static str>,
    /// Its own type parameters, when some argument does not pin them all down
    /// (`fn from_lines<Old, New, T>(old: Old, new: New)` where `T` is an associated type's
    /// value): the call names the recorded instance (see `instance::fn_turbofish`).
    pub uninferable_generics: usize,
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
    /// Reads the crate in `dir` (the directory of its `Cargo.toml`).
    pub fn load(dir: &Path) -> Result<CrateApi, GenerateError> {
        let manifest_path = dir.join("Cargo.toml");
        let manifest =
            fs::read_to_string(&manifest_path).map_err(|source| GenerateError::ReadManifest {
                path: manifest_path.clone(),
                source,
            })?;
        let info = parse_manifest(&manifest);
        let Some(package) = info.package_name.clone() else {
            return Err(GenerateError::NotAPackage {
                path: manifest_path,
            });
        };
        let lib_root = dir.join(info.lib_path.as_deref().unwrap_or("src/lib.rs"));
        if !lib_root.is_file() {
            return Err(GenerateError::NoLibrary {
                dir: dir.to_path_buf(),
                lib_root,
            });
        }
        let crate_name = info
            .lib_name
            .clone()
            .unwrap_or_else(|| package.replace('-', "_"));
        let source = fs::read_to_string(&lib_root).map_err(|source| GenerateError::ReadSource {
            path: lib_root.clone(),
            source,
        })?;
        let file = syn::parse_file(&source).map_err(|e| GenerateError::ParseSource {
            path: lib_root.clone(),
            message: e.to_string(),
        })?;
        let mut api = CrateApi {
            crate_name,
            dir: dir.to_path_buf(),
            lib_root: lib_root.clone(),
            modules: BTreeMap::new(),
            files: BTreeSet::new(),
            unreadable: Vec::new(),
            dev_dependencies: info.dependencies.clone(),
            aliases: BTreeMap::new(),
            reexports: Vec::new(),
        };
        api.files.insert(canonical(&lib_root));
        let child_dir = lib_root
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        let ctx = ModCtx {
            path: Vec::new(),
            file: lib_root,
            child_dir,
            reachable: true,
            public: true,
            inline: false,
        };
        api.walk(&file.items, ctx, 0);
        api.resolve_aliases();
        Ok(api)
    }

    /// Replaces types named like a crate alias (`type Id = u32;`) by what they stand for, when
    /// the name is not ambiguous.
    fn resolve_aliases(&mut self) {
        let aliases = std::mem::take(&mut self.aliases);
        let resolve = |ty: &mut DeclType| {
            // Two rounds cover an alias of an alias.
            for _ in 0..2 {
                substitute_alias(ty, &aliases);
            }
        };
        for module in self.modules.values_mut() {
            let fns = module.functions.values_mut().chain(
                module
                    .types
                    .values_mut()
                    .flat_map(|t| t.functions.values_mut()),
            );
            for f in fns {
                f.params.iter_mut().for_each(|p| resolve(&mut p.ty));
                resolve(&mut f.ret);
            }
        }
        self.aliases = aliases;
    }

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

    /// Records the `pub use` items of the module at `path` (see [`CrateApi::reexports`]).
    fn collect_reexports(&mut self, items: &[syn::Item], path: &[String]) {
        // Names a `use` path may start with inside this module (2018 uniform paths).
        let local: BTreeSet<String> = items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Mod(m) => Some(m.ident.to_string()),
                syn::Item::Struct(i) => Some(i.ident.to_string()),
                syn::Item::Enum(i) => Some(i.ident.to_string()),
                syn::Item::Trait(i) => Some(i.ident.to_string()),
                syn::Item::Fn(i) => Some(i.sig.ident.to_string()),
                syn::Item::Type(i) => Some(i.ident.to_string()),
                _ => None,
            })
            .collect();
        let mut here = vec![self.crate_name.clone()];
        here.extend(path.iter().cloned());
        for item in items {
            let syn::Item::Use(u) = item else { continue };
            if !matches!(u.vis, syn::Visibility::Public(_)) {
                continue;
            }
            let mut uses = Vec::new();
            flatten_use(&u.tree, Vec::new(), &mut uses);
            for (segments, name) in uses {
                let Some((first, rest)) = segments.split_first() else {
                    continue;
                };
                let mut from: Vec<String> = match first.as_str() {
                    "crate" => vec![self.crate_name.clone()],
                    "self" => here.clone(),
                    "super" => here[..here.len().saturating_sub(1)].to_vec(),
                    other if local.contains(other) => {
                        let mut p = here.clone();
                        p.push(other.to_string());
                        p
                    }
                    _ => continue, // another crate
                };
                from.extend(rest.iter().cloned());
                let glob = name.is_none();
                let mut to = here.clone();
                if let Some(name) = name {
                    to.push(name);
                }
                self.reexports.push(Reexport {
                    from: from.join("::"),
                    to: to.join("::"),
                    glob,
                });
            }
        }
    }

    /// Whether `file` is one of the lib's source files.
    pub fn contains_file(&self, file: &Path) -> bool {
        self.files.contains(&canonical(file))
    }

    fn walk(&mut self, items: &[syn::Item], ctx: ModCtx, depth: usize) {
        let mut module = ModuleApi {
            path: ctx.path.clone(),
            file: ctx.file.clone(),
            reachable: ctx.reachable,
            public: ctx.public,
            functions: BTreeMap::new(),
            types: BTreeMap::new(),
            traits: BTreeMap::new(),
        };
        let scope = Scope::new(&self.crate_name, &ctx.path, items);
        self.collect_reexports(items, &ctx.path);
        let mut children = Vec::new();
        for item in items {
            match item {
                syn::Item::Fn(f) if !is_cfg_test(&f.attrs) => {
                    let api = fn_api(&f.vis, &f.sig, &[], &BTreeMap::new(), &scope);
                    module.functions.insert(api.name.clone(), api);
                }
                syn::Item::Struct(s) => {
                    declare_type(&mut module, &s.ident, &s.vis);
                    if let Some(t) = module.types.get_mut(&s.ident.unraw().to_string()) {
                        t.is_struct = true;
                        t.unit = matches!(s.fields, syn::Fields::Unit);
                        t.fields = s
                            .fields
                            .iter()
                            .enumerate()
                            .map(|(i, f)| FieldApi {
                                name: f
                                    .ident
                                    .as_ref()
                                    .map_or_else(|| i.to_string(), |id| id.unraw().to_string()),
                                public: matches!(f.vis, syn::Visibility::Public(_)),
                            })
                            .collect();
                        t.derives.extend(derives(&s.attrs));
                        t.traits.extend(t.derives.iter().cloned());
                    }
                }
                syn::Item::Enum(e) => {
                    declare_type(&mut module, &e.ident, &e.vis);
                    if let Some(t) = module.types.get_mut(&e.ident.unraw().to_string()) {
                        t.derives.extend(derives(&e.attrs));
                        t.traits.extend(t.derives.iter().cloned());
                    }
                }
                syn::Item::Trait(t) if !is_cfg_test(&t.attrs) => {
                    let api = trait_api(t, &scope);
                    module.traits.insert(api.name.clone(), api);
                }
                syn::Item::Impl(imp) if imp.trait_.is_some() && !is_cfg_test(&imp.attrs) => {
                    add_trait_impl(&mut module, imp);
                }
                syn::Item::Union(u) => declare_type(&mut module, &u.ident, &u.vis),
                syn::Item::Type(t) => {
                    declare_type(&mut module, &t.ident, &t.vis);
                    let only_lifetimes = t
                        .generics
                        .params
                        .iter()
                        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)));
                    if only_lifetimes {
                        self.aliases
                            .entry(t.ident.unraw().to_string())
                            .or_default()
                            .push(DeclType::from_syn(&t.ty, &[]));
                    }
                }
                syn::Item::Impl(imp) if imp.trait_.is_none() && !is_cfg_test(&imp.attrs) => {
                    add_inherent_impl(&mut module, imp, &scope);
                }
                syn::Item::Mod(m) if !is_cfg_test(&m.attrs) => children.push(m),
                _ => {}
            }
        }
        self.modules.insert(ctx.path.clone(), module);
        // Guard against `#[path]` cycles.
        if depth > 64 {
            return;
        }
        for m in children {
            self.walk_child(m, &ctx, depth);
        }
    }

    fn walk_child(&mut self, m: &syn::ItemMod, parent: &ModCtx, depth: usize) {
        let name = m.ident.to_string();
        let dir_name = m.ident.unraw().to_string();
        let mut path = parent.path.clone();
        path.push(name);
        let public = matches!(m.vis, syn::Visibility::Public(_));
        let reachable = parent.reachable && public;
        let path_attr = path_attribute(&m.attrs);
        if let Some((_, items)) = &m.content {
            let child_dir = match &path_attr {
                Some(p) => parent.child_dir.join(p),
                None => parent.child_dir.join(&dir_name),
            };
            let ctx = ModCtx {
                path,
                file: parent.file.clone(),
                child_dir,
                reachable,
                public,
                inline: true,
            };
            self.walk(items, ctx, depth + 1);
            return;
        }
        let candidates = match &path_attr {
            // Outside inline module blocks a `#[path]` is relative to the directory of the
            // source file, also in a non-`mod.rs` file (`src/lookup.rs` with
            // `#[path = "gen/lookup.rs"] mod gen;` is `src/gen/lookup.rs`).
            Some(p) if !parent.inline => {
                vec![parent
                    .file
                    .parent()
                    .map_or_else(PathBuf::new, Path::to_path_buf)
                    .join(p)]
            }
            Some(p) => vec![parent.child_dir.join(p)],
            None => vec![
                parent.child_dir.join(format!("{dir_name}.rs")),
                parent.child_dir.join(&dir_name).join("mod.rs"),
            ],
        };
        let Some(file) = candidates.iter().find(|c| c.is_file()).cloned() else {
            let missing = candidates.first().cloned().unwrap_or_default();
            self.unreadable
                .push((missing, "module file not found".to_string()));
            return;
        };
        let parsed = fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|src| syn::parse_file(&src).map_err(|e| e.to_string()));
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(message) => {
                self.unreadable.push((file, message));
                return;
            }
        };
        let is_mod_rs = path_attr.is_some() || file.file_name().is_some_and(|n| n == "mod.rs");
        let file_dir = file.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let child_dir = if is_mod_rs {
            file_dir
        } else {
            file_dir.join(&dir_name)
        };
        self.files.insert(canonical(&file));
        let ctx = ModCtx {
            path,
            file,
            child_dir,
            reachable,
            public,
            inline: false,
        };
        self.walk(&parsed.items, ctx, depth + 1);
    }
}

impl crate::read::types::TypeFacts for CrateApi {
    fn shape(&self, path: &str) -> Option<crate::read::types::Shape> {
        let ty = self.public_type(path)?;
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

/// Where a module's items live and where its `mod x;` children are looked up.
struct ModCtx {
    path: Vec<String>,
    file: PathBuf,
    child_dir: PathBuf,
    reachable: bool,
    public: bool,
    /// Inside an inline `mod x { }` block, where `#[path]` is relative to `child_dir`.
    inline: bool,
}

fn substitute_alias(ty: &mut DeclType, aliases: &BTreeMap<String, Vec<DeclType>>) {
    match ty {
        DeclType::Ref { inner, .. } => substitute_alias(inner, aliases),
        DeclType::Other(written) => {
            let name = written.rsplit("::").next().unwrap_or(written);
            if let Some([target]) = aliases.get(name).map(Vec::as_slice) {
                *ty = target.clone();
            }
        }
        _ => {}
    }
}

fn declare_type(module: &mut ModuleApi, ident: &syn::Ident, vis: &syn::Visibility) {
    let name = ident.unraw().to_string();
    let entry = module.types.entry(name.clone()).or_insert_with(|| TypeApi {
        name,
        ..TypeApi::default()
    });
    entry.public = matches!(vis, syn::Visibility::Public(_));
    entry.declared = true;
}

fn add_inherent_impl(module: &mut ModuleApi, imp: &syn::ItemImpl, scope: &Scope) {
    let syn::Type::Path(self_ty) = imp.self_ty.as_ref() else {
        return;
    };
    // `impl Foo` names a type of this module (or one brought in by `use`, which we do not
    // follow); longer paths point elsewhere.
    if self_ty.qself.is_some() || self_ty.path.segments.len() != 1 {
        return;
    }
    let Some(segment) = self_ty.path.segments.first() else {
        return;
    };
    let name = segment.ident.unraw().to_string();
    let impl_generics: Vec<String> = type_params(&imp.generics);
    // Lifetimes (`impl<'a> Lexer<'a>`) are inferred at the call; type arguments are not.
    let type_arguments = match &segment.arguments {
        syn::PathArguments::None => false,
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .any(|arg| !matches!(arg, syn::GenericArgument::Lifetime(_))),
        syn::PathArguments::Parenthesized(_) => true,
    };
    let generic = !impl_generics.is_empty() || has_const_params(&imp.generics) || type_arguments;
    let impl_bounds = trait_bounds(&imp.generics, scope);
    // `impl<R: Repo> Service<R>`: the type's arguments are the impl's parameters, each with
    // one trait bound.
    let arguments_are_params = match &segment.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter(|arg| !matches!(arg, syn::GenericArgument::Lifetime(_)))
            .map(|arg| match arg {
                syn::GenericArgument::Type(syn::Type::Path(p)) => {
                    p.path.get_ident().map(|i| i.to_string())
                }
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .is_some_and(|args| args == impl_generics),
        _ => impl_generics.is_empty(),
    };
    let mockable = !has_const_params(&imp.generics)
        && arguments_are_params
        && impl_generics.iter().all(|g| impl_bounds.contains_key(g));
    let entry = module.types.entry(name.clone()).or_insert_with(|| TypeApi {
        name,
        ..TypeApi::default()
    });
    entry.generic |= generic;
    entry.unmockable_generic |= generic && !mockable;
    for item in &imp.items {
        if let syn::ImplItem::Fn(f) = item {
            if is_cfg_test(&f.attrs) {
                continue;
            }
            let api = fn_api(&f.vis, &f.sig, &impl_generics, &impl_bounds, scope);
            entry.functions.insert(api.name.clone(), api);
        }
    }
}

fn type_params(generics: &syn::Generics) -> Vec<String> {
    generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            _ => None,
        })
        .collect()
}

fn has_const_params(generics: &syn::Generics) -> bool {
    generics
        .params
        .iter()
        .any(|p| matches!(p, syn::GenericParam::Const(_)))
}

/// Type parameters with exactly one trait bound that is not a marker (`R: Repo`,
/// `where R: Repo + Send`), and the bound as a test writes it.
fn trait_bounds(generics: &syn::Generics, scope: &Scope) -> BTreeMap<String, String> {
    let mut all: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut add =
        |param: String,
         bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::token::Plus>| {
            let entry = all.entry(param).or_default();
            entry.extend(bounds.iter().filter_map(|b| bound_path(b, scope)));
        };
    for p in &generics.params {
        if let syn::GenericParam::Type(t) = p {
            add(t.ident.to_string(), &t.bounds);
        }
    }
    if let Some(w) = &generics.where_clause {
        for pred in &w.predicates {
            if let syn::WherePredicate::Type(pt) = pred {
                if let syn::Type::Path(p) = &pt.bounded_ty {
                    if let Some(ident) = p.path.get_ident() {
                        add(ident.to_string(), &pt.bounds);
                    }
                }
            }
        }
    }
    all.into_iter()
        .filter_map(|(param, bounds)| match bounds.as_slice() {
            [one] => Some((param, one.clone())),
            _ => None,
        })
        .collect()
}

/// A trait bound's path as a test writes it (`crate::Repo` → `app::Repo`); `None` for lifetimes,
/// `?Sized` and the auto traits a mock has anyway (`Send`, `Sync`, `Unpin`).
fn bound_path(bound: &syn::TypeParamBound, scope: &Scope) -> Option<String> {
    let syn::TypeParamBound::Trait(t) = bound else {
        return None;
    };
    if t.maybe.is_some() {
        return None;
    }
    let mut path = t.path.clone();
    let last = path.segments.last()?.ident.to_string();
    if matches!(last.as_str(), "Send" | "Sync" | "Unpin" | "Sized") {
        return None;
    }
    Qualify(scope).visit_path_mut(&mut path);
    Some(
        path.segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::"),
    )
}

/// The mockable trait of a parameter typed `R`, `&R`, `&mut R` (bounded) or `impl Trait`.
fn param_bound(ty: &syn::Type, bounds: &BTreeMap<String, String>, scope: &Scope) -> Option<String> {
    match ty {
        syn::Type::Reference(r) => param_bound(&r.elem, bounds, scope),
        syn::Type::Paren(p) => param_bound(&p.elem, bounds, scope),
        syn::Type::Path(p) => bounds.get(&p.path.get_ident()?.to_string()).cloned(),
        syn::Type::ImplTrait(i) => {
            let paths: Vec<String> = i
                .bounds
                .iter()
                .filter_map(|b| bound_path(b, scope))
                .collect();
            match paths.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

fn fn_api(
    vis: &syn::Visibility,
    sig: &syn::Signature,
    outer_generics: &[String],
    outer_bounds: &BTreeMap<String, String>,
    scope: &Scope,
) -> FnApi {
    let mut generics = type_params(&sig.generics);
    let own_generics = generics.clone();
    generics.extend(outer_generics.iter().cloned());
    let mut bounds = trait_bounds(&sig.generics, scope);
    for (k, v) in outer_bounds {
        bounds.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let mut has_receiver = false;
    let mut mut_receiver = false;
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => {
                has_receiver = true;
                mut_receiver = matches!(r.kind, syn::ReceiverKind::Reference(_, _, Some(_)));
            }
            syn::FnArg::Typed(pt) => {
                let name = match pt.pat.as_ref() {
                    syn::Pat::Ident(p) => p.ident.unraw().to_string(),
                    _ => "_".to_string(),
                };
                params.push(ParamApi {
                    name,
                    ty: DeclType::from_syn(&pt.ty, &generics),
                    bound: param_bound(&pt.ty, &bounds, scope),
                });
            }
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => DeclType::Unit,
        syn::ReturnType::Type(_, ty) => DeclType::from_syn(ty, &generics),
    };
    // Every type parameter must be pinned down by an argument, or the call would not infer.
    let inferable = own_generics.iter().all(|g| {
        params
            .iter()
            .any(|p| p.ty.generic_name() == Some(g.as_str()))
    });
    let blocker = if sig.asyncness.is_some() {
        Some("async")
    } else if matches!(sig.safety, syn::Safety::Unsafe(_)) {
        Some("unsafe")
    } else if sig.variadic.is_some() || sig.abi.is_some() {
        Some("extern")
    } else if has_const_params(&sig.generics) || ret.is_opaque() {
        Some("generic")
    } else if !inferable && params.iter().any(|p| p.ty.is_opaque()) {
        // `impl Trait` arguments forbid naming the other parameters.
        Some("generic")
    } else {
        None
    };
    let uninferable_generics = if inferable { 0 } else { own_generics.len() };
    FnApi {
        name: sig.ident.unraw().to_string(),
        ident: sig.ident.to_string(),
        public: matches!(vis, syn::Visibility::Public(_)),
        has_receiver,
        mut_receiver,
        params,
        ret,
        ret_ok_unit: match &sig.output {
            syn::ReturnType::Default => false,
            syn::ReturnType::Type(_, ty) => crate::read::types::written_ok_unit(&type_source(ty)),
        },
        blocker,
        uninferable_generics,
    }
}

/// Names a module's items can use without a path, and how a test file must write them.
struct Scope {
    /// `abc` or `abc::sub`: how a test names this module.
    module: String,
    crate_name: String,
    /// The module path below the crate root.
    path: Vec<String>,
    /// Items declared in the module (types, traits, aliases).
    local: BTreeSet<String>,
    /// `use crate::x::Y;` (or `self::`/`super::`) imports: name → full path for tests.
    imports: BTreeMap<String, String>,
}

impl Scope {
    fn new(crate_name: &str, path: &[String], items: &[syn::Item]) -> Scope {
        let mut module = vec![crate_name.to_string()];
        module.extend(path.iter().cloned());
        let mut scope = Scope {
            module: module.join("::"),
            crate_name: crate_name.to_string(),
            path: path.to_vec(),
            local: BTreeSet::new(),
            imports: BTreeMap::new(),
        };
        for item in items {
            let ident = match item {
                syn::Item::Struct(i) => &i.ident,
                syn::Item::Enum(i) => &i.ident,
                syn::Item::Union(i) => &i.ident,
                syn::Item::Trait(i) => &i.ident,
                syn::Item::Type(i) => &i.ident,
                syn::Item::Use(u) => {
                    scope.add_use(&u.tree, Vec::new());
                    continue;
                }
                _ => continue,
            };
            scope.local.insert(ident.to_string());
        }
        scope
    }

    fn add_use(&mut self, tree: &syn::UseTree, prefix: Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                let mut prefix = prefix;
                prefix.push(p.ident.to_string());
                self.add_use(&p.tree, prefix);
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix;
                full.push(n.ident.to_string());
                if let Some(path) = self.absolute(&full) {
                    self.imports.insert(n.ident.to_string(), path);
                }
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix;
                full.push(r.ident.to_string());
                if let Some(path) = self.absolute(&full) {
                    self.imports.insert(r.rename.to_string(), path);
                }
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.add_use(t, prefix.clone());
                }
            }
            syn::UseTree::Glob(_) => {}
        }
    }

    /// A `crate::`/`self::`/`super::` path as a test file writes it; `None` for other crates.
    fn absolute(&self, segments: &[String]) -> Option<String> {
        let (first, rest) = segments.split_first()?;
        let mut base: Vec<String> = match first.as_str() {
            "crate" => vec![self.crate_name.clone()],
            "self" => self.module.split("::").map(str::to_string).collect(),
            "super" => {
                let mut p = vec![self.crate_name.clone()];
                p.extend(
                    self.path
                        .iter()
                        .take(self.path.len().saturating_sub(1))
                        .cloned(),
                );
                p
            }
            _ => return None,
        };
        base.extend(rest.iter().cloned());
        Some(base.join("::"))
    }
}

/// Rewrites type paths so they resolve from a test file: `Answerer` → `abc::Answerer`.
struct Qualify<'a>(&'a Scope);

impl VisitMut for Qualify<'_> {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        for segment in path.segments.iter_mut() {
            self.visit_path_arguments_mut(&mut segment.arguments);
        }
        if path.leading_colon.is_some() {
            return;
        }
        let Some(first) = path.segments.first().map(|s| s.ident.to_string()) else {
            return;
        };
        let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let replacement = if let Some(abs) = self.0.absolute(&names) {
            // `crate::x::Y`: everything but the last segment is replaced.
            Some((abs, names.len()))
        } else if self.0.local.contains(&first) {
            Some((format!("{}::{first}", self.0.module), 1))
        } else {
            self.0.imports.get(&first).map(|p| (p.clone(), 1))
        };
        let Some((full, replaced)) = replacement else {
            return;
        };
        let mut new_path: syn::Path = match syn::parse_str(&full) {
            Ok(p) => p,
            Err(_) => return,
        };
        // Keep the generic arguments of the last replaced segment and any segments after it.
        let old: Vec<syn::PathSegment> = path.segments.iter().cloned().collect();
        if let (Some(last_new), Some(last_old)) =
            (new_path.segments.last_mut(), old.get(replaced - 1))
        {
            last_new.arguments = last_old.arguments.clone();
        }
        for seg in old.into_iter().skip(replaced) {
            new_path.segments.push(seg);
        }
        *path = new_path;
    }
}

fn trait_api(t: &syn::ItemTrait, scope: &Scope) -> TraitApi {
    let mut api = TraitApi {
        name: t.ident.unraw().to_string(),
        public: matches!(t.vis, syn::Visibility::Public(_)),
        blocker: None,
        methods: Vec::new(),
    };
    if !t.generics.params.is_empty() || t.generics.where_clause.is_some() {
        api.blocker = Some("generic trait");
    }
    if t.unsafety.is_some() {
        api.blocker = Some("unsafe trait");
    }
    for item in &t.items {
        match item {
            syn::TraitItem::Fn(f) => {
                let mut sig = f.sig.clone();
                Qualify(scope).visit_signature_mut(&mut sig);
                let has_receiver = matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
                if !has_receiver || !sig.generics.params.is_empty() || sig.asyncness.is_some() {
                    api.blocker
                        .get_or_insert("method without self or generic method");
                }
                // Parameter patterns other than plain names cannot go into `mock!`.
                let plain = sig.inputs.iter().all(|input| match input {
                    syn::FnArg::Typed(pt) => matches!(pt.pat.as_ref(), syn::Pat::Ident(_)),
                    _ => true,
                });
                if !plain {
                    api.blocker.get_or_insert("pattern parameters");
                }
                let fn_info = fn_api(
                    &syn::Visibility::Inherited,
                    &sig,
                    &[],
                    &BTreeMap::new(),
                    scope,
                );
                let ret_written = match &sig.output {
                    syn::ReturnType::Default => "()".to_string(),
                    syn::ReturnType::Type(_, ty) => type_source(ty),
                };
                api.methods.push(TraitMethodApi {
                    name: fn_info.name,
                    signature: signature_source(&sig),
                    params: fn_info.params,
                    ret: fn_info.ret,
                    mut_receiver: fn_info.mut_receiver,
                    ret_written,
                });
            }
            syn::TraitItem::Type(_) | syn::TraitItem::Const(_) => {
                api.blocker.get_or_insert("associated items");
            }
            _ => {}
        }
    }
    api
}

/// `fn ask(&self, a: &dyn abc::Answerer) -> i32`, formatted by prettyplease.
fn signature_source(sig: &syn::Signature) -> String {
    let source = format!("trait T {{ {}; }}", sig.to_token_stream());
    let Ok(file) = syn::parse_file(&source) else {
        return type_source_tokens(sig.to_token_stream().to_string());
    };
    let text = prettyplease::unparse(&file);
    let body: Vec<&str> = text
        .lines()
        .skip(1)
        .take_while(|l| *l != "}")
        .map(str::trim)
        .collect();
    body.join(" ")
        .trim_end_matches(';')
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(", )", ")")
}

fn type_source(ty: &syn::Type) -> String {
    type_source_tokens(ty.to_token_stream().to_string())
}

fn type_source_tokens(tokens: String) -> String {
    let mut out = tokens;
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// The trait names in `#[derive(...)]` attributes.
fn derives(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = a.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last() {
                out.push(last.ident.to_string());
            }
            Ok(())
        });
    }
    out
}

/// Notes `impl Trait for Type` on a type of this module.
fn add_trait_impl(module: &mut ModuleApi, imp: &syn::ItemImpl) {
    let (Some((trait_path, _)), syn::Type::Path(self_ty)) = (&imp.trait_, imp.self_ty.as_ref())
    else {
        return;
    };
    if self_ty.qself.is_some() || self_ty.path.segments.len() != 1 {
        return;
    }
    let (Some(ty), Some(tr)) = (self_ty.path.segments.first(), trait_path.segments.last()) else {
        return;
    };
    let name = ty.ident.unraw().to_string();
    let entry = module.types.entry(name.clone()).or_insert_with(|| TypeApi {
        name,
        ..TypeApi::default()
    });
    entry.traits.insert(tr.ident.to_string());
}

/// The paths a `use` tree names: (segments, the name it is used under; `None` for a glob).
fn flatten_use(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut prefix = prefix;
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, out);
        }
        syn::UseTree::Name(n) => {
            let mut full = prefix;
            full.push(n.ident.to_string());
            out.push((full, Some(n.ident.to_string())));
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix;
            full.push(r.ident.to_string());
            out.push((full, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix, None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix.clone(), out);
            }
        }
    }
}

/// `#[cfg(test)]` (alone, not inside `any`/`all`).
fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// The string of a `#[path = "..."]` attribute.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        if !a.path().is_ident("path") {
            return None;
        }
        let nv = a.meta.require_name_value().ok()?;
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What carve needs from a `Cargo.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ManifestInfo {
    pub package_name: Option<String>,
    pub lib_name: Option<String>,
    pub lib_path: Option<String>,
    /// Keys of `[dependencies]` and `[dev-dependencies]` (also `[dev-dependencies.x]` tables).
    pub dependencies: BTreeSet<String>,
    /// `[package] autotests = false`: cargo builds no `tests/*.rs` file it is not told of.
    pub autotests_off: bool,
    /// The `path`s of the `[[test]]` targets.
    pub test_paths: Vec<String>,
}

/// Reads `[package] name`, `[lib] name` and `[lib] path` from a manifest. Only plain
/// `key = "string"` lines are understood, which is how Cargo writes and people write these keys.
pub(crate) fn parse_manifest(text: &str) -> ManifestInfo {
    let mut info = ManifestInfo::default();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            for table in ["dependencies.", "dev-dependencies."] {
                if let Some(name) = section.strip_prefix(table) {
                    info.dependencies.insert(name.trim_matches('"').to_string());
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_matches('"');
        if matches!(section.as_str(), "dependencies" | "dev-dependencies") {
            info.dependencies.insert(key.to_string());
        }
        if section == "package" && key == "autotests" && value.trim() == "false" {
            info.autotests_off = true;
        }
        let Some(value) = toml_string(value.trim()) else {
            continue;
        };
        match (section.as_str(), key) {
            ("package", "name") => info.package_name = Some(value),
            ("lib", "name") => info.lib_name = Some(value),
            ("lib", "path") => info.lib_path = Some(value),
            ("test", "path") => info.test_paths.push(value),
            _ => {}
        }
    }
    info
}

/// A basic (`"..."`, with the common escapes) or literal (`'...'`) TOML string at the start of
/// `value`.
fn toml_string(value: &str) -> Option<String> {
    if let Some(rest) = value.strip_prefix('\'') {
        return rest.split('\'').next().map(str::to_string);
    }
    let rest = value.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// Walks up from `file` to the nearest directory with a `Cargo.toml` that has a `[package]`.
pub(crate) fn find_package_dir(file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        let manifest = d.join("Cargo.toml");
        if manifest.is_file() {
            if let Ok(text) = fs::read_to_string(&manifest) {
                if parse_manifest(&text).package_name.is_some() {
                    return Some(d.to_path_buf());
                }
            }
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn a_parameter_with_one_trait_bound_names_the_trait_a_mock_stands_in_for() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, "Cargo.toml", "[package]\nname = \"shop\"\n");
        write(
            dir,
            "src/lib.rs",
            "pub trait Prices { fn price(&self) -> u32; }\n\
             pub struct Shop<P: Prices> { p: P }\n\
             impl<P: Prices> Shop<P> { pub fn new(p: P) -> Self { Shop { p } } }\n\
             pub struct Pair<A, B> { a: A, b: B }\n\
             impl<A: Clone, B> Pair<A, B> { pub fn new(a: A, b: B) -> Self { Pair { a, b } } }\n\
             pub fn quote(p: &impl Prices) -> u32 { p.price() }\n\
             pub fn both<T>(p: &mut T) -> u32 where T: Prices + Send { p.price() }\n\
             pub fn cloned<T: Prices + Clone>(p: T) -> u32 { p.price() }\n",
        );
        let api = CrateApi::load(dir).unwrap();
        let root = api.module(&[]).unwrap();
        let bound = |f: &FnApi| f.params[0].bound.clone();
        assert_eq!(
            bound(&root.functions["quote"]).as_deref(),
            Some("shop::Prices")
        );
        assert_eq!(
            bound(&root.functions["both"]).as_deref(),
            Some("shop::Prices")
        );
        // Clone is a second bound a mock does not have.
        assert_eq!(bound(&root.functions["cloned"]), None);
        let shop = &root.types["Shop"];
        assert!(shop.generic && !shop.unmockable_generic);
        assert_eq!(
            bound(&shop.functions["new"]).as_deref(),
            Some("shop::Prices")
        );
        assert!(root.types["Pair"].unmockable_generic);
    }

    #[test]
    fn items_of_private_modules_are_reachable_by_the_paths_pub_use_gives_them() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, "Cargo.toml", "[package]\nname = \"shop\"\n");
        write(
            dir,
            "src/lib.rs",
            "mod store; mod util; mod deep;\n\
             pub use store::{Store, open as open_store};\npub use crate::util::*;\n\
             pub use deep::Inner;\n",
        );
        write(dir, "src/store.rs", "pub struct Store; impl Store { pub fn len(&self) -> usize { 0 } }\npub fn open() -> Store { Store }\npub fn hidden() {}\n");
        write(
            dir,
            "src/util.rs",
            "pub fn pad(s: &str) -> String { s.to_string() }\n",
        );
        write(dir, "src/deep.rs", "mod inner; pub use inner::*;\n");
        write(dir, "src/deep/inner.rs", "pub struct Inner;\n");
        let api = CrateApi::load(dir).unwrap();
        let public = |p: &str| api.public_path(p);
        assert_eq!(public("shop::store::Store").as_deref(), Some("shop::Store"));
        assert_eq!(
            public("shop::store::Store::len").as_deref(),
            Some("shop::Store::len")
        );
        assert_eq!(
            public("shop::store::open").as_deref(),
            Some("shop::open_store")
        );
        assert_eq!(public("shop::util::pad").as_deref(), Some("shop::pad"));
        // Through two re-exports: `deep` re-exports `inner`'s items, the root re-exports it.
        assert_eq!(
            public("shop::deep::inner::Inner").as_deref(),
            Some("shop::Inner")
        );
        assert_eq!(public("shop::store::hidden"), None);
        assert!(api.public_type("shop::store::Store").is_some());
    }

    #[test]
    fn manifest_keys_are_read_from_their_sections() {
        let info = parse_manifest(
            "[package]\nname = \"my-crate\" # comment\nversion = \"0.1.0\"\n\n[lib]\nname = 'mine'\npath = \"src/root.rs\"\n[dependencies]\nname = \"x\"\n",
        );
        assert_eq!(info.package_name.as_deref(), Some("my-crate"));
        assert_eq!(info.lib_name.as_deref(), Some("mine"));
        assert_eq!(info.lib_path.as_deref(), Some("src/root.rs"));
    }

    #[test]
    fn modules_are_followed_through_files_and_inline_blocks() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(
            dir,
            "Cargo.toml",
            "[package]\nname = \"my-lib\"\nversion = \"0.1.0\"\n",
        );
        write(
            dir,
            "src/lib.rs",
            "pub mod a; mod hidden; pub mod inline { pub fn f(x: u8) -> u8 { x } pub(crate) fn g() {} }\n\
             #[path = \"elsewhere.rs\"] pub mod moved;\n#[cfg(test)] mod tests { pub fn t() {} }\n\
             pub fn root<'a>(s: &'a str) -> &'a str { s }\n",
        );
        write(dir, "src/a.rs", "#[path = \"gen/made.rs\"] pub mod made; pub mod b; pub type Id = u32; pub type Name<'a> = &'a str; pub fn lookup(id: Id, n: Name) -> Id { id } pub struct P; impl P { pub fn new() -> P { P } pub fn get(&self) -> i32 { 1 } fn private() {} }\n");
        write(dir, "src/a/b/mod.rs", "pub async fn later() {} pub fn id<T>(t: T) -> T { t } pub fn make<T: Default>() -> T { T::default() }\n");
        write(dir, "src/hidden.rs", "pub fn h() {}\n");
        write(dir, "src/elsewhere.rs", "pub fn m() {}\n");
        write(dir, "src/gen/made.rs", "pub fn generated() {}\n");

        let api = CrateApi::load(dir).unwrap();
        assert_eq!(api.crate_name, "my_lib");
        let key = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let root = api.module(&[]).unwrap();
        assert!(root.reachable);
        assert_eq!(
            root.functions["root"].ret,
            DeclType::Ref {
                mutable: false,
                inner: Box::new(DeclType::Str)
            }
        );
        assert!(!api.modules.contains_key(&key(&["tests"])));
        assert!(!api.module(&key(&["hidden"])).unwrap().reachable);
        // A `#[path]` in a non-`mod.rs` file is relative to that file's directory.
        assert!(api.module(&key(&["a", "made"])).unwrap().functions["generated"].public);
        assert!(api.files.contains(&canonical(&dir.join("src/gen/made.rs"))));
        let inline = api.module(&key(&["inline"])).unwrap();
        assert!(inline.functions["f"].public && !inline.functions["g"].public);
        let a = api.module(&key(&["a"])).unwrap();
        let p = &a.types["P"];
        assert!(p.public && !p.generic);
        assert!(!p.functions["new"].has_receiver && p.functions["get"].has_receiver);
        assert!(!p.functions["private"].public);
        let lookup = &a.functions["lookup"];
        assert_eq!(lookup.ret, DeclType::Prim(crate::read::types::Prim::U32));
        assert_eq!(
            lookup.params[1].ty,
            DeclType::Ref {
                mutable: false,
                inner: Box::new(DeclType::Str)
            }
        );
        let b = api.module(&key(&["a", "b"])).unwrap();
        assert_eq!(b.functions["later"].blocker, Some("async"));
        assert_eq!(b.functions["id"].blocker, None);
        assert_eq!(b.functions["make"].blocker, None);
        assert_eq!(b.functions["make"].uninferable_generics, 1);
        assert_eq!(b.functions["id"].uninferable_generics, 0);
        assert!(api
            .module(&key(&["moved"]))
            .unwrap()
            .functions
            .contains_key("m"));
        assert!(api.contains_file(&dir.join("src/a/b/mod.rs")));
        assert!(!api.contains_file(&dir.join("src/main.rs")));
        assert_eq!(
            find_package_dir(&dir.join("src/a/b/mod.rs")).as_deref(),
            Some(dir)
        );
    }

    #[test]
    fn a_type_only_impls_show_is_not_declared_but_nameable_where_reachable() {
        use crate::read::types::TypeFacts;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, "Cargo.toml", "[package]\nname = \"flags\"\n");
        // `bitflags!` defines `Options`; syn sees only the macro call and the impl.
        write(
            dir,
            "src/lib.rs",
            "macro_rules! make { ($n:ident) => { pub struct $n(pub u32); } }\nmake!(Options);\nimpl Options { pub fn bits(&self) -> u32 { self.0 } }\nstruct Hidden;\nmod inner { pub struct Deep; }\n",
        );
        let api = CrateApi::load(dir).unwrap();
        assert!(api.declared_type("flags::Options").is_none());
        assert!(api.unseen_type_nameable("flags::Options"));
        assert!(api.declared_type("flags::Hidden").is_some());
        assert!(!api.unseen_type_nameable("flags::Hidden"));
        // In a private module, a macro-made type would not be reachable either.
        assert!(!api.unseen_type_nameable("flags::inner::Made"));
        assert!(!api.unseen_type_nameable("other::Options"));
    }

    #[test]
    fn a_crate_without_a_library_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "Cargo.toml", "[package]\nname = \"bin-only\"\n");
        write(tmp.path(), "src/main.rs", "fn main() {}\n");
        let err = CrateApi::load(tmp.path()).unwrap_err();
        assert!(matches!(err, GenerateError::NoLibrary { .. }), "{err}");
    }
}
