//! How a call reads in a carved file: the spelling rules of `spell/`, one file each, tried in
//! the order of [`RULES`] on every expression of a rendered file, innermost first. The plan
//! writes each call in the one form that names everything it means
//! (`<semver::Version as std::str::FromStr>::from_str("1.2.3")`); a rule gives the equivalent
//! form a person writes (`"1.2.3".parse::<semver::Version>()`), wherever arrange, act or a
//! table put the call. A rule changes spelling only, never what is called: the first that
//! answers replaces the expression, `None` passes it on.
//!
//! Applied on the syntax tree render formats (after the public paths), so the paths a rule
//! keeps are the ones the file writes; prettyplease puts in the parentheses a new receiver
//! needs. Macro arguments are tokens, not expressions: no rule reaches inside them (carve
//! writes no call there that a rule spells).

pub(crate) mod collect;
pub(crate) mod default;
pub(crate) mod from;
pub(crate) mod parse;
pub(crate) mod qualified;

use syn::visit_mut::VisitMut;

/// A spelling rule: the expression a person writes for `expr`, or `None` when the rule does
/// not apply to it.
pub(crate) type Rule = fn(&syn::Expr) -> Option<syn::Expr>;

/// The spelling rules in the order they are tried, by name.
pub(crate) const RULES: &[(&str, Rule)] = &[
    ("parse", parse::rule),
    ("default", default::rule),
    ("from", from::rule),
    ("collect", collect::rule),
];

/// The first rule that spells `expr` another way, by name, with what it writes.
pub(crate) fn decide(expr: &syn::Expr) -> Option<(&'static str, syn::Expr)> {
    RULES
        .iter()
        .find_map(|(name, rule)| rule(expr).map(|spelled| (*name, spelled)))
}

/// Every expression of `file` as the rules spell it.
pub(crate) fn apply(file: &mut syn::File) {
    Speller.visit_file_mut(file);
}

struct Speller;

impl VisitMut for Speller {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        // Inner expressions first: an argument is spelled before the call that takes it.
        syn::visit_mut::visit_expr_mut(self, expr);
        if let Some((_, spelled)) = decide(expr) {
            *expr = spelled;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelled(source: &str) -> String {
        let mut file = syn::parse_file(source).unwrap();
        apply(&mut file);
        prettyplease::unparse(&file)
    }

    #[test]
    fn every_expression_of_a_file_is_spelled_wherever_it_stands() {
        let out = spelled(
            r#"
            fn t() {
                let v = <m::Version as std::str::FromStr>::from_str("1.2.3").unwrap();
                let Some(p) = m::pre(<m::Version as std::str::FromStr>::from_str("1.0.0-rc").unwrap()) else { panic!() };
                for (i, case) in cases.iter().enumerate() {
                    let result = <m::Version as std::str::FromStr>::from_str(case.0);
                }
            }
            "#,
        );
        assert!(
            out.contains(r#"let v = "1.2.3".parse::<m::Version>().unwrap();"#),
            "{out}"
        );
        assert!(
            out.contains(r#"m::pre("1.0.0-rc".parse::<m::Version>().unwrap())"#),
            "{out}"
        );
        assert!(
            out.contains("let result = case.0.parse::<m::Version>();"),
            "{out}"
        );
        assert!(!out.contains("from_str"), "{out}");
    }

    #[test]
    fn an_expression_no_rule_spells_is_left_as_it_is() {
        let source = "fn t() {\n    let a = <m::Size as std::convert::From<u64>>::from(5u64);\n}\n";
        assert_eq!(spelled(source), source);
        let expr: syn::Expr = syn::parse_str("m::Size::new(5u64)").unwrap();
        assert!(decide(&expr).is_none());
    }
}
