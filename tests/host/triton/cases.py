"""The real-Triton cases of the host backend: which kernels, their inputs, their launch.

Each case is one kernel of `tests/real/triton*/` (the `mm_kernel` family: every type of
matmul Triton has, f16/bf16/tf32/fp8/int8, f16 accumulators, B in either major order),
launched on a 128x128x128 problem with inputs made by `inputs()` below: small integers, so
that every product and sum is exact in every type and the GPU's answer is a bit pattern
that any correct implementation must reproduce. `record_gpu.py` runs them on an H100 and
writes `NAME.gpu.npy`; `tests/host_triton.rs` runs them through `ori run`'s library path
and compares. The same file serves both, so the two cannot disagree on an input:
`python3 tests/host/triton/cases.py` writes `cases.tsv` and `inputs/*.npy`, which the test
reads (standard library only; the same bytes every time).
"""
import csv, json, os, re, struct

ROOT = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(ROOT, "..", "..", ".."))
M = N = K = 128

# fp8 bit patterns of the integers -3..3 (both formats are exact on them).
E4M3 = {0: 0x00, 1: 0x38, 2: 0x40, 3: 0x44}
E5M2 = {0: 0x00, 1: 0x3C, 2: 0x40, 3: 0x42}


def value(i, j, salt):
    """The input element at (i, j): an integer in -3..3, the same on every machine."""
    return ((i * 3 + j * 5 + salt) % 7) - 3


def encode(v, dtype):
    if dtype == "fp16":
        return struct.pack("<e", float(v))
    if dtype == "bf16":
        return (struct.unpack("<I", struct.pack("<f", float(v)))[0] >> 16).to_bytes(2, "little")
    if dtype == "fp32":
        return struct.pack("<f", float(v))
    if dtype == "i8":
        return struct.pack("<b", v)
    if dtype in ("fp8e4nv", "fp8e5"):
        table = E4M3 if dtype == "fp8e4nv" else E5M2
        bits = table[abs(v)] | (0x80 if v < 0 else 0)
        return bytes([bits])
    raise ValueError(dtype)


SIZE = {"fp16": 2, "bf16": 2, "fp32": 4, "i8": 1, "fp8e4nv": 1, "fp8e5": 1, "i32": 4}
DESCR = {"fp16": "<f2", "bf16": "<u2", "fp32": "<f4", "i8": "|i1", "fp8e4nv": "|u1",
         "fp8e5": "|u1", "i32": "<i4"}


def matrix(rows, cols, dtype, salt):
    return b"".join(encode(value(i, j, salt), dtype) for i in range(rows) for j in range(cols))


TENSORDESC_META = {"triton39": json.load(open(os.path.join(ROOT, "tensordesc_meta.json")))}


def reqntid(path):
    """The kernel's `.reqntid` (threads per CTA), if it has one."""
    for line in open(path):
        m = re.match(r"\s*\.reqntid\s+(\d+)", line)
        if m:
            return int(m.group(1))
    return None


def cases():
    """Every case: name, ptx path (relative to the repo), grid, block, inputs and the
    parameter list: "A", "B", "C" (the buffers), integers, and ("scratch", bytes) for a
    zeroed global buffer (Triton's descriptor scratch). Trailing pointers not listed are
    null."""
    out = []
    for ver in ("triton39", "triton36"):
        with open(os.path.join(REPO, "tests", "real", ver, "manifest.tsv")) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        for r in rows:
            fn = r["kernel_fn"]
            if fn == "attn_fwd_kernel":
                c = attention_case(ver, r)
                if c:
                    out.append(c)
                continue
            if fn not in ("mm_kernel", "tma_device_mm_kernel", "tma_host_mm_kernel",
                          "persistent_mm_kernel", "splitk_mm_kernel", "grouped_mm_kernel",
                          "bmm_kernel", "mm_epilogue_kernel"):
                continue
            # Host descriptors are encoded from the compiled kernel's metadata
            # (tensordesc_meta.json, recorded for Triton 3.9's kernels).
            if fn == "tma_host_mm_kernel" and r["name"] not in TENSORDESC_META.get(ver, {}):
                continue
            cfg = dict(re.findall(r"(\w+)=([^,<]*(?:<[^>]*>)?)", r["config"]))
            warps = int(cfg.get("num_warps", "4"))
            bm, bn = int(cfg["BLOCK_M"]), int(cfg["BLOCK_N"])
            kmajor = cfg.get("B_KMAJOR", cfg.get("B_TRANS")) == "True"
            ta, tb, tc = (re.sub(r"^\*|^tensordesc<|\[.*$", "", cfg.get(p + "_ptr") or cfg[p + "_desc"])
                          for p in "abc")
            a = matrix(M, K, ta, 1)
            b = matrix(N, K, tb, 2) if kmajor else matrix(K, N, tb, 2)
            ptx = f"tests/real/{ver}/{r['name']}.ptx"
            block = reqntid(os.path.join(REPO, ptx)) or 32 * warps
            tiles_m, tiles_n = -(-M // bm), -(-N // bn)
            if fn == "mm_kernel":
                grid = [tiles_m, tiles_n, 1]
                # a, b, c, M, N, K, stride_am, stride_b, stride_cm
                params = ["A", "B", "C", M, N, K, K, K if kmajor else N, N]
            elif fn in ("persistent_mm_kernel", "grouped_mm_kernel"):
                # One program per tile (persistent: at most NUM_SMS of them,
                # each walking the tiles NUM_SMS apart).
                grid = [min(tiles_m * tiles_n, int(cfg.get("NUM_SMS", 1 << 30))), 1, 1]
                params = ["A", "B", "C", M, N, K, K, N, N]
            elif fn == "splitk_mm_kernel":
                # Grid axis 2 splits K; the partial tiles meet in C by atomic adds
                # (exact on these inputs, so their order does not matter).
                grid = [tiles_m, tiles_n, int(cfg["SPLIT_K"])]
                params = ["A", "B", "C", M, N, K, K, N, N]
            elif fn == "mm_epilogue_kernel":
                # A serves as the bias (its first row) and the residual (it is
                # M x K = M x N here): a, b, c, bias, res, M, N, K, stride_am,
                # stride_bk, stride_cm, stride_rm, alpha (0.5: exact).
                grid = [tiles_m, tiles_n, 1]
                params = ["A", "B", "C", "A", "A", M, N, K, K, N, N, N, ("f32", 0.5)]
            elif fn == "bmm_kernel":
                # One batch: a, b, c, M, N, K, stride_ab, stride_am, stride_bb,
                # stride_bk (B^T: its row stride), stride_cb, stride_cm.
                grid = [tiles_m, tiles_n, 1]
                params = ["A", "B", "C", M, N, K, M * K, K, K * N, K if kmajor else N, M * N, N]
            elif fn == "tma_host_mm_kernel":
                # Three descriptors, each expanded by Triton's launcher to the map
                # and the tensor's shape (u32s) and strides (u64s); then M, N, K.
                meta = TENSORDESC_META[ver][r["name"]]
                grid = [tiles_m * tiles_n, 1, 1]
                b_shape = [N, K] if kmajor else [K, N]
                params = []
                for which, shape, m in (("A", [M, K], meta[0]), ("B", b_shape, meta[1]),
                                        ("C", [M, N], meta[2])):
                    box = list(reversed(m["block_size"]))
                    params += [("tmap", which, m["elem_type"], m["swizzle"], box)]
                    params += [shape[0], shape[1], shape[1], 1]
                params += [M, N, K]
            else:
                # One program per tile; its descriptors go to the scratch (three of
                # 128 bytes at 384 bytes per program, or 512 when warp-specialized:
                # Triton's global_scratch_size; 1 KiB each covers both).
                grid = [tiles_m * tiles_n, 1, 1]
                params = ["A", "B", "C", M, N, K, ("scratch", 1024 * tiles_m * tiles_n)]
            out.append({
                "name": f"{ver}_{r['name']}",
                "ptx": ptx,
                "grid": grid,
                "block": block,
                "a": (a, DESCR[ta], [M, K]),
                "b": (b, DESCR[tb], [N, K] if kmajor else [K, N]),
                "c": (DESCR[tc], SIZE[tc], [M, N]),
                "kmajor": kmajor,
                "a_dtype": ta,
                "b_dtype": tb + ("_kmajor" if kmajor else ""),
                "params": params,
                # erf, tanh and sigmoid go through ex2.approx: within 2 ulp.
                "tolerance": "approx" if cfg.get("ACT") in ("gelu", "gelu_tanh", "silu") else "exact",
            })
    return out


# Attention: the first 4 heads (of the kernels' constexpr H = 16: the
# launch covers heads 0..3 of batch 0, so only those are allocated) of
# N_CTX = 128 tokens.
HEADS, N_CTX = 4, 128


def attention_case(ver, r):
    """A flash-attention forward kernel (f16 and bf16; the fp8 one needs fp8 V
    data this table does not make): Q, K, V of [HEADS * N_CTX, HEAD_DIM] with
    entries value / 8, sm_scale 1/8. Its exp2 and division are approximate on the
    GPU, so Out (and M, the row log-sum-exp) compare within a tolerance."""
    cfg = dict(re.findall(r"(\w+)=([^,<]*(?:<[^>]*>)?)", r["config"]))
    tq = cfg["Q"].lstrip("*")
    if tq not in ("fp16", "bf16"):
        return None
    d = int(cfg["HEAD_DIM"])
    bm = int(cfg["BLOCK_M"])
    rows = HEADS * N_CTX
    ptx = f"tests/real/{ver}/{r['name']}.ptx"
    block = reqntid(os.path.join(REPO, ptx)) or 32 * int(cfg.get("num_warps", "4"))
    scaled = lambda salt: b"".join(encode(value(i, j, salt) / 8, tq) for i in range(rows) for j in range(d))
    return {
        "name": f"{ver}_{r['name']}",
        "ptx": ptx,
        "grid": [-(-N_CTX // bm), HEADS, 1],
        "block": block,
        "a": (scaled(1), DESCR[tq], [rows, d]),
        "b": (scaled(2), DESCR[tq], [rows, d]),
        "v": (scaled(3), DESCR[tq], [rows, d]),
        "c": (DESCR[cfg["Out"].lstrip("*")], SIZE[cfg["Out"].lstrip("*")], [rows, d]),
        "m_out": ("<f4", 4, [rows]),
        "kmajor": False,
        "a_dtype": tq + "_attn_q",
        "b_dtype": tq + "_attn_k",
        "v_dtype": tq + "_attn_v",
        # Q, K, V, Out, M, sm_scale, stride_z, stride_h, stride_tok, N_CTX
        "params": ["A", "B", "V", "C", "MO", ("f32", 0.125), HEADS * N_CTX * d, N_CTX * d, d, N_CTX],
        "tolerance": "approx",
    }


def param_text(p):
    if isinstance(p, tuple) and p[0] == "f32":
        return f"f{p[1]}"
    if isinstance(p, tuple) and p[0] == "tmap":
        return f"T/{p[1]}/{p[2]}/{p[3]}/{'x'.join(map(str, p[4]))}"
    return f"S{p[1]}" if isinstance(p, tuple) else str(p)


def npy(data, descr, shape):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    total = 10 + len(header) + 1
    header += " " * (-total % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def input_name(which, data_spec):
    descr, shape, dtype = data_spec
    return f"{which}_{dtype}_{'x'.join(map(str, shape))}.npy"


def write(out_dir=ROOT):
    """Write cases.tsv (what tests/host_triton.rs runs) and inputs/*.npy (each distinct
    input once). Same bytes every time."""
    os.makedirs(os.path.join(out_dir, "inputs"), exist_ok=True)
    rows = ["name\tptx\tgrid\tblock\ta\tb\tc_descr\tc_count\tparams\tv\tm_count\ttolerance"]
    written = set()
    for c in cases():
        files = []
        for which in ("ab" + ("v" if "v" in c else "")):
            data, descr, shape = c[which]
            dtype = c[which + "_dtype"]
            fname = input_name(which, (descr, shape, dtype))
            if fname not in written:
                with open(os.path.join(out_dir, "inputs", fname), "wb") as f:
                    f.write(npy(data, descr, shape))
                written.add(fname)
            files.append("inputs/" + fname)
        descr, size, shape = c["c"]
        rows.append("\t".join([c["name"], c["ptx"], ",".join(map(str, c["grid"])), str(c["block"]), files[0],
                               files[1], descr, str(shape[0] * shape[1]),
                               ",".join(map(param_text, c["params"])),
                               files[2] if len(files) > 2 else "-",
                               str(c["m_out"][2][0]) if "m_out" in c else "-",
                               c.get("tolerance", "exact")]))
    with open(os.path.join(out_dir, "cases.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    write()
