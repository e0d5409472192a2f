//! `hwcal mem --sweep`: read, write and copy bandwidth at 1..N threads
//! (each thread on its own buffer), loaded latency (Intel MLC style: one
//! chaser while 0..N-1 threads stream) and memory-level parallelism.

use crate::probe::Progress;
use crate::Result;
use hwcal_model::curve::MemSeries;
use hwcal_model::{Bandwidth, BandwidthPoint, LoadedLatencyPoint, MemResult, MlpPoint, Profile};
use hwcal_probes::mem::{self as mem_kernels, Job, Prep, Prepared, RunTiming, Work};

use super::job::*;

/// Chain counts of a sweep's memory-level-parallelism points.
const MLP_CHAINS: [usize; 5] = [1, 2, 4, 8, 16];

/// What every step of a sweep shares: the configuration, the buffers (one
/// stream buffer per thread, then the chaser's ring) and the plan of one
/// point.
struct Sweep<'a> {
    cfg: &'a Config,
    bufs: &'a [Prepared],
    plan: RunTiming,
    progress: &'a dyn Progress,
}

/// `--sweep`: read, write, copy at 1..N threads, then loaded latency.
pub(super) fn run_sweep(cfg: &Config, progress: &dyn Progress, p: &mut Profile) -> Result<()> {
    let n = cfg.threads;
    let preps = sweep_preps(cfg);
    let (bufs, setup_s) = prepare_timed(progress, &preps, "buffers", cfg.size)?;
    let points = 3 * n + n + MLP_CHAINS.len();
    let sw = Sweep {
        cfg,
        bufs: &bufs,
        plan: RunTiming {
            duration_ns: cfg.secs * 1e9 / points as f64,
            slice_ns: (cfg.secs * 1e9 / points as f64 / 10.0).clamp(1e6, 20e6),
            warm_up_ms: 20,
        },
        progress,
    };
    let refs: Vec<&Prepared> = bufs.iter().collect();
    let (page, huge, frac) = pages(&cfg.backing, &refs);
    let mut bw = Bandwidth {
        threads: n as u32,
        size_bytes: cfg.size as u64,
        kernel: mem_kernels::isa().name().into(),
        stores: stores(cfg.nontemporal),
        ..Default::default()
    };
    sw.scaling(&mut bw, p)?;
    let latency = sw.loaded_latency((page, huge, frac), &mut bw, p)?;
    sw.mlp(&mut bw, p)?;
    if let Some(mut l) = latency {
        l.setup_s = setup_s;
        l.numa_nodes = cfg.mem_nodes.len() as u32;
        p.mem = Some(l);
    }
    p.bandwidth = Some(bw);
    placement_notes(&as_random(cfg), &bufs, p);
    Ok(())
}

/// A sweep's buffers: one stream buffer per thread (prepared on its own
/// CPU), plus the chaser's ring on thread 0's CPU.
fn sweep_preps(cfg: &Config) -> Vec<Prep> {
    let mut preps: Vec<Prep> = (0..cfg.threads)
        .map(|t| Prep {
            cpu: cfg.places[t].cpu,
            node: cfg.places[t].node,
            size: cfg.size,
            backing: cfg.backing.clone(),
            ring_entries: 0,
            ring_cpus: Vec::new(),
            seed: 0,
            local_ring: false,
        })
        .collect();
    preps.push(Prep {
        ring_entries: mem_kernels::MAX_CHAINS,
        seed: 1,
        local_ring: false,
        ..preps[0].clone()
    });
    preps
}

impl Sweep<'_> {
    /// The chaser's ring, after the stream buffers.
    fn ring(&self) -> &Prepared {
        &self.bufs[self.cfg.threads]
    }

    /// Stream job `t`: its own CPU, over its own buffer.
    fn stream_job(&self, t: usize, op: MemOp, nontemporal: bool) -> Job<'_> {
        Job {
            cpu: self.cfg.places[t].cpu,
            work: own_stream(self.cfg, &self.bufs[t], op, nontemporal),
        }
    }

    /// Bandwidth scaling: every op at 1..N threads, each on its own buffer;
    /// the N-thread figure of each op is its headline.
    fn scaling(&self, bw: &mut Bandwidth, p: &mut Profile) -> Result<()> {
        let (cfg, n) = (self.cfg, self.cfg.threads);
        for op in [MemOp::Read, MemOp::Write, MemOp::Copy] {
            for k in 1..=n {
                self.progress
                    .say(&format!("mem: {} with {k} thread(s)", op_name(op)));
                let jobs: Vec<Job> = (0..k).map(|t| self.stream_job(t, op, cfg.nontemporal)).collect();
                let tpl = template("sequential", op_name(op), cfg.size, true, k);
                let label = MemSeries::Sweep {
                    op: op_name(op).into(),
                    threads: k as u32,
                };
                let r = measure(&label, &jobs, &self.plan, tpl, &mut p.raw)?;
                bw.scaling.push(BandwidthPoint {
                    threads: k as u32,
                    op: op_name(op).into(),
                    bytes_per_sec: r.bytes_per_sec,
                    ..Default::default()
                });
                if k == n {
                    set_headline(bw, op, r.bytes_per_sec);
                }
            }
        }
        Ok(())
    }

    /// Loaded latency: thread 0 chases its ring while s = 0..N-1 threads
    /// read. Returns the unloaded (s = 0) result, the sweep's latency.
    fn loaded_latency(
        &self,
        (page, huge, frac): (u64, bool, f64),
        bw: &mut Bandwidth,
        p: &mut Profile,
    ) -> Result<Option<MemResult>> {
        let (cfg, n) = (self.cfg, self.cfg.threads);
        let ring = self.ring();
        let mut latency = None;
        for s in 0..n {
            self.progress
                .say(&format!("mem: latency with {s} streaming thread(s)"));
            let mut jobs = vec![Job {
                cpu: cfg.places[0].cpu,
                work: Work::Chase {
                    buf: &ring.buf,
                    start: ring.entries[0],
                },
            }];
            jobs.extend((1..=s).map(|t| self.stream_job(t, MemOp::Read, false)));
            let mut tpl = template("random", "chase", cfg.size, true, jobs.len());
            tpl.page_size_bytes = page;
            tpl.use_hugepages = huge;
            tpl.huge_fraction = frac;
            let r = measure(
                &MemSeries::Loaded { streams: s as u32 },
                &jobs,
                &self.plan,
                tpl,
                &mut p.raw,
            )?;
            let chaser = &r.per_thread[0];
            bw.loaded_latency.push(LoadedLatencyPoint {
                streaming_threads: s as u32,
                latency_ns: chaser.ns_per_op,
                latency_cycles: chaser.clk_per_op.is_finite().then_some(chaser.clk_per_op),
                stream_bytes_per_sec: r.per_thread[1..].iter().fold(0.0, |a, t| a + t.bytes_per_sec),
                // Judged with the rest of the section (`mem_raw::reanalyze`).
                verdict: None,
                latency_ns_ci95: None,
            });
            if s == 0 {
                latency = Some(r);
            }
        }
        Ok(latency)
    }

    /// Memory-level parallelism: thread 0 alone, k chains around the ring,
    /// each speedup relative to the single chain.
    fn mlp(&self, bw: &mut Bandwidth, p: &mut Profile) -> Result<()> {
        let ring = self.ring();
        for k in MLP_CHAINS {
            self.progress.say(&format!("mem: {k} parallel chase(s)"));
            let mut starts = [0; mem_kernels::MAX_CHAINS];
            for (j, s) in starts.iter_mut().take(k).enumerate() {
                *s = ring.entries[j * mem_kernels::MAX_CHAINS / k];
            }
            let jobs = [Job {
                cpu: self.cfg.places[0].cpu,
                work: Work::Chains {
                    buf: &ring.buf,
                    starts,
                    k,
                },
            }];
            let tpl = template("random", "chains", self.cfg.size, true, 1);
            let r = measure(
                &MemSeries::Mlp { chains: k as u32 },
                &jobs,
                &self.plan,
                tpl,
                &mut p.raw,
            )?;
            let (base, base_ci) = bw.mlp.first().map_or((r.ns_per_op, r.ns_per_op_ci95), |m| {
                (m.ns_per_load, m.ns_per_load_ci95)
            });
            bw.mlp.push(MlpPoint {
                chains: k as u32,
                ns_per_load: r.ns_per_op,
                speedup: base / r.ns_per_op,
                ns_per_load_ci95: r.ns_per_op_ci95,
                speedup_ci95: hwcal_analysis::stats::ratio_ci95(base, base_ci, r.ns_per_op, r.ns_per_op_ci95),
                verdict: None,
            });
        }
        hwcal_analysis::cache::judge_mlp(&mut bw.mlp);
        Ok(())
    }
}
