//! Clock kernels: the nine dependent expressions of lmbench's `mhz`
//! (McVoy & Staelin, USENIX 1998, §5) and the dependent add chain.
//!
//! The paper wrote the expressions in C and fought compilers that folded
//! them (`a+=a` → `a=0`, `a+=b` → `a+=100*b`). hwcal writes each one in inline
//! asm so the instruction sequence is exactly the expression: every
//! instruction consumes the previous result, nothing can overlap, and each
//! expression costs an integral number of cycles. Register operands replace
//! immediates so rename-stage folding cannot shorten a chain. On a Golden
//! Cove core the cycle counts are 5, 2, 2, 1, 2, 2, 2, 3, 3: relatively prime,
//! as the GCD method needs.
//!
//! Each kernel runs `iters` loop iterations of 100 copies of its expression.

/// Copies of the expression per loop iteration.
pub const REPS: u64 = 100;

/// One of the nine expressions.
#[derive(Debug, Clone, Copy)]
pub struct Expression {
    /// The C expression from the paper.
    pub text: &'static str,
    pub run: fn(u64) -> u64,
}

/// Whether the expression kernels can run here (x86_64 with BMI2 for the
/// shift-by-register forms `shrx`/`shlx`, or aarch64).
pub fn expressions_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The nine expressions, in the paper's order.
pub fn expressions() -> Vec<Expression> {
    vec![
        Expression {
            text: "p=*p",
            run: e1_load,
        },
        Expression {
            text: "a^=a+a",
            run: e2,
        },
        Expression {
            text: "a^=a+a+a",
            run: e3,
        },
        Expression {
            text: "a>>=b",
            run: e4,
        },
        Expression {
            text: "a>>=a+a",
            run: e5,
        },
        Expression {
            text: "a^=a<<b",
            run: e6,
        },
        Expression {
            text: "a^=a+b",
            run: e7,
        },
        Expression {
            text: "a+=(a+b)&07",
            run: e8,
        },
        Expression {
            text: "a++;a^=1;a<<=1",
            run: e9,
        },
    ]
}

/// Defines one expression kernel: `$body` is repeated 100× per iteration.
/// Operands: `{a}` the chain value, `{b}` = 1, `{c}` = 7, `{t}` a scratch.
macro_rules! expr_kernel {
    ($name:ident, $x86:literal, $arm:literal) => {
        #[inline(never)]
        fn $name(iters: u64) -> u64 {
            if iters == 0 {
                return 0;
            }
            let mut a: u64 = 0x1234_5678;
            let b: u64 = 1;
            let c: u64 = 7;
            #[cfg(target_arch = "x86_64")]
            // SAFETY: register-only arithmetic on operands declared to the
            // compiler; no memory or stack access; the counter is >= 1 so the
            // loop ends. shrx/shlx need BMI2, checked by
            // `expressions_supported()` before any kernel runs.
            unsafe {
                core::arch::asm!(
                    "/* {b} {c} {t} */",
                    "2:",
                    ".rept 100",
                    $x86,
                    ".endr",
                    "dec {n}",
                    "jnz 2b",
                    a = inout(reg) a,
                    b = in(reg) b,
                    c = in(reg) c,
                    t = out(reg) _,
                    n = inout(reg) iters => _,
                    options(nostack, nomem)
                );
            }
            #[cfg(target_arch = "aarch64")]
            // SAFETY: register-only arithmetic on declared operands; the
            // counter is >= 1 so the loop ends.
            unsafe {
                core::arch::asm!(
                    "/* {b} {c} {t} */",
                    "2:",
                    ".rept 100",
                    $arm,
                    ".endr",
                    "subs {n}, {n}, #1",
                    "b.ne 2b",
                    a = inout(reg) a,
                    b = in(reg) b,
                    c = in(reg) c,
                    t = out(reg) _,
                    n = inout(reg) iters => _,
                    options(nostack, nomem)
                );
            }
            #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
            {
                let _ = (b, c, iters);
            }
            a
        }
    };
}

expr_kernel!(
    e2,
    "lea {t}, [{a}+{a}]\n xor {a}, {t}",
    "add {t}, {a}, {a}\n eor {a}, {a}, {t}"
);
expr_kernel!(
    e3,
    "lea {t}, [{a}+{a}*2]\n xor {a}, {t}",
    "add {t}, {a}, {a}, lsl #1\n eor {a}, {a}, {t}"
);
expr_kernel!(e4, "shrx {a}, {a}, {b}", "lsr {a}, {a}, {b}");
expr_kernel!(
    e5,
    "lea {t}, [{a}+{a}]\n shrx {a}, {a}, {t}",
    "add {t}, {a}, {a}\n lsr {a}, {a}, {t}"
);
expr_kernel!(
    e6,
    "shlx {t}, {a}, {b}\n xor {a}, {t}",
    "lsl {t}, {a}, {b}\n eor {a}, {a}, {t}"
);
expr_kernel!(
    e7,
    "lea {t}, [{a}+{b}]\n xor {a}, {t}",
    "add {t}, {a}, {b}\n eor {a}, {a}, {t}"
);
expr_kernel!(
    e8,
    "lea {t}, [{a}+{b}]\n and {t}, {c}\n add {a}, {t}",
    "add {t}, {a}, {b}\n and {t}, {t}, {c}\n add {a}, {a}, {t}"
);
expr_kernel!(
    e9,
    "add {a}, {b}\n xor {a}, {b}\n shlx {a}, {a}, {b}",
    "add {a}, {a}, {b}\n eor {a}, {a}, {b}\n lsl {a}, {a}, {b}"
);

/// A cache line holding one pointer (the rest is padding).
#[repr(C, align(64))]
struct Line {
    next: usize,
    _pad: [usize; 7],
}

/// Lines in the `p=*p` ring: 1 KiB, always in L1.
const RING_LINES: usize = 16;

/// The ring `p=*p` walks: 16 lines in a fixed scrambled order. A pointer
/// that points to itself is *not* a dependent chain on current cores: the
/// reference Sapphire Rapids VM ran it at 0.4–2.3 cycles per load (the
/// address is predicted, so loads overlap), which is not an integral cycle
/// count and drove the GCD to a third of the tick. Distinct lines visited in
/// an irregular order keep every load waiting for the previous one.
fn ring() -> usize {
    static RING: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *RING.get_or_init(|| {
        let mut lines: Box<[Line]> = (0..RING_LINES)
            .map(|_| Line {
                next: 0,
                _pad: [0; 7],
            })
            .collect();
        let base = lines.as_ptr() as usize;
        // 7 is coprime with 16: i -> i+7 visits every line once, in a
        // non-sequential order that no stride prefetcher follows.
        for i in 0..RING_LINES {
            lines[i].next = base + ((i + 7) % RING_LINES) * std::mem::size_of::<Line>();
        }
        // The ring lives for the whole process; its heap block never moves.
        Box::leak(lines).as_ptr() as usize
    })
}

/// `p=*p`: every load's address is the previous load's result, so each
/// expression costs the L1 load-to-use latency. The dependent-load kernel is
/// the pointer chase's own (`crate::chase::chase`, 16 loads per loop
/// iteration rather than the paper's 100: the loop branch runs alongside the
/// chain either way).
#[inline(never)]
fn e1_load(iters: u64) -> u64 {
    if iters == 0 {
        return 0;
    }
    // SAFETY: `ring()` is a line of the leaked, immutable ring, and every
    // line holds the address of another line of it.
    unsafe { crate::chase::chase(ring(), iters * REPS) as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_run_and_keep_state() {
        if !expressions_supported() {
            return;
        }
        for e in expressions() {
            // Any value; the point is that the kernel runs and terminates.
            let _ = (e.run)(3);
            assert_eq!((e.run)(0), 0);
        }
        let e = &expressions()[0];
        assert_ne!((e.run)(2), 0, "p=*p returns the self-pointer");
    }
}

/// Batches collected by default.
pub const DEFAULT_BATCHES: usize = 32;

/// How much clock data to collect.
#[derive(Debug, Clone)]
pub struct ClockSampling {
    /// Batches; each yields one GCD estimate and one chain estimate.
    pub batches: usize,
    /// Interleaved rounds per batch (the GCD uses each expression's minimum
    /// and next-to-minimum over these).
    pub rounds: usize,
    /// Target length of one timed block, ns.
    pub block_ns: f64,
}

impl Default for ClockSampling {
    fn default() -> Self {
        // 32 batches × 7 rounds × 11 blocks × 40 µs ≈ 100 ms of timed work.
        ClockSampling {
            batches: DEFAULT_BATCHES,
            rounds: 7,
            block_ns: 40_000.0,
        }
    }
}

/// Collect the clock probe's raw data: per batch, `rounds` interleaved rounds
/// in which every expression and the add chain (N and 2N) are timed once.
/// Interleaving puts all methods under the same clock at the same moment,
/// so they can be compared batch by batch while the frequency drifts.
pub fn collect(plan: &ClockSampling) -> hwcal_model::ClockRaw {
    use hwcal_harness::{clockref, Timer};
    let timer = Timer::get();
    let start = Timer::wall_ns();
    let exprs = if expressions_supported() {
        expressions()
    } else {
        Vec::new()
    };
    // Size each kernel so one block lasts about `block_ns`, and at least
    // MIN_BLOCK_TICKS of a coarse counter (Arm's generic timer).
    let block_ns = plan.block_ns.max(timer.min_block_ns());
    let expr_iters: Vec<u64> = exprs
        .iter()
        .map(|e| {
            let run = e.run;
            hwcal_harness::bench::size_iters(
                timer,
                &mut |n| {
                    std::hint::black_box(run(n));
                },
                block_ns,
            )
        })
        .collect();
    let chain_iters = hwcal_harness::bench::size_iters(
        timer,
        &mut |n| {
            std::hint::black_box(clockref::add_chain(n));
        },
        block_ns,
    );
    let time = |f: &dyn Fn(u64) -> u64, n: u64| {
        let t0 = timer.now();
        std::hint::black_box(f(n));
        let t1 = timer.now();
        timer.elapsed_ns(t0, t1)
    };
    let mut batches = Vec::with_capacity(plan.batches);
    for _ in 0..plan.batches {
        let mut b = hwcal_model::ClockBatch {
            expr_ns: vec![Vec::with_capacity(plan.rounds); exprs.len()],
            chain_n_ns: Vec::with_capacity(plan.rounds),
            chain_2n_ns: Vec::with_capacity(plan.rounds),
        };
        for _ in 0..plan.rounds {
            b.chain_n_ns.push(time(&clockref::add_chain, chain_iters));
            for (i, e) in exprs.iter().enumerate() {
                let ns = time(&e.run, expr_iters[i]);
                b.expr_ns[i].push(ns / (expr_iters[i] * REPS) as f64);
            }
            b.chain_2n_ns.push(time(&clockref::add_chain, 2 * chain_iters));
        }
        batches.push(b);
    }
    hwcal_model::ClockRaw {
        expressions: exprs.iter().map(|e| e.text.to_string()).collect(),
        chain_adds: chain_iters * clockref::ADDS_PER_ITER,
        batches,
        tsc_mhz: timer.tsc_mhz(),
        duration_ms: (Timer::wall_ns() - start) as f64 / 1e6,
    }
}
