//! Which functions' messages ptxas prints, how often, and in what order,
//! for a module of several functions (rule R-kernel-units).
//!
//! Phases 85 and 87 run per function, so ori collects each function's
//! messages in file order. ptxas 13.0.88 does not print them that way; the
//! scaling benchmark's call graphs showed it, and these probes (recorded in
//! `tests/corpus/kernel_units_*`) pinned it down:
//!
//! * **Whole program (no `-c`).** ptxas compiles each kernel with the
//!   functions it reaches as one unit, the kernels in *reverse* order of
//!   definition. Inside a unit the functions come callees first: a
//!   depth-first post-order from the kernel that visits a function's callees
//!   from its last call back to its first. A function two kernels reach is
//!   compiled, and its messages printed, once per kernel; a function no
//!   kernel reaches is not compiled at all (no messages, no SASS).
//! * **One C7510 per kernel.** However many calls cross a pipeline, ptxas
//!   prints C7510 once per unit, after the unit's other messages, naming the
//!   first function in the unit's order whose call crosses (the others are
//!   serialized without a word).
//! * **R-one-failure-per-unit.** A unit is serialized once and prints one
//!   serialization message: a walk failure of the kernel or of an inlined
//!   callee (C7520, C7518, C7509) before the unit's C7510, and that before
//!   a late check's failure (`c7520_kernel_walk_failure_then_crossing_call`,
//!   `..._after_crossing_call`, `..._then_nested_crossing_call`).
//! * **R-inlined-callee.** A device function is compiled inlined into the
//!   unit, in the kernel's context: its advisories are printed under its
//!   name, a failure of the walk inside it (C7520, C7518, C7509) is the
//!   unit's serialization message, and its late-check
//!   failures (C7511, C7513-C7515) are not printed: the unit's C7510 stands
//!   (`c7520_inlined_callee_divergent_empty_commit`,
//!   `c7510_inlined_callee_read_after_wait1`).
//! * **`-c`.** Every function is compiled alone: the device functions first,
//!   in reverse order of definition, each after the functions it calls (the
//!   same post-order), then the kernels in reverse order of definition.
//!
//! * **R-setmaxnreg-ignored.** A unit whose `setmaxnreg` ptxas ignores
//!   prints C7508 first (C7504 first in a function's messages under `-c`;
//!   see [`crate::setmaxnreg`]).
//!
//! A module with no kernel keeps file order: ptxas was not probed on one
//! (under `-c`, with each function's C7504 first).

use fxhash::FxHashMap;
use ori_ir::consts::{
    C7508_SETMAXNREG_UNKNOWN_ENTRY, C7509_EXTERN_CALLS, C7510_CROSSES_CALL,
    C7511_PIPELINE_REGISTERS, C7513_DEFINES_INPUTS, C7514_READS_ACCUMULATORS,
    C7515_DEFINES_ACCUMULATORS, C7517_WAIT_INJECTED, C7518_WGDP_DIVERGENT, C7519_ARRIVE_INJECTED,
    C7520_WGAR_DIVERGENT,
};
use ori_ir::{Diagnostic, FuncKind, Module, Opcode};

/// Reorders (and, per kernel, repeats or drops) the pipeline's messages as
/// ptxas prints them. `diags` are the pipeline's, each naming its function;
/// messages that name no function keep their place at the front.
/// `maxrregcount` is ptxas's `-maxrregcount`, which fixes every kernel's
/// register count at entry.
pub fn order_like_ptxas(
    m: &Module,
    diags: Vec<Diagnostic>,
    compile_only: bool,
    maxrregcount: Option<u32>,
) -> Vec<Diagnostic> {
    let CallGraph {
        funcs,
        index,
        callees,
    } = CallGraph::of(m);
    let kernels = funcs.iter().any(|f| f.kind == FuncKind::Entry);
    if !kernels && !compile_only {
        return diags;
    }
    let mut lead = Vec::new();
    let mut by_func: Vec<Vec<Diagnostic>> = vec![Vec::new(); funcs.len()];
    for d in diags {
        match d.function.as_deref().and_then(|n| index.get(n)) {
            Some(&i) => by_func[i].push(d),
            None => lead.push(d),
        }
    }
    let is_entry = |i: usize| funcs[i].kind == FuncKind::Entry;
    let mut out = lead;
    if compile_only {
        for i in separate_order(&funcs, &callees) {
            out.extend(crate::setmaxnreg::separate_compilation(funcs[i]));
            out.extend(by_func[i].iter().cloned());
        }
        return out;
    }
    // One visited vector for every kernel, reset from the unit's own order,
    // so that many small kernels cost their units, not kernels x functions.
    let mut visited = vec![false; funcs.len()];
    let mut order = Vec::new();
    for k in (0..funcs.len()).rev().filter(|&i| is_entry(i)) {
        for &i in &order {
            visited[i] = false;
        }
        order.clear();
        post_order(k, &callees, &mut visited, &mut order);
        let mut crossing = None;
        let unit_start = out.len();
        let unit: Vec<&ori_ir::Function> = order.iter().map(|&i| funcs[i]).collect();
        out.extend(crate::setmaxnreg::unknown_entry_count(
            funcs[k],
            &unit,
            maxrregcount,
        ));
        for &i in &order {
            for d in &by_func[i] {
                let callee = !is_entry(i);
                if d.code == Some(C7510_CROSSES_CALL) {
                    crossing.get_or_insert_with(|| d.clone());
                } else if callee && d.code.is_some_and(is_late_check) {
                    // R-inlined-callee: the late checks run on the unit,
                    // whose C7510 is the one failure printed.
                } else if callee && d.code.is_some_and(is_walk_failure) {
                    out.push(unit_failure(d, funcs[k]));
                } else {
                    out.push(d.clone());
                }
            }
        }
        // The unit is one compilation: its C7508, its C7519s, then its
        // C7517s, then the rest, each in the unit's function order
        // (`c7510_callee_advisories_sorted_with_the_kernels`).
        out[unit_start..].sort_by_key(|d| advisory_rank(d.code));
        let unit = out.split_off(unit_start);
        out.extend(one_failure(unit, crossing, &funcs[k].name));
    }
    out
}

/// Under `-c`, the order in which ptxas compiles (and reports) each
/// function alone: the device functions in reverse order of definition,
/// each after the functions it calls, then the kernels in reverse order. A
/// module with no kernel keeps file order (not probed further).
fn separate_order(funcs: &[&ori_ir::Function], callees: &[Vec<usize>]) -> Vec<usize> {
    let is_entry = |i: usize| funcs[i].kind == FuncKind::Entry;
    if !funcs.iter().any(|f| f.kind == FuncKind::Entry) {
        return (0..funcs.len()).collect();
    }
    let mut visited = vec![false; funcs.len()];
    let mut order = Vec::new();
    for root in (0..funcs.len()).rev().filter(|&i| !is_entry(i)) {
        post_order(root, callees, &mut visited, &mut order);
    }
    order.extend((0..funcs.len()).rev().filter(|&i| is_entry(i)));
    order
}

/// R-one-failure-per-unit: a kernel compiled with its callees inlined is
/// serialized once, and ptxas prints one serialization message for it (in
/// the recorded whole-program cases no unit prints two). The walk's
/// failure comes first (R-walk-failure-first on the unit: it serializes
/// the unit before its calls and late checks are looked at; C7520 before
/// C7518 before C7509, the kernel's own before an inlined callee's), then
/// the unit's C7510, then a late check's failure
/// (`c7520_kernel_walk_failure_then_nested_crossing_call`).
fn one_failure(
    unit: Vec<Diagnostic>,
    crossing: Option<Diagnostic>,
    kernel: &str,
) -> Vec<Diagnostic> {
    let rank = |d: &Diagnostic| -> Option<(u8, bool)> {
        let code = d.code?;
        let class = match code {
            C7520_WGAR_DIVERGENT => 0,
            C7518_WGDP_DIVERGENT => 1,
            C7509_EXTERN_CALLS => 2,
            C7510_CROSSES_CALL => 3,
            c if is_late_check(c) => 4,
            _ => return None,
        };
        Some((class, d.function.as_deref() != Some(kernel)))
    };
    let all: Vec<Diagnostic> = unit.into_iter().chain(crossing).collect();
    let kept = all
        .iter()
        .enumerate()
        .filter_map(|(i, d)| rank(d).map(|r| (r, i)))
        .min()
        .map(|(_, i)| i);
    all.into_iter()
        .enumerate()
        .filter(|(i, d)| rank(d).is_none() || Some(*i) == kept)
        .map(|(_, d)| d)
        .collect()
}

/// An inlined callee's walk failure as the unit prints it: named after the
/// kernel when the kernel issues a wgmma or a commit after its call to the
/// callee (the arrive that instruction needs is the one that depends on the
/// callee's divergent code: `c7520_inlined_callee_then_kernel_commit`),
/// after the callee otherwise (`c7520_inlined_callee_divergent_empty_commit`,
/// and the same kernel without its commit after the call). Probed on a
/// handful of kernels; 6 of the 300 generated pipelines still name the
/// other function.
fn unit_failure(d: &Diagnostic, kernel: &ori_ir::Function) -> Diagnostic {
    let mut d = d.clone();
    let Some(callee) = d.function.clone() else {
        return d;
    };
    if !pipeline_after_call(kernel, &callee) {
        return d;
    }
    d.function = Some(kernel.name.to_string());
    d.message = d.message.replace(
        &format!("in the function '{callee}'"),
        &format!("in the function '{}'", kernel.name),
    );
    d
}

/// Whether `f` issues a wgmma or a commit after (in layout order) its first
/// call to `callee`.
fn pipeline_after_call(f: &ori_ir::Function, callee: &str) -> bool {
    let calls = |d: &ori_ir::InstData| d.direct_callee().is_some_and(|n| &**n == callee);
    let mut called = false;
    for &b in f.layout.blocks() {
        for &i in f.layout.block_insts(b) {
            let d = &f.insts[i];
            if called && (d.opcode == Opcode::WgmmaMmaAsync || d.opcode.is_commit()) {
                return true;
            }
            called |= calls(d);
        }
    }
    false
}

/// Where a message goes in its unit: an ignored `setmaxnreg`, arrives,
/// then waits, then the rest (`c7508_setmaxnreg_before_the_kernels_messages`).
fn advisory_rank(code: Option<u32>) -> u8 {
    match code {
        Some(C7508_SETMAXNREG_UNKNOWN_ENTRY) => 0,
        Some(C7519_ARRIVE_INJECTED) => 1,
        Some(C7517_WAIT_INJECTED) => 2,
        _ => 3,
    }
}

/// A serialization the walk itself finds (divergence, an extern call): an
/// inlined callee's is the unit's, named as [`unit_failure`] says.
fn is_walk_failure(code: u32) -> bool {
    matches!(
        code,
        C7509_EXTERN_CALLS | C7518_WGDP_DIVERGENT | C7520_WGAR_DIVERGENT
    )
}

/// A serialization of the late checks (registers, accumulator accesses).
fn is_late_check(code: u32) -> bool {
    matches!(
        code,
        C7511_PIPELINE_REGISTERS
            | C7513_DEFINES_INPUTS
            | C7514_READS_ACCUMULATORS
            | C7515_DEFINES_ACCUMULATORS
    )
}

/// The functions with a body, in file order, and the ones each calls.
pub struct CallGraph<'m> {
    /// Functions with a body, in order of definition.
    pub funcs: Vec<&'m ori_ir::Function>,
    /// Index into `funcs` by name.
    pub index: FxHashMap<&'m str, usize>,
    /// Per function (same index): the functions with a body it calls, in call order.
    pub callees: Vec<Vec<usize>>,
}

impl<'m> CallGraph<'m> {
    /// The call graph of `m` (direct calls to functions with a body).
    pub fn of(m: &'m Module) -> Self {
        let funcs: Vec<&ori_ir::Function> = m.funcs.values().filter(|f| f.has_body).collect();
        let index: FxHashMap<&str, usize> = funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (&*f.name, i))
            .collect();
        let callees = funcs
            .iter()
            .map(|f| {
                f.layout
                    .blocks()
                    .iter()
                    .flat_map(|&b| f.layout.block_insts(b).iter().copied())
                    .filter_map(|i| index.get(&**f.insts[i].direct_callee()?).copied())
                    .collect()
            })
            .collect();
        CallGraph {
            funcs,
            index,
            callees,
        }
    }

    /// Per function (same index): whether a kernel reaches it through calls
    /// (kernels included). Without `-c`, ptxas compiles and reports only
    /// these (R-kernel-units).
    pub fn reached_from_kernels(&self) -> Vec<bool> {
        let mut reached = vec![false; self.funcs.len()];
        let mut work: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| self.funcs[i].kind == ori_ir::FuncKind::Entry)
            .collect();
        while let Some(i) = work.pop() {
            if !std::mem::replace(&mut reached[i], true) {
                work.extend(self.callees[i].iter().copied());
            }
        }
        reached
    }

    /// Marks every function that calls, directly or not, a marked one: a
    /// worklist over the reversed graph, linear in its edges.
    pub fn mark_callers(&self, marked: &mut [bool]) {
        let mut callers = vec![Vec::new(); self.funcs.len()];
        for (i, calls) in self.callees.iter().enumerate() {
            for &c in calls {
                callers[c].push(i);
            }
        }
        let mut work: Vec<usize> = (0..marked.len()).filter(|&i| marked[i]).collect();
        while let Some(c) = work.pop() {
            for &i in &callers[c] {
                if !marked[i] {
                    marked[i] = true;
                    work.push(i);
                }
            }
        }
    }
}

/// Appends to `order` the functions reached from `root` and not yet
/// visited, callees first, visiting each function's calls last to first.
/// Iterative: call graphs can be deeper than the stack.
fn post_order(root: usize, callees: &[Vec<usize>], visited: &mut [bool], order: &mut Vec<usize>) {
    if visited[root] {
        return;
    }
    visited[root] = true;
    // (function, how many of its callees, counted from the last, are done)
    let mut stack = vec![(root, 0usize)];
    while let Some(top) = stack.last_mut() {
        let (f, done) = *top;
        let calls = &callees[f];
        if done < calls.len() {
            top.1 += 1;
            let c = calls[calls.len() - 1 - done];
            if !visited[c] {
                visited[c] = true;
                stack.push((c, 0));
            }
        } else {
            order.push(f);
            stack.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_order_visits_calls_last_to_first_callees_first() {
        // 0 = f0, 1 = g -> f0, 2 = h -> f0, 3 = k -> g, h  (probe e15)
        let callees = vec![vec![], vec![0], vec![0], vec![1, 2]];
        let mut visited = vec![false; 4];
        let mut order = Vec::new();
        post_order(3, &callees, &mut visited, &mut order);
        assert_eq!(order, vec![0, 2, 1, 3]);
    }

    fn msg(code: u32, function: &str) -> Diagnostic {
        let mut d = Diagnostic::new(ori_ir::Severity::Info, Some(code), "");
        d.function = Some(function.to_string());
        d
    }

    fn codes(ds: &[Diagnostic]) -> Vec<(u32, &str)> {
        ds.iter()
            .map(|d| (d.code.unwrap(), d.function.as_deref().unwrap()))
            .collect()
    }

    #[test]
    fn one_failure_per_unit_walk_failure_then_crossing_then_late_check() {
        let arrive = msg(C7519_ARRIVE_INJECTED, "dev");
        // The kernel's late check and a callee's walk failure: the walk's.
        let unit = vec![
            arrive.clone(),
            msg(C7520_WGAR_DIVERGENT, "dev"),
            msg(C7514_READS_ACCUMULATORS, "k"),
        ];
        let kept = one_failure(unit, Some(msg(C7510_CROSSES_CALL, "dev")), "k");
        assert_eq!(
            codes(&kept),
            vec![
                (C7519_ARRIVE_INJECTED, "dev"),
                (C7520_WGAR_DIVERGENT, "dev")
            ]
        );
        // C7518 and C7520 of one unit: C7520; the kernel's before a callee's.
        let unit = vec![
            msg(C7518_WGDP_DIVERGENT, "k"),
            msg(C7520_WGAR_DIVERGENT, "dev"),
            msg(C7520_WGAR_DIVERGENT, "k"),
        ];
        assert_eq!(
            codes(&one_failure(unit, None, "k")),
            vec![(C7520_WGAR_DIVERGENT, "k")]
        );
        // No walk failure: the unit's C7510 over the kernel's late check.
        let unit = vec![arrive, msg(C7511_PIPELINE_REGISTERS, "k")];
        assert_eq!(
            codes(&one_failure(
                unit,
                Some(msg(C7510_CROSSES_CALL, "dev")),
                "k"
            )),
            vec![(C7519_ARRIVE_INJECTED, "dev"), (C7510_CROSSES_CALL, "dev")]
        );
    }

    #[test]
    fn post_order_is_iterative_on_a_deep_chain() {
        let n = 200_000;
        let callees: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let mut visited = vec![false; n];
        let mut order = Vec::new();
        post_order(0, &callees, &mut visited, &mut order);
        assert_eq!(order.len(), n);
        assert_eq!(order[0], n - 1);
        assert_eq!(order[n - 1], 0);
    }
}
