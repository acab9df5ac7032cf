//! Timestamps for events.
//!
//! Where the time-stamp counter is constant and non-stop (`constant_tsc` and `nonstop_tsc`
//! in /proc/cpuinfo), events are stamped with `rdtsc` (about 7 ns) instead of
//! `clock_gettime(CLOCK_MONOTONIC)` (about 17 ns); two per event, this was a third of the
//! tracer's added cost. Ticks become nanoseconds when the trace is built, from
//! (ticks, monotonic) pairs: two taken 100 µs apart at start-up, and one more in every chunk
//! header, so the conversion is interpolated between close pairs and survives `SIGKILL`.
//! Elsewhere (no usable TSC, other architectures) events use `CLOCK_MONOTONIC`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use cairn_format::segment::{CLOCK_MONOTONIC_NS, CLOCK_TSC, HISTOGRAM_BOUNDS_NS};

static USE_TSC: AtomicBool = AtomicBool::new(false);
static CALIBRATED: AtomicBool = AtomicBool::new(false);
/// The histogram bins' bounds in this process's clock units (see [`histogram_bounds`]).
static HISTOGRAM_BOUNDS: [AtomicU64; 7] = [const { AtomicU64::new(0) }; 7];

/// The two start-up calibration pairs: ticks and monotonic ns.
static FIRST: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static SECOND: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

#[inline(always)]
pub fn monotonic() -> u64 {
    crate::sys::clock(libc::CLOCK_MONOTONIC)
}

#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if USE_TSC.load(Ordering::Relaxed) {
        // SAFETY: rdtsc has no preconditions on x86_64.
        return unsafe { std::arch::x86_64::_rdtsc() };
    }
    monotonic()
}

fn tsc_is_usable() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let cpuinfo = crate::sys::read_small_file(b"/proc/cpuinfo", 64 * 1024);
    let Some(flags) = cpuinfo
        .split(|byte| *byte == b'\n')
        .find(|line| line.starts_with(b"flags"))
    else {
        return false;
    };
    let has = |flag: &[u8]| {
        flags
            .split(|byte| *byte == b' ' || *byte == b'\t')
            .any(|word| word == flag)
    };
    has(b"constant_tsc") && has(b"nonstop_tsc")
}

/// Chooses the clock and calibrates it (once per process tree: a forked child inherits
/// the calibration). Returns the clock kind and the calibration pairs for the header.
pub fn initialise() -> (u32, Vec<(u64, u64)>) {
    if !CALIBRATED.swap(true, Ordering::AcqRel) && tsc_is_usable() {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: rdtsc has no preconditions on x86_64.
            let ticks = || unsafe { std::arch::x86_64::_rdtsc() };
            let (first_ticks, first_time) = (ticks(), monotonic());
            let mut second = (first_ticks, first_time);
            while second.1 < first_time + 100_000 {
                second = (ticks(), monotonic());
            }
            FIRST[0].store(first_ticks, Ordering::Relaxed);
            FIRST[1].store(first_time, Ordering::Relaxed);
            SECOND[0].store(second.0, Ordering::Relaxed);
            SECOND[1].store(second.1, Ordering::Relaxed);
            USE_TSC.store(second.0 > first_ticks, Ordering::Release);
        }
    }
    let ticks_per_nanosecond = if USE_TSC.load(Ordering::Acquire) {
        let ticks = SECOND[0].load(Ordering::Relaxed) - FIRST[0].load(Ordering::Relaxed);
        let time = SECOND[1].load(Ordering::Relaxed) - FIRST[1].load(Ordering::Relaxed);
        ticks as f64 / time.max(1) as f64
    } else {
        1.0
    };
    for (bound, nanoseconds) in HISTOGRAM_BOUNDS.iter().zip(HISTOGRAM_BOUNDS_NS) {
        bound.store(
            (nanoseconds as f64 * ticks_per_nanosecond) as u64,
            Ordering::Relaxed,
        );
    }
    if USE_TSC.load(Ordering::Acquire) {
        let pairs = vec![
            (
                FIRST[0].load(Ordering::Relaxed),
                FIRST[1].load(Ordering::Relaxed),
            ),
            (
                SECOND[0].load(Ordering::Relaxed),
                SECOND[1].load(Ordering::Relaxed),
            ),
            (now(), monotonic()),
        ];
        (CLOCK_TSC, pairs)
    } else {
        (CLOCK_MONOTONIC_NS, Vec::new())
    }
}

/// The histogram bin of a duration in clock units (the trace's decade bins, converted with
/// the start-up calibration).
#[inline(always)]
pub fn histogram_bin(value: u64) -> usize {
    HISTOGRAM_BOUNDS
        .iter()
        .position(|bound| value < bound.load(Ordering::Relaxed))
        .unwrap_or(HISTOGRAM_BOUNDS.len())
}
