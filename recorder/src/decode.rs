//! Turns bytes of the traced process into [`Value`] trees using lowered DWARF types. Never
//! panics on bad input: what cannot be read becomes `Unavailable` / `Opaque` / `truncated`.

use carve_storage::{Field, Value};

use crate::location::Memory;
use crate::types::{BaseKind, TypeId, TypeKind, TypeTable};

/// How much of a value the recorder reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Pointers followed from an argument before values become `Pointer`s.
    pub max_depth: u32,
    /// Elements read from one sequence.
    pub max_elems: usize,
    /// Bytes read from one string.
    pub max_string: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 4,
            max_elems: 256,
            max_string: 4096,
        }
    }
}

/// Reads values of the types in `types` from `mem`.
pub struct Decoder<'a> {
    pub types: &'a TypeTable,
    pub mem: &'a dyn Memory,
    pub limits: Limits,
}

const MAX_VALUE_BYTES: u64 = 1 << 20;

impl Decoder<'_> {
    /// Decodes the value of type `ty` stored at `addr`.
    pub fn at(&self, ty: TypeId, addr: u64) -> Value {
        self.at_depth(ty, addr, 0)
    }

    fn at_depth(&self, ty: TypeId, addr: u64, depth: u32) -> Value {
        let Some(t) = self.types.get(ty) else {
            return unavailable("?", "unknown type");
        };
        if t.size > MAX_VALUE_BYTES {
            return unavailable(&t.name, "value too large");
        }
        let mut buf = vec![0u8; t.size as usize];
        if !self.mem.read(addr, &mut buf) {
            return unavailable(&t.name, &format!("memory at {addr:#x} unreadable"));
        }
        self.bytes_depth(ty, &buf, depth)
    }

    /// Decodes a value of type `ty` whose bytes are `bytes` (read from memory or registers).
    pub fn bytes(&self, ty: TypeId, bytes: &[u8]) -> Value {
        self.bytes_depth(ty, bytes, 0)
    }

    fn bytes_depth(&self, ty: TypeId, bytes: &[u8], depth: u32) -> Value {
        let Some(t) = self.types.get(ty) else {
            return unavailable("?", "unknown type");
        };
        let name = t.name.as_str();
        if (bytes.len() as u64) < t.size {
            return unavailable(name, "value shorter than its type");
        }
        match &t.kind {
            TypeKind::Unit => Value::Unit,
            TypeKind::Base(kind) => base(name, *kind, &bytes[..t.size as usize]),
            TypeKind::Pointer { pointee } => self.pointer(name, *pointee, bytes, depth),
            TypeKind::Struct { members, params } => {
                if let Some(v) = self.known_struct(name, ty, bytes, depth, params) {
                    return v;
                }
                if is_tuple(name) {
                    let elems = members
                        .iter()
                        .map(|m| self.member(m.ty, bytes, m.offset, depth))
                        .collect();
                    return Value::Tuple {
                        ty: name.to_string(),
                        elems,
                    };
                }
                Value::Struct {
                    ty: name.to_string(),
                    fields: members
                        .iter()
                        .map(|m| Field {
                            name: m.name.clone(),
                            value: self.member(m.ty, bytes, m.offset, depth),
                        })
                        .collect(),
                }
            }
            TypeKind::Enum { tag, variants } => {
                let tag_value = match tag {
                    Some(m) => {
                        let size = self.types.get(m.ty).map(|t| t.size).unwrap_or(0) as usize;
                        match slice(bytes, m.offset, size) {
                            Some(b) => Some(le_u64(b)),
                            None => return unavailable(name, "enum tag outside the value"),
                        }
                    }
                    None => None,
                };
                let chosen = variants
                    .iter()
                    .find(|v| v.discr.is_some() && v.discr == tag_value)
                    .or_else(|| variants.iter().find(|v| v.discr.is_none()))
                    .or(if tag.is_none() {
                        variants.first()
                    } else {
                        None
                    });
                let Some(variant) = chosen else {
                    return unavailable(name, "enum tag matches no variant");
                };
                let fields = match self.types.get(variant.ty).map(|t| &t.kind) {
                    Some(TypeKind::Struct { members, .. }) => members
                        .iter()
                        .map(|m| Field {
                            name: m.name.clone(),
                            value: self.member(m.ty, bytes, variant.offset + m.offset, depth),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                Value::Enum {
                    ty: name.to_string(),
                    variant: variant.name.clone(),
                    fields,
                }
            }
            TypeKind::CEnum {
                signed,
                enumerators,
            } => {
                let raw = &bytes[..t.size as usize];
                let v = if *signed {
                    le_i128(raw)
                } else {
                    le_u64(raw) as i128
                };
                match enumerators.iter().find(|(_, e)| *e == v) {
                    Some((variant, _)) => Value::Enum {
                        ty: name.to_string(),
                        variant: variant.clone(),
                        fields: Vec::new(),
                    },
                    None => Value::Int {
                        ty: name.to_string(),
                        value: v,
                    },
                }
            }
            TypeKind::Array { elem, count } => {
                let count = count.unwrap_or(0) as usize;
                let elem_size = self.types.get(*elem).map(|t| t.size).unwrap_or(0);
                let take = count.min(self.limits.max_elems);
                let elems = (0..take)
                    .map(|i| self.member(*elem, bytes, i as u64 * elem_size, depth))
                    .collect();
                Value::Seq {
                    ty: name.to_string(),
                    elems,
                    truncated: take < count,
                }
            }
            TypeKind::Union { .. } | TypeKind::Opaque => Value::Opaque {
                ty: name.to_string(),
                bytes: bytes[..t.size as usize].to_vec(),
            },
        }
    }

    fn member(&self, ty: TypeId, bytes: &[u8], offset: u64, depth: u32) -> Value {
        let size = self.types.get(ty).map(|t| t.size).unwrap_or(0) as usize;
        match slice(bytes, offset, size) {
            Some(b) => self.bytes_depth(ty, b, depth),
            None => unavailable(self.types.name(ty), "member outside its parent"),
        }
    }

    fn pointer(&self, name: &str, pointee: Option<TypeId>, bytes: &[u8], depth: u32) -> Value {
        let addr = le_u64(&bytes[..bytes.len().min(8)]);
        let followable = name.starts_with('&')
            || name.starts_with("alloc::boxed::Box<")
            || name.starts_with("Box<")
            || (!name.starts_with("*") && name.ends_with(" *"));
        let target = pointee.and_then(|p| self.types.get(p).map(|t| (p, t)));
        match target {
            _ if addr == 0 => Value::Pointer {
                ty: name.to_string(),
                addr,
            },
            Some((p, t)) if followable && depth < self.limits.max_depth => {
                // A C `char *` is a string.
                if name.ends_with(" *")
                    && t.size == 1
                    && (t.name == "char" || t.name.ends_with(" char"))
                {
                    let (value, truncated) = self.c_string(addr);
                    return Value::Str {
                        ty: name.to_string(),
                        value,
                        truncated,
                    };
                }
                let target = if t.size == 0 {
                    self.bytes_depth(p, &[], depth + 1)
                } else {
                    self.at_depth(p, addr, depth + 1)
                };
                Value::Ref {
                    ty: name.to_string(),
                    addr,
                    target: Box::new(target),
                }
            }
            _ => Value::Pointer {
                ty: name.to_string(),
                addr,
            },
        }
    }

    /// Standard library types decoded to what they mean rather than how they are laid out.
    fn known_struct(
        &self,
        name: &str,
        ty: TypeId,
        bytes: &[u8],
        depth: u32,
        params: &[TypeId],
    ) -> Option<Value> {
        let word = |field: &str| -> Option<u64> {
            let m = self.types.member(ty, field)?;
            slice(bytes, m.offset, 8).map(le_u64)
        };
        if name == "&str" || name == "&mut str" {
            let (ptr, len) = (word("data_ptr")?, word("length")?);
            let (value, truncated) = self.utf8(ptr, len);
            return Some(Value::Str {
                ty: name.to_string(),
                value,
                truncated,
            });
        }
        if name == "alloc::string::String" {
            let vec = self.types.member(ty, "vec")?;
            let vb = slice(bytes, vec.offset, self.types.get(vec.ty)?.size as usize)?;
            let (ptr, len) = self.vec_parts(vec.ty, vb)?;
            let (value, truncated) = self.utf8(ptr, len);
            return Some(Value::Str {
                ty: name.to_string(),
                value,
                truncated,
            });
        }
        if name.starts_with("alloc::vec::Vec<") {
            let (ptr, len) = self.vec_parts(ty, bytes)?;
            return Some(self.seq(name, *params.first()?, ptr, len, depth));
        }
        if (name.starts_with("&[") || name.starts_with("&mut [")) && name.ends_with(']') {
            let (ptr, len) = (word("data_ptr")?, word("length")?);
            let ptr_ty = self.types.member(ty, "data_ptr")?.ty;
            let elem = match self.types.get(ptr_ty)?.kind {
                TypeKind::Pointer { pointee } => pointee?,
                _ => return None,
            };
            return Some(self.seq(name, elem, ptr, len, depth));
        }
        None
    }

    /// (data pointer, length) of a `Vec`: the first pointer found under `buf`, and `len`.
    fn vec_parts(&self, vec_ty: TypeId, bytes: &[u8]) -> Option<(u64, u64)> {
        let len = self.types.member(vec_ty, "len")?;
        let len = le_u64(slice(bytes, len.offset, 8)?);
        let buf = self.types.member(vec_ty, "buf")?;
        let ptr_offset = self.first_pointer(buf.ty, 0, 0)?;
        let ptr = le_u64(slice(bytes, buf.offset + ptr_offset, 8)?);
        Some((ptr, len))
    }

    fn first_pointer(&self, ty: TypeId, base: u64, depth: u32) -> Option<u64> {
        if depth > 8 {
            return None;
        }
        match &self.types.get(ty)?.kind {
            TypeKind::Pointer { .. } => Some(base),
            TypeKind::Struct { members, .. } => {
                // `ptr` (RawVec / RawVecInner) comes before `cap`; prefer it by name.
                let ordered = members
                    .iter()
                    .filter(|m| m.name == "ptr" || m.name == "inner" || m.name == "pointer")
                    .chain(members.iter());
                for m in ordered {
                    if let Some(o) = self.first_pointer(m.ty, base + m.offset, depth + 1) {
                        return Some(o);
                    }
                }
                None
            }
            _ => None,
        }
    }

    fn seq(&self, name: &str, elem: TypeId, ptr: u64, len: u64, depth: u32) -> Value {
        let elem_size = self.types.get(elem).map(|t| t.size).unwrap_or(0);
        let take = (len as usize).min(self.limits.max_elems);
        if depth >= self.limits.max_depth {
            return Value::Seq {
                ty: name.to_string(),
                elems: Vec::new(),
                truncated: len > 0,
            };
        }
        let mut elems = Vec::with_capacity(take);
        if elem_size == 0 {
            elems.extend((0..take).map(|_| self.bytes_depth(elem, &[], depth + 1)));
        } else {
            let total = elem_size.saturating_mul(take as u64);
            if total > MAX_VALUE_BYTES {
                return unavailable(name, "sequence too large");
            }
            let mut buf = vec![0u8; total as usize];
            if !self.mem.read(ptr, &mut buf) {
                return unavailable(name, &format!("elements at {ptr:#x} unreadable"));
            }
            for i in 0..take {
                let start = i * elem_size as usize;
                elems.push(self.bytes_depth(
                    elem,
                    &buf[start..start + elem_size as usize],
                    depth + 1,
                ));
            }
        }
        Value::Seq {
            ty: name.to_string(),
            elems,
            truncated: take < len as usize,
        }
    }

    fn utf8(&self, ptr: u64, len: u64) -> (String, bool) {
        let take = (len as usize).min(self.limits.max_string);
        let mut buf = vec![0u8; take];
        if take > 0 && !self.mem.read(ptr, &mut buf) {
            return (String::new(), true);
        }
        let truncated = take < len as usize;
        match String::from_utf8(buf) {
            Ok(s) => (s, truncated),
            Err(e) => {
                // A cut inside a multi-byte character: keep the valid prefix.
                let valid = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes();
                (String::from_utf8_lossy(&bytes[..valid]).into_owned(), true)
            }
        }
    }

    fn c_string(&self, ptr: u64) -> (String, bool) {
        let mut out = Vec::new();
        let mut chunk = [0u8; 64];
        while out.len() < self.limits.max_string {
            // Read byte by byte at the end of a page rather than fail on the whole chunk.
            let n = (0x1000 - (ptr as usize + out.len()) % 0x1000).min(chunk.len());
            if !self.mem.read(ptr + out.len() as u64, &mut chunk[..n]) {
                return (String::from_utf8_lossy(&out).into_owned(), true);
            }
            if let Some(end) = chunk[..n].iter().position(|b| *b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return (String::from_utf8_lossy(&out).into_owned(), false);
            }
            out.extend_from_slice(&chunk[..n]);
        }
        out.truncate(self.limits.max_string);
        (String::from_utf8_lossy(&out).into_owned(), true)
    }
}

fn base(name: &str, kind: BaseKind, raw: &[u8]) -> Value {
    match kind {
        BaseKind::Bool => Value::Bool {
            value: raw.first().is_some_and(|b| *b != 0),
        },
        BaseKind::Char => match char::from_u32(le_u64(raw) as u32) {
            Some(value) => Value::Char { value },
            None => unavailable(name, "not a valid char"),
        },
        BaseKind::Signed => Value::Int {
            ty: name.to_string(),
            value: le_i128(raw),
        },
        BaseKind::Unsigned => Value::Uint {
            ty: name.to_string(),
            value: le_u128(raw),
        },
        BaseKind::Float => match raw.len() {
            4 | 8 => Value::Float {
                ty: name.to_string(),
                bits: le_u64(raw),
            },
            _ => Value::Opaque {
                ty: name.to_string(),
                bytes: raw.to_vec(),
            },
        },
    }
}

fn unavailable(ty: &str, reason: &str) -> Value {
    Value::Unavailable {
        ty: ty.to_string(),
        reason: reason.to_string(),
    }
}

fn is_tuple(name: &str) -> bool {
    name.starts_with('(') && name.ends_with(')')
}

fn slice(bytes: &[u8], offset: u64, size: usize) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    bytes.get(start..start.checked_add(size)?)
}

pub(crate) fn le_u64(b: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    let n = b.len().min(8);
    buf[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(buf)
}

fn le_u128(b: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    let n = b.len().min(16);
    buf[..n].copy_from_slice(&b[..n]);
    u128::from_le_bytes(buf)
}

fn le_i128(b: &[u8]) -> i128 {
    let n = b.len().min(16);
    if n == 0 {
        return 0;
    }
    let negative = b[n - 1] & 0x80 != 0;
    let mut buf = if negative { [0xffu8; 16] } else { [0u8; 16] };
    buf[..n].copy_from_slice(&b[..n]);
    i128::from_le_bytes(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Member, Type};

    /// A fake address space: one region of bytes at a base address.
    struct Region(u64, Vec<u8>);
    impl Memory for Region {
        fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
            let Some(start) = addr.checked_sub(self.0) else {
                return false;
            };
            match self.1.get(start as usize..start as usize + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    true
                }
                None => false,
            }
        }
    }

    fn table_with_str() -> (TypeTable, TypeId) {
        let mut t = TypeTable::default();
        let u8_ty = t.push(Type {
            name: "u8".into(),
            size: 1,
            kind: TypeKind::Base(BaseKind::Unsigned),
        });
        let ptr = t.push(Type {
            name: "*const u8".into(),
            size: 8,
            kind: TypeKind::Pointer {
                pointee: Some(u8_ty),
            },
        });
        let usize_ty = t.push(Type {
            name: "usize".into(),
            size: 8,
            kind: TypeKind::Base(BaseKind::Unsigned),
        });
        let s = t.push(Type {
            name: "&str".into(),
            size: 16,
            kind: TypeKind::Struct {
                members: vec![
                    Member {
                        name: "data_ptr".into(),
                        offset: 0,
                        ty: ptr,
                    },
                    Member {
                        name: "length".into(),
                        offset: 8,
                        ty: usize_ty,
                    },
                ],
                params: vec![],
            },
        });
        (t, s)
    }

    #[test]
    fn a_str_is_read_through_its_data_pointer() {
        let (types, s) = table_with_str();
        let mem = Region(0x1000, b"hello world".to_vec());
        let d = Decoder {
            types: &types,
            mem: &mem,
            limits: Limits::default(),
        };
        let mut bytes = 0x1000u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&5u64.to_le_bytes());
        assert_eq!(
            d.bytes(s, &bytes),
            Value::Str {
                ty: "&str".into(),
                value: "hello".into(),
                truncated: false
            }
        );
    }

    #[test]
    fn a_long_str_is_cut_at_the_limit_and_marked_truncated() {
        let (types, s) = table_with_str();
        let mem = Region(0x1000, vec![b'a'; 100]);
        let limits = Limits {
            max_string: 10,
            ..Limits::default()
        };
        let d = Decoder {
            types: &types,
            mem: &mem,
            limits,
        };
        let mut bytes = 0x1000u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&100u64.to_le_bytes());
        assert_eq!(
            d.bytes(s, &bytes),
            Value::Str {
                ty: "&str".into(),
                value: "a".repeat(10),
                truncated: true
            }
        );
    }

    #[test]
    fn unreadable_memory_gives_an_unavailable_value_not_a_panic() {
        let (types, s) = table_with_str();
        let mem = Region(0x1000, vec![]);
        let d = Decoder {
            types: &types,
            mem: &mem,
            limits: Limits::default(),
        };
        let mut bytes = 0xdead_0000u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(!d.bytes(s, &bytes).is_exact());
        assert!(matches!(d.bytes(s, &[1, 2]), Value::Unavailable { .. }));
        assert!(matches!(d.bytes(999, &[]), Value::Unavailable { .. }));
    }

    #[test]
    fn signed_integers_are_sign_extended() {
        assert_eq!(le_i128(&[0xff]), -1);
        assert_eq!(le_i128(&[0xfe, 0xff, 0xff, 0xff]), -2);
        assert_eq!(le_i128(&[0x7f]), 127);
    }

    #[test]
    fn garbage_bytes_for_every_kind_never_panic() {
        let (mut types, s) = table_with_str();
        let opt = types.push(Type {
            name: "core::option::Option<u8>".into(),
            size: 2,
            kind: TypeKind::Enum {
                tag: Some(Member {
                    name: "<tag>".into(),
                    offset: 0,
                    ty: 0,
                }),
                variants: vec![],
            },
        });
        let mem = Region(0, vec![0xAB; 64]);
        let d = Decoder {
            types: &types,
            mem: &mem,
            limits: Limits::default(),
        };
        let mut seed = 0x1234_5678u64;
        for len in 0..40 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 33) as u8
                })
                .collect();
            for ty in 0..=opt + 1 {
                let _ = d.bytes(ty, &bytes);
            }
            let _ = d.bytes(s, &bytes);
        }
    }
}
