//! Why phase 87 serialized a function's wgmma pipeline, as a closed set.
//!
//! ptxas 13.0.88 has ten reasons (seed 003's cases 1 to 10, each checked
//! against recorded output in `tests/corpus`), each a message code with
//! one fixed wording. A bare `u32` let an impossible code through to an
//! "unknown reason" text; this enum makes the set closed, and keeps each
//! reason's code, ptxas's words and ori's suggested fix in one place.

use crate::consts::*;

/// ptxas's common opening of every serialization message.
pub const SERIALIZED_PREFIX: &str =
    "Potential Performance Loss: wgmma.mma_async instructions are serialized due to";

/// One of ptxas's reasons to serialize a function's wgmma pipeline.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u32)]
pub enum SerializationCode {
    /// C7509: a call to a function defined elsewhere.
    ExternCalls = C7509_EXTERN_CALLS,
    /// C7510: the pipeline crosses a call.
    CrossesCall = C7510_CROSSES_CALL,
    /// C7511: not enough registers for the accumulators in flight (or an
    /// accumulator register shared: see `Serialization::shared_accumulators`).
    PipelineRegisters = C7511_PIPELINE_REGISTERS,
    /// C7512: not enough registers for the function.
    FunctionRegisters = C7512_FUNCTION_REGISTERS,
    /// C7513: a non-wgmma instruction defines a wgmma input inside a stage.
    DefinesInputs = C7513_DEFINES_INPUTS,
    /// C7514: a non-wgmma instruction reads an accumulator inside a stage.
    ReadsAccumulators = C7514_READS_ACCUMULATORS,
    /// C7515: a non-wgmma instruction defines an accumulator inside a stage.
    DefinesAccumulators = C7515_DEFINES_ACCUMULATORS,
    /// C7516: an ill-formed stage.
    IllFormed = C7516_ILL_FORMED,
    /// C7518: a compiler-inserted wait (WG.DP) would sit in divergent code.
    WgdpDivergent = C7518_WGDP_DIVERGENT,
    /// C7520: a compiler-inserted arrive (WG.AR) would sit in divergent code.
    WgarDivergent = C7520_WGAR_DIVERGENT,
}

impl SerializationCode {
    /// Every reason, by code.
    pub const ALL: [SerializationCode; 10] = [
        SerializationCode::ExternCalls,
        SerializationCode::CrossesCall,
        SerializationCode::PipelineRegisters,
        SerializationCode::FunctionRegisters,
        SerializationCode::DefinesInputs,
        SerializationCode::ReadsAccumulators,
        SerializationCode::DefinesAccumulators,
        SerializationCode::IllFormed,
        SerializationCode::WgdpDivergent,
        SerializationCode::WgarDivergent,
    ];

    /// The message code (`7514` for C7514).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The reason with message code `code`, if it is one.
    pub fn from_code(code: u32) -> Option<SerializationCode> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }

    /// ptxas's words after [`SERIALIZED_PREFIX`], for function `f`.
    pub fn reason(self, f: &str) -> String {
        use SerializationCode::*;
        match self {
            ExternCalls => format!("the presence of Extern calls in the function '{f}'"),
            CrossesCall => format!("wgmma pipeline crossing function boundary at a function call in the function '{f}'"),
            PipelineRegisters => format!("insufficient register resources for the wgmma pipeline in the function '{f}'"),
            FunctionRegisters => format!("insufficient register resources for the function '{f}'"),
            DefinesInputs => format!("non wgmma instructions defining input registers of a wgmma between start and end of the pipeline stage in the function '{f}'"),
            // The double space is ptxas 13.0.88's.
            ReadsAccumulators => format!("non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function '{f}'"),
            DefinesAccumulators => format!("non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in the function '{f}'"),
            IllFormed => format!("ill formed pipeline stage in the function '{f}'"),
            WgdpDivergent => format!("program dependence on compiler-inserted WG.DP in divergent path in the function '{f}'"),
            WgarDivergent => format!("program dependence on compiler-inserted WG.AR in divergent path in the function '{f}'"),
        }
    }

    /// ptxas's whole message for function `f`.
    pub fn message(self, f: &str) -> String {
        format!("{SERIALIZED_PREFIX} {}", self.reason(f))
    }

    /// ori's suggested fix (from seed 003's "Fix" notes).
    pub fn help(self) -> &'static str {
        use SerializationCode::*;
        match self {
            ExternCalls => "make the callee visible (inline it or define it in this module), or move the call out of any function that issues wgmma",
            CrossesCall => "keep each fence..commit..wait sequence inside one function; move the call before the fence or after the wait",
            PipelineRegisters => "fewer accumulator registers in flight at once: smaller N, fewer distinct accumulator sets per group, or wait earlier",
            FunctionRegisters => "reduce register pressure outside the pipeline",
            DefinesInputs => "compute every wgmma input (A fragments, descriptors) before wgmma.fence, in registers not rewritten inside the stage",
            ReadsAccumulators => "read accumulators only after wgmma.commit_group + wgmma.wait_group covering their wgmma",
            DefinesAccumulators => "initialize accumulators before wgmma.fence (or use scale-d = 0), never while their wgmma is in flight",
            IllFormed => "match each fence with one commit_group and wait_group on every path; keep stages in straight-line code",
            WgdpDivergent => "wait (wgmma.wait_group) before the divergent branch, in uniform control flow",
            WgarDivergent => "issue wgmma.fence in uniform control flow before the divergent region",
        }
    }
}

impl std::fmt::Display for SerializationCode {
    /// `C7514`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "C{}", self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_the_serialization_codes() {
        for c in SerializationCode::ALL {
            assert_eq!(SerializationCode::from_code(c.code()), Some(c));
            assert!(c.message("k").starts_with(SERIALIZED_PREFIX));
            assert!(c.message("k").ends_with("function 'k'"));
            assert!(!c.help().is_empty());
        }
        // The two advisories and anything else are no serialization.
        for n in [C7517_WAIT_INJECTED, C7519_ARRIVE_INJECTED, 0, 7521] {
            assert_eq!(SerializationCode::from_code(n), None);
        }
        assert_eq!(SerializationCode::ReadsAccumulators.to_string(), "C7514");
    }
}
