//! Measurement buffers: page-aligned anonymous memory, backed by small pages
//! or by huge pages (THP via `madvise(MADV_HUGEPAGE)`, or a hugetlbfs file),
//! with the backing verified in `/proc/self/smaps` rather than assumed.
//!
//! Why huge pages: a random chase over a buffer larger than the STLB reach
//! (2048 × 4 KiB = 8 MiB on Golden Cove) pays a page walk on most loads, so a
//! 4 KiB-backed cache curve mixes TLB misses into cache latencies (the DRAM
//! plateau then rises with size, by the page walks' own cache misses, where
//! with 2 MiB pages it is flat at the DRAM latency).

use crate::error::ProbeError;
use crate::pages::PageSizes;
use std::fs;
use std::path::{Path, PathBuf};

/// How to back a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backing {
    /// Base pages (4 KiB on x86), THP explicitly disabled for the range.
    Small,
    /// Transparent huge pages requested with `madvise`.
    Thp,
    /// A file on a hugetlbfs mount (reserved huge pages).
    HugetlbFile(PathBuf),
}

/// An owned, page-aligned, zero-filled memory region, unmapped on drop.
#[derive(Debug)]
pub struct Buffer {
    map: *mut u8,
    map_len: usize,
    ptr: *mut u8,
    len: usize,
    backing: Backing,
    file: Option<PathBuf>,
    /// The page sizes the buffer was laid out with.
    pages: PageSizes,
}

// SAFETY: the buffer owns its mapping exclusively; moving it between threads
// moves that ownership. Shared access goes through `&Buffer` and raw
// pointers whose use the kernels document.
unsafe impl Send for Buffer {}
// SAFETY: `&Buffer` only exposes the base pointer and length; concurrent
// readers of the memory are the kernels' documented use.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Map `len` bytes (rounded up to a whole page of the backing) and touch
    /// every page so the backing is in place before any timing.
    pub fn new(len: usize, backing: Backing) -> Result<Buffer, ProbeError> {
        Self::with_pages(len, backing, PageSizes::system())
    }

    /// [`Buffer::new`] laid out for the page sizes `pages` (the system's,
    /// or others injected by tests of the page-size logic).
    pub fn with_pages(len: usize, backing: Backing, pages: PageSizes) -> Result<Buffer, ProbeError> {
        if len == 0 {
            return Err(ProbeError::InvalidInput("buffer size must be > 0".into()));
        }
        let page = match backing {
            Backing::Small => pages.base,
            _ => pages.huge,
        };
        let len = len.div_ceil(page) * page;
        let mut b = match &backing {
            Backing::HugetlbFile(dir) => Self::map_hugetlb(len, dir, pages)?,
            _ => Self::map_anon(len, &backing, pages)?,
        };
        b.backing = backing;
        // Touch every page (writes, so each page is really allocated and not
        // the shared zero page).
        for off in (0..b.len).step_by(pages.base) {
            b.touch(off);
        }
        Ok(b)
    }

    /// A base-page buffer whose pages are faulted in a random order, so
    /// that neighbouring virtual pages get frames that are not neighbours.
    ///
    /// Why: the kernel hands out frames for successive page faults mostly
    /// in physical order, so a buffer touched front to back is largely
    /// physically contiguous. AMD's L2 DTLB (PTE coalescing, Zen 2 on) and
    /// Arm's contiguous-bit TLBs merge aligned runs of contiguous 4 KiB
    /// translations into one entry, and a TLB probe over such a buffer
    /// would read several times the real number of entries. Faulting in a
    /// shuffled order breaks the runs. On Arm the contiguous bit only
    /// applies where the kernel finds an aligned run of 16 (4 KiB granule)
    /// or 32 (64 KiB) physically contiguous pages, which a shuffled fault
    /// order does not leave.
    pub fn new_scattered(len: usize, seed: u64) -> Result<Buffer, ProbeError> {
        Self::new_scattered_with(len, seed, PageSizes::system())
    }

    /// [`Buffer::new_scattered`] for the page sizes `pages`.
    pub fn new_scattered_with(len: usize, seed: u64, pages: PageSizes) -> Result<Buffer, ProbeError> {
        if len == 0 {
            return Err(ProbeError::InvalidInput("buffer size must be > 0".into()));
        }
        let len = len.div_ceil(pages.base) * pages.base;
        let b = Self::map_anon(len, &Backing::Small, pages)?;
        let mut rng = hwcal_stats::SplitMix64::new(seed);
        let mut order: Vec<usize> = (0..len / pages.base).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.index(i + 1));
        }
        for p in order {
            b.touch(p * pages.base);
        }
        Ok(b)
    }

    /// Write one byte at `off` (< len) so its page is really allocated.
    fn touch(&self, off: usize) {
        debug_assert!(off < self.len);
        if off < self.len {
            // SAFETY: off < len and [ptr, ptr+len) is a live writable mapping
            // owned by this buffer.
            unsafe { self.ptr.add(off).write_volatile(0) };
        }
    }

    fn map_anon(len: usize, backing: &Backing, pages: PageSizes) -> Result<Buffer, ProbeError> {
        // Over-allocate by one huge page so the usable range can start on a
        // huge-page boundary (THP only backs aligned extents).
        let map_len = len + pages.huge;
        // SAFETY: an anonymous private mapping with no address hint; the
        // result is checked against MAP_FAILED before use.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(ProbeError::Alloc(
                len,
                std::io::Error::last_os_error().to_string(),
            ));
        }
        let map = map as *mut u8;
        let aligned = (map as usize).div_ceil(pages.huge) * pages.huge;
        let ptr = aligned as *mut u8;
        let advice = match backing {
            Backing::Thp => libc::MADV_HUGEPAGE,
            _ => libc::MADV_NOHUGEPAGE,
        };
        // SAFETY: [ptr, ptr+len) lies inside the mapping just created.
        // madvise only changes paging policy; a failure (THP not compiled in)
        // is detected later by the smaps check.
        unsafe {
            libc::madvise(ptr as *mut libc::c_void, len, advice);
        }
        Ok(Buffer {
            map,
            map_len,
            ptr,
            len,
            backing: backing.clone(),
            file: None,
            pages,
        })
    }

    fn map_hugetlb(len: usize, dir: &Path, pages: PageSizes) -> Result<Buffer, ProbeError> {
        use std::os::unix::io::AsRawFd;
        let md =
            fs::metadata(dir).map_err(|e| ProbeError::InvalidInput(format!("{}: {e}", dir.display())))?;
        let path = if md.is_dir() {
            dir.join(format!("hwcal-{}", std::process::id()))
        } else {
            return Err(ProbeError::InvalidInput(format!(
                "{}: expected a directory on a hugetlbfs mount",
                dir.display()
            )));
        };
        let f = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| ProbeError::InvalidInput(format!("{}: {e}", path.display())))?;
        // SAFETY: a shared mapping of a file we just created and own; checked
        // against MAP_FAILED. The fd may be closed after mmap.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            let _ = fs::remove_file(&path);
            return Err(ProbeError::Alloc(
                len,
                format!(
                    "{e} (is {} on hugetlbfs with enough reserved pages?)",
                    dir.display()
                ),
            ));
        }
        Ok(Buffer {
            map: map as *mut u8,
            map_len: len,
            ptr: map as *mut u8,
            len,
            backing: Backing::HugetlbFile(dir.to_path_buf()),
            file: Some(path),
            pages,
        })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn backing(&self) -> &Backing {
        &self.backing
    }

    /// The page sizes the buffer was laid out with.
    pub fn pages(&self) -> PageSizes {
        self.pages
    }

    /// Fraction of the buffer the kernel actually backs with huge pages,
    /// read from `/proc/self/smaps` (AnonHugePages / hugetlb accounting).
    pub fn huge_fraction(&self) -> f64 {
        if matches!(self.backing, Backing::HugetlbFile(_)) {
            return 1.0;
        }
        let Ok(smaps) = fs::read_to_string("/proc/self/smaps") else {
            return 0.0;
        };
        let lo = self.ptr as usize;
        let hi = lo + self.len;
        let mut huge_kb = 0u64;
        let mut in_range = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((a, b)) = range.split_once('-') {
                    if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                        in_range = a < hi && b > lo;
                        continue;
                    }
                }
            }
            if in_range {
                if let Some(v) = line.strip_prefix("AnonHugePages:") {
                    huge_kb += v
                        .split_whitespace()
                        .next()
                        .and_then(|x| x.parse::<u64>().ok())
                        .unwrap_or(0);
                }
            }
        }
        (huge_kb as f64 * 1024.0 / self.len as f64).min(1.0)
    }

    /// Page size that backs (most of) the buffer, verified.
    pub fn effective_page_bytes(&self) -> usize {
        if self.huge_fraction() >= 0.9 {
            self.pages.huge
        } else {
            self.pages.base
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping created in new(); no
        // references into it outlive the Buffer.
        unsafe {
            libc::munmap(self.map as *mut libc::c_void, self.map_len);
        }
        if let Some(f) = &self.file {
            let _ = fs::remove_file(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_thp_buffers() {
        let p = PageSizes::system();
        let b = Buffer::new(3 * p.base + 1, Backing::Small).unwrap();
        assert_eq!(b.len(), 4 * p.base);
        assert_eq!(b.as_ptr() as usize % p.huge, 0);
        assert!(b.huge_fraction() < 0.5);
        let t = Buffer::new(8 << 20, Backing::Thp).unwrap();
        assert_eq!(t.len(), 8 << 20);
        let f = t.huge_fraction();
        assert!((0.0..=1.0).contains(&f));
        assert!(Buffer::new(0, Backing::Small).is_err());
        assert!(Buffer::new(4096, Backing::HugetlbFile("/nonexistent-dir".into())).is_err());
    }
}
