//! Pure compression algorithms, testable without any process or file.
//!
//! Today: [`columns`], a lossless columnar encoding of one thread's event stream. Each field
//! goes to its own column, coded as the difference to what the previous event predicts
//! (start as a delta, result relative to the request, offset relative to where the previous
//! access ended), so a regular stream becomes long runs of equal small varints that zstd
//! then shrinks to almost nothing. Loop folding, value patterns and histograms (the
//! ScalaTrace / thesis structures) will sit on top of the same columns.

pub mod columns;
pub mod fold;
pub mod stats;
pub mod stream;
