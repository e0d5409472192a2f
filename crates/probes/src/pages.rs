//! Page sizes: read from the system, never assumed.
//!
//! x86_64 has 4 KiB base pages and 2 MiB huge pages (the PMD level). Arm
//! kernels are built with a 4, 16 or 64 KiB granule (64 KiB on many server
//! distributions): the PMD-level huge page is then 2 MiB, 32 MiB or
//! 512 MiB, and hugetlbfs offers further sizes made with the contiguous bit
//! (64 KiB and 32 MiB on 4 KiB; 2 MiB and 16 GiB on 64 KiB). A probe that
//! hard-codes 4096 touches one page in sixteen on a 64 KiB kernel and
//! reports TLB entries sixteen times too many. So every probe takes its
//! page sizes as a [`PageSizes`] value (the system's by default, injected in
//! tests).

use std::sync::OnceLock;

/// The base page and the huge page (the one transparent huge pages use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSizes {
    /// Base page, bytes (`sysconf(_SC_PAGESIZE)`).
    pub base: usize,
    /// Huge page of the PMD level, bytes: what THP maps
    /// (`/sys/kernel/mm/transparent_hugepage/hpage_pmd_size`).
    pub huge: usize,
}

impl PageSizes {
    /// The sizes for a base page of `base` bytes, with the PMD-level huge
    /// page that granule implies: one page-table page of 8-byte entries maps
    /// `base / 8` base pages (4 KiB → 2 MiB, 16 KiB → 32 MiB, 64 KiB →
    /// 512 MiB).
    pub fn for_base(base: usize) -> PageSizes {
        PageSizes {
            base,
            huge: base * (base / 8),
        }
    }

    /// This system's sizes (read once).
    pub fn system() -> PageSizes {
        static P: OnceLock<PageSizes> = OnceLock::new();
        *P.get_or_init(|| {
            let base = sysconf_page_size();
            let huge = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .filter(|&h| h > base && h.is_power_of_two());
            PageSizes {
                base,
                huge: huge.unwrap_or_else(|| PageSizes::for_base(base).huge),
            }
        })
    }

    /// Base pages per huge page.
    pub fn per_huge(&self) -> usize {
        self.huge / self.base
    }
}

/// The base page size, bytes (4096 if sysconf fails, which Linux never does).
fn sysconf_page_size() -> usize {
    // SAFETY: sysconf only reads a system constant.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 && (v as usize).is_power_of_two() {
        v as usize
    } else {
        4096
    }
}

/// The system's base page size, bytes.
pub fn base_page() -> usize {
    PageSizes::system().base
}

/// The system's PMD-level (THP) huge page size, bytes.
pub fn huge_page() -> usize {
    PageSizes::system().huge
}

/// Parse the names of `/sys/kernel/mm/hugepages/` (`hugepages-2048kB`,
/// `hugepages-1048576kB`) into sizes in bytes, ascending.
pub fn parse_hugepage_dirs<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<u64> {
    let mut v: Vec<u64> = names
        .into_iter()
        .filter_map(|n| {
            n.strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse::<u64>()
                .ok()
        })
        .map(|kb| kb * 1024)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The huge page sizes the kernel offers (hugetlbfs), ascending; empty
/// without hugetlb support.
pub fn hugepage_sizes() -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir("/sys/kernel/mm/hugepages") else {
        return Vec::new();
    };
    let names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    parse_hugepage_dirs(names.iter().map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn granules_and_their_huge_pages() {
        assert_eq!(PageSizes::for_base(4 << 10).huge, 2 << 20);
        assert_eq!(PageSizes::for_base(16 << 10).huge, 32 << 20);
        assert_eq!(PageSizes::for_base(64 << 10).huge, 512 << 20);
        assert_eq!(PageSizes::for_base(64 << 10).per_huge(), 8192);
        let s = PageSizes::system();
        assert!(s.base >= 4096 && s.base.is_power_of_two() && s.huge > s.base);
        assert_eq!(
            parse_hugepage_dirs(["hugepages-1048576kB", "hugepages-2048kB", "other"]),
            vec![2 << 20, 1 << 30]
        );
    }
}
