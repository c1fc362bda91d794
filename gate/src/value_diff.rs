//! Where two recorded values differ, leaf by leaf, ignoring what never carries behaviour:
//! addresses (a reference is compared by what it points to, a raw pointer only by being null or
//! not) and the spelling of scalar and string types. The per-process random seeds of hash maps
//! (`std::hash::random::RandomState`) are never a difference to report, but a seed that differs
//! is returned marked as one (`Difference::seed`): what is computed from it (hashes, an order)
//! may differ too. What the recorder marked as not read exactly is never a difference: an
//! `Unavailable` or `Opaque` value on either side, an unfollowed non-null pointer against a
//! followed one, and whatever lies past a `truncated` string or sequence.

use carve_storage::{Field, Value};

/// One place where the values differ.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Difference<'v> {
    /// Where inside the value, for people: `.occupation`, `.0[3]`, or empty for the whole value.
    pub at: String,
    /// The same place with sequence indices erased (`.buf[*]`), for matching unstable positions.
    pub position: String,
    /// The position of the smallest value around this place that holds several fields or
    /// elements: what a difference between baseline runs makes unstable (the seconds of a
    /// `Duration` whose nanoseconds differed, the other fields of a struct holding a pid).
    pub scope: String,
    pub base: Option<&'v Value>,
    pub new: Option<&'v Value>,
    /// A per-process random seed that differs: never reported itself, but it makes the values
    /// computed from it unstable (see `compare`).
    pub seed: bool,
}

/// Every place where `base` and `new` differ, outermost first, in field order.
pub(crate) fn differences<'v>(base: &'v Value, new: &'v Value) -> Vec<Difference<'v>> {
    let mut out = Vec::new();
    walk(
        base,
        new,
        &mut String::new(),
        &mut String::new(),
        "",
        &mut out,
    );
    out
}

/// A value present on one side only (an argument that appeared, a return value that vanished).
pub(crate) fn one_sided<'v>(
    base: Option<&'v Value>,
    new: Option<&'v Value>,
) -> Vec<Difference<'v>> {
    match (base, new) {
        (Some(b), Some(n)) => differences(b, n),
        (None, None) => Vec::new(),
        (base, new) => vec![Difference {
            at: String::new(),
            position: String::new(),
            scope: String::new(),
            base,
            new,
            seed: false,
        }],
    }
}

fn walk<'v>(
    base: &'v Value,
    new: &'v Value,
    at: &mut String,
    position: &mut String,
    scope: &str,
    out: &mut Vec<Difference<'v>>,
) {
    let difference = |at: &String, position: &String, seed| Difference {
        at: at.clone(),
        position: position.clone(),
        scope: scope.to_string(),
        base: Some(base),
        new: Some(new),
        seed,
    };
    let here = |out: &mut Vec<Difference<'v>>, at: &String, position: &String| {
        out.push(difference(at, position, false))
    };
    if is_random_seed(base) && is_random_seed(new) {
        if base != new {
            out.push(difference(at, position, true));
        }
        return;
    }
    // A hasher a `RandomState` built carries its seed as keys, and everything it computed
    // from them: with other keys, the whole hasher is the seed that differs.
    if let (Some(b), Some(n)) = (hasher_keys(base), hasher_keys(new)) {
        if b != n {
            out.push(difference(at, position, true));
            return;
        }
    }
    if is_io_buffer(base) && is_io_buffer(new) {
        return;
    }
    if !is_read(base) || !is_read(new) {
        return;
    }
    match (base, new) {
        (Value::Ref { target: b, .. }, Value::Ref { target: n, .. }) => {
            walk(b, n, at, position, scope, out)
        }
        (Value::Pointer { addr: b, .. }, Value::Pointer { addr: n, .. }) => {
            if (*b == 0) != (*n == 0) {
                here(out, at, position);
            }
        }
        // One side followed, the other not (a depth limit): only null against not-null shows.
        (Value::Pointer { addr, .. }, Value::Ref { .. })
        | (Value::Ref { .. }, Value::Pointer { addr, .. }) => {
            if *addr == 0 {
                here(out, at, position);
            }
        }
        (Value::Int { value: b, .. }, Value::Int { value: n, .. }) => {
            if b != n {
                here(out, at, position);
            }
        }
        (Value::Uint { value: b, .. }, Value::Uint { value: n, .. }) => {
            if b != n {
                here(out, at, position);
            }
        }
        (Value::Float { bits: b, .. }, Value::Float { bits: n, .. }) => {
            if b != n {
                here(out, at, position);
            }
        }
        (
            Value::Str {
                value: b,
                truncated: bt,
                ..
            },
            Value::Str {
                value: n,
                truncated: nt,
                ..
            },
        ) => {
            // Only what both sides read counts: a truncated string is a prefix of the real one.
            let differ = match (bt, nt) {
                (false, false) => b != n,
                (true, false) => !n.starts_with(b.as_str()),
                (false, true) => !b.starts_with(n.as_str()),
                (true, true) => !b.starts_with(n.as_str()) && !n.starts_with(b.as_str()),
            };
            if differ {
                here(out, at, position);
            }
        }
        (Value::Struct { ty: bt, fields: bf }, Value::Struct { ty: nt, fields: nf }) => {
            if bt != nt || !same_names(bf, nf) {
                here(out, at, position);
            } else {
                walk_fields(bf, nf, at, position, scope, out);
            }
        }
        (
            Value::Enum {
                ty: bt,
                variant: bv,
                fields: bf,
            },
            Value::Enum {
                ty: nt,
                variant: nv,
                fields: nf,
            },
        ) => {
            if bt != nt || bv != nv || !same_names(bf, nf) {
                here(out, at, position);
            } else {
                walk_fields(bf, nf, at, position, scope, out);
            }
        }
        (Value::Tuple { elems: b, .. }, Value::Tuple { elems: n, .. }) => {
            if b.len() != n.len() {
                here(out, at, position);
            } else {
                let inner = inner_scope(scope, position, b.len());
                for (i, (b, n)) in b.iter().zip(n).enumerate() {
                    let step = format!(".{i}");
                    descend(at, position, &step, &step, |at, pos| {
                        walk(b, n, at, pos, &inner, out)
                    });
                }
            }
        }
        (
            Value::Seq {
                elems: b,
                truncated: bt,
                ..
            },
            Value::Seq {
                elems: n,
                truncated: nt,
                ..
            },
        ) => {
            // A truncated sequence holds its first elements only: lengths differ for sure when
            // the complete side is shorter than what the truncated side read.
            let length_differs = match (bt, nt) {
                (false, false) => b.len() != n.len(),
                (true, false) => n.len() < b.len(),
                (false, true) => b.len() < n.len(),
                (true, true) => false,
            };
            if length_differs {
                here(out, at, position);
            } else {
                let inner = inner_scope(scope, position, b.len());
                for (i, (b, n)) in b.iter().zip(n).enumerate() {
                    descend(at, position, &format!("[{i}]"), "[*]", |at, pos| {
                        walk(b, n, at, pos, &inner, out)
                    });
                }
            }
        }
        (b, n) => {
            // Same kind compared exactly (unit, bool, char, opaque bytes); different kinds differ.
            if b != n {
                here(out, at, position);
            }
        }
    }
}

/// False for what the recorder could not read: nothing can be said about how it compares.
fn is_read(v: &Value) -> bool {
    !matches!(v, Value::Unavailable { .. } | Value::Opaque { .. })
}

/// The keys std draws at random for every `HashMap`/`HashSet` in each process.
fn is_random_seed(v: &Value) -> bool {
    matches!(v, Value::Struct { ty, .. } if ty.ends_with("::RandomState"))
}

/// The keys (`k0`, `k1`) of std's `DefaultHasher` (a SipHash state, which holds them a
/// level or two down: `.0.hasher.k0`); `None` for any other value.
fn hasher_keys(v: &Value) -> Option<[&Value; 2]> {
    fn find<'v>(v: &'v Value, name: &str, depth: usize) -> Option<&'v Value> {
        let Value::Struct { fields, .. } = v else {
            return None;
        };
        if let Some(f) = fields.iter().find(|f| f.name == name) {
            return Some(&f.value);
        }
        let below = depth.checked_sub(1)?;
        fields.iter().find_map(|f| find(&f.value, name, below))
    }
    match v {
        Value::Struct { ty, .. } if ty.ends_with("::DefaultHasher") => {
            Some([find(v, "k0", 3)?, find(v, "k1", 3)?])
        }
        _ => None,
    }
}

/// std's I/O buffers (`BufReader`, `BufWriter`, `LineWriter` and their `Buffer`): how many
/// bytes they hold and where they stand depends on how the OS delivered the bytes (a pipe read
/// early gets 49 bytes, late 469), not on what the program did with them.
fn is_io_buffer(v: &Value) -> bool {
    matches!(v, Value::Struct { ty, .. } if ty.starts_with("std::io::buffered::"))
}

fn same_names(b: &[Field], n: &[Field]) -> bool {
    b.len() == n.len() && b.iter().zip(n).all(|(b, n)| b.name == n.name)
}

fn walk_fields<'v>(
    b: &'v [Field],
    n: &'v [Field],
    at: &mut String,
    position: &mut String,
    scope: &str,
    out: &mut Vec<Difference<'v>>,
) {
    let inner = inner_scope(scope, position, b.len());
    for (b, n) in b.iter().zip(n) {
        let name = b.name.strip_prefix("__").unwrap_or(&b.name);
        let step = format!(".{name}");
        descend(at, position, &step, &step, |at, pos| {
            walk(&b.value, &n.value, at, pos, &inner, out)
        });
    }
}

/// The scope for the children of a value at `position` with `children` of them: the value
/// itself when it holds several, else (a newtype, a one-field struct) the enclosing scope.
fn inner_scope(scope: &str, position: &str, children: usize) -> String {
    if children >= 2 {
        position.to_string()
    } else {
        scope.to_string()
    }
}

/// Runs `f` with `step` appended to both paths, then restores them.
fn descend(
    at: &mut String,
    position: &mut String,
    step: &str,
    position_step: &str,
    f: impl FnOnce(&mut String, &mut String),
) {
    let (at_len, pos_len) = (at.len(), position.len());
    at.push_str(step);
    position.push_str(position_step);
    f(at, position);
    at.truncate(at_len);
    position.truncate(pos_len);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i128) -> Value {
        Value::Int {
            ty: "i32".into(),
            value: v,
        }
    }

    fn user(name: &str, age: i128) -> Value {
        Value::Struct {
            ty: "app::User".into(),
            fields: vec![
                Field {
                    name: "name".into(),
                    value: Value::Str {
                        ty: "alloc::string::String".into(),
                        value: name.into(),
                        truncated: false,
                    },
                },
                Field {
                    name: "age".into(),
                    value: int(age),
                },
            ],
        }
    }

    #[test]
    fn equal_values_have_no_difference() {
        assert!(differences(&user("a", 1), &user("a", 1)).is_empty());
    }

    #[test]
    fn a_changed_field_is_named_by_its_path() {
        let (a, b) = (user("a", 1), user("a", 2));
        let d = differences(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].at, ".age");
        assert_eq!(d[0].base, Some(&int(1)));
        assert_eq!(d[0].scope, "", "the user struct has two fields");
    }

    #[test]
    fn references_are_compared_by_target_not_address() {
        let r = |addr, v| Value::Ref {
            ty: "&i32".into(),
            addr,
            target: Box::new(int(v)),
        };
        assert!(differences(&r(0x1000, 3), &r(0x2000, 3)).is_empty());
        assert_eq!(differences(&r(0x1000, 3), &r(0x1000, 4)).len(), 1);
    }

    #[test]
    fn io_buffer_bookkeeping_is_never_compared_but_what_holds_it_is() {
        let reader = |filled, line: i128| Value::Struct {
            ty: "ping::Reader".into(),
            fields: vec![
                Field {
                    name: "buf".into(),
                    value: Value::Struct {
                        ty: "std::io::buffered::bufreader::buffer::Buffer".into(),
                        fields: vec![Field {
                            name: "filled".into(),
                            value: int(filled),
                        }],
                    },
                },
                Field {
                    name: "line".into(),
                    value: int(line),
                },
            ],
        };
        assert!(differences(&reader(469, 1), &reader(49, 1)).is_empty());
        assert_eq!(differences(&reader(469, 1), &reader(469, 2)).len(), 1);
    }

    #[test]
    fn a_differing_hash_map_seed_is_marked_as_a_seed_not_as_a_plain_difference() {
        let seed = |k| Value::Struct {
            ty: "std::hash::random::RandomState".into(),
            fields: vec![Field {
                name: "k0".into(),
                value: int(k),
            }],
        };
        assert!(differences(&seed(1), &seed(1)).is_empty());
        let (one, two) = (seed(1), seed(2));
        let d = differences(&one, &two);
        assert_eq!(
            d.len(),
            1,
            "one difference for the whole seed, not one per key"
        );
        assert!(d[0].seed);
        assert!(differences(&user("a", 1), &user("a", 2))
            .iter()
            .all(|d| !d.seed));
    }

    #[test]
    fn a_hasher_seeded_otherwise_is_a_seed_and_one_seeded_alike_is_compared() {
        // `DefaultHasher(SipHasher13 { hasher: Hasher { k0, k1, length, .. } })`.
        let hasher = |k0, length| Value::Struct {
            ty: "std::hash::random::DefaultHasher".into(),
            fields: vec![Field {
                name: "__0".into(),
                value: Value::Struct {
                    ty: "core::hash::sip::SipHasher13".into(),
                    fields: vec![Field {
                        name: "hasher".into(),
                        value: Value::Struct {
                            ty: "core::hash::sip::Hasher<core::hash::sip::Sip13Rounds>".into(),
                            fields: vec![
                                Field::new("k0", int(k0)),
                                Field::new("k1", int(7)),
                                Field::new("length", int(length)),
                            ],
                        },
                    }],
                },
            }],
        };
        let (one, two) = (hasher(1, 8), hasher(2, 8));
        let d = differences(&one, &two);
        assert_eq!(d.len(), 1, "one difference for the whole hasher");
        assert!(d[0].seed);
        // The same keys: what it hashed is compared as any value is.
        let (short, long) = (hasher(1, 8), hasher(1, 16));
        let d = differences(&short, &long);
        assert_eq!(d.len(), 1);
        assert!(!d[0].seed);
    }

    #[test]
    fn raw_pointers_only_differ_by_nullness() {
        let p = |addr| Value::Pointer {
            ty: "*const u8".into(),
            addr,
        };
        assert!(differences(&p(0x10), &p(0x20)).is_empty());
        assert_eq!(differences(&p(0), &p(0x20)).len(), 1);
    }

    #[test]
    fn sequence_positions_forget_the_index() {
        let seq = |v: Vec<i128>| Value::Seq {
            ty: "Vec<i32>".into(),
            elems: v.into_iter().map(int).collect(),
            truncated: false,
        };
        let (a, b) = (seq(vec![1, 2, 3]), seq(vec![1, 5, 3]));
        let d = differences(&a, &b);
        assert_eq!(d[0].at, "[1]");
        assert_eq!(d[0].position, "[*]");
        assert_eq!(d[0].scope, "", "the whole sequence is the scope");
        let (a, b) = (seq(vec![1, 2]), seq(vec![1, 2, 3]));
        let d = differences(&a, &b);
        assert_eq!(
            d[0].at, "",
            "a length change is a change of the whole sequence"
        );
    }

    #[test]
    fn a_different_variant_is_one_difference_at_the_enum() {
        let some = Value::Enum {
            ty: "Option<i32>".into(),
            variant: "Some".into(),
            fields: vec![Field {
                name: "__0".into(),
                value: int(1),
            }],
        };
        let none = Value::Enum {
            ty: "Option<i32>".into(),
            variant: "None".into(),
            fields: vec![],
        };
        assert_eq!(differences(&some, &none).len(), 1);
        let mut other = some.clone();
        if let Value::Enum { fields, .. } = &mut other {
            fields[0].value = int(2);
        }
        assert_eq!(differences(&some, &other)[0].at, ".0");
    }

    #[test]
    fn values_not_read_exactly_are_never_a_difference() {
        let unavailable = Value::Unavailable {
            ty: "u32".into(),
            reason: "optimized out".into(),
        };
        let opaque = |b: u8| Value::Opaque {
            ty: "fn()".into(),
            bytes: vec![b; 8],
        };
        let text = |s: &str, truncated| Value::Str {
            ty: "&str".into(),
            value: s.into(),
            truncated,
        };
        let seq = |v: Vec<i128>, truncated| Value::Seq {
            ty: "Vec<i32>".into(),
            elems: v.into_iter().map(int).collect(),
            truncated,
        };
        let boxed = |target: Value| Value::Ref {
            ty: "alloc::boxed::Box<i32>".into(),
            addr: 0x5000,
            target: Box::new(target),
        };
        let unfollowed = |addr| Value::Pointer {
            ty: "alloc::boxed::Box<i32>".into(),
            addr,
        };
        let same = [
            (unavailable.clone(), int(3)),
            (int(3), unavailable.clone()),
            (user("ann", 30), unavailable.clone()),
            (opaque(1), opaque(2)),
            (opaque(1), int(7)),
            (text("abc", true), text("abcdef", false)),
            (text("abcdef", false), text("abc", true)),
            (text("abc", true), text("abcd", true)),
            (seq(vec![1, 2], true), seq(vec![1, 2, 3, 4], false)),
            (seq(vec![1, 2], true), seq(vec![1, 2, 9], true)),
            (unfollowed(0x6000), boxed(int(1))),
            (boxed(int(1)), unfollowed(0x6000)),
        ];
        for (base, new) in &same {
            assert_eq!(
                differences(base, new),
                vec![],
                "{base:?} against {new:?} is not a difference"
            );
        }
        // What both sides did read still counts.
        let differ = [
            (text("abc", true), text("abd", false)),
            (text("abc", true), text("abd", true)),
            (text("abc", true), text("ab", false)),
            (seq(vec![1, 2], true), seq(vec![1], false)),
            (seq(vec![1, 2], true), seq(vec![1, 5, 3], false)),
            (unfollowed(0), boxed(int(1))),
        ];
        for (base, new) in &differ {
            assert_eq!(
                differences(base, new).len(),
                1,
                "{base:?} against {new:?} is a difference"
            );
        }
    }
}
