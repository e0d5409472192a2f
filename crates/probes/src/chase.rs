//! Pointer chasing: the dependent-load kernel behind every latency figure
//! (The Calibrator, lmbench `lat_mem_rd`, multichase).
//!
//! Each slot of a buffer holds the address of the next slot to visit, so
//! every load's address is the previous load's value: loads cannot overlap
//! and time per load is the load-to-use latency of wherever the slot lives.
//! The visiting order is one random cycle (Sattolo's algorithm), which
//! defeats the stride and adjacent-line prefetchers that make sequential or
//! strided walks (Calibrator, `lat_mem_rd`) report 2–3 ns at every size.

use crate::buffer::Buffer;
use hwcal_stats::SplitMix64;

/// A random cyclic permutation of 0..n (Sattolo): following `next[i]` from
/// any element visits all n elements before returning.
pub fn sattolo(n: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.index(i);
        p.swap(i, j);
    }
    // p is now a random order; turn it into a successor table whose single
    // cycle follows that order.
    let mut next = vec![0; n];
    for k in 0..n {
        next[p[k]] = p[(k + 1) % n];
    }
    next
}

/// Link the slots at byte offsets `order[0] → order[1] → … → order[0]` in
/// `buf` (each slot receives the absolute address of the next). Returns the
/// address of the first slot.
///
/// Offsets must be 8-byte aligned and leave room for a `usize` inside the
/// buffer; violations are reported as an error, not undefined behaviour.
pub fn link(buf: &Buffer, order: &[usize]) -> Result<usize, crate::error::ProbeError> {
    if order.is_empty() {
        return Err(crate::error::ProbeError::InvalidInput("empty chase".into()));
    }
    let base = buf.as_ptr() as usize;
    for &o in order {
        if o % 8 != 0 || o + 8 > buf.len() {
            return Err(crate::error::ProbeError::InvalidInput(format!(
                "slot offset {o} outside buffer"
            )));
        }
    }
    for (k, &o) in order.iter().enumerate() {
        let next = base + order[(k + 1) % order.len()];
        // SAFETY: o is 8-byte aligned and o + 8 <= len (checked above), so
        // the write stays inside the live mapping owned by `buf`.
        unsafe { ((base + o) as *mut usize).write(next) };
    }
    Ok(base + order[0])
}

/// One random cycle over `footprint / stride` slots spaced `stride` bytes
/// apart (slot k at offset k*stride + `offset`). Returns the start address.
pub fn random_cycle(
    buf: &Buffer,
    footprint: usize,
    stride: usize,
    offset: usize,
    rng: &mut SplitMix64,
) -> Result<usize, crate::error::ProbeError> {
    if stride < 8 || footprint < stride || footprint > buf.len() {
        return Err(crate::error::ProbeError::InvalidInput(format!(
            "bad chase geometry: footprint {footprint}, stride {stride}, buffer {}",
            buf.len()
        )));
    }
    let n = footprint / stride;
    let next = sattolo(n, rng);
    let mut order = Vec::with_capacity(n);
    let mut i = 0;
    for _ in 0..n {
        order.push(i * stride + offset);
        i = next[i];
    }
    link(buf, &order)
}

/// Follow the chain for `loads` dependent loads (rounded up to a multiple of
/// 16: the loop body is 16 loads, so the loop branch is ~free). Returns where
/// the chase ended (feed it back in to continue the walk).
///
/// # Safety
/// `start` must be a slot of a chain built by [`link`]/[`random_cycle`] on a
/// buffer that outlives the call: the kernel dereferences whatever address
/// it is given and then whatever address that slot holds.
#[inline(never)]
pub unsafe fn chase(start: usize, loads: u64) -> usize {
    let iters = loads.div_ceil(16).max(1);
    let mut p = start;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `p` points into a chain built by `link`, whose every slot holds
    // the address of another slot in the same live buffer; the loop only
    // loads from those addresses. iters >= 1 so the loop ends.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 16",
            "mov {p}, qword ptr [{p}]",
            ".endr",
            "dec {n}",
            "jnz 2b",
            p = inout(reg) p,
            n = inout(reg) iters => _,
            options(nostack, readonly)
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `p` points into a chain built by `link`, whose every slot holds
    // the address of another slot in the same live buffer (the caller's
    // contract); `ldr` only loads from those 8-byte aligned slots, and
    // iters >= 1 so `subs`/`b.ne` end the loop.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 16",
            "ldr {p}, [{p}]",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            p = inout(reg) p,
            n = inout(reg) iters => _,
            options(nostack, readonly)
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..iters * 16 {
        // SAFETY: `p` is a slot of a chain built by `link` on a live buffer
        // (the caller's contract), aligned and holding the next slot's address.
        p = unsafe { (p as *const usize).read_volatile() };
    }
    p
}

/// Like [`chase`] but with `gap` dependent single-cycle adds between loads:
/// the next address only exists after the adds, so each miss starts from an
/// idle memory system (the Calibrator's "miss latency" as opposed to
/// back-to-back "replace time"). Subtract `gap` cycles per load afterwards.
///
/// # Safety
/// As for [`chase`].
#[inline(never)]
pub unsafe fn chase_with_gap(start: usize, loads: u64, gap: u32) -> usize {
    if gap == 0 {
        // SAFETY: the caller's contract is the same as `chase`'s.
        return unsafe { chase(start, loads) };
    }
    let mut p = start;
    let zero: usize = 0;
    #[cfg(target_arch = "x86_64")]
    for _ in 0..loads {
        // SAFETY: `p` is a chain slot address (see `chase`); adding a
        // register that holds zero leaves it unchanged but makes the next
        // load wait for `gap` cycles of dependent adds.
        unsafe {
            core::arch::asm!(
                "mov {p}, qword ptr [{p}]",
                "mov {g:e}, {gap:e}",
                "3:",
                "add {p}, {z}",
                "dec {g:e}",
                "jnz 3b",
                p = inout(reg) p,
                z = in(reg) zero,
                gap = in(reg) gap,
                g = out(reg) _,
                options(nostack, readonly)
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for _ in 0..loads {
        // SAFETY: `p` is a slot of a chain built by `link` on a live buffer
        // (the caller's contract), aligned and holding the next slot's address.
        p = unsafe { (p as *const usize).read_volatile() };
        for _ in 0..gap {
            p = std::hint::black_box(p.wrapping_add(zero));
        }
    }
    p
}

/// Follow `K` independent chains at once (`loads` loads each): the loads of
/// different chains can be in flight together, so time per load shows the
/// memory-level parallelism (lmbench `par_mem`, multichase `-p`).
///
/// # Safety
/// Every start must satisfy [`chase`]'s contract.
#[inline(never)]
pub unsafe fn chase_parallel<const K: usize>(starts: [usize; K], loads: u64) -> [usize; K] {
    let mut p = starts;
    for _ in 0..loads {
        for q in p.iter_mut() {
            // SAFETY: every start comes from `link` on a live buffer (caller
            // contract, as for `chase`), so each load reads a chain slot.
            *q = unsafe { (*q as *const usize).read_volatile() };
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Backing;

    #[test]
    fn sattolo_is_one_cycle() {
        let mut rng = SplitMix64::new(7);
        for n in [1, 2, 3, 10, 1000] {
            let next = sattolo(n, &mut rng);
            let mut seen = vec![false; n];
            let mut i = 0;
            for _ in 0..n {
                assert!(!seen[i]);
                seen[i] = true;
                i = next[i];
            }
            assert_eq!(i, 0, "back at the start after n steps");
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn chase_walks_the_whole_cycle() {
        let buf = Buffer::new(64 * 1024, Backing::Small).unwrap();
        let mut rng = SplitMix64::new(1);
        let start = random_cycle(&buf, 64 * 1024, 64, 0, &mut rng).unwrap();
        // 1024 slots: after 1024 loads (a multiple of 16) we are back.
        // SAFETY: `start` comes from `random_cycle` on `buf`, alive here.
        unsafe {
            assert_eq!(chase(start, 1024), start);
            assert_ne!(chase(start, 16), start);
            assert_eq!(chase_with_gap(start, 1024, 5), start);
            let [a, b] = chase_parallel([start, start], 1024);
            assert_eq!((a, b), (start, start));
        }
        assert!(random_cycle(&buf, 64 * 1024, 4, 0, &mut rng).is_err());
        assert!(link(&buf, &[3]).is_err());
    }
}
