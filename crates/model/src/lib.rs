//! The vocabulary every other cairn crate speaks: the call table (one row per hooked call,
//! see [`for_each_call!`]), the [`Layer`] and [`CallClass`] of each call, and the decoded
//! [`Event`].
//!
//! Design decisions: no I/O and no `unsafe` here, so that the reader, the analyses and the
//! preload library can all depend on it. The call table is a `macro_rules!` table (the Rust
//! form of an X-macro) so that adding a hooked call is one row: this crate derives the enum
//! and its metadata from the row, the preload crate derives the hook.

mod calls;
mod jitter;

pub use calls::{posts_request, Call, CallClass, FortranBinding, Layer, MessageBytes};
pub use jitter::JitterSteps;

/// Marks an offset or file that is not known.
pub const UNKNOWN: i64 = -1;

/// One execution of a hooked call, as the reader hands it out.
///
/// Fields that do not apply to a call are zero (or [`UNKNOWN`] for `offset`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Index into the trace's call-name table.
    pub call: u16,
    /// Start, in nanoseconds since the start of the run.
    pub start: u64,
    /// Duration in nanoseconds.
    pub duration: u64,
    /// Index into the trace's file table, or `None` when the call touched no known file.
    pub file: Option<u32>,
    /// File descriptor (POSIX) or stream address (stdio) the call used.
    pub handle: u64,
    /// File offset of the access: explicit (`pwrite`) or tracked (`write`); `UNKNOWN` if
    /// neither (e.g. `O_APPEND`).
    pub offset: i64,
    /// Bytes (or items) asked for.
    pub request: u64,
    /// The call's result, in bytes for data calls; negative on failure.
    pub result: i64,
    /// `errno` after a failed call, else 0.
    pub errno: i32,
    /// Index into the process's calling-context table.
    pub context: u32,
    /// Call-specific extra value: open flags, new fd of a dup, seek whence, rename target.
    pub aux: u64,
    /// Bit set of [`event_flags`].
    pub flags: u32,
}

/// Bits of [`Event::flags`].
pub mod event_flags {
    /// The call failed (result < 0 or a NULL stream).
    pub const FAILED: u32 = 1;
    /// The event happened before the program's `main` started.
    pub const BEFORE_MAIN: u32 = 2;
    /// The offset was given by the program (pread/pwrite), not tracked.
    pub const EXPLICIT_OFFSET: u32 = 4;
    /// The event happened inside the MPI library's start-up or shut-down (`MPI_Init`,
    /// `MPI_Finalize`): the runtime's I/O, not the program's.
    pub const IN_RUNTIME: u32 = 8;
    /// The event happened inside an MPI-IO call of the same thread: a sub-call the MPI
    /// library made, not one the program made.
    pub const INSIDE_MPIIO: u32 = 16;

    /// A receive or probe that named `MPI_ANY_SOURCE`: the peer kept is the source that
    /// matched (from the status), not the wildcard.
    pub const ANY_SOURCE: u32 = 32;
    /// A receive or probe that named `MPI_ANY_TAG`: the tag kept is the one that matched.
    pub const ANY_TAG: u32 = 64;

    /// A seek to an absolute position (`SEEK_SET`) that succeeded: its request is the
    /// position reached (see [`positional`](crate::positional)).
    pub const REQUEST_AT_POSITION: u32 = 128;
    /// A call whose result is the position reached (`lseek`, `ftell`), and that succeeded.
    pub const RESULT_AT_POSITION: u32 = 256;
    /// `aux` is an MPI-IO explicit offset (`MPI_File_write_at` and the like; in etypes of
    /// the file view). A trace keys it against the last one at the same calling context,
    /// so offsets advancing by a transfer size repeat — whatever the library below does
    /// with the file in between.
    pub const OFFSET_IN_AUX: u32 = 512;
    /// The call came through MPI's Fortran bindings (the trace names it as the C call).
    pub const FORTRAN: u32 = 1024;
    /// The event happened inside a call of a library layer (HDF5, NetCDF, a generated
    /// layer) of the same thread: an MPI-IO, MPI or POSIX call that library made for the
    /// program's call, which is its parent.
    pub const INSIDE_LIBRARY: u32 = 2048;
    /// aux names another file of the stream (a rename's new name, index + 1), and the
    /// event has a file: a trace keys it as its difference from the event's own file, so
    /// renaming each item of a directory to its neighbour's name (mdtest's rename phase)
    /// repeats.
    pub const AUX_IS_FILE: u32 = 4096;
    /// aux holds ranks that change with the rank (an `MPI_Comm_made` share's: the world
    /// rank of the new communicator's rank 0 and this rank's rank in it): the rank merge
    /// lets them follow a slope, so ranks that split or duplicate a communicator alike
    /// share one leaf.
    pub const AUX_IS_RANKS: u32 = 8192;
    /// A completion of one request, a receive (`MPI_Wait`, `MPI_Test` on it): `aux`
    /// holds the source that matched in its low 32 bits, as a point-to-point call's peer,
    /// and the request count above ([`completion_requests`](crate::completion_requests)),
    /// so a halo exchange's waits name their neighbours as its receives do and ranks
    /// merge them alike.
    pub const COMPLETED_FROM: u32 = 1 << 14;
    /// Set by expansion only, never stored: the event stands in a folded leaf of several
    /// occurrences, so its start and duration are the leaf's mean gap and duration.
    pub const TIMES_FROM_STATISTICS: u32 = 1 << 30;
    /// Set by expansion only, for a replay on another rank count, never stored: the event
    /// comes from a part of the trace only one recorded rank had, so its values have no
    /// slope to follow the rank (its peers are its model rank's).
    pub const FROM_ONE_RANK: u32 = 1 << 24;

    /// The runtime's I/O, not the program's: before `main`, or inside MPI start-up/shut-down.
    /// One rule for every reader (summary, dump, noise classification).
    pub const RUNTIME: u32 = BEFORE_MAIN | IN_RUNTIME;
}

/// The one rule by which a seek's values that name the position it reached are kept as
/// differences from that position (its offset), so that `lseek(fd, i * 4096, SEEK_SET)` —
/// IOR's POSIX idiom — has the same stored values in every iteration and folds like a
/// `pwrite` does. The tracer stores raw events this way and the trace builder keys events
/// this way; readers get absolute values back. The flags say which values are positions,
/// so nothing about the call's name is needed to undo it.
/// The peer (low 32 bits) and tag (high 32) an MPI point-to-point event keeps in `aux`
/// (a rooted collective keeps its root as the peer); −1 and −2 are wildcards or none.
pub fn peer_and_tag(aux: u64) -> (i32, i32) {
    (aux as u32 as i32, (aux >> 32) as u32 as i32)
}

/// How many requests a completion (`MPI_Wait*`, `MPI_Test*`) named: its `aux`, or above
/// the source it kept ([`event_flags::COMPLETED_FROM`]).
pub fn completion_requests(aux: u64, flags: u32) -> u64 {
    if flags & event_flags::COMPLETED_FROM != 0 {
        aux >> 32
    } else {
        aux
    }
}

/// The source a completion of one receive kept ([`event_flags::COMPLETED_FROM`]).
pub fn completion_source(aux: u64, flags: u32) -> Option<i32> {
    (flags & event_flags::COMPLETED_FROM != 0).then_some(aux as u32 as i32)
}

pub mod positional {
    use crate::event_flags::{REQUEST_AT_POSITION, RESULT_AT_POSITION};

    /// (request, result) as stored: positions as differences from `offset`.
    #[inline(always)]
    pub fn relative(flags: u32, offset: i64, request: u64, result: i64) -> (u64, i64) {
        moved(flags, offset.wrapping_neg(), request, result)
    }

    /// The inverse of [`relative`].
    #[inline(always)]
    pub fn absolute(flags: u32, offset: i64, request: u64, result: i64) -> (u64, i64) {
        moved(flags, offset, request, result)
    }

    /// The values that are positions, moved by `by` (the same event `by` further on).
    #[inline(always)]
    pub fn moved(flags: u32, by: i64, request: u64, result: i64) -> (u64, i64) {
        let request = if flags & REQUEST_AT_POSITION != 0 {
            request.wrapping_add(by as u64)
        } else {
            request
        };
        let result = if flags & RESULT_AT_POSITION != 0 {
            result.wrapping_add(by)
        } else {
            result
        };
        (request, result)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_seek_to_its_position_is_kept_as_zero_and_comes_back() {
            let both = REQUEST_AT_POSITION | RESULT_AT_POSITION;
            for offset in [0i64, 4096, 1 << 40] {
                assert_eq!(relative(both, offset, offset as u64, offset), (0, 0));
                assert_eq!(absolute(both, offset, 0, 0), (offset as u64, offset));
            }
            // fseek returns 0: only its request is a position.
            assert_eq!(relative(REQUEST_AT_POSITION, 8192, 8192, 0), (0, 0));
            assert_eq!(absolute(REQUEST_AT_POSITION, 8192, 0, 0), (8192, 0));
            // SEEK_CUR by -16 reaching 100: the request stays, the result is the position.
            assert_eq!(
                relative(RESULT_AT_POSITION, 100, -16i64 as u64, 100),
                (-16i64 as u64, 0)
            );
            assert_eq!(moved(both, 4096, 0, 0), (4096, 4096));
            assert_eq!(relative(0, 100, 7, 9), (7, 9));
        }
    }
}

impl Event {
    pub fn failed(&self) -> bool {
        self.flags & event_flags::FAILED != 0
    }

    /// Bytes actually moved by a data call.
    pub fn bytes(&self) -> u64 {
        if self.failed() {
            0
        } else {
            self.result.max(0) as u64
        }
    }

    pub fn end(&self) -> u64 {
        self.start + self.duration
    }
}

/// The one rule by which a calling context's offsets are irregular (random access): the
/// tracer stages such a site's repetitions as a list of offsets (an offsets record, about 8
/// bytes a call) and the trace builder keeps them in its stream's column, so that their keys
/// repeat and the calls fold. Steps are counted among the last [`IrregularSteps::KEPT`]
/// distinct ones: a site becomes irregular once [`IrregularSteps::IRREGULAR_FROM`] steps in
/// a row were new, regular again once [`IrregularSteps::REGULAR_FROM`] in a row were not (a
/// random step that happens to repeat one of the last does not end a loop of random
/// accesses). Fixed-size and allocation-free, so the preload library keeps one per thread.
///
/// A count per hash bucket of the kept steps answers most look-ups of a new step without
/// scanning them: random steps are all new, and a scan of the 64 kept ones per call was an
/// eighth of the trace build of a million random reads (and paid again in the tracer).
#[derive(Clone, Debug)]
pub struct IrregularSteps {
    steps: [i64; IrregularSteps::KEPT],
    /// Kept steps per bucket ([`IrregularSteps::bucket`]); at most `KEPT`, so a byte.
    buckets: [u8; IrregularSteps::BUCKETS],
    kept: u8,
    next: u8,
    new_in_a_row: u32,
    seen_in_a_row: u32,
    irregular: bool,
}

impl Default for IrregularSteps {
    fn default() -> IrregularSteps {
        IrregularSteps {
            steps: [0; IrregularSteps::KEPT],
            buckets: [0; IrregularSteps::BUCKETS],
            kept: 0,
            next: 0,
            new_in_a_row: 0,
            seen_in_a_row: 0,
            irregular: false,
        }
    }
}

impl IrregularSteps {
    /// As many distinct steps as a loop body the folder can find has events: a regular
    /// pattern with that many distinct steps at one call site still repeats its keys.
    pub const KEPT: usize = 64;
    /// New steps in a row that make a call site irregular. Regular loops see a new step
    /// only at their start and at each level's turn, between runs of seen ones; a loop body
    /// with many accesses at one call site sees its steps once, in its first iteration:
    /// short of this, they stay in the keys.
    pub const IRREGULAR_FROM: u32 = 16;
    /// Seen steps in a row that make it regular again.
    pub const REGULAR_FROM: u32 = 4;
    /// Buckets of the membership counts: 8 per kept step, so a new step scans the kept
    /// ones about one time in nine.
    const BUCKETS: usize = 512;

    fn bucket(step: i64) -> usize {
        // Fibonacci hashing: offsets' steps are multiples of large powers of two, which
        // the top bits of the product still spread.
        ((step as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - 9)) as usize
    }

    /// Takes the next step; whether the call site's offsets are now irregular.
    #[inline]
    pub fn step(&mut self, step: i64) -> bool {
        let bucket = Self::bucket(step);
        let seen = self.buckets[bucket] > 0 && self.steps[..self.kept as usize].contains(&step);
        if seen {
            self.new_in_a_row = 0;
            self.seen_in_a_row = self.seen_in_a_row.saturating_add(1);
            if self.seen_in_a_row >= Self::REGULAR_FROM {
                self.irregular = false;
            }
        } else {
            if (self.kept as usize) < Self::KEPT {
                self.steps[self.kept as usize] = step;
                self.kept += 1;
            } else {
                let evicted = Self::bucket(self.steps[self.next as usize]);
                self.buckets[evicted] -= 1;
                self.steps[self.next as usize] = step;
                self.next = ((self.next as usize + 1) % Self::KEPT) as u8;
            }
            self.buckets[bucket] += 1;
            self.seen_in_a_row = 0;
            self.new_in_a_row = self.new_in_a_row.saturating_add(1);
            if self.new_in_a_row >= Self::IRREGULAR_FROM {
                self.irregular = true;
            }
        }
        self.irregular
    }

    /// Whether the site's offsets are irregular now.
    pub fn is_irregular(&self) -> bool {
        self.irregular
    }

    /// Forgets every step (a new call site): a store per kept step (the steps past `kept`
    /// are never read), as the tracer does it at every event that repeats nothing.
    #[inline]
    pub fn reset(&mut self) {
        for step in &self.steps[..self.kept as usize] {
            self.buckets[Self::bucket(*step)] = 0;
        }
        self.kept = 0;
        self.next = 0;
        self.new_in_a_row = 0;
        self.seen_in_a_row = 0;
        self.irregular = false;
    }
}

/// The one rule by which a calling context's read or write sizes keep being new
/// (compressed blocks), so that the tracer stages such calls in offsets records of sizes
/// and the trace builder keeps their sizes in its stream's column (their keys then repeat
/// and the calls fold). A size is expected when it repeats the one a period back — the
/// site's sizes follow a cycle (one size, 4 KiB and 512 B in turn, a loop over twenty
/// variables of their own sizes); on a size that does not, the period becomes the distance
/// to that size's last occurrence among the last [`WanderingSizes::KEPT`] (none if absent).
/// Sizes wander once [`WanderingSizes::WANDERING_FROM`] of the last 64 were unexpected
/// — in a row (random sizes, deflated chunks) or not: a progress line printed every step
/// (`"step %ld residual %g"`, 20 to 30 bytes) keeps one length for a few steps, then
/// another, and as runs and blocks of equal sizes it cost a loop per change (12.2 KB for
/// 2,000 steps) — and stop once [`WanderingSizes::REGULAR_FROM`] in a row were expected
/// (a long run of one size folds as well in the keys). Unlike offsets' rule ([`IrregularSteps`]: a step
/// seen among the last 64 distinct counts as regular), a size that merely occurred lately
/// is not expected: sizes that drift within a narrow band (an HDF5 dataset's deflated
/// chunks, a few thousand bytes each) repeat recent ones by chance, and under the
/// offsets' rule went back to the keys (real HDF5 1.10, 10,000 deflated chunks: 3,851
/// leaves of one call). Fixed-size and allocation-free, so the preload library keeps one
/// per thread.
#[derive(Clone, Debug)]
pub struct WanderingSizes {
    /// The last sizes, newest at `(next + KEPT - 1) % KEPT`; `kept` of them valid.
    sizes: [u64; WanderingSizes::KEPT],
    next: u8,
    kept: u8,
    /// The cycle the sizes are expected to follow (0: none yet).
    period: u8,
    /// A bit per step among the last 64, newest lowest, set where the size was unexpected.
    unexpected: u64,
    expected_in_a_row: u32,
    wandering: bool,
}

impl Default for WanderingSizes {
    fn default() -> WanderingSizes {
        WanderingSizes {
            sizes: [0; WanderingSizes::KEPT],
            next: 0,
            kept: 0,
            period: 0,
            unexpected: 0,
            expected_in_a_row: 0,
            wandering: false,
        }
    }
}

impl WanderingSizes {
    /// The longest cycle of sizes followed: as many as a loop body the folder can find
    /// has events.
    pub const KEPT: usize = 64;
    /// Unexpected sizes among the last 64 that make a site's sizes wander.
    pub const WANDERING_FROM: u32 = 8;
    /// Expected sizes in a row that end it: as many as the unexpected ones are counted
    /// over, so a site that stops wandering starts again only after 8 new changes.
    pub const REGULAR_FROM: u32 = 64;

    /// The size `distance` (1 = the last) back, if kept.
    fn back(&self, distance: usize) -> Option<u64> {
        (distance >= 1 && distance <= self.kept as usize)
            .then(|| self.sizes[(self.next as usize + Self::KEPT - distance) % Self::KEPT])
    }

    /// Whether the site's sizes wander (as the last step said).
    pub fn is_wandering(&self) -> bool {
        self.wandering
    }

    /// Takes the next size; whether the site's sizes wander now.
    #[inline]
    pub fn step(&mut self, size: u64) -> bool {
        self.take(size, false)
    }

    /// Takes the next size as the tracer sees a site: only where its repetitions stopped
    /// being equal (the rest of the time they are folded into runs and blocks) or within
    /// one burst of calls, whose state the next other call resets. Eight changes among
    /// its last 64 samples can then be eight among thousands of calls (a CG iteration's
    /// halo reads, four levels' face, edge and corner sizes), and staging them apart broke
    /// the iteration's block every time (1.4 MB staged instead of 320 KB). There the
    /// sizes wander only once [`WanderingSizes::SAMPLED_IN_A_ROW`] samples in a row were
    /// unexpected; they stop as [`WanderingSizes::step`]'s do.
    #[inline]
    pub fn step_sampled(&mut self, size: u64) -> bool {
        self.take(size, true)
    }

    /// Unexpected samples in a row that make a sampled site's sizes wander.
    pub const SAMPLED_IN_A_ROW: u32 = 16;

    #[inline]
    fn take(&mut self, size: u64, sampled: bool) -> bool {
        let expected = self.period > 0 && self.back(self.period as usize) == Some(size);
        if expected {
            self.expected_in_a_row = self.expected_in_a_row.saturating_add(1);
        } else {
            self.period = (1..=self.kept as usize)
                .find(|distance| self.back(*distance) == Some(size))
                .unwrap_or(0) as u8;
            self.expected_in_a_row = 0;
        }
        self.unexpected = self.unexpected << 1 | !expected as u64;
        if self.wandering {
            self.wandering = self.expected_in_a_row < Self::REGULAR_FROM;
        } else if sampled {
            let in_a_row = (1u64 << Self::SAMPLED_IN_A_ROW) - 1;
            self.wandering = self.unexpected & in_a_row == in_a_row;
        } else {
            self.wandering = self.unexpected.count_ones() >= Self::WANDERING_FROM;
        }
        self.sizes[self.next as usize] = size;
        self.next = ((self.next as usize + 1) % Self::KEPT) as u8;
        self.kept = (self.kept as usize + 1).min(Self::KEPT) as u8;
        self.wandering
    }

    /// Takes `times` more sizes that each repeat the one a period back (a loop's
    /// repetitions folded as a block: the period its first repetitions found holds for
    /// the others), at the cost of at most `KEPT + period` steps. Without a period (no
    /// size taken yet) it does nothing.
    pub fn repeat(&mut self, times: u64) {
        let period = self.period as u64;
        if period == 0 || times == 0 {
            return;
        }
        // The kept sizes after `times` more of the cycle: the cycle at the phase `times`
        // leaves it.
        let steps = if times > Self::KEPT as u64 {
            Self::KEPT as u64 + (times - Self::KEPT as u64) % period
        } else {
            times
        };
        for _ in 0..steps {
            let size = self.back(period as usize).unwrap_or(0);
            self.sizes[self.next as usize] = size;
            self.next = ((self.next as usize + 1) % Self::KEPT) as u8;
            self.kept = (self.kept as usize + 1).min(Self::KEPT) as u8;
        }
        self.unexpected = self
            .unexpected
            .checked_shl(times.min(64) as u32)
            .unwrap_or(0);
        self.expected_in_a_row = self
            .expected_in_a_row
            .saturating_add(times.min(u32::MAX as u64) as u32);
        if self.wandering {
            self.wandering = self.expected_in_a_row < Self::REGULAR_FROM;
        }
    }

    /// Forgets every size (a new call site): a few stores (the kept sizes are not read
    /// again), as the tracer does it at every event that repeats nothing.
    #[inline]
    pub fn reset(&mut self) {
        self.next = 0;
        self.kept = 0;
        self.period = 0;
        self.unexpected = 0;
        self.expected_in_a_row = 0;
        self.wandering = false;
    }
}

/// Upper bounds (inclusive) of Darshan's access-size bins; the last bin is open.
pub const SIZE_BINS: [u64; 9] = [
    100,
    1 << 10,
    10 << 10,
    100 << 10,
    1 << 20,
    4 << 20,
    10 << 20,
    100 << 20,
    1 << 30,
];
pub const SIZE_BIN_NAMES: [&str; 10] = [
    "0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M", "100M-1G",
    "1G+",
];

pub fn size_bin(size: u64) -> usize {
    SIZE_BINS
        .iter()
        .position(|bound| size <= *bound)
        .unwrap_or(SIZE_BINS.len())
}

#[cfg(test)]
mod irregular_tests {
    use super::IrregularSteps;

    /// The rule as first written: a scan of the kept steps, oldest replaced first.
    struct Scanned {
        steps: Vec<i64>,
        next: usize,
        new_in_a_row: u32,
        seen_in_a_row: u32,
        irregular: bool,
    }

    impl Scanned {
        fn step(&mut self, step: i64) -> bool {
            if self.steps.contains(&step) {
                self.new_in_a_row = 0;
                self.seen_in_a_row += 1;
                if self.seen_in_a_row >= IrregularSteps::REGULAR_FROM {
                    self.irregular = false;
                }
            } else {
                if self.steps.len() < IrregularSteps::KEPT {
                    self.steps.push(step);
                } else {
                    self.steps[self.next] = step;
                    self.next = (self.next + 1) % IrregularSteps::KEPT;
                }
                self.seen_in_a_row = 0;
                self.new_in_a_row += 1;
                if self.new_in_a_row >= IrregularSteps::IRREGULAR_FROM {
                    self.irregular = true;
                }
            }
            self.irregular
        }
    }

    #[test]
    fn bucket_counts_answer_as_a_scan_of_the_kept_steps_would() {
        let mut state = 99u64;
        let mut random = move |range: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % range
        };
        // Ranges of steps from always new to mostly seen, with resets between phases.
        for range in [3, 40, 64, 70, 100, 1000, 1 << 30] {
            let mut fast = IrregularSteps::default();
            let mut scanned = Scanned {
                steps: Vec::new(),
                next: 0,
                new_in_a_row: 0,
                seen_in_a_row: 0,
                irregular: false,
            };
            for index in 0..20_000u32 {
                if index % 5_000 == 4_999 {
                    fast.reset();
                    scanned = Scanned {
                        steps: Vec::new(),
                        next: 0,
                        new_in_a_row: 0,
                        seen_in_a_row: 0,
                        irregular: false,
                    };
                }
                let step = (random(range) as i64 - range as i64 / 2) * 4096;
                assert_eq!(
                    fast.step(step),
                    scanned.step(step),
                    "range {range} step {index}"
                );
            }
        }
    }

    #[test]
    fn random_steps_turn_irregular_at_the_sixteenth_and_regular_after_four_seen() {
        let mut steps = IrregularSteps::default();
        let mut state = 12345u64;
        let mut random = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as i64
        };
        for index in 1..=16 {
            assert_eq!(steps.step(random()), index == 16, "step {index}");
        }
        // A new step keeps it irregular, and so do seen ones until four in a row were seen.
        assert!(steps.step(4096));
        for seen in 1..=4 {
            assert_eq!(steps.step(4096), seen < 4, "seen {seen}");
        }
        // A loop of eight distinct steps at one site never turns irregular.
        let mut regular = IrregularSteps::default();
        for round in 0..10 {
            for step in 0..8 {
                assert!(!regular.step(step * 8), "round {round} step {step}");
            }
        }
    }

    #[test]
    fn sizes_in_a_cycle_are_expected_and_sizes_in_a_band_wander() {
        use super::WanderingSizes;
        let mut state = 7u64;
        let mut draw = move |range: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % range
        };
        // Sizes drawn from a band of 100 values (deflated chunks): offsets' rule turns
        // regular again and again; the sizes wander from the eighth on.
        let (mut offsets_rule, mut sizes_rule) =
            (IrregularSteps::default(), WanderingSizes::default());
        let (mut regular_offsets, mut kept_sizes) = (0, 0);
        for index in 0..10_000 {
            let size = 6000 + draw(100);
            regular_offsets += (!offsets_rule.step(size as i64) && index >= 16) as u32;
            kept_sizes += (!sizes_rule.step(size) && index >= 7) as u32;
        }
        assert!(regular_offsets > 5_000, "{regular_offsets}");
        assert_eq!(kept_sizes, 0);
        // One size repeated: expected from the third (the second finds the period), back
        // in the keys at the 64th expected one.
        assert!(sizes_rule.step(4096));
        assert!(sizes_rule.step(4096));
        for expected in 1..=64 {
            assert_eq!(sizes_rule.step(4096), expected < 64, "expected {expected}");
        }
        // A cycle of a a b never wanders; one of twenty sizes of their own (a loop over
        // variables) wanders in its first round (all new), and stops in the second.
        let mut cycle = WanderingSizes::default();
        for round in 0..100 {
            for size in [512u64, 512, 8192] {
                assert!(!cycle.step(size), "round {round}");
            }
        }
        let mut variables = WanderingSizes::default();
        let sizes: Vec<u64> = (0..20).map(|index| 1000 + 37 * index).collect();
        let mut wandering = Vec::new();
        for _ in 0..10 {
            for size in &sizes {
                wandering.push(variables.step(*size));
            }
        }
        // Wandering from the 8th size of the first round until the 64th expected one
        // (the second round's first finds the period, the next 63 are expected).
        let first = wandering.iter().position(|w| *w).unwrap();
        let last = wandering.iter().rposition(|w| *w).unwrap();
        assert_eq!((first, last), (7, 83));
        assert!(wandering[last + 1..].iter().all(|w| !w));
        // A size that changes every few steps among a handful (a progress line's length:
        // a residual printed with `%g`) wanders, though rarely twice in a row; one that
        // changes once in a hundred steps (a step number's digits) never does.
        let mut progress = WanderingSizes::default();
        let mut length = 28;
        let lengths: Vec<bool> = (0..640)
            .map(|_| {
                if draw(5) == 0 {
                    length = 27 + draw(4);
                }
                progress.step(length)
            })
            .collect();
        let first = lengths.iter().position(|w| *w).unwrap();
        assert!((8..64).contains(&first), "{first}");
        assert!(lengths[first..].iter().all(|w| *w));
        // A block's repetitions taken at once leave the rule as taking them one by one.
        for times in [1u64, 5, 63, 64, 65, 200] {
            let (mut one_by_one, mut at_once) =
                (WanderingSizes::default(), WanderingSizes::default());
            for size in [
                100u64, 200, 300, 100, 200, 300, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            ] {
                one_by_one.step(size);
                at_once.step(size);
            }
            for size in [100u64, 200, 300, 100, 200, 300] {
                one_by_one.step(size);
                at_once.step(size);
            }
            let cycle = [100u64, 200, 300];
            for index in 0..times {
                one_by_one.step(cycle[index as usize % 3]);
            }
            at_once.repeat(times);
            for size in [100u64, 200, 300, 100, 42] {
                assert_eq!(
                    one_by_one.step(size),
                    at_once.step(size),
                    "{times} then {size}"
                );
            }
        }
        let mut digits = WanderingSizes::default();
        for step in 1..100_000u64 {
            assert!(!digits.step(20 + step.ilog10() as u64), "step {step}");
        }
    }
}
