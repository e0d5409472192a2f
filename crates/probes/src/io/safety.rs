//! Safety of an I/O target, checked before `hwcal io` opens it (fio's rules):
//!
//! - nothing under `/proc`, `/sys` or `/dev` other than a block device, and
//!   nothing on a kernel pseudo filesystem (procfs, sysfs, devtmpfs, ...)
//!   wherever it is mounted;
//! - no write to a block device that is mounted, used as swap or held by
//!   another device (LVM, RAID, dm-crypt), nor to one whose partitions are,
//!   unless the caller explicitly allows it (fio's `allow_mounted_write`);
//! - no O_DIRECT on a filesystem that keeps files in memory (tmpfs, ramfs):
//!   there the "device" figure would be memory speed.
//!
//! The parsers and verdicts are pure functions over the text of
//! `/proc/self/mountinfo`, `/proc/swaps` and sysfs, so they are tested on
//! fixed inputs; [`check`] reads the live system.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why a target is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// A kernel pseudo file or a device that is not a block device.
    #[error("{0}")]
    Pseudo(String),
    /// A block device in use (mounted, swap, held).
    #[error("{0}")]
    InUse(String),
    /// O_DIRECT where it would measure memory, not a device.
    #[error("{0}")]
    NoDirect(String),
    /// Not a directory, regular file or block device (FIFO, socket, ...).
    #[error("{0}")]
    Kind(String),
    /// The path cannot be examined.
    #[error("{0}")]
    Unreadable(String),
}

/// What a checked target is, for the line hwcal prints before writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// A directory: a new test file is created in it.
    Directory,
    /// An existing regular file.
    File,
    /// A block device `major:minor`.
    BlockDevice { major: u32, minor: u32 },
}

/// A target that passed [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The path with symlinks resolved.
    pub canonical: PathBuf,
    pub kind: TargetKind,
    /// The filesystem type the target lives on, when known (`ext4`, `tmpfs`).
    pub fs: Option<&'static str>,
}

impl Target {
    /// One phrase naming the target: `block device /dev/loop3 (7:3)`.
    pub fn describe(&self) -> String {
        let fs = self.fs.map_or(String::new(), |f| format!(" on {f}"));
        match self.kind {
            TargetKind::Directory => format!("a new test file in directory {}{fs}", self.canonical.display()),
            TargetKind::File => format!("existing file {}{fs}", self.canonical.display()),
            TargetKind::BlockDevice { major, minor } => {
                format!("block device {} ({major}:{minor})", self.canonical.display())
            }
        }
    }
}

/// Filesystem magic numbers (`statfs.f_type`) hwcal knows by name.
const MAGICS: [(i64, &str, FsClass); 16] = [
    (0x9fa0, "proc", FsClass::Pseudo),
    (0x6265_6572, "sysfs", FsClass::Pseudo),
    (0x1cd1, "devpts", FsClass::Pseudo),
    (0x6462_6720, "debugfs", FsClass::Pseudo),
    (0x7472_6163, "tracefs", FsClass::Pseudo),
    (0x7363_6673, "securityfs", FsClass::Pseudo),
    (0x2762_0bbe, "cgroup", FsClass::Pseudo),
    (0x6367_7270, "cgroup2", FsClass::Pseudo),
    (0xcafe_4a11, "bpf", FsClass::Pseudo),
    (0x6e73_6673, "nsfs", FsClass::Pseudo),
    (0x4249_4e4d, "binfmt_misc", FsClass::Pseudo),
    (0x0102_1994, "tmpfs", FsClass::Memory),
    (0x8584_58f6, "ramfs", FsClass::Memory),
    (0xef53, "ext2/3/4", FsClass::Disk),
    (0x5846_5342, "xfs", FsClass::Disk),
    (0x9123_683e, "btrfs", FsClass::Disk),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FsClass {
    /// A kernel interface, not storage.
    Pseudo,
    /// Files kept in memory.
    Memory,
    Disk,
}

fn fs_by_magic(magic: i64) -> Option<(&'static str, FsClass)> {
    MAGICS
        .iter()
        .find(|(m, _, _)| *m == magic)
        .map(|&(_, n, c)| (n, c))
}

/// `statfs(2)` f_type of the filesystem holding `path`.
fn fs_magic(path: &Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a NUL-terminated path that outlives the call and `st`
    // is a properly sized, zero-initialised statfs that the kernel fills.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; statfs only writes into `st`.
    let r = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    #[allow(clippy::unnecessary_cast)]
    (r == 0).then_some(st.f_type as i64)
}

/// Whether a canonical path lies in a kernel tree (`/proc`, `/sys`, `/dev`);
/// the tree's name.
pub fn kernel_tree(canonical: &Path) -> Option<&'static str> {
    ["/proc", "/sys", "/dev"]
        .into_iter()
        .find(|t| canonical.starts_with(t))
}

/// The `major:minor` of every mounted filesystem's source, from the text
/// of `/proc/self/mountinfo` (field 3), with its mount point.
pub fn mounted_devices(mountinfo: &str) -> Vec<((u32, u32), String)> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let dev = f.nth(2)?;
            let point = f.nth(1)?;
            let (a, b) = dev.split_once(':')?;
            Some(((a.parse().ok()?, b.parse().ok()?), unescape_octal(point)))
        })
        .collect()
}

/// Mount points in mountinfo escape space, tab, newline and backslash as
/// `\040` and so on.
fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            let v = (b[i + 1] - b'0') as u32 * 64 + (b[i + 2] - b'0') as u32 * 8 + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Device paths listed in the text of `/proc/swaps`.
pub fn swap_paths(swaps: &str) -> Vec<String> {
    swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(unescape_octal))
        .collect()
}

fn dev_of(rdev: u64) -> (u32, u32) {
    (libc::major(rdev as libc::dev_t), libc::minor(rdev as libc::dev_t))
}

/// The devices to check for a block device: itself and its partitions
/// (from `/sys/dev/block/M:m/*/partition`).
fn with_partitions(dev: (u32, u32)) -> Vec<((u32, u32), String)> {
    let base = PathBuf::from(format!("/sys/dev/block/{}:{}", dev.0, dev.1));
    let name = std::fs::canonicalize(&base)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| format!("{}:{}", dev.0, dev.1));
    let mut v = vec![(dev, name)];
    if let Ok(rd) = std::fs::read_dir(&base) {
        for e in rd.flatten() {
            let p = e.path();
            if !p.join("partition").exists() {
                continue;
            }
            let Ok(d) = std::fs::read_to_string(p.join("dev")) else {
                continue;
            };
            if let Some((a, b)) = d.trim().split_once(':') {
                if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                    v.push(((a, b), e.file_name().to_string_lossy().into_owned()));
                }
            }
        }
    }
    v
}

/// Why writing to block device `dev` would destroy data in use, if it
/// would: mounted (itself or a partition), swap, or held by another device.
fn device_in_use(dev: (u32, u32), shown: &Path) -> Option<String> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mounts = mounted_devices(&mountinfo);
    let swaps: Vec<(u32, u32)> = swap_paths(&std::fs::read_to_string("/proc/swaps").unwrap_or_default())
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .filter(|m| m.file_type().is_block_device())
        .map(|m| dev_of(m.rdev()))
        .collect();
    for (d, name) in with_partitions(dev) {
        let what = if d == dev {
            shown.display().to_string()
        } else {
            format!("its partition {name}")
        };
        if let Some((_, point)) = mounts.iter().find(|(m, _)| *m == d) {
            return Some(format!("{what} is mounted on {point}"));
        }
        if swaps.contains(&d) {
            return Some(format!("{what} is in use as swap"));
        }
        let holders = PathBuf::from(format!("/sys/dev/block/{}:{}/holders", d.0, d.1));
        if let Ok(rd) = std::fs::read_dir(holders) {
            let names: Vec<String> = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if !names.is_empty() {
                return Some(format!("{what} is held by {}", names.join(", ")));
            }
        }
    }
    // The kernel's own answer: an exclusive open fails while the device is
    // mounted or claimed by a holder.
    use std::os::unix::fs::OpenOptionsExt;
    let excl = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(shown);
    if let Err(e) = excl {
        if e.raw_os_error() == Some(libc::EBUSY) {
            return Some(format!("{} is busy (in use by the system)", shown.display()));
        }
    }
    None
}

/// What the caller is about to do with the target.
#[derive(Debug, Clone, Copy, Default)]
pub struct Intent {
    /// The job writes (into the existing target, or a new file in a directory).
    pub writes: bool,
    /// O_DIRECT is asked for.
    pub direct: bool,
    /// Writing into a mounted or held block device is explicitly allowed.
    pub allow_mounted_write: bool,
}

/// Check that `path` is a safe target for an I/O job as `intent` says.
pub fn check(path: &Path, intent: Intent) -> Result<Target, TargetError> {
    let canonical = std::fs::canonicalize(path)
        .map_err(|e| TargetError::Unreadable(format!("{}: {e}", path.display())))?;
    let md = std::fs::metadata(&canonical)
        .map_err(|e| TargetError::Unreadable(format!("{}: {e}", path.display())))?;
    let ft = md.file_type();
    let shown = if canonical == path {
        path.display().to_string()
    } else {
        format!("{} (= {})", path.display(), canonical.display())
    };
    if ft.is_block_device() {
        let dev = dev_of(md.rdev());
        if intent.writes && !intent.allow_mounted_write {
            if let Some(why) = device_in_use(dev, &canonical) {
                return Err(TargetError::InUse(format!(
                    "{shown}: refusing to write: {why}; writing would destroy what the system keeps \
                     on it (unmount or release it first, or add --allow-mounted-write if you really \
                     mean it)"
                )));
            }
        }
        return Ok(Target {
            canonical,
            kind: TargetKind::BlockDevice {
                major: dev.0,
                minor: dev.1,
            },
            fs: None,
        });
    }
    let fs = fs_magic(&canonical).and_then(fs_by_magic);
    if intent.direct {
        if let Some((name, FsClass::Memory)) = fs {
            return Err(TargetError::NoDirect(format!(
                "{shown}: --direct on {name}, which keeps files in memory: it would measure memory, \
                 not a device; use a directory on a disk-backed filesystem, or drop --direct"
            )));
        }
    }
    if let Some(tree) = kernel_tree(&canonical) {
        return Err(TargetError::Pseudo(format!(
            "{shown}: under {tree}, where only block devices are I/O targets (this is a kernel \
             interface, not storage)"
        )));
    }
    if let Some((name, FsClass::Pseudo)) = fs {
        return Err(TargetError::Pseudo(format!(
            "{shown}: on a {name} filesystem, a kernel interface, not storage"
        )));
    }
    let kind = if ft.is_dir() {
        TargetKind::Directory
    } else if ft.is_file() {
        TargetKind::File
    } else {
        let what = if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_char_device() {
            "a character device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(TargetError::Kind(format!(
            "{shown}: {what}; an I/O target is a directory, a regular file or a block device"
        )));
    };
    Ok(Target {
        canonical,
        kind,
        fs: fs.map(|(n, _)| n),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
23 22 0:21 / /proc rw,nosuid shared:12 - proc proc rw
40 22 7:3 / /mnt/my\\040disk rw,relatime shared:30 - ext4 /dev/loop3 rw
";

    #[test]
    fn mountinfo_gives_devices_and_mount_points() {
        let m = mounted_devices(MOUNTINFO);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0], ((259, 2), "/".to_string()));
        assert_eq!(m[2], ((7, 3), "/mnt/my disk".to_string()));
        assert!(mounted_devices("garbage\n\n1 2\n").is_empty());
    }

    #[test]
    fn swaps_are_listed() {
        let s = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/sda3  partition\t8388604\t0\t-2\n";
        assert_eq!(swap_paths(s), vec!["/dev/sda3".to_string()]);
        assert!(swap_paths("Filename Type\n").is_empty());
    }

    #[test]
    fn kernel_trees_are_named() {
        assert_eq!(kernel_tree(Path::new("/proc/self/status")), Some("/proc"));
        assert_eq!(kernel_tree(Path::new("/sys/kernel/mm")), Some("/sys"));
        assert_eq!(kernel_tree(Path::new("/dev/null")), Some("/dev"));
        assert_eq!(kernel_tree(Path::new("/device/x")), None);
        assert_eq!(kernel_tree(Path::new("/tmp")), None);
    }

    #[test]
    fn pseudo_files_and_devices_are_refused() {
        let w = Intent {
            writes: true,
            ..Intent::default()
        };
        for p in [
            "/proc/self/status",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/dev/null",
        ] {
            let p = Path::new(p);
            if !p.exists() {
                continue;
            }
            let e = check(p, w).unwrap_err();
            assert!(matches!(e, TargetError::Pseudo(_)), "{p:?}: {e}");
            // Reads too: these are not storage.
            assert!(check(p, Intent::default()).is_err());
        }
    }

    #[test]
    fn a_fifo_is_refused_as_a_kind() {
        let d = std::env::temp_dir().join(format!("hwcal-target-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&d);
        if std::process::Command::new("mkfifo")
            .arg(&d)
            .status()
            .is_ok_and(|s| s.success())
        {
            let e = check(&d, Intent::default()).unwrap_err();
            assert!(matches!(e, TargetError::Kind(_)), "{e}");
            assert!(e.to_string().contains("FIFO"));
            let _ = std::fs::remove_file(&d);
        }
    }

    #[test]
    fn direct_on_tmpfs_is_refused() {
        let shm = Path::new("/dev/shm");
        // /dev/shm: tmpfs, and in the /dev tree; with --direct the message
        // names the memory filesystem.
        if shm.is_dir() && fs_magic(shm) == Some(0x0102_1994) {
            let e = check(
                shm,
                Intent {
                    direct: true,
                    ..Intent::default()
                },
            )
            .unwrap_err();
            assert!(matches!(e, TargetError::NoDirect(_)), "{e}");
            assert!(e.to_string().contains("tmpfs"), "{e}");
            assert!(check(shm, Intent::default()).is_err());
        }
        // A tmpfs elsewhere (often /tmp or /run): refused only with --direct.
        for dir in ["/run", "/tmp"] {
            let p = Path::new(dir);
            if fs_magic(p).and_then(fs_by_magic).map(|(_, c)| c) == Some(FsClass::Memory) {
                let e = check(
                    p,
                    Intent {
                        direct: true,
                        ..Intent::default()
                    },
                )
                .unwrap_err();
                assert!(matches!(e, TargetError::NoDirect(_)), "{e}");
                assert!(e.to_string().contains("tmpfs") || e.to_string().contains("ramfs"));
                assert!(check(p, Intent::default()).is_ok());
            }
        }
    }

    #[test]
    fn a_plain_directory_passes_and_is_described() {
        let d = std::env::temp_dir();
        let t = check(&d, Intent::default()).unwrap();
        assert_eq!(t.kind, TargetKind::Directory);
        assert!(t.describe().contains("directory"));
    }
}
