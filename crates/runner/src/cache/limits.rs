//! How large the cache probe's working set may grow: past the last-level
//! cache by a margin (memory must be reached), within what the machine can
//! keep resident.

use crate::Result;
use hwcal_model::MachineInfo;

/// 4× the nominal last-level cache (so memory is reached even if the whole
/// cache were usable), at least 64 MiB, at most a quarter of available
/// memory.
pub fn default_max_size(m: &MachineInfo) -> u64 {
    let llc = m
        .nominal_caches
        .iter()
        .filter(|c| c.cache_type != "Instruction")
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(32 << 20);
    let avail = hwcal_probes::sysinfo::available_memory();
    let cap = if avail > 0 { avail / 4 } else { 1 << 30 };
    (4 * llc).max(64 << 20).min(cap).max(1 << 20)
}

/// `--max-size` as typed: a size (`64M`, `1G`) the machine can hold (see
/// [`check_max_size`]).
pub fn parse_max_size(asked: &str) -> Result<u64> {
    let bytes =
        hwcal_model::parse_size(asked).map_err(|e| crate::RunnerError::Usage(format!("--max-size {e}")))?;
    check_max_size(bytes, asked)?;
    Ok(bytes)
}

/// A largest working set the machine can hold: at least 64 KiB (past any
/// L1), at most half the available memory (the chase buffer must stay
/// resident); `asked` as typed, for the message.
pub fn check_max_size(bytes: u64, asked: &str) -> Result<()> {
    if bytes < 64 << 10 {
        crate::usage!("--max-size {asked}: at least 64K");
    }
    let avail = hwcal_probes::sysinfo::available_memory();
    if avail > 0 && bytes > avail / 2 {
        crate::usage!(
            "--max-size {asked}: more than half of the available memory ({} MiB)",
            avail >> 20
        );
    }
    Ok(())
}
