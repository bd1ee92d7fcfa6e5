//! Phase 85, OriPropagateGmma: accumulator sets, their words, in-flight facts.
//!
//! Seed 003 ("Phase 85"): behind an SM gate (only targets with wgmma), every
//! `wgmma.mma_async` gets its source and destination accumulator sets
//! interned (FNV-1a keyed) and packed into tagged words; a dataflow over the
//! CFG finds which sets are in flight at each block entry (the facts phase
//! 87 consumes); and the number of simultaneously active accumulator live
//! ranges is checked against the architecture's limit (C7407).

use crate::accumulator_sets::{collect_accumulators, Access, AccumSetTable};
use crate::in_flight::{Event, Events, InFlight};
use ori_ir::consts::{C7407_TOO_MANY_LIVE_RANGES, PHASE_ORI_PROPAGATE_GMMA};
use ori_ir::{
    AccumSets, ControlFlowGraph, Diagnostic, Function, GmmaFacts, Opcode, Pass, PassContext,
    Severity,
};

/// Most GMMA accumulator live ranges that may be active at once on sm_90a.
///
/// The seed keeps it at offset 56 of the pass object without a value; ori
/// uses the count of distinct accumulator sets in flight at one point.
pub const MAX_ACTIVE_GMMA_LIVE_RANGES: u32 = 64;

/// The pass.
pub struct OriPropagateGmma;

impl Pass for OriPropagateGmma {
    fn name(&self) -> &'static str {
        "OriPropagateGmma"
    }

    fn phase(&self) -> u32 {
        PHASE_ORI_PROPAGATE_GMMA
    }

    fn run(&self, f: &mut Function, cx: &mut PassContext<'_>) {
        // SM gate (seed: `*(char*)(context + 1381) >= 0` means no wgmma).
        if !cx.module.has_wgmma {
            return;
        }
        // R-dead-wgmma: ptxas's optimizer deleted the wgmma whose results
        // nothing reads before this pass.
        crate::dead_wgmma::remove_dead_wgmmas(f);
        // ptxas pairs conversions before this phase; phase 85 and 87 see
        // them where ptxas placed them.
        crate::paired_conversions::pair_conversions(f);
        let facts = propagate(f);
        if facts.max_active > MAX_ACTIVE_GMMA_LIVE_RANGES {
            let mut d = Diagnostic::new(
                Severity::Warning,
                Some(C7407_TOO_MANY_LIVE_RANGES),
                format!(
                    "GMMA sequence has too many active live ranges ({}), reduce it to bring it under ({})",
                    facts.max_active, MAX_ACTIVE_GMMA_LIVE_RANGES
                ),
            );
            d.function = Some(f.name.to_string());
            cx.diags.push(d);
        }
        f.gmma = Some(facts);
    }
}

/// Annotate every wgmma with its packed words and compute the in-flight facts.
pub fn propagate(f: &mut Function) -> GmmaFacts {
    let mut table = AccumSetTable::new();
    // One walk of the instructions: each wgmma gets its words, and every
    // block's pipeline events are read for the dataflow.
    let mut events = Events::default();
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for bk in 0..f.layout.blocks().len() {
        let b = f.layout.blocks()[bk];
        let lo = events.start_block();
        for k in 0..f.layout.block_insts(b).len() {
            let i = f.layout.block_insts(b)[k];
            if f.insts[i].opcode == Opcode::WgmmaMmaAsync {
                collect_accumulators(f, &f.insts[i], Access::Read, &mut src);
                collect_accumulators(f, &f.insts[i], Access::Written, &mut dst);
                let (s, d) = (table.intern(&src), table.intern(&dst));
                f.insts[i].accum = Some(AccumSets { src: s, dst: d });
            }
            if let Some(e) = Event::of(&f.insts[i]) {
                events.push(e);
            }
        }
        events.end_block(b, lo);
    }
    let cfg = ControlFlowGraph::compute(f);
    let flow = InFlight::solve(events, &cfg);
    let mut facts = GmmaFacts::default();
    for &b in f.layout.blocks() {
        facts.in_flight_at_entry[b] = flow.entry(b).all();
        facts.max_active = facts.max_active.max(flow.max_active_in_block(b) as u32);
    }
    facts.sets = table.into_sets();
    facts
}
