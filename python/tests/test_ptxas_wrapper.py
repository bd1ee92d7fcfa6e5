"""`ori-ptxas` as a drop-in ptxas, with a scripted ptxas standing in for
the real one: arguments, streams and exit status pass through; the
explanation reaches the user when the caller discards stderr (as Triton
does), and names a copy of the PTX that outlives the caller's temporary
file."""

import fcntl
import os
import shutil
import stat
import subprocess
import tempfile
import termios
import unittest

import ori
from common import REAL, expected_messages

FAKE_PTXAS = """#!/bin/sh
# A scripted ptxas: prints MESSAGES on stderr, writes -o, exits EXIT.
if [ "$1" = "--version" ]; then
    echo "ptxas: NVIDIA (R) Ptx optimizing assembler (scripted)"
    echo "Cuda compilation tools, release 99.9, V99.9.0"
    exit 0
fi
out=""
while [ $# -gt 0 ]; do
    [ "$1" = "-o" ] && { shift; out="$1"; }
    shift
done
echo "ptxas stdout line"
cat "$(dirname "$0")/messages" >&2
[ -n "$out" ] && printf 'cubin' > "$out"
exit "$(cat "$(dirname "$0")/exit")"
"""

KERNEL = os.path.join(REAL, "triton36", "maxnreg128_mm_f16_128x128x64_s3_w4.ptx")


class Wrapper(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ori-wrapper-test")
        self.fake = os.path.join(self.dir, "fake", "ptxas")
        os.makedirs(os.path.dirname(self.fake))
        with open(self.fake, "w") as f:
            f.write(FAKE_PTXAS)
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IXUSR)
        self.messages = expected_messages(KERNEL)
        self.assertTrue(self.messages)
        self.set_fake(["ptxas info    : " + m for m in self.messages], 0)
        self.cache = os.path.join(self.dir, "cache")
        self.env = dict(os.environ, ORI_PTXAS=self.fake, ORI_CACHE_DIR=self.cache,
                        TRITON_CACHE_DIR=os.path.join(self.dir, "triton-cache"), NO_COLOR="1")
        self.env.pop("ORI_PTXAS_LOG", None)
        # The input as Triton writes it: a temporary file, deleted after.
        fd, self.input = tempfile.mkstemp(suffix=".ptx")
        with os.fdopen(fd, "w") as f, open(KERNEL) as k:
            f.write(k.read())

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        for p in (self.input, self.input + ".o"):
            if os.path.exists(p):
                os.unlink(p)

    def set_fake(self, lines, code):
        with open(os.path.join(self.dir, "fake", "messages"), "w") as f:
            f.write("".join(line + "\n" for line in lines))
        with open(os.path.join(self.dir, "fake", "exit"), "w") as f:
            f.write(str(code))

    def args(self):
        return [ori.ptxas_path(), "-lineinfo", "-v", "--gpu-name=sm_90a", self.input, "-o", self.input + ".o"]

    def test_streams_and_status_pass_through(self):
        for code in (0, 3):
            self.set_fake(["ptxas info    : " + m for m in self.messages], code)
            p = subprocess.run(self.args(), env=self.env, capture_output=True, text=True,
                               start_new_session=True)
            self.assertEqual(p.returncode, code)
            self.assertEqual(p.stdout, "ptxas stdout line\n")
            # ptxas's own lines first, unchanged, then ori's explanation.
            head = "".join("ptxas info    : " + m + "\n" for m in self.messages)
            self.assertTrue(p.stderr.startswith(head), p.stderr)
            self.assertIn("C7511", p.stderr[len(head):])
            self.assertEqual(open(self.input + ".o").read(), "cubin")

    def test_version_answers_as_the_real_ptxas(self):
        p = subprocess.run([ori.ptxas_path(), "--version"], env=self.env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("release 99.9, V99.9.0", p.stdout)

    def test_no_c75_message_adds_nothing(self):
        self.set_fake(["ptxas info    : Used 90 registers"], 0)
        p = subprocess.run(self.args(), env=self.env, capture_output=True, text=True)
        self.assertEqual(p.stderr, "ptxas info    : Used 90 registers\n")

    def run_with_discarded_stderr(self, **kw):
        """Run as Triton does: stderr into a temporary .log file."""
        with tempfile.NamedTemporaryFile(suffix=".log", mode="r") as log:
            with open(log.name, "w") as err:
                p = subprocess.run(self.args(), env=self.env, stderr=err, stdout=subprocess.PIPE, text=True, **kw)
            return p, log.read()

    def test_discarded_stderr_without_terminal_goes_to_the_cache_log(self):
        p, stderr = self.run_with_discarded_stderr(start_new_session=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("C7511", stderr)
        # Standard output stays ptxas's own for a caller that is not Triton.
        self.assertEqual(p.stdout, "ptxas stdout line\n")
        os.unlink(self.input)
        log = open(os.path.join(self.cache, "ptxas.log")).read()
        self.assertIn("C7511", log)
        # It names a lasting copy of the PTX, not the deleted input.
        self.assertNotIn(self.input, log)
        copies = os.listdir(os.path.join(self.cache, "ptx"))
        self.assertEqual(len(copies), 1)
        self.assertTrue(copies[0].startswith("mm_kernel-"), copies)
        copy = os.path.join(self.cache, "ptx", copies[0])
        self.assertIn(copy, log)
        self.assertEqual(open(copy).read(), open(KERNEL).read())

    def test_discarded_stderr_goes_to_the_terminal(self):
        master, slave = os.openpty()

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        try:
            p, _ = self.run_with_discarded_stderr(preexec_fn=controlling_terminal, pass_fds=(slave, ))
            os.close(slave)
            seen = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            os.close(master)
        self.assertEqual(p.returncode, 0)
        self.assertIn(b"C7511", seen)
        self.assertFalse(os.path.exists(os.path.join(self.cache, "ptxas.log")))

    def test_copy_beside_the_kernel_in_tritons_cache(self):
        kept = os.path.join(self.env["TRITON_CACHE_DIR"], "HASH", "mm_kernel.ptx")
        os.makedirs(os.path.dirname(kept))
        shutil.copy(KERNEL, kept)
        p, stderr = self.run_with_discarded_stderr(start_new_session=True)
        self.assertIn(kept, stderr)
        self.assertFalse(os.path.exists(os.path.join(self.cache, "ptx")))


if __name__ == "__main__":
    unittest.main()
