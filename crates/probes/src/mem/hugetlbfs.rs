//! Where hugetlbfs is mounted (for buffers on explicit huge pages).

/// Mount points of hugetlbfs file systems (from `/proc/mounts`).
pub fn hugetlbfs_mounts() -> Vec<std::path::PathBuf> {
    std::fs::read_to_string("/proc/mounts")
        .map(|s| parse_hugetlbfs_mounts(&s))
        .unwrap_or_default()
}

/// The hugetlbfs mount points listed in a `/proc/mounts` text.
pub fn parse_hugetlbfs_mounts(mounts: &str) -> Vec<std::path::PathBuf> {
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_dev, dir, fs) = (f.next()?, f.next()?, f.next()?);
            (fs == "hugetlbfs").then(|| std::path::PathBuf::from(dir.replace("\\040", " ")))
        })
        .collect()
}
