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
    glob_match(glob, &f.path) || (!glob.contains("::") && glob_match(glob, &f.name))
}

fn is_formatting_impl(path: &str) -> bool {
    path.starts_with('<') && path.contains(" as core::fmt::")
}

/// Glob matching with `*` and `?` over characters (no path separators are special).
pub fn glob_match(glob: &str, text: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut gi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == t[ti]) {
            gi += 1;
            ti += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ti;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while gi < g.len() && g[gi] == '*' {
        gi += 1;
    }
    gi == g.len()
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn a_star_matches_any_run_of_characters_including_path_separators() {
        assert!(glob_match("expr::*", "expr::lexer::is_operator"));
        assert!(glob_match("*::precedence", "expr::parser::precedence"));
        assert!(!glob_match("expr::*", "core::fmt::write"));
    }

    #[test]
    fn a_glob_without_wildcards_matches_only_itself() {
        assert!(glob_match("add", "add"));
        assert!(!glob_match("add", "add_one"));
    }

    #[test]
    fn a_question_mark_matches_one_character() {
        assert!(glob_match("f?b", "fib"));
        assert!(!glob_match("f?b", "fb"));
    }
}
