"""Paths and helpers shared by the wheel's tests."""

import os
import subprocess
import sys

REPO = os.environ.get("ORI_REPO") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REAL = os.path.join(REPO, "tests", "real")


def expected_messages(ptx_path: str) -> list[str]:
    """ptxas 13.0.88's recorded C75xx lines for a real kernel (the oracle's
    `.expected` beside it), as `(C7511) text`."""
    out = []
    with open(ptx_path[:-len(".ptx")] + ".expected") as f:
        for line in f:
            at = line.find("(C75")
            if at >= 0 and not line.startswith("#"):
                out.append(line[at:].rstrip("\n"))
    return out


def known_message_differences() -> set[str]:
    """Real kernels whose messages ori is known to give differently from ptxas."""
    out = set()
    with open(os.path.join(REAL, "known_differences.txt")) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and not line.startswith("#") and "messages" in parts[1].split(","):
                out.add(parts[0])
    return out


def run_python(code: str, env: dict, **kw) -> subprocess.CompletedProcess:
    """`python -c CODE` with this interpreter, in a new session (no
    controlling terminal, as under CI)."""
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          start_new_session=True, **kw)
