//! Literals of the primitive types: `bool`, `char`, integers with the declared suffix (the extremes
//! as `MIN`/`MAX`), floats bit-exact.

use carve_storage::Value;

use crate::arrange::literal::error::{mismatch, LiteralError};
use crate::read::types::{DeclType, Prim};
use crate::syntax::char_lit;

pub(crate) fn render_prim(value: &Value, prim: Prim) -> Result<String, LiteralError> {
    match (value, prim) {
        (Value::Bool { value }, Prim::Bool) => Ok(value.to_string()),
        (Value::Char { value }, Prim::Char) => Ok(char_lit(*value)),
        (Value::Int { value: v, .. }, _) => render_int(*v < 0, v.unsigned_abs(), prim, value),
        (Value::Uint { value: v, .. }, _) => render_int(false, *v, prim, value),
        (Value::Float { ty, bits }, Prim::F64) if is_f64_name(ty) => {
            Ok(f64_literal(f64::from_bits(*bits)))
        }
        (Value::Float { ty, bits }, Prim::F32) if is_f32_name(ty) => {
            // f32 values keep their bits in the low 32 bits.
            let low = u32::try_from(*bits & 0xffff_ffff).unwrap_or(0);
            Ok(f32_literal(f32::from_bits(low)))
        }
        _ => Err(mismatch(value, &DeclType::Prim(prim))),
    }
}

pub(crate) fn is_f64_name(ty: &str) -> bool {
    matches!(ty, "f64" | "double")
}

pub(crate) fn is_f32_name(ty: &str) -> bool {
    matches!(ty, "f32" | "float")
}

pub(crate) fn render_int(
    negative: bool,
    magnitude: u128,
    prim: Prim,
    value: &Value,
) -> Result<String, LiteralError> {
    let Some((min, max)) = prim.int_range() else {
        return Err(mismatch(value, &DeclType::Prim(prim)));
    };
    let name = prim.name();
    if negative {
        let min_magnitude = min.unsigned_abs();
        if min == 0 || magnitude > min_magnitude {
            return Err(mismatch(value, &DeclType::Prim(prim)));
        }
        if magnitude == min_magnitude {
            return Ok(format!("{name}::MIN"));
        }
        Ok(format!("-{magnitude}{name}"))
    } else {
        if magnitude > max {
            return Err(mismatch(value, &DeclType::Prim(prim)));
        }
        if magnitude == max && max > u128::from(u8::MAX) {
            return Ok(format!("{name}::MAX"));
        }
        Ok(format!("{magnitude}{name}"))
    }
}

/// A bit-exact `f64` expression: `2.5f64`, `f64::INFINITY`, `f64::from_bits(0x...)`. A NaN is
/// `f64::NAN` only with that constant's bits: another NaN (a sign, a payload) is written from its
/// bits, as code that formats or hashes floats tells NaNs apart.
pub fn f64_literal(x: f64) -> String {
    if x.is_nan() {
        if x.to_bits() == f64::NAN.to_bits() {
            return "f64::NAN".to_string();
        }
        return format!("f64::from_bits({:#018x})", x.to_bits());
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "f64::INFINITY"
        } else {
            "f64::NEG_INFINITY"
        }
        .to_string();
    }
    let repr = format!("{x:?}");
    match repr.parse::<f64>() {
        Ok(back) if back.to_bits() == x.to_bits() => format!("{repr}f64"),
        _ => format!("f64::from_bits({:#018x})", x.to_bits()),
    }
}

/// A bit-exact `f32` expression: `0.1f32`, `f32::NEG_INFINITY`, `f32::from_bits(0x...)`; a NaN
/// as [`f64_literal`] writes one.
pub fn f32_literal(x: f32) -> String {
    if x.is_nan() {
        if x.to_bits() == f32::NAN.to_bits() {
            return "f32::NAN".to_string();
        }
        return format!("f32::from_bits({:#010x})", x.to_bits());
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "f32::INFINITY"
        } else {
            "f32::NEG_INFINITY"
        }
        .to_string();
    }
    let repr = format!("{x:?}");
    match repr.parse::<f32>() {
        Ok(back) if back.to_bits() == x.to_bits() => format!("{repr}f32"),
        _ => format!("f32::from_bits({:#010x})", x.to_bits()),
    }
}

/// True for a recorded NaN (directly or behind a reference).
pub fn is_nan(value: &Value) -> bool {
    match value {
        Value::Float { ty, bits } if is_f32_name(ty) => {
            f32::from_bits(u32::try_from(*bits & 0xffff_ffff).unwrap_or(0)).is_nan()
        }
        Value::Float { bits, .. } => f64::from_bits(*bits).is_nan(),
        Value::Ref { target, .. } => is_nan(target),
        _ => false,
    }
}
