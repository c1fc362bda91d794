//! Turns bytes of the traced process into [`Value`] trees using lowered DWARF types. Never
//! panics on bad input: what cannot be read becomes `Unavailable` / `Opaque` / `truncated`.

use carve_storage::{Field, Value};

use crate::addr::RuntimeAddr;
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

const VEC_INTO_ITER: &str = "alloc::vec::into_iter::IntoIter<";

/// The members holding where the elements an iterator has left start and end, for the std
/// iterators read as those elements (`Decoder::slice_iter`).
pub(crate) fn rest_members(name: &str) -> Option<(&'static str, &'static str)> {
    if name.starts_with("core::slice::iter::Iter<")
        || name.starts_with("core::slice::iter::IterMut<")
    {
        Some(("ptr", "end_or_len"))
    } else if name.starts_with(VEC_INTO_ITER) {
        Some(("ptr", "end"))
    } else {
        None
    }
}

/// Why a function item's value is not read (until its instance's code names it).
pub(crate) const FUNCTION_ITEM: &str = "a zero-sized function item: no bytes name the function";

const MAX_VALUE_BYTES: u64 = 1 << 20;

/// Values nested deeper than this (structs in structs in enums...) are cut off: valid DWARF
/// never comes close, but malformed DWARF can describe a struct that contains itself.
const MAX_NESTING: u32 = 96;

/// Parts (fields, elements, variants...) one decoded value may have in all: a type whose members
/// repeat it (malformed DWARF again) would otherwise grow exponentially with the nesting.
const MAX_PARTS: u32 = 100_000;

thread_local! {
    static NESTING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    static PARTS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// One level of value nesting on this thread, given back when dropped.
struct Nested;

impl Nested {
    fn enter() -> Option<Nested> {
        NESTING.with(|n| {
            if n.get() == 0 {
                PARTS.with(|p| p.set(0)); // a new top-level value
            }
            let parts = PARTS.with(|p| {
                p.set(p.get().saturating_add(1));
                p.get()
            });
            (n.get() < MAX_NESTING && parts <= MAX_PARTS).then(|| {
                n.set(n.get() + 1);
                Nested
            })
        })
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        NESTING.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

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
        let Some(_level) = Nested::enter() else {
            return unavailable(
                name,
                "nested too deep or too large (a type that contains itself?)",
            );
        };
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
                // Discriminants compare in the tag's width (DWARF may give a negative one
                // sign-extended).
                let mut mask = u128::MAX;
                let tag_value = match tag {
                    Some(m) => {
                        let size = self.types.get(m.ty).map(|t| t.size).unwrap_or(0) as usize;
                        if size == 0 || size > 16 {
                            return unavailable(name, "enum tag of an unexpected size");
                        }
                        if size < 16 {
                            mask = (1u128 << (size * 8)) - 1;
                        }
                        match slice(bytes, m.offset, size) {
                            Some(b) => Some(le_u128(b)),
                            None => return unavailable(name, "enum tag outside the value"),
                        }
                    }
                    None => None,
                };
                let chosen = variants
                    .iter()
                    .find(|v| {
                        v.discr
                            .zip(tag_value)
                            .is_some_and(|(d, t)| d & mask == t & mask)
                    })
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

    /// Whether the byte at `addr` can be read.
    fn readable(&self, addr: u64) -> bool {
        self.mem.read(addr, &mut [0u8; 1])
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
            // A function item is zero-sized, yet DWARF gives it the type of a pointer to its
            // signature (`fn(&i64, &i64) -> Ordering`): the bytes read for it are whatever lay
            // beside it. A real function pointer points at code, which is readable.
            Some((_, t))
                if t.kind == TypeKind::Opaque
                    && t.name == crate::types::SIGNATURE
                    && !self.readable(addr) =>
            {
                unavailable(name, FUNCTION_ITEM)
            }
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
        if name.contains("dyn ") {
            if let Some(v) = self.trait_object(name, ty, bytes, depth) {
                return Some(v);
            }
        }
        if name.starts_with("alloc::rc::Rc<") || name.starts_with("alloc::sync::Arc<") {
            if let Some(v) = self.shared(name, ty, bytes, depth) {
                return Some(v);
            }
        }
        let boxed = name
            .strip_prefix("alloc::boxed::Box<")
            .or_else(|| name.strip_prefix("Box<"));
        if name == "&str" || name == "&mut str" || boxed.is_some_and(|b| b.starts_with("str")) {
            let (ptr, len) = (word("data_ptr")?, word("length")?);
            let (value, truncated) = self.utf8(ptr, len);
            return Some(Value::Str {
                ty: name.to_string(),
                value,
                truncated,
            });
        }
        // Paths and OS strings hold bytes, UTF-8 on any path a test writes: their text, with the
        // type kept (`&std::path::Path`), so a test writes `Path::new("src/lib.rs")`. Bytes that
        // are not UTF-8 keep only their valid prefix, marked truncated (not exact).
        if is_os_text(name) {
            let (ptr, len) = if name.starts_with('&') {
                (word("data_ptr")?, word("length")?)
            } else {
                // PathBuf { inner: OsString { inner: Buf { inner: Vec<u8> } } }
                let (vec_ty, offset) = self.inner_vec(ty, 0, 0)?;
                let size = self.types.get(vec_ty)?.size as usize;
                self.vec_parts(vec_ty, slice(bytes, offset as u64, size)?)?
            };
            let (value, truncated) = self.utf8(ptr, len);
            return Some(Value::Str {
                ty: name.to_string(),
                value,
                truncated,
            });
        }
        if name == "core::str::iter::Chars" {
            if let Some(text) = self.chars(ty, bytes) {
                return Some(text);
            }
        }
        if let Some(members) = rest_members(name) {
            if let Some(rest) = self.slice_iter(name, ty, bytes, *params.first()?, members, depth) {
                return Some(rest);
            }
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
        if name.starts_with("alloc::collections::vec_deque::VecDeque<") {
            return self.vec_deque(name, ty, bytes, *params.first()?, depth);
        }
        if name.starts_with("alloc::collections::btree::map::BTreeMap<")
            || name.starts_with("alloc::collections::btree::set::BTreeSet<")
        {
            let set = name.starts_with("alloc::collections::btree::set::");
            return self.btree(name, ty, bytes, depth, set);
        }
        if name.starts_with("std::collections::hash::map::HashMap<")
            || name.starts_with("std::collections::hash::set::HashSet<")
        {
            let set = name.starts_with("std::collections::hash::set::");
            return self.hash_table(name, ty, bytes, depth, set);
        }
        let boxed_slice = boxed.is_some_and(|b| b.starts_with('['));
        if boxed_slice
            || (name.starts_with("&[") || name.starts_with("&mut [")) && name.ends_with(']')
        {
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

    /// A trait object (`&dyn T`, `Box<dyn T>`, `*const dyn T`: a struct of exactly `pointer`
    /// and `vtable`): the concrete value behind it when its vtable is known, else both pointers.
    /// A zero-sized concrete type is decoded without reading memory (its data pointer dangles).
    fn trait_object(&self, name: &str, ty: TypeId, bytes: &[u8], depth: u32) -> Option<Value> {
        let TypeKind::Struct { members, .. } = &self.types.get(ty)?.kind else {
            return None;
        };
        if members.len() != 2 {
            return None;
        }
        let pointer = self.types.member(ty, "pointer")?;
        let vtable = self.types.member(ty, "vtable")?;
        let data = le_u64(slice(bytes, pointer.offset, 8)?);
        let vtable_addr = le_u64(slice(bytes, vtable.offset, 8)?);
        let raw = name.starts_with('*');
        let concrete = self
            .types
            .vtable_type(RuntimeAddr(vtable_addr))
            .and_then(|c| self.types.get(c).map(|t| (c, t.size)));
        match concrete {
            Some(_) if raw || depth >= self.limits.max_depth => Some(Value::Pointer {
                ty: name.to_string(),
                addr: data,
            }),
            Some((c, 0)) => Some(Value::Ref {
                ty: name.to_string(),
                addr: data,
                target: Box::new(self.bytes_depth(c, &[], depth + 1)),
            }),
            Some(_) if data == 0 => Some(Value::Pointer {
                ty: name.to_string(),
                addr: data,
            }),
            Some((c, _)) => Some(Value::Ref {
                ty: name.to_string(),
                addr: data,
                target: Box::new(self.at_depth(c, data, depth + 1)),
            }),
            None => Some(Value::Struct {
                ty: name.to_string(),
                fields: members
                    .iter()
                    .map(|m| Field {
                        name: m.name.clone(),
                        value: Value::Pointer {
                            ty: self.types.name(m.ty).to_string(),
                            addr: if m.name == "vtable" {
                                vtable_addr
                            } else {
                                data
                            },
                        },
                    })
                    .collect(),
            }),
        }
    }

    /// `Rc<T>` / `Arc<T>`: `ptr: NonNull<RcInner<T>>` → `{strong, weak, value}` (`data` for
    /// `ArcInner`); decoded as a reference to the value, leaving out the counts.
    fn shared(&self, name: &str, ty: TypeId, bytes: &[u8], depth: u32) -> Option<Value> {
        let ptr = self.types.member(ty, "ptr")?;
        let non_null = self.types.member(ptr.ty, "pointer")?;
        let TypeKind::Pointer {
            pointee: Some(inner),
        } = self.types.get(non_null.ty)?.kind
        else {
            // `Rc<dyn T>`: the inner pointer is itself a trait object.
            let at = ptr.offset + non_null.offset;
            return self.shared_dyn(name, non_null.ty, slice(bytes, at, 16)?, depth);
        };
        let value = self
            .types
            .member(inner, "value")
            .or_else(|| self.types.member(inner, "data"))?;
        let inner_addr = le_u64(slice(bytes, ptr.offset + non_null.offset, 8)?);
        let addr = inner_addr.wrapping_add(value.offset);
        if inner_addr == 0 || depth >= self.limits.max_depth {
            return Some(Value::Pointer {
                ty: name.to_string(),
                addr,
            });
        }
        let target = if self.types.get(value.ty)?.size == 0 {
            self.bytes_depth(value.ty, &[], depth + 1)
        } else {
            self.at_depth(value.ty, addr, depth + 1)
        };
        Some(Value::Ref {
            ty: name.to_string(),
            addr,
            target: Box::new(target),
        })
    }

    /// `Rc<dyn T>` / `Arc<dyn T>`: `fat` is the `{pointer, vtable}` of `*const RcInner<dyn T>`.
    /// The concrete type comes from the vtable, and so does its alignment (the vtable's third
    /// word), which places the value after the two counts.
    fn shared_dyn(&self, name: &str, fat_ty: TypeId, fat: &[u8], depth: u32) -> Option<Value> {
        let pointer = self.types.member(fat_ty, "pointer")?;
        let vtable = self.types.member(fat_ty, "vtable")?;
        let inner_addr = le_u64(slice(fat, pointer.offset, 8)?);
        let vtable_addr = le_u64(slice(fat, vtable.offset, 8)?);
        let concrete = self.types.vtable_type(RuntimeAddr(vtable_addr))?;
        let mut word = [0u8; 8];
        if !self.mem.read(vtable_addr.wrapping_add(16), &mut word) {
            return None;
        }
        let align = u64::from_le_bytes(word);
        if !align.is_power_of_two() || align > 4096 {
            return None;
        }
        let addr = inner_addr.wrapping_add(16u64.next_multiple_of(align));
        if inner_addr == 0 || depth >= self.limits.max_depth {
            return Some(Value::Pointer {
                ty: name.to_string(),
                addr,
            });
        }
        let target = if self.types.get(concrete)?.size == 0 {
            self.bytes_depth(concrete, &[], depth + 1)
        } else {
            self.at_depth(concrete, addr, depth + 1)
        };
        Some(Value::Ref {
            ty: name.to_string(),
            addr,
            target: Box::new(target),
        })
    }

    /// A ring buffer: `len` elements from `head`, wrapping at the buffer's capacity.
    fn vec_deque(
        &self,
        name: &str,
        ty: TypeId,
        bytes: &[u8],
        elem: TypeId,
        depth: u32,
    ) -> Option<Value> {
        let field = |n: &str| -> Option<u64> {
            let m = self.types.member(ty, n)?;
            slice(bytes, m.offset, 8).map(le_u64)
        };
        let (head, len) = (field("head")?, field("len")?);
        let buf = self.types.member(ty, "buf")?;
        let ptr_at = self.first_pointer(buf.ty, 0, 0)?;
        let ptr = le_u64(slice(bytes, buf.offset.wrapping_add(ptr_at), 8)?);
        let cap_at = self.first_named(buf.ty, "cap", 0, 0)?;
        let cap = le_u64(slice(bytes, buf.offset.wrapping_add(cap_at), 8)?);
        let elem_size = self.types.get(elem)?.size;
        // A new deque has no buffer yet (capacity 0): empty, not out of shape.
        let in_shape = len <= cap && (head < cap || (head == 0 && len == 0));
        if !in_shape || depth >= self.limits.max_depth {
            return Some(unavailable(name, "ring buffer out of shape"));
        }
        let take = (len as usize).min(self.limits.max_elems);
        let mut elems = Vec::with_capacity(take);
        for i in 0..take as u64 {
            let slot = head.wrapping_add(i) % cap;
            let at = ptr.wrapping_add(slot.wrapping_mul(elem_size));
            elems.push(self.at_depth(elem, at, depth + 1));
        }
        Some(Value::Seq {
            ty: name.to_string(),
            elems,
            truncated: take < len as usize,
        })
    }

    /// The entries of a hashbrown table (std's `HashMap` / `HashSet`), as `(key, value)` tuples
    /// (keys alone for a set), sorted so the same contents always read the same.
    fn hash_table(
        &self,
        name: &str,
        ty: TypeId,
        bytes: &[u8],
        depth: u32,
        set: bool,
    ) -> Option<Value> {
        let (table_ty, table_at) = self.find_struct(ty, "hashbrown::raw::RawTable<", 0, 0)?;
        let elem = match &self.types.get(table_ty)?.kind {
            TypeKind::Struct { params, .. } => *params.first()?,
            _ => return None,
        };
        let inner = self.types.member(table_ty, "table")?;
        let word = |n: &str| -> Option<u64> {
            let at = self.first_named(inner.ty, n, 0, 0)?;
            slice(
                bytes,
                table_at.wrapping_add(inner.offset).wrapping_add(at),
                8,
            )
            .map(le_u64)
        };
        let (mask, ctrl, items) = (word("bucket_mask")?, word("ctrl")?, word("items")?);
        let elem_size = self.types.get(elem)?.size;
        let buckets = mask.checked_add(1)?;
        if buckets > 1 << 24 || items > buckets || depth >= self.limits.max_depth {
            return Some(unavailable(name, "hash table out of shape"));
        }
        let mut control = vec![0u8; buckets as usize];
        if !self.mem.read(ctrl, &mut control) {
            return Some(unavailable(name, "hash table control bytes unreadable"));
        }
        let mut elems = Vec::new();
        for (i, c) in control.iter().enumerate() {
            if c & 0x80 != 0 {
                continue; // empty or deleted
            }
            if elems.len() == self.limits.max_elems {
                break;
            }
            let at = ctrl.wrapping_sub((i as u64 + 1).wrapping_mul(elem_size));
            let entry = self.at_depth(elem, at, depth + 1);
            elems.push(match entry {
                Value::Tuple { mut elems, .. } if set && !elems.is_empty() => elems.swap_remove(0),
                other => other,
            });
        }
        elems.sort_by_cached_key(|v| format!("{v:?}"));
        let truncated = (elems.len() as u64) < items;
        Some(Value::Seq {
            ty: name.to_string(),
            elems,
            truncated,
        })
    }

    /// The entries of a B-tree map (or the keys of a set), in key order: an in-order walk of its
    /// nodes (`len` keys and values per node; internal nodes have `len + 1` edges after them).
    fn btree(&self, name: &str, ty: TypeId, bytes: &[u8], depth: u32, set: bool) -> Option<Value> {
        let (root_ty, root_at) =
            self.find_struct(ty, "alloc::collections::btree::node::NodeRef<", 0, 0)?;
        let field = |t: TypeId, at: u64, n: &str| -> Option<u64> {
            let off = self.first_named(t, n, 0, 0)?;
            slice(bytes, at.wrapping_add(off), 8).map(le_u64)
        };
        let length = field(ty, 0, "length")?;
        let (height, node) = (
            field(root_ty, root_at, "height")?,
            field(root_ty, root_at, "node")?,
        );
        if node == 0 || length == 0 {
            return Some(Value::Seq {
                ty: name.to_string(),
                elems: Vec::new(),
                truncated: false,
            });
        }
        // LeafNode<K, V>: the pointee of the root's `node` pointer.
        let node_member = self.types.member(root_ty, "node")?;
        let leaf = self.pointee_under(node_member.ty, 0)?;
        let leaf_size = self.types.get(leaf)?.size;
        let len_at = self.types.member(leaf, "len")?.offset;
        let keys = self.types.member(leaf, "keys")?.clone();
        let vals = self.types.member(leaf, "vals").cloned();
        let (TypeKind::Array { elem: key_slot, .. }, vals_kind) = (
            &self.types.get(keys.ty)?.kind,
            vals.as_ref()
                .and_then(|v| self.types.get(v.ty))
                .map(|t| &t.kind),
        ) else {
            return None;
        };
        let key_size = self.types.get(*key_slot)?.size;
        let (key_ty, key_inner) = self.unwrap_slot(*key_slot)?;
        let val = match (vals_kind, &vals) {
            (Some(TypeKind::Array { elem, .. }), Some(v)) => {
                let (vt, vi) = self.unwrap_slot(*elem)?;
                Some((v.offset, self.types.get(*elem)?.size, vt, vi))
            }
            _ => None,
        };
        if height > 16 || depth >= self.limits.max_depth {
            return Some(unavailable(name, "B-tree out of shape"));
        }
        let edges_at = leaf_size.div_ceil(8) * 8;
        let mut elems = Vec::new();
        let mut stack = vec![(node, height, 0u64)]; // (node, height, next index)
        let mut steps = 0;
        while let Some((n, h, i)) = stack.pop() {
            steps += 1;
            if elems.len() >= self.limits.max_elems || steps > 100_000 {
                break;
            }
            let mut len_buf = [0u8; 2];
            if !self.mem.read(n.wrapping_add(len_at), &mut len_buf) {
                return Some(unavailable(name, "B-tree node unreadable"));
            }
            let len = u16::from_le_bytes(len_buf) as u64;
            if len > 11 {
                return Some(unavailable(name, "B-tree out of shape"));
            }
            let edge = |k: u64| -> Option<u64> {
                let mut b = [0u8; 8];
                let at = n.wrapping_add(edges_at).wrapping_add(k * 8);
                self.mem.read(at, &mut b).then(|| u64::from_le_bytes(b))
            };
            let entry = |k: u64| {
                self.btree_entry(n, k, &keys, key_size, key_ty, key_inner, val, depth, set)
            };
            if h == 0 {
                elems.extend((0..len).map(entry));
                continue;
            }
            // Internal node, state i: edge i's subtree is next; key i-1 (if any) comes first,
            // its subtree (edge i-1) having just been walked.
            if i > 0 && i <= len {
                elems.push(entry(i - 1));
            }
            if i <= len {
                let Some(child) = edge(i) else { break };
                stack.push((n, h, i + 1));
                stack.push((child, h - 1, 0));
            }
        }
        let truncated = (elems.len() as u64) < length;
        Some(Value::Seq {
            ty: name.to_string(),
            elems,
            truncated,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn btree_entry(
        &self,
        node: u64,
        k: u64,
        keys: &crate::types::Member,
        key_size: u64,
        key_ty: TypeId,
        key_inner: u64,
        val: Option<(u64, u64, TypeId, u64)>,
        depth: u32,
        set: bool,
    ) -> Value {
        let key_at = node
            .wrapping_add(keys.offset)
            .wrapping_add(k.wrapping_mul(key_size))
            .wrapping_add(key_inner);
        let key = self.at_depth(key_ty, key_at, depth + 1);
        match val {
            Some((vals_at, val_size, val_ty, val_inner)) if !set => {
                let val_at = node
                    .wrapping_add(vals_at)
                    .wrapping_add(k.wrapping_mul(val_size))
                    .wrapping_add(val_inner);
                let value = self.at_depth(val_ty, val_at, depth + 1);
                Value::Tuple {
                    ty: format!("({}, {})", key.type_name(), value.type_name()),
                    elems: vec![key, value],
                }
            }
            _ => key,
        }
    }

    /// The type inside a `MaybeUninit<T>` slot (through `ManuallyDrop` / `MaybeDangling`), and
    /// its offset in the slot.
    fn unwrap_slot(&self, mut ty: TypeId) -> Option<(TypeId, u64)> {
        let mut at = 0;
        for _ in 0..8 {
            let t = self.types.get(ty)?;
            let wrapper = t.name.starts_with("core::mem::maybe_uninit::MaybeUninit<")
                || t.name
                    .starts_with("core::mem::manually_drop::ManuallyDrop<")
                || t.name
                    .starts_with("core::mem::maybe_dangling::MaybeDangling<");
            if !wrapper {
                return Some((ty, at));
            }
            let inner = match &t.kind {
                TypeKind::Union { members } | TypeKind::Struct { members, .. } => members
                    .iter()
                    .find(|m| m.name == "value" || m.name == "__0")
                    .or(members.last())?,
                _ => return None,
            };
            at += inner.offset;
            ty = inner.ty;
        }
        None
    }

    /// The pointee type of the first pointer under `ty`.
    fn pointee_under(&self, ty: TypeId, depth: u32) -> Option<TypeId> {
        if depth > 8 {
            return None;
        }
        match &self.types.get(ty)?.kind {
            TypeKind::Pointer { pointee } => *pointee,
            TypeKind::Struct { members, .. } => members
                .iter()
                .find_map(|m| self.pointee_under(m.ty, depth + 1)),
            _ => None,
        }
    }

    /// Offset of the first member called `name` at any depth under `ty` (first in layout order).
    fn first_named(&self, ty: TypeId, name: &str, base: u64, depth: u32) -> Option<u64> {
        if depth > 8 {
            return None;
        }
        let TypeKind::Struct { members, .. } = &self.types.get(ty)?.kind else {
            return None;
        };
        if let Some(m) = members.iter().find(|m| m.name == name) {
            // A newtype (`UsizeNoHighBit`) holds the number in its only field.
            return Some(
                self.first_scalar(m.ty, base + m.offset, 0)
                    .unwrap_or(base + m.offset),
            );
        }
        members
            .iter()
            .find_map(|m| self.first_named(m.ty, name, base + m.offset, depth + 1))
    }

    fn first_scalar(&self, ty: TypeId, base: u64, depth: u32) -> Option<u64> {
        match &self.types.get(ty)?.kind {
            TypeKind::Base(_) | TypeKind::Pointer { .. } => Some(base),
            TypeKind::Struct { members, .. } if depth < 8 => members
                .iter()
                .find_map(|m| self.first_scalar(m.ty, base + m.offset, depth + 1)),
            _ => None,
        }
    }

    /// The first struct member (at any depth) whose type name starts with `prefix`.
    fn find_struct(
        &self,
        ty: TypeId,
        prefix: &str,
        base: u64,
        depth: u32,
    ) -> Option<(TypeId, u64)> {
        if depth > 8 {
            return None;
        }
        let t = self.types.get(ty)?;
        if t.name.starts_with(prefix) {
            return Some((ty, base));
        }
        match &t.kind {
            TypeKind::Struct { members, .. } => members.iter().find_map(|m| {
                self.find_struct(m.ty, prefix, base.wrapping_add(m.offset), depth + 1)
            }),
            // Inside `Option<NodeRef>` and the like: the variants' own structs.
            TypeKind::Enum { variants, .. } => variants.iter().find_map(|v| {
                self.find_struct(v.ty, prefix, base.wrapping_add(v.offset), depth + 1)
            }),
            _ => None,
        }
    }

    /// (data pointer, length) of a `Vec`: the first pointer found under `buf`, and `len`.
    pub(crate) fn vec_parts(&self, vec_ty: TypeId, bytes: &[u8]) -> Option<(u64, u64)> {
        let len = self.types.member(vec_ty, "len")?;
        let len = le_u64(slice(bytes, len.offset, 8)?);
        let buf = self.types.member(vec_ty, "buf")?;
        let ptr_offset = self.first_pointer(buf.ty, 0, 0)?;
        let ptr = le_u64(slice(bytes, buf.offset + ptr_offset, 8)?);
        Some((ptr, len))
    }

    /// The `Vec` a chain of one-field wrappers holds (`PathBuf` → `OsString` → `Buf` →
    /// `Vec<u8>`), with its offset.
    fn inner_vec(&self, ty: TypeId, base: u64, depth: u32) -> Option<(TypeId, usize)> {
        if depth > 4 {
            return None;
        }
        if self.types.name(ty).starts_with("alloc::vec::Vec<") {
            return Some((ty, base as usize));
        }
        match &self.types.get(ty)?.kind {
            TypeKind::Struct { members, .. } if members.len() == 1 => {
                self.inner_vec(members[0].ty, base + members[0].offset, depth + 1)
            }
            _ => None,
        }
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

    /// `str::chars()` not yet run to its end (`Chars { iter: slice::Iter<u8> { ptr, end_or_len
    /// } }`): the text it has left, from `ptr` to `end_or_len` (an end pointer for `u8`), with
    /// the type kept, so a test writes `"aeiou".chars()`. `None` when the layout is not that.
    fn chars(&self, ty: TypeId, bytes: &[u8]) -> Option<Value> {
        let iter = self.types.member(ty, "iter")?;
        let ptr = self.types.member(iter.ty, "ptr")?;
        let end = self.types.member(iter.ty, "end_or_len")?;
        // `ptr` is a `NonNull<u8>`: one pointer, at its start.
        let start = le_u64(slice(bytes, iter.offset + ptr.offset, 8)?);
        let end = le_u64(slice(bytes, iter.offset + end.offset, 8)?);
        let len = end.checked_sub(start)?;
        let (value, truncated) = self.utf8(start, len);
        Some(Value::Str {
            ty: "core::str::iter::Chars".to_string(),
            value,
            truncated,
        })
    }

    /// A slice iterator not yet run to its end (`slice::Iter<T> { ptr, end_or_len }`), or a
    /// vector's (`vec::IntoIter<T> { buf, cap, ptr, end, .. }`): the elements it has left, with
    /// the type kept, as a sequence. Its pointers change from run to run and say nothing a test
    /// can check; what the iterator will still yield does (a `vec::IntoIter`'s buffer beyond
    /// them holds nothing it yields). The end is a pointer, or when `T` has no size the count
    /// left (slices) or the start plus that count (vectors). `None` when the layout is not that.
    fn slice_iter(
        &self,
        name: &str,
        ty: TypeId,
        bytes: &[u8],
        elem: TypeId,
        (ptr, end): (&str, &str),
        depth: u32,
    ) -> Option<Value> {
        let ptr = self.types.member(ty, ptr)?;
        let end = self.types.member(ty, end)?;
        let start = le_u64(slice(bytes, ptr.offset, 8)?);
        let end = le_u64(slice(bytes, end.offset, 8)?);
        let elem_size = self.types.get(elem)?.size;
        let len = if elem_size == 0 {
            if name.starts_with(VEC_INTO_ITER) {
                end.checked_sub(start)?
            } else {
                end
            }
        } else {
            let span = end.checked_sub(start)?;
            if span % elem_size != 0 {
                return None;
            }
            span / elem_size
        };
        Some(self.seq(name, elem, start, len, depth))
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

/// `&Path`, `PathBuf`, `&OsStr` and `OsString` (as DWARF names them): bytes read as text.
pub(crate) fn is_os_text(name: &str) -> bool {
    matches!(
        name,
        "&std::path::Path"
            | "&mut std::path::Path"
            | "std::path::PathBuf"
            | "&std::ffi::os_str::OsStr"
            | "&mut std::ffi::os_str::OsStr"
            | "std::ffi::os_str::OsString"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::{FileAddr, LoadBias};
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

    const BIAS: u64 = 0x5555_0000_0000;
    const EARTH_VTABLE: u64 = 0x5_8000;
    const MOON_VTABLE: u64 = 0x5_8020;

    fn member(name: &str, offset: u64, ty: TypeId) -> Member {
        Member {
            name: name.into(),
            offset,
            ty,
        }
    }

    fn strukt(t: &mut TypeTable, name: &str, size: u64, members: Vec<Member>) -> TypeId {
        t.push(Type {
            name: name.into(),
            size,
            kind: TypeKind::Struct {
                members,
                params: vec![],
            },
        })
    }

    /// `&dyn mouse::Planet` and `Box<dyn mouse::Planet>`, with two implementations: the
    /// zero-sized `Earth` and `Moon { radius: i32 }`. Returns (table, &dyn, Box<dyn>).
    fn table_with_planets(bias: Option<u64>) -> (TypeTable, TypeId, TypeId) {
        let mut t = TypeTable::default();
        let i32_ty = t.push(Type {
            name: "i32".into(),
            size: 4,
            kind: TypeKind::Base(BaseKind::Signed),
        });
        let usize_ty = t.push(Type {
            name: "usize".into(),
            size: 8,
            kind: TypeKind::Base(BaseKind::Unsigned),
        });
        let earth = strukt(&mut t, "mouse::Earth", 0, vec![]);
        let moon = strukt(&mut t, "mouse::Moon", 4, vec![member("radius", 0, i32_ty)]);
        let dyn_ty = strukt(&mut t, "dyn mouse::Planet", 0, vec![]);
        let data_ptr = t.push(Type {
            name: "dyn mouse::Planet *".into(),
            size: 8,
            kind: TypeKind::Pointer {
                pointee: Some(dyn_ty),
            },
        });
        let words = t.push(Type {
            name: "[usize; 4]".into(),
            size: 32,
            kind: TypeKind::Array {
                elem: usize_ty,
                count: Some(4),
            },
        });
        let vtable_ptr = t.push(Type {
            name: "[usize; 4] *".into(),
            size: 8,
            kind: TypeKind::Pointer {
                pointee: Some(words),
            },
        });
        let fat = |t: &mut TypeTable, name: &str| {
            strukt(
                t,
                name,
                16,
                vec![
                    member("pointer", 0, data_ptr),
                    member("vtable", 8, vtable_ptr),
                ],
            )
        };
        let r = fat(&mut t, "&dyn mouse::Planet");
        let b = fat(
            &mut t,
            "alloc::boxed::Box<dyn mouse::Planet, alloc::alloc::Global>",
        );
        t.add_vtable(FileAddr(EARTH_VTABLE), earth);
        t.add_vtable(FileAddr(MOON_VTABLE), moon);
        if let Some(bias) = bias {
            t.set_load_bias(LoadBias(bias));
        }
        (t, r, b)
    }

    fn fat_bytes(data: u64, vtable: u64) -> Vec<u8> {
        let mut bytes = data.to_le_bytes().to_vec();
        bytes.extend_from_slice(&vtable.to_le_bytes());
        bytes
    }

    #[test]
    fn a_trait_object_of_a_zero_sized_type_is_its_value_without_reading_memory() {
        let (types, r, _) = table_with_planets(Some(BIAS));
        // Nothing is readable: 0x1 is a dangling pointer and must not be read.
        let mem = Region(0x1000, vec![]);
        let d = Decoder {
            types: &types,
            mem: &mem,
            limits: Limits::default(),
        };
        assert_eq!(
            d.bytes(r, &fat_bytes(0x1, BIAS + EARTH_VTABLE)),
            Value::Ref {
                ty: "&dyn mouse::Planet".into(),
                addr: 0x1,
                target: Box::new(Value::Struct {
                    ty: "mouse::Earth".into(),
                    fields: vec![],
                }),
            }
        );
    }

    #[test]
    fn a_boxed_trait_object_is_read_as_its_concrete_type() {
        let (types, _, b) = table_with_planets(Some(BIAS));
        let mem = Region(0x2000, 7i32.to_le_bytes().to_vec());
        let d = Decoder {
            types: &types,
            mem: &mem,
            limits: Limits::default(),
        };
        assert_eq!(
            d.bytes(b, &fat_bytes(0x2000, BIAS + MOON_VTABLE)),
            Value::Ref {
                ty: "alloc::boxed::Box<dyn mouse::Planet, alloc::alloc::Global>".into(),
                addr: 0x2000,
                target: Box::new(Value::Struct {
                    ty: "mouse::Moon".into(),
                    fields: vec![Field {
                        name: "radius".into(),
                        value: Value::Int {
                            ty: "i32".into(),
                            value: 7,
                        },
                    }],
                }),
            }
        );
    }

    #[test]
    fn an_unknown_vtable_leaves_two_pointers() {
        let unknown = |bias: Option<u64>, vtable: u64| {
            let (types, r, _) = table_with_planets(bias);
            let mem = Region(0x2000, vec![0; 64]);
            let d = Decoder {
                types: &types,
                mem: &mem,
                limits: Limits::default(),
            };
            assert_eq!(
                d.bytes(r, &fat_bytes(0x2000, vtable)),
                Value::Struct {
                    ty: "&dyn mouse::Planet".into(),
                    fields: vec![
                        Field {
                            name: "pointer".into(),
                            value: Value::Pointer {
                                ty: "dyn mouse::Planet *".into(),
                                addr: 0x2000,
                            },
                        },
                        Field {
                            name: "vtable".into(),
                            value: Value::Pointer {
                                ty: "[usize; 4] *".into(),
                                addr: vtable,
                            },
                        },
                    ],
                }
            );
        };
        unknown(Some(BIAS), 0xdead_beef);
        // The ELF address without the load bias is not the runtime address.
        unknown(Some(BIAS), MOON_VTABLE);
        // Without a load bias no vtable can be matched.
        unknown(None, BIAS + MOON_VTABLE);
    }

    #[test]
    fn a_trait_object_at_the_depth_limit_or_behind_null_is_a_pointer() {
        let (types, r, _) = table_with_planets(Some(BIAS));
        let mem = Region(0x2000, vec![0; 64]);
        let d = Decoder {
            types: &types,
            mem: &mem,
            limits: Limits {
                max_depth: 0,
                ..Limits::default()
            },
        };
        let pointer = |addr| Value::Pointer {
            ty: "&dyn mouse::Planet".into(),
            addr,
        };
        assert_eq!(
            d.bytes(r, &fat_bytes(0x2000, BIAS + MOON_VTABLE)),
            pointer(0x2000)
        );
        let d = Decoder {
            limits: Limits::default(),
            ..d
        };
        assert_eq!(d.bytes(r, &fat_bytes(0, BIAS + MOON_VTABLE)), pointer(0));
        // Unreadable data behind a known vtable: unavailable, not a panic.
        let v = d.bytes(r, &fat_bytes(0xdead_0000, BIAS + MOON_VTABLE));
        assert!(!v.is_exact());
        // Garbage of every length.
        let mut seed = 0x9e37_79b9u64;
        for len in 0..40 {
            let mut bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 33) as u8
                })
                .collect();
            let _ = d.bytes(r, &bytes);
            if bytes.len() >= 16 {
                bytes[8..16].copy_from_slice(&(BIAS + MOON_VTABLE).to_le_bytes());
                let _ = d.bytes(r, &bytes);
            }
        }
    }

    #[test]
    fn an_rc_is_a_reference_to_its_value_not_its_counts() {
        let mut t = TypeTable::default();
        let usize_ty = t.push(Type {
            name: "usize".into(),
            size: 8,
            kind: TypeKind::Base(BaseKind::Unsigned),
        });
        let i32_ty = t.push(Type {
            name: "i32".into(),
            size: 4,
            kind: TypeKind::Base(BaseKind::Signed),
        });
        let inner = strukt(
            &mut t,
            "alloc::rc::RcInner<i32>",
            24,
            vec![
                member("strong", 0, usize_ty),
                member("weak", 8, usize_ty),
                member("value", 16, i32_ty),
            ],
        );
        let raw = t.push(Type {
            name: "alloc::rc::RcInner<i32> *".into(),
            size: 8,
            kind: TypeKind::Pointer {
                pointee: Some(inner),
            },
        });
        let non_null = strukt(
            &mut t,
            "core::ptr::non_null::NonNull<alloc::rc::RcInner<i32>>",
            8,
            vec![member("pointer", 0, raw)],
        );
        let rc = strukt(
            &mut t,
            "alloc::rc::Rc<i32, alloc::alloc::Global>",
            8,
            vec![member("ptr", 0, non_null)],
        );
        let mut heap = 2u64.to_le_bytes().to_vec();
        heap.extend_from_slice(&1u64.to_le_bytes());
        heap.extend_from_slice(&(-5i32).to_le_bytes());
        let mem = Region(0x3000, heap);
        let d = Decoder {
            types: &t,
            mem: &mem,
            limits: Limits::default(),
        };
        assert_eq!(
            d.bytes(rc, &0x3000u64.to_le_bytes()),
            Value::Ref {
                ty: "alloc::rc::Rc<i32, alloc::alloc::Global>".into(),
                addr: 0x3010,
                target: Box::new(Value::Int {
                    ty: "i32".into(),
                    value: -5,
                }),
            }
        );
        assert!(!d.bytes(rc, &0x9000u64.to_le_bytes()).is_exact());
    }
}

#[cfg(test)]
mod fuzz {
    //! Arbitrary type tables (cycles, dangling ids, lying sizes) over arbitrary bytes: the
    //! decoder must return a value for every type without panicking.

    use super::*;
    use crate::location::Memory;
    use crate::types::{Member, Type, Variant};
    use proptest::prelude::*;

    struct Region(u64, Vec<u8>);
    impl Memory for Region {
        fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
            let Some(start) = addr.checked_sub(self.0) else {
                return false;
            };
            let Ok(start) = usize::try_from(start) else {
                return false;
            };
            match self.1.get(start..start.saturating_add(buf.len())) {
                Some(s) if s.len() == buf.len() => {
                    buf.copy_from_slice(s);
                    true
                }
                _ => false,
            }
        }
    }

    const NAMES: &[&str] = &[
        "alloc::collections::vec_deque::VecDeque<u8>",
        "std::collections::hash::map::HashMap<u8, u8>",
        "std::collections::hash::set::HashSet<u8>",
        "hashbrown::raw::RawTable<(u8, u8)>",
        "alloc::collections::btree::map::BTreeMap<u8, u8>",
        "alloc::collections::btree::node::NodeRef<u8>",
        "u8",
        "i32",
        "f64",
        "char",
        "&str",
        "alloc::string::String",
        "alloc::vec::Vec<u8>",
        "&[u8]",
        "&dyn T",
        "(u8, u32)",
        "&u8",
        "char *",
        "alloc::rc::Rc<u8>",
        "Option<u8>",
        "S",
    ];

    fn kind() -> impl Strategy<Value = TypeKind> {
        let id = 0usize..20;
        let member = (id.clone(), 0u64..64).prop_map(|(ty, offset)| Member {
            name: [
                "data_ptr",
                "length",
                "vec",
                "buf",
                "len",
                "ptr",
                "pointer",
                "vtable",
                "x",
                "head",
                "cap",
                "table",
                "bucket_mask",
                "ctrl",
                "items",
                "height",
                "node",
                "keys",
                "vals",
            ][ty % 19]
                .into(),
            offset,
            ty,
        });
        prop_oneof![
            Just(TypeKind::Unit),
            prop_oneof![
                Just(BaseKind::Bool),
                Just(BaseKind::Char),
                Just(BaseKind::Signed),
                Just(BaseKind::Unsigned),
                Just(BaseKind::Float)
            ]
            .prop_map(TypeKind::Base),
            proptest::option::of(id.clone()).prop_map(|pointee| TypeKind::Pointer { pointee }),
            (
                proptest::collection::vec(member.clone(), 0..4),
                proptest::collection::vec(id.clone(), 0..2)
            )
                .prop_map(|(members, params)| TypeKind::Struct { members, params }),
            (
                proptest::option::of(member.clone()),
                proptest::collection::vec(
                    (proptest::option::of(0u128..4), id.clone(), 0u64..16),
                    0..4
                )
            )
                .prop_map(|(tag, vs)| TypeKind::Enum {
                    tag,
                    variants: vs
                        .into_iter()
                        .map(|(discr, ty, offset)| Variant {
                            discr,
                            name: "V".into(),
                            offset,
                            ty
                        })
                        .collect(),
                }),
            (id.clone(), proptest::option::of(0u64..100_000))
                .prop_map(|(elem, count)| TypeKind::Array { elem, count }),
            Just(TypeKind::Opaque),
        ]
    }

    fn table() -> impl Strategy<Value = TypeTable> {
        proptest::collection::vec((0usize..NAMES.len(), 0u64..80, kind()), 1..20).prop_map(|ts| {
            let mut table = TypeTable::default();
            for (name, size, kind) in ts {
                table.push(Type {
                    name: NAMES[name].into(),
                    size,
                    kind,
                });
            }
            table
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn any_type_table_over_any_bytes_decodes_without_panicking(
            types in table(),
            bytes in proptest::collection::vec(any::<u8>(), 0..96),
            memory in proptest::collection::vec(any::<u8>(), 0..512),
            addr in prop_oneof![0x1000u64..0x1200, any::<u64>()],
        ) {
            let mem = Region(0x1000, memory);
            let limits = Limits { max_depth: 3, max_elems: 16, max_string: 64 };
            let d = Decoder { types: &types, mem: &mem, limits };
            for ty in 0..22 {
                let _ = d.bytes(ty, &bytes);
                let _ = d.at(ty, addr);
            }
        }
    }
}
