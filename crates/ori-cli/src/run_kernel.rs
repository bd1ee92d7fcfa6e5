//! `ori run`: run a kernel on the CPU with the host backend.
//!
//! The kernel goes through ori's passes first (as ptxas would legalize its
//! wgmma pipeline), unless `--no-passes` asks to run the PTX as written,
//! where the sanitizer reports each access to a register of a wgmma in
//! flight. Buffers come from and go back to NumPy `.npy` files; scalars are
//! literals typed by the parameter's PTX type. The sanitizer's hazards are
//! reported once per site and the run goes on (`--stop-on-hazard` stops at
//! the first); the exit status tells a clean run (0), a wrong input (1), a
//! wrong command line (2), a kernel that could not run to its end (3) and
//! one with hazards (4): see [`crate::run_report`].

use crate::run_report;
use crate::{print_diagnostics, read_input, write_bytes_atomically, ColorChoice, MessageFormat};
use ori::host::npy::{descr_of, element_size, NpyArray};
use ori::host::{GlobalMemory, Launch};
use ori::ir::{FuncKind, Function, Module};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The most dynamic shared memory a CTA of sm_90 may have (227 KiB): what a
/// run gets unless `--shared` says otherwise (Triton's PTX does not say
/// how much of its `.extern .shared` array it uses).
pub const SM90_MAX_SHARED: u64 = 227 * 1024;

/// What `ori run` was asked (its command line).
#[derive(clap::Args)]
pub struct RunArgs {
    /// The PTX (or .ori) file.
    pub file: String,
    /// The kernel (default: the module's only .entry).
    #[arg(long)]
    pub entry: Option<String>,
    /// CTAs: X[,Y[,Z]].
    #[arg(long, default_value = "1,1,1")]
    pub grid: String,
    /// Threads per CTA: X[,Y[,Z]], at most 1024 (default: the kernel's
    /// .reqntid or .maxntid, else 128; Triton: 32 x num_warps).
    #[arg(long)]
    pub block: Option<String>,
    /// CTAs per thread-block cluster: X[,Y[,Z]] (default: the kernel's
    /// .reqnctapercluster, else 1); the grid must be a whole number of
    /// clusters of at most 8 CTAs.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Dynamic shared memory per CTA in bytes (default: 227 KiB, sm_90's most).
    #[arg(long, value_name = "BYTES")]
    pub shared: Option<u64>,
    /// A parameter (its name or 0-based index): an integer or float
    /// literal, @FILE.npy (a global buffer with that file's bytes; its
    /// address is passed), zeros:DTYPE:COUNT, or for a .b8 [128]
    /// parameter tensormap:buffer=B,dtype=T,dims=D0xD1,box=B0xB1
    /// [,strides=S1][,swizzle=128B][,fill=nan] (dimensions innermost
    /// first; B is @FILE.npy, zeros:... or an earlier parameter's index).
    /// Omitted trailing pointers are null.
    #[arg(long = "arg", value_name = "PARAM=VALUE")]
    pub args: Vec<String>,
    /// Write a parameter's buffer after the run as .npy (the input's
    /// dtype and shape).
    #[arg(long = "dump", value_name = "PARAM=FILE.npy")]
    pub dumps: Vec<String>,
    /// Run the PTX as written, without ori's passes: the first access
    /// to a register of a wgmma in flight stops the run.
    #[arg(long = "no-passes")]
    pub no_passes: bool,
    /// Warpgroup steps per CTA after which the run is stopped.
    #[arg(long = "max-steps", value_name = "N")]
    pub max_steps: Option<u64>,
    /// Do not report wgmma and TMA reads of shared memory that a generic
    /// write left without fence.proxy.async.
    #[arg(long = "no-proxy-check")]
    pub no_proxy_check: bool,
    /// Do not look for data races on shared memory between warps (the
    /// race detector: vector clocks over barriers, mbarriers, the cluster
    /// barrier and copies; see docs/sanitizer.md).
    #[arg(long = "no-race-check")]
    pub no_race_check: bool,
    /// The order warpgroups run in: deterministic (each until it blocks,
    /// round robin) or random (seeded interleavings; see --seed).
    #[arg(long, value_enum, default_value = "deterministic")]
    pub schedule: ScheduleArg,
    /// The seed of --schedule random (the same seed replays the same
    /// interleaving).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Stop at the first hazard the sanitizer finds (by default each site
    /// is reported once and the run goes on to write its outputs).
    #[arg(long = "stop-on-hazard")]
    pub stop_on_hazard: bool,
    /// Layout of the reports on stderr: human, or json (one object per
    /// line: hazards, the error, a summary).
    #[arg(long = "message-format", value_enum, default_value = "human")]
    pub message_format: MessageFormat,
    /// The whole parameter block as raw bytes (recorded on the GPU, a
    /// CUTLASS kernel's Params) instead of --arg.
    #[arg(long = "params", value_name = "@FILE")]
    pub params: Option<String>,
    /// A global buffer at the address the parameter block points to:
    /// ADDR=@FILE.npy or ADDR=zeros:DTYPE:COUNT (ADDR in hex); --dump
    /// ADDR=out.npy writes it back.
    #[arg(long = "mem", value_name = "ADDR=BUFFER")]
    pub mem: Vec<String>,
}

/// `--schedule`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScheduleArg {
    /// Each warpgroup runs until it blocks, round robin.
    Deterministic,
    /// Seeded random interleavings of the warpgroups (`--seed`).
    Random,
}

impl ScheduleArg {
    /// The host backend's schedule (`seed` for a random one).
    fn with_seed(self, seed: u64) -> ori::host::Schedule {
        match self {
            ScheduleArg::Deterministic => ori::host::Schedule::Deterministic,
            ScheduleArg::Random => ori::host::Schedule::Random { seed },
        }
    }
}

/// A buffer ori made for a parameter: where it is and how to write it back.
struct Buffer {
    addr: u64,
    descr: String,
    shape: Vec<usize>,
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

fn failed(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(1)
}

/// `X`, `X,Y` or `X,Y,Z`, each at least 1.
fn dims(what: &str, s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{what} takes X[,Y[,Z]], not '{s}'"));
    }
    let mut out = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        out[k] = p
            .parse()
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| format!("--{what}: '{p}' is not a positive integer"))?;
    }
    Ok(out)
}

/// The parameter `key` names: its name or 0-based index.
fn param_index(f: &Function, key: &str) -> Option<usize> {
    f.params
        .iter()
        .position(|p| &*p.name == key)
        .or_else(|| key.parse().ok().filter(|k| *k < f.params.len()))
}

/// A parameter's PTX type (`u64`, `f32`...) from its declaration.
fn param_type(ty: &str) -> &str {
    ty.split_whitespace()
        .map(|w| w.trim_start_matches('.'))
        .find(|w| ori::host::memory::type_bytes(w).is_some())
        .unwrap_or("b64")
}

/// A scalar literal as the parameter's bits: a float for `.f32`/`.f64`,
/// else an integer (decimal or 0x hex, negative allowed) that fits the type
/// as signed or as unsigned.
fn scalar(value: &str, ty: &str) -> Result<u64, String> {
    let v = value.trim();
    match ty {
        "f32" => {
            return v
                .parse::<f32>()
                .map(|x| u64::from(x.to_bits()))
                .map_err(|_| format!("'{value}' is not a float (parameter of type .f32)"))
        }
        "f64" => {
            return v
                .parse::<f64>()
                .map(f64::to_bits)
                .map_err(|_| format!("'{value}' is not a float (parameter of type .f64)"))
        }
        _ => {}
    }
    let bits = ori::host::memory::type_bytes(ty).unwrap_or(8) as u32 * 8;
    let (neg, digits) = match v.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, v),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => i128::from_str_radix(h, 16),
        None => digits.parse::<i128>(),
    }
    .map_err(|_| format!("'{value}' is not an integer (parameter of type .{ty})"))?;
    let x = if neg { -magnitude } else { magnitude };
    let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << bits) - 1);
    if x < lo || x > hi {
        return Err(format!("{value} does not fit a .{ty} parameter"));
    }
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    Ok((x as u64) & mask)
}

/// The threads per CTA the kernel declares, `.reqntid` (else `.maxntid`)
/// between its parameter list and its body (Triton writes `.reqntid 128`).
fn declared_threads(src: &str, entry: &str) -> Option<[u32; 3]> {
    let head = entry_head(src, entry)?;
    for directive in [".reqntid", ".maxntid"] {
        if let Some(p) = head.find(directive) {
            let list = head[p + directive.len()..].lines().next()?;
            let mut out = [1u32; 3];
            for (k, n) in list.split(',').take(3).enumerate() {
                out[k] = n.trim().parse().ok()?;
            }
            return Some(out);
        }
    }
    None
}

/// The text between `.entry NAME` and its body's `{` (its parameters and
/// performance directives), if `src` has that entry.
fn entry_head<'s>(src: &'s str, entry: &str) -> Option<&'s str> {
    let at = src.match_indices(".entry").find_map(|(k, _)| {
        let rest = src[k + 6..].trim_start();
        rest.strip_prefix(entry)
            .filter(|r| r.starts_with(|c: char| c == '(' || c.is_whitespace()))
            .map(|_| k)
    })?;
    let head = &src[at..];
    Some(
        &head[..head
            .find(')')
            .and_then(|p| head[p..].find('{').map(|q| p + q))?],
    )
}

/// The numbers after `directive` in an entry's head (`.reqnctapercluster
/// 2, 1, 1`), if it has that directive.
fn directive_numbers(head: &str, directive: &str) -> Option<Vec<u32>> {
    let p = head.match_indices(directive).find_map(|(p, _)| {
        let after = &head[p + directive.len()..];
        after.starts_with(char::is_whitespace).then_some(after)
    })?;
    let list = p.lines().next().unwrap_or("");
    Some(
        list.split(',')
            .map_while(|n| n.trim().trim_end_matches(';').parse().ok())
            .collect(),
    )
}

/// The cluster shape of the launch: `--cluster`, else the kernel's
/// `.reqnctapercluster`, else one CTA; checked against the kernel's
/// `.reqnctapercluster`, `.explicitcluster` and `.maxclusterrank` (the
/// front end does not keep them, so they are read from the source) and
/// against the grid.
fn cluster_shape(
    given: Option<&str>,
    src: &str,
    entry: &str,
    grid: [u32; 3],
) -> Result<[u32; 3], String> {
    let head = entry_head(src, entry).unwrap_or("");
    let required = directive_numbers(head, ".reqnctapercluster").map(|v| {
        let mut out = [1u32; 3];
        for (k, n) in v.iter().take(3).enumerate() {
            out[k] = *n;
        }
        out
    });
    let cluster = match (given, required) {
        (Some(c), Some(r)) => {
            let c = dims("cluster", c)?;
            if c != r {
                return Err(format!(
                    "--cluster {},{},{}: the kernel declares .reqnctapercluster {},{},{}",
                    c[0], c[1], c[2], r[0], r[1], r[2]
                ));
            }
            c
        }
        (Some(c), None) => dims("cluster", c)?,
        (None, Some(r)) => r,
        (None, None) => [1, 1, 1],
    };
    let size: u32 = cluster.iter().product();
    if head.contains(".explicitcluster") && given.is_none() && required.is_none() {
        return Err(
            "the kernel declares .explicitcluster: give its cluster shape with --cluster".into(),
        );
    }
    if let Some(max) = directive_numbers(head, ".maxclusterrank").and_then(|v| v.first().copied()) {
        if size > max {
            return Err(format!(
                "a cluster of {size} CTAs; the kernel declares .maxclusterrank {max}"
            ));
        }
    }
    if size > ori::host::exec::cluster::MAX_CLUSTER {
        return Err(format!(
            "--cluster {},{},{}: a cluster has at most {} CTAs (the portable limit)",
            cluster[0],
            cluster[1],
            cluster[2],
            ori::host::exec::cluster::MAX_CLUSTER
        ));
    }
    if (0..3).any(|k| !grid[k].is_multiple_of(cluster[k])) {
        return Err(format!(
            "--grid {},{},{} is not a whole number of {},{},{} clusters",
            grid[0], grid[1], grid[2], cluster[0], cluster[1], cluster[2]
        ));
    }
    Ok(cluster)
}

/// The kernel to run: `--entry`, else the module's only `.entry`.
fn pick_entry<'m>(m: &'m Module, entry: Option<&str>) -> Result<&'m Function, String> {
    let entries: Vec<&Function> = m
        .funcs
        .values()
        .filter(|f| f.kind == FuncKind::Entry && f.has_body)
        .collect();
    match entry {
        Some(name) => entries
            .iter()
            .find(|f| &*f.name == name)
            .copied()
            .ok_or_else(|| {
                let names: Vec<&str> = entries.iter().map(|f| &*f.name).collect();
                format!("no .entry '{name}' (the module has: {})", names.join(", "))
            }),
        None => match entries[..] {
            [f] => Ok(f),
            [] => Err("the module has no .entry with a body".into()),
            _ => {
                let names: Vec<&str> = entries.iter().map(|f| &*f.name).collect();
                Err(format!(
                    "the module has {} entries, say which with --entry: {}",
                    names.len(),
                    names.join(", ")
                ))
            }
        },
    }
}

/// A buffer value: `@FILE.npy` or `zeros:DTYPE:COUNT` (`None`: not one).
fn buffer_of(value: &str) -> Result<Option<NpyArray>, ExitCode> {
    if let Some(path) = value.strip_prefix('@') {
        let bytes =
            std::fs::read(path).map_err(|e| failed(&format!("cannot read '{path}': {e}")))?;
        return Ok(Some(
            NpyArray::parse(&bytes).map_err(|e| failed(&format!("{path}: {e}")))?,
        ));
    }
    let Some(rest) = value.strip_prefix("zeros:") else {
        return Ok(None);
    };
    let (dtype, count) = rest.split_once(':').unwrap_or((rest, ""));
    let descr = descr_of(dtype).ok_or_else(|| usage(&format!("zeros: unknown dtype '{dtype}'")))?;
    let count: usize = count
        .parse()
        .map_err(|_| usage(&format!("zeros:{dtype}:COUNT needs a count, not '{count}'")))?;
    let size = element_size(descr).unwrap_or(1);
    Ok(Some(NpyArray {
        descr: descr.to_string(),
        shape: vec![count],
        data: vec![0; count * size],
    }))
}

/// A tensor map's `buffer=`: a new buffer (`@FILE.npy`, `zeros:DTYPE:COUNT`)
/// in `g`, or an earlier parameter's (its index).
fn tensor_map_buffer(
    buffer: &str,
    g: &mut GlobalMemory,
    earlier: &[Option<Buffer>],
) -> Result<Buffer, ExitCode> {
    let bad = |m: String| usage(&format!("tensormap: {m}"));
    if let Some(a) = buffer_of(buffer)? {
        return Ok(Buffer {
            addr: g.alloc(a.data),
            descr: a.descr,
            shape: a.shape,
        });
    }
    let k: usize = buffer.parse().map_err(|_| {
        bad(format!(
            "buffer '{buffer}' is not @FILE.npy, zeros: or a parameter index"
        ))
    })?;
    let b = earlier.get(k).and_then(Option::as_ref).ok_or_else(|| {
        bad(format!(
            "parameter {k} has no buffer (buffers of earlier parameters only)"
        ))
    })?;
    Ok(Buffer {
        addr: b.addr,
        descr: b.descr.clone(),
        shape: b.shape.clone(),
    })
}

/// A tensor map's `dtype=`: the descriptor's hardware element-type code
/// (`ori_host::tensor_map`'s table) and whether f32 is rounded to tf32.
fn tensor_map_dtype(dtype: &str) -> Result<(u32, bool), ExitCode> {
    Ok(match dtype {
        "u8" | "s8" | "e4m3" | "e5m2" => (0, false),
        "u16" => (1, false),
        "u32" => (2, false),
        "s32" => (3, false),
        "u64" => (4, false),
        "s64" => (5, false),
        "f16" => (6, false),
        "f32" => (7, false),
        "f64" => (9, false),
        "bf16" => (10, false),
        "tf32" => (7, true),
        other => return Err(usage(&format!("tensormap: unknown dtype '{other}'"))),
    })
}

/// `tensormap:buffer=B,dtype=T,dims=D0xD1..,box=B0xB1..[,strides=S1x..]
/// [,swizzle=none|32B|64B|128B][,fill=zero|nan][,elemstrides=E0x..][,l2=none|64B|128B|256B]`:
/// a tiled tensor map (dimensions innermost first, strides in bytes for
/// dimensions 1.., packed row-major by default) over buffer B
/// (`@FILE.npy`, `zeros:DTYPE:COUNT`, or an earlier parameter's buffer),
/// encoded as the driver's `cuTensorMapEncodeTiled` does.
fn tensor_map_arg(
    spec: &str,
    g: &mut GlobalMemory,
    earlier: &[Option<Buffer>],
) -> Result<([u8; 128], Buffer), ExitCode> {
    use ori::host::tensor_map::{elem_bytes, TensorMap};
    let bad = |m: String| usage(&format!("tensormap: {m}"));
    let mut kv = std::collections::HashMap::new();
    for item in spec.split(',') {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| bad(format!("'{item}' is not KEY=VALUE")))?;
        kv.insert(k, v);
    }
    let list = |key: &str| -> Result<Vec<u64>, ExitCode> {
        kv.get(key)
            .map(|v| {
                v.split('x')
                    .map(|n| {
                        n.parse::<u64>()
                            .map_err(|_| bad(format!("{key}: '{n}' is not a number")))
                    })
                    .collect()
            })
            .unwrap_or(Ok(Vec::new()))
    };
    let buffer = kv.get("buffer").ok_or_else(|| bad("no buffer=".into()))?;
    let buf = tensor_map_buffer(buffer, g, earlier)?;
    let dtype = kv.get("dtype").ok_or_else(|| bad("no dtype=".into()))?;
    let (elem_code, tf32) = tensor_map_dtype(dtype)?;
    let esz = elem_bytes(elem_code).unwrap_or(1) as u64;
    let dims = list("dims")?;
    let boxes = list("box")?;
    let rank = dims.len();
    if !(1..=5).contains(&rank) || boxes.len() != rank {
        return Err(bad(format!(
            "dims= and box= need 1 to 5 sizes each, the same number ({rank} and {})",
            boxes.len()
        )));
    }
    let mut strides = list("strides")?;
    if strides.is_empty() {
        let mut s = dims[0] * esz;
        for d in &dims[1..] {
            strides.push(s);
            s *= d;
        }
    }
    if strides.len() != rank - 1 || strides.iter().any(|s| s % 16 != 0) {
        return Err(bad(format!(
            "strides= needs {} byte strides, each a multiple of 16",
            rank - 1
        )));
    }
    let es = list("elemstrides")?;
    let swizzle = match kv.get("swizzle").copied().unwrap_or("none") {
        "none" => 0,
        "32B" => 1,
        "64B" => 2,
        "128B" => 3,
        other => return Err(bad(format!("swizzle '{other}' (none, 32B, 64B, 128B)"))),
    };
    let l2 = match kv.get("l2").copied().unwrap_or("128B") {
        "none" => 0,
        "64B" => 1,
        "128B" => 2,
        "256B" => 3,
        other => return Err(bad(format!("l2 '{other}' (none, 64B, 128B, 256B)"))),
    };
    let mut t = TensorMap {
        address: buf.addr,
        rank,
        elem_code,
        tf32,
        swizzle,
        oob_nan: kv.get("fill") == Some(&"nan"),
        l2,
        dims: [1; 5],
        strides: [0; 4],
        box_dims: [1; 5],
        elem_strides: [1; 5],
    };
    for k in 0..rank {
        t.dims[k] = dims[k];
        t.box_dims[k] = boxes[k] as u32;
        t.elem_strides[k] = es.get(k).copied().unwrap_or(1) as u32;
    }
    t.strides[..rank - 1].copy_from_slice(&strides);
    Ok((t.encode(), buf))
}

/// Each parameter's `--arg` value, by the parameter's index.
fn given_arguments<'a>(f: &Function, args: &'a [String]) -> Result<Vec<Option<&'a str>>, ExitCode> {
    let mut given: Vec<Option<&str>> = vec![None; f.params.len()];
    for a in args {
        let Some((key, value)) = a.split_once('=') else {
            return Err(usage(&format!("--arg takes PARAM=VALUE, not '{a}'")));
        };
        let Some(k) = param_index(f, key) else {
            let names: Vec<String> = f
                .params
                .iter()
                .enumerate()
                .map(|(k, p)| format!("{k}={}", p.name))
                .collect();
            return Err(usage(&format!(
                "'{}' has no parameter '{key}' (its parameters: {})",
                f.name,
                names.join(", ")
            )));
        };
        if given[k].replace(value).is_some() {
            return Err(usage(&format!("parameter {key} given twice")));
        }
    }
    Ok(given)
}

/// The parameter block: each `--arg` read, buffers allocated in `g`.
/// Parameter values, their buffers, and the bytes of tensor-map parameters.
type Parameters = (Vec<u64>, Vec<Option<Buffer>>, Vec<(usize, Vec<u8>)>);

fn parameters(f: &Function, args: &[String], g: &mut GlobalMemory) -> Result<Parameters, ExitCode> {
    let given = given_arguments(f, args)?;
    // Omitted trailing pointers (Triton's scratch pointers) are null.
    let last_given = given.iter().rposition(Option::is_some).map_or(0, |k| k + 1);
    let mut values = Vec::with_capacity(f.params.len());
    let mut buffers = Vec::with_capacity(f.params.len());
    let mut param_bytes = Vec::new();
    for (k, p) in f.params.iter().enumerate() {
        let ty = param_type(&p.ty);
        let pointer_sized = ori::host::memory::type_bytes(ty) == Some(8);
        let Some(value) = given[k] else {
            if k >= last_given && pointer_sized {
                values.push(0);
                buffers.push(None);
                continue;
            }
            return Err(usage(&format!(
                "parameter {k} ({}, .{ty}) has no --arg",
                p.name
            )));
        };
        if let Some(spec) = value.strip_prefix("tensormap:") {
            if !p.ty.contains("[128]") {
                return Err(usage(&format!(
                    "parameter {k} ({}) is not a 128-byte .b8 array: a tensor map cannot go there",
                    p.name
                )));
            }
            let (bytes, buf) = tensor_map_arg(spec, g, &buffers)?;
            param_bytes.push((k, bytes.to_vec()));
            values.push(0);
            buffers.push(Some(buf));
            continue;
        }
        let array = buffer_of(value)?;
        match array {
            Some(a) => {
                if !pointer_sized {
                    return Err(usage(&format!(
                        "parameter {k} ({}) is .{ty}: a buffer's address needs a 64-bit parameter",
                        p.name
                    )));
                }
                let addr = g.alloc(a.data);
                values.push(addr);
                buffers.push(Some(Buffer {
                    addr,
                    descr: a.descr,
                    shape: a.shape,
                }));
            }
            None => {
                values.push(
                    scalar(value, ty)
                        .map_err(|e| usage(&format!("parameter {k} ({}): {e}", p.name)))?,
                );
                buffers.push(None);
            }
        }
    }
    Ok((values, buffers, param_bytes))
}

/// The module to run: after ori's passes, or as written (`--no-passes`);
/// its diagnostics printed when it does not compile.
fn load_module(a: &RunArgs, src: &str) -> Result<ori::ir::Module, ExitCode> {
    let name = std::path::Path::new(&a.file)
        .file_name()
        .map_or(a.file.clone(), |n| n.to_string_lossy().into_owned());
    let (module, diags) = if a.no_passes {
        if name.ends_with(".ori") {
            return Err(usage(
                "--no-passes runs PTX input; an .ori file runs as its IR says, without it",
            ));
        }
        match ori::ptx_to_ir(&name, src) {
            Ok(m) => (Some(m), Vec::new()),
            Err(diags) => (None, diags),
        }
    } else {
        let opts = ori::Options {
            verify: true,
            ..ori::Options::default()
        };
        let c = ori::compile_source(&name, src, &opts);
        let failed = c.failed();
        (c.module.filter(|_| !failed), c.diags)
    };
    module.ok_or_else(|| {
        let source = (!name.ends_with(".ori")).then(|| ori::report::Source::new(&a.file, src));
        print_diagnostics(
            &diags,
            &a.file,
            source.as_ref(),
            MessageFormat::Human,
            ColorChoice::Auto,
        );
        ExitCode::from(1)
    })
}

/// `--mem ADDR=BUFFER`: buffers placed at the addresses a recorded
/// parameter block refers to.
fn place_buffers(mem: &[String], g: &mut GlobalMemory) -> Result<Vec<(u64, Buffer)>, ExitCode> {
    let mut placed: Vec<(u64, Buffer)> = Vec::new();
    for m in mem {
        let Some((addr, value)) = m.split_once('=') else {
            return Err(usage(&format!("--mem takes ADDR=BUFFER, not '{m}'")));
        };
        let Ok(base) = u64::from_str_radix(addr.trim_start_matches("0x"), 16) else {
            return Err(usage(&format!("--mem: '{addr}' is not a hex address")));
        };
        let array = match buffer_of(value) {
            Ok(Some(x)) => x,
            Ok(None) => {
                return Err(usage(&format!(
                    "--mem {addr}: '{value}' is not @FILE.npy or zeros:DTYPE:COUNT"
                )))
            }
            Err(code) => return Err(code),
        };
        if let Err(e) = g.alloc_at(base, array.data) {
            return Err(usage(&format!("--mem {addr}: {e}")));
        }
        placed.push((
            base,
            Buffer {
                addr: base,
                descr: array.descr,
                shape: array.shape,
            },
        ));
    }
    Ok(placed)
}

/// `--dump PARAM=FILE.npy` (or `ADDR=`): the buffer each dump writes back.
fn dump_targets<'b, 'd>(
    dumps_asked: &'d [String],
    f: &Function,
    placed: &'b [(u64, Buffer)],
    buffers: &'b [Option<Buffer>],
) -> Result<Vec<(&'b Buffer, &'d str)>, ExitCode> {
    let mut dumps = Vec::new();
    for d in dumps_asked {
        let Some((key, path)) = d.split_once('=') else {
            return Err(usage(&format!("--dump takes PARAM=FILE.npy, not '{d}'")));
        };
        let at = u64::from_str_radix(key.trim_start_matches("0x"), 16)
            .ok()
            .filter(|_| key.starts_with("0x"));
        let by_addr = at.and_then(|x| placed.iter().find(|(b, _)| *b == x).map(|(_, b)| b));
        match by_addr.or_else(|| param_index(f, key).and_then(|k| buffers[k].as_ref())) {
            Some(b) => dumps.push((b, path)),
            None => {
                return Err(usage(&format!(
                    "--dump {key}: no buffer was given for that parameter (pass it as @FILE.npy or zeros:DTYPE:COUNT)"
                )))
            }
        }
    }
    Ok(dumps)
}

/// `--block`, else the kernel's `.reqntid` (or `.maxntid`), else 128
/// threads; at most 1024.
fn block_shape(block: Option<&str>, src: &str, f: &Function) -> Result<[u32; 3], ExitCode> {
    let block = match block {
        Some(b) => dims("block", b).map_err(|e| usage(&e))?,
        None => declared_threads(src, &f.name).unwrap_or([128, 1, 1]),
    };
    if block.iter().map(|&d| u64::from(d)).product::<u64>() > 1024 {
        return Err(usage(&format!(
            "--block {},{},{}: a CTA has at most 1024 threads",
            block[0], block[1], block[2]
        )));
    }
    Ok(block)
}

/// Run the launch over the whole grid (a progress line after a second),
/// write the dumps back, and report.
fn execute(
    (module, f): (&Module, &Function),
    launch: &Launch,
    g: &GlobalMemory,
    dumps: &[(&Buffer, &str)],
    (file, format): (&str, run_report::Format),
) -> ExitCode {
    let grid = launch.grid;
    let start = Instant::now();
    let shown = std::sync::atomic::AtomicBool::new(false);
    let progress = |done: u64, total: u64| {
        if start.elapsed() > Duration::from_secs(1) && (done.is_multiple_of(16) || done == total) {
            eprint!("\rori run: CTA {done}/{total}");
            shown.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let result = ori::host::run_with_progress(module, &f.name, launch, g, &progress);
    if shown.into_inner() {
        eprintln!();
    }
    let stats = match result {
        Ok(s) => s,
        Err(e) => return run_report::error(format, file, &e),
    };
    for &(b, path) in dumps {
        let array = NpyArray {
            descr: b.descr.clone(),
            shape: b.shape.clone(),
            data: g.buffer(b.addr).unwrap_or_default(),
        };
        if let Err(e) = write_bytes_atomically(path, &array.to_bytes()) {
            return failed(&format!("cannot write '{path}': {e}"));
        }
    }
    let ran = run_report::Ran {
        kernel: &f.name,
        stats: &stats,
        ctas: u64::from(grid[0]) * u64::from(grid[1]) * u64::from(grid[2]),
        secs: start.elapsed().as_secs_f64(),
    };
    run_report::finished(format, file, ran)
}

/// `ori run`.
pub fn run(a: RunArgs) -> ExitCode {
    let grid = match dims("grid", &a.grid) {
        Ok(g) => g,
        Err(e) => return usage(&e),
    };
    let src = match read_input(&a.file) {
        Ok(s) => s,
        Err(e) => return failed(&e),
    };
    let module = match load_module(&a, &src) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let f = match pick_entry(&module, a.entry.as_deref()) {
        Ok(f) => f,
        Err(e) => return usage(&e),
    };
    let block = match block_shape(a.block.as_deref(), &src, f) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let cluster = match cluster_shape(a.cluster.as_deref(), &src, &f.name, grid) {
        Ok(c) => c,
        Err(e) => return usage(&e),
    };
    let mut g = GlobalMemory::new();
    let (params, mut buffers, param_bytes, param_block) = if let Some(file) = &a.params {
        if !a.args.is_empty() {
            return usage("--params gives the whole parameter block: no --arg with it");
        }
        let Some(path) = file.strip_prefix('@') else {
            return usage(&format!("--params takes @FILE, not '{file}'"));
        };
        match std::fs::read(path) {
            Ok(bytes) => (Vec::new(), Vec::new(), Vec::new(), Some(bytes)),
            Err(e) => return failed(&format!("cannot read '{path}': {e}")),
        }
    } else {
        match parameters(f, &a.args, &mut g) {
            Ok((p, b, pb)) => (p, b, pb, None),
            Err(code) => return code,
        }
    };
    // Buffers at fixed addresses, for a recorded parameter block.
    let placed = match place_buffers(&a.mem, &mut g) {
        Ok(p) => p,
        Err(code) => return code,
    };
    buffers.resize_with(f.params.len(), || None);
    let dumps = match dump_targets(&a.dumps, f, &placed, &buffers) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mut launch = Launch {
        params,
        // By default, what the static .shared variables leave of sm_90's 227 KiB.
        dynamic_shared: a.shared.unwrap_or_else(|| {
            let fixed: u64 = ori::host::memory::shared_vars(&module.globals)
                .iter()
                .filter_map(|v| v.size.map(|s| s + v.align))
                .sum();
            SM90_MAX_SHARED.saturating_sub(fixed)
        }),
        grid,
        block,
        cluster,
        param_bytes,
        param_block,
        check_proxy: !a.no_proxy_check,
        stop_on_hazard: a.stop_on_hazard,
        race_check: !a.no_race_check,
        schedule: a.schedule.with_seed(a.seed),
        ..Launch::default()
    };
    if let Some(n) = a.max_steps {
        launch.step_limit = n;
    }
    let format = run_report::Format::of(a.message_format);
    execute((&module, f), &launch, &g, &dumps, (&a.file, format))
}
