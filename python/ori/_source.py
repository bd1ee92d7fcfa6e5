"""Map a PTX line to the user's source line through `.loc` and `.file`.

ori's JSON diagnostics name the user's file and line in their `source`
field. This module reads the same directives itself, for an `ori` binary
that predates that field and for the Triton hook's one-line summary: the
PTX names each instruction's origin in the `.loc` before it
(`.loc FILE LINE COL`, with `, inlined_at FILE LINE COL` where a helper
was inlined), and each file number in a `.file N "path"` directive.
"""

from __future__ import annotations

import re
from typing import Optional

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
_FUNC_START = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(?:entry|func)\b")

# Where installed libraries live: a frame there (Triton's `tl.dot`, a
# CUTLASS header) is not the line the user wrote.
_LIBRARY_DIRS = ("site-packages/", "dist-packages/", "/include/cute/", "/include/cutlass/")


class LineMap:
    """The `.loc` frames of every line of one PTX text."""

    def __init__(self, ptx: str):
        self.lines = ptx.splitlines()
        self.files: dict[int, str] = {}
        for line in self.lines:
            m = _FILE.match(line)
            if m:
                self.files[int(m.group(1))] = m.group(2).replace('\\"', '"')

    def _frame(self, file_no: str, line: str, col: str) -> Optional[dict]:
        path = self.files.get(int(file_no))
        if path is None or int(line) == 0:
            return None
        c = int(col)
        return {"file": path, "line": int(line), "column": c if c > 0 else None}

    def frames(self, ptx_line: int) -> list[dict]:
        """The source frames of PTX line `ptx_line` (1-based), innermost
        first: the last `.loc` at or before it in the same function."""
        k = min(ptx_line, len(self.lines)) - 1
        while k >= 0:
            text = self.lines[k]
            if _FUNC_START.match(text):
                return []
            m = _LOC.match(text)
            if m:
                out = [self._frame(*m.groups())]
                inl = _INLINED.search(text)
                if inl:
                    out.append(self._frame(*inl.groups()))
                return [f for f in out if f is not None]
            k -= 1
        return []

    def function_line(self, name: str) -> Optional[int]:
        """The PTX line of the first `.loc` in function `name` (1-based):
        where a diagnostic about the whole function points, the function's
        own definition in Triton's and nvcc's PTX."""
        header = re.compile(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?" + re.escape(name) + r"\b")
        inside = False
        for k, line in enumerate(self.lines):
            if not inside:
                inside = bool(_FUNC_START.match(line) and header.search(line))
            elif _FUNC_START.match(line):
                return None
            elif _LOC.match(line):
                return k + 1
        return None

    def source(self, ptx_line: int) -> Optional[dict]:
        """The user's line for PTX line `ptx_line`: the innermost frame
        outside an installed library, else the outermost frame."""
        frames = self.frames(ptx_line)
        for f in frames:
            if not any(d in f["file"].replace("\\", "/") for d in _LIBRARY_DIRS):
                return f
        return frames[-1] if frames else None
