"""The Triton hook and the wrapper under a real Triton, compiling for
sm_90a on the CPU (`GPUTarget("cuda", 90, 32)`): each verdict is checked
against the ptxas Triton bundles, run on the same PTX."""

import hashlib
import inspect
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import ori

try:
    import triton  # noqa: F401
    import ori.triton as hook
    import kernels
except ImportError as e:
    # The CI script installs Triton and sets ORI_REQUIRE_TRITON: there, a
    # missing Triton is a failure, not a skip.
    if os.environ.get("ORI_REQUIRE_TRITON"):
        raise
    raise unittest.SkipTest(f"Triton is not installed: {e}")

HERE = os.path.dirname(os.path.abspath(__file__))


def bundled_ptxas() -> str:
    """The bundled ptxas Triton runs for sm_90 (`ptxas-blackwell` from 3.9 on)."""
    bin_dir = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    var = next(iter(hook.ptxas_env(90)))
    name = "ptxas-blackwell" if var == "TRITON_PTXAS_BLACKWELL_PATH" else "ptxas"
    return os.path.join(bin_dir, name)


def ptxas_codes(ptx_path: str) -> list[str]:
    """The C75xx codes the bundled ptxas gives for a PTX file."""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([bundled_ptxas(), "-lineinfo", "--gpu-name=sm_90a", ptx_path, "-o",
                            os.path.join(d, "k.o")], capture_output=True, text=True)
    return re.findall(r"\((C75\d\d)\)", p.stderr)


def body_lines() -> range:
    """The lines of the body of `kernels.matmul`."""
    lines, first = inspect.getsourcelines(kernels.matmul.fn)
    return range(first + 1, first + len(lines))


class FreshCache(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ori-triton-test")
        self.saved = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "ORI_CACHE_DIR")}
        os.environ["TRITON_CACHE_DIR"] = os.path.join(self.dir, "triton-cache")
        os.environ["ORI_CACHE_DIR"] = os.path.join(self.dir, "ori-cache")

    def tearDown(self):
        hook.uninstall()
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.dir, ignore_errors=True)


class Hook(FreshCache):

    def test_each_verdict_on_the_python_line(self):
        out = io.StringIO()
        h = hook.install(stream=out)
        for name in ("serialized", "injected"):
            kernels.compile_config(name)
        self.assertEqual(len(h.reports), 2, out.getvalue())
        for name, report in zip(("serialized", "injected"), h.reports):
            codes = [d["code"] for d in report["diagnostics"]]
            self.assertEqual(sorted(codes), sorted(ptxas_codes(report["ptx"])), name)
            self.assertEqual(codes[0] == "C7517", name == "injected", codes)
            for d in report["diagnostics"]:
                self.assertEqual(d["source"]["file"], kernels.__file__)
                self.assertIn(d["source"]["line"], body_lines(), d)
        text = out.getvalue()
        self.assertIn(f"{kernels.__file__}:", text)
        self.assertIn("ptxas serializes the wgmma pipeline", text)
        self.assertIn("ptxas injects a warpgroup wait/arrive", text)
        self.assertIn("= fix: ", text)
        self.assertIn("= rule: R-", text)

    def test_once_per_kernel_and_process(self):
        out = io.StringIO()
        h = hook.install(stream=out)
        kernels.compile_config("injected")
        kernels.compile_config("injected")  # a cache hit: the listener is called again
        self.assertEqual(len(h.reports), 1)

    def test_ori_failing_never_fails_the_compile(self):
        out = io.StringIO()
        h = hook.install(strict=True, stream=out)
        os.environ["ORI_BIN_DIR"] = os.path.join(self.dir, "nowhere")
        try:
            kernels.compile_config("injected")
        finally:
            del os.environ["ORI_BIN_DIR"]
        self.assertEqual(h.reports, [])
        self.assertIn("ori: kernel `matmul` not checked: cannot find the `ori` program", out.getvalue())

    def test_strict_mode_raises(self):
        hook.install(strict=True, stream=io.StringIO())
        with self.assertRaises(hook.OriTritonError) as cm:
            kernels.compile_config("serialized")
        self.assertIn("C7511", str(cm.exception))


class Environment(FreshCache):
    """`ORI_TRITON` reaches a fresh Python process through the wheel's .pth
    file, as it reaches torch.compile's workers."""

    code = f"import sys; sys.path.insert(0, {HERE!r}); import kernels; kernels.compile_config('injected')"

    def test_env_installs_the_hook(self):
        env = dict(os.environ, ORI_TRITON="1")
        p = subprocess.run([sys.executable, "-c", self.code], env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, re.escape(kernels.__file__) + r":\d+: info\[C7517\]: kernel `matmul`")

    def test_env_strict_fails_the_compile(self):
        env = dict(os.environ, ORI_TRITON="strict")
        p = subprocess.run([sys.executable, "-c", self.code], env=env, capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("OriTritonError", p.stderr)

    def test_unset_is_silent(self):
        env = {k: v for k, v in os.environ.items() if k != "ORI_TRITON"}
        p = subprocess.run([sys.executable, "-c", self.code], env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("C7517", p.stderr)


class ThroughTheWrapper(FreshCache):
    """TRITON_PTXAS_PATH=ori-ptxas: Triton's own ptxas runs, and the
    explanation reaches the user although Triton discards ptxas's stderr."""

    def test_runs_tritons_ptxas_and_reports(self):
        fake_dir = os.path.join(self.dir, "path")
        os.makedirs(fake_dir)
        with open(os.path.join(fake_dir, "ptxas"), "w") as f:
            f.write("#!/bin/sh\necho 'Cuda compilation tools, release 1.0, V1.0.0'\nexit 5\n")
        os.chmod(os.path.join(fake_dir, "ptxas"), 0o755)
        env = dict(os.environ, **hook.ptxas_env(90), PATH=fake_dir + os.pathsep + os.environ["PATH"])
        env.pop("ORI_PTXAS", None)
        env.pop("ORI_TRITON", None)
        code = ("import sys, subprocess, triton; from triton.backends.nvidia import compiler as c; "
                f"sys.path.insert(0, {HERE!r}); import kernels; "
                "tool = c.get_ptxas(90) if c.get_ptxas.__code__.co_argcount else c.get_ptxas(); "
                "print(subprocess.check_output([tool.path, '--version'], text=True)); "
                "import hashlib; k = kernels.compile_config('serialized'); "
                "print('cubin', hashlib.sha256(k.asm['cubin']).hexdigest())")
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           start_new_session=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        real = subprocess.check_output([bundled_ptxas(), "--version"], text=True)
        self.assertIn(real, p.stdout)
        log_path = os.path.join(os.environ["ORI_CACHE_DIR"], "ptxas.log")
        log = open(log_path).read()
        self.assertIn("C7511", log)
        # Without a terminal, Triton's own standard output shows it too.
        self.assertIn(f"(kept in {log_path})", p.stdout)
        self.assertIn("info[C7511]", p.stdout)
        # The PTX it names is Triton's cached copy, which stays.
        cache = os.environ["TRITON_CACHE_DIR"]
        named = re.findall(re.escape(cache) + r"/\S+?\.ptx", log)
        self.assertTrue(named, log)
        self.assertTrue(all(os.path.isfile(n) for n in named))
        # The same cubin as Triton's own ptxas makes (compiled here, without the wrapper).
        os.environ["TRITON_CACHE_DIR"] = os.path.join(self.dir, "direct-cache")
        direct = hashlib.sha256(kernels.compile_config("serialized").asm["cubin"]).hexdigest()
        self.assertIn(f"cubin {direct}", p.stdout)


if __name__ == "__main__":
    unittest.main()
