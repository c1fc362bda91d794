//! The small API the unit tests explore: `g::Gauge` (made by `Gauge::new(max: u8)`, `Default`)
//! with the getters each test adds, over a pool of `u8` holding 0 and 255.

use crate::api::{Callable, Explorable, Made, ObjectType, Param, Pass, PoolKind, Receiver, Ret};
use crate::keep::Kept;
use crate::pools::{Lit, Pools};

/// The kind of `Gauge::new`'s argument.
pub(crate) fn u8_kind() -> PoolKind {
    PoolKind::Scalar("u8".into())
}

/// `g::Gauge::parse(s: &str) -> Result<Gauge, _>`: a maker that may fill nothing.
pub(crate) fn parse() -> Callable {
    Callable {
        path: "g::Gauge::parse".into(),
        call: "g::Gauge::parse".into(),
        receiver: None,
        params: vec![Param {
            name: "s".into(),
            kind: PoolKind::Str,
            pass: Pass::Value,
        }],
        makes: Some((0, Made::Result)),
        ret: Ret::Other,
    }
}

/// `g::Gauge` with `Gauge::new`, then `more` callables.
pub(crate) fn gauge_api(more: Vec<Callable>) -> Explorable {
    let mut callables = vec![Callable {
        path: "g::Gauge::new".into(),
        call: "g::Gauge::new".into(),
        receiver: None,
        params: vec![Param {
            name: "max".into(),
            kind: u8_kind(),
            pass: Pass::Value,
        }],
        makes: Some((0, Made::Plain)),
        ret: Ret::Other,
    }];
    callables.extend(more);
    Explorable {
        crate_name: "g".into(),
        objects: vec![ObjectType {
            path: "g::Gauge".into(),
            name: "Gauge".into(),
            default: true,
            borrows: false,
            copy: false,
        }],
        callables,
        left_out: Vec::new(),
        never_reached: Default::default(),
        world: None,
    }
}

/// `Gauge::NAME(&self) -> RET` (`ret`: a scalar type).
pub(crate) fn getter(name: &str, ret: &str) -> Callable {
    Callable {
        path: format!("g::Gauge::{name}"),
        call: name.into(),
        receiver: Some(Receiver {
            object: 0,
            mutable: false,
            by_value: false,
        }),
        params: Vec::new(),
        makes: None,
        ret: Ret::Scalar(ret.into()),
    }
}

/// `Gauge::NAME(&mut self)`.
pub(crate) fn change(name: &str) -> Callable {
    Callable {
        receiver: Some(Receiver {
            object: 0,
            mutable: true,
            by_value: false,
        }),
        ret: Ret::Unit,
        ..getter(name, "u8")
    }
}

/// The `u8` pool, 0 and 255, with `more` pools.
pub(crate) fn pools(more: Vec<(PoolKind, Vec<Lit>)>) -> Pools {
    let mut by_kind = vec![(u8_kind(), vec![Lit::Uint(0), Lit::Uint(255)])];
    by_kind.extend(more);
    Pools {
        by_kind: by_kind.into_iter().collect(),
    }
}

/// `gauge_api` with the getter `level`, its pools and how the harness numbers its calls.
pub(crate) fn gauge_with_level() -> (Explorable, Pools, crate::strategy::Space) {
    let ex = gauge_api(vec![getter("level", "u8")]);
    let pools = pools(Vec::new());
    let space = crate::harness::space(&ex.callables, &pools).expect("a space");
    (ex, pools, space)
}

/// A kept sequence of `calls` (not empty), kept for its last.
pub(crate) fn kept(calls: Vec<u64>) -> Kept {
    Kept {
        outcomes: Vec::new(),
        new: Vec::new(),
        new_lines: Vec::new(),
        new_compares: Vec::new(),
        new_branches: Vec::new(),
        adds: vec![calls.len() - 1],
        calls,
    }
}
