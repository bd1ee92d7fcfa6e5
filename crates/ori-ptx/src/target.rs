//! Module-level `.version` / `.target` / `-arch` compatibility rules.
//!
//! ptxas checks two things about the module header besides parsing it, and
//! both decide whether a file is accepted at all: that the PTX ISA version
//! knows the `.target` (reported at the `.target` line after every
//! instruction error of the file), and, once the file is free of errors,
//! that the `.target` can be compiled for the `-arch` it was given (a fatal
//! error without a location). The wording and the version table below were
//! observed on ptxas 13.0.88.

use crate::ast::Module;
use crate::diag::{Diag, Severity, Span};

/// `sm_90a` -> `(90, Some('a'))`; `sm_100f` -> `(100, Some('f'))`.
fn split_sm(t: &str) -> Option<(u32, Option<char>)> {
    let rest = t.strip_prefix("sm_")?;
    let (num, suffix) = match rest.strip_suffix(['a', 'f']) {
        Some(n) => (n, rest.chars().last()),
        None => (rest, None),
    };
    Some((num.parse().ok()?, suffix))
}

/// The oldest PTX ISA version that knows an `sm_*` target (ptxas 13.0.88);
/// `None` for targets not in the table (no check is made).
pub fn min_version(target: &str) -> Option<(u32, u32)> {
    let (sm, suffix) = split_sm(target)?;
    Some(match (sm, suffix) {
        (50, _) => (4, 0),
        (52, _) => (4, 1),
        (53, _) => (4, 2),
        (60..=62, _) => (5, 0),
        (70, _) => (6, 0),
        (72, _) => (6, 1),
        (75, _) => (6, 3),
        (80, _) => (7, 0),
        (86, _) => (7, 1),
        (87, _) => (7, 4),
        (88, _) => (7, 3),
        (89, _) => (7, 8),
        (90, Some('a')) => (8, 0),
        (90, _) => (7, 8),
        (100, Some('f')) => (8, 8),
        (100, _) => (8, 6),
        (103, _) => (8, 8),
        (110, _) => (9, 0),
        (120, Some('f')) => (8, 8),
        (120, _) => (8, 7),
        (121, _) => (8, 8),
        _ => return None,
    })
}

/// `PTX .version 7.8 does not support .target sm_90a`, at the `.target` line.
pub fn check_version_target(file: &str, m: &Module) -> Option<Diag> {
    let t = m.target.iter().find(|t| t.starts_with("sm_"))?;
    let need = min_version(t)?;
    if m.version == (0, 0) || m.version >= need {
        return None;
    }
    Some(Diag::new(
        file,
        m.target_span,
        Severity::Error,
        format!(
            "PTX .version {}.{} does not support .target {t}",
            m.version.0, m.version.1
        ),
    ))
}

/// The values ptxas 13.0.88 takes for `-arch` / `--gpu-name` (its
/// `--help`): real architectures, virtual ones (parse only) and LTO ones.
pub const KNOWN_ARCHS: &[&str] = &[
    "compute_75",
    "compute_80",
    "compute_86",
    "compute_87",
    "compute_88",
    "compute_89",
    "compute_90",
    "compute_90a",
    "compute_100",
    "compute_100a",
    "compute_100f",
    "compute_103",
    "compute_103a",
    "compute_103f",
    "compute_110",
    "compute_110a",
    "compute_110f",
    "compute_120",
    "compute_120a",
    "compute_120f",
    "compute_121",
    "compute_121a",
    "compute_121f",
    "lto_75",
    "lto_80",
    "lto_86",
    "lto_87",
    "lto_88",
    "lto_89",
    "lto_90",
    "lto_90a",
    "lto_100",
    "lto_100a",
    "lto_100f",
    "lto_103",
    "lto_103a",
    "lto_103f",
    "lto_110",
    "lto_110a",
    "lto_110f",
    "lto_120",
    "lto_120a",
    "lto_120f",
    "lto_121",
    "lto_121a",
    "lto_121f",
    "sm_75",
    "sm_80",
    "sm_86",
    "sm_87",
    "sm_88",
    "sm_89",
    "sm_90",
    "sm_90a",
    "sm_100",
    "sm_100a",
    "sm_100f",
    "sm_103",
    "sm_103a",
    "sm_103f",
    "sm_110",
    "sm_110a",
    "sm_110f",
    "sm_120",
    "sm_120a",
    "sm_120f",
    "sm_121",
    "sm_121a",
    "sm_121f",
];

/// ptxas's fatal error for an `-arch` value it does not know (printed before
/// the input is read, without a location): `None` for a known value.
pub fn check_arch_value(file: &str, arch: &str) -> Option<Diag> {
    (!KNOWN_ARCHS.contains(&arch)).then(|| {
        Diag::new(
            file,
            Span::default(),
            Severity::Fatal,
            format!("Value '{arch}' is not defined for option 'gpu-name'"),
        )
    })
}

/// Whether a module whose `.target` is `target` can be compiled with
/// `-arch=arch`; the fatal error ptxas prints (without a location) if not.
pub fn check_arch(file: &str, m: &Module, arch: &str) -> Option<Diag> {
    let target = m.target.iter().find(|t| t.starts_with("sm_"))?;
    let (t_sm, t_suffix) = split_sm(target)?;
    let (a_sm, a_suffix) = split_sm(arch)?;
    let msg = if a_sm < t_sm {
        "SM version specified by .target is higher than default SM version assumed".to_string()
    } else if t_suffix == Some('a') && a_sm > t_sm {
        format!("Program with .target '{target}' cannot be compiled to future architecture")
    } else if t_suffix == Some('a') && a_suffix != Some('a') {
        format!("PTX with .target '{target}' cannot be compiled for architecture '{arch}'")
    } else {
        return None;
    };
    Some(Diag::new(file, Span::default(), Severity::Fatal, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(version: (u32, u32), target: &str) -> Module {
        Module {
            version,
            target: vec![target.to_string()],
            ..Module::default()
        }
    }

    #[test]
    fn version_table() {
        assert_eq!(min_version("sm_90a"), Some((8, 0)));
        assert_eq!(min_version("sm_90"), Some((7, 8)));
        assert_eq!(min_version("sm_100f"), Some((8, 8)));
        assert_eq!(min_version("debug"), None);
        let d = check_version_target("k.ptx", &module((7, 8), "sm_90a")).unwrap();
        assert_eq!(
            d.message,
            "PTX .version 7.8 does not support .target sm_90a"
        );
        assert!(check_version_target("k.ptx", &module((8, 0), "sm_90a")).is_none());
    }

    #[test]
    fn arch_rules() {
        let m = |t| module((8, 8), t);
        let msg = |t, a| check_arch("k.ptx", &m(t), a).map(|d| d.message);
        assert_eq!(msg("sm_90a", "sm_90a"), None);
        assert_eq!(
            msg("sm_90a", "sm_90").as_deref(),
            Some("PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_90'")
        );
        assert_eq!(
            msg("sm_90a", "sm_100a").as_deref(),
            Some("Program with .target 'sm_90a' cannot be compiled to future architecture")
        );
        assert_eq!(
            msg("sm_100", "sm_90a").as_deref(),
            Some("SM version specified by .target is higher than default SM version assumed")
        );
        assert_eq!(msg("sm_90", "sm_90a"), None);
        assert_eq!(msg("sm_80", "sm_100"), None);
        assert_eq!(msg("sm_100f", "sm_100a"), None);
    }
}
