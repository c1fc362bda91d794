//! Where rustc's x86-64 calling convention leaves a function's return value, derived from the
//! return type's layout (the Rust ABI is unstable, so this follows what rustc 1.95 does; see
//! shared notes): scalars in rax / xmm0, scalar pairs in rax:rdx / xmm0:xmm1 / mixed, small
//! aggregates packed into rax, everything else through the hidden return pointer (rax at `ret`).

use crate::types::{BaseKind, TypeId, TypeKind, TypeTable};

/// The registers a return value can come back in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReturnRegs {
    pub rax: u64,
    pub rdx: u64,
    /// Low 64 bits of xmm0 and xmm1.
    pub xmm0: u64,
    pub xmm1: u64,
}

/// How to get the bytes of a return value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReturnPlace {
    /// The value's bytes, assembled from registers.
    Bytes(Vec<u8>),
    /// The value is in memory at this address (the hidden return pointer).
    Memory(u64),
}

/// A primitive leaf of a type's layout: offset, size, and whether it is a float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Leaf {
    offset: u64,
    size: u64,
    float: bool,
}

/// Where a value of type `ty` is returned, given the registers at the return address.
pub fn return_place(types: &TypeTable, ty: TypeId, regs: &ReturnRegs) -> ReturnPlace {
    let size = types.get(ty).map(|t| t.size).unwrap_or(0);
    if size == 0 {
        return ReturnPlace::Bytes(Vec::new());
    }
    if size > 16 {
        return ReturnPlace::Memory(regs.rax);
    }
    let mut leaves = Vec::new();
    let flat = leaves_of(types, ty, 0, &mut leaves, 0);
    leaves.sort_by_key(|l| (l.offset, l.size));
    leaves.dedup();
    let is_array = matches!(types.get(ty).map(|t| &t.kind), Some(TypeKind::Array { .. }));
    let mut bytes = vec![0u8; size as usize];
    let mut put = |leaf: &Leaf, value: u64| {
        let le = value.to_le_bytes();
        let start = leaf.offset as usize;
        let n = (leaf.size as usize)
            .min(8)
            .min(bytes.len().saturating_sub(start));
        bytes[start..start + n].copy_from_slice(&le[..n]);
    };
    if flat && !is_array && distinct_positions(&leaves) == 1 {
        let leaf = leaves[0];
        if leaf.float {
            put(&leaf, regs.xmm0);
        } else if leaf.size == 16 {
            let mut b = regs.rax.to_le_bytes().to_vec();
            b.extend_from_slice(&regs.rdx.to_le_bytes());
            return ReturnPlace::Bytes(b);
        } else {
            put(&leaf, regs.rax);
        }
        return ReturnPlace::Bytes(bytes);
    }
    if flat && !is_array && distinct_positions(&leaves) == 2 {
        let (first, second) = two_positions(&leaves);
        let (a, b) = match (first.float, second.float) {
            (true, true) => (regs.xmm0, regs.xmm1),
            (true, false) => (regs.xmm0, regs.rax),
            (false, true) => (regs.rax, regs.xmm0),
            (false, false) => (regs.rax, regs.rdx),
        };
        put(&first, a);
        put(&second, b);
        return ReturnPlace::Bytes(bytes);
    }
    if size <= 8 {
        let le = regs.rax.to_le_bytes();
        return ReturnPlace::Bytes(le[..size as usize].to_vec());
    }
    ReturnPlace::Memory(regs.rax)
}

/// Whether a value of type `ty` may be returned in xmm registers (it has a float part).
pub fn uses_float_registers(types: &TypeTable, ty: TypeId) -> bool {
    let mut leaves = Vec::new();
    leaves_of(types, ty, 0, &mut leaves, 0);
    leaves.iter().any(|l| l.float)
}

/// Collects the primitive leaves of `ty`; false when the layout has something that keeps it
/// from being a scalar or scalar pair (unions, opaque parts, too deep).
fn leaves_of(types: &TypeTable, ty: TypeId, base: u64, out: &mut Vec<Leaf>, depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    let Some(t) = types.get(ty) else { return false };
    match &t.kind {
        TypeKind::Unit => true,
        TypeKind::Base(kind) => {
            out.push(Leaf {
                offset: base,
                size: t.size,
                float: *kind == BaseKind::Float,
            });
            true
        }
        TypeKind::Pointer { .. } | TypeKind::CEnum { .. } => {
            out.push(Leaf {
                offset: base,
                size: t.size,
                float: false,
            });
            true
        }
        TypeKind::Struct { members, .. } => members
            .iter()
            .all(|m| leaves_of(types, m.ty, base + m.offset, out, depth + 1)),
        TypeKind::Enum { tag, variants } => {
            if let Some(tag) = tag {
                if !leaves_of(types, tag.ty, base + tag.offset, out, depth + 1) {
                    return false;
                }
            }
            variants
                .iter()
                .all(|v| leaves_of(types, v.ty, base + v.offset, out, depth + 1))
        }
        TypeKind::Array { elem, count } => {
            let elem_size = types.get(*elem).map(|t| t.size).unwrap_or(0);
            (0..count.unwrap_or(0))
                .all(|i| leaves_of(types, *elem, base + i * elem_size, out, depth + 1))
        }
        TypeKind::Union { .. } | TypeKind::Opaque => false,
    }
}

/// Number of distinct scalar slots, where leaves that overlap (enum variants sharing a slot)
/// count once.
fn distinct_positions(leaves: &[Leaf]) -> usize {
    let mut count = 0;
    let mut end = 0;
    for (i, l) in leaves.iter().enumerate() {
        if i == 0 || l.offset >= end {
            count += 1;
            end = l.offset + l.size;
        } else {
            end = end.max(l.offset + l.size);
        }
    }
    count
}

fn two_positions(leaves: &[Leaf]) -> (Leaf, Leaf) {
    let first = leaves[0];
    let first_end = leaves
        .iter()
        .take_while(|l| l.offset < first.offset + first.size)
        .map(|l| l.offset + l.size)
        .max()
        .unwrap_or(first.offset + first.size);
    let rest: Vec<&Leaf> = leaves.iter().filter(|l| l.offset >= first_end).collect();
    let second_start = rest.first().map(|l| l.offset).unwrap_or(first_end);
    let second_size = rest
        .iter()
        .map(|l| l.offset + l.size)
        .max()
        .unwrap_or(second_start)
        - second_start;
    let widest_first = Leaf {
        offset: first.offset,
        size: first_end - first.offset,
        float: first.float,
    };
    let second = Leaf {
        offset: second_start,
        size: second_size,
        float: rest.first().is_some_and(|l| l.float),
    };
    (widest_first, second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Member, Type, Variant};

    fn base(t: &mut TypeTable, name: &str, size: u64, kind: BaseKind) -> TypeId {
        t.push(Type {
            name: name.into(),
            size,
            kind: TypeKind::Base(kind),
        })
    }

    fn regs() -> ReturnRegs {
        ReturnRegs {
            rax: 0x1111,
            rdx: 0x2222,
            xmm0: 0x3333,
            xmm1: 0x4444,
        }
    }

    #[test]
    fn an_integer_comes_back_in_rax_and_a_float_in_xmm0() {
        let mut t = TypeTable::default();
        let i = base(&mut t, "i64", 8, BaseKind::Signed);
        let f = base(&mut t, "f64", 8, BaseKind::Float);
        assert_eq!(
            return_place(&t, i, &regs()),
            ReturnPlace::Bytes(0x1111u64.to_le_bytes().to_vec())
        );
        assert_eq!(
            return_place(&t, f, &regs()),
            ReturnPlace::Bytes(0x3333u64.to_le_bytes().to_vec())
        );
    }

    #[test]
    fn an_option_u32_is_a_scalar_pair_in_eax_and_edx() {
        let mut t = TypeTable::default();
        let u32_ty = base(&mut t, "u32", 4, BaseKind::Unsigned);
        let none = t.push(Type {
            name: "None".into(),
            size: 8,
            kind: TypeKind::Struct {
                members: vec![],
                params: vec![],
            },
        });
        let some = t.push(Type {
            name: "Some".into(),
            size: 8,
            kind: TypeKind::Struct {
                members: vec![Member {
                    name: "__0".into(),
                    offset: 4,
                    ty: u32_ty,
                }],
                params: vec![],
            },
        });
        let opt = t.push(Type {
            name: "core::option::Option<u32>".into(),
            size: 8,
            kind: TypeKind::Enum {
                tag: Some(Member {
                    name: "<tag>".into(),
                    offset: 0,
                    ty: u32_ty,
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
        });
        let mut expected = 0x1111u32.to_le_bytes().to_vec();
        expected.extend_from_slice(&0x2222u32.to_le_bytes());
        assert_eq!(return_place(&t, opt, &regs()), ReturnPlace::Bytes(expected));
    }

    #[test]
    fn values_over_sixteen_bytes_come_back_through_the_hidden_pointer() {
        let mut t = TypeTable::default();
        let u64_ty = base(&mut t, "u64", 8, BaseKind::Unsigned);
        let big = t.push(Type {
            name: "alloc::string::String".into(),
            size: 24,
            kind: TypeKind::Struct {
                members: (0..3)
                    .map(|i| Member {
                        name: format!("f{i}"),
                        offset: i * 8,
                        ty: u64_ty,
                    })
                    .collect(),
                params: vec![],
            },
        });
        assert_eq!(return_place(&t, big, &regs()), ReturnPlace::Memory(0x1111));
    }

    #[test]
    fn a_pair_of_floats_comes_back_in_xmm0_and_xmm1() {
        let mut t = TypeTable::default();
        let f = base(&mut t, "f64", 8, BaseKind::Float);
        let pair = t.push(Type {
            name: "(f64, f64)".into(),
            size: 16,
            kind: TypeKind::Struct {
                members: vec![
                    Member {
                        name: "__0".into(),
                        offset: 0,
                        ty: f,
                    },
                    Member {
                        name: "__1".into(),
                        offset: 8,
                        ty: f,
                    },
                ],
                params: vec![],
            },
        });
        let mut expected = 0x3333u64.to_le_bytes().to_vec();
        expected.extend_from_slice(&0x4444u64.to_le_bytes());
        assert_eq!(
            return_place(&t, pair, &regs()),
            ReturnPlace::Bytes(expected)
        );
    }
}
