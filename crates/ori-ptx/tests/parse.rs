//! Parser coverage: one test per PTX construct the front end must accept.

use ori_ptx::*;

const HDR: &str = ".version 8.5\n.target sm_90a\n.address_size 64\n";

fn ok(src: &str) -> Module {
    parse("t.ptx", src).unwrap_or_else(|d| {
        panic!(
            "{}",
            d.iter()
                .map(Diag::render_ptxas)
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// Parse `body` as the body of a kernel and return its statements.
fn body(body: &str) -> Vec<Stmt> {
    let m = ok(&format!("{HDR}.visible .entry k()\n{{\n{body}\n}}\n"));
    match m.items.into_iter().next() {
        Some(Item::Function(f)) => f.body.expect("body"),
        other => panic!("{other:?}"),
    }
}

fn inst(src: &str) -> Instruction {
    let stmts = body(&format!(".reg .b32 d0, d1;\n.reg .pred p, q;\n{src}"));
    stmts
        .into_iter()
        .find_map(|s| match s {
            Stmt::Inst(i) => Some(i),
            _ => None,
        })
        .expect("an instruction")
}

fn kinds(i: &Instruction) -> Vec<OperandKind> {
    i.operands.iter().map(|o| o.kind.clone()).collect()
}

fn reg(s: &str) -> OperandKind {
    OperandKind::Reg(s.into())
}

#[test]
fn header_directives() {
    let m = ok(".version 8.5\n.target sm_90a, debug\n.address_size 64\n");
    assert_eq!(m.version, (8, 5));
    assert_eq!(m.target, vec!["sm_90a", "debug"]);
    assert_eq!(m.address_size, Some(64));
    let m = ok(".version 7.0\n.target sm_80\n");
    assert_eq!(m.version, (7, 0));
    assert_eq!(m.address_size, None);
    let m = ok(".version 8.10\n.target sm_100f\n");
    assert_eq!(m.version, (8, 10));
}

#[test]
fn entry_and_func_signatures() {
    let m = ok(&format!(
        "{HDR}.visible .entry k(.param .u64 .ptr .global .align 16 a, .param .u32 n, \
         .param .align 8 .b8 arr[16])\n.maxntid 128, 1, 1\n.minnctapersm 1\n.maxnreg 64\n\
         .maxclusterrank 2\n{{ ret; }}\n\
         .weak .func (.param .b32 r) f(.param .b32 x) {{ st.param.b32 [r], 1; ret; }}\n\
         .extern .func (.param .b32 func_retval0) vprintf\n(\n.param .b64 p0,\n.param .b64 p1\n)\n;\n\
         .func g {{ ret; }}\n.func (.reg .b32 rr) h(.reg .b32 x) {{ mov.b32 rr, x; ret; }}\n"
    ));
    let fs: Vec<&Function> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(fs.len(), 5);
    let k = fs[0];
    assert!(k.is_entry);
    assert_eq!(k.linkage.as_deref(), Some("visible"));
    assert_eq!(k.params.len(), 3);
    let p = &k.params[0];
    assert_eq!(
        (p.space.as_str(), p.ty.as_str(), p.name.as_str()),
        ("param", "u64", "a")
    );
    assert_eq!(p.ptr_space.as_deref(), Some("global"));
    assert_eq!(p.align, Some(16));
    assert_eq!(k.params[2].align, Some(8));
    assert_eq!(k.params[2].array, Some(16));
    assert_eq!(
        k.perf,
        vec![
            ("maxntid".into(), vec![128, 1, 1]),
            ("minnctapersm".into(), vec![1]),
            ("maxnreg".into(), vec![64]),
            ("maxclusterrank".into(), vec![2]),
        ]
    );
    let f = fs[1];
    assert!(!f.is_entry);
    assert_eq!(f.linkage.as_deref(), Some("weak"));
    assert_eq!(f.ret_params.len(), 1);
    assert_eq!(f.ret_params[0].name, "r");
    assert_eq!(f.params[0].name, "x");
    let v = fs[2];
    assert_eq!(v.linkage.as_deref(), Some("extern"));
    assert!(v.body.is_none());
    assert_eq!(v.params.len(), 2);
    assert_eq!(fs[3].name, "g");
    assert!(fs[3].params.is_empty());
    // .reg params are registers inside the body.
    let h = fs[4];
    let b = h.body.as_ref().expect("body");
    match &b[0] {
        Stmt::Inst(i) => assert_eq!(kinds(i), vec![reg("rr"), reg("x")]),
        s => panic!("{s:?}"),
    }
}

#[test]
fn module_vars() {
    let m = ok(&format!(
        "{HDR}.global .align 4 .b32 gtab[4] = {{1, 2, 3, 4}};\n\
         .extern .shared .align 16 .b8 smem[];\n\
         .const .align 8 .f64 c = 0d3FF0000000000000;\n\
         .visible .global .u32 a, b = 7;\n\
         .global .u32 m2[2][3] = {{{{1,2,3}},{{4,5,6}}}};\n\
         .global .u64 ptr = generic(gtab);\n.global .u64 p2 = gtab+8;\n\
         .global .v4 .f32 vv;\n"
    ));
    let vs: Vec<&VarDecl> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Var(v) => Some(v),
            _ => None,
        })
        .collect();
    assert_eq!(vs.len(), 9);
    assert_eq!(vs[0].space, "global");
    assert_eq!(vs[0].align, Some(4));
    assert_eq!(vs[0].dims, vec![Some(4)]);
    match &vs[0].init {
        Some(Init::List(l)) => assert_eq!(
            l,
            &vec![Init::Ints(vec![
                Imm::Int(1),
                Imm::Int(2),
                Imm::Int(3),
                Imm::Int(4)
            ])]
        ),
        i => panic!("{i:?}"),
    }
    match &vs[5].init {
        Some(Init::List(rows)) => assert_eq!(
            rows,
            &[1, 4]
                .map(|a| Init::List(vec![Init::Ints((a..a + 3).map(Imm::Int).collect())]))
                .to_vec()
        ),
        i => panic!("{i:?}"),
    }
    assert_eq!(vs[1].linkage.as_deref(), Some("extern"));
    assert_eq!(vs[1].space, "shared");
    assert_eq!(vs[1].dims, vec![None]);
    assert_eq!(
        vs[2].init,
        Some(Init::Expr(Operand {
            kind: OperandKind::Imm(Imm::F64(0x3FF0_0000_0000_0000)),
            span: vs[2].init.as_ref().map_or(Span::default(), |i| match i {
                Init::Expr(o) => o.span,
                _ => Span::default(),
            }),
        }))
    );
    assert_eq!((vs[3].name.as_str(), vs[4].name.as_str()), ("a", "b"));
    assert_eq!(vs[4].linkage.as_deref(), Some("visible"));
    assert_eq!(vs[5].dims, vec![Some(2), Some(3)]);
    assert!(
        matches!(&vs[6].init, Some(Init::Expr(o)) if o.kind == OperandKind::Symbol("generic(gtab)".into()))
    );
    assert!(
        matches!(&vs[7].init, Some(Init::Expr(o)) if o.kind == OperandKind::SymOffset("gtab".into(), 8))
    );
    assert_eq!(vs[8].vector, Some(4));
}

/// The elements of an initializer list, read as the tokens would read
/// them however they are written: decimal literals in runs of values
/// (across lines, and around comments), octal, hex, `U` and the largest
/// literals, and other values between them.
#[test]
fn initializer_lists() {
    let m = ok(&format!(
        "{HDR}.global .b64 t[13] = {{ 0, 017, 0x1F, 5U,\n\
         18446744073709551615 ,9223372036854775808, 9223372036854775807 /* c */,\n\
         7 // c\n, -3, 4, 1e0, 6 }};\n\
         .global .b8 u[3] = {{1,\r\n2\t,3}};\n"
    ));
    let lists: Vec<&Init> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Var(v) => v.init.as_ref(),
            _ => None,
        })
        .collect();
    let Init::List(items) = lists[0] else {
        panic!("{:?}", lists[0])
    };
    use Imm::{Int, UInt};
    let ints = |v: &[Imm]| Init::Ints(v.to_vec());
    assert_eq!(
        items[0],
        ints(&[
            Int(0),
            Int(0o17),
            Int(0x1F),
            UInt(5),
            UInt(u64::MAX),
            UInt(1 << 63),
            Int(i64::MAX),
            Int(7),
        ])
    );
    assert!(matches!(&items[1], Init::Expr(o) if o.kind == OperandKind::Imm(Int(-3))));
    assert_eq!(items[2], ints(&[Int(4)]));
    assert!(matches!(&items[3], Init::Expr(o) if matches!(o.kind, OperandKind::Imm(Imm::F64(_)))));
    assert_eq!(items[4], ints(&[Int(6)]));
    assert_eq!(*lists[1], Init::List(vec![ints(&[Int(1), Int(2), Int(3)])]));
}

#[test]
fn reg_decls() {
    let b = body(".reg .b32 %r<10>, %rx;\n.reg .pred %p<3>;\n.reg .v2 .f32 vv;");
    match &b[0] {
        Stmt::Reg { ty, names, .. } => {
            assert_eq!(ty, "b32");
            assert_eq!(
                names,
                &vec![
                    RegName {
                        name: "%r".into(),
                        range: Some(10)
                    },
                    RegName {
                        name: "%rx".into(),
                        range: None
                    }
                ]
            );
        }
        s => panic!("{s:?}"),
    }
    assert!(matches!(
        &b[2],
        Stmt::Reg {
            vector: Some(2),
            ..
        }
    ));
}

#[test]
fn local_vars_labels_pragmas_loc() {
    let b = body(
        ".shared .align 8 .b64 bar;\n.local .align 4 .b8 buf[16];\n.param .b32 pp;\n\
         $L__BB0_2:\n.pragma \"nounroll\";\n.loc 1 23 4\n\
         .loc 2 5 6, function_name $L__info_string0, inlined_at 1 23 4\nret;",
    );
    assert!(matches!(&b[0], Stmt::Var(v) if v.space == "shared" && v.align == Some(8)));
    assert!(matches!(&b[1], Stmt::Var(v) if v.space == "local" && v.dims == vec![Some(16)]));
    assert!(matches!(&b[2], Stmt::Var(v) if v.space == "param"));
    assert!(
        matches!(&b[3], Stmt::Label { name, span } if name == "$L__BB0_2" && span.line == 9 && span.col == 1)
    );
    assert!(matches!(&b[4], Stmt::Pragma { text, .. } if text == "nounroll"));
    assert!(matches!(
        &b[5],
        Stmt::Loc {
            file: 1,
            line: 23,
            col: 4,
            function_name: None,
            inlined_at: None,
            ..
        }
    ));
    match &b[6] {
        Stmt::Loc {
            file,
            function_name,
            inlined_at,
            ..
        } => {
            assert_eq!(*file, 2);
            assert_eq!(function_name.as_deref(), Some("$L__info_string0"));
            assert_eq!(*inlined_at, Some((1, 23, 4)));
        }
        s => panic!("{s:?}"),
    }
}

#[test]
fn nested_scopes() {
    let b = body("{\n .reg .b32 t;\n { mov.b32 t, 1; }\n}\nret;");
    match &b[0] {
        Stmt::Scope { body, .. } => match &body[1] {
            Stmt::Scope { body, .. } => match &body[0] {
                Stmt::Inst(i) => assert_eq!(i.operands[0].kind, reg("t")),
                s => panic!("{s:?}"),
            },
            s => panic!("{s:?}"),
        },
        s => panic!("{s:?}"),
    }
    // Outside the scope `t` is not a register any more.
    let b = body("{ .reg .b32 t; }\nbra t;\nt:");
    match &b[1] {
        Stmt::Inst(i) => assert_eq!(i.operands[0].kind, OperandKind::Symbol("t".into())),
        s => panic!("{s:?}"),
    }
}

#[test]
fn modifiers_come_through() {
    let i =
        inst("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1}, 1, 2, p, 1, 1, 0, 0;");
    assert_eq!(i.opcode, "wgmma");
    assert_eq!(
        i.modifier_texts(),
        vec![
            "mma_async",
            "sync",
            "aligned",
            "m64n8k16",
            "f32",
            "f16",
            "f16"
        ]
    );
    assert_eq!(
        i.mnemonic(),
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"
    );
    for (src, m) in [
        (
            "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {d0}, {d0}, {d0}, {d0};",
            vec![
                "sync",
                "aligned",
                "m16n8k256",
                "row",
                "col",
                "s32",
                "b1",
                "b1",
                "s32",
                "and",
                "popc",
            ],
        ),
        (
            "cvt.rn.satfinite.e4m3x2.f32 d0, d1, d1;",
            vec!["rn", "satfinite", "e4m3x2", "f32"],
        ),
        (
            "ld.global.L2::cache_hint.v4.u32 {d0, d1, d0, d1}, [d0], d1;",
            vec!["global", "L2::cache_hint", "v4", "u32"],
        ),
        ("st.shared::cta.u32 [d0], d1;", vec!["shared::cta", "u32"]),
    ] {
        assert_eq!(inst(src).modifier_texts(), m, "{src}");
    }
}

#[test]
fn predicates() {
    let i = inst("@p bra $L1;\n$L1:");
    assert_eq!(
        i.pred.as_ref().map(|p| (p.negated, p.reg.as_str())),
        Some((false, "p"))
    );
    let i = inst("@!q bra.uni $L1;\n$L1:");
    assert_eq!(
        i.pred.as_ref().map(|p| (p.negated, p.reg.as_str())),
        Some((true, "q"))
    );
    assert_eq!(i.modifier_texts(), vec!["uni"]);
    assert_eq!(i.operands[0].kind, OperandKind::Symbol("$L1".into()));
    let b = body(".reg .pred %p<2>;\n@%p1 bra $L__BB0_2;\n$L__BB0_2:\nret;");
    assert!(matches!(&b[1], Stmt::Inst(i) if i.pred.as_ref().is_some_and(|p| p.reg == "%p1")));
}

#[test]
fn immediates() {
    let i = inst("mov.b32 d0, 42;");
    assert_eq!(kinds(&i)[1], OperandKind::Imm(Imm::Int(42)));
    let cases = [
        ("-1", Imm::Int(-1)),
        ("0x10", Imm::Int(16)),
        ("0xFFFFFFFFU", Imm::UInt(0xFFFF_FFFF)),
        ("0xFFFFFFFFFFFFFFFF", Imm::UInt(u64::MAX)),
        ("017", Imm::Int(15)),
        ("0b11", Imm::Int(3)),
        ("0f3F800000", Imm::F32(0x3F80_0000)),
        ("-0f3F800000", Imm::F32(0xBF80_0000)),
        ("0d3FF0000000000000", Imm::F64(0x3FF0_0000_0000_0000)),
        ("1.5", Imm::F64(1.5f64.to_bits())),
        ("4+4", Imm::Int(8)),
        ("~0", Imm::Int(-1)),
        ("-9223372036854775808", Imm::Int(i64::MIN)),
    ];
    for (t, want) in cases {
        let i = inst(&format!("mov.b32 d0, {t};"));
        assert_eq!(kinds(&i)[1], OperandKind::Imm(want), "{t}");
    }
}

#[test]
fn registers_and_symbols() {
    let b = body(
        ".reg .b32 %r<4>;\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.y;\nmov.u32 %r3, %laneid;\n\
         mov.u64 %rd1, gtab;\nmov.u64 %rd1, gtab+8;\nmov.u64 %rd1, gtab-4;",
    );
    let ks: Vec<OperandKind> = b
        .iter()
        .filter_map(|s| match s {
            Stmt::Inst(i) => i.operands.get(1).map(|o| o.kind.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        ks,
        vec![
            reg("%tid.x"),
            reg("%ctaid.y"),
            reg("%laneid"),
            OperandKind::Symbol("gtab".into()),
            OperandKind::SymOffset("gtab".into(), 8),
            OperandKind::SymOffset("gtab".into(), -4),
        ]
    );
}

#[test]
fn vectors_sinks_pairs_negpreds() {
    let i = inst("ld.global.v4.u32 {d0, d1, _, d0}, [d1];");
    match &i.operands[0].kind {
        OperandKind::Vector(v) => {
            assert_eq!(v.len(), 4);
            assert_eq!(v[2].kind, OperandKind::Sink);
        }
        k => panic!("{k:?}"),
    }
    let i = inst("setp.lt.s32 p|q, d0, 4;");
    assert_eq!(
        i.operands[0].kind,
        OperandKind::PredPair(Box::new(("p".into(), "q".into())))
    );
    let i = inst("and.pred p, q, !p;");
    assert_eq!(i.operands[2].kind, OperandKind::NegPred("p".into()));
    let i = inst("mbarrier.arrive.expect_tx.shared::cta.b64 _, [d0], 16384;");
    assert_eq!(i.operands[0].kind, OperandKind::Sink);
}

#[test]
fn addresses() {
    let a = |base: Option<AddrBase>, offset| OperandKind::Address { base, offset };
    let r = |s: &str| Some(AddrBase::Reg(s.into()));
    let s = |s: &str| Some(AddrBase::Symbol(s.into()));
    for (src, want) in [
        ("[%rd1]", a(r("%rd1"), 0)),
        ("[%rd1+8]", a(r("%rd1"), 8)),
        ("[%rd1+-4]", a(r("%rd1"), -4)),
        ("[%rd1-4]", a(r("%rd1"), -4)),
        ("[d0+0x10]", a(r("d0"), 16)),
        ("[gtab]", a(s("gtab"), 0)),
        ("[gtab+4]", a(s("gtab"), 4)),
        ("[64]", a(None, 64)),
    ] {
        let i = inst(&format!("ld.global.u32 d0, {src};"));
        assert_eq!(i.operands[1].kind, want, "{src}");
    }
    let i = inst("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [d0], [%rd1, {d0, d1}], [d1];");
    match &i.operands[1].kind {
        OperandKind::AddressList(v) => {
            assert_eq!(v[0].kind, reg("%rd1"));
            assert!(matches!(&v[1].kind, OperandKind::Vector(x) if x.len() == 2));
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn calls() {
    let i = inst("call.uni (retval0), vprintf, (param0, param1);");
    assert_eq!(i.modifier_texts(), vec!["uni"]);
    let sym = |s: &str| Operand {
        kind: OperandKind::Symbol(s.into()),
        span: Span::default(),
    };
    let strip = |o: &Operand| -> OperandKind {
        match &o.kind {
            OperandKind::CallArgs(v) => OperandKind::CallArgs(
                v.iter()
                    .map(|x| Operand {
                        kind: x.kind.clone(),
                        span: Span::default(),
                    })
                    .collect(),
            ),
            k => k.clone(),
        }
    };
    assert_eq!(
        strip(&i.operands[0]),
        OperandKind::CallArgs(vec![sym("retval0")])
    );
    assert_eq!(i.operands[1].kind, OperandKind::Symbol("vprintf".into()));
    assert_eq!(
        strip(&i.operands[2]),
        OperandKind::CallArgs(vec![sym("param0"), sym("param1")])
    );
    let i = inst("call f, (a);");
    assert_eq!(i.operands.len(), 2);
    let i = inst("call (r), fptr, (a), proto;");
    assert_eq!(i.operands.len(), 4);
    let b = body("proto : .callprototype (.param .b32 _) _ (.param .b32 _);\nret;");
    match &b[0] {
        Stmt::CallPrototype {
            name,
            ret_params,
            params,
            ..
        } => {
            assert_eq!(name, "proto");
            assert_eq!((ret_params.len(), params.len()), (1, 1));
            assert_eq!(
                (params[0].space.as_str(), params[0].ty.as_str()),
                ("param", "b32")
            );
        }
        other => panic!("not a prototype: {other:?}"),
    }
    let b = body("fl: .calltargets f, g;\nret;");
    assert!(matches!(&b[0], Stmt::CallTargets { name, funcs, .. }
        if name == "fl" && funcs.iter().map(|(f, _)| f.as_str()).eq(["f", "g"])));
}

#[test]
fn no_operand_instructions_and_spans() {
    let b = body("  wgmma.fence.sync.aligned;\n\tret;");
    match &b[0] {
        Stmt::Inst(i) => {
            assert!(i.operands.is_empty());
            assert_eq!((i.span.line, i.span.col), (6, 3));
        }
        s => panic!("{s:?}"),
    }
    match &b[1] {
        Stmt::Inst(i) => assert_eq!((i.opcode.as_str(), i.span.line, i.span.col), ("ret", 7, 2)),
        s => panic!("{s:?}"),
    }
}

#[test]
fn comments_files_sections() {
    let m = ok(&format!(
        "// header\n{HDR}/* block\n comment */\n.visible .entry k() {{ ret; // trailing\n}}\n\
         .file 1 \"/tmp/a.py\", 1700000000, 123\n.file 2 \"b.cu\"\n\
         .section .debug_abbrev\n{{\n.b8 1\n.b8 17 // x\n}}\n.section .debug_str {{ $L__info_string0: .b8 102,0 }}\n\
         .pragma \"nounroll\";\n"
    ));
    assert_eq!(
        m.files,
        vec![(1, "/tmp/a.py".to_string()), (2, "b.cu".to_string())]
    );
    let dirs: Vec<&Directive> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Directive(d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(dirs.len(), 3);
    assert_eq!(dirs[0].name, "section .debug_abbrev");
    assert!(dirs[0].text.ends_with('}'));
    assert_eq!(dirs[2].name, "pragma");
}

#[test]
fn constructs_fixture() {
    // nvcc-like module accepted by ptxas 13.0.88.
    let m = ok(include_str!("data/constructs.ptx"));
    assert_eq!(m.target, vec!["sm_90a", "debug"]);
    let n = m
        .items
        .iter()
        .filter(|i| matches!(i, Item::Function(_)))
        .count();
    assert_eq!(n, 3);
}
