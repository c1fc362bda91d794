//! Object identity: which object each `self` and reference argument referred to, and which
//! constructor-like call made it. An object is keyed by (address, type); a constructor that
//! returns through the hidden return pointer makes a new object at that address (so a reused
//! address is a new object), and a constructor's result returned in registers is linked to the
//! object first seen later in the same state.

use std::collections::{HashMap, VecDeque};

use carve_storage::{Arg, ArgObject, CallId, ObjectId, ObjectInfo, Value};

/// Constructor results not yet seen at an address, newest last.
const MAX_PENDING: usize = 256;

#[derive(Debug, Default)]
pub(crate) struct Objects {
    next: u64,
    /// The objects at each address, by type (a struct and its first field share an address).
    live: HashMap<u64, Vec<(String, ObjectId)>>,
    pending: VecDeque<(String, Value, CallId)>,
}

/// The object a value is, when it is one: a reference to a struct or enum (not a pointer to
/// nothing, not a zero-sized dangling `0x1`).
fn object(value: &Value) -> Option<(u64, &Value)> {
    match value {
        Value::Ref { addr, target, .. } if *addr > 0x1000 => match &**target {
            t @ (Value::Struct { .. } | Value::Enum { .. }) => Some((*addr, t)),
            _ => None,
        },
        _ => None,
    }
}

/// `account::Account` of `core::result::Result<account::Account, ...>`: the type without its
/// generic arguments.
fn bare(type_name: &str) -> &str {
    type_name.split('<').next().unwrap_or(type_name)
}

impl Objects {
    /// The objects `args` refer to; new ones are returned as events to record first.
    pub(crate) fn of_args(&mut self, args: &[Arg]) -> (Vec<ArgObject>, Vec<ObjectInfo>) {
        let mut refs = Vec::new();
        let mut created = Vec::new();
        for arg in args {
            let Some((addr, target)) = object(&arg.value) else {
                continue;
            };
            // Called on every traced call: look up without allocating.
            let ty = target.type_name();
            let known = self
                .live
                .get(&addr)
                .and_then(|at| at.iter().find(|(t, _)| t == ty))
                .map(|(_, id)| *id);
            let id = match known {
                Some(id) => id,
                None => {
                    // A constructor's result in this very state, most recent first.
                    let made_by = self
                        .pending
                        .iter()
                        .rposition(|(t, v, _)| t == ty && v == target)
                        .and_then(|i| self.pending.remove(i))
                        .map(|(_, _, call)| call);
                    let info = self.create(addr, ty.to_string(), made_by);
                    let id = info.id;
                    created.push(info);
                    id
                }
            };
            refs.push(ArgObject {
                arg: arg.name.clone(),
                object: id,
            });
        }
        (refs, created)
    }

    /// Notes what constructor-like `call` of `type_path` returned; `at` is the hidden return
    /// pointer when the value came back through memory. Returns a new object to record when
    /// the address is known.
    pub(crate) fn constructed(
        &mut self,
        call: CallId,
        type_path: &str,
        ret: &Value,
        at: Option<u64>,
    ) -> Option<ObjectInfo> {
        let (value, wrapped) = match ret {
            Value::Enum {
                variant, fields, ..
            } if (variant == "Ok" || variant == "Some") && fields.len() == 1 => {
                (&fields[0].value, true)
            }
            other => (other, false),
        };
        // `lru::LruCache<K,V>::new` constructs an `lru::LruCache<u64, String, ...>`: the impl's
        // generic parameters are no part of the type's path.
        if bare(value.type_name()) != bare(type_path) {
            return None;
        }
        match at {
            // Returned through the hidden pointer: the object is at that address from now on.
            Some(addr) if !wrapped => {
                Some(self.create(addr, value.type_name().to_string(), Some(call)))
            }
            _ => {
                self.pending
                    .push_back((value.type_name().to_string(), value.clone(), call));
                if self.pending.len() > MAX_PENDING {
                    self.pending.pop_front();
                }
                None
            }
        }
    }

    fn create(&mut self, addr: u64, ty: String, created_by: Option<CallId>) -> ObjectInfo {
        self.next += 1;
        let id = ObjectId(self.next);
        let at = self.live.entry(addr).or_default();
        match at.iter_mut().find(|(t, _)| *t == ty) {
            // A new object where one of this type was: the address was reused.
            Some(slot) => slot.1 = id,
            None => at.push((ty.clone(), id)),
        }
        ObjectInfo {
            id,
            type_name: ty,
            addr,
            created_by,
        }
    }
}

/// The type a function constructs when it is constructor-like: `a::B` for `a::B::new`
/// (an associated function of a type, by Rust's naming of types in CamelCase).
pub(crate) fn constructed_type(path: &str) -> Option<String> {
    let (owner, _) = path.rsplit_once("::")?;
    let last = owner.rsplit("::").next()?;
    last.chars()
        .next()
        .is_some_and(char::is_uppercase)
        .then(|| owner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_storage::Field;

    fn account(balance: i128) -> Value {
        Value::Struct {
            ty: "account::Account".into(),
            fields: vec![Field {
                name: "balance".into(),
                value: Value::Int {
                    ty: "i64".into(),
                    value: balance,
                },
            }],
        }
    }

    fn by_ref(addr: u64, v: Value) -> Arg {
        Arg {
            name: "self".into(),
            value: Value::Ref {
                ty: "&account::Account".into(),
                addr,
                target: Box::new(v),
            },
        }
    }

    #[test]
    fn an_object_is_linked_to_the_constructor_that_returned_its_state() {
        let mut o = Objects::default();
        let ok = Value::Enum {
            ty: "core::result::Result<account::Account, account::AccountError>".into(),
            variant: "Ok".into(),
            fields: vec![Field {
                name: "__0".into(),
                value: account(100),
            }],
        };
        assert_eq!(
            o.constructed(CallId(1), "account::Account", &ok, Some(0x5000)),
            None
        );
        let (refs, created) = o.of_args(&[by_ref(0x7000, account(100))]);
        assert_eq!(created[0].created_by, Some(CallId(1)));
        assert_eq!(refs[0].object, created[0].id);
        // Seen again (in another state): the same object.
        let (again, created) = o.of_args(&[by_ref(0x7000, account(50))]);
        assert!(created.is_empty());
        assert_eq!(again[0].object, refs[0].object);
    }

    #[test]
    fn a_constructor_returning_through_memory_makes_a_new_object_at_a_reused_address() {
        let mut o = Objects::default();
        let first = o
            .constructed(CallId(1), "account::Account", &account(1), Some(0x7000))
            .unwrap();
        let second = o
            .constructed(CallId(2), "account::Account", &account(2), Some(0x7000))
            .unwrap();
        assert_ne!(first.id, second.id);
        let (refs, created) = o.of_args(&[by_ref(0x7000, account(2))]);
        assert!(created.is_empty());
        assert_eq!(refs[0].object, second.id);
    }

    #[test]
    fn a_constructor_in_a_generic_impl_makes_the_instance_it_returns() {
        let mut o = Objects::default();
        let cache = |len: u128| Value::Struct {
            ty: "lru::LruCache<u64, alloc::string::String>".into(),
            fields: vec![Field {
                name: "len".into(),
                value: Value::Uint {
                    ty: "usize".into(),
                    value: len,
                },
            }],
        };
        let made = o
            .constructed(CallId(3), "lru::LruCache<K,V>", &cache(0), Some(0x7000))
            .expect("`LruCache<K,V>::new` constructs an `LruCache<u64, String>`");
        assert_eq!(made.created_by, Some(CallId(3)));
        let (refs, created) = o.of_args(&[Arg {
            name: "self".into(),
            value: Value::Ref {
                ty: "&mut lru::LruCache<u64, alloc::string::String>".into(),
                addr: 0x7000,
                target: Box::new(cache(1)),
            },
        }]);
        assert!(created.is_empty());
        assert_eq!(refs[0].object, made.id);
    }

    #[test]
    fn only_associated_functions_of_types_are_constructor_like() {
        assert_eq!(
            constructed_type("account::Account::new").as_deref(),
            Some("account::Account")
        );
        assert_eq!(constructed_type("account::format_cents"), None);
        assert_eq!(constructed_type("main"), None);
    }
}
