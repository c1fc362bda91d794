//! Why a value could not be written as a literal, and the skip reason that gives.

use carve_storage::Value;

use crate::read::types::DeclType;
use crate::reasons::{NOT_RUST_SYNTAX, UNDECODED, UNSUPPORTED_TYPE};
use crate::syntax::Refused;

/// Why a value could not be written as a literal of its declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiteralError {
    /// The value is not an exact scalar or string (a struct, a truncated string, unreadable...).
    Undecoded,
    /// The declared type takes no literal carve can write, or the value does not fit it.
    UnsupportedType(String),
    /// A name in the trace that is not Rust syntax where the literal needs it (a damaged or
    /// hostile trace): never written.
    Refused(Refused),
}

impl From<Refused> for LiteralError {
    fn from(r: Refused) -> LiteralError {
        LiteralError::Refused(r)
    }
}

pub(crate) fn mismatch(value: &Value, decl: &DeclType) -> LiteralError {
    LiteralError::UnsupportedType(format!(
        "recorded {} for declared {}",
        value.type_name(),
        describe(decl)
    ))
}

pub(crate) fn describe(decl: &DeclType) -> String {
    match decl {
        DeclType::Unit => "()".to_string(),
        DeclType::Prim(p) => p.name().to_string(),
        DeclType::Str => "str".to_string(),
        DeclType::String => "String".to_string(),
        DeclType::Ref { mutable, inner } => {
            format!(
                "{}{}",
                if *mutable { "&mut " } else { "&" },
                describe(inner)
            )
        }
        DeclType::Generic(name) => name.clone(),
        DeclType::ImplTrait => "impl Trait".to_string(),
        DeclType::Other(written) => written.clone(),
    }
}

/// The skip reason a literal that cannot be written gives.
pub(crate) fn reason(e: LiteralError) -> &'static str {
    match e {
        LiteralError::Undecoded => UNDECODED,
        LiteralError::UnsupportedType(_) => UNSUPPORTED_TYPE,
        LiteralError::Refused(_) => NOT_RUST_SYNTAX,
    }
}
