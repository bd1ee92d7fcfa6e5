"""ori from Python: ptxas's GMMA diagnostics (phases 85 and 87) on PTX.

The wheel carries two programs, `ori` and `ori-ptxas`, installed beside
the interpreter's scripts; this package finds and runs them. There is no
compiled extension: every call is one `ori compile` process reading JSON
diagnostics, so the package works with any Python 3 the wheel installs on.

    import ori
    for d in ori.check("kernel.ptx"):
        print(d["code"], d["source"], d["message"])

    TRITON_PTXAS_PATH=$(python -m ori ptxas-path)   # or ori.ptxas_path()
    ORI_TRITON=1 python train.py                    # or ori.triton.install()
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from typing import Any, Optional, Union

from ._source import LineMap

__all__ = ["check", "ptxas_path", "ori_path", "OriError", "CompileError", "LineMap"]

_EXE = sysconfig.get_config_var("EXE") or ""


class OriError(RuntimeError):
    """ori could not run, or refused its command line."""


class CompileError(OriError):
    """The input is not valid PTX; `diagnostics` holds ori's errors, each
    with its file, line and column."""

    def __init__(self, message: str, diagnostics: list[dict]):
        super().__init__(message)
        self.diagnostics = diagnostics


def _script_dirs() -> list[str]:
    """Where pip puts a wheel's scripts: this interpreter's scheme, the user
    scheme, and the `bin` of the prefix this package was installed under."""
    dirs = [sysconfig.get_path("scripts")]
    user_scheme = f"{os.name}_user" if os.name != "posix" else "posix_user"
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=user_scheme))
    except KeyError:
        pass
    # .../lib/pythonX.Y/site-packages/ori -> .../bin (a --target or --prefix install).
    here = os.path.dirname(os.path.abspath(__file__))
    dirs.append(os.path.normpath(os.path.join(here, "..", "..", "..", "..", "bin")))
    return [d for d in dirs if d]


def _find(name: str) -> str:
    override = os.environ.get("ORI_BIN_DIR")
    dirs = [override] if override else _script_dirs()
    for d in dirs:
        path = os.path.join(d, name + _EXE)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = None if override else shutil.which(name)
    if found:
        return found
    raise OriError(f"cannot find the `{name}` program (looked in {', '.join(dirs)}); "
                   "reinstall the ori wheel, or set ORI_BIN_DIR to the folder holding it")


def ori_path() -> str:
    """The path of the bundled `ori` program."""
    return _find("ori")


def ptxas_path() -> str:
    """The path of the bundled `ori-ptxas`, a drop-in ptxas for
    `TRITON_PTXAS_PATH`: it runs the ptxas Triton would have run and
    explains ptxas's C75xx messages where the user sees them."""
    return _find("ori-ptxas")


_OPTIONS = {
    "arch": lambda v: ["--arch", str(v)],
    "compile_only": lambda v: ["--compile-only"] if v else [],
    "maxrregcount": lambda v: [] if v is None else ["--maxrregcount", str(int(v))],
    "isa_strict": lambda v: ["--isa-strict"] if v else [],
}


def _is_path(x: Union[str, "os.PathLike[str]"]) -> bool:
    if isinstance(x, os.PathLike):
        return True
    return "\n" not in x and len(x) < 4096 and os.path.isfile(x)


def _parse(stream: str) -> list[dict]:
    out = []
    for line in stream.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def _ptx_line(d: dict) -> Optional[int]:
    culprit = d.get("culprit") or {}
    return culprit.get("line") or d.get("line") or None


def _add_source(diags: list[dict], ptx: Optional[str]) -> None:
    """Fill `source` where ori left it out, from the PTX's `.loc`/`.file`."""
    lmap = None
    for d in diags:
        if d.get("source") is not None or ptx is None:
            d.setdefault("source", None)
            continue
        lmap = lmap or LineMap(ptx)
        line = _ptx_line(d)
        if line is None and d.get("function"):
            # A finding about the whole function: its definition.
            line = lmap.function_line(d["function"])
        d["source"] = None if line is None else lmap.source(line)


def check(path_or_text: Union[str, "os.PathLike[str]"], **options: Any) -> list[dict]:
    """Run ori's phases 85 and 87 on a PTX file (a path) or PTX text, and
    return its diagnostics as dicts: `code` (C7517), `severity`, `function`,
    `line` (the PTX line), `message` (ptxas's text), `rule`, `culprit`,
    `help` (the fix), `related` and `source` (`{"file", "line", "column"}`
    of the user's Python or C++ line, or None).

    Options: `arch` ("sm_90a"), `compile_only`, `maxrregcount`,
    `isa_strict`. Raises CompileError for input that is not valid PTX,
    OriError when ori cannot run."""
    args = []
    for key, value in options.items():
        if key not in _OPTIONS:
            raise TypeError(f"ori.check() got an unknown option {key!r} "
                            f"(known: {', '.join(sorted(_OPTIONS))})")
        args += _OPTIONS[key](value)
    if _is_path(path_or_text):
        path = os.fspath(path_or_text)
        return _run(path, args, shown=None)
    return _check_text(str(path_or_text), args, "<string>")


def _check_text(text: str, args: list[str], shown: str) -> list[dict]:
    """`check` of PTX text, its diagnostics naming the file `shown`."""
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    try:
        return _run(f.name, args, shown=shown)
    finally:
        os.unlink(f.name)


def _run(path: str, args: list[str], shown: Optional[str]) -> list[dict]:
    cmd = [ori_path(), "compile", path, "--message-format", "json", "--color", "never", *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise OriError(f"cannot run {cmd[0]}: {e}") from e
    # One JSON object per line on stdout; ori releases before the
    # diagnostics moved to stdout wrote them on stderr.
    diags = _parse(p.stdout) or _parse(p.stderr)
    for d in diags:
        # ptxas names an input by its file name alone.
        if d.get("file") in (None, path, os.path.basename(path)):
            d["file"] = shown or path
    if p.returncode == 0:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                ptx = f.read()
        except OSError:
            ptx = None
        _add_source(diags, ptx)
        return diags
    if p.returncode == 1 and diags:
        first = diags[0]
        where = f"{first['file']}:{first.get('line') or '?'}:{first.get('column') or '?'}"
        raise CompileError(f"{where}: {first.get('message')}", diags)
    raise OriError(f"ori exited with status {p.returncode}: {(p.stderr or p.stdout).strip()}")


def main(argv: Optional[list[str]] = None) -> int:
    """`python -m ori ARGS`: the `ori` program with these arguments;
    `python -m ori ptxas-path` prints the `ori-ptxas` path, and
    `python -m ori triton-env` the shell line that makes the installed
    Triton run it (`eval "$(python -m ori triton-env)"`)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv == ["ptxas-path"]:
            print(ptxas_path())
            return 0
        if argv == ["triton-env"]:
            from .triton import ptxas_env

            for var, value in ptxas_env().items():
                print(f"export {var}={value}")
            return 0
        exe = ori_path()
    except OriError as e:
        print(f"ori: {e}", file=sys.stderr)
        return 127
    if os.name == "posix":
        sys.stdout.flush()
        os.execv(exe, [exe, *argv])
    return subprocess.call([exe, *argv])
