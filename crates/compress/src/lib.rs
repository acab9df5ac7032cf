//! Pure compression algorithms, testable without any process or file.
//!
//! - [`stream`]: value encodings that make repeated events equal (files bound to their
//!   descriptor or stepping per calling context, offsets relative to where the previous
//!   access ended, results relative to requests), and the folded stream's bytes.
//! - [`fold`]: online loop folding of those events into nested loops.
//! - [`stats`]: mergeable timing statistics kept per event-in-loop.
//! - [`histogram`]: adaptive histograms with exact count, sum, min and max, for the values a
//!   precision level below 100 lets differ (sizes, offsets, loop counts).
//!
//! - [`ranks`]: merging the folded streams of MPI ranks that did the same thing.
//! - [`grammar`]: Sequitur, only to measure the choice below against it.
//!
//! Design decision: loops (ScalaTrace's RSD/PRSD, thesis ch. 2 and 4) built online in a
//! bounded window, not a grammar (Sequitur, as Recorder and Pilgrim do). Reasons:
//! a loop node is directly what analyses and replay need (an iteration count and one body
//! to walk, so a summary of 10^9 folded calls costs what two iterations cost), statistics
//! attach naturally to an event-in-loop, and the window bounds both memory and the work per
//! event (amortised O(64) hash comparisons, and for bodies of 65 to 1,024 nodes — a solver
//! iteration exchanging with 26 neighbours — one per earlier node with the newest node's
//! hash, `recurrence.rs`). Measured on the same symbols (each event's
//! key after the relative encodings) from real runs (`bench/grammar_comparison.sh`,
//! 2026-11-22, this 2-core VM): tests/programs/loops.c folds to 29 nodes at 10^3, 10^5 and
//! 10^6 iterations, where Sequitur's grammar grows 58 → 76 → 84 symbols (a run of n repeats
//! costs it log n rules), and folding runs at 3.2–3.5 M events/s against Sequitur's 1.6–1.7;
//! `dd` 16 nodes against 56 symbols; the checkpoint example 34 against 47. A grammar wins
//! on irregular streams, because it also finds repeats that are not adjacent: `tar` of
//! /usr/include (75 215 events, 6 682 distinct keys) leaves 66 964 nodes, Sequitur 17 265
//! symbols in 1 485 rules (3.9× fewer) at 2.2 M events/s against folding's 1.3; a Python
//! script writing arrays 757 nodes against 482 symbols. So the loops stay (constant size
//! for loops, which is what the trace-size goals are about); a grammar over the leaves of
//! streams that do not fold is the measured next step for irregular I/O.
//!
//! Measured (2026-11-22, 2-core x86_64 VM, `cargo bench -p cairn-compress`, medians of 5):
//! folding runs at 4.5 M events/s on one core for a loop-structured stream (2·10^6 events
//! fold to 1.4 KB) and 1.8 M events/s for an irregular one (random offsets and sizes, which
//! do not fold: 31 B/event before the section's zstd). On real runs
//! (`bench/trace_sizes.sh`, re-measured late 2026-11-22): tests/programs/loops.c gives a
//! 1.5 KB trace for 10^3 and for 10^6 outer iterations (6.8·10^6 events); `dd` of 100 000
//! blocks 1.2 KB against 906 KB for zstd -19 of the raw event records; `tar` of
//! /usr/include (irregular) 497 KB against 719 KB.

pub mod fold;
pub mod grammar;
pub mod hash;
pub mod histogram;
pub mod ranks;
mod recurrence;
pub mod stats;
pub mod stream;
