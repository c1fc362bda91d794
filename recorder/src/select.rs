//! Which functions to trace: `--filter` / `--exclude` globs on demangled paths, defaulting to
//! the program's own code (not the standard library, not dependencies, not `Debug`/`Display`
//! formatting impls).

use crate::dwarf::FunctionEntry;

/// What the user asked to trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Globs (`*` any run of characters, `?` one); empty means "the program's own code".
    pub filters: Vec<String>,
    pub excludes: Vec<String>,
    /// Also record calls of the program's own functions up to this many levels out from a call
    /// of a filtered function (1: what the filtered functions call directly).
    pub depth: u32,
}

impl Selection {
    /// True when `f` should get a breakpoint: it matches, or it may be called within `depth`.
    pub fn selects(&self, f: &FunctionEntry) -> bool {
        let reachable = self.depth > 0 && self.is_own(f);
        (self.matches(f) || reachable) && !self.excluded(f)
    }

    /// True when every call of `f` is recorded (not only those within `depth` of one).
    pub fn matches(&self, f: &FunctionEntry) -> bool {
        let included = if self.filters.is_empty() {
            self.is_own(f)
        } else {
            self.filters.iter().any(|g| matches_function(g, f))
        };
        included && !self.excluded(f)
    }

    fn is_own(&self, f: &FunctionEntry) -> bool {
        f.own_code && !is_formatting_impl(&f.path)
    }

    fn excluded(&self, f: &FunctionEntry) -> bool {
        self.excludes.iter().any(|g| matches_function(g, f))
    }
}

/// A glob matches a function by its full path (`expr::lexer::*`) or, for globs without `::`,
/// by its bare name (`precedence`).
fn matches_function(glob: &str, f: &FunctionEntry) -> bool {
    carve_storage::matches_function(glob, &f.path, &f.name)
}

fn is_formatting_impl(path: &str) -> bool {
    path.starts_with('<') && path.contains(" as core::fmt::")
}
