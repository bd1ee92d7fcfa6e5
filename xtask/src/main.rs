//! `cargo xtask` — developer tasks for the ori workspace.
//!
//! ```text
//! cargo xtask oracle install            pip-install ptxas/cuobjdump/nvdisasm into target/oracle-tools
//! cargo xtask oracle record [CASE...]   run ptxas + cuobjdump on tests/corpus/*.ptx, write NAME.expected
//!                                       (--corpus tests/real: the real-kernel corpus)
//! cargo xtask oracle check [OPTIONS] [CASE...]
//!                                       run ori on the corpus and print the agreement table
//! cargo xtask oracle record-table     run ptxas on the generated wgmma table, write
//!                                       tests/wgmma_table/verdicts.tsv
//! cargo xtask bench [--sizes N,...]     time the front end and phases 85/87 on generated kernels
//! cargo xtask dist [--pgo]              build the statically linked ori at target/dist/ori
//! cargo xtask docs [--check]            write the generated documents (docs/, README figures)
//! cargo xtask wheel                     build the pip wheel (ori, ori-ptxas, python/ori) into target/wheels
//! cargo xtask speed                     the speed targets, from the built programs, in one table
//! ```

mod bench;
mod bench_host;
mod bench_shapes;
mod bench_vs_ptxas;
mod dist;
mod docs;
mod fuzz_functions;
mod fuzz_grammar;
mod fuzz_open;
mod gen_pipelines;
mod isa_coverage;
mod oracle;
mod perf_doc;
mod process;
mod progress;
mod roundtrip;
mod speed;
mod wgmma_table;
mod wheel;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  oracle install               pip-install ptxas 13.0.88, cuobjdump 13.2.51 and nvdisasm 13.2.51
                               into target/oracle-tools (skipped when already there)
  oracle record [-j N] [CASE...]
                               run ptxas (+ cuobjdump -sass) on tests/corpus/*.ptx (or the named
                               cases, or a family folder's cases) and write NAME.expected beside
                               each; -j N runs N at a time
  oracle check [OPTIONS] [CASE...]
                               build ori (cargo build --release -p ori-cli), run it on the corpus and
                               print the agreement table
      --verbose, -v            print the diff of every disagreeing case
      --ori PATH               use this ori binary instead of building target/release/ori
      --strict                 exit nonzero unless every case fully agrees
      --report FILE            write the per-case verdicts as TSV (first-contact records)
      --ptx-roundtrip          run ori's fix-it (--emit ptx) of every case ptxas compiles through
                               ptxas again: no C75xx message but C7504/C7508/C7509/C7512, and the sync skeleton
  oracle record-roundtrip [-j N] [CASE...]
                               the same round trip, written to CORPUS/roundtrip.expected (one line
                               per case, keyed by the fix-it's digest) for tests/fixit_roundtrip.rs
  oracle record-table [--dump DIR]
                               run ptxas on every generated wgmma shape/type/form case
                               (ori_oracle::wgmma_table) and write tests/wgmma_table/verdicts.tsv;
                               --dump DIR only writes the .ptx files there
  oracle gen-pipelines [--first SEED] [--count N] [--out DIR]
                               write N generated wgmma pipelines (seeds SEED.., default 1000 and
                               300) to tests/generated/pipelines for `oracle record --corpus
                               tests/generated`
  fuzz-grammar [--count N] [--functions M] [--seed S]
                               the differential grammar fuzzer: N statements (default 2000) made
                               from the instruction table (crates/ori-ptx/src/isa) and M small
                               functions (default N/10: scopes, labels, .loc, .pragma, vector
                               registers, WARP_SZ, comments), valid and near misses, judged by
                               ptxas and ori; accept/reject must agree
                               (disagreements: target/fuzz-grammar/disagreements.txt)
  isa-coverage                 every PTX ISA 9.0 instruction ptxas takes for sm_90a
                               (xtask/isa_coverage.txt), judged by ptxas and ori, with how ori's
                               instruction table takes it: writes docs/isa-coverage.md
  dist [--pgo]                 build the shipped ori: release, statically linked (Linux), at
                               target/dist/ori (a third of a small kernel's time is the dynamic
                               loader's); `bench --vs-ptxas` times it beside the default build;
                               --pgo: profile-guided, trained on tests/corpus, tests/generated
                               and the bench shapes (needs rustup's llvm-tools)
  docs [--check]               write docs/rules.md, docs/accuracy.md and README.md's figures from
                               the corpora on disk; --check only says whether they are up to date
  wheel [--no-pgo | --profile NAME]
                               build ori and ori-ptxas (dist profile, statically linked,
                               profile-guided when rustup's llvm-tools is installed; it says which)
                               and pack them with the Python package python/ori into a py3-none
                               wheel in target/wheels (pip install target/wheels/ori-*.whl)
  speed [--runs N] [--only TEXT] [--every K] [--out FILE] [--doc]
                               build nothing; time target/release/ori and target/dist/ori against
                               ptxas ($PTXAS, else target/oracle-tools) on tests/triton*, tests/real
                               and `ori scan tests/real` on 1 and 2 threads, interleaved (best of
                               N, default 5; --every K: every Kth kernel); write the table to
                               target/speed.md (or FILE) and, with --doc, into docs/performance.md
  bench [OPTIONS]              time parse, lowering, phase 85, phase 87 and the pipeline (release,
                               best of N) on generated kernels of 125k..1M instructions
                               (cargo xtask bench --help for the options)

  every oracle command takes --corpus DIR: another corpus than tests/corpus, e.g. tests/real,
  whose cases sit in one folder per family (named family/kernel; check adds a table per family)

environment:
  ORI_ORACLE_TOOLS             directory holding nvidia/cu13/bin/{ptxas,cuobjdump}
                               (default: target/oracle-tools)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    let strs = match strs.first() {
        Some(&"oracle") => match oracle::take_corpus_option(&strs) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("xtask: error: {e}");
                return ExitCode::from(2);
            }
        },
        _ => strs,
    };
    let result = match strs.as_slice() {
        ["oracle", "install"] => oracle::install(),
        ["oracle", "record", cases @ ..] => oracle::record(cases),
        ["oracle", "check", rest @ ..] => oracle::check(rest),
        ["oracle", "record-roundtrip", rest @ ..] => roundtrip::record(rest),
        ["oracle", "record-table", rest @ ..] => wgmma_table::record_table(rest),
        ["oracle", "gen-pipelines", rest @ ..] => gen_pipelines::run(rest),
        ["bench", rest @ ..] => bench::run(rest),
        ["dist", rest @ ..] => dist::run(rest),
        ["docs", rest @ ..] => docs::run(rest),
        ["wheel", rest @ ..] => wheel::run(rest),
        ["speed", rest @ ..] => speed::run(rest),
        ["fuzz-grammar", rest @ ..] => fuzz_grammar::run(rest),
        ["isa-coverage", rest @ ..] => isa_coverage::run(rest),
        ["help"] | ["--help"] | ["-h"] => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}
