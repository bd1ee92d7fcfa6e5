//! The special registers and predefined identifiers of the PTX ISA (9.0,
//! chapter 10), as ptxas 13.0.88 knows them for sm_90a.

/// The special registers read whole, without a component.
const SCALARS: &[&str] = &[
    "%laneid",
    "%warpid",
    "%nwarpid",
    "%smid",
    "%nsmid",
    "%gridid",
    "%is_explicit_cluster",
    "%cluster_ctarank",
    "%cluster_nctarank",
    "%lanemask_eq",
    "%lanemask_le",
    "%lanemask_lt",
    "%lanemask_ge",
    "%lanemask_gt",
    "%clock",
    "%clock_hi",
    "%clock64",
    "%globaltimer",
    "%globaltimer_lo",
    "%globaltimer_hi",
    "%reserved_smem_offset_begin",
    "%reserved_smem_offset_end",
    "%reserved_smem_offset_cap",
    "%total_smem_size",
    "%aggr_smem_size",
    "%dynamic_smem_size",
    "%current_graph_exec",
];

/// The vector special registers: read whole or by `.x`, `.y`, `.z` (and
/// `.w`, which ptxas 13.0.88 also takes).
const VECTORS: &[&str] = &[
    "%tid",
    "%ntid",
    "%ctaid",
    "%nctaid",
    "%clusterid",
    "%nclusterid",
    "%cluster_ctaid",
    "%cluster_nctaid",
];

/// Whether `name` (with its component, if any: `%tid.x`) is a special
/// register: the lists above, `%pm0`..`%pm7`, `%pm0_64`..`%pm7_64` and
/// `%envreg0`..`%envreg31`.
pub fn is_special_register(name: &str) -> bool {
    let (base, comp) = match name.split_once('.') {
        Some((b, c)) => (b, Some(c)),
        None => (name, None),
    };
    if VECTORS.contains(&base) {
        return comp.is_none_or(|c| matches!(c, "x" | "y" | "z" | "w"));
    }
    if comp.is_some() {
        return false;
    }
    SCALARS.contains(&base) || numbered(base, "%pm", 8) || numbered(base, "%envreg", 32) || {
        base.strip_suffix("_64")
            .is_some_and(|b| numbered(b, "%pm", 8))
    }
}

/// `prefix` then a decimal number below `n`, without leading zeros.
fn numbered(name: &str, prefix: &str, n: u32) -> bool {
    name.strip_prefix(prefix).is_some_and(|d| {
        !d.is_empty()
            && d.bytes().all(|b| b.is_ascii_digit())
            && (d == "0" || !d.starts_with('0'))
            && d.parse::<u32>().is_ok_and(|v| v < n)
    })
}

#[cfg(test)]
mod tests {
    use super::is_special_register as sr;

    #[test]
    fn special_registers() {
        for ok in [
            "%tid",
            "%tid.x",
            "%ctaid.z",
            "%clock_hi",
            "%pm7",
            "%pm0_64",
            "%envreg31",
            "%current_graph_exec",
            "%reserved_smem_offset_cap",
        ] {
            assert!(sr(ok), "{ok}");
        }
        for bad in [
            "%warpsz",
            "%pm8",
            "%pm8_64",
            "%envreg32",
            "%tid.q",
            "%laneid.x",
            "%tid.v",
            "%pm01",
        ] {
            assert!(!sr(bad), "{bad}");
        }
    }
}
