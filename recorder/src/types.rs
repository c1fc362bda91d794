//! The program's types lowered from DWARF into plain data the value decoder can walk without
//! touching gimli: sizes, member offsets, enum variants and discriminants, pointee types.

use std::collections::HashMap;

use crate::addr::{FileAddr, LoadBias, RuntimeAddr};

/// Index of a lowered type in a [`TypeTable`].
pub type TypeId = usize;

/// A DWARF type, lowered.
#[derive(Debug, Clone, PartialEq)]
pub struct Type {
    /// Full path name as Rust (or C) spells it: `core::option::Option<i32>`, `&str`, `int`.
    pub name: String,
    pub size: u64,
    pub kind: TypeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseKind {
    Bool,
    /// Rust `char` (DW_ATE_UTF).
    Char,
    Signed,
    Unsigned,
    Float,
}

/// The name of the opaque type a function signature lowers to (DWARF's
/// `DW_TAG_subroutine_type`): what a function pointer points to.
pub const SIGNATURE: &str = "fn";

#[derive(Debug, Clone, PartialEq)]
pub enum TypeKind {
    Base(BaseKind),
    /// `()` and other zero-sized base types.
    Unit,
    /// References, raw pointers and `Box`; `pointee` is `None` for `void *` and unknown targets.
    Pointer {
        pointee: Option<TypeId>,
    },
    Struct {
        members: Vec<Member>,
        /// DW_TAG_template_type_parameter children (e.g. `T` of `Vec<T>`), in order.
        params: Vec<TypeId>,
    },
    /// A Rust enum (a structure holding a DW_TAG_variant_part).
    Enum {
        /// The discriminant member; `None` for single-variant enums.
        tag: Option<Member>,
        variants: Vec<Variant>,
    },
    /// A C-like enum (DW_TAG_enumeration_type).
    CEnum {
        signed: bool,
        enumerators: Vec<(String, i128)>,
    },
    Union {
        members: Vec<Member>,
    },
    Array {
        elem: TypeId,
        count: Option<u64>,
    },
    /// Function types and anything carve does not model: decoded as raw bytes.
    Opaque,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub name: String,
    pub offset: u64,
    pub ty: TypeId,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// DW_AT_discr_value; `None` for the dataful variant of a niche layout (matches otherwise).
    pub discr: Option<u128>,
    pub name: String,
    pub offset: u64,
    /// The variant's own structure type (its fields are that struct's members).
    pub ty: TypeId,
}

/// All lowered types, shared by every decoder; keyed by DIE offset in `.debug_info`.
#[derive(Debug, Default, Clone)]
pub struct TypeTable {
    types: Vec<Type>,
    by_die: HashMap<usize, TypeId>,
    /// Trait-object vtables (by file address) → the concrete type behind them.
    vtables: HashMap<FileAddr, TypeId>,
    /// The executable's load bias, once known: vtable pointers read from the process are
    /// runtime addresses.
    load_bias: Option<LoadBias>,
}

impl TypeTable {
    pub fn get(&self, id: TypeId) -> Option<&Type> {
        self.types.get(id)
    }

    pub fn by_die(&self, die: usize) -> Option<TypeId> {
        self.by_die.get(&die).copied()
    }

    /// Reserves an id for the DIE before its members are lowered, so recursive types terminate.
    pub(crate) fn reserve(&mut self, die: usize, name: String) -> TypeId {
        let id = self.types.len();
        self.types.push(Type {
            name,
            size: 0,
            kind: TypeKind::Opaque,
        });
        self.by_die.insert(die, id);
        id
    }

    pub(crate) fn fill(&mut self, id: TypeId, ty: Type) {
        if let Some(slot) = self.types.get_mut(id) {
            *slot = ty;
        }
    }

    /// Adds a type that has no DIE of its own (tests build tables by hand).
    #[cfg(test)]
    pub fn push(&mut self, ty: Type) -> TypeId {
        self.types.push(ty);
        self.types.len() - 1
    }

    /// Number of types lowered so far (ids are `0..len()`).
    pub(crate) fn len(&self) -> usize {
        self.types.len()
    }

    /// Records that the vtable at `addr` (in the ELF) belongs to concrete type `ty`.
    pub(crate) fn add_vtable(&mut self, addr: FileAddr, ty: TypeId) {
        self.vtables.insert(addr, ty);
    }

    /// Tells the table where the executable was loaded, so trait objects read from the process
    /// can be matched with their vtables. Call once the process is running.
    pub(crate) fn set_load_bias(&mut self, bias: LoadBias) {
        self.load_bias = Some(bias);
    }

    /// Whether the load bias is known yet.
    pub(crate) fn has_load_bias(&self) -> bool {
        self.load_bias.is_some()
    }

    /// The concrete type behind a trait object whose vtable pointer (read from the process) is
    /// `vtable`; `None` when the vtable is unknown or the load bias was never set.
    pub fn vtable_type(&self, vtable: RuntimeAddr) -> Option<TypeId> {
        let file = self.load_bias?.unrelocate(vtable);
        self.vtables.get(&file).copied()
    }

    pub fn name(&self, id: TypeId) -> &str {
        self.get(id).map(|t| t.name.as_str()).unwrap_or("?")
    }

    /// The member called `name` of a struct type.
    pub fn member(&self, id: TypeId, name: &str) -> Option<&Member> {
        match &self.get(id)?.kind {
            TypeKind::Struct { members, .. } | TypeKind::Union { members } => {
                members.iter().find(|m| m.name == name)
            }
            _ => None,
        }
    }
}
