//! How large the cache probe's working set may grow: past the last-level
//! cache by a margin (memory must be reached), within what the machine can
//! keep resident.

use crate::Result;
use hwcal_model::MachineInfo;

/// 8× the nominal last-level cache while that is under 1 GiB, else 4× (so
/// memory is reached even if the whole cache were usable), at least
/// 64 MiB, at most a quarter of available memory. Eight times because an
/// adaptive last level (bimodal insertion: Intel's L3s since Ivy Bridge,
/// Zen 5's) keeps part of any chase: a Zen 5 guest's chase still hit its
/// 32 MiB L3 10% of the time at 128 MiB (129–138 ns against 146–150), so
/// memory's plateau was never reached; 4× on the largest L3s, where 8×
/// would allocate gigabytes and a guest's share of the L3 is a fraction
/// anyway.
pub fn default_max_size(m: &MachineInfo) -> u64 {
    let llc = m
        .nominal_caches
        .iter()
        .filter(|c| c.cache_type != "Instruction")
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(32 << 20);
    // The machine's own figure (a simulated machine has its own memory).
    let avail = match m.memory_available_bytes {
        0 => hwcal_probes::sysinfo::available_memory(),
        a => a,
    };
    let cap = if avail > 0 { avail / 4 } else { 1 << 30 };
    sweep_top(llc).min(cap).max(1 << 20)
}

/// The sweep's top for a last level of `llc` bytes, memory aside (see
/// [`default_max_size`]).
pub fn sweep_top(llc: u64) -> u64 {
    (8 * llc).min((4 * llc).max(1 << 30)).max(64 << 20)
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
