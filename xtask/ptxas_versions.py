#!/usr/bin/env python3
"""Which ptxas versions ori's verdicts hold for.

ori models ptxas 13.0.88, the oracle of every `.expected` file. This script
records the real-kernel corpus (`tests/real/*/*.ptx`) with other ptxas
releases from PyPI and compares each one's exit status and GMMA messages
(the C75xx lines: codes, functions, order) with 13.0.88's.

Each ptxas runs exactly as `cargo xtask oracle record` runs the oracle
(xtask/src/oracle.rs): `ptxas -arch=sm_90a [// oracle-flags: ...] K.ptx -o
CUBIN` (no `-arch` of its own when the flags name one), in the kernel's folder
with the bare file name, its stdout lines then its stderr lines, right-trimmed,
blank lines dropped. 13.0.88 is run too, as the control: its lines must equal
the committed `.expected` files exactly.

A ptxas older than the kernel's `.version` rejects it before reading any
instruction ("Unsupported .version 9.0; current version is '8.4'"). For those
kernels the script also runs that ptxas on a copy whose `.version` line says
the newest PTX ISA that ptxas names in its message (same file name, same line
count), so the GMMA passes of the older release can be compared as well.

Data (written only by this script; never edit by hand):

    tests/real/ptxas_versions/VERSION.tsv          the kernels as committed
    tests/real/ptxas_versions/VERSION.lowered.tsv  .version lowered where rejected

one line per kernel: `family/kernel<TAB>exit status<TAB>messages joined by ' || '`
(a tab inside a message would be written as `\\t`); the exit status is `timeout`
where ptxas ran past the time limit (no verdict, as in oracle.rs).

Usage (python3, standard library only; run it under `nice`):

    python3 xtask/ptxas_versions.py [--jobs N] [--versions V ...] [--only SUBSTRING]
                                    [--time-limit S] [--no-run] [--write-doc]

Wheels are pip-installed (`--no-deps`) into target/ptxas-versions/VERSION
unless that ptxas is already there. Results are cached per kernel in
target/ptxas-versions/cache, keyed by the PTX text and the arguments, so an
interrupted run resumes. `--only` runs and summarizes the matching kernels
without writing the TSVs or the doc (they hold the whole corpus). `--no-run`
summarizes the committed TSVs. `--write-doc` writes docs/ptxas-versions.md.
"""

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "real")
DATA = os.path.join(CORPUS, "ptxas_versions")
TOOLS = os.path.join(ROOT, "target", "ptxas-versions")
DOC = os.path.join(ROOT, "docs", "ptxas-versions.md")
CONTROL = "13.0.88"
# Version -> PyPI distribution holding its ptxas.
WHEELS = collections.OrderedDict(
    [
        ("12.4.131", "nvidia-cuda-nvcc-cu12"),
        ("12.8.93", "nvidia-cuda-nvcc-cu12"),
        ("12.9.86", "nvidia-cuda-nvcc-cu12"),
        ("13.0.88", "nvidia-cuda-nvcc"),
        ("13.1.115", "nvidia-cuda-nvcc"),
        ("13.2.86", "nvidia-cuda-nvcc"),
        ("13.5.37", "nvidia-cuda-nvcc"),
    ]
)
TOOL_LIMIT_S = 600
# The exit status recorded for a ptxas that ran past its time limit (as oracle.rs,
# which records no verdict then); such results are not cached, so a later run
# tries again.
TIMED_OUT = "timeout"
UNSUPPORTED = re.compile(r"Unsupported \.version (\S+); current version is '([0-9.]+)'")
GMMA = re.compile(r"\((C75\d\d)\)")
FUNCTION = re.compile(r"function '([^']*)'")
LINE = re.compile(r"around line (\d+)")
ADVISORIES = ("C7517", "C7519")
# The accumulator type of a wgmma (`.f32` in `wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16`).
WGMMA_D = re.compile(r"wgmma\.mma_async(?:\.sp)?\.sync\.aligned\.m64n\d+k\d+\.(\w+)\.")


# ---------------------------------------------------------------- tools


def ptxas_path(version):
    """The ptxas binary of an installed wheel, or None."""
    base = os.path.join(TOOLS, version, "nvidia")
    for sub in ("cu13", "cuda_nvcc"):
        p = os.path.join(base, sub, "bin", "ptxas")
        if os.path.isfile(p):
            return p
    return None


def tool_version(path):
    """`Cuda compilation tools, release 13.0, V13.0.88` -> `13.0.88` (None if it cannot run)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    for line in out.stdout.splitlines():
        if ", V" in line:
            return line.rsplit(", V", 1)[1].strip()
    return None


def install(version):
    """Installs the wheel of `version` unless its ptxas is there; returns (path, error)."""
    p = ptxas_path(version)
    if p and tool_version(p) == version:
        return p, None
    target = os.path.join(TOOLS, version)
    spec = "%s==%s" % (WHEELS[version], version)
    print("installing %s into %s" % (spec, target), file=sys.stderr)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--upgrade", "--target", target, spec]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, "`%s` failed: %s" % (" ".join(cmd), r.stderr.strip()[-500:])
    p = ptxas_path(version)
    if not p:
        return None, "no ptxas in %s after installing %s" % (target, spec)
    got = tool_version(p)
    if got != version:
        return None, "%s does not run here or reports %r, not %s" % (p, got, version)
    return p, None


# ---------------------------------------------------------------- corpus


def cases():
    """Every `.ptx` below tests/real as `family/kernel`, sorted (oracle.rs's all_cases)."""
    found = []
    for d, _, files in os.walk(CORPUS):
        rel = os.path.relpath(d, CORPUS)
        for f in files:
            if f.endswith(".ptx"):
                stem = f[: -len(".ptx")]
                found.append(stem if rel == "." else "%s/%s" % (rel.replace(os.sep, "/"), stem))
    return sorted(found)


def header_flags(text):
    """`// oracle-flags:` of the leading comment lines (oracle.rs's case_header)."""
    flags = []
    for line in text.split("\n")[:30]:
        l = line.strip()
        if not l:
            continue
        if not l.startswith("//"):
            break
        c = l[2:].strip()
        if c.startswith("oracle-flags:"):
            flags.extend(c[len("oracle-flags:"):].split())
    return flags


def ptxas_args(name, flags, cubin):
    """oracle.rs's ptxas_args: `-arch=sm_90a` unless the flags name one."""
    args = []
    if not any(f.startswith("-arch") or f == "--gpu-name" for f in flags):
        args.append("-arch=sm_90a")
    return args + list(flags) + ["%s.ptx" % name, "-o", cubin]


def lines(s):
    """process.rs's lines: non-blank lines, right-trimmed."""
    out = []
    for l in s.split("\n"):
        l = l.rstrip()
        if l.strip():
            out.append(l)
    return out


def expected_of(case):
    """(exit, messages) of the committed `.expected` file."""
    path = os.path.join(CORPUS, case + ".expected")
    exit_code, messages, in_messages = None, [], False
    with open(path, encoding="utf-8") as f:
        for raw in f.read().split("\n"):
            line = raw.rstrip("\r")
            if in_messages:
                if line == "end" or (line.startswith("skeleton ") and line.endswith(":")):
                    break
                if line.strip():
                    messages.append(line)
            elif line.startswith("exit:"):
                exit_code = int(line[len("exit:"):].strip())
            elif line == "messages:":
                in_messages = True
    return exit_code, messages


def lowered_text(text, ptx_version):
    """The PTX with its `.version` directive set to `ptx_version` (nothing else changes)."""
    return re.sub(r"(?m)^(\s*)\.version\s+\S+", r"\g<1>.version " + ptx_version, text, count=1)


# ---------------------------------------------------------------- running


class Runner:
    """Runs one ptxas on kernels, with a per-kernel result cache."""

    def __init__(self, version, ptxas, tmp, limit):
        self.version = version
        self.limit = limit
        self.ptxas = ptxas
        self.tmp = tmp
        self.cache = os.path.join(TOOLS, "cache", version)
        os.makedirs(self.cache, exist_ok=True)

    def run(self, case, ptx_version=None):
        """(exit, messages) of ptxas on `case`, its `.version` set to `ptx_version` if given."""
        folder, name = os.path.split(os.path.join(CORPUS, case))
        ptx = os.path.join(folder, name + ".ptx")
        with open(ptx, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        flags = header_flags(text)
        if ptx_version is not None:
            text = lowered_text(text, ptx_version)
        key = hashlib.sha256(
            json.dumps([self.version, flags, name, text], ensure_ascii=True).encode()
        ).hexdigest()
        cached = os.path.join(self.cache, key + ".json")
        if os.path.isfile(cached):
            with open(cached, encoding="utf-8") as f:
                r = json.load(f)
            return r["exit"], r["messages"]
        work = tempfile.mkdtemp(dir=self.tmp)
        try:
            if ptx_version is not None:
                with open(os.path.join(work, name + ".ptx"), "w", encoding="utf-8",
                          errors="surrogateescape") as f:
                    f.write(text)
                cwd = work
            else:
                cwd = folder
            cubin = os.path.join(work, case.replace("/", "__") + ".cubin")
            result = self._ptxas(ptxas_args(name, flags, cubin), cwd)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if result[0] == TIMED_OUT:
            return result
        tmpname = cached + ".%d.tmp" % threading.get_ident()
        with open(tmpname, "w", encoding="utf-8") as f:
            json.dump({"exit": result[0], "messages": result[1]}, f)
        os.replace(tmpname, cached)
        return result

    def _ptxas(self, args, cwd):
        try:
            p = subprocess.run([self.ptxas] + args, cwd=cwd, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=self.limit)
            code = p.returncode if p.returncode >= 0 else -1
            out, err = p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            code, out, err = TIMED_OUT, e.stdout or b"", e.stderr or b""
        messages = lines(out.decode("utf-8", "replace")) + lines(err.decode("utf-8", "replace"))
        return code, messages


def run_all(runner, names, jobs, label, lowered_to=None):
    """{case: (exit, messages)} for `names`; `lowered_to` maps a case to its new `.version`."""
    results = {}
    done = [0]
    lock = threading.Lock()

    def one(case):
        r = runner.run(case, lowered_to[case] if lowered_to else None)
        with lock:
            done[0] += 1
            if done[0] % 50 == 0 or done[0] == len(names):
                print("  %s %s: %d/%d" % (runner.version, label, done[0], len(names)),
                      file=sys.stderr, flush=True)
        return case, r

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for case, r in pool.map(one, names):
            results[case] = r
    return results


def record_version(version, names, jobs, tmp, limit):
    """(verbatim, lowered or None, error): results of one version on `names`."""
    ptxas, err = install(version)
    if err:
        return None, None, err
    runner = Runner(version, ptxas, tmp, limit)
    verbatim = run_all(runner, names, jobs, "as committed")
    lower = {}
    for case, (_, messages) in verbatim.items():
        for m in messages:
            u = UNSUPPORTED.search(m)
            if u:
                lower[case] = u.group(2)
    if not lower:
        return verbatim, None, None
    again = run_all(runner, sorted(lower), jobs, ".version lowered", lower)
    lowered = dict(verbatim)
    lowered.update(again)
    return verbatim, lowered, None


# ---------------------------------------------------------------- data files


def tsv_path(version, lowered):
    return os.path.join(DATA, version + (".lowered.tsv" if lowered else ".tsv"))


def write_tsv(version, lowered, results):
    os.makedirs(DATA, exist_ok=True)
    with open(tsv_path(version, lowered), "w", encoding="utf-8", newline="\n") as f:
        for case in sorted(results):
            code, messages = results[case]
            joined = " || ".join(m.replace("\t", "\\t") for m in messages)
            f.write("%s\t%s\t%s\n" % (case, code, joined))


def read_tsv(version, lowered):
    path = tsv_path(version, lowered)
    if not os.path.isfile(path):
        return None
    results = {}
    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if not line:
                continue
            case, code, joined = line.split("\t", 2)
            code = code if code == TIMED_OUT else int(code)
            results[case] = (code, joined.split(" || ") if joined else [])
    return results


# ---------------------------------------------------------------- comparing


def gmma(messages):
    """The GMMA messages: (code, function) of each C75xx line, in order."""
    out = []
    for m in messages:
        c = GMMA.search(m)
        if c:
            f = FUNCTION.search(m)
            out.append((c.group(1), f.group(1) if f else ""))
    return out


def advisories(messages):
    """(code, line) of each C7517/C7519 advisory, in order."""
    out = []
    for m in messages:
        c = GMMA.search(m)
        if c and c.group(1) in ADVISORIES:
            l = LINE.search(m)
            out.append((c.group(1), l.group(1) if l else ""))
    return out


def normalized(message):
    """A message without its file, line numbers and function names (for grouping)."""
    m = re.sub(r"^ptxas \S+, line \d+; ", "ptxas ", message)
    m = re.sub(r"\bline \d+", "line N", m)
    m = FUNCTION.sub("function '...'", m)
    return re.sub(r"\s+:", ":", m)


def gloss(message):
    """What a GMMA message says ptxas did, in a few words that do not depend on its wording."""
    if "serialized" in message:
        return "serializes"
    if "is injected" in message:
        injected = message.split("is injected")[0]
        return "injects a wait" if "wait" in injected else "injects an arrive"
    return "other"


def codes(messages):
    """`C7517 x2 (injects a wait), C7519 (...)` for the GMMA codes of `messages` (`none`)."""
    n, what = collections.Counter(), {}
    for m in messages:
        c = GMMA.search(m)
        if c:
            n[c.group(1)] += 1
            what[c.group(1)] = gloss(m)
    if not n:
        return "none"
    return ", ".join("%s%s (%s)" % (c, "" if k == 1 else " x%d" % k, what[c])
                     for c, k in sorted(n.items()))


def accumulators(case):
    """The accumulator types of the kernel's wgmma instructions (`f16`, `f32`, `s32`)."""
    with open(os.path.join(CORPUS, case + ".ptx"), encoding="utf-8", errors="replace") as f:
        found = WGMMA_D.findall(f.read())
    return "/".join(sorted(set(found))) or "no wgmma"


def difference(base, got):
    """The group key of a kernel whose exit or GMMA messages differ from 13.0.88's, or None."""
    (be, bm), (ge, gm) = base, got
    if ge == TIMED_OUT:
        return "no verdict: ptxas ran past the time limit here"
    if be != ge:
        first = next((normalized(m) for m in gm if "error" in m or "fatal" in m), None)
        return "exit %s where 13.0.88 exits %d%s" % (
            ge, be, ": `%s`" % first if first else "")
    if gmma(bm) == gmma(gm):
        return None
    b, g = codes(bm), codes(gm)
    if b == g:
        return "the same codes (%s) for other functions or in another order" % b
    if b == "none":
        return "prints %s where 13.0.88 prints no GMMA message" % g
    if g == "none":
        return "prints no GMMA message where 13.0.88 prints %s" % b
    return "prints %s where 13.0.88 prints %s" % (g, b)


class Comparison:
    """One version's results against the committed `.expected` files (ptxas 13.0.88)."""

    def __init__(self, results, baseline):
        self.kernels = len(baseline)
        self.exit = self.gmma = self.both = self.lines = self.verbatim = 0
        self.groups = collections.OrderedDict()
        # (13.0.88's line, this version's line), normalized -> kernels whose exit
        # and GMMA messages agree but whose lines differ in wording.
        self.wording = collections.OrderedDict()
        for case in sorted(baseline):
            base, got = baseline[case], results[case]
            same_exit = base[0] == got[0]
            same_gmma = gmma(base[1]) == gmma(got[1])
            self.exit += same_exit
            self.gmma += same_gmma
            self.both += same_exit and same_gmma
            self.lines += advisories(base[1]) == advisories(got[1])
            self.verbatim += same_exit and base[1] == got[1]
            key = difference(base, got)
            if key:
                self.groups.setdefault(key, []).append(case)
            elif base[1] != got[1]:
                for pair in reworded(base[1], got[1]):
                    self.wording.setdefault(pair, []).append(case)

    def row(self, label):
        return "| %s | %d | %d | %d | %d | %d | %d |" % (
            label, self.kernels, self.exit, self.gmma, self.both, self.lines, self.verbatim)

    def describe(self):
        out = []
        for key, kernels in sorted(self.groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            fam = collections.Counter(k.split("/")[0] for k in kernels)
            acc = collections.Counter(accumulators(k) for k in kernels)
            out.append("- %d kernel%s: %s. Families: %s. Accumulators: %s. E.g. %s." % (
                len(kernels), "" if len(kernels) == 1 else "s", key,
                ", ".join("%s %d" % kv for kv in sorted(fam.items())),
                ", ".join("%s %d" % kv for kv in sorted(acc.items())),
                ", ".join("`%s`" % k for k in kernels[:3])))
        return out

    def describe_wording(self, version):
        out = []
        for (a, b), kernels in sorted(self.wording.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            same = " (only line numbers or names differ)" if a == b else ""
            out.append("- %d kernel%s%s: 13.0.88 `%s`; %s `%s`. E.g. %s." % (
                len(kernels), "" if len(kernels) == 1 else "s", same, a, version, b,
                ", ".join("`%s`" % k for k in kernels[:2])))
        return out


def reworded(base, got):
    """The normalized (13.0.88 line, other line) pairs where two outputs differ (`-` for none)."""
    if len(base) == len(got):
        pairs = [(normalized(a), normalized(b)) for a, b in zip(base, got) if a != b]
    else:
        b, g = collections.Counter(map(normalized, base)), collections.Counter(map(normalized, got))
        pairs = [(m, "-") for m in sorted(b - g)] + [("-", m) for m in sorted(g - b)]
    return sorted(set(pairs))


def legend(all_results):
    """Each GMMA code seen, with the text of its first message (names and lines elided)."""
    seen = collections.OrderedDict()
    for results in all_results:
        for case in sorted(results):
            for m in results[case][1]:
                c = GMMA.search(m)
                if c and c.group(1) not in seen:
                    seen[c.group(1)] = normalized(m)
    return ["- `%s`" % seen[c] for c in sorted(seen)]


# ---------------------------------------------------------------- report


TABLE_HEAD = (
    "| ptxas | kernels | exit status | GMMA messages | exit and GMMA | advisory lines "
    "| every line verbatim |\n"
    "|---|---:|---:|---:|---:|---:|---:|"
)


def report(versions, recorded, problems, baseline, control, command):
    """The Markdown summary (printed, and written by --write-doc)."""
    out = ["# ptxas versions", "",
           "Generated by `%s` from the data in `tests/real/ptxas_versions/`; "
           "do not edit." % command,
           "",
           "ori's verdicts are measured against ptxas 13.0.88. This page says which other ptxas "
           "releases print the same verdicts on the real-kernel corpus (`tests/real`, %d kernels). "
           "Each ptxas (from its PyPI wheel) ran as `cargo xtask oracle record` runs the oracle: "
           "`ptxas -arch=sm_90a [oracle-flags] K.ptx -o K.cubin` in the kernel's folder; "
           "`VERSION.tsv` holds its exit status (`timeout` where it ran past the time "
           "limit, `--time-limit`, %d s by default) and every line it printed, per kernel."
           % (len(baseline), TOOL_LIMIT_S),
           "",
           "A kernel counts as agreeing when its exit status and its GMMA messages "
           "(the C75xx lines: codes, functions, order) equal those of the committed "
           "`.expected` files, which ptxas 13.0.88 wrote. *Advisory lines* compares the line "
           "numbers of the C7517/C7519 advisories; *every line verbatim* compares all output "
           "lines. SASS (the GMMA sync skeletons of the `.expected` files) is not compared "
           "here.", ""]
    if control is not None:
        out += ["Control: ptxas 13.0.88, run by this script, printed exactly the committed "
                "`.expected` exit status and message lines on %d of %d kernels." % control, ""]
    out += result_section(versions, recorded, problems, len(baseline), baseline)
    out += ["## Kernels as committed", "", TABLE_HEAD]
    rows, lowered_rows, notes = [], [], []
    for v in versions:
        if v in problems:
            rows.append("| %s | %d | cannot run here | | | | |" % (v, len(baseline)))
            notes.append("- ptxas %s: %s" % (v, problems[v]))
            continue
        if v not in recorded:
            rows.append("| %s | %d | not recorded | | | | |" % (v, len(baseline)))
            continue
        verbatim, lowered = recorded[v]
        rows.append(Comparison(verbatim, baseline).row(v))
        if lowered is not None:
            lowered_rows.append((v, Comparison(lowered, baseline), lowered))
    out += rows + [""]
    out += differences_section(versions, recorded, baseline)
    if lowered_rows:
        out += lowered_section(lowered_rows)
    all_results = [r for v in versions if v in recorded for r in recorded[v] if r is not None]
    out += ["## The GMMA messages seen", ""] + legend([baseline] + all_results) + [""]
    if notes:
        out += ["## Versions that could not run", ""] + notes + [""]
    return "\n".join(out)


def result_section(versions, recorded, problems, n, baseline):
    """One line per version: on how many kernels it agrees with 13.0.88."""
    out = ["## Result", ""]
    for v in versions:
        if v == CONTROL:
            continue
        if v in problems:
            out.append("- ptxas %s: cannot run here (see below)." % v)
            continue
        if v not in recorded:
            out.append("- ptxas %s: not recorded." % v)
            continue
        verbatim, lowered = recorded[v]
        c = Comparison(verbatim, baseline)
        line = "- ptxas %s: exit status and GMMA messages equal 13.0.88's on %d of %d kernels, " \
               "every output line on %d" % (v, c.both, n, c.verbatim)
        if c.both > c.verbatim:
            line += " (the other %d in other words, listed below)" % (c.both - c.verbatim)
        if lowered is not None:
            rejected = sum(1 for c in verbatim if UNSUPPORTED.search(" ".join(verbatim[c][1])))
            line += " (it rejects the `.version` of %d); on %d of %d with `.version` lowered" % (
                rejected, Comparison(lowered, baseline).both, n)
        out.append(line + ".")
    return out + [""]


def differences_section(versions, recorded, baseline):
    out = []
    for v in versions:
        if v not in recorded or v == CONTROL:
            continue
        c = Comparison(recorded[v][0], baseline)
        if c.groups:
            out += ["Where ptxas %s differs from 13.0.88 (kernels as committed):" % v, ""]
            out += c.describe() + [""]
        if c.wording:
            out += ["Where ptxas %s prints the same GMMA messages in other words "
                    "(kernels as committed):" % v, ""]
            out += c.describe_wording(v) + [""]
    if not out:
        return ["Every other recorded version agrees with 13.0.88 on every kernel.", ""]
    return out


def lowered_section(lowered_rows):
    out = ["## `.version` lowered where a ptxas rejects it", "",
           "A ptxas older than a kernel's PTX ISA version rejects it at its `.version` line. "
           "These rows run such ptxas again on a copy of each rejected kernel whose "
           "`.version` says the newest ISA that ptxas names in its message "
           "(`VERSION.lowered.tsv`); the other kernels keep their result.", "", TABLE_HEAD]
    out += [c.row(v) for v, c, _ in lowered_rows] + [""]
    for v, c, lowered in lowered_rows:
        n = sum(1 for m in lowered.values() if m is not None)
        if c.groups:
            out += ["Where ptxas %s differs from 13.0.88 (`.version` lowered):" % v, ""]
            out += c.describe() + [""]
        else:
            out += ["ptxas %s, `.version` lowered, agrees with 13.0.88 on all %d kernels."
                    % (v, n), ""]
    return out


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1, help="ptxas processes at once (default 1)")
    ap.add_argument("--versions", nargs="+", default=list(WHEELS), choices=list(WHEELS),
                    metavar="V", help="versions to record (default: all): " + " ".join(WHEELS))
    ap.add_argument("--only", metavar="SUBSTRING",
                    help="only kernels whose name contains SUBSTRING (writes no TSV, no doc)")
    ap.add_argument("--time-limit", type=int, default=TOOL_LIMIT_S, metavar="S",
                    help="seconds one ptxas may run (default %d, as oracle.rs)" % TOOL_LIMIT_S)
    ap.add_argument("--no-run", action="store_true", help="summarize the committed TSVs only")
    ap.add_argument("--write-doc", action="store_true", help="write docs/ptxas-versions.md")
    a = ap.parse_args()
    if a.jobs < 1:
        ap.error("--jobs needs a positive number")
    if a.only and a.write_doc:
        ap.error("--only selects part of the corpus; the doc covers all of it")
    names = [c for c in cases() if not a.only or a.only in c]
    if not names:
        ap.error("no kernel matches --only %r" % a.only)
    baseline = {c: expected_of(c) for c in names}
    recorded, problems = {}, {}
    tmp = tempfile.mkdtemp(prefix="ori-ptxas-versions-")
    try:
        for v in (a.versions if not a.no_run else []):
            verbatim, lowered, err = record_version(v, names, a.jobs, tmp, a.time_limit)
            if err:
                problems[v] = err
                print("ptxas %s: %s" % (v, err), file=sys.stderr)
                continue
            recorded[v] = (verbatim, lowered)
            if not a.only:
                write_tsv(v, False, verbatim)
                if lowered is not None:
                    write_tsv(v, True, lowered)
                elif os.path.isfile(tsv_path(v, True)):
                    os.remove(tsv_path(v, True))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for v in WHEELS:
        if v in recorded or v in problems:
            continue
        verbatim = read_tsv(v, False)
        if verbatim is not None:
            lowered = read_tsv(v, True)
            pick = lambda r: None if r is None else {c: r[c] for c in names if c in r}
            recorded[v] = (pick(verbatim), pick(lowered))
            if any(c not in verbatim for c in names):
                problems[v] = "its TSV lacks kernels of the corpus; record it again"
                del recorded[v]
    control = None
    if CONTROL in recorded:
        r = recorded[CONTROL][0]
        control = (sum(1 for c in names if r[c] == baseline[c]), len(names))
    command = "python3 xtask/ptxas_versions.py --write-doc"
    text = report(list(WHEELS), recorded, problems, baseline, control, command)
    print(text)
    if a.write_doc:
        with open(DOC, "w", encoding="utf-8", newline="\n") as f:
            f.write(text.rstrip("\n") + "\n")
        print("wrote %s" % os.path.relpath(DOC, ROOT), file=sys.stderr)
    if control is not None and control[0] != control[1]:
        bad = [c for c in names if recorded[CONTROL][0][c] != baseline[c]]
        print("control failed: ptxas 13.0.88 differs from .expected on %s" % ", ".join(bad[:10]),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
