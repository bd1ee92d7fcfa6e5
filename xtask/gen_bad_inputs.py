#!/usr/bin/env python3
"""Generate the bad-input corpus (tests/bad_input/): malformed PTX made by
mutating well-formed corpus kernels one way each, so that every kind of
input error ptxas reports is tried on several kernels.

    python3 xtask/gen_bad_inputs.py            # writes tests/bad_input/*.ptx
    cargo xtask oracle record --corpus tests/bad_input -j 2
    cargo xtask oracle check  --corpus tests/bad_input

Deterministic: the same base kernels and mutations give the same files.
Each file opens with a `//` line saying what was changed. The expected
output is what ptxas 13.0.88 prints, recorded by `oracle record`.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
OUT = os.path.join(ROOT, "tests", "bad_input")

# Small, well-formed kernels of different shapes (straight line, loop,
# call, register A, sparse, f16 accumulators, branches, -c).
BASES = [
    "c7517_read_acc_before_commit",
    "c7514_loop_pure_read_before_commit",
    "c7519_no_fence",
    "clean_kill_after_single_mma",
    "c7510_func_with_pipeline",
    "c7517_f16x2_unpack_half_stored_before_wait",
    "sparse_c7519_def_meta_between_mma",
    "c7518_divergent_wait",
]


def instruction_lines(lines):
    """Indices of lines holding one instruction (not a directive, label or brace)."""
    out = []
    for k, l in enumerate(lines):
        t = l.strip()
        if not t or t.startswith(("//", ".", "{", "}", "@")) or t.endswith(":"):
            continue
        if t.endswith(";") and re.match(r"[a-z_][\w.]*\s", t):
            out.append(k)
    return out


def first(lines, pred):
    for k, l in enumerate(lines):
        if pred(l.strip()):
            return k
    return None


def mutations(lines):
    """(name, what, new lines) for every mutation that applies."""
    insts = instruction_lines(lines)
    mid = insts[len(insts) // 2] if insts else None
    wg = first(lines, lambda t: t.startswith("wgmma.mma_async"))
    wait = first(lines, lambda t: t.startswith("wgmma.wait_group"))
    reg = first(lines, lambda t: t.startswith(".reg"))
    ver = first(lines, lambda t: t.startswith(".version"))
    tgt = first(lines, lambda t: t.startswith(".target"))
    close = max(k for k, l in enumerate(lines) if l.strip() == "}")
    bra = first(lines, lambda t: " bra" in t or t.startswith("bra"))
    label = first(lines, lambda t: t.endswith(":") and not t.startswith("//"))

    def edit(k, new):
        v = list(lines)
        v[k] = new
        return v

    def insert(k, new):
        v = list(lines)
        v.insert(k, new)
        return v

    out = []
    if mid is not None:
        l = lines[mid]
        out.append(("missing_semicolon", "the ';' of an instruction removed", edit(mid, l.rstrip().rstrip(";"))))
        m = re.match(r"(\s*)([a-z_]+)", l)
        out.append(("unknown_mnemonic", "a mnemonic misspelt", edit(mid, l.replace(m.group(2), m.group(2) + "x", 1))))
        ops = l.rstrip().rstrip(";")
        if "," in ops:
            out.append(("operand_dropped", "the last operand of an instruction dropped", edit(mid, ops.rsplit(",", 1)[0] + ";")))
            out.append(("operand_added", "an extra operand added to an instruction", edit(mid, ops + ", 0;")))
            out.append(("undeclared_register", "an operand replaced by an undeclared register", edit(mid, ops.rsplit(",", 1)[0] + ", %undeclared9;")))
            out.append(("missing_comma", "a comma between operands removed", edit(mid, ops.replace(",", "", 1) + ";")))
        parts = m.group(2)
        out.append(("bad_modifier", "an unknown modifier added to a mnemonic", edit(mid, l.replace(parts, parts + ".bogus", 1))))
        out.append(("undeclared_guard", "a guard on an undeclared predicate", edit(mid, m.group(1) + "@%pundeclared " + l.strip())))
        out.append(("bad_immediate", "an instruction given a malformed immediate", edit(mid, ops + ", 0xZZ;")))
    if wg is not None:
        l = lines[wg]
        out.append(("wgmma_bad_shape", "a wgmma shape that does not exist", edit(wg, re.sub(r"m64n(\d+)k", lambda x: "m64n" + str(int(x.group(1)) + 1) + "k", l, 1))))
        out.append(("wgmma_short_vector", "one register dropped from a wgmma's D vector", edit(wg, re.sub(r"\{([^,}]+),\s*", "{", l, 1))))
        out.append(("wgmma_no_sync", "the .sync of a wgmma removed", edit(wg, l.replace(".sync", "", 1))))
        out.append(("wgmma_bad_type", "a wgmma input type that does not exist", edit(wg, re.sub(r"\.(f16|bf16|tf32|e4m3|e5m2|s8|u8)\.(f16|bf16|tf32|e4m3|e5m2|s8|u8)", ".f17.f17", l, 1))))
        out.append(("wgmma_extra_operand", "an extra immediate at the end of a wgmma", edit(wg, l.rstrip().rstrip(";") + ", 1;")))
    if wait is not None:
        out.append(("wait_group_register", "wgmma.wait_group given a register", edit(wait, re.sub(r"\d+;", "%r1;", lines[wait], 1))))
        out.append(("wait_group_missing_count", "wgmma.wait_group without its count", edit(wait, re.sub(r"\s+\d+;", ";", lines[wait], 1))))
    if reg is not None:
        out.append(("reg_bad_type", "a .reg of a type that does not exist", edit(reg, re.sub(r"\.(b|f|s|u)(16|32|64)", ".b33", lines[reg], 1))))
        out.append(("reg_redeclared", "a .reg declaration repeated", insert(reg + 1, lines[reg])))
    if ver is not None:
        out.append(("version_too_new", "a .version ptxas 13.0 does not know", edit(ver, ".version 9.9")))
        out.append(("version_too_old", "a .version too old for sm_90a", edit(ver, ".version 7.0")))
    if tgt is not None:
        out.append(("target_missing", ".target removed", edit(tgt, "")))
        out.append(("target_unknown", "an unknown .target", edit(tgt, ".target sm_91z")))
    out.append(("missing_close_brace", "the function's closing brace removed", edit(close, "")))
    out.append(("stray_token", "a stray token at module scope", insert(close + 1, "garbage;")))
    out.append(("unterminated_comment", "an unterminated /* comment", insert(close, "/* never closed")))
    if bra is not None:
        out.append(("branch_to_unknown_label", "a branch to a label that does not exist", edit(bra, re.sub(r"bra(\.uni)?\s+[^;]+;", "bra NOWHERE;", lines[bra], 1))))
    if label is not None:
        out.append(("label_duplicated", "a label defined twice", insert(label + 1, lines[label])))
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    n = 0
    for base in BASES:
        path = os.path.join(CORPUS, base + ".ptx")
        lines = open(path).read().split("\n")
        # Keep the base's oracle flags (-c, -maxrregcount) but not its comment.
        flags = [l for l in lines if l.startswith("// oracle-flags:")]
        body = [l for l in lines if not l.startswith("//")]
        for name, what, new in mutations(body):
            text = "\n".join(
                [f"// Bad input: {what} (mutation '{name}' of tests/corpus/{base}.ptx)."] + flags + new
            )
            with open(os.path.join(OUT, f"{base}__{name}.ptx"), "w") as f:
                f.write(text)
            n += 1
    print(f"wrote {n} files to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
