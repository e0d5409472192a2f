//! The synthetic machine: every probe returns the matching part of
//! `hwcal_model::sample::full_profile(0)` (a reference-like 2-vCPU guest).
//! Cache and TLB return only their raw curves, so their figures and notes
//! come from the real analysis (the calibration's); the other probes return
//! their sections.
//! Deterministic and instant.

use crate::probe::{Machine, Plan, ProbeEntry, Progress};
use crate::Result;
use hwcal_model::curve::probe_of;
use hwcal_model::sample::full_profile;
use hwcal_model::{curve, HarnessInfo, MachineInfo, NominalCache, Profile, RawCurve, RawPoint};

/// The TLB probe's baseline (the same lines without TLB misses): flat at
/// the 4 KiB curve's fastest point, so every step of that curve is a TLB
/// level.
fn tlb_baseline(p: &Profile) -> Option<RawCurve> {
    let small = p.raw_curve(curve::TLB_SMALL)?;
    let floor = small.points.iter().map(|q| q.y).fold(f64::INFINITY, f64::min);
    Some(RawCurve {
        id: curve::TLB_BASELINE.into(),
        x_label: small.x_label.clone(),
        y_label: "ns per access, same lines in huge pages".into(),
        points: small
            .points
            .iter()
            .map(|q| RawPoint {
                x: q.x,
                y: floor,
                ..Default::default()
            })
            .collect(),
    })
}

/// See the module documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Synthetic;

impl Machine for Synthetic {
    fn info(&self) -> MachineInfo {
        full_profile(0).machine.unwrap_or_default()
    }
    fn cpuid_caches(&self) -> Vec<NominalCache> {
        // CPUID agrees with sysfs here.
        Vec::new()
    }
    fn harness(&self, _pinned_cpu: Option<usize>) -> HarnessInfo {
        full_profile(0).harness.unwrap_or_default()
    }
    fn run(&self, probe: &ProbeEntry, _plan: &dyn Plan, progress: &dyn Progress) -> Result<Profile> {
        progress.say(&format!("{}: synthetic", probe.id));
        let s = full_profile(0);
        let mut p = Profile::default();
        match probe.id {
            "clock" => p.clock = s.clock,
            "mem" => {
                p.mem = s.mem;
                p.bandwidth = s.bandwidth;
            }
            "ctx" => p.context_switch = s.context_switch,
            "io" => p.io = s.io,
            id => {
                p.raw = s
                    .raw
                    .into_iter()
                    .filter(|c| probe_of(&c.id) == Some(id))
                    .collect();
                if id == "tlb" {
                    p.raw.extend(tlb_baseline(&p));
                }
                // Raw curves only, as the real probes return them.
                p.machine = None;
            }
        }
        Ok(p)
    }
}
