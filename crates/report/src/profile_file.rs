//! Reading a profile file safely: a regular file of bounded size (a device,
//! a FIFO or a huge file is refused before or while reading, never read to
//! the end).

/// The most bytes a profile file may have (`db import`, `analyze`, `report
/// FILE`): far above any profile hwcal writes (a few MB with every raw
/// curve), far below what would exhaust memory.
pub const MAX_PROFILE_BYTES: u64 = 64 << 20;

/// Read a profile file: a regular file of at most [`MAX_PROFILE_BYTES`]
/// (a device such as `/dev/urandom`, a FIFO or a larger file is refused
/// before or while reading, never read to the end).
pub fn read_profile_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    // `-`: standard input (`hwcal sim profile 3 | hwcal analyze -`), held
    // to the same size limit.
    if path.as_os_str() == "-" {
        return read_bounded(std::io::stdin().lock());
    }
    let md = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if md.is_dir() {
        return Err("is a directory, not a profile file".into());
    }
    if !md.is_file() {
        return Err("not a regular file (a device, FIFO or socket); give a JSON profile file".into());
    }
    if md.len() > MAX_PROFILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {} MiB a profile may have",
            md.len(),
            MAX_PROFILE_BYTES >> 20
        ));
    }
    read_bounded(std::fs::File::open(path).map_err(|e| e.to_string())?)
}

/// All of `r`, refused past [`MAX_PROFILE_BYTES`] (one byte more is read
/// to tell, never the rest).
fn read_bounded(r: impl std::io::Read) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    r.take(MAX_PROFILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(format!(
            "more than the {} MiB a profile may have",
            MAX_PROFILE_BYTES >> 20
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_files_are_capped_and_must_be_regular() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_profile_file(dir.path()).unwrap_err().contains("directory"));
        let urandom = std::path::Path::new("/dev/urandom");
        if urandom.exists() {
            assert!(read_profile_file(urandom)
                .unwrap_err()
                .contains("not a regular file"));
        }
        let big = dir.path().join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_PROFILE_BYTES + 1).unwrap();
        assert!(read_profile_file(&big).unwrap_err().contains("MiB"));
        let ok = dir.path().join("ok.json");
        std::fs::write(&ok, b"{}").unwrap();
        assert_eq!(read_profile_file(&ok).unwrap(), b"{}");
    }
}
