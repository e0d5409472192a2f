//! NUMA placement without libnuma: the `set_mempolicy`, `mbind` and
//! `get_mempolicy` system calls called directly, and the node topology read
//! from sysfs.
//!
//! micbench-mem binds each thread's memory with libnuma (`-a TID:cCPU:NODE`);
//! the kernel interface underneath is three system calls, so hwcal calls
//! them itself. A thread's *policy* (`set_mempolicy(MPOL_BIND)`) decides the
//! node of every page it faults in afterwards, which is how a buffer is
//! placed before it is first touched; `mbind(MPOL_MF_MOVE)` migrates pages
//! that are already in place; `get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)`
//! reports where a page really is, so placement is verified, not assumed.

use crate::error::ProbeError;
use crate::sysinfo::parse_cpu_list;
use std::path::Path;

const MPOL_DEFAULT: libc::c_int = 0;
const MPOL_BIND: libc::c_int = 2;
const MPOL_F_NODE: libc::c_ulong = 1;
const MPOL_F_ADDR: libc::c_ulong = 2;
const MPOL_MF_STRICT: libc::c_uint = 1;
const MPOL_MF_MOVE: libc::c_uint = 2;

/// Words in the node masks passed to the kernel (1024 nodes).
const MASK_WORDS: usize = 16;

/// One NUMA node as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: u32,
    pub cpus: Vec<usize>,
    /// Whether the node has memory (`has_memory` list); CPU-only nodes exist.
    pub has_memory: bool,
}

/// The machine's NUMA nodes. A kernel without NUMA support has no
/// `/sys/devices/system/node`; it is then one node holding every CPU.
pub fn nodes() -> Vec<Node> {
    let root = Path::new("/sys/devices/system/node");
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let with_mem = read(&root.join("has_memory")).map(|s| parse_cpu_list(&s));
    let mut out = Vec::new();
    if let Ok(dir) = std::fs::read_dir(root) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(id) = name.strip_prefix("node").and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let cpus = read(&e.path().join("cpulist"))
                .map(|s| parse_cpu_list(&s))
                .unwrap_or_default();
            let has_memory = match &with_mem {
                Some(m) => m.contains(&(id as usize)),
                None => true,
            };
            out.push(Node { id, cpus, has_memory });
        }
    }
    if out.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        out.push(Node {
            id: 0,
            cpus: (0..n).collect(),
            has_memory: true,
        });
    }
    out.sort_by_key(|n| n.id);
    out
}

fn mask_for(node: u32) -> Result<[libc::c_ulong; MASK_WORDS], ProbeError> {
    let bits = libc::c_ulong::BITS as usize;
    if node as usize >= MASK_WORDS * bits {
        return Err(ProbeError::InvalidInput(format!("NUMA node {node} out of range")));
    }
    let mut m = [0 as libc::c_ulong; MASK_WORDS];
    m[node as usize / bits] |= 1 << (node as usize % bits);
    Ok(m)
}

/// `maxnode` argument: the kernel drops the last bit it is told about
/// (libnuma passes the mask size plus one for the same reason).
const MAXNODE: libc::c_ulong = (MASK_WORDS * libc::c_ulong::BITS as usize + 1) as libc::c_ulong;

/// Bind every page the calling thread faults in from now on to `node`
/// (`set_mempolicy(MPOL_BIND)`). Undo with [`reset_thread_policy`].
pub fn bind_thread_memory(node: u32) -> Result<(), ProbeError> {
    let mask = mask_for(node)?;
    // SAFETY: set_mempolicy reads `MAXNODE - 1` bits from `mask`, which is a
    // live array of exactly that many bits; it affects only this thread's
    // future allocations.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, MPOL_BIND, mask.as_ptr(), MAXNODE) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => ProbeError::Unsupported("NUMA memory policy (set_mempolicy)".into()),
            _ => ProbeError::InvalidInput(format!("cannot bind memory to NUMA node {node}: {e}")),
        });
    }
    Ok(())
}

/// Back to the default policy (allocate on the node of the CPU that faults).
pub fn reset_thread_policy() {
    // SAFETY: MPOL_DEFAULT with a null mask and maxnode 0 is the documented
    // way to drop a thread policy; no memory is read.
    unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            MPOL_DEFAULT,
            std::ptr::null::<libc::c_ulong>(),
            0 as libc::c_ulong,
        );
    }
}

/// Move the pages of `[ptr, ptr+len)` to `node` and bind the range there
/// (`mbind(MPOL_BIND, MPOL_MF_MOVE | MPOL_MF_STRICT)`). `ptr` must be page
/// aligned and the range mapped by the caller's buffer.
pub fn mbind_range(ptr: *mut u8, len: usize, node: u32) -> Result<(), ProbeError> {
    if !(ptr as usize).is_multiple_of(crate::pages::base_page()) {
        return Err(ProbeError::InvalidInput("mbind: range not page aligned".into()));
    }
    let mask = mask_for(node)?;
    // SAFETY: the caller passes a range inside a live mapping it owns; mbind
    // only changes that range's policy and migrates its pages (contents are
    // preserved). `mask` is valid for MAXNODE - 1 bits.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            ptr as *mut libc::c_void,
            len as libc::c_ulong,
            MPOL_BIND,
            mask.as_ptr(),
            MAXNODE,
            MPOL_MF_MOVE | MPOL_MF_STRICT,
        )
    };
    if r != 0 {
        return Err(ProbeError::InvalidInput(format!(
            "cannot move memory to NUMA node {node}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// The node holding the page at `addr` (which must be mapped and touched),
/// from `get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)`.
pub fn node_of(addr: *const u8) -> Option<u32> {
    let mut node: libc::c_int = -1;
    // SAFETY: with MPOL_F_NODE | MPOL_F_ADDR the kernel writes one int (the
    // node of the page at `addr`) to `node`; no mask is passed. An unmapped
    // address yields EFAULT, not a fault in this process.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut libc::c_int,
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            addr as *mut libc::c_void,
            MPOL_F_NODE | MPOL_F_ADDR,
        )
    };
    (r == 0 && node >= 0).then_some(node as u32)
}

/// Fraction of `samples` pages, spread evenly over the buffer, that live on
/// `node`. `None` when the kernel cannot tell (no NUMA support).
pub fn fraction_on_node(buf: &crate::buffer::Buffer, node: u32, samples: usize) -> Option<f64> {
    let base = buf.pages().base;
    let pages = buf.len() / base;
    let samples = samples.clamp(1, pages.max(1));
    let mut on = 0usize;
    for k in 0..samples {
        let off = (k * pages / samples) * base;
        // SAFETY: off < buf.len(), so the address lies inside the buffer.
        let a = unsafe { buf.as_ptr().add(off) };
        match node_of(a) {
            Some(n) if n == node => on += 1,
            Some(_) => {}
            None => return None,
        }
    }
    Some(on as f64 / samples as f64)
}

/// One cell of a NUMA latency matrix: a chasing thread on `cpu` (of
/// `cpu_node`) reading memory bound to `mem_node`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixCell {
    pub cpu_node: u32,
    pub cpu: usize,
    pub mem_node: u32,
}

/// Plan a latency matrix: for every node with CPUs we may run on, one CPU of
/// it (the highest allowed, as hwcal pins by default) against every node
/// with memory. Rows follow node order; nodes without usable CPUs give no
/// row, memory-less nodes no column.
pub fn plan_matrix(nodes: &[Node], allowed_cpus: &[usize]) -> Vec<MatrixCell> {
    let mem_nodes: Vec<u32> = nodes.iter().filter(|n| n.has_memory).map(|n| n.id).collect();
    let mut cells = Vec::new();
    for n in nodes {
        let Some(&cpu) = n.cpus.iter().rev().find(|c| allowed_cpus.contains(c)) else {
            continue;
        };
        for &m in &mem_nodes {
            cells.push(MatrixCell {
                cpu_node: n.id,
                cpu,
                mem_node: m,
            });
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u32, cpus: &[usize], mem: bool) -> Node {
        Node {
            id,
            cpus: cpus.to_vec(),
            has_memory: mem,
        }
    }

    #[test]
    fn matrix_plan_covers_cpu_nodes_times_memory_nodes() {
        let nodes = [
            node(0, &[0, 1], true),
            node(1, &[2, 3], true),
            node(2, &[], true),      // memory only (CXL / HBM)
            node(3, &[4, 5], false), // CPUs only
        ];
        let cells = plan_matrix(&nodes, &[0, 1, 2, 3, 4, 5]);
        // CPU nodes 0, 1, 3 × memory nodes 0, 1, 2.
        assert_eq!(cells.len(), 9);
        assert_eq!(
            cells[0],
            MatrixCell {
                cpu_node: 0,
                cpu: 1,
                mem_node: 0
            }
        );
        assert!(cells.iter().all(|c| c.mem_node != 3));
        assert!(cells.iter().all(|c| c.cpu_node != 2));
        // A node whose CPUs we may not use gives no row.
        let cells = plan_matrix(&nodes, &[0, 4]);
        assert_eq!(cells.len(), 6);
        assert!(cells.iter().all(|c| c.cpu == 0 || c.cpu == 4));
        // One node: a single local cell.
        assert_eq!(plan_matrix(&[node(0, &[0, 1], true)], &[0, 1]).len(), 1);
    }

    #[test]
    fn topology_and_policy_on_this_machine() {
        let ns = nodes();
        assert!(!ns.is_empty());
        assert!(mask_for(5000).is_err());
        let mem_node = ns.iter().find(|n| n.has_memory).map(|n| n.id).unwrap_or(0);
        // Binding may be unsupported (kernel without NUMA); then skip.
        if bind_thread_memory(mem_node).is_ok() {
            let b = crate::buffer::Buffer::new(1 << 20, crate::buffer::Backing::Small).unwrap();
            reset_thread_policy();
            if let Some(f) = fraction_on_node(&b, mem_node, 16) {
                assert!(f > 0.99, "{f}");
            }
            mbind_range(b.as_ptr(), b.len(), mem_node).unwrap();
        }
        let bad = ns.iter().map(|n| n.id).max().unwrap() + 1;
        assert!(bind_thread_memory(bad).is_err());
        reset_thread_policy();
    }
}
