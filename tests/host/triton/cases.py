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
import csv, hashlib, json, math, os, random, re, struct

ROOT = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(ROOT, "..", "..", ".."))
M = N = K = 128

# fp8 bit patterns of the integers -3..3 (both formats are exact on them).
E4M3 = {0: 0x00, 1: 0x38, 2: 0x40, 3: 0x44}
E5M2 = {0: 0x00, 1: 0x3C, 2: 0x40, 3: 0x42}
# e4m3 bit patterns of 0, 1/8, 2/8 and 3/8 (exponent bias 7: 2^-3, 2^-2, 1.5 * 2^-2).
E4M3_EIGHTHS = {0: 0x00, 1: 0x20, 2: 0x28, 3: 0x2C}


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
    if dtype in ("fp8e4nv", "fp8e5") and v != int(v):
        # Eighths (attention's value / 8), e4m3 only: 1/8, 2/8, 3/8.
        bits = E4M3_EIGHTHS[abs(round(v * 8))] | (0x80 if v < 0 else 0)
        return bytes([bits])
    if dtype in ("fp8e4nv", "fp8e5"):
        table = E4M3 if dtype == "fp8e4nv" else E5M2
        bits = table[abs(int(v))] | (0x80 if v < 0 else 0)
        return bytes([bits])
    raise ValueError(dtype)


SIZE = {"fp16": 2, "bf16": 2, "fp32": 4, "i8": 1, "fp8e4nv": 1, "fp8e5": 1, "i32": 4}
DESCR = {"fp16": "<f2", "bf16": "<u2", "fp32": "<f4", "i8": "|i1", "fp8e4nv": "|u1",
         "fp8e5": "|u1", "i32": "<i4"}


def matrix(rows, cols, dtype, salt):
    if NORMAL:
        return normal_matrix(rows, cols, dtype, salt, 1)
    return b"".join(encode(value(i, j, salt), dtype) for i in range(rows) for j in range(cols))


# Random-normal inputs instead of small integers (`random_cases`): where
# the tensor core's own rounding shows.
NORMAL = False


class Normal:
    """Standard normal values from a random.Random seeded with sha256(key),
    drawn only through getrandbits (Box-Muller): the same on every Python."""

    def __init__(self, key):
        self.r = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little"))

    def __call__(self):
        u1 = (self.r.getrandbits(53) + 1) / float(1 << 53)
        u2 = self.r.getrandbits(53) / float(1 << 53)
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def int_in(self, lo, hi):
        """Uniform in lo..hi (rejection: version-stable)."""
        n = hi - lo + 1
        while True:
            x = self.r.getrandbits(n.bit_length())
            if x < n:
                return lo + x


def fp8_nearest(v, ebits, mbits, top):
    """v to nearest even in an fp8 format, saturated at the code `top`."""
    bias = (1 << (ebits - 1)) - 1
    s = 0x80 if v < 0 else 0
    m, ex = math.frexp(abs(v))
    if m == 0:
        return s
    e = max(ex - 1, 1 - bias)
    q = round(abs(v) / 2.0 ** e * (1 << mbits))  # half to even
    if q >= 2 << mbits:
        e, q = e + 1, q >> 1
    code = q if q < 1 << mbits else ((e + bias) << mbits) | (q - (1 << mbits))
    return s | min(code, top)


def encode_nearest(v, dtype):
    """v rounded to nearest even into dtype (i8: rounded and clamped)."""
    if dtype == "fp16":
        return struct.pack("<e", v)
    if dtype == "bf16":
        b = struct.unpack("<I", struct.pack("<f", v))[0]
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).to_bytes(2, "little")
    if dtype == "fp32":
        return struct.pack("<f", v)
    if dtype == "i8":
        return struct.pack("<b", max(-128, min(127, round(v))))
    if dtype == "fp8e4nv":
        return bytes([fp8_nearest(v, 4, 3, 0x7E)])
    if dtype == "fp8e5":
        return bytes([fp8_nearest(v, 5, 2, 0x7B)])
    raise ValueError(dtype)


def normal_matrix(rows, cols, dtype, salt, scale):
    """rows x cols standard normal values / scale (i8: times 40), rounded
    to dtype."""
    draw = Normal(f"{rows}x{cols}_{dtype}_{salt}_{scale}")
    mul = 40.0 if dtype == "i8" else 1.0 / scale
    return b"".join(encode_nearest(mul * draw(), dtype) for _ in range(rows * cols))


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
            if fn in EXTRA_FAMILIES:
                c = EXTRA_FAMILIES[fn](ver, r)
                out += c if isinstance(c, list) else [c] if c else []
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
    """A flash-attention forward kernel (f16, bf16, and e4m3 since session 16):
    Q, K, V of [HEADS * N_CTX, HEAD_DIM] with
    entries value / 8, sm_scale 1/8. Its exp2 and division are approximate on the
    GPU, so Out (and M, the row log-sum-exp) compare within a tolerance."""
    cfg = dict(re.findall(r"(\w+)=([^,<]*(?:<[^>]*>)?)", r["config"]))
    tq = cfg["Q"].lstrip("*")
    if tq not in ("fp16", "bf16", "fp8e4nv"):
        return None
    d = int(cfg["HEAD_DIM"])
    bm = int(cfg["BLOCK_M"])
    rows = HEADS * N_CTX
    ptx = f"tests/real/{ver}/{r['name']}.ptx"
    block = reqntid(os.path.join(REPO, ptx)) or 32 * int(cfg.get("num_warps", "4"))
    scaled = lambda salt: scaled_matrix(rows, d, tq, salt, 8)
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


def scaled_matrix(rows, cols, dtype, salt, scale=1):
    """Like `matrix`, each value divided by `scale` (a power of two: exact)."""
    if NORMAL:
        return normal_matrix(rows, cols, dtype, salt, scale)
    return b"".join(encode(value(i, j, salt) / scale, dtype) for i in range(rows) for j in range(cols))


def pow2_vector(count, dtype, salt):
    """Scales 0.5, 1, 2 (powers of two: every scaled product stays exact)."""
    return b"".join(encode(2.0 ** ((k * 5 + salt) % 3 - 1), dtype) for k in range(count))


def family_case(ver, r, params, a, b, c_dtype, extra, tolerance="exact"):
    """A case of one of the families below: A and B as (data, dtype tag, shape),
    C of `c_dtype` [M, N], `extra` the other inputs as (name, data, dtype, shape)."""
    cfg = dict(re.findall(r"(\w+)=([^,<]*(?:<[^>]*>)?)", r["config"]))
    ptx = f"tests/real/{ver}/{r['name']}.ptx"
    block = reqntid(os.path.join(REPO, ptx)) or 32 * int(cfg.get("num_warps", "4"))
    bm, bn = int(cfg["BLOCK_M"]), int(cfg["BLOCK_N"])
    (adata, atag, ashape), (bdata, btag, bshape) = a, b
    return {
        "name": f"{ver}_{r['name']}",
        "ptx": ptx,
        "grid": [-(-M // bm), -(-N // bn), 1],
        "block": block,
        "a": (adata, DESCR[atag.split("_")[0]], ashape),
        "b": (bdata, DESCR[btag.split("_")[0]], bshape),
        "c": (DESCR[c_dtype], SIZE[c_dtype], [M, N]),
        "kmajor": False,
        "a_dtype": atag,
        "b_dtype": btag,
        "extra": [(name, data, DESCR[dt.split("_")[0]], shape, dt) for name, data, dt, shape in extra],
        "params": params,
        "tolerance": tolerance,
    }


def config(r):
    return dict(re.findall(r"(\w+)=([^,<]*(?:<[^>]*>)?)", r["config"]))


def elem(cfg, p):
    return cfg[p].lstrip("*")


def gated_mlp_case(ver, r):
    """out = act(x @ Wg) * (x @ Wu): entries value / 8 (the product of two
    sums stays in f16's range); SiLU and tanh-GELU use ex2.approx: within 2 ulp."""
    cfg = config(r)
    t = elem(cfg, "x_ptr")
    x = (scaled_matrix(M, K, t, 1, 8), t + "_div8", [M, K])
    wg = (scaled_matrix(K, N, t, 2, 8), t + "_div8", [K, N])
    wu = [("X0", scaled_matrix(K, N, t, 3, 8), t + "_div8", [K, N])]
    # x, wg, wu, out, M, N, K, stride_xm, stride_wk, stride_om
    params = ["A", "B", "X0", "C", M, N, K, K, N, N]
    return family_case(ver, r, params, x, wg, elem(cfg, "out_ptr"), wu, "approx")


def fp8_scaled_case(ver, r):
    """fp8 A [M, K] and B [N, K] with tensor, row or 1x128 / 128x128 block
    scales, all powers of two: exact but for the output's own rounding."""
    cfg = config(r)
    ta, tb, tc = elem(cfg, "a_ptr"), elem(cfg, "b_ptr"), elem(cfg, "c_ptr")
    bk, sbn = int(cfg["BLOCK_K"]), int(cfg["SCALE_BLOCK_N"])
    kb = -(-K // bk)
    scale = cfg["SCALE"]
    if scale == "tensor":
        sa, sb, sasm, sbsn = pow2_vector(1, "fp32", 1), pow2_vector(1, "fp32", 2), 1, 1
        shape_a, shape_b = [1], [1]
    elif scale == "row":
        sa, sb, sasm, sbsn = pow2_vector(M, "fp32", 1), pow2_vector(N, "fp32", 2), 1, 1
        shape_a, shape_b = [M], [N]
    else:
        sa, sb = pow2_vector(M * kb, "fp32", 1), pow2_vector(-(-N // sbn) * kb, "fp32", 2)
        sasm, sbsn = kb, kb
        shape_a, shape_b = [M * kb], [-(-N // sbn) * kb]
    extra = [("X0", sa, "fp32_scale" + shape_tag(shape_a), shape_a),
             ("X1", sb, "fp32_scaleb" + shape_tag(shape_b), shape_b)]
    # a, b, c, a_scale, b_scale, M, N, K, stride_am, stride_bn, stride_cm, stride_asm, stride_bsn
    params = ["A", "B", "C", "X0", "X1", M, N, K, K, K, N, sasm, sbsn]
    return family_case(ver, r, params, (matrix(M, K, ta, 1), ta, [M, K]),
                       (matrix(N, K, tb, 2), tb + "_kmajor", [N, K]), tc, extra)


def shape_tag(shape):
    return "_" + "x".join(map(str, shape))


def int4_packed(rows, cols, salt):
    """int4 values -3..3 packed two per byte along the rows: byte (r, c)
    holds row 2r in its low nibble and row 2r + 1 in its high one."""
    out = bytearray()
    if NORMAL:
        draw = Normal(f"int4_{rows}x{cols}_{salt}")
        return bytes(draw.int_in(0, 255) for _ in range(rows // 2 * cols))
    for i in range(rows // 2):
        for j in range(cols):
            lo, hi = value(2 * i, j, salt), value(2 * i + 1, j, salt)
            out.append((lo & 0xF) | ((hi & 0xF) << 4))
    return bytes(out)


def dequant_case(ver, r):
    """int8 (w8a16) or packed int4 (w4a16) weights [K, N] with per-channel or
    per-K-group scales of powers of two, dequantized to the activation type."""
    cfg = config(r)
    t, group = elem(cfg, "a_ptr"), int(cfg["GROUP_K"])
    groups = -(-K // group) if group else 1
    if r["kernel_fn"] == "w4a16_mm_kernel":
        b = (int4_packed(K, N, 2), "i8_int4", [K // 2, N])
    else:
        b = (matrix(K, N, "i8", 2), "i8", [K, N])
    scales = [("X0", pow2_vector(groups * N, t, 3), t + "_scale" + shape_tag([groups, N]), [groups, N])]
    # a, b, scale, c, M, N, K, stride_am, stride_bk, stride_cm, stride_sg
    params = ["A", "B", "X0", "C", M, N, K, K, N, N, N]
    return family_case(ver, r, params, (matrix(M, K, t, 1), t, [M, K]), b, elem(cfg, "c_ptr"), scales)


def lora_case(ver, r):
    """y = x @ W + 0.5 (x @ La) @ Lb, small-integer entries: x @ La is exact
    in f32; its cast to the input type rounds as the GPU's cvt does."""
    cfg = config(r)
    t, rank = elem(cfg, "x_ptr"), int(cfg["RANK"])
    extra = [("X0", matrix(K, rank, t, 3), t + "_la" + shape_tag([K, rank]), [K, rank]),
             ("X1", matrix(rank, N, t, 4), t + "_lb" + shape_tag([rank, N]), [rank, N])]
    # x, w, la, lb, out, M, N, K, stride_xm, stride_wk, stride_lak, stride_lbr, stride_om, scaling
    params = ["A", "B", "X0", "X1", "C", M, N, K, K, N, rank, N, N, ("f32", 0.5)]
    return family_case(ver, r, params, (matrix(M, K, t, 1), t, [M, K]), (matrix(K, N, t, 2), t, [K, N]),
                       elem(cfg, "out_ptr"), extra)


MOE_EXPERTS, MOE_TOKENS = 4, 64


def moe_case(ver, r):
    """vLLM's fused MoE: 64 tokens, each routed to TOP_K = 2 of 4 experts, so
    128 (token, slot) rows of C; the rows sorted by expert and each expert's
    run padded to BLOCK_M with the sentinel 128 (num_valid_tokens), as vLLM's
    moe_align_block_size lays them out. Expert weights B [4, N, K]; routing
    weights and fp8 scales are powers of two (exact)."""
    cfg = config(r)
    ta, tc, bm, top_k = elem(cfg, "a_ptr"), elem(cfg, "c_ptr"), int(cfg["BLOCK_M"]), int(cfg["TOP_K"])
    valid = MOE_TOKENS * top_k
    expert_of = [(p * 7 + 3) % MOE_EXPERTS for p in range(valid)]
    sorted_ids, block_experts = [], []
    for e in range(MOE_EXPERTS):
        run = [p for p in range(valid) if expert_of[p] == e]
        run += [valid] * (-len(run) % bm)
        sorted_ids += run
        block_experts += [e] * (len(run) // bm)
    em = len(sorted_ids)
    i32 = lambda xs: b"".join(struct.pack("<i", x) for x in xs)
    b = b"".join(matrix(N, K, ta, 2 + e) for e in range(MOE_EXPERTS))
    extra = [("X0", pow2_vector(MOE_EXPERTS, "fp32", 4), "fp32_moe_bscale_4", [MOE_EXPERTS]),
             ("X1", pow2_vector(valid, "fp32", 5), "fp32_moe_topk_%d" % valid, [valid]),
             ("X2", i32(sorted_ids), "i32_moe_sorted_bm%d" % bm, [em]),
             ("X3", i32(block_experts), "i32_moe_experts_bm%d" % bm, [len(block_experts)]),
             ("X4", i32([em]), "i32_moe_padded_bm%d" % bm, [1])]
    # a, b, c, b_scale, topk_weights, sorted_token_ids, expert_ids,
    # num_tokens_post_padded, N, K, EM, num_valid_tokens, stride_am, stride_be, stride_bn, stride_cm
    params = ["A", "B", "C", "X0", "X1", "X2", "X3", "X4", N, K, em, valid, K, N * K, K, N]
    case = family_case(ver, r, params, (matrix(MOE_TOKENS, K, ta, 1), ta + "_moe", [MOE_TOKENS, K]),
                       (b, ta + "_moe_experts", [MOE_EXPERTS * N, K]), tc, extra)
    case["c"] = (DESCR[tc], SIZE[tc], [valid, N])
    case["grid"] = [-(-em // bm) * -(-N // int(cfg["BLOCK_N"])), 1, 1]
    return case


def attn_bwd_dq_case(ver, r, out_param="DQ"):
    """Flash-attention backward, dQ: heads 0..3 of N_CTX = 128 tokens, Q, K, V
    and dO of entries value / 8, the row statistics M = 4 and D = 1/2 (every
    exp2 stays small); exp2 is approximate on the GPU: within 2 ulp."""
    cfg = config(r)
    t, d = elem(cfg, "Q"), int(cfg["HEAD_DIM"])
    rows = HEADS * N_CTX
    mats = [(scaled_matrix(rows, d, t, salt, 8), t + "_attn_" + w, [rows, d])
            for salt, w in ((1, "q"), (2, "k"), (3, "v"), (4, "do"))]
    stats = [("X3", struct.pack("<f", 4.0) * rows, "fp32_bwd_m", [rows]),
             ("X4", struct.pack("<f", 0.5) * rows, "fp32_bwd_d", [rows])]
    extra = [("X1", *mats[2]), ("X2", *mats[3])] + stats
    extra = [(n, data, dt, shape) for n, data, dt, shape in extra]
    # Q, K, V, DO, M, D, DQ, sm_scale, stride_z, stride_h, stride_tok, N_CTX
    params = ["A", "B", "X1", "X2", "X3", "X4", "C", ("f32", 0.125), rows * d, N_CTX * d, d, N_CTX]
    out = elem(cfg, out_param)
    case = family_case(ver, r, params, mats[0], mats[1], out, extra, "approx")
    case["c"] = (DESCR[out], SIZE[out], [rows, d])
    case["grid"] = [-(-N_CTX // int(cfg["BLOCK_M"])), HEADS, 1]
    return case


def acc_loop_case(ver, r):
    """GEMMs that read or rewrite the accumulator inside the K loop (decay,
    per-step scales, clamping, a running row maximum, a conditional rescale,
    two accumulators): phase 87's injected waits decide these results.
    decay 1/2 and the per-step scales are powers of two; the row-maximum
    division is div.full (approximate): within 2 ulp. C starts at zero (the
    beta_c mode reads it)."""
    cfg = config(r)
    ta, tc, bk = elem(cfg, "a_ptr"), elem(cfg, "c_ptr"), int(cfg["BLOCK_K"])
    steps = -(-K // bk)
    extra = [("X0", pow2_vector(steps, "fp32", 6), "fp32_kscale_%d" % steps, [steps])]
    # a, b, c, kscale, M, N, K, stride_am, stride_bk, stride_cm, decay
    params = ["A", "B", "C", "X0", M, N, K, K, N, N, ("f32", 0.5)]
    tolerance = "approx" if cfg["MODE"] == "rowmax" else "exact"
    return family_case(ver, r, params, (matrix(M, K, ta, 1), ta, [M, K]), (matrix(K, N, ta, 2), ta, [K, N]),
                       tc, extra, tolerance)


def attn_bwd_dkdv_cases(ver, r):
    """Flash-attention backward, dK and dV: inputs as `attn_bwd_dq_case`. The
    kernel writes two outputs; each is a case of its own (`_dk`, `_dv`: C is
    that output, the other goes to a scratch buffer), so the table keeps one
    compared output per case."""
    base = attn_bwd_dq_case(ver, r, out_param="DK")
    # One program per block of BLOCK_N keys (dQ's per BLOCK_M queries).
    base["grid"] = [-(-N_CTX // int(config(r)["BLOCK_N"])), HEADS, 1]
    rows, d = base["c"][2]
    cases = []
    for which in ("dk", "dv"):
        c = dict(base, name=f"{base['name']}_{which}")
        scratch = ("scratch", rows * d * base["c"][1])
        # Q, K, V, DO, M, D, DK, DV, sm_scale, stride_z, stride_h, stride_tok, N_CTX
        outs = ["C", scratch] if which == "dk" else [scratch, "C"]
        c["params"] = base["params"][:6] + outs + base["params"][7:]
        cases.append(c)
    return cases


def attn_fwd_tma_case(ver, r):
    """Flash attention forward over device-side TMA descriptors (the kernel
    builds them in its global scratch with tensormap.replace; the
    warp-specialized variants too): inputs and launch as `attention_case`,
    Z = 1, descriptors over the kernel's Z * H * N_CTX rows of which the
    launch reads its four heads."""
    c = attention_case(ver, r)
    if c is None:
        return None
    programs = c["grid"][0] * c["grid"][1]
    # Q, K, V, Out, sm_scale, Z, N_CTX, then the global scratch
    c["params"] = ["A", "B", "V", "C", ("f32", 0.125), 1, N_CTX, ("scratch", 1024 * programs)]
    c.pop("m_out")
    return c


def attn_fwd_blockptr_case(ver, r):
    """The older tutorial's flash attention over block pointers: inputs and
    launch as `attention_case`, no row statistics out."""
    c = attention_case(ver, r)
    if c is None:
        return None
    c["params"] = [p for p in c["params"] if p != "MO"]
    c.pop("m_out")
    return c


EXTRA_FAMILIES = {
    "attn_fwd_blockptr_kernel": attn_fwd_blockptr_case,
    "attn_bwd_dkdv_kernel": attn_bwd_dkdv_cases,
    "attn_fwd_tma_kernel": attn_fwd_tma_case,
    "acc_loop_kernel": acc_loop_case,
    "attn_bwd_dq_kernel": attn_bwd_dq_case,
    "fused_moe_kernel": moe_case,
    "gated_mlp_kernel": gated_mlp_case,
    "fp8_scaled_mm_kernel": fp8_scaled_case,
    "w8a16_mm_kernel": dequant_case,
    "w4a16_mm_kernel": dequant_case,
    "lora_mm_kernel": lora_case,
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


def family_of(name):
    """The kernel function of a case (its manifest row's `kernel_fn`)."""
    ver, kernel = name.split("_", 1)
    with open(os.path.join(REPO, "tests", "real", ver, "manifest.tsv")) as f:
        fns = {r["name"]: r["kernel_fn"] for r in csv.DictReader(f, delimiter="\t")}
    return fns.get(kernel) or fns.get(kernel.rsplit("_", 1)[0])


def random_cases():
    """The cases again on random normal inputs (`normal_matrix`: N(0, 1) rounded to
    each input's type, divided as the integer inputs are; i8 N(0, 40²); scales,
    routing and row statistics as before), named NAME_rn: for each kernel family,
    input and output type and tolerance, its first kernel, and its last where the
    group has six or more. Each input is drawn from its own seed, so the
    selection does not change the others' bytes."""
    global NORMAL
    NORMAL = True
    try:
        every = cases()
    finally:
        NORMAL = False
    groups = {}
    for c in every:
        key = (family_of(c["name"]), c["a_dtype"], c["b_dtype"], c["c"][0], c.get("tolerance"))
        groups.setdefault(key, []).append(c)
    out = []
    for g in groups.values():
        for c in g[:1] + g[-1:] * (len(g) >= 6):
            out.append(dict(c, name=c["name"] + "_rn"))
    return out


def write(out_dir=ROOT, normal=False):
    """Write cases.tsv (what tests/host_triton.rs runs) and inputs/*.npy (each distinct
    input once), or with `normal` cases_rn.tsv and inputs_rn/*.npy (`random_cases`).
    Same bytes every time."""
    table, inputs = ("cases_rn.tsv", "inputs_rn") if normal else ("cases.tsv", "inputs")
    os.makedirs(os.path.join(out_dir, inputs), exist_ok=True)
    rows = ["name\tptx\tgrid\tblock\ta\tb\tc_descr\tc_count\tparams\tv\tm_count\ttolerance\textra"]
    written = set()
    for c in (random_cases() if normal else cases()):
        files = []
        for which in ("ab" + ("v" if "v" in c else "")):
            data, descr, shape = c[which]
            dtype = c[which + "_dtype"]
            fname = input_name(which, (descr, shape, dtype))
            if fname not in written:
                with open(os.path.join(out_dir, inputs, fname), "wb") as f:
                    f.write(npy(data, descr, shape))
                written.add(fname)
            files.append(f"{inputs}/{fname}")
        extra = []
        for name, data, descr, shape, dtype in c.get("extra", []):
            fname = input_name(name.lower(), (descr, shape, dtype))
            if fname not in written:
                with open(os.path.join(out_dir, inputs, fname), "wb") as f:
                    f.write(npy(data, descr, shape))
                written.add(fname)
            extra.append(f"{name}={inputs}/{fname}")
        descr, size, shape = c["c"]
        rows.append("\t".join([c["name"], c["ptx"], ",".join(map(str, c["grid"])), str(c["block"]), files[0],
                               files[1], descr, str(shape[0] * shape[1]),
                               ",".join(map(param_text, c["params"])),
                               files[2] if len(files) > 2 else "-",
                               str(c["m_out"][2][0]) if "m_out" in c else "-",
                               c.get("tolerance", "exact"),
                               ";".join(extra) or "-"]))
    with open(os.path.join(out_dir, table), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    import sys
    write(normal="--random-normal" in sys.argv)
