//! Thread-block clusters of several CTAs in the host backend: distributed
//! shared memory, remote mbarrier arrivals, the cluster barrier, the
//! cluster special registers and TMA multicast, against what the GPU
//! wrote (`tests/host/probes/cluster_dsmem.*`, recorded by its `.py`, never
//! edited); and the errors a wrong kernel or launch must stop with.

use ori::host::{GlobalMemory, Launch};

fn module(src: &str) -> ori::ir::Module {
    let c = ori::compile_ptx("cluster.ptx", src, &ori::Options::default());
    c.module.unwrap_or_else(|| panic!("{:?}", c.diags))
}

/// The probe's recording (`tests/host/probes/cluster_dsmem.json`).
struct Probe {
    input: Vec<u8>,
    input_addr: u64,
    tensormap: Vec<u8>,
    gpu: Vec<u32>,
}

fn probe() -> Probe {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/host/probes/cluster_dsmem.json"))
        .expect("the probe's recording");
    let rec: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let words = |k: &str| -> Vec<u32> {
        rec[k]
            .as_array()
            .expect("a list of words")
            .iter()
            .map(|w| w.as_u64().expect("a word") as u32)
            .collect()
    };
    let hex = rec["tensormap"].as_str().unwrap();
    Probe {
        input: words("input")
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect(),
        input_addr: u64::from_str_radix(
            rec["input_addr"].as_str().unwrap().trim_start_matches("0x"),
            16,
        )
        .unwrap(),
        tensormap: (0..128)
            .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
            .collect(),
        gpu: words("out"),
    }
}

/// Run the probe kernel `src` (the recorded one, or a variant) as the GPU
/// ran it: 4 CTAs in clusters of 2, the input at its device address and
/// the driver's tensor map. The output words.
fn run_probe(p: &Probe, src: &str) -> Result<Vec<u32>, String> {
    let m = module(src);
    let mut g = GlobalMemory::new();
    let out = g.alloc(vec![0; 4 * p.gpu.len()]);
    g.alloc_at(p.input_addr, p.input.clone())?;
    let launch = Launch {
        params: vec![0, out],
        param_bytes: vec![(0, p.tensormap.clone())],
        grid: [4, 1, 1],
        block: [128, 1, 1],
        cluster: [2, 1, 1],
        ..Launch::default()
    };
    let stats = ori::host::run(&m, "cluster_probe", &launch, &g).map_err(|e| e.to_string())?;
    // A hazard the sanitizer reports fails the run (it went on).
    if let Some(h) = stats.hazards.first() {
        return Err(h.to_string());
    }
    Ok(g.buffer(out)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn probe_source() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("tests/host/probes/cluster_dsmem.ptx")).unwrap()
}

/// DSMEM reads and writes, a remote reduction, remote mbarrier arrivals,
/// the cluster barrier, the special registers and a multicast TMA load.
#[test]
fn a_two_cta_cluster_computes_what_the_gpu_computed() {
    let p = probe();
    let host = run_probe(&p, &probe_source()).unwrap();
    for (k, (h, d)) in host.iter().zip(&p.gpu).enumerate() {
        assert_eq!(
            h,
            d,
            "word {k} (CTA {}, offset {}): host {h}, GPU {d}",
            k / 1024,
            k % 1024
        );
    }
}

/// The TMA check, per CTA: reading the multicast box after a cluster
/// barrier but without waiting on the mbarrier is a race (the copy is
/// asynchronous), in the peer as in the issuing CTA.
#[test]
fn the_tma_check_reports_a_multicast_box_read_before_its_mbarrier_wait() {
    let src = probe_source();
    let wait = "$L_full:\n\tmbarrier.try_wait.parity.shared::cta.b64 \t%p5, [%r12], 0;\n\t@!%p5 bra \t$L_full;";
    assert!(src.contains(wait));
    let racy = src.replace(
        wait,
        "barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;",
    );
    let e = run_probe(&probe(), &racy).unwrap_err();
    assert!(
        e.contains("that the TMA load of line") && e.contains("before this warpgroup saw phase 0"),
        "{e}"
    );
}

/// A kernel of clusters of 2: every thread arrives at the cluster barrier
/// then waits; `BODY` runs between (with `%r1` = %tid.x, `%r3` = the
/// CTA's rank, `%r4` = the peer's, `%r5` = bar's address, an mbarrier of
/// count 1 that thread 0 initialized before a first cluster barrier).
fn cluster_kernel(body: &str) -> String {
    format!(
        r#".version 8.6
.target sm_90a
.address_size 64
.shared .align 8 .b64 bar;
.shared .align 4 .b32 word;

.visible .entry k(.param .u64 out)
.reqntid 128, 1, 1
{{
	.reg .pred %p<8>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<8>;
	mov.u32 %r1, %tid.x;
	mov.u32 %r3, %cluster_ctarank;
	xor.b32 %r4, %r3, 1;
	mov.u32 %r5, bar;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [%r5], 1;
	fence.mbarrier_init.release.cluster;
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
{body}
	ret;
}}
"#
    )
}

fn run_cluster(src: &str, grid: u32, cluster: [u32; 3]) -> Result<(), String> {
    run_cluster_out(src, grid, cluster).map(|_| ())
}

/// [`run_cluster`], with the 64 bytes of `out` after the run.
fn run_cluster_out(src: &str, grid: u32, cluster: [u32; 3]) -> Result<Vec<u8>, String> {
    let m = module(src);
    let mut g = GlobalMemory::new();
    let out = g.alloc(vec![0; 64]);
    let launch = Launch {
        params: vec![out],
        grid: [grid, 1, 1],
        block: [128, 1, 1],
        cluster,
        ..Launch::default()
    };
    let stats = ori::host::run(&m, "k", &launch, &g).map_err(|e| e.to_string())?;
    if let Some(h) = stats.hazards.first() {
        return Err(h.to_string());
    }
    Ok(g.buffer(out).unwrap())
}

#[test]
fn a_remote_arrive_completes_the_peers_mbarrier_phase() {
    // Rank 1's thread 0 arrives on rank 0's mbarrier; rank 0 waits for it.
    let body = r#"
	setp.eq.u32 %p2, %r3, 1;
	and.pred %p3, %p1, %p2;
	mapa.shared::cluster.u32 %r6, %r5, %r4;
	@%p3 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r6];
	@%p2 bra DONE;
WAIT:
	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p4, [%r5], 0;
	@!%p4 bra WAIT;
DONE:
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;"#;
    run_cluster(&cluster_kernel(body), 4, [2, 1, 1]).unwrap();
    // Without the arrival, rank 0's wait can never complete.
    let lost = body.replace("@%p3 mbarrier.arrive", "@%p3 mov.u32 %r7, 0; // ");
    let e = run_cluster(&cluster_kernel(&lost), 4, [2, 1, 1]).unwrap_err();
    assert!(
        e.contains("CTA (0,0,0)") && e.contains("mbarrier wait's phase can no longer complete"),
        "{e}"
    );
}

#[test]
fn a_cluster_barrier_that_some_threads_never_reach_is_a_deadlock() {
    // Rank 1 waits at a CTA barrier no one else reaches; rank 0 at the
    // cluster barrier.
    let body = r#"
	setp.eq.u32 %p2, %r3, 1;
	@%p2 bar.sync 1, 256;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;"#;
    let e = run_cluster(&cluster_kernel(body), 2, [2, 1, 1]).unwrap_err();
    assert!(
        e.contains("barrier.cluster.wait has 128 of the cluster's 256 threads arrived"),
        "{e}"
    );
    // A wait without an arrival is an error; so is a second arrival.
    let e = run_cluster(
        &cluster_kernel("\tbarrier.cluster.wait.aligned;"),
        2,
        [2, 1, 1],
    )
    .unwrap_err();
    assert!(e.contains("without a barrier.cluster.arrive"), "{e}");
    let e = run_cluster(
        &cluster_kernel("\tbarrier.cluster.arrive.aligned;\n\tbarrier.cluster.arrive.aligned;"),
        2,
        [2, 1, 1],
    )
    .unwrap_err();
    assert!(e.contains("arrive again"), "{e}");
}

#[test]
fn threads_that_exited_do_not_hold_the_cluster_barrier() {
    // Rank 1's threads exit; rank 0 still passes a second cluster barrier.
    let body = r#"
	setp.eq.u32 %p2, %r3, 1;
	@%p2 exit;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	mov.u32 %r6, word;
	@%p1 st.shared.u32 [%r6], %r1;"#;
    run_cluster(&cluster_kernel(body), 2, [2, 1, 1]).unwrap();
}

#[test]
fn distributed_shared_memory_reaches_only_the_clusters_ctas() {
    let body = r#"
	mov.u32 %r6, word;
	mov.u32 %r7, 2;
	mapa.shared::cluster.u32 %r8, %r6, %r7;"#;
    let e = run_cluster(&cluster_kernel(body), 2, [2, 1, 1]).unwrap_err();
    assert!(e.contains("mapa: CTA rank 2 of a cluster of 2 CTAs"), "{e}");
    // A one-CTA launch of the same kernel: rank 0 is the only CTA.
    let body = r#"
	mov.u32 %r6, word;
	mapa.shared::cluster.u32 %r8, %r6, %r3;
	@%p1 st.shared::cluster.u32 [%r8], %r1;
	@%p1 ld.shared::cluster.u32 %r9, [%r8];"#;
    run_cluster(&cluster_kernel(body), 2, [1, 1, 1]).unwrap();
    // try_wait takes only the CTA's own mbarrier.
    let body = r#"
	mapa.shared::cluster.u32 %r6, %r5, %r4;
	mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r6], 0;"#;
    let e = run_cluster(&cluster_kernel(body), 2, [2, 1, 1]).unwrap_err();
    assert!(e.contains("only arrive, expect_tx and complete_tx"), "{e}");
}

#[test]
fn a_grid_must_be_whole_clusters_of_at_most_8_ctas() {
    let src = cluster_kernel("");
    let e = run_cluster(&src, 3, [2, 1, 1]).unwrap_err();
    assert!(e.contains("whole number of clusters"), "{e}");
    let e = run_cluster(&src, 16, [16, 1, 1]).unwrap_err();
    assert!(e.contains("of 1 to 8 CTAs"), "{e}");
    run_cluster(&src, 16, [8, 1, 1]).unwrap();
}

#[test]
fn generic_addresses_reach_a_peers_shared_memory() {
    // Thread 0 of each CTA stores rank + 10 in its `word`; after a cluster barrier it
    // reads the peer's through a generic address `mapa.u64` gave, and
    // writes it to out[%ctaid.x].
    let body = r#"
	mov.u32 %r6, word;
	add.u32 %r7, %r3, 10;
	@%p1 st.shared.u32 [%r6], %r7;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	mov.u64 %rd1, word;
	cvta.shared.u64 %rd2, %rd1;
	mapa.u64 %rd3, %rd2, %r4;
	ld.u32 %r8, [%rd3];
	ld.param.u64 %rd4, [out];
	mov.u32 %r9, %ctaid.x;
	mul.wide.u32 %rd5, %r9, 4;
	add.u64 %rd6, %rd4, %rd5;
	@%p1 st.global.u32 [%rd6], %r8;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;"#;
    let out = run_cluster_out(&cluster_kernel(body), 4, [2, 1, 1]).unwrap();
    let w: Vec<u32> = out[..16]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(w, [11, 10, 11, 10]);
}
