#!/usr/bin/env python3
"""Sanity check of the recorded GPU data (python3, stdlib only; slow, ~2 s).

An independent, deliberately plain Python model of wgmma.mma_async as this
directory's cases use it, written from the PTX ISA: canonical shared-memory
layouts (K-major and MN-major, LBO/SBO, swizzle = address bits [4:6] XOR
[7:9] masked to 1/2/3 bits for 32B/64B/128B), register fragments of A and D,
D = scale-d*C + (imm-scale-a*imm-scale-b) * sum_k A[m][k]*B[n][k].
It compares the model against cases/NAME.gpu.bin: exact for small-integer
cases, relative 1e-2 for *_random.  It exists to show the recorded data
means what the case headers say; it is not the interpreter's specification.

    python3 tests/host/check_ref.py [NAME ...]
"""
import struct, re, os, sys
HERE=os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_cases as G
D=os.path.join(HERE, 'cases')
def dec(t, b):
    if t=='f16': return struct.unpack('<e', b)[0]
    if t=='bf16': return struct.unpack('<f', b'\0\0'+b)[0]
    if t=='tf32': return struct.unpack('<f', struct.pack('<I', struct.unpack('<I', b)[0] & 0xFFFFE000))[0]
    if t in('e4m3','e5m2'):
        x=b[0]; eb,mb,bias=(4,3,7) if t=='e4m3' else (5,2,15)
        s=-1 if x&0x80 else 1; e=(x>>mb)&((1<<eb)-1); m=x&((1<<mb)-1)
        if e==0: return s*m*2.0**(1-bias-mb)
        return s*(1+m/2**mb)*2.0**(e-bias)
    if t=='s8': return struct.unpack('<b',b)[0]
    if t=='u8': return b[0]
def swz(off, W):
    if W==0: return off
    mask={128:7,64:3,32:1}[W]
    return off ^ (((off>>7)&mask)<<4)
def addr(major, W, lbo, sbo, r, kbyte, es):
    if major=='k':
        if W==0: return (r//8)*sbo + (kbyte//16)*lbo + (r%8)*16 + kbyte%16
        return (r//8)*sbo + (r%8)*W + kbyte
    k=kbyte//es; mnb=r*es
    if W==0: return (mnb//16)*sbo + (k//8)*lbo + (k%8)*16 + mnb%16
    return (mnb//W)*lbo + (k//8)*sbo + (k%8)*W + mnb%W
def afrag_pos(t, e, w, l):
    if t in ('f16','bf16'): return 16*w+l//4+8*((e//2)%2), 2*(l%4)+(e%2)+8*(e//4)
    if t=='tf32': return 16*w+l//4+8*(e%2), (l%4)+4*(e//2)
    return 16*w+l//4+8*((e//4)%2), 4*(l%4)+(e%4)+16*(e//8)
def check(c, collect=None):
    ptx=open(f'{D}/{c.name}.ptx').read(); inb=open(f'{D}/{c.name}.in.bin','rb').read(); gpu=open(f'{D}/{c.name}.gpu.bin','rb').read()
    h=dict(re.findall(r'(\w+)=(\S+)', ptx.splitlines()[0]))
    S=int(h['s_bytes']); coff=int(h['c_off'])
    K=G.KDIM[c.atype]; esa=G.ESIZE[c.atype]; esb=G.ESIZE[c.btype]; rega=c.a[0]=='r'
    r1=G.acc_regs(c.dtype,c.n); R=r1*(2 if c.two_groups else 1); RA=4*c.nk if rega else 0
    if not rega:
        asz,albo,asbo,aadv,_=G.operand_layout(64,esa,c.nk,c.a[0],c.a[1],c.av); abase=0; boff=G.align(asz,1024)
    else: boff=0
    bsz,blbo,bsbo,badv,_=G.operand_layout(c.n,esb,c.nk,c.b[0],c.b[1],c.bv); bbase=boff
    def A(j):
        M=[[0]*K for _ in range(64)]
        if rega:
            aoff=int(h['a_off']); per=4//esa
            for t in range(128):
                w,l=t//32,t%32
                for e in range(4*per):
                    byte=aoff+(t*RA+4*j)*4+e*esa
                    r,k=afrag_pos(c.atype,e,w,l); M[r][k]=dec(c.atype,inb[byte:byte+esa])
        else:
            for r in range(64):
                for k in range(K):
                    o=swz(abase+j*aadv+addr(c.a[0],c.a[1],albo,asbo,r,k*esa,esa), c.a[1]); M[r][k]=dec(c.atype,inb[o:o+esa])
        return M
    def B(j):
        M=[[0]*K for _ in range(c.n)]
        for r in range(c.n):
            for k in range(K):
                o=swz(bbase+j*badv+addr(c.b[0],c.b[1],blbo,bsbo,r,k*esb,esb), c.b[1]); M[r][k]=dec(c.btype,inb[o:o+esb])
        return M
    def elem_pos(i, t):  # element index within a group's registers
        w,l=t//32,t%32; jn=i//4; q=i%4
        return 16*w+l//4+8*(q//2), 8*jn+2*(l%4)+(q%2)
    ngroups=2 if c.two_groups else 1
    bad=0; tot=0; maxerr=[0.0]
    # C and out as elements
    def words(buf, base, t, nreg):
        out=[]
        for i in range(nreg):
            b=buf[base+(t*R+i)*4: base+(t*R+i)*4+4]
            if c.dtype=='f32': out.append(struct.unpack('<f',b)[0])
            elif c.dtype=='s32': out.append(struct.unpack('<i',b)[0])
            else: out += list(struct.unpack('<ee',b))
        return out
    Cm=[[[0]*c.n for _ in range(64)] for g in range(ngroups)]
    Om=[[[0]*c.n for _ in range(64)] for g in range(ngroups)]
    per_reg=1 if c.dtype!='f16' else 2
    for t in range(128):
        cw=words(inb,coff,t,R); ow=words(gpu,0,t,R)
        ne=r1*per_reg
        for g in range(ngroups):
            for e in range(ne):
                r,col=elem_pos(e,t); Cm[g][r][col]=cw[g*ne+e]; Om[g][r][col]=ow[g*ne+e]
    if collect is not None:
        # Per output: (C as read, [(a, b) of each slice's K products], GPU's D),
        # scale-d and the imm-scale signs applied.
        for g in range(ngroups):
            slices=[g] if c.two_groups else range(c.nk)
            ab=[(A(j), B(j)) for j in slices]
            for r in range(64):
                for n in range(c.n):
                    prods=[[(c.sa*a[r][k], c.sb*b[n][k]) for k in range(K)] for a,b in ab]
                    collect.append((c.scale_d*Cm[g][r][n], prods, Om[g][r][n]))
        return 0,0,0.0
    for g in range(ngroups):
        acc=[[c.scale_d*Cm[g][r][n] for n in range(c.n)] for r in range(64)]
        slices=[g] if c.two_groups else range(c.nk)
        for j in slices:
            a=A(j); b=B(j)
            for r in range(64):
                for n in range(c.n):
                    acc[r][n]+=c.sa*c.sb*sum(a[r][k]*b[n][k] for k in range(K))
        for r in range(64):
            for n in range(c.n):
                tot+=1
                exp=acc[r][n]; got=Om[g][r][n]
                if c.rand:
                    err=abs(exp-got)/max(1.0,abs(exp)); maxerr[0]=max(maxerr[0],err)
                    if err>1e-2: bad+=1
                elif exp!=got: bad+=1
    return bad,tot,maxerr[0]
def main():
    names=sys.argv[1:]
    nbad=0
    for c in G.case_list():
        if names and c.name not in names: continue
        bad,tot,me=check(c)
        nbad+=bad>0
        print('%s %-56s mismatches=%d/%d%s' % ('OK ' if bad==0 else 'BAD', c.name, bad, tot, ' max_rel_err=%.2e' % me if c.rand else ''), flush=True)
    sys.exit(1 if nbad else 0)
if __name__=='__main__':
    main()
