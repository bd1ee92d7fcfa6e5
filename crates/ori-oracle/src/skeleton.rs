//! GMMA skeletons of `cuobjdump -sass` output.

/// Extracts, per function and in order, the GMMA skeleton of SASS text.
///
/// Accepts `cuobjdump -sass` output (`Function : NAME` headers, instruction
/// lines `/*0050*/  HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0 ;  /* 0x... */`,
/// encoding continuation lines `/* 0x... */`) and the same layout without the
/// address and encoding columns. Kept lines (see [`skeleton_line`]):
/// `WARPGROUP.ARRIVE`, each `HGMMA`/`IGMMA`/`QGMMA`/`BGMMA` as its
/// opcode-with-modifiers token plus ` gsb0` when the instruction carries gsb0,
/// and `WARPGROUP.DEPBAR.LE gsb0, 0xN`. A predicate guard (`@P0 `, `@!P1 `) is
/// kept as a prefix. Instructions before the first `Function :` header are
/// ignored.
pub fn skeleton_from_sass(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("Function") {
            let rest = rest.trim_start();
            if let Some(name) = rest.strip_prefix(':') {
                out.push((name.trim().to_string(), Vec::new()));
                continue;
            }
        }
        if let Some(k) = skeleton_line(line) {
            if let Some(f) = out.last_mut() {
                f.1.push(k);
            }
        }
    }
    out
}

/// Reduces one SASS line to its skeleton form, or `None` when the line is not
/// part of the GMMA skeleton.
pub fn skeleton_line(line: &str) -> Option<String> {
    let mut s = line.trim();
    // Leading `/*0050*/` address column.
    if let Some(rest) = s.strip_prefix("/*") {
        let end = rest.find("*/")?;
        let inner = &rest[..end];
        if !inner.chars().all(|c| c.is_ascii_hexdigit()) {
            return None; // encoding-only line or other comment
        }
        s = rest[end + 2..].trim_start();
    }
    // Trailing `/* 0x... */` encoding column.
    if let Some(pos) = s.find("/*") {
        s = &s[..pos];
    }
    let s = s.trim().trim_end_matches(';').trim();
    if s.is_empty() {
        return None;
    }
    let (guard, body) = if s.starts_with('@') {
        let mut it = s.splitn(2, char::is_whitespace);
        let g = it.next().unwrap_or("");
        (Some(g), it.next().unwrap_or("").trim_start())
    } else {
        (None, s)
    };
    let mut parts = body.splitn(2, char::is_whitespace);
    let opcode = parts.next()?;
    let operands = parts.next().unwrap_or("").trim();
    let base = opcode.split('.').next().unwrap_or("");
    let kept = if opcode == "WARPGROUP.ARRIVE" {
        opcode.to_string()
    } else if opcode == "WARPGROUP.DEPBAR.LE" {
        let ops: Vec<&str> = operands
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect();
        format!("{opcode} {}", ops.join(", "))
    } else if matches!(base, "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA") {
        let has_gsb0 = operands
            .split(|c: char| c == ',' || c.is_whitespace())
            .any(|t| t == "gsb0");
        if has_gsb0 {
            format!("{opcode} gsb0")
        } else {
            opcode.to_string()
        }
    } else {
        return None;
    };
    Some(match guard {
        Some(g) => format!("{g} {kept}"),
        None => kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("../tests/data/sample_cuobjdump.txt");
    const SAMPLE_MULTI: &str = include_str!("../tests/data/sample_multi_cuobjdump.txt");

    #[test]
    fn real_cuobjdump_sample() {
        let sk = skeleton_from_sass(SAMPLE);
        assert_eq!(sk.len(), 1);
        assert_eq!(sk[0].0, "k");
        assert_eq!(
            sk[0].1,
            vec![
                "WARPGROUP.ARRIVE",
                "HGMMA.64x8x16.F32 gsb0",
                "WARPGROUP.DEPBAR.LE gsb0, 0x0",
                "WARPGROUP.ARRIVE",
                "HGMMA.64x8x16.F32 gsb0",
                "WARPGROUP.DEPBAR.LE gsb0, 0x0",
            ]
        );
    }

    #[test]
    fn real_multi_function_sample() {
        let sk = skeleton_from_sass(SAMPLE_MULTI);
        let names: Vec<&str> = sk.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.contains(&"k"));
        assert!(names.contains(&"callee"));
        let k = &sk.iter().find(|f| f.0 == "k").unwrap().1;
        assert!(k.iter().any(|l| l.starts_with("HGMMA.64x16x16.F32")));
        let callee = &sk.iter().find(|f| f.0 == "callee").unwrap().1;
        assert!(callee.is_empty(), "{callee:?}");
    }

    #[test]
    fn without_columns() {
        let text = "\
\t\tFunction : kern
        LDC R1, c[0x0][0x28] ;
        WARPGROUP.ARRIVE ;
        HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ, !UPT ;
        IGMMA.64x8x32.S8.S8 R24, gdesc[UR4], R24, gsb0 ;
        @P0 WARPGROUP.DEPBAR.LE   gsb0,   0x1 ;
        WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        EXIT ;
\t\tFunction : other
        QGMMA.64x8x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ, !UPT, gsb0 ;
";
        let sk = skeleton_from_sass(text);
        assert_eq!(
            sk,
            vec![
                (
                    "kern".to_string(),
                    vec![
                        "WARPGROUP.ARRIVE".to_string(),
                        "HGMMA.64x8x16.F32".to_string(),
                        "IGMMA.64x8x32.S8.S8 gsb0".to_string(),
                        "@P0 WARPGROUP.DEPBAR.LE gsb0, 0x1".to_string(),
                        "WARPGROUP.DEPBAR.LE gsb0, 0x0".to_string(),
                    ]
                ),
                (
                    "other".to_string(),
                    vec!["QGMMA.64x8x32.F32.E4M3.E4M3 gsb0".to_string()]
                ),
            ]
        );
    }

    #[test]
    fn line_forms() {
        assert_eq!(
            skeleton_line("/*0090*/  HGMMA.64x8x16.F32 R24, gdesc[UR4], R24, gsb0 ;  /* 0x00000000041879f0 */"),
            Some("HGMMA.64x8x16.F32 gsb0".into())
        );
        assert_eq!(skeleton_line("/* 0x000fe20008000818 */"), None);
        assert_eq!(skeleton_line("FADD R24, R24, R25 ;"), None);
        assert_eq!(skeleton_line(""), None);
        assert_eq!(
            skeleton_line("BGMMA.64x8x256.AND.POPC R24, gdesc[UR4], RZ, !UPT ;"),
            Some("BGMMA.64x8x256.AND.POPC".into())
        );
    }
}
