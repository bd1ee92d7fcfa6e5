"""Hopper kernels written in Triton's Gluon (triton.experimental.gluon), for gen_real_gluon.py.

Written here, in the way Gluon's own tutorials write Hopper code: tensor
descriptors and TMA into NVMMA-swizzled shared memory, mbarrier phases,
``warpgroup_mma`` / ``warpgroup_mma_wait`` with explicit ``deps``, multi-buffered
rings, persistent tile loops, ``warp_specialize`` producer/consumer partitions,
and an attention forward with P fed from registers. Nothing here is copied.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    tma,
    mbarrier,
    fence_async_shared,
    warpgroup_mma,
    warpgroup_mma_wait,
)


@gluon.constexpr_function
def mma_layout(BLOCK_M, BLOCK_N, num_warps, k):
    """The wgmma accumulator layout: warps along M first, the largest n that fits."""
    warps = [4, 1]
    while warps[0] * warps[1] != num_warps:
        if BLOCK_M > 16 * warps[0]:
            warps[0] *= 2
        else:
            warps[1] *= 2
    n = 256
    while n > max(BLOCK_N // warps[1], 8) or BLOCK_N % n != 0:
        n -= 8
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=warps, instr_shape=[16, n, k])


@gluon.jit
def store_tile(c_desc, acc, off_m, off_n):
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    c_smem.store(acc.to(c_desc.dtype))
    fence_async_shared()
    tma.async_copy_shared_to_global(c_desc, [off_m, off_n], c_smem)
    tma.store_wait(pendings=0)


@gluon.jit
def matmul_sync(a_desc, b_desc, c_desc, TRANS_B: gl.constexpr, A_IN_REGS: gl.constexpr, num_warps: gl.constexpr):
    """One tile per program; each K step loads, multiplies and waits for its wgmma."""
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    KW: gl.constexpr = 256 // a_desc.dtype.primitive_bitwidth
    layout: gl.constexpr = mma_layout(BM, BN, num_warps, KW)
    a_smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_type.shape, b_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    acc = gl.zeros((BM, BN), dtype=gl.float32, layout=layout)
    phase = 0
    for k in range(0, a_desc.shape[1], BK):
        mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(a_desc, [off_m, k], bar, a_smem)
        if TRANS_B:
            tma.async_copy_global_to_shared(b_desc, [off_n, k], bar, b_smem)
        else:
            tma.async_copy_global_to_shared(b_desc, [k, off_n], bar, b_smem)
        mbarrier.wait(bar, phase=phase)
        phase ^= 1
        if TRANS_B:
            b = b_smem.permute((1, 0))
        else:
            b = b_smem
        if A_IN_REGS:
            a = a_smem.load(gl.DotOperandLayout(operand_index=0, parent=layout, k_width=32 //
                                                a_desc.dtype.primitive_bitwidth))
        else:
            a = a_smem
        acc = warpgroup_mma(a, b, acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    mbarrier.invalidate(bar)
    store_tile(c_desc, acc, off_m, off_n)


@gluon.jit
def issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, i, off_m, off_n, BK: gl.constexpr, STAGES: gl.constexpr,
                pred):
    s = i % STAGES
    mbarrier.expect(bars.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes, pred=pred)
    tma.async_copy_global_to_shared(a_desc, [off_m, i * BK], bars.index(s), a_bufs.index(s), pred=pred)
    tma.async_copy_global_to_shared(b_desc, [i * BK, off_n], bars.index(s), b_bufs.index(s), pred=pred)


@gluon.jit
def matmul_pipelined(a_desc, b_desc, c_desc, STAGES: gl.constexpr, num_warps: gl.constexpr):
    """A ring of STAGES TMA buffers; one wgmma left in flight across K steps."""
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    KW: gl.constexpr = 256 // a_desc.dtype.primitive_bitwidth
    layout: gl.constexpr = mma_layout(BM, BN, num_warps, KW)
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for j in gl.static_range(STAGES):
        mbarrier.init(bars.index(j), count=1)
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    k_steps = gl.cdiv(a_desc.shape[1], BK)
    for i in gl.static_range(STAGES - 1):
        issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, i, off_m, off_n, BK, STAGES, i < k_steps)
    acc = gl.zeros((BM, BN), dtype=gl.float32, layout=layout)
    for i in range(k_steps):
        s = i % STAGES
        mbarrier.wait(bars.index(s), phase=(i // STAGES) & 1)
        acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
        # One wgmma stays in flight: the buffer the previous one read is free.
        acc, _, _ = warpgroup_mma_wait(num_outstanding=1, deps=(acc, a_bufs.index(s), b_bufs.index(s)))
        nxt = i + STAGES - 1
        issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, nxt, off_m, off_n, BK, STAGES, nxt < k_steps)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    for j in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(j))
    store_tile(c_desc, acc, off_m, off_n)


@gluon.jit
def matmul_persistent(a_desc, b_desc, c_desc, STAGES: gl.constexpr, GROUP_M: gl.constexpr,
                      num_warps: gl.constexpr):
    """Persistent: each program walks tiles (grouped along M) with one ring across them."""
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    KW: gl.constexpr = 256 // a_desc.dtype.primitive_bitwidth
    layout: gl.constexpr = mma_layout(BM, BN, num_warps, KW)
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for j in gl.static_range(STAGES):
        mbarrier.init(bars.index(j), count=1)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    num_m = gl.cdiv(c_desc.shape[0], BM)
    num_n = gl.cdiv(c_desc.shape[1], BN)
    k_steps = gl.cdiv(a_desc.shape[1], BK)
    loaded = 0
    used = 0
    for tile in range(gl.program_id(0), num_m * num_n, gl.num_programs(0)):
        group = tile // (GROUP_M * num_n)
        first_m = group * GROUP_M
        rows = gl.minimum(num_m - first_m, GROUP_M)
        off_m = (first_m + (tile % rows)) * BM
        off_n = ((tile % (GROUP_M * num_n)) // rows) * BN
        for i in gl.static_range(STAGES - 1):
            issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, loaded + i, off_m, off_n, BK, STAGES, i < k_steps)
        acc = gl.zeros((BM, BN), dtype=gl.float32, layout=layout)
        for i in range(k_steps):
            s = used % STAGES
            mbarrier.wait(bars.index(s), phase=(used // STAGES) & 1)
            acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
            acc, _, _ = warpgroup_mma_wait(num_outstanding=1, deps=(acc, a_bufs.index(s), b_bufs.index(s)))
            used += 1
            nxt = i + STAGES - 1
            issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, loaded + nxt, off_m, off_n, BK, STAGES,
                        nxt < k_steps)
        loaded += k_steps
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        tma.store_wait(pendings=0)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        tma.async_copy_shared_to_global(c_desc, [off_m, off_n], c_smem)
    tma.store_wait(pendings=0)
    for j in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(j))


@gluon.jit
def ws_loader(a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, STAGES: gl.constexpr):
    BK: gl.constexpr = a_desc.block_type.shape[1]
    for i in range(gl.cdiv(a_desc.shape[1], BK)):
        s = i % STAGES
        # Wait until the consumer has released this slot (the first round passes).
        mbarrier.wait(empty.index(s), phase=((i // STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(a_desc, [off_m, i * BK], ready.index(s), a_bufs.index(s))
        tma.async_copy_global_to_shared(b_desc, [i * BK, off_n], ready.index(s), b_bufs.index(s))


@gluon.jit
def ws_mma(c_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, k_steps, STAGES: gl.constexpr,
           num_warps: gl.constexpr):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    KW: gl.constexpr = 256 // a_bufs.dtype.primitive_bitwidth
    layout: gl.constexpr = mma_layout(BM, BN, num_warps, KW)
    acc = gl.zeros((BM, BN), dtype=gl.float32, layout=layout)
    for i in range(k_steps):
        s = i % STAGES
        mbarrier.wait(ready.index(s), phase=(i // STAGES) & 1)
        acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        mbarrier.arrive(empty.index(s), count=1)
    store_tile(c_desc, acc, off_m, off_n)


@gluon.jit
def matmul_warp_specialized(a_desc, b_desc, c_desc, STAGES: gl.constexpr, num_warps: gl.constexpr):
    """A one-warp TMA producer partition and a wgmma consumer (the default partition)."""
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    k_steps = gl.cdiv(a_desc.shape[1], BK)
    gl.warp_specialize([
        (ws_mma, (c_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, k_steps, STAGES, num_warps)),
        (ws_loader, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, STAGES)),
    ], [1], [24])


@gluon.jit
def attention_fwd(q_desc, k_desc, v_desc, o_desc, qk_scale, SEQ, CAUSAL: gl.constexpr, num_warps: gl.constexpr):
    """FlashAttention forward: S = Q K^T by wgmma from shared memory, online softmax,
    O += P V with P converted in registers (wgmma's register A)."""
    BM: gl.constexpr = q_desc.block_type.shape[0]
    HD: gl.constexpr = q_desc.block_type.shape[1]
    BN: gl.constexpr = k_desc.block_type.shape[0]
    dtype: gl.constexpr = q_desc.dtype
    KW: gl.constexpr = 256 // dtype.primitive_bitwidth
    s_layout: gl.constexpr = mma_layout(BM, BN, num_warps, KW)
    o_layout: gl.constexpr = mma_layout(BM, HD, num_warps, KW)
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=32 // dtype.primitive_bitwidth)
    row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
    start_m = gl.program_id(0) * BM
    off_bh = gl.program_id(1) * SEQ
    q_smem = gl.allocate_shared_memory(dtype, q_desc.block_type.shape, q_desc.layout)
    k_smem = gl.allocate_shared_memory(dtype, k_desc.block_type.shape, k_desc.layout)
    v_smem = gl.allocate_shared_memory(dtype, v_desc.block_type.shape, v_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    mbarrier.init(bars.index(0), count=1)
    mbarrier.init(bars.index(1), count=1)
    mbarrier.expect(bars.index(0), q_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(q_desc, [off_bh + start_m, 0], bars.index(0), q_smem)
    mbarrier.wait(bars.index(0), phase=0)
    m_i = gl.full([BM], float("-inf"), gl.float32, row_layout)
    l_i = gl.full([BM], 1.0, gl.float32, row_layout)
    acc = gl.zeros((BM, HD), dtype=gl.float32, layout=o_layout)
    hi = SEQ
    if CAUSAL:
        hi = start_m + BM
    phase = 0
    for start_n in range(0, hi, BN):
        mbarrier.expect(bars.index(1), k_desc.block_type.nbytes + v_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(k_desc, [off_bh + start_n, 0], bars.index(1), k_smem)
        tma.async_copy_global_to_shared(v_desc, [off_bh + start_n, 0], bars.index(1), v_smem)
        mbarrier.wait(bars.index(1), phase=phase)
        phase ^= 1
        s = gl.zeros((BM, BN), dtype=gl.float32, layout=s_layout)
        s = warpgroup_mma(q_smem, k_smem.permute((1, 0)), s, use_acc=False, is_async=True)
        s = warpgroup_mma_wait(num_outstanding=0, deps=(s, ))
        s = s * qk_scale
        if CAUSAL:
            rows = start_m + gl.arange(0, BM, layout=row_layout)
            cols = start_n + gl.arange(0, BN, layout=gl.SliceLayout(0, s_layout))
            s = gl.where(rows[:, None] >= cols[None, :], s, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, axis=1))
        p = gl.exp2(s - m_new[:, None])
        alpha = gl.exp2(m_i - m_new)
        l_i = l_i * alpha + gl.sum(p, axis=1)
        acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, o_layout))[:, None]
        p16 = gl.convert_layout(p.to(dtype), p_layout)
        acc = warpgroup_mma(p16, v_smem, acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        m_i = m_new
    mbarrier.invalidate(bars.index(0))
    mbarrier.invalidate(bars.index(1))
    acc = acc / gl.convert_layout(l_i, gl.SliceLayout(1, o_layout))[:, None]
    store_tile(o_desc, acc, off_bh + start_m, 0)
