//! Per I/O layer (POSIX, stdio, MPI-IO, and library layers such as HDF5), Darshan's
//! job-summary figures: operations by kind, the access-size histogram and the most common
//! access sizes, the sequential and consecutive shares, and the I/O time per rank (mean,
//! the slowest rank and its time, the variance across ranks). MPI-IO's POSIX sub-calls
//! count at the POSIX layer, as Darshan's POSIX module counts the calls ROMIO makes, and a
//! library's MPI-IO sub-calls at the MPI-IO layer.
//!
//! Fed one occurrence at a time by the summary's walk; the sizes are counted exactly (a
//! folded loop's leaf has one size), so memory is one counter per distinct size and rank.

use std::collections::{BTreeMap, HashMap};

use cairn_model::{CallClass, Layer};
use cairn_trace::walk::Occurrence;
use serde::Serialize;

use crate::summary::size_bin;

/// Most common access sizes kept per layer.
const COMMON_SIZES: usize = 4;

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct CommonSize {
    pub size: u64,
    pub count: u64,
}

/// I/O time per rank (or per process, without MPI), seconds.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct RankTimes {
    pub ranks: u64,
    pub mean: f64,
    pub max: f64,
    /// The rank (or pid, without MPI) that spent `max`.
    pub slowest: Option<u32>,
    pub variance: f64,
    /// Some ranks shared one stream (they did the same thing): their times are shares of
    /// its statistics, so the figures above are estimates.
    pub estimated: bool,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct LayerProfile {
    /// Calls by class (`read`, `write`, `open`, `seek`, `stat`, `sync`...).
    pub operations: BTreeMap<String, u64>,
    /// Darshan's size bins (see `SIZE_BIN_NAMES`), successful reads and writes.
    pub read_histogram: [u64; 10],
    pub write_histogram: [u64; 10],
    /// The most frequent sizes of reads and writes together, most frequent first.
    pub common_sizes: Vec<CommonSize>,
    /// Reads and writes, and how many of them were sequential and consecutive (Darshan's
    /// definitions, as for files).
    pub accesses: u64,
    pub sequential: u64,
    pub consecutive: u64,
    /// Time in this layer's calls per rank.
    pub time_per_rank: RankTimes,
    #[serde(skip)]
    sizes: HashMap<u64, u64>,
    #[serde(skip)]
    times: BTreeMap<u32, f64>,
    #[serde(skip)]
    order: [f64; 2],
    #[serde(skip)]
    shared: bool,
}

/// Every I/O layer's profile.
#[derive(Clone, Debug, Default)]
pub struct LayerProfiles(pub BTreeMap<String, LayerProfile>);

impl LayerProfiles {
    pub fn add_occurrence(&mut self, occurrence: &Occurrence) {
        if !matches!(occurrence.layer, Layer::Posix | Layer::Stdio | Layer::MpiIo)
            && !occurrence.layer.is_library()
        {
            return;
        }
        let profile = self
            .0
            .entry(occurrence.layer.name().to_string())
            .or_default();
        *profile
            .operations
            .entry(occurrence.class.name().to_string())
            .or_default() += occurrence.count;
        let who = occurrence.process.rank.unwrap_or(occurrence.process.pid);
        profile.shared |= occurrence.stream.members > 1;
        *profile.times.entry(who).or_default() += occurrence.time / 1e9;
        if !matches!(occurrence.class, CallClass::Read | CallClass::Write) || occurrence.failed() {
            return;
        }
        let histogram = if occurrence.class == CallClass::Read {
            &mut profile.read_histogram
        } else {
            &mut profile.write_histogram
        };
        let sizes = &mut profile.sizes;
        occurrence.for_each_size(|size, count| {
            histogram[size_bin(size)] += count;
            *sizes.entry(size).or_default() += count;
        });
        profile.accesses += occurrence.count;
        let [consecutive, sequential] = occurrence.access_order();
        profile.order[0] += consecutive;
        profile.order[1] += sequential;
    }

    /// The figures made from the counters, once the walk is over.
    pub fn finish(mut self) -> BTreeMap<String, LayerProfile> {
        for profile in self.0.values_mut() {
            let mut sizes: Vec<CommonSize> = profile
                .sizes
                .iter()
                .map(|(size, count)| CommonSize {
                    size: *size,
                    count: *count,
                })
                .collect();
            sizes.sort_by(|a, b| b.count.cmp(&a.count).then(a.size.cmp(&b.size)));
            sizes.truncate(COMMON_SIZES);
            profile.common_sizes = sizes;
            profile.consecutive = profile.order[0].round() as u64;
            profile.sequential = profile.order[1].round() as u64;
            let ranks = profile.times.len() as f64;
            if ranks > 0.0 {
                let mean = profile.times.values().sum::<f64>() / ranks;
                let (slowest, max) =
                    profile
                        .times
                        .iter()
                        .fold((None, f64::MIN), |(who, max), (rank, time)| {
                            if *time > max {
                                (Some(*rank), *time)
                            } else {
                                (who, max)
                            }
                        });
                let variance = profile
                    .times
                    .values()
                    .map(|time| (time - mean) * (time - mean))
                    .sum::<f64>()
                    / ranks;
                profile.time_per_rank = RankTimes {
                    ranks: ranks as u64,
                    mean,
                    max,
                    slowest,
                    variance,
                    estimated: profile.shared,
                };
            }
        }
        self.0
    }
}
