//! Values a function can be forced to return without running its body (Descartes' *extreme
//! transformations*, seed 002): which ones fit a return type, and their exact bytes, built from
//! the type's DWARF layout. Only values that need no allocation and no drop glue are built: an
//! empty `String` or `Vec` owns no memory, so the program may drop it as if it were its own, and
//! a variant of a fieldless enum (`Ordering::Less`) is its discriminant alone.
//! Pure: the tracer puts the bytes where the ABI returns them ([`crate::abi::place_return`]).

use std::fmt;

use crate::abi;
use crate::types::{BaseKind, TypeId, TypeKind, TypeTable};

/// A value to return instead of running a function's body.
#[derive(Debug, Clone, PartialEq)]
pub enum ForcedValue {
    /// Return at once (a function returning `()`).
    Unit,
    Bool(bool),
    /// Any integer type (`--force-return GLOB=N`).
    Int(i64),
    Float(f64),
    /// `None` of an `Option`.
    None,
    /// An empty `String`, `Vec`, `&str` or slice.
    Empty,
    Some(Box<ForcedValue>),
    Ok(Box<ForcedValue>),
    /// A variant of a fieldless enum (`Ordering::Less`), by name.
    Variant(String),
}

impl fmt::Display for ForcedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForcedValue::Unit => write!(f, "()"),
            ForcedValue::Bool(b) => write!(f, "{b}"),
            ForcedValue::Int(i) => write!(f, "{i}"),
            ForcedValue::Float(x) => write!(f, "{x:?}"),
            ForcedValue::None => write!(f, "None"),
            ForcedValue::Empty => write!(f, "empty"),
            ForcedValue::Some(v) => write!(f, "Some({v})"),
            ForcedValue::Ok(v) => write!(f, "Ok({v})"),
            ForcedValue::Variant(name) => write!(f, "{name}"),
        }
    }
}

/// One extreme value for a return type, with how Rust source writes it for that type
/// (`vec![]`, `String::new()`, `""`, `Ok(())`...).
#[derive(Debug, Clone, PartialEq)]
pub struct Extreme {
    pub value: ForcedValue,
    pub source: String,
}

/// The extreme values of a function returning `ret` (`None`: returns `()`), or why there are
/// none carve can build.
pub fn extremes(types: &TypeTable, ret: Option<TypeId>) -> Result<Vec<Extreme>, String> {
    let Some(ret) = ret else {
        return Ok(vec![Extreme {
            value: ForcedValue::Unit,
            source: "()".into(),
        }]);
    };
    extremes_of(types, ret, 0)
}

fn extremes_of(types: &TypeTable, ty: TypeId, depth: u32) -> Result<Vec<Extreme>, String> {
    let t = types.get(ty).ok_or("an unknown return type")?;
    let cannot = || {
        Err(format!(
            "no value of {} can be built without its allocator or drop glue (carve forces only \
             (), bool, numbers, fieldless enums, empty strings, vectors and slices, and Option \
             and Result of those)",
            t.name
        ))
    };
    if depth > 2 {
        return cannot();
    }
    let one = |value: ForcedValue, source: String| Extreme { value, source };
    Ok(match &t.kind {
        TypeKind::Unit => vec![one(ForcedValue::Unit, "()".into())],
        TypeKind::Base(BaseKind::Bool) => vec![
            one(ForcedValue::Bool(true), "true".into()),
            one(ForcedValue::Bool(false), "false".into()),
        ],
        TypeKind::Base(BaseKind::Signed | BaseKind::Unsigned) if t.size <= 16 => vec![
            one(ForcedValue::Int(0), "0".into()),
            one(ForcedValue::Int(1), "1".into()),
        ],
        TypeKind::Base(BaseKind::Float) if t.size == 4 || t.size == 8 => vec![
            one(ForcedValue::Float(0.0), "0.0".into()),
            one(ForcedValue::Float(1.0), "1.0".into()),
        ],
        TypeKind::Struct { .. } if empty_source(&t.name).is_some() => {
            let source = empty_source(&t.name).unwrap_or_default();
            vec![one(ForcedValue::Empty, source)]
        }
        TypeKind::CEnum { enumerators, .. } if !enumerators.is_empty() => enumerators
            .iter()
            .map(|(name, _)| {
                one(
                    ForcedValue::Variant(name.clone()),
                    format!("{}::{name}", short_type_name(&t.name)),
                )
            })
            .collect(),
        TypeKind::Enum { variants, .. }
            if !variants.is_empty() && variants.iter().all(|v| fieldless(types, v)) =>
        {
            variants
                .iter()
                .map(|v| {
                    one(
                        ForcedValue::Variant(v.name.clone()),
                        format!("{}::{}", short_type_name(&t.name), v.name),
                    )
                })
                .collect()
        }
        TypeKind::Enum { .. } if t.name.starts_with("core::option::Option<") => {
            let mut all = vec![one(ForcedValue::None, "None".into())];
            // `Some` of each extreme of the payload, when it has any.
            if let Some(payload) = payload_of(types, ty, "Some") {
                if let Ok(inner) = extremes_of(types, payload, depth + 1) {
                    all.extend(inner.into_iter().map(|e| {
                        one(
                            ForcedValue::Some(Box::new(e.value)),
                            format!("Some({})", e.source),
                        )
                    }));
                }
            }
            all
        }
        TypeKind::Enum { .. } if t.name.starts_with("core::result::Result<") => {
            let payload = payload_of(types, ty, "Ok").ok_or("a Result without an Ok payload")?;
            extremes_of(types, payload, depth + 1)
                .map_err(|reason| format!("{reason} (the Ok value of {})", t.name))?
                .into_iter()
                .map(|e| {
                    one(
                        ForcedValue::Ok(Box::new(e.value)),
                        format!("Ok({})", e.source),
                    )
                })
                .collect()
        }
        _ => return cannot(),
    })
}

/// A variant with no field and a discriminant of its own (not the dataful variant of a niche).
fn fieldless(types: &TypeTable, v: &crate::types::Variant) -> bool {
    v.discr.is_some()
        && types.get(v.ty).is_some_and(
            |t| matches!(&t.kind, TypeKind::Struct { members, .. } if members.is_empty()),
        )
}

/// `core::cmp::Ordering` → `Ordering`: how source names a type it has imported.
fn short_type_name(name: &str) -> &str {
    let plain = name.split('<').next().unwrap_or(name);
    plain.rsplit("::").next().unwrap_or(plain)
}

/// How source writes an empty value of the type named `name`, for the types carve empties.
fn empty_source(name: &str) -> Option<String> {
    if name == "alloc::string::String" {
        Some("String::new()".into())
    } else if name.starts_with("alloc::vec::Vec<") {
        Some("vec![]".into())
    } else if name == "&str" || name == "&mut str" {
        Some("\"\"".into())
    } else if name.starts_with("&[") || name.starts_with("&mut [") {
        Some("&[]".into())
    } else {
        None
    }
}

/// The type of the only field of `variant` in the enum `ty` (`()` for a variant without one).
fn payload_of(types: &TypeTable, ty: TypeId, variant: &str) -> Option<TypeId> {
    let TypeKind::Enum { variants, .. } = &types.get(ty)?.kind else {
        return None;
    };
    let v = variants.iter().find(|v| v.name == variant)?;
    match &types.get(v.ty)?.kind {
        TypeKind::Struct { members, .. } => match members.as_slice() {
            [m] => Some(m.ty),
            _ => None,
        },
        _ => None,
    }
}

/// The bytes of `value` as a value of type `ty`; an error saying why it does not fit.
pub fn value_bytes(types: &TypeTable, ty: TypeId, value: &ForcedValue) -> Result<Vec<u8>, String> {
    let t = types.get(ty).ok_or("an unknown return type")?;
    let mut bytes = vec![0u8; t.size as usize];
    write_value(types, ty, value, &mut bytes, 0)?;
    Ok(bytes)
}

fn write_value(
    types: &TypeTable,
    ty: TypeId,
    value: &ForcedValue,
    out: &mut [u8],
    at: u64,
) -> Result<(), String> {
    let t = types.get(ty).ok_or("an unknown type")?;
    let size = t.size as usize;
    let at = at as usize;
    let slot = out
        .get_mut(at..at + size)
        .ok_or("a field outside its value")?;
    let mismatch = || Err(format!("{value} is not a value of {}", t.name));
    match (&t.kind, value) {
        (TypeKind::Unit, ForcedValue::Unit) => {}
        (_, ForcedValue::Unit) if size == 0 => {}
        (TypeKind::Base(BaseKind::Bool), ForcedValue::Bool(b)) => slot[0] = *b as u8,
        (TypeKind::Base(BaseKind::Signed | BaseKind::Unsigned), ForcedValue::Int(i))
            if size <= 16 =>
        {
            slot.copy_from_slice(&(*i as i128).to_le_bytes()[..size]);
        }
        (TypeKind::Base(BaseKind::Float), ForcedValue::Float(x)) if size == 8 => {
            slot.copy_from_slice(&x.to_le_bytes());
        }
        (TypeKind::Base(BaseKind::Float), ForcedValue::Float(x)) if size == 4 => {
            slot.copy_from_slice(&(*x as f32).to_le_bytes());
        }
        (TypeKind::Struct { .. }, ForcedValue::Empty) if empty_source(&t.name).is_some() => {
            // Every length and capacity zero; the one data pointer dangling, aligned for the
            // element type, as `NonNull::dangling()` makes it.
            slot.fill(0);
            let element = element_type(types, ty).ok_or_else(|| {
                format!("the element type of {} is not in the debug info", t.name)
            })?;
            let align = abi::align_of(types, element)
                .ok_or_else(|| format!("the alignment of {} is not known", types.name(element)))?;
            let pointers = pointer_offsets(types, ty, 0, 0);
            match pointers.as_slice() {
                [p] => slot[*p as usize..*p as usize + 8].copy_from_slice(&align.to_le_bytes()),
                _ => return Err(format!("{} does not hold exactly one pointer", t.name)),
            }
        }
        (TypeKind::CEnum { enumerators, .. }, ForcedValue::Variant(name)) => {
            let (_, discr) = enumerators
                .iter()
                .find(|(n, _)| n == name)
                .ok_or_else(|| format!("{} has no variant {name}", t.name))?;
            slot.copy_from_slice(&discr.to_le_bytes()[..size.min(16)]);
        }
        (TypeKind::Enum { tag, variants }, _) => {
            let (name, inner) = match value {
                ForcedValue::Variant(name) => (name.as_str(), None),
                ForcedValue::None => ("None", None),
                ForcedValue::Some(v) => ("Some", Some(&**v)),
                ForcedValue::Ok(v) => ("Ok", Some(&**v)),
                _ => return mismatch(),
            };
            let v = variants
                .iter()
                .find(|v| v.name == name)
                .ok_or_else(|| format!("{} has no variant {name}", t.name))?;
            if matches!(value, ForcedValue::Variant(_)) && !fieldless(types, v) {
                return Err(format!("{}::{name} has fields", t.name));
            }
            if let Some(inner) = inner {
                let payload = payload_of(types, ty, name)
                    .ok_or_else(|| format!("{}::{name} has more than one field", t.name))?;
                let TypeKind::Struct { members, .. } = &types.get(v.ty).ok_or("no variant")?.kind
                else {
                    return mismatch();
                };
                let offset = members.first().map_or(0, |m| m.offset);
                write_value(types, payload, inner, slot, v.offset + offset)?;
            }
            match (tag, v.discr) {
                (Some(tag), Some(discr)) => {
                    let tag_size = types.get(tag.ty).ok_or("no tag type")?.size as usize;
                    let start = tag.offset as usize;
                    let place = slot
                        .get_mut(start..start + tag_size)
                        .ok_or("a tag outside its value")?;
                    place.copy_from_slice(&discr.to_le_bytes()[..tag_size.min(16)]);
                }
                // The dataful variant of a niche layout: its payload is the value.
                (Some(_), None) => {}
                (None, _) => {}
            }
        }
        _ => return mismatch(),
    }
    Ok(())
}

/// The element type of a `String` (u8), `Vec<T>`, `&str` or `&[T]`.
fn element_type(types: &TypeTable, ty: TypeId) -> Option<TypeId> {
    let t = types.get(ty)?;
    let TypeKind::Struct { members, params } = &t.kind else {
        return None;
    };
    if t.name.starts_with("alloc::vec::Vec<") {
        return params.first().copied();
    }
    if t.name == "alloc::string::String" {
        return element_type(types, members.first()?.ty);
    }
    // `&str` and slices: {data_ptr: *const T, length}.
    let ptr = members.iter().find(|m| m.name == "data_ptr")?;
    match types.get(ptr.ty)?.kind {
        TypeKind::Pointer { pointee } => pointee,
        _ => None,
    }
}

/// Offsets of every pointer inside `ty` (structs followed; zero-sized parts have none).
fn pointer_offsets(types: &TypeTable, ty: TypeId, base: u64, depth: u32) -> Vec<u64> {
    let Some(t) = types.get(ty) else {
        return Vec::new();
    };
    if depth > 16 {
        return Vec::new();
    }
    match &t.kind {
        TypeKind::Pointer { .. } => vec![base],
        TypeKind::Struct { members, .. } => members
            .iter()
            .flat_map(|m| pointer_offsets(types, m.ty, base + m.offset, depth + 1))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{place_return, return_place, ReturnPlace, ReturnRegs};
    use crate::types::{Member, Type, Variant};

    fn push(t: &mut TypeTable, name: &str, size: u64, kind: TypeKind) -> TypeId {
        t.push(Type {
            name: name.into(),
            size,
            kind,
        })
    }

    fn strukt(members: Vec<(&str, u64, TypeId)>, params: Vec<TypeId>) -> TypeKind {
        TypeKind::Struct {
            members: members
                .into_iter()
                .map(|(name, offset, ty)| Member {
                    name: name.into(),
                    offset,
                    ty,
                })
                .collect(),
            params,
        }
    }

    /// `Option<usize>` (tagged, a pair), `Option<&u8>` (a niche at 0) and `Vec<u32>`.
    fn table() -> (TypeTable, TypeId, TypeId, TypeId) {
        let mut t = TypeTable::default();
        let usize_ty = push(&mut t, "usize", 8, TypeKind::Base(BaseKind::Unsigned));
        let u32_ty = push(&mut t, "u32", 4, TypeKind::Base(BaseKind::Unsigned));
        let none = push(&mut t, "None", 16, strukt(vec![], vec![]));
        let some = push(
            &mut t,
            "Some",
            16,
            strukt(vec![("__0", 8, usize_ty)], vec![]),
        );
        let opt = push(
            &mut t,
            "core::option::Option<usize>",
            16,
            TypeKind::Enum {
                tag: Some(Member {
                    name: "<tag>".into(),
                    offset: 0,
                    ty: usize_ty,
                }),
                variants: vec![
                    Variant {
                        discr: Some(0),
                        name: "None".into(),
                        offset: 0,
                        ty: none,
                    },
                    Variant {
                        discr: Some(1),
                        name: "Some".into(),
                        offset: 0,
                        ty: some,
                    },
                ],
            },
        );
        let u8_ty = push(&mut t, "u8", 1, TypeKind::Base(BaseKind::Unsigned));
        let ref_u8 = push(
            &mut t,
            "&u8",
            8,
            TypeKind::Pointer {
                pointee: Some(u8_ty),
            },
        );
        let none_ref = push(&mut t, "None", 8, strukt(vec![], vec![]));
        let some_ref = push(&mut t, "Some", 8, strukt(vec![("__0", 0, ref_u8)], vec![]));
        let opt_ref = push(
            &mut t,
            "core::option::Option<&u8>",
            8,
            TypeKind::Enum {
                tag: Some(Member {
                    name: "<tag>".into(),
                    offset: 0,
                    ty: usize_ty,
                }),
                variants: vec![
                    Variant {
                        discr: Some(0),
                        name: "None".into(),
                        offset: 0,
                        ty: none_ref,
                    },
                    Variant {
                        discr: None,
                        name: "Some".into(),
                        offset: 0,
                        ty: some_ref,
                    },
                ],
            },
        );
        let ptr_u32 = push(
            &mut t,
            "*const u32",
            8,
            TypeKind::Pointer {
                pointee: Some(u32_ty),
            },
        );
        let inner = push(
            &mut t,
            "RawVecInner",
            16,
            strukt(vec![("ptr", 8, ptr_u32), ("cap", 0, usize_ty)], vec![]),
        );
        let vec = push(
            &mut t,
            "alloc::vec::Vec<u32>",
            24,
            strukt(vec![("buf", 0, inner), ("len", 16, usize_ty)], vec![u32_ty]),
        );
        (t, opt, opt_ref, vec)
    }

    #[test]
    fn an_option_of_an_integer_has_none_and_some_of_zero_and_one() {
        let (t, opt, _, _) = table();
        let all: Vec<String> = extremes(&t, Some(opt))
            .unwrap()
            .into_iter()
            .map(|e| e.source)
            .collect();
        assert_eq!(all, ["None", "Some(0)", "Some(1)"]);
    }

    #[test]
    fn none_goes_back_in_the_registers_the_recorder_reads_it_from() {
        let (t, opt, opt_ref, _) = table();
        for (ty, value) in [
            (opt, ForcedValue::None),
            (opt, ForcedValue::Some(Box::new(ForcedValue::Int(1)))),
            (opt_ref, ForcedValue::None),
        ] {
            let bytes = value_bytes(&t, ty, &value).unwrap();
            let p = place_return(&t, ty, &bytes, None).unwrap();
            let regs = ReturnRegs {
                rax: p.rax.unwrap(),
                rdx: p.rdx.unwrap_or(0),
                ..ReturnRegs::default()
            };
            assert_eq!(return_place(&t, ty, &regs, true), ReturnPlace::Bytes(bytes));
        }
        let some_one = value_bytes(&t, opt, &ForcedValue::Some(Box::new(ForcedValue::Int(1))));
        let mut expected = 1u64.to_le_bytes().to_vec();
        expected.extend(1u64.to_le_bytes());
        assert_eq!(some_one.unwrap(), expected);
    }

    #[test]
    fn an_empty_vec_has_a_dangling_aligned_pointer_and_goes_through_memory() {
        let (t, _, _, vec) = table();
        let bytes = value_bytes(&t, vec, &ForcedValue::Empty).unwrap();
        let mut expected = vec![0u8; 24];
        expected[8..16].copy_from_slice(&4u64.to_le_bytes());
        assert_eq!(bytes, expected);
        let p = place_return(&t, vec, &bytes, Some(0x7000)).unwrap();
        assert_eq!(p.rax, Some(0x7000));
        assert_eq!(p.memory, Some((0x7000, expected)));
        assert!(place_return(&t, vec, &bytes, None).is_err());
    }

    /// `core::cmp::Ordering` as rustc describes it: a C-like enum of one signed byte.
    fn ordering(t: &mut TypeTable) -> TypeId {
        push(
            t,
            "core::cmp::Ordering",
            1,
            TypeKind::CEnum {
                signed: true,
                enumerators: vec![
                    ("Less".into(), -1),
                    ("Equal".into(), 0),
                    ("Greater".into(), 1),
                ],
            },
        )
    }

    #[test]
    fn a_fieldless_enum_is_forced_to_each_of_its_variants_without_an_allocator() {
        let mut t = TypeTable::default();
        let ord = ordering(&mut t);
        let all = extremes(&t, Some(ord)).unwrap();
        let sources: Vec<&str> = all.iter().map(|e| e.source.as_str()).collect();
        assert_eq!(
            sources,
            ["Ordering::Less", "Ordering::Equal", "Ordering::Greater"]
        );
        assert_eq!(value_bytes(&t, ord, &all[0].value).unwrap(), [0xff]);
        assert_eq!(value_bytes(&t, ord, &all[2].value).unwrap(), [1]);
        let p = place_return(&t, ord, &[0xff], None).unwrap();
        assert_eq!(p.rax, Some(0xff));
    }

    #[test]
    fn a_struct_of_the_program_has_no_extreme_value() {
        let mut t = TypeTable::default();
        let s = push(&mut t, "wallet::Wallet", 8, strukt(vec![], vec![]));
        let reason = extremes(&t, Some(s)).unwrap_err();
        assert!(reason.contains("wallet::Wallet"), "{reason}");
    }
}
