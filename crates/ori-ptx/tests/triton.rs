//! Parses a realistic Triton-style Hopper (sm_90a) matmul kernel: TMA loads,
//! mbarriers, wgmma with 32-register accumulator vectors, inline-asm scopes,
//! `.loc` / `.file` debug info and `.section .debug_*` blocks. The fixture is
//! accepted by the real ptxas 13.0.88.

use ori_ptx::*;

const SRC: &str = include_str!("data/triton_matmul_sm90.ptx");

fn insts(stmts: &[Stmt], out: &mut Vec<Instruction>) {
    for s in stmts {
        match s {
            Stmt::Inst(i) => out.push(i.clone()),
            Stmt::Scope { body, .. } => insts(body, out),
            _ => {}
        }
    }
}

#[test]
fn triton_matmul_parses() {
    let m = parse("triton_matmul_sm90.ptx", SRC).unwrap_or_else(|d| {
        panic!(
            "{}",
            d.iter()
                .map(Diag::render_ptxas)
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    assert_eq!(m.version, (8, 5));
    assert_eq!(m.target, vec!["sm_90a"]);
    assert_eq!(m.address_size, Some(64));
    assert_eq!(m.files, vec![(1, "/tmp/triton/matmul.py".to_string())]);
    let funcs: Vec<&Function> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(funcs.len(), 1);
    let f = funcs[0];
    assert!(f.is_entry);
    assert_eq!(f.name, "matmul_kernel");
    assert_eq!(f.params.len(), 6);
    assert_eq!(f.params[0].array, Some(128));
    assert_eq!(f.params[0].align, Some(64));
    assert_eq!(f.params[2].ptr_space.as_deref(), Some("global"));
    assert_eq!(f.params[2].align, Some(16));
    assert_eq!(
        f.perf,
        vec![
            ("maxntid".to_string(), vec![128, 1, 1]),
            ("reqnctapercluster".to_string(), vec![1, 1, 1])
        ]
    );
    let sections = m
        .items
        .iter()
        .filter(|i| matches!(i, Item::Directive(d) if d.name.starts_with("section")))
        .count();
    assert_eq!(sections, 3);
    assert!(m
        .items
        .iter()
        .any(|i| matches!(i, Item::Var(v) if v.name == "global_smem" && v.dims == vec![None])));

    let mut is = Vec::new();
    insts(f.body.as_deref().unwrap_or(&[]), &mut is);
    let wg: Vec<&Instruction> = is
        .iter()
        .filter(|i| i.opcode == "wgmma" && i.has_modifier("mma_async"))
        .collect();
    assert_eq!(wg.len(), 2);
    assert_eq!(
        wg[0].mnemonic(),
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
    );
    match &wg[0].operands[0].kind {
        OperandKind::Vector(v) => {
            assert_eq!(v.len(), 32);
            assert_eq!(v[31].kind, OperandKind::Reg("%f32".into()));
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(wg[0].operands.len(), 8);
    let tma = is
        .iter()
        .find(|i| i.opcode == "cp" && i.has_modifier("tensor"))
        .expect("tma");
    assert!(tma.has_modifier("mbarrier::complete_tx::bytes"));
    assert!(matches!(&tma.operands[1].kind, OperandKind::AddressList(v) if v.len() == 2));
    assert!(tma.pred.is_some());
    // The inline-asm scope declares a plain-named predicate P1.
    let bra_p1 = is
        .iter()
        .find(|i| i.pred.as_ref().is_some_and(|p| p.reg == "P1"))
        .expect("@P1 bra");
    assert_eq!(bra_p1.operands[0].kind, OperandKind::Symbol("DONE".into()));
    let try_wait = is
        .iter()
        .find(|i| i.has_modifier("try_wait"))
        .expect("try_wait");
    assert_eq!(try_wait.operands[0].kind, OperandKind::Reg("P1".into()));
    let big = is
        .iter()
        .find(|i| i.opcode == "or" && i.has_modifier("b64"))
        .expect("or.b64");
    assert_eq!(
        big.operands[2].kind,
        OperandKind::Imm(Imm::Int(4611686293305294848))
    );
    let sink = is
        .iter()
        .find(|i| i.has_modifier("expect_tx"))
        .expect("expect_tx");
    assert_eq!(sink.operands[0].kind, OperandKind::Sink);
    assert_eq!(is.iter().filter(|i| i.opcode == "st").count(), 8);
}

/// Real nvcc 13.5 output (`-arch=sm_90a -ptx`, and `-G` for full debug info:
/// `.loc`, `.file`, `.section .debug_*`), with `.version` lowered to 8.5 so
/// that ptxas 13.0.88 accepts them too.
#[test]
fn nvcc_output_parses() {
    for (name, src) in [
        ("nvcc_sm90.ptx", include_str!("data/nvcc_sm90.ptx")),
        (
            "nvcc_sm90_debug.ptx",
            include_str!("data/nvcc_sm90_debug.ptx"),
        ),
    ] {
        let m = parse(name, src).unwrap_or_else(|d| {
            panic!(
                "{}",
                d.iter()
                    .map(Diag::render_ptxas)
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        });
        let funcs: Vec<&Function> = m
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Function(f) => Some(f),
                _ => None,
            })
            .collect();
        assert!(funcs.iter().any(|f| f.is_entry && f.name.contains("kern")));
        assert!(funcs
            .iter()
            .any(|f| f.name == "vprintf" && f.body.is_none() && f.ret_params.len() == 1));
        let kern = funcs.iter().find(|f| f.is_entry).expect("kernel");
        assert!(kern.perf.iter().any(|(d, _)| d == "maxntid"));
        let mut is = Vec::new();
        insts(kern.body.as_deref().unwrap_or(&[]), &mut is);
        let call = is.iter().find(|i| i.opcode == "call").expect("call");
        assert!(matches!(&call.operands[0].kind, OperandKind::CallArgs(_)));
    }
}
