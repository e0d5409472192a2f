//! Core-to-core latency: how long one cache line takes to move between two
//! CPUs through the coherence protocol (Intel MLC's `--c2c_latency`, the
//! `core-to-core-latency` crate, `c2clat`).
//!
//! Two threads, one pinned to each CPU, play ping-pong, in one of two ways
//! ([`Method`]):
//! - **CAS on one line** (MLC's and `core-to-core-latency`'s default): the
//!   first turns the line's even value odd, the second waits for odd and
//!   turns it even. A CAS needs the line in the exclusive state, so every
//!   turn pulls the line from the other core's cache.
//! - **Read/write on two lines** (`core-to-core-latency`'s single-writer
//!   single-reader test): the first stores to a "ping" line and spins
//!   reading a "pong" line, the second spins reading ping and then stores to
//!   pong. Each store invalidates the reader's shared copy and each reader's
//!   load then fetches the modified line: plain loads and stores, the way
//!   message queues and locks' waiters pass data, no locked instruction.
//!
//! Either way one round trip is two handoffs, and the one-way latency is
//! half a round trip. Each line sits alone in a 128-byte block (two 64-byte
//! lines: the adjacent-line prefetcher pairs lines, and some cores use
//! 128-byte lines), so nothing else shares it. Both threads are the probe's own (the
//! caller's CPU affinity is left as it was). The first of them times batches of
//! round trips with the harness timer; a batch is long enough (≥ ~50 µs)
//! that one timer read is lost in it, short enough that most batches see no
//! interrupt, so the median over batches is the figure and the spread says
//! how quiet the pair was.

use crate::ProbeError;
use hwcal_harness::{pin, Timer};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Round trips per timed batch.
pub const TRIPS: u64 = 400;
/// Batches thrown away before the timed ones: the first ones pay for the
/// threads' start and the line's first migration.
pub const WARM_UP_BATCHES: usize = 3;
/// Longest a pair may take before it is given up (a CPU taken away by the
/// host or by a real-time task would otherwise hang the probe).
const PAIR_DEADLINE: Duration = Duration::from_secs(5);

/// A line the two threads pass, alone in its 128-byte block.
#[repr(align(128))]
struct Line {
    value: AtomicU64,
}

/// How the two CPUs pass the line (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Compare-and-swap on one line.
    Cas,
    /// A store to one line and loads of another, each side one writer.
    ReadWrite,
}

impl Method {
    pub const ALL: [Method; 2] = [Method::Cas, Method::ReadWrite];

    /// The stable id (`--method`, curve ids).
    pub fn id(self) -> &'static str {
        match self {
            Method::Cas => "cas",
            Method::ReadWrite => "rw",
        }
    }

    pub fn by_id(id: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.id() == id)
    }
}

/// The two lines of a pair: CAS uses `ping` only.
struct Lines {
    ping: Line,
    pong: Line,
}

/// Which thread of the pair.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The timing thread: it starts each round trip.
    Timer,
    Partner,
}

impl Lines {
    /// Side `side`'s part of round trip `i`; false when told to give up.
    #[inline]
    fn play(&self, method: Method, side: Side, i: u64, stop: &Stop) -> bool {
        match (method, side) {
            (Method::Cas, Side::Timer) => turn(&self.ping.value, 2 * i, stop),
            (Method::Cas, Side::Partner) => turn(&self.ping.value, 2 * i + 1, stop),
            (Method::ReadWrite, Side::Timer) => {
                self.ping.value.store(i + 1, Ordering::Release);
                wait_for(&self.pong.value, i + 1, stop)
            }
            (Method::ReadWrite, Side::Partner) => {
                let seen = wait_for(&self.ping.value, i + 1, stop);
                self.pong.value.store(i + 1, Ordering::Release);
                seen
            }
        }
    }
}

/// When a spinning side stops waiting: the other side gave up, or the
/// pair's deadline passed.
struct Stop<'a> {
    give_up: &'a AtomicBool,
    deadline: Instant,
}

impl Stop<'_> {
    /// Checked every 4096 spins: often enough to stop within microseconds,
    /// rarely enough to cost nothing.
    #[inline]
    fn now(&self, spins: u32) -> bool {
        spins.is_multiple_of(4096) && (self.give_up.load(Ordering::Relaxed) || Instant::now() > self.deadline)
    }
}

/// One-way handoff latency (ns) from `a` to `b` and back by `method`, one
/// value per batch of [`TRIPS`] round trips, `batches` of them after the
/// warm-up.
pub fn handoff_ns(a: usize, b: usize, batches: usize, method: Method) -> Result<Vec<f64>, ProbeError> {
    if a == b {
        return Err(ProbeError::InvalidInput(format!(
            "c2c: CPU {a} paired with itself"
        )));
    }
    let timer = Timer::get();
    let lines = Lines {
        ping: Line {
            value: AtomicU64::new(0),
        },
        pong: Line {
            value: AtomicU64::new(0),
        },
    };
    let give_up = AtomicBool::new(false);
    let start = Barrier::new(2);
    let total = (WARM_UP_BATCHES + batches) as u64 * TRIPS;
    let stop = Stop {
        give_up: &give_up,
        deadline: Instant::now() + PAIR_DEADLINE,
    };
    std::thread::scope(|s| {
        let partner = s.spawn(|| -> Result<(), ProbeError> {
            let pinned = pin::pin_to(b).map_err(ProbeError::from);
            start.wait();
            if pinned.is_err() {
                give_up.store(true, Ordering::Relaxed);
                return pinned;
            }
            for i in 0..total {
                if !lines.play(method, Side::Partner, i, &stop) {
                    return Ok(());
                }
            }
            Ok(())
        });
        // The timing side in a thread of its own too: pinning it must not
        // move the caller (the calibration's measuring thread).
        let timed = s.spawn(|| -> Result<Vec<f64>, ProbeError> {
            let pinned = pin::pin_to(a).map_err(ProbeError::from);
            start.wait();
            if let Err(e) = pinned {
                give_up.store(true, Ordering::Relaxed);
                return Err(e);
            }
            let mut out = Vec::with_capacity(batches);
            for batch in 0..WARM_UP_BATCHES + batches {
                let t0 = timer.now();
                for k in 0..TRIPS {
                    let i = batch as u64 * TRIPS + k;
                    if !lines.play(method, Side::Timer, i, &stop) {
                        give_up.store(true, Ordering::Relaxed);
                        return Err(ProbeError::Failed(format!(
                            "c2c: CPUs {a} and {b} did not pass the line back and forth within {} s \
                             (one of them is not running this thread)",
                            PAIR_DEADLINE.as_secs()
                        )));
                    }
                }
                let t1 = timer.now();
                if batch >= WARM_UP_BATCHES {
                    out.push(timer.elapsed_ns(t0, t1) / (2 * TRIPS) as f64);
                }
            }
            Ok(out)
        });
        let timed = timed
            .join()
            .map_err(|_| ProbeError::Failed("c2c: the timing thread panicked".into()))?;
        let partner = partner
            .join()
            .map_err(|_| ProbeError::Failed("c2c: the partner thread panicked".into()))?;
        // The partner's own failure (it could not pin) explains the rest.
        partner?;
        timed
    })
}

/// Wait until the line holds `expect`, then make it `expect + 1`. Returns
/// false when told to stop. The CAS itself is the wait: each failed attempt
/// asks for the line exclusive, as the handoff does.
#[inline]
fn turn(line: &AtomicU64, expect: u64, stop: &Stop) -> bool {
    let mut spins: u32 = 0;
    while line
        .compare_exchange(expect, expect + 1, Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        spins = spins.wrapping_add(1);
        if stop.now(spins) {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// Spin on loads until the line holds `want` (the reader keeps a shared
/// copy, which the writer's store invalidates); false when told to stop.
#[inline]
fn wait_for(line: &AtomicU64, want: u64, stop: &Stop) -> bool {
    let mut spins: u32 = 0;
    while line.load(Ordering::Acquire) != want {
        spins = spins.wrapping_add(1);
        if stop.now(spins) {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// The pairs to measure among `cpus` (each unordered pair once, in an
/// order that interleaves the CPUs so the machine's drifting noise does not
/// draw a pattern along a row): every pair up to `max_pairs`, else the
/// pairs of every CPU with an evenly spaced sample of the others.
pub fn pairs(cpus: &[usize], max_pairs: usize) -> Vec<(usize, usize)> {
    let mut all = Vec::new();
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            all.push((a, b));
        }
    }
    if all.len() > max_pairs && max_pairs > 0 {
        let step = all.len().div_ceil(max_pairs);
        all = all.into_iter().step_by(step).collect();
    }
    // Stride through the list with a step coprime to its length: neighbours
    // in time are far apart in the matrix.
    let n = all.len();
    let stride = (1..=n)
        .rev()
        .find(|s| gcd(*s, n) == 1 && *s * 2 <= n.max(2))
        .unwrap_or(1);
    (0..n).map(|k| all[(k * stride) % n.max(1)]).collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_cover_each_unordered_pair_once_in_an_interleaved_order() {
        let p = pairs(&[0, 1, 2, 3, 4], 100);
        assert_eq!(p.len(), 10);
        let mut sorted = p.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 10);
        assert!(p.iter().all(|(a, b)| a < b));
        // Not the row order.
        let row: Vec<(usize, usize)> = (0..5).flat_map(|a| (a + 1..5).map(move |b| (a, b))).collect();
        assert_ne!(p, row);
        assert_eq!(pairs(&[3], 10), vec![]);
        assert_eq!(pairs(&[0, 1], 10), vec![(0, 1)]);
        assert!(pairs(&(0..64).collect::<Vec<_>>(), 200).len() <= 200);
    }

    #[test]
    fn a_pair_hands_the_line_back_and_forth() {
        let cpus = pin::allowed_cpus();
        if cpus.len() < 2 || hwcal_harness::platform::skip_if_emulated("c2c handoff") {
            return;
        }
        for m in Method::ALL {
            let v = handoff_ns(cpus[0], cpus[1], 5, m).unwrap();
            assert_eq!(v.len(), 5);
            // Broad physical bounds: a handoff takes more than a nanosecond
            // and less than a millisecond.
            assert!(v.iter().all(|&x| x > 1.0 && x < 1e6), "{m:?}: {v:?}");
            assert_eq!(Method::by_id(m.id()), Some(m));
        }
        assert!(handoff_ns(cpus[0], cpus[0], 1, Method::Cas).is_err());
    }
}
