//! Interruption without leftovers: a probe that makes files on disk holds
//! the signals that would kill it mid-way, stops at its next chance and
//! removes them on its normal path.

use crate::{Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// While alive, SIGINT, SIGTERM and SIGHUP raise `stop` instead of killing
/// the process, so a probe stops where it can and removes what it made on
/// its normal path (the I/O probe's test file, the os probe's scratch
/// directory). A second SIGINT while the first is being handled exits at
/// once (130). Once dropped, the signals take their
/// default action again (signal-hook cannot uninstall a handler, so a
/// conditional "run the default action" is registered up front).
pub(crate) struct StopOnSignal {
    pub(crate) stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
}

impl StopOnSignal {
    pub(crate) fn install() -> Result<StopOnSignal> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal_hook::flag::register_conditional_default(sig, Arc::clone(&done))
                .context("installing a signal handler")?;
        }
        signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(&stop))
            .context("installing the SIGINT handler")?;
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal_hook::flag::register(sig, Arc::clone(&stop)).context("installing a signal handler")?;
        }
        Ok(StopOnSignal { stop, done })
    }

    /// Whether a signal asked to stop.
    pub(crate) fn raised(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

impl Drop for StopOnSignal {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}
