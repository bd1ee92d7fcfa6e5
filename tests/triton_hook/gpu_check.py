"""Run by gpu_check.sh on a Hopper machine: the kernel ptxas serializes and
the one it injects into, compiled and run by a real Triton, first with
the hook (`ORI_TRITON=1`), then through the wrapper (`TRITON_PTXAS_PATH`
or, in the Triton releases that compile sm_90 with `ptxas-blackwell`,
`TRITON_PTXAS_BLACKWELL_PATH`), each with an empty Triton cache, without
a terminal (as in a job) and, where `script` exists, with one. Prints what
the user sees, and what ori-ptxas wrote to its log when there was no
terminal; each run prints the kernels' error against torch.matmul and
their cubins' digests, which must agree between the hook's runs (Triton's
own ptxas) and the wrapper's."""

import os
import shutil
import subprocess
import sys
import tempfile

import ori
import ori.triton
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "run_kernels.py")


def scenario(title: str, extra: dict, tty: bool) -> int:
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(d, "triton"), ORI_CACHE_DIR=os.path.join(d, "ori"),
                   **extra)
        shown = " ".join(f"{k}={v}" for k, v in extra.items())
        cmd = [sys.executable, RUN]
        where = "with a terminal (script)" if tty else "without a terminal"
        print(f"\n===== {title}, {where}\n$ {shown} python run_kernels.py", flush=True)
        if tty:
            cmd = ["script", "-qec", " ".join(cmd), "/dev/null"]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, start_new_session=not tty)
        sys.stdout.write(p.stdout)
        sys.stdout.write(p.stderr)
        print(f"[exit status {p.returncode}]")
        log = os.path.join(d, "ori", "ptxas.log")
        if os.path.exists(log):
            print(f"----- ori-ptxas had no terminal; it wrote {log}:")
            sys.stdout.write(open(log).read())
        return p.returncode


def main() -> int:
    print(f"triton {triton.__version__} at {os.path.dirname(triton.__file__)}; ori at {ori.ori_path()}")
    bundled = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    for tool in sorted(os.listdir(bundled)):
        if tool.startswith("ptxas"):
            v = subprocess.run([os.path.join(bundled, tool), "--version"], capture_output=True, text=True)
            print(f"bundled {tool}: {v.stdout.strip().splitlines()[-1]}")
    wrapper = ori.triton.ptxas_env()
    v = subprocess.run([ori.ptxas_path(), "--version"], capture_output=True, text=True,
                       env=dict(os.environ, **wrapper))
    print(f"ori-ptxas --version under Triton's environment: {v.stdout.strip().splitlines()[-1]}")
    status = 0
    for tty in ([False, True] if shutil.which("script") else [False]):
        status |= scenario("the hook", {"ORI_TRITON": "1"}, tty)
        status |= scenario("the wrapper", wrapper, tty)
    status |= scenario("the hook, strict (a CI job)", {"ORI_TRITON": "strict"}, False) == 0
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
