"""Pack ori's wheel: the `ori` and `ori-ptxas` programs as the wheel's
scripts (installed into the environment's `bin`, as ruff and uv ship
theirs), the pure-Python package `ori` and the `.pth` file of the Triton
hook. Written by hand with the standard library (zipfile, hashlib) per
the wheel format (PEP 427, PEP 491), so that building needs no maturin.

    python3 python/pack_wheel.py --version 0.1.0 --plat manylinux_2_17_x86_64 \
        --bin target/x86_64-unknown-linux-gnu/dist/ori \
        --bin target/x86_64-unknown-linux-gnu/dist/ori-ptxas --out target/wheels

The archive is reproducible: entries in a fixed order with a fixed time.
"""

import argparse
import base64
import hashlib
import io
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "ori"
SUMMARY = "ptxas's GMMA passes (phases 85 and 87) in the open: explains C75xx advisories on your Triton or CUDA line"
# 1980-01-01, the earliest time a zip entry holds.
EPOCH = (1980, 1, 1, 0, 0, 0)


def python_files():
    """(archive name, path) of the package and the start-up hook."""
    out = []
    pkg = os.path.join(HERE, NAME)
    for f in sorted(os.listdir(pkg)):
        if f.endswith(".py"):
            out.append((f"{NAME}/{f}", os.path.join(pkg, f)))
    out.append(("_ori_autoload.py", os.path.join(HERE, "_ori_autoload.py")))
    out.append(("ori-triton.pth", os.path.join(HERE, "ori-triton.pth")))
    return out


def metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\nSummary: {SUMMARY}\n"
            "License: Apache-2.0\nRequires-Python: >=3.8\n"
            "Classifier: Programming Language :: Rust\n"
            "Classifier: Environment :: GPU :: NVIDIA CUDA\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


def wheel_file(tag):
    return f"Wheel-Version: 1.0\nGenerator: ori pack_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def add(zf, name, data, executable=False):
    info = zipfile.ZipInfo(name, date_time=EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
    zf.writestr(info, data, compresslevel=9)


def pack(version, plat, bins, out_dir):
    tags = [f"py3-none-{p}" for p in plat.split(".")]
    wheel_name = f"{NAME}-{version}-py3-none-{plat}.whl"
    data_dir = f"{NAME}-{version}.data"
    info_dir = f"{NAME}-{version}.dist-info"
    entries = []
    for name, path in python_files():
        with open(path, "rb") as f:
            entries.append((name, f.read(), False))
    for path in bins:
        with open(path, "rb") as f:
            entries.append((f"{data_dir}/scripts/{os.path.basename(path)}", f.read(), True))
    entries.append((f"{info_dir}/METADATA", metadata(version).encode("utf-8"), False))
    entries.append((f"{info_dir}/WHEEL", "".join(wheel_file(t) for t in tags[:1]).encode()
                    + "".join(f"Tag: {t}\n" for t in tags[1:]).encode(), False))
    record = "".join(record_line(n, d) for n, d, _ in entries) + f"{info_dir}/RECORD,,\n"
    entries.append((f"{info_dir}/RECORD", record.encode(), False))
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, wheel_name)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, exe in entries:
            add(zf, name, data, exe)
    with open(target, "wb") as f:
        f.write(buf.getvalue())
    return target


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", required=True)
    ap.add_argument("--plat", required=True, help="platform tag(s), dot-separated")
    ap.add_argument("--bin", action="append", required=True, help="a program to ship (repeat)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    print(pack(a.version, a.plat, a.bin, a.out))


if __name__ == "__main__":
    sys.exit(main())
