//! How to build a value — a mock: every recorded call made through a trait-object dependency
//! becomes an expectation on a mock of the trait (mockall), in the order to write them.

use std::collections::BTreeSet;

use carve_storage::{CallId, Outcome, Value};

use crate::arrange::builder::{Builder, Dep, Interaction};
use crate::arrange::context::{
    has_trait_calls, is_trait_call, own_world, reads_unbuilt_world, walk_below, Ctx,
};
use crate::arrange::literal;
use crate::arrange::literal::Position;
use crate::arrange::values::dyn_object;
use crate::body::{Expectation, MockDecl, MockSetup, OrderedExpectation, Returns};
use crate::naming;
use crate::read::crate_api::{CrateApi, TraitApi};
use crate::read::types::DeclType;
use crate::reasons::{MOCK_UNREPLAYABLE, NOT_MOCKABLE, UNDECODED, UNTESTABLE};

/// Records every call made through a dependency below `parent`; other calls are walked into.
pub(crate) fn interactions(cx: &Ctx, b: &mut Builder, parent: CallId) -> Result<(), &'static str> {
    walk_below(cx, parent, |call| {
        let dep = is_trait_call(cx, call).and_then(|trait_path| {
            let addr = match call.arg("self") {
                Some(Value::Ref { addr, .. }) => *addr,
                _ => 0,
            };
            b.find_dep(&trait_path, addr).map(|d| (d, trait_path))
        });
        let Some((d, trait_path)) = dep else {
            // Runs for real in the test: below it, only a dependency's call or a read of the
            // world matters.
            if own_world(cx, call) {
                return Err(UNTESTABLE);
            }
            return Ok(has_trait_calls(cx, call.id) || reads_unbuilt_world(cx, call));
        };
        expect(cx, b, call, d, &trait_path)?;
        Ok(false)
    })
}

/// The expectation on dependency `d` (of trait `trait_path`) that replays `call`.
fn expect(
    cx: &Ctx,
    b: &mut Builder,
    call: &carve_storage::Call,
    d: usize,
    trait_path: &str,
) -> Result<(), &'static str> {
    if call.outcome != Outcome::Returned {
        return Err(MOCK_UNREPLAYABLE);
    }
    let tr = mockable(cx.api, trait_path)?;
    let info = cx.trace.function(call.function).ok_or(UNDECODED)?;
    let method_name = info.path.rsplit("::").next().unwrap_or(&info.name);
    let method = tr
        .methods
        .iter()
        .find(|m| m.name == method_name)
        .ok_or(NOT_MOCKABLE)?;
    let args: Vec<_> = call.args.iter().filter(|a| a.name != "self").collect();
    if args.len() != method.params.len() {
        return Err(UNDECODED);
    }
    let mut with = Vec::new();
    for (arg, param) in args.iter().zip(&method.params) {
        let pred = match dyn_object(&arg.value) {
            Some(_) => None,
            None => literal::render(&arg.value, &param.ty, Position::Expected)
                .or_else(|_| literal::render_value(&arg.value, false, cx.api))
                .ok(),
        };
        with.push(pred.map_or_else(|| "always()".to_string(), |p| format!("eq({p})")));
    }
    if with.iter().all(|w| w == "always()") {
        with.clear();
    }
    let returns = match (&call.ret, &method.ret) {
        (None | Some(Value::Unit), DeclType::Unit) => Returns::Unit,
        (Some(value), decl) => {
            if let Some((child_trait, addr)) = dyn_object(value) {
                if !method.ret_written.starts_with("Box<") {
                    return Err(MOCK_UNREPLAYABLE);
                }
                let short = child_trait
                    .rsplit("::")
                    .next()
                    .unwrap_or(&child_trait)
                    .to_string();
                let var = b.add_dep(child_trait, addr, &short);
                let pattern = vec!["_"; method.params.len()].join(", ");
                Returns::Mock { var, pattern }
            } else {
                let expr = literal::render(value, decl, Position::Arg)
                    .or_else(|_| literal::render_value(value, false, cx.api))
                    .map_err(|_| MOCK_UNREPLAYABLE)?;
                if matches!(decl, DeclType::Ref { .. }) {
                    return Err(MOCK_UNREPLAYABLE);
                }
                if b.first_answer.is_none() {
                    b.first_answer = Some(format!(
                        "{}_returns_{}",
                        method.name,
                        naming::value_slug(value)
                    ));
                }
                Returns::Const { expr }
            }
        }
        (None, _) => return Err(MOCK_UNREPLAYABLE),
    };
    let rank = b.deps.iter().map(|d| d.calls.len()).sum::<usize>();
    b.deps[d]
        .calls
        .push((rank, method.name.clone(), with, returns));
    Ok(())
}

pub(crate) fn mockable<'a>(
    api: &'a CrateApi,
    trait_path: &str,
) -> Result<&'a TraitApi, &'static str> {
    let tr = api.public_trait(trait_path).ok_or(NOT_MOCKABLE)?;
    if tr.blocker.is_some() {
        return Err(NOT_MOCKABLE);
    }
    Ok(tr)
}

/// Identical consecutive calls become one expectation `.times(n)`.
pub(crate) fn expectations<'c>(calls: impl Iterator<Item = &'c Interaction>) -> Vec<Expectation> {
    let mut out: Vec<Expectation> = Vec::new();
    for (_, method, with, returns) in calls {
        if let Some(last) = out.last_mut() {
            let mergeable = !matches!(returns, Returns::Mock { .. });
            if mergeable && &last.method == method && &last.with == with && &last.returns == returns
            {
                last.times += 1;
                continue;
            }
        }
        out.push(Expectation {
            method: method.clone(),
            with: with.clone(),
            times: 1,
            sequence: None,
            returns: returns.clone(),
        });
    }
    out
}

/// What [`mock_setups`] gives: the mocks in the order to write them, the expectations ordered
/// across mocks, the `mock!` declarations, and whether any `Sequence` is used.
pub(crate) type MockPlan = (Vec<MockSetup>, Vec<OrderedExpectation>, Vec<MockDecl>, bool);

/// The mocks in the order to write them (children before the mocks returning them) and their
/// expectations (identical consecutive calls become `.times(n)`).
///
/// Where the order of calls is part of the behaviour it is checked with a `Sequence`: within a
/// mock when one method answers more than once or a `&mut self` method changed the
/// dependency's state (`bind` before `query`); across mocks when two or more independent
/// dependencies (not returned by another mock) had their state changed (`withdraw` from one
/// account before `deposit` to the other). A child mock is set up before the parent returning it,
/// so children keep a sequence of their own; the tree orders them against their parents.
pub(crate) fn mock_setups(cx: &Ctx, b: &Builder) -> Result<MockPlan, &'static str> {
    let mut setups = Vec::new();
    let mut decls = Vec::new();
    let mut sequence = false;
    let (stateful, across) = ordered_across(cx, b)?;
    for dep in b.deps.iter().rev() {
        let tr = mockable(cx.api, &dep.trait_path)?;
        let decl = MockDecl {
            name: tr.name.clone(),
            trait_path: dep.trait_path.clone(),
            methods: tr.methods.iter().map(|m| m.signature.clone()).collect(),
        };
        let mock_type = format!("Mock{}", tr.name);
        if !decls.contains(&decl) {
            decls.push(decl);
        }
        if across.contains(dep.var.as_str()) {
            // Its expectations are set below, interleaved with the other mocks'.
            setups.push(MockSetup {
                var: dep.var.clone(),
                mock_type,
                mutable: true,
                sequence: None,
                expectations: Vec::new(),
            });
            continue;
        }
        let setup = setup_of(dep, mock_type, stateful.contains(dep.var.as_str()));
        sequence |= setup.sequence.is_some();
        setups.push(setup);
    }
    let ordered = interleaved(b, &across);
    sequence |= !ordered.is_empty();
    Ok((setups, ordered, decls, sequence))
}

/// The mocks whose state the calls changed (a `&mut self` method called: `stateful`), and of
/// those the independent ones (no other mock returned them) whose calls are ordered across
/// mocks, when there are two or more.
fn ordered_across<'b>(
    cx: &Ctx,
    b: &'b Builder,
) -> Result<(BTreeSet<&'b str>, BTreeSet<&'b str>), &'static str> {
    let returned: BTreeSet<&str> = b
        .deps
        .iter()
        .flat_map(|d| &d.calls)
        .filter_map(|(_, _, _, r)| match r {
            Returns::Mock { var, .. } => Some(var.as_str()),
            _ => None,
        })
        .collect();
    let mut stateful = BTreeSet::new();
    for dep in &b.deps {
        let tr = mockable(cx.api, &dep.trait_path)?;
        let called: BTreeSet<&str> = dep.calls.iter().map(|c| c.1.as_str()).collect();
        if tr
            .methods
            .iter()
            .any(|m| m.mut_receiver && called.contains(m.name.as_str()))
        {
            stateful.insert(dep.var.as_str());
        }
    }
    let across: BTreeSet<&str> = stateful
        .iter()
        .copied()
        .filter(|v| !returned.contains(v))
        .collect();
    let across = if across.len() >= 2 {
        across
    } else {
        BTreeSet::new()
    };
    Ok((stateful, across))
}

/// The setup of one mock with its own expectations, in a `Sequence` of its own when their
/// order is part of the behaviour (a method answering more than once, or `stateful`).
fn setup_of(dep: &Dep, mock_type: String, stateful: bool) -> MockSetup {
    let mut expectations = expectations(dep.calls.iter());
    let mut methods = BTreeSet::new();
    let repeated = expectations
        .iter()
        .any(|e| !methods.insert(e.method.clone()));
    let ordered = expectations.len() > 1 && (repeated || stateful);
    let seq_var =
        ordered.then(|| format!("seq_{}", dep.var.strip_prefix("mock_").unwrap_or(&dep.var)));
    if ordered {
        expectations
            .iter_mut()
            .for_each(|e| e.sequence = seq_var.clone());
    }
    MockSetup {
        var: dep.var.clone(),
        mock_type,
        mutable: !expectations.is_empty(),
        sequence: seq_var,
        expectations,
    }
}

/// The calls of the mocks in `across`, in the order they happened, in one `seq`; identical
/// consecutive calls on one mock become `.times(n)`.
fn interleaved(b: &Builder, across: &BTreeSet<&str>) -> Vec<OrderedExpectation> {
    let mut interleaved: Vec<(usize, &str, &Interaction)> = b
        .deps
        .iter()
        .filter(|d| across.contains(d.var.as_str()))
        .flat_map(|d| d.calls.iter().map(move |c| (c.0, d.var.as_str(), c)))
        .collect();
    interleaved.sort_by_key(|(rank, ..)| *rank);
    let mut ordered: Vec<OrderedExpectation> = Vec::new();
    for (_, var, call) in interleaved {
        let mut e = expectations(std::iter::once(call)).remove(0);
        e.sequence = Some("seq".to_string());
        if let Some(last) = ordered.last_mut() {
            let same = last.var == var
                && last.expectation.method == e.method
                && last.expectation.with == e.with
                && last.expectation.returns == e.returns
                && !matches!(e.returns, Returns::Mock { .. });
            if same {
                last.expectation.times += 1;
                continue;
            }
        }
        ordered.push(OrderedExpectation {
            var: var.to_string(),
            expectation: e,
        });
    }
    ordered
}
