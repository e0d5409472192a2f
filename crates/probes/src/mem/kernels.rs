//! The streaming kernels: read, write and copy a range with the widest
//! vector loads and stores the CPU has (AVX-512, else AVX2, else a plain u64
//! loop), chosen once at run time.

use std::sync::OnceLock;

/// Bytes per operation: one cache line. A random op is one dependent load
/// (one line fetched); a sequential op is one line read, written or copied.
pub const LINE: usize = 64;
/// Granularity of the streaming kernels (one unrolled iteration: 4 × 64 B).
pub const GRAIN: usize = 256;

/// The vector width the streaming kernels use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Avx512,
    Avx2,
    Scalar,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Scalar => "scalar",
        }
    }
}

/// The best kernel this CPU runs (runtime detection, cached).
pub fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| {
        if std::env::var_os("HWCAL_MEM_ISA").is_some_and(|v| v == "scalar") {
            return Isa::Scalar;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Scalar
    })
}

// ---------------------------------------------------------------------------
// Streaming kernels. Callers guarantee: `p`/`src`/`dst` 64-byte aligned,
// `len` a multiple of GRAIN, the range inside a live mapping, and no other
// thread writing the range being read or touching the range being written.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// # Safety
    /// AVX-512F present; see the module contract above.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn read512(p: *const u8, len: usize) -> u64 {
        // Four independent accumulators: the xors are off the load path, so
        // the loop is bound by the loads alone.
        let (mut a0, mut a1, mut a2, mut a3) = (
            _mm512_setzero_si512(),
            _mm512_setzero_si512(),
            _mm512_setzero_si512(),
            _mm512_setzero_si512(),
        );
        let mut off = 0;
        while off < len {
            // SAFETY: off < len and len is a multiple of GRAIN (256), so the
            // 256 bytes at p + off lie inside the caller's range [p, p+len);
            // p is 64-byte aligned and off a multiple of 256, so each 64-byte
            // access is aligned.
            unsafe {
                let q = p.add(off);
                a0 = _mm512_xor_si512(a0, _mm512_load_si512(q as *const _));
                a1 = _mm512_xor_si512(a1, _mm512_load_si512(q.add(64) as *const _));
                a2 = _mm512_xor_si512(a2, _mm512_load_si512(q.add(128) as *const _));
                a3 = _mm512_xor_si512(a3, _mm512_load_si512(q.add(192) as *const _));
            }
            off += 256;
        }
        let x = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
        _mm512_reduce_add_epi64(x) as u64
    }

    /// # Safety
    /// AVX-512F present; see the module contract above.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn write512(p: *mut u8, len: usize, val: u64, nt: bool) {
        let v = _mm512_set1_epi64(val as i64);
        let mut off = 0;
        if nt {
            while off < len {
                // SAFETY: off < len and len is a multiple of GRAIN (256), so the
                // 256 bytes at p + off lie inside the caller's range [p, p+len);
                // p is 64-byte aligned and off a multiple of 256, so each 64-byte
                // access is aligned.
                unsafe {
                    let q = p.add(off);
                    _mm512_stream_si512(q as *mut _, v);
                    _mm512_stream_si512(q.add(64) as *mut _, v);
                    _mm512_stream_si512(q.add(128) as *mut _, v);
                    _mm512_stream_si512(q.add(192) as *mut _, v);
                }
                off += 256;
            }
            _mm_sfence();
        } else {
            while off < len {
                // SAFETY: off < len and len is a multiple of GRAIN (256), so the
                // 256 bytes at p + off lie inside the caller's range [p, p+len);
                // p is 64-byte aligned and off a multiple of 256, so each 64-byte
                // access is aligned.
                unsafe {
                    let q = p.add(off);
                    _mm512_store_si512(q as *mut _, v);
                    _mm512_store_si512(q.add(64) as *mut _, v);
                    _mm512_store_si512(q.add(128) as *mut _, v);
                    _mm512_store_si512(q.add(192) as *mut _, v);
                }
                off += 256;
            }
        }
    }

    /// # Safety
    /// AVX-512F present; see the module contract above.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn copy512(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
        let mut off = 0;
        while off < len {
            // SAFETY: off < len and len is a multiple of GRAIN (256), so the
            // 256 bytes at src + off and at dst + off lie inside the caller's
            // two ranges; both are 64-byte aligned and off a multiple of 256,
            // so each 64-byte access is aligned.
            unsafe {
                let s = src.add(off);
                let d = dst.add(off);
                let v0 = _mm512_load_si512(s as *const _);
                let v1 = _mm512_load_si512(s.add(64) as *const _);
                let v2 = _mm512_load_si512(s.add(128) as *const _);
                let v3 = _mm512_load_si512(s.add(192) as *const _);
                if nt {
                    _mm512_stream_si512(d as *mut _, v0);
                    _mm512_stream_si512(d.add(64) as *mut _, v1);
                    _mm512_stream_si512(d.add(128) as *mut _, v2);
                    _mm512_stream_si512(d.add(192) as *mut _, v3);
                } else {
                    _mm512_store_si512(d as *mut _, v0);
                    _mm512_store_si512(d.add(64) as *mut _, v1);
                    _mm512_store_si512(d.add(128) as *mut _, v2);
                    _mm512_store_si512(d.add(192) as *mut _, v3);
                }
            }
            off += 256;
        }
        if nt {
            _mm_sfence();
        }
    }

    /// # Safety
    /// AVX2 present; see the module contract above.
    #[target_feature(enable = "avx2")]
    pub unsafe fn read256(p: *const u8, len: usize) -> u64 {
        let (mut a0, mut a1, mut a2, mut a3) = (
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
        );
        let mut off = 0;
        while off < len {
            // SAFETY: off < len and len is a multiple of GRAIN (256), so the
            // eight 32-byte vectors at p + off lie inside the caller's range;
            // p is 64-byte aligned and off a multiple of 256, so each is
            // 32-byte aligned.
            unsafe {
                let q = p.add(off) as *const __m256i;
                a0 = _mm256_xor_si256(a0, _mm256_load_si256(q));
                a1 = _mm256_xor_si256(a1, _mm256_load_si256(q.add(1)));
                a2 = _mm256_xor_si256(a2, _mm256_load_si256(q.add(2)));
                a3 = _mm256_xor_si256(a3, _mm256_load_si256(q.add(3)));
                a0 = _mm256_xor_si256(a0, _mm256_load_si256(q.add(4)));
                a1 = _mm256_xor_si256(a1, _mm256_load_si256(q.add(5)));
                a2 = _mm256_xor_si256(a2, _mm256_load_si256(q.add(6)));
                a3 = _mm256_xor_si256(a3, _mm256_load_si256(q.add(7)));
            }
            off += 256;
        }
        let x = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
        let mut out = [0u64; 4];
        // SAFETY: `out` is 32 writable bytes on the stack; the unaligned
        // store has no alignment requirement.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, x) };
        out[0] ^ out[1] ^ out[2] ^ out[3]
    }

    /// # Safety
    /// AVX2 present; see the module contract above.
    #[target_feature(enable = "avx2")]
    pub unsafe fn write256(p: *mut u8, len: usize, val: u64, nt: bool) {
        let v = _mm256_set1_epi64x(val as i64);
        let mut off = 0;
        while off < len {
            // SAFETY: off < len and len is a multiple of GRAIN (256), so the
            // eight 32-byte vectors at p + off (k < 8) lie inside the
            // caller's range; p is 64-byte aligned and off a multiple of
            // 256, so each is 32-byte aligned.
            unsafe {
                let q = p.add(off) as *mut __m256i;
                for k in 0..8 {
                    if nt {
                        _mm256_stream_si256(q.add(k), v);
                    } else {
                        _mm256_store_si256(q.add(k), v);
                    }
                }
            }
            off += 256;
        }
        if nt {
            _mm_sfence();
        }
    }

    /// # Safety
    /// AVX2 present; see the module contract above.
    #[target_feature(enable = "avx2")]
    pub unsafe fn copy256(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
        let mut off = 0;
        while off < len {
            let mut v = [_mm256_setzero_si256(); 8];
            // SAFETY: off < len and len is a multiple of GRAIN (256), so the
            // eight 32-byte vectors at src + off and at dst + off (k < 8) lie
            // inside the caller's two ranges; both are 64-byte aligned and
            // off a multiple of 256, so each vector is 32-byte aligned.
            unsafe {
                let s = src.add(off) as *const __m256i;
                let d = dst.add(off) as *mut __m256i;
                for (k, x) in v.iter_mut().enumerate() {
                    *x = _mm256_load_si256(s.add(k));
                }
                for (k, x) in v.iter().enumerate() {
                    if nt {
                        _mm256_stream_si256(d.add(k), *x);
                    } else {
                        _mm256_store_si256(d.add(k), *x);
                    }
                }
            }
            off += 256;
        }
        if nt {
            _mm_sfence();
        }
    }
}

/// # Safety
/// See the module contract above (alignment, length, live range, no race).
unsafe fn read_scalar(p: *const u8, len: usize) -> u64 {
    let q = p as *const u64;
    let mut a = [0u64; 4];
    let mut i = 0;
    while i < len / 8 {
        // SAFETY: len is a multiple of GRAIN (256), so len / 8 is a multiple
        // of 4 and i + 3 < len / 8: the four words lie inside [p, p+len),
        // which is 64-byte (hence 8-byte) aligned and not written meanwhile.
        unsafe {
            a[0] ^= q.add(i).read();
            a[1] ^= q.add(i + 1).read();
            a[2] ^= q.add(i + 2).read();
            a[3] ^= q.add(i + 3).read();
        }
        i += 4;
    }
    a[0] ^ a[1] ^ a[2] ^ a[3]
}

/// # Safety
/// As [`read_scalar`].
unsafe fn write_scalar(p: *mut u8, len: usize, val: u64) {
    let q = p as *mut u64;
    for i in 0..len / 8 {
        // SAFETY: i < len / 8, so the word lies inside [p, p+len), which is
        // 8-byte aligned and touched by no other thread meanwhile.
        unsafe { q.add(i).write_volatile(val) };
    }
}

/// Read `len` bytes at `p`; returns a value derived from every byte so the
/// loads cannot be dropped.
///
/// # Safety
/// `isa` is [`isa()`] or [`Isa::Scalar`] (a vector kernel runs only where
/// the CPU has it); `p` 64-byte aligned, `len` a multiple of [`GRAIN`],
/// `[p, p+len)` inside a live mapping that no other thread writes meanwhile.
#[inline]
pub(super) unsafe fn read_kernel(isa: Isa, p: *const u8, len: usize) -> u64 {
    match isa {
        // SAFETY: `isa()` returns Avx512 only where the CPU has AVX-512F;
        // the range contract is this function's own.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { x86::read512(p, len) },
        // SAFETY: `isa()` returns Avx2 only where the CPU has AVX2; the
        // range contract is this function's own.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { x86::read256(p, len) },
        // SAFETY: the range contract is this function's own.
        _ => unsafe { read_scalar(p, len) },
    }
}

/// Fill `len` bytes at `p` with `val`.
///
/// # Safety
/// As [`read_kernel`], and no other thread reads or writes the range.
#[inline]
pub(super) unsafe fn write_kernel(isa: Isa, p: *mut u8, len: usize, val: u64, nt: bool) {
    // Non-temporal stores exist only in the x86 SIMD kernels.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = nt;
    match isa {
        // SAFETY: `isa()` returns Avx512 only where the CPU has AVX-512F;
        // the range contract is this function's own.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { x86::write512(p, len, val, nt) },
        // SAFETY: `isa()` returns Avx2 only where the CPU has AVX2; the
        // range contract is this function's own.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { x86::write256(p, len, val, nt) },
        // SAFETY: the range contract is this function's own.
        _ => unsafe { write_scalar(p, len, val) },
    }
}

/// Copy `len` bytes from `src` to `dst` (ranges must not overlap).
///
/// # Safety
/// As [`read_kernel`] for `src` and [`write_kernel`] for `dst`.
#[inline]
pub(super) unsafe fn copy_kernel(isa: Isa, src: *const u8, dst: *mut u8, len: usize, nt: bool) {
    // Non-temporal stores exist only in the x86 SIMD kernels.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = nt;
    match isa {
        // SAFETY: `isa()` returns Avx512 only where the CPU has AVX-512F;
        // the range contract is this function's own.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { x86::copy512(src, dst, len, nt) },
        // SAFETY: `isa()` returns Avx2 only where the CPU has AVX2; the
        // range contract is this function's own.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { x86::copy256(src, dst, len, nt) },
        // SAFETY: both ranges are `len` bytes inside live mappings and do
        // not overlap (this function's contract).
        _ => unsafe { std::ptr::copy_nonoverlapping(src, dst, len) },
    }
}
