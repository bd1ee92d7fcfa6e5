"""A Triton compilation listener: ori's verdict on each kernel as Triton
compiles it, printed on the kernel's Python line.

Triton keeps ptxas's messages to itself, so a kernel whose wgmma pipeline
ptxas serializes (C7509-C7516, C7518, C7520) or into which it injects a
wait or an arrive (C7517, C7519) compiles without a word. Triton calls
`knobs.compilation.listener` after every compilation (and every cache
hit) with the paths of the stages it stored; the listener runs `ori
compile` on the stored PTX and prints one short diagnostic per such
kernel, naming the Python line, the rule and the fix.

    import ori.triton; ori.triton.install()          # or ORI_TRITON=1
    ori.triton.install(strict=True)                   # or ORI_TRITON=strict: raise

`ORI_TRITON` is read at interpreter start-up (the wheel's `.pth` file), so
it reaches `torch.compile`'s compile workers, which are fresh processes.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from typing import Any, Optional

import ori

# The injected arrive and wait: the pipeline stays asynchronous.
_INJECTED = {"C7517", "C7519"}


class OriTritonError(RuntimeError):
    """Raised in strict mode for a kernel ptxas would serialize or inject
    into; `diagnostics` holds ori's diagnostics of the kernel."""

    def __init__(self, message: str, diagnostics: list[dict]):
        super().__init__(message)
        self.diagnostics = diagnostics


class _Hook:
    """The listener: ori on each kernel's PTX, once per kernel and process."""

    def __init__(self, strict: bool, stream: Any, chained: Any):
        self.strict = strict
        self.stream = stream
        self.chained = chained
        self.seen: set[str] = set()
        self.reports: list[dict] = []

    def __call__(self, *, src: Any = None, metadata: dict, metadata_group: dict, times: Any = None,
                 cache_hit: bool = False, **rest: Any) -> None:
        if self.chained is not None:
            self.chained(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                         cache_hit=cache_hit, **rest)
        report = self.check(metadata, metadata_group)
        if report is None:
            return
        text = render(report)
        print(text, file=self.stream or sys.stderr, flush=True)
        if self.strict:
            raise OriTritonError(text, report["diagnostics"])

    def check(self, metadata: dict, metadata_group: dict) -> Optional[dict]:
        """ori's report of one compiled kernel, or None when there is
        nothing to say (no wgmma, not Hopper, no finding, seen before)."""
        ptx_path = next((p for k, p in sorted(metadata_group.items()) if k.endswith(".ptx")), None)
        arch = _arch(metadata.get("target"))
        if ptx_path is None or arch is None:
            return None
        key = str(metadata.get("hash") or ptx_path)
        if key in self.seen:
            return None
        self.seen.add(key)
        try:
            with open(ptx_path, encoding="utf-8", errors="replace") as f:
                ptx = f.read()
        except OSError:
            return None
        # Phases 85 and 87 act on wgmma alone: other kernels need no process.
        if "wgmma" not in ptx:
            return None
        kernel = metadata.get("name") or _entry(ptx)
        try:
            diags, note = _check(ptx_path, ptx, arch)
        except ori.OriError as e:
            # ori's limits are not the kernel's: say so, never fail the compile.
            print(f"ori: kernel `{kernel}` not checked: {e}", file=self.stream or sys.stderr, flush=True)
            return None
        diags = [d for d in diags if (d.get("code") or "").startswith("C75")]
        if not diags:
            return None
        report = {"kernel": kernel, "ptx": ptx_path, "diagnostics": diags, "note": note}
        self.reports.append(report)
        return report


# The PTX ISA Triton's LLVM emits at most (`features = +ptx{min(90, v)}`
# in backends/nvidia/compiler.py): a higher `.version` line, which Triton
# writes from the ptxas it bundles, labels ISA 9.0 code.
_LLVM_ISA = "9.0"
_VERSION = re.compile(r"^\.version\s+(\d+)\.(\d+)\s*$", re.M)


def _check(ptx_path: str, ptx: str, arch: str) -> tuple:
    """ori's diagnostics of Triton's PTX, and a note when it was read at
    ISA 9.0 (ori reads what ptxas 13.0.88 reads, up to `.version 9.0`)."""
    # Triton passes ptxas no register limit: `maxnreg` is a `.maxnreg`
    # directive in the PTX, which ori reads there.
    m = _VERSION.search(ptx)
    if m is None or (int(m.group(1)), int(m.group(2))) <= (9, 0):
        return ori.check(ptx_path, arch=arch), None
    text = ptx[:m.start()] + f".version {_LLVM_ISA}" + ptx[m.end():]
    note = f"read as .version {_LLVM_ISA} (Triton's LLVM emits ISA {_LLVM_ISA}; the PTX says {m.group(1)}.{m.group(2)})"
    return ori._check_text(text, ["--arch", arch], ptx_path), note


def _arch(target: Any) -> Optional[str]:
    """`sm_90a` for a Hopper target (GPUTarget, or its fields as a list or
    dict after a cache hit); None for other targets."""
    if target is None:
        return None
    if isinstance(target, dict):
        backend, cap = target.get("backend"), target.get("arch")
    elif isinstance(target, (list, tuple)) and not hasattr(target, "backend"):
        backend, cap = (list(target) + [None, None])[:2]
    else:
        backend, cap = getattr(target, "backend", None), getattr(target, "arch", None)
    return "sm_90a" if backend == "cuda" and str(cap) == "90" else None


def _entry(ptx: str) -> str:
    for line in ptx.splitlines():
        if ".entry" in line:
            return line.split(".entry", 1)[1].strip().split("(")[0].strip()
    return "?"


def _primary(diags: list[dict]) -> dict:
    """The diagnostic to show: a serialization before an injection."""
    serial = [d for d in diags if d.get("code") not in _INJECTED]
    return (serial or diags)[0]


def render(report: dict) -> str:
    """The few lines the user sees for one kernel."""
    diags = report["diagnostics"]
    d = _primary(diags)
    src = d.get("source")
    where = f"{src['file']}:{src['line']}" if src else f"{report['ptx']}:{ori._ptx_line(d) or '?'}"
    verdict = ("ptxas injects a warpgroup wait/arrive" if d.get("code") in _INJECTED
               else "ptxas serializes the wgmma pipeline")
    lines = [f"{where}: {d.get('severity', 'info')}[{d.get('code')}]: kernel `{report['kernel']}`: "
             f"{verdict}: {d.get('message')}"]
    if src:
        text = linecache.getline(src["file"], src["line"]).rstrip()
        if text:
            lines.append(f"  {src['line']:>5} | {text.strip()}")
    if d.get("rule"):
        lines.append(f"  = rule: {d['rule']} (python -m ori explain {d['rule']})")
    if d.get("help"):
        lines.append(f"  = fix: {d['help']}")
    more = len(diags) - 1
    tail = f"{more} more; " if more else ""
    if report.get("note"):
        # `ori compile` reads the file as ptxas 13.0.88 would: not above 9.0.
        lines.append(f"  = note: {report['note']}")
        lines.append(f"  = {tail}PTX: {report['ptx']}")
    else:
        lines.append(f"  = {tail}details: python -m ori compile {report['ptx']}")
    return "\n".join(lines)


def ptxas_env(capability: int = 90) -> dict:
    """The environment that makes the installed Triton run `ori-ptxas` for
    targets of this compute capability: `TRITON_PTXAS_PATH`, or
    `TRITON_PTXAS_BLACKWELL_PATH` in the Triton releases that compile sm_90
    with their `ptxas-blackwell`. Asks Triton which ptxas it would run."""
    from triton.backends.nvidia import compiler

    var = "TRITON_PTXAS_PATH"
    try:
        tool = compiler.get_ptxas(capability)
    except TypeError:  # releases whose get_ptxas() takes no target
        tool = compiler.get_ptxas()
    if os.path.basename(tool.path).startswith("ptxas-blackwell") or \
            os.environ.get("TRITON_PTXAS_BLACKWELL_PATH") == tool.path:
        var = "TRITON_PTXAS_BLACKWELL_PATH"
    return {var: ori.ptxas_path()}


_installed: Optional[_Hook] = None


def install(strict: bool = False, stream: Any = None) -> _Hook:
    """Register the listener with Triton (`triton.knobs.compilation.listener`,
    Triton 3.4 and later), keeping a listener already there. With `strict`,
    a kernel ptxas would serialize or inject into raises OriTritonError.
    Returns the hook; its `reports` lists what it found."""
    global _installed
    try:
        from triton import knobs
    except ImportError as e:
        raise ori.OriError("ori.triton needs Triton 3.4 or later (triton.knobs)") from e
    current = knobs.compilation.listener
    if isinstance(current, _Hook):
        current.strict, current.stream = strict, stream
        _installed = current
        return current
    _installed = _Hook(strict, stream, current)
    knobs.compilation.listener = _installed
    return _installed


def uninstall() -> None:
    """Remove the listener, restoring the one it wrapped."""
    global _installed
    from triton import knobs
    if isinstance(knobs.compilation.listener, _Hook):
        knobs.compilation.listener = knobs.compilation.listener.chained
    _installed = None


def install_from_env() -> None:
    """`ORI_TRITON=1` (or `on`, `true`) installs the hook; `=strict` in
    strict mode. Called once Triton is imported (`_ori_autoload`)."""
    mode = os.environ.get("ORI_TRITON", "").strip().lower()
    if mode in ("", "0", "off", "false", "no"):
        return
    try:
        install(strict=(mode == "strict"))
    except ori.OriError as e:
        print(f"ori: ORI_TRITON={mode}: {e}", file=sys.stderr)
