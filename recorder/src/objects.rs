//! Object identity: which object each `self` and reference argument referred to, and which
//! constructor-like call made it. An object is keyed by (address, type); a constructor that
//! returns through the hidden return pointer makes a new object at that address (so a reused
//! address is a new object), and a constructor's result returned in registers, or moved from
//! where it was returned, is linked to the object first seen later in the same state.
//!
//! An object's identity ends where another producer's result takes its place: a value seen at
//! a known object's address, in the state a constructor-like call returned *after* that object
//! was identified, is that call's new object (a program that parses values in a loop gets the
//! same stack slot for each, and was taken for one object changing state, whose history the
//! generator then replayed from the first iteration's producer: issue 30, shape 0). When the
//! state is the very state the old object had, the two are alike and a test cannot tell them
//! apart: either producer rebuilds it.

use std::collections::{HashMap, VecDeque};

use carve_storage::{Arg, ArgObject, CallId, ObjectId, ObjectInfo, Value};

/// Constructor results not yet seen at an address, per type, newest last.
const MAX_PENDING: usize = 256;

#[derive(Debug, Default)]
pub(crate) struct Objects {
    next: u64,
    /// Ticks at each identification and each constructor result, to tell which came first.
    clock: u64,
    /// The objects at each address, by type (a struct and its first field share an address).
    live: HashMap<u64, Vec<Live>>,
    /// Constructor results not linked to an object yet, by type.
    pending: HashMap<String, VecDeque<Pending>>,
}

/// An object known at an address.
#[derive(Debug)]
struct Live {
    ty: String,
    id: ObjectId,
    /// The clock when it was identified (made, or first seen).
    since: u64,
}

/// What a constructor-like call returned, to link to the object later seen in that state.
#[derive(Debug)]
struct Pending {
    value: Value,
    call: CallId,
    /// The clock when it was returned.
    at: u64,
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
            self.clock += 1;
            // Called on every traced call: look up without allocating.
            let ty = target.type_name();
            let known = self
                .live
                .get(&addr)
                .and_then(|at| at.iter().find(|l| l.ty == ty))
                .map(|l| (l.id, l.since));
            // A constructor's result in this very state, returned after the object at this
            // address (if any) was identified, most recent first.
            let newer = known.map_or(0, |(_, since)| since);
            let made_by = self.take_pending(ty, target, newer);
            let id = match (known, made_by) {
                (Some((id, _)), None) => id,
                (_, made_by) => {
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

    /// Takes the newest constructor result of type `ty` equal to `state` returned after clock
    /// `after`, and gives the call that returned it.
    fn take_pending(&mut self, ty: &str, state: &Value, after: u64) -> Option<CallId> {
        let queue = self.pending.get_mut(ty)?;
        let i = queue
            .iter()
            .rposition(|p| p.at > after && p.value == *state)?;
        queue.remove(i).map(|p| p.call)
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
        self.clock += 1;
        let ty = value.type_name().to_string();
        // A value returned through memory may still move from there (`let v = make();` into a
        // slot of its own): it is also linked to the object later seen in its state elsewhere.
        let queue = self.pending.entry(ty.clone()).or_default();
        queue.push_back(Pending {
            value: value.clone(),
            call,
            at: self.clock,
        });
        if queue.len() > MAX_PENDING {
            queue.pop_front();
        }
        match at {
            // Returned through the hidden pointer: the object is at that address from now on.
            Some(addr) if !wrapped => Some(self.create(addr, ty, Some(call))),
            _ => None,
        }
    }

    fn create(&mut self, addr: u64, ty: String, created_by: Option<CallId>) -> ObjectInfo {
        self.next += 1;
        let id = ObjectId(self.next);
        let since = self.clock;
        let at = self.live.entry(addr).or_default();
        match at.iter_mut().find(|l| l.ty == ty) {
            // A new object where one of this type was: the address was reused.
            Some(slot) => {
                slot.id = id;
                slot.since = since;
            }
            None => at.push(Live {
                ty: ty.clone(),
                id,
                since,
            }),
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

    fn ok(v: Value) -> Value {
        Value::Enum {
            ty: "core::result::Result<account::Account, account::AccountError>".into(),
            variant: "Ok".into(),
            fields: vec![Field {
                name: "__0".into(),
                value: v,
            }],
        }
    }

    /// Issue 30, shape 0: `for s in inputs { let a = parse(s)?; a.check(); }` puts each
    /// iteration's value in the same slot; each is the object its own `parse` made.
    #[test]
    fn values_made_in_a_loop_into_one_slot_are_each_their_makers_object() {
        let mut o = Objects::default();
        let mut ids = Vec::new();
        for i in 1..=3 {
            o.constructed(
                CallId(i as u64),
                "account::Account",
                &ok(account(i)),
                Some(0x5000),
            );
            let (refs, created) = o.of_args(&[by_ref(0x7000, account(i))]);
            assert_eq!(created.len(), 1, "iteration {i}: a new object");
            assert_eq!(created[0].created_by, Some(CallId(i as u64)));
            ids.push(refs[0].object);
        }
        assert!(ids[0] != ids[1] && ids[1] != ids[2], "{ids:?}");
    }

    #[test]
    fn an_object_changed_by_its_own_calls_stays_one_object() {
        let mut o = Objects::default();
        o.constructed(CallId(1), "account::Account", &ok(account(1)), None);
        let (first, _) = o.of_args(&[by_ref(0x7000, account(1))]);
        // A deposit changed it: no constructor returned that state.
        let (later, created) = o.of_args(&[by_ref(0x7000, account(9))]);
        assert!(created.is_empty());
        assert_eq!(later[0].object, first[0].object);
        // A constructor's result older than the object does not take it over either.
        o.constructed(CallId(2), "account::Account", &ok(account(4)), None);
        let (_, created) = o.of_args(&[by_ref(0x7100, account(4))]);
        assert_eq!(created[0].created_by, Some(CallId(2)));
        let (again, created) = o.of_args(&[by_ref(0x7000, account(4))]);
        assert!(created.is_empty(), "the result was linked already");
        assert_eq!(again[0].object, first[0].object);
    }

    #[test]
    fn a_value_returned_through_memory_and_moved_is_its_makers_object_where_it_lands() {
        let mut o = Objects::default();
        let (old, _) = o.of_args(&[by_ref(0x7000, account(1))]);
        let made = o
            .constructed(CallId(5), "account::Account", &account(7), Some(0x5000))
            .unwrap();
        // Moved into the slot the old object had.
        let (refs, created) = o.of_args(&[by_ref(0x7000, account(7))]);
        assert_eq!(created[0].created_by, Some(CallId(5)));
        assert_ne!(refs[0].object, old[0].object);
        assert_ne!(
            refs[0].object, made.id,
            "another object than the one at the return slot"
        );
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
