//! PROC version 11's groups: ranks of one command whose events are already statistics of
//! all of them keep their process times (and, when alike, their counters) as the group's
//! statistics rather than one exact value a rank.
//!
//! Why: in a regular program the ranks share their event streams, so a rank's own start,
//! end and `main` times to the nanosecond (its launch jitter) and the MPI runtime's own
//! noise in its counters were the only bytes that grew with the ranks — about 14 a rank,
//! 230 B from 4 to 16 ranks of a 1 KB trace. Kept as events' times are (the extremes with
//! the ranks that had them, the sum, the standard deviation), a group costs the same at
//! any size.
//! Sums of counters stay exact; the reader marks every value it made up as an estimate.

use cairn_format::bytes::{ByteReader, ByteWriter};

use super::{KernelIo, Process};
use crate::{Result, TraceError};

/// Groups at least this large keep statistics; a smaller one keeps each rank's own values
/// (exact and about as short).
const SMALLEST_GROUP: usize = 4;

/// Code bits of a process that keeps its own values: its times, its counters are already
/// an estimate (a trace it was merged from kept its group's statistics).
pub(super) const OWN_TIMES_ESTIMATED: u64 = 1;
pub(super) const OWN_COUNTERS_ESTIMATED: u64 = 2;
/// Codes from this one up: a group's member, `FIRST_GROUP + 4 × group + member bits`
/// ([`group_of`]).
pub(super) const FIRST_GROUP: u64 = 4;

/// A group keeps as statistics the counters of its members that lie close to the group's
/// median in every counter, at least [`SMALLEST_GROUP`] of them; the others (an
/// aggregator writing 8 times the others' bytes) keep their own. Close: byte counts within
/// 1/16 of the larger or a page (4 KiB), so the members' range is within 1/8 (8 KiB) and
/// an estimate stays that close to the rank's own — a per-rank reading of them (the
/// kernel's bytes no traced call accounts for, flagged above 256 KiB) keeps pointing at
/// the right ranks. (The floor was 16 bytes until 2026-11-29: HDF5's ranks that are not
/// MPI-IO aggregators write 0 to 2 KiB each — the runtime's and the library's own small
/// writes — so 14 of 16 kept their own counters, 87 of the trace's 4,493 bytes.) Call and
/// event counts, which no reading compares between ranks, within a quarter or 32 (the MPI
/// runtime's progress: 16 ranks of one real run made 127 to 180 write calls, another 148
/// to 159).
fn close(column: usize, value: u64, median: u64) -> bool {
    let high = value.max(median);
    let allowed = match BYTE_COUNTERS.contains(&column) {
        true => (high >> 4).max(4096),
        false => (high >> 2).max(32),
    };
    value.abs_diff(median) <= allowed
}

/// Which of [`counters`]' columns count bytes.
const BYTE_COUNTERS: [usize; 4] = [0, 1, 4, 5];

/// How PROC version 11 keeps each process's times and counters.
pub(super) struct Groups {
    /// Per process: below [`FIRST_GROUP`], it keeps its own values (with the
    /// `OWN_*_ESTIMATED` bits); from it, `FIRST_GROUP + 4 × group + bits`, bit 1 when it
    /// keeps its own counters and bit 2 when those are an estimate already.
    pub codes: Vec<u64>,
    /// Each group's processes, in process order.
    pub members: Vec<Vec<usize>>,
    /// Whether each group keeps counters as statistics (of its members without bit 1).
    pub counters: Vec<bool>,
}

/// Code bits of a group's member: it keeps its own counters; they are an estimate already.
pub(super) const MEMBER_OWN_COUNTERS: u64 = 1;
pub(super) const MEMBER_COUNTERS_ESTIMATED: u64 = 2;

/// A code's group and member bits (`None`: the process keeps its own values).
pub(super) fn group_of(code: u64) -> Option<(usize, u64)> {
    let group = code.checked_sub(FIRST_GROUP)?;
    Some(((group / 4) as usize, group % 4))
}

impl Groups {
    /// Whether process `index`'s counters are its group's statistics.
    pub fn counters_grouped(&self, index: usize) -> bool {
        group_of(self.codes[index])
            .is_some_and(|(group, bits)| bits & MEMBER_OWN_COUNTERS == 0 && self.counters[group])
    }
}

/// Groups the ranks whose every stream is one that ranks share (`shared`). Ranks of one
/// command (executable, arguments, directory) that ended alike and whose `main` the tracer
/// saw alike are a group; forks and exec'd images keep their own.
pub(super) fn groups(processes: &[Process], shared: &[bool]) -> Groups {
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut group_of = std::collections::HashMap::new();
    for (index, process) in processes.iter().enumerate() {
        let eligible = shared.get(index).copied().unwrap_or(false)
            && process.rank.is_some()
            && process.parent.is_none()
            && process.exec_of.is_none()
            && !process.forked;
        if !eligible {
            continue;
        }
        let key = (
            &process.executable,
            &process.arguments,
            &process.working_directory,
            process.ending,
            process.main_start.is_some(),
        );
        let group = *group_of.entry(key).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[group].push(index);
    }
    members.retain(|group| group.len() >= SMALLEST_GROUP);
    let mut codes: Vec<u64> = processes
        .iter()
        .map(|process| {
            process.group_times as u64 * OWN_TIMES_ESTIMATED
                + process.group_counters as u64 * OWN_COUNTERS_ESTIMATED
        })
        .collect();
    let mut grouped_counters = Vec::with_capacity(members.len());
    for (group, indices) in members.iter().enumerate() {
        let values: Vec<Option<[u64; COUNTERS]>> = indices
            .iter()
            .map(|index| counters(&processes[*index]))
            .collect();
        let known: Vec<[u64; COUNTERS]> = values.iter().flatten().copied().collect();
        let medians: [u64; COUNTERS] = std::array::from_fn(|column| {
            let mut column: Vec<u64> = known.iter().map(|values| values[column]).collect();
            column.sort_unstable();
            column.get(column.len() / 2).copied().unwrap_or(0)
        });
        let near: Vec<bool> = values
            .iter()
            .map(|values| {
                values.is_some_and(|values| {
                    (0..COUNTERS).all(|column| close(column, values[column], medians[column]))
                })
            })
            .collect();
        let grouped = near.iter().filter(|near| **near).count() >= SMALLEST_GROUP;
        grouped_counters.push(grouped);
        for (position, index) in indices.iter().enumerate() {
            let own = !(grouped && near[position]);
            let estimated = own && processes[*index].group_counters;
            codes[*index] = FIRST_GROUP
                + 4 * group as u64
                + own as u64 * MEMBER_OWN_COUNTERS
                + estimated as u64 * MEMBER_COUNTERS_ESTIMATED;
        }
    }
    let counters = grouped_counters;
    Groups {
        codes,
        members,
        counters,
    }
}

/// How many counters a group keeps: the kernel's six columns as PROC stores them, then the
/// runtime's events counted but not kept.
pub(super) const COUNTERS: usize = 7;

/// A process's counters as a group keeps them (`None` without the kernel's).
pub(crate) fn counters(process: &Process) -> Option<[u64; COUNTERS]> {
    let io = process.kernel_io?;
    // The kernel's bytes beyond the runtime's dropped ones: what the rest of the process
    // moved, alike from rank to rank (the runtime's own vary more).
    let [read, written] = process.runtime_bytes_dropped;
    Some([
        io.read_bytes.wrapping_sub(read),
        io.written_bytes.wrapping_sub(written),
        io.read_calls,
        io.write_calls,
        read,
        written,
        process.runtime_events_dropped,
    ])
}

/// Sets what [`counters`] reads.
pub(super) fn set_counters(process: &mut Process, values: [u64; COUNTERS]) {
    let [read_beyond, written_beyond, read_calls, write_calls, read, written, events] = values;
    process.kernel_io = Some(KernelIo {
        read_bytes: read_beyond.wrapping_add(read),
        written_bytes: written_beyond.wrapping_add(written),
        read_calls,
        write_calls,
    });
    process.runtime_bytes_dropped = [read, written];
    process.runtime_events_dropped = events;
}

/// One value over a group's members (a time in time steps, or a counter), as events'
/// timing is kept: the extremes with the members that had them, the exact sum and the
/// standard deviation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Spread {
    min: u64,
    at_min: usize,
    max: u64,
    at_max: usize,
    /// The sum of the values' excess over `min` (exact: counters' totals stay exact).
    excess: u64,
    deviation: u64,
}

impl Spread {
    pub fn of(values: &[u64]) -> Spread {
        let mut spread = Spread {
            min: u64::MAX,
            at_min: 0,
            max: 0,
            at_max: 0,
            excess: 0,
            deviation: 0,
        };
        for (index, value) in values.iter().copied().enumerate() {
            if value < spread.min {
                (spread.min, spread.at_min) = (value, index);
            }
            if value > spread.max || index == 0 {
                (spread.max, spread.at_max) = (value, index);
            }
        }
        let excess: Vec<u64> = values.iter().map(|value| value - spread.min).collect();
        spread.excess = excess
            .iter()
            .fold(0u64, |sum, value| sum.saturating_add(*value));
        let count = values.len().max(1) as f64;
        let mean = spread.excess as f64 / count;
        let variance = excess
            .iter()
            .map(|value| (*value as f64 - mean).powi(2))
            .sum::<f64>()
            / count;
        spread.deviation = variance.sqrt().round() as u64;
        spread
    }

    /// Offsets from the minimum, so ranks that started within milliseconds of one another
    /// cost a few bytes whenever the run began.
    pub fn write(&self, out: &mut ByteWriter) {
        out.u64(self.min);
        out.u64(self.at_min as u64);
        out.u64(self.max - self.min);
        out.u64(self.at_max as u64);
        out.u64(self.excess);
        out.u64(self.deviation);
    }

    pub fn read(reader: &mut ByteReader, members: usize) -> Result<Spread> {
        let invalid = |what: &str| TraceError::Invalid(format!("section PROC: {what}"));
        let min = reader.u64()?;
        let at_min = reader.u64()?;
        let range = reader.u64()?;
        let max = min
            .checked_add(range)
            .ok_or_else(|| invalid("group value out of range"))?;
        let at_max = reader.u64()?;
        let excess = reader.u64()?;
        let deviation = reader.u64()?;
        let members = members as u64;
        // The excess lies between the extremes' and all members at the maximum.
        let fits = at_min < members
            && at_max < members
            && (range == 0 || at_min != at_max)
            && excess >= range
            && excess as u128 <= range as u128 * members as u128;
        if !fits {
            return Err(invalid("group statistics out of range"));
        }
        Ok(Spread {
            min,
            at_min: at_min as usize,
            max,
            at_max: at_max as usize,
            excess,
            deviation,
        })
    }

    /// Values for the group's members: the extremes at the members that had them, the
    /// others around the rest's mean so that the group's sum (exactly) and deviation
    /// (within rounding) are the ones kept, so a trace merged again keeps them.
    pub fn values(&self, members: usize) -> Vec<u64> {
        if self.min == self.max || members < 2 {
            return vec![self.min; members];
        }
        let mut excess = vec![0u64; members];
        excess[self.at_max] = self.max - self.min;
        let others: Vec<usize> = (0..members)
            .filter(|index| *index != self.at_min && *index != self.at_max)
            .collect();
        if others.is_empty() {
            return excess.iter().map(|value| self.min + value).collect();
        }
        // Relative to the minimum, so squares of nanoseconds since the run's start keep
        // their precision.
        let count = members as f64;
        let high = (self.max - self.min) as f64;
        let rest = (self.excess as f64 - high).max(0.0);
        let mean = self.excess as f64 / count;
        let squares =
            (count * (self.deviation as f64).powi(2) + count * mean * mean - high * high).max(0.0);
        let center = (rest / others.len() as f64).clamp(0.0, high);
        let spread = (squares / others.len() as f64 - center * center)
            .max(0.0)
            .sqrt();
        let odd_last = others.len() % 2 == 1;
        for (position, index) in others.iter().enumerate() {
            let offset = match (position % 2, odd_last && position + 1 == others.len()) {
                (_, true) => 0.0,
                (0, _) => spread,
                _ => -spread,
            };
            excess[*index] = (center + offset).clamp(0.0, high).round() as u64;
        }
        // The sum exactly: rounding's remainder spread over the others, a unit or more at
        // a time, none leaving the extremes.
        let target = self.excess - (self.max - self.min);
        loop {
            let sum: u64 = others.iter().map(|index| excess[*index]).sum();
            if sum == target {
                break;
            }
            let (up, missing) = match sum < target {
                true => (true, target - sum),
                false => (false, sum - target),
            };
            let step = (missing / others.len() as u64).max(1);
            let mut moved = false;
            let mut left = missing;
            for index in &others {
                let value = &mut excess[*index];
                let room = match up {
                    true => (self.max - self.min) - *value,
                    false => *value,
                };
                let change = step.min(room).min(left);
                if change > 0 {
                    match up {
                        true => *value += change,
                        false => *value -= change,
                    }
                    (moved, left) = (true, left - change);
                }
                if left == 0 {
                    break;
                }
            }
            if !moved {
                break;
            }
        }
        excess.iter().map(|value| self.min + value).collect()
    }
}
