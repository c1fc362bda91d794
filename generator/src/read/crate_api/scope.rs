//! The names a module of the crate brings into scope (`use`, its items), to turn the paths its
//! signatures write into full paths.

use std::collections::{BTreeMap, BTreeSet};

use syn::visit_mut::VisitMut;

/// Names a module's items can use without a path, and how a test file must write them.
pub(crate) struct Scope {
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
    pub(crate) fn new(crate_name: &str, path: &[String], items: &[syn::Item]) -> Scope {
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

    pub(crate) fn add_use(&mut self, tree: &syn::UseTree, prefix: Vec<String>) {
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
    pub(crate) fn absolute(&self, segments: &[String]) -> Option<String> {
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
pub(crate) struct Qualify<'a>(pub(crate) &'a Scope);

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
