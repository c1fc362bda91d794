//! Reading a crate's source with syn: the module tree from the library root, through files and
//! inline modules, and every public item a test can reach (`pub use` included).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::ext::IdentExt;

use crate::error::GenerateError;
use crate::read::crate_api::macros::{self, MacroRules};
use crate::read::crate_api::manifest::parse_manifest;
use crate::read::crate_api::scope::Scope;
use crate::read::crate_api::signatures::{
    derives, fn_api, has_const_params, trait_api, trait_bounds, type_params,
};
use crate::read::crate_api::{
    canonical, ConstApi, CrateApi, FieldApi, ModuleApi, Reexport, TypeApi,
};
use crate::read::types::DeclType;

/// Where a module's items live and where its `mod x;` children are looked up.
pub(crate) struct ModCtx {
    path: Vec<String>,
    file: PathBuf,
    child_dir: PathBuf,
    reachable: bool,
    public: bool,
    /// Inside an inline `mod x { }` block, where `#[path]` is relative to `child_dir`.
    inline: bool,
}

pub(crate) fn substitute_alias(ty: &mut DeclType, aliases: &BTreeMap<String, Vec<DeclType>>) {
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

/// The type parameters a definition declares, consts aside, into those of the type's other
/// definitions (one per `cfg`: indexmap's `IndexMap<K, V, S = RandomState>` with `std`,
/// `IndexMap<K, V, S>` without): a parameter some definition defaults is defaulted; and how
/// many lifetime parameters it has.
fn merge_type_params(t: &mut super::TypeApi, generics: &syn::Generics) {
    t.lifetimes = t.lifetimes.max(generics.lifetimes().count());
    let params = &mut t.type_params;
    for (i, p) in generics.type_params().enumerate() {
        let defaulted = p.default.is_some();
        match params.get_mut(i) {
            Some(known) => known.defaulted |= defaulted,
            None => params.push(super::TypeParamApi {
                name: p.ident.unraw().to_string(),
                defaulted,
            }),
        }
    }
}

fn declare_enum(module: &mut ModuleApi, e: &syn::ItemEnum) {
    declare_type(module, &e.ident, &e.vis);
    if let Some(t) = module.types.get_mut(&e.ident.unraw().to_string()) {
        t.values = values(e);
        merge_type_params(t, &e.generics);
        t.derives.extend(derives(&e.attrs));
        t.traits.extend(t.derives.iter().cloned());
    }
}

/// The variants of `e` a caller can write as they are: no fields, not test-only, hidden or
/// `#[non_exhaustive]` (outside its crate such a variant cannot be made).
fn values(e: &syn::ItemEnum) -> Vec<String> {
    let marked = |v: &syn::Variant, name: &str| {
        v.attrs.iter().any(|a| {
            a.path().is_ident(name)
                || (a.path().is_ident("doc")
                    && quote::ToTokens::to_token_stream(a)
                        .to_string()
                        .contains("hidden"))
        })
    };
    e.variants
        .iter()
        .filter(|v| matches!(v.fields, syn::Fields::Unit))
        .filter(|v| !is_cfg_test(&v.attrs) && !marked(v, "non_exhaustive"))
        .map(|v| v.ident.unraw().to_string())
        .collect()
}

pub(crate) fn declare_type(module: &mut ModuleApi, ident: &syn::Ident, vis: &syn::Visibility) {
    let name = ident.unraw().to_string();
    let entry = module.types.entry(name.clone()).or_insert_with(|| TypeApi {
        name,
        ..TypeApi::default()
    });
    entry.public = matches!(vis, syn::Visibility::Public(_));
    entry.declared = true;
}

pub(crate) fn add_inherent_impl(module: &mut ModuleApi, imp: &syn::ItemImpl, scope: &Scope) {
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
        match item {
            syn::ImplItem::Fn(f) if !is_cfg_test(&f.attrs) => {
                let api = fn_api(&f.vis, &f.sig, &impl_generics, &impl_bounds, scope);
                entry.functions.insert(api.name.clone(), api);
            }
            // `pub const ZERO: Self`: a value of the type a caller writes as it is.
            syn::ImplItem::Const(c) if matches!(c.vis, syn::Visibility::Public(_)) => {
                let own = |t: &syn::Type| {
                    matches!(t, syn::Type::Path(p) if p.path.is_ident("Self")
                        || p.path.is_ident(&entry.name))
                };
                if own(&c.ty) && !is_cfg_test(&c.attrs) {
                    entry.values.push(c.ident.unraw().to_string());
                }
            }
            _ => {}
        }
    }
}

/// The types a `bitflags!` invocation declares (`bitflags! { pub struct Options: u32 { const
/// ENABLE_TABLES = 1 << 1; … } }`), each a public struct with the traits it derives, whose
/// flags, `empty()` and `all()` are values a caller writes as they are.
pub(crate) fn declare_bitflags(module: &mut ModuleApi, mac: &syn::Macro) {
    let Some(last) = mac.path.segments.last() else {
        return;
    };
    if last.ident != "bitflags" {
        return;
    }
    // `pub struct Options: u32 { … }` is no Rust item: read it piece by piece.
    declare_bitflags_tokens(module, mac.tokens.clone());
}

/// Reads `#[attr]* vis struct Name: Int { (#[attr]* const FLAG = expr;)* }`, repeated.
fn declare_bitflags_tokens(module: &mut ModuleApi, tokens: proc_macro2::TokenStream) {
    use proc_macro2::TokenTree;
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut attrs = proc_macro2::TokenStream::new();
    let mut public = false;
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                attrs.extend(trees[i..(i + 2).min(trees.len())].iter().cloned());
                i += 2;
                continue;
            }
            // `pub`, not `pub(crate)`.
            TokenTree::Ident(id) if id == "pub" => {
                public = !matches!(trees.get(i + 1), Some(TokenTree::Group(g))
                    if g.delimiter() == proc_macro2::Delimiter::Parenthesis);
            }
            TokenTree::Ident(id) if id == "struct" => {
                let (Some(TokenTree::Ident(name)), Some(body)) = (
                    trees.get(i + 1),
                    trees[i..].iter().find_map(|t| match t {
                        TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                            Some(g.stream())
                        }
                        _ => None,
                    }),
                ) else {
                    return;
                };
                let vis = if public {
                    syn::parse_quote!(pub)
                } else {
                    syn::Visibility::Inherited
                };
                declare_type(module, name, &vis);
                let derived = syn::parse2::<syn::DeriveInput>(quote::quote! {
                    #attrs struct X;
                })
                .map(|d| derives(&d.attrs))
                .unwrap_or_default();
                if let Some(t) = module.types.get_mut(&name.unraw().to_string()) {
                    t.is_struct = true;
                    // `pub struct Options(<Options as PublicFlags>::Internal)`: one private
                    // field, so the type is built only through its values and functions.
                    t.fields = vec![FieldApi {
                        name: "0".to_string(),
                        public: false,
                        ty: "_".to_string(),
                    }];
                    t.derives.extend(derived);
                    t.traits.extend(t.derives.iter().cloned());
                    t.values = flags(body);
                    t.values
                        .extend(["empty()".to_string(), "all()".to_string()]);
                }
                // Past this struct's body.
                while i < trees.len()
                    && !matches!(&trees[i], TokenTree::Group(g)
                    if g.delimiter() == proc_macro2::Delimiter::Brace)
                {
                    i += 1;
                }
                attrs = proc_macro2::TokenStream::new();
                public = false;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The flags of a `bitflags!` struct's body: each `const NAME = …;` not test-only or hidden.
fn flags(body: proc_macro2::TokenStream) -> Vec<String> {
    use proc_macro2::TokenTree;
    let trees: Vec<TokenTree> = body.into_iter().collect();
    let mut out = Vec::new();
    let mut hidden = false;
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Bracket => {
                let text = g.stream().to_string().replace(' ', "");
                hidden |= text == "doc(hidden)" || text.starts_with("cfg");
            }
            TokenTree::Ident(id) if id == "const" => {
                if let Some(TokenTree::Ident(name)) = trees.get(i + 1) {
                    if !hidden && name != "_" {
                        out.push(name.to_string());
                    }
                }
                hidden = false;
            }
            _ => {}
        }
    }
    out
}

/// Notes `impl Trait for Type` on a type of this module.
pub(crate) fn add_trait_impl(module: &mut ModuleApi, imp: &syn::ItemImpl) {
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
    if tr.ident == "Display" && reads_formatter_options(imp) {
        entry.display_reads_options = true;
    }
}

/// Whether `imp` calls one of `Formatter`'s option getters (by name: a field of that name
/// counts too, which costs a caller's format specs tried for nothing).
fn reads_formatter_options(imp: &syn::ItemImpl) -> bool {
    const OPTIONS: [&str; 8] = [
        "width",
        "precision",
        "align",
        "fill",
        "alternate",
        "sign_plus",
        "sign_minus",
        "sign_aware_zero_pad",
    ];
    fn any_ident(tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => OPTIONS.iter().any(|o| i == o),
            proc_macro2::TokenTree::Group(g) => any_ident(g.stream()),
            _ => false,
        })
    }
    any_ident(quote::ToTokens::to_token_stream(imp))
}

/// The paths a `use` tree names: (segments, the name it is used under; `None` for a glob).
pub(crate) fn flatten_use(
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
pub(crate) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// The string of a `#[path = "..."]` attribute.
pub(crate) fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
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

impl CrateApi {
    /// [`CrateApi::load`], anchored to where the recorded `functions`' sources were
    /// (`read/moved.rs`: a trace moved with its crate), so that [`CrateApi::local_file`] gives
    /// where a recorded source file is now; refuses a crate that holds none of them.
    pub fn load_recorded(
        dir: &Path,
        functions: &[carve_storage::FunctionInfo],
    ) -> Result<CrateApi, GenerateError> {
        let mut api = CrateApi::load(dir)?;
        crate::read::moved::anchor(&mut api, functions)?;
        Ok(api)
    }

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
            recorded_root: None,
            stand_ins: Default::default(),
            serde_derive: info.serde_derive.clone(),
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
        api.walk(&file.items, ctx, 0, &[]);
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
    /// A `type Name = …;` alias with lifetimes at most: what it stands for.
    fn declare_alias(&mut self, t: &syn::ItemType) {
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

    fn walk(&mut self, items: &[syn::Item], ctx: ModCtx, depth: usize, inherited: &[MacroRules]) {
        // The crate's macros in scope here make items too (`macros.rs`).
        let mut in_scope = inherited.to_vec();
        in_scope.extend(macros::defined(items));
        let expanded;
        let items = if in_scope.is_empty() {
            items
        } else {
            expanded = macros::expand_items(items, &in_scope);
            expanded.as_slice()
        };
        let mut module = ModuleApi {
            path: ctx.path.clone(),
            file: ctx.file.clone(),
            reachable: ctx.reachable,
            public: ctx.public,
            functions: BTreeMap::new(),
            types: BTreeMap::new(),
            traits: BTreeMap::new(),
            consts: BTreeMap::new(),
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
                                ty: quote::ToTokens::to_token_stream(&f.ty).to_string(),
                            })
                            .collect();
                        t.derives.extend(derives(&s.attrs));
                        t.traits.extend(t.derives.iter().cloned());
                        merge_type_params(t, &s.generics);
                    }
                }
                syn::Item::Enum(e) => declare_enum(&mut module, e),
                syn::Item::Trait(t) if !is_cfg_test(&t.attrs) => {
                    let api = trait_api(t, &scope);
                    module.traits.insert(api.name.clone(), api);
                }
                syn::Item::Impl(imp) if imp.trait_.is_some() && !is_cfg_test(&imp.attrs) => {
                    add_trait_impl(&mut module, imp);
                }
                syn::Item::Union(u) => declare_type(&mut module, &u.ident, &u.vis),
                syn::Item::Macro(m) => declare_bitflags(&mut module, &m.mac),
                syn::Item::Type(t) => {
                    declare_type(&mut module, &t.ident, &t.vis);
                    self.declare_alias(t);
                }
                syn::Item::Impl(imp) if imp.trait_.is_none() && !is_cfg_test(&imp.attrs) => {
                    add_inherent_impl(&mut module, imp, &scope);
                }
                syn::Item::Mod(m) if !is_cfg_test(&m.attrs) => children.push(m),
                syn::Item::Const(c) if matches!(c.vis, syn::Visibility::Public(_)) => {
                    module
                        .consts
                        .insert(c.ident.unraw().to_string(), const_api(c));
                }
                _ => {}
            }
        }
        self.modules.insert(ctx.path.clone(), module);
        // Guard against `#[path]` cycles.
        if depth > 64 {
            return;
        }
        for m in children {
            self.walk_child(m, &ctx, depth, &in_scope);
        }
    }
    fn walk_child(
        &mut self,
        m: &syn::ItemMod,
        parent: &ModCtx,
        depth: usize,
        macros: &[MacroRules],
    ) {
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
            self.walk(items, ctx, depth + 1, macros);
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
        self.walk(&parsed.items, ctx, depth + 1, macros);
    }
}

/// A `pub const` as [`ConstApi`] keeps it.
fn const_api(c: &syn::ItemConst) -> ConstApi {
    let type_name = match c.ty.as_ref() {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.unraw().to_string())
            .unwrap_or_default(),
        _ => String::new(),
    };
    ConstApi {
        ident: c.ident.to_string(),
        type_name,
        expr: quote::ToTokens::to_token_stream(&*c.expr).to_string(),
        probed: None,
    }
}
