//! `{ }` scopes: a `.reg` declared in a nested scope is a register of its
//! own, even where an outer or sibling scope declares the same name (PTX ISA,
//! "Scope"; ptxas compiles each as a separate register). The fix-it relies on
//! this: it writes shared names such as `%ori_acc0` in sibling scopes.

use ori_ptx::lower::lower_module;

fn lower(src: &str) -> ori_ir::Module {
    let ast = ori_ptx::parse("t.ptx", src).expect("parses");
    let (m, diags) = lower_module("t.ptx", &ast);
    assert!(diags.is_empty(), "{diags:?}");
    m
}

const SRC: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n\
.visible .entry k()\n{\n  .reg .b32 x, y;\n  mov.b32 x, 1;\n\
  { .reg .b32 x; mov.b32 x, 2; mov.b32 y, x; }\n\
  { .reg .b32 x; mov.b32 x, 3; add.u32 y, y, x; }\n\
  add.u32 y, y, x;\n  ret;\n}\n";

#[test]
fn nested_declarations_are_registers_of_their_own() {
    let m = lower(SRC);
    let f = m.funcs.values().next().expect("one function");
    // The writes of `x`: one per scope, each to a different register.
    let written: Vec<_> = f
        .layout
        .all_insts()
        .filter(|i| f.insts[*i].mnemonic().starts_with("mov"))
        .flat_map(|i| f.insts[i].defs())
        .collect();
    let names: Vec<String> = written
        .iter()
        .map(|r| f.vregs[*r].name.to_string())
        .collect();
    assert_eq!(names, ["x", "x_1", "y", "x_2"]);
    // The last add reads the outer `x` again.
    let last_add = f
        .layout
        .all_insts()
        .filter(|i| f.insts[*i].mnemonic().starts_with("add"))
        .last()
        .expect("an add");
    let reads: Vec<String> = f.insts[last_add]
        .uses()
        .iter()
        .map(|r| f.vregs[*r].name.to_string())
        .collect();
    assert!(reads.contains(&"x".to_string()), "{reads:?}");
}
