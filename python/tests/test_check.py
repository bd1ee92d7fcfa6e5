"""`ori.check`, `ori.ptxas_path` and `python -m ori` from the installed wheel."""

import glob
import os
import subprocess
import sys
import unittest

import ori
from common import REAL, expected_messages, known_message_differences


def real_kernels():
    for family in ("triton36", "triton39"):
        yield from sorted(glob.glob(os.path.join(REAL, family, "*.ptx")))


class Check(unittest.TestCase):

    def test_messages_match_ptxas_and_name_the_python_line(self):
        """On every real Triton kernel ptxas 13.0.88 gives a C75xx message,
        ori.check gives the same messages, each on the generator's Python
        line (a line inside a @triton.jit function there)."""
        known = known_message_differences()
        checked = 0
        for path in real_kernels():
            want = expected_messages(path)
            name = os.path.relpath(path, REAL)[:-len(".ptx")]
            if not want or name in known:
                continue
            diags = ori.check(path, arch="sm_90a")
            got = [f"({d['code']}) {d['message']}" for d in diags if (d["code"] or "").startswith("C75")]
            self.assertEqual(sorted(got), sorted(want), name)
            for d in diags:
                src = d["source"]
                self.assertIsNotNone(src, f"{name}: {d['code']} names no source line")
                self.assertTrue(src["file"].endswith("gen_real_triton.py"), f"{name}: {src}")
                self.assertGreater(src["line"], 0)
            checked += 1
        self.assertGreater(checked, 20)

    def test_text_input(self):
        path = os.path.join(REAL, "triton36", "mm_f16acc_64x64x64_s3_w4.ptx")
        with open(path) as f:
            text = f.read()
        by_path = ori.check(path)
        by_text = ori.check(text)
        self.assertEqual([d["code"] for d in by_text], [d["code"] for d in by_path])
        self.assertEqual([d["code"] for d in by_text if d["code"]], ["C7517"])
        self.assertEqual(by_text[0]["file"], "<string>")
        for key in ("code", "severity", "function", "line", "message", "rule", "culprit", "source"):
            self.assertIn(key, by_text[0])

    def test_bad_input_raises_with_its_line(self):
        bad = ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\tbogus.op %r1;\n}\n"
        with self.assertRaises(ori.CompileError) as cm:
            ori.check(bad)
        self.assertTrue(cm.exception.diagnostics)
        self.assertEqual(cm.exception.diagnostics[0]["line"], 6)
        self.assertIn("<string>:6:", str(cm.exception))

    def test_unknown_option(self):
        with self.assertRaises(TypeError):
            ori.check("x.ptx", colour="never")

    def test_programs_are_installed(self):
        for path in (ori.ori_path(), ori.ptxas_path()):
            self.assertTrue(os.access(path, os.X_OK), path)
        out = subprocess.run([sys.executable, "-m", "ori", "--version"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("ori "), out.stdout)
        out = subprocess.run([sys.executable, "-m", "ori", "ptxas-path"], capture_output=True, text=True)
        self.assertEqual(out.stdout.strip(), ori.ptxas_path())

    def test_cli_exit_status(self):
        out = subprocess.run([sys.executable, "-m", "ori", "compile", "/nonexistent.ptx"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("/nonexistent.ptx", out.stderr)


class SourceMap(unittest.TestCase):

    def test_inlined_frames_prefer_the_users_file(self):
        ptx = "\n".join([
            ".visible .entry k()",
            "{",
            "\t.loc\t1 10 5",
            "\tadd.s32 %r1, %r1, 1;",
            "\t.loc\t2 43 13, function_name $L__info_string0, inlined_at 1 77 23",
            "\twgmma.fence.sync.aligned;",
            "}",
            '\t.file\t1 "/home/u/kernel.py"',
            '\t.file\t2 "/venv/lib/python3.11/site-packages/triton/language/standard.py"',
        ])
        m = ori.LineMap(ptx)
        self.assertEqual(m.source(4), {"file": "/home/u/kernel.py", "line": 10, "column": 5})
        self.assertEqual(m.source(6), {"file": "/home/u/kernel.py", "line": 77, "column": 23})
        self.assertEqual([f["line"] for f in m.frames(6)], [43, 77])
        self.assertIsNone(m.source(1))


if __name__ == "__main__":
    unittest.main()
