//! Insights: the I/O problems an HPC I/O expert looks for first, each with its evidence (the
//! files, ranks and call sites it comes from) and what to do about it, from the summary's
//! figures alone. The rules and default thresholds are Drishti's (the Darshan report
//! analyser HPC users know), so a cairn report and a Drishti report of the same job agree;
//! every threshold can be changed by a JSON file (`--thresholds FILE`, the fields of
//! [`Thresholds`]).
//!

use serde::{Deserialize, Serialize};

use crate::summary::{FileSummary, Summary, SIZE_BINS};

/// When each insight is raised. A share is a fraction (0.1 = 10%).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// A request of at most this many bytes is small (rounded down to a bound of Darshan's
    /// size bins).
    pub small_request_bytes: u64,
    /// Small requests: more than this share of the reads and writes...
    pub small_requests_share: f64,
    /// ...and more than this many of them.
    pub small_requests_count: u64,
    /// Random accesses (not starting at or after the previous one's end): more than this
    /// share of the reads and writes...
    pub random_share: f64,
    /// ...and more than this many of them.
    pub random_count: u64,
    /// Ranks' bytes: (heaviest − mean) / heaviest above this is imbalance worth a warning...
    pub imbalance_warn: f64,
    /// ...and above this, a serious one.
    pub imbalance_high: f64,
    /// Rank 0 moving more than this share of all ranks' bytes (it, not the others, is the
    /// bottleneck: said instead of imbalance).
    pub rank_zero_share: f64,
    /// Independent MPI-IO reads and writes above this count, with no collective one.
    pub independent_mpiio_count: u64,
    /// MPI-IO reads and writes above this count, none of them non-blocking.
    pub blocking_mpiio_count: u64,
    /// stdio moving more than this share of the bytes.
    pub stdio_share: f64,
    /// Shares of the bytes (rank 0's, the busiest rank's, stdio's) are judged only when
    /// at least this many moved: a few kilobytes of a job's log cannot be its bottleneck
    /// (mdtest's 1.2 KB of output was "rank 0 moves 100% of the bytes").
    pub volume_bytes: u64,
    /// Time in metadata calls (open, close, stat, seek, sync...) per process, seconds.
    pub metadata_seconds: f64,
    /// Bytes read beyond a file's extent (read more than once), as a share of its reads.
    pub redundant_read_share: f64,
    /// The file-system alignment POSIX requests' offsets are checked against.
    pub alignment_bytes: u64,
    /// Misaligned POSIX reads and writes above this share.
    pub misaligned_share: f64,
    /// Alignment is judged on traces of at most this many events (it expands the trace).
    pub alignment_check_events: u64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            small_request_bytes: 1 << 20,
            small_requests_share: 0.10,
            small_requests_count: 1000,
            random_share: 0.20,
            random_count: 1000,
            imbalance_warn: 0.15,
            imbalance_high: 0.30,
            rank_zero_share: 0.50,
            independent_mpiio_count: 1000,
            blocking_mpiio_count: 1000,
            stdio_share: 0.10,
            volume_bytes: 64 << 10,
            metadata_seconds: 30.0,
            redundant_read_share: 0.10,
            alignment_bytes: 4096,
            misaligned_share: 0.10,
            alignment_check_events: 50_000_000,
        }
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Insight {
    /// `small_requests`, `misaligned`, `random_access`, `rank_imbalance`, `rank_zero`, `no_collective_io`,
    /// `no_nonblocking_io`, `stdio`, `metadata_time`, `redundant_reads`.
    pub id: &'static str,
    /// `high` or `warn`.
    pub level: &'static str,
    pub message: String,
    /// The evidence: the files (most concerned first), ranks and call sites it comes from.
    pub files: Vec<String>,
    pub ranks: Vec<u32>,
    pub call_sites: Vec<String>,
    pub recommendation: &'static str,
}

/// At most this many files or call sites named as evidence.
const EVIDENCE: usize = 5;

/// A path of the program's data, not a terminal, pipe, socket or kernel file.
fn is_data_file(path: &str) -> bool {
    path.starts_with("/dev/shm/")
        || ![
            "/dev/",
            "/proc/",
            "/sys/",
            "pipe:",
            "socket:",
            "anon_inode:",
        ]
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

fn percent(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

/// The files with the largest `figure`, most first, those with none left out.
fn files_by(files: &[&FileSummary], figure: impl Fn(&FileSummary) -> f64) -> Vec<String> {
    let mut files: Vec<(f64, &str)> = files
        .iter()
        .map(|file| (figure(file), file.path.as_str()))
        .filter(|(value, _)| *value > 0.0)
        .collect();
    files.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    files
        .into_iter()
        .take(EVIDENCE)
        .map(|(_, path)| path.to_string())
        .collect()
}

/// The call sites of calls of `classes` whose mean request passes `keep`, most calls first.
fn call_sites_by(summary: &Summary, classes: &[&str], keep: impl Fn(f64) -> bool) -> Vec<String> {
    let mut sites: Vec<(u64, String)> = summary
        .call_sites
        .iter()
        .filter(|site| {
            summary
                .calls
                .get(&site.call)
                .is_some_and(|call| classes.contains(&call.class.as_str()))
                && site.count > 0
                && keep(site.bytes as f64 / site.count as f64)
        })
        .map(|site| {
            let place = site
                .location
                .as_deref()
                .map(|at| format!(" ({at})"))
                .unwrap_or_default();
            (site.count, format!("{}{place}", site.stack))
        })
        .collect();
    sites.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    sites
        .into_iter()
        .take(EVIDENCE)
        .map(|(_, site)| site)
        .collect()
}

/// Every insight the summary's figures raise, in a fixed order.
pub fn insights(summary: &Summary, thresholds: &Thresholds) -> Vec<Insight> {
    let mut found = Vec::new();
    let t = thresholds;
    // The program's data files: terminals, pipes, sockets and kernel files are left out
    // (a program's messages on its terminal are not its I/O pattern).
    let files: Vec<&FileSummary> = summary
        .files
        .iter()
        .filter(|file| is_data_file(&file.path))
        .collect();
    let requests: u64 = files.iter().map(|f| f.reads + f.writes).sum();

    // Small requests.
    let small_bins = SIZE_BINS
        .iter()
        .take_while(|bound| **bound <= t.small_request_bytes)
        .count();
    let small_of = |file: &FileSummary| -> u64 {
        file.read_histogram[..small_bins].iter().sum::<u64>()
            + file.write_histogram[..small_bins].iter().sum::<u64>()
    };
    let small: u64 = files.iter().copied().map(small_of).sum();
    if share(small as f64, requests as f64) > t.small_requests_share
        && small > t.small_requests_count
    {
        found.push(Insight {
            id: "small_requests",
            level: "high",
            message: format!(
                "{small} of {requests} reads and writes ({}) move at most {} bytes each",
                percent(share(small as f64, requests as f64)),
                SIZE_BINS[small_bins.saturating_sub(1)]
            ),
            files: files_by(&files, |f| small_of(f) as f64),
            ranks: Vec::new(),
            call_sites: call_sites_by(summary, &["read", "write"], |mean| {
                mean <= t.small_request_bytes as f64
            }),
            recommendation: "gather small requests into larger ones (a buffer, collective MPI-IO, HDF5 chunking or a library that aggregates), so each request moves at least a file-system block",
        });
    }

    // Misaligned POSIX requests.
    let (checked, misaligned) = summary
        .files
        .iter()
        .filter_map(|file| file.alignment)
        .fold((0, 0), |(a, m), counts| {
            (a + counts.accesses, m + counts.misaligned)
        });
    if share(misaligned as f64, checked as f64) > t.misaligned_share {
        found.push(Insight {
            id: "misaligned",
            level: "high",
            message: format!(
                "{misaligned} of {checked} POSIX reads and writes ({}) start off a {}-byte boundary",
                percent(share(misaligned as f64, checked as f64)),
                t.alignment_bytes
            ),
            files: files_by(&files, |f| f.alignment.map_or(0.0, |a| a.misaligned as f64)),
            ranks: Vec::new(),
            call_sites: call_sites_by(summary, &["read", "write"], |_| true),
            recommendation: "start requests at multiples of the file system's block or stripe size (pad records, or set MPI-IO's striping hints so aggregators write whole stripes)",
        });
    }

    // Random accesses, on files whose access order is known: not MPI-IO's (its offsets, in
    // etypes of a view, are not ordered here).
    let ordered = |file: &FileSummary| !file.layers.contains_key("mpiio");
    let random_of = |file: &FileSummary| -> u64 {
        if !ordered(file) {
            return 0;
        }
        (file.reads + file.writes).saturating_sub(file.sequential_reads + file.sequential_writes)
    };
    let random: u64 = files.iter().copied().map(random_of).sum();
    let requests: u64 = files
        .iter()
        .filter(|file| ordered(file))
        .map(|f| f.reads + f.writes)
        .sum();
    if share(random as f64, requests as f64) > t.random_share && random > t.random_count {
        found.push(Insight {
            id: "random_access",
            level: "high",
            message: format!(
                "{random} of {requests} reads and writes ({}) start before the previous one on their file ended: random access",
                percent(share(random as f64, requests as f64))
            ),
            files: files_by(&files, |f| random_of(f) as f64),
            ranks: Vec::new(),
            call_sites: call_sites_by(summary, &["read", "write"], |_| true),
            recommendation: "access files in increasing offset order, or sort requests before issuing them (collective MPI-IO does this for you)",
        });
    }

    // Rank 0 doing most of the I/O, or ranks moving unequal amounts.
    let mut ranks: Vec<(u32, u64)> = summary
        .process_list
        .iter()
        .filter_map(|p| Some((p.rank?, p.bytes_read + p.bytes_written)))
        .collect();
    ranks.sort_unstable();
    ranks.dedup_by(|a, b| {
        if a.0 == b.0 {
            b.1 += a.1;
            true
        } else {
            false
        }
    });
    let ranks_total: u64 = ranks.iter().map(|r| r.1).sum();
    if ranks.len() > 1 && ranks_total >= t.volume_bytes {
        let total = ranks_total;
        let (heaviest, most) = ranks
            .iter()
            .copied()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .unwrap_or_default();
        let mean = total as f64 / ranks.len() as f64;
        let imbalance = share(most as f64 - mean, most as f64);
        let zero_share = share(
            ranks.iter().find(|r| r.0 == 0).map_or(0, |r| r.1) as f64,
            total as f64,
        );
        if heaviest == 0 && zero_share > t.rank_zero_share {
            found.push(Insight {
                id: "rank_zero",
                level: "high",
                message: format!(
                    "rank 0 moves {} of all ranks' bytes ({most} of {total})",
                    percent(zero_share)
                ),
                files: files_by(&files, |f| {
                    if f.ranks.contains(&0) {
                        (f.bytes_read + f.bytes_written) as f64
                    } else {
                        0.0
                    }
                }),
                ranks: vec![0],
                call_sites: Vec::new(),
                recommendation: "spread the I/O over the ranks (each writes its part, or collective MPI-IO with aggregators), rather than gathering data to rank 0",
            });
        } else if imbalance > t.imbalance_warn {
            let mut heavy: Vec<(u32, u64)> = ranks
                .iter()
                .copied()
                .filter(|r| r.1 as f64 > mean * (1.0 + t.imbalance_warn))
                .collect();
            heavy.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            found.push(Insight {
                id: "rank_imbalance",
                level: if imbalance > t.imbalance_high { "high" } else { "warn" },
                message: format!(
                    "the busiest rank ({heaviest}) moves {most} bytes, the ranks' mean is {mean:.0}: {} imbalance",
                    percent(imbalance)
                ),
                files: Vec::new(),
                ranks: heavy.into_iter().take(EVIDENCE).map(|r| r.0).collect(),
                call_sites: Vec::new(),
                recommendation: "balance the data each rank reads and writes, or let collective MPI-IO redistribute it",
            });
        }
    }

    // MPI-IO: no collective calls, no non-blocking calls.
    let data_call = |name: &str| name.contains("read") || name.contains("write");
    let mpiio_data: Vec<(&String, u64)> = summary
        .mpiio_calls
        .iter()
        .filter(|(name, _)| data_call(name))
        .map(|(name, call)| (name, call.count))
        .collect();
    let collective = |name: &str| name.contains("_all") || name.contains("_ordered");
    let independent: u64 = mpiio_data
        .iter()
        .filter(|(n, _)| !collective(n))
        .map(|c| c.1)
        .sum();
    let collective_count: u64 = mpiio_data
        .iter()
        .filter(|(n, _)| collective(n))
        .map(|c| c.1)
        .sum();
    if collective_count == 0 && independent > t.independent_mpiio_count {
        found.push(Insight {
            id: "no_collective_io",
            level: "high",
            message: format!("{independent} independent MPI-IO reads and writes, no collective one"),
            files: files_by(&files, |f| f.layers.get("mpiio").copied().unwrap_or(0) as f64),
            ranks: Vec::new(),
            call_sites: call_sites_by(summary, &["read", "write"], |_| true)
                .into_iter()
                .filter(|site| site.contains("MPI_File_"))
                .collect(),
            recommendation: "use collective MPI-IO (MPI_File_write_all, MPI_File_read_at_all...) so the library can aggregate the ranks' requests",
        });
    }
    let all_mpiio: u64 = mpiio_data.iter().map(|c| c.1).sum();
    let non_blocking = mpiio_data
        .iter()
        .any(|(name, _)| name.starts_with("MPI_File_i"));
    if !non_blocking && all_mpiio > t.blocking_mpiio_count {
        found.push(Insight {
            id: "no_nonblocking_io",
            level: "warn",
            message: format!("{all_mpiio} MPI-IO reads and writes, none of them non-blocking"),
            files: files_by(&files, |f| f.layers.get("mpiio").copied().unwrap_or(0) as f64),
            ranks: Vec::new(),
            call_sites: Vec::new(),
            recommendation: "overlap I/O with computation with non-blocking MPI-IO (MPI_File_iwrite_at, MPI_File_iwrite_all...) where the data is not needed at once",
        });
    }

    // stdio.
    let total_bytes = (summary.bytes_read + summary.bytes_written) as f64;
    let stdio = summary.layers.get("stdio").map_or(0, |layer| layer.bytes) as f64;
    if total_bytes >= t.volume_bytes as f64 && share(stdio, total_bytes) > t.stdio_share {
        found.push(Insight {
            id: "stdio",
            level: "warn",
            message: format!(
                "stdio (fread, fwrite, fprintf...) moves {} of the bytes ({stdio:.0} of {total_bytes:.0})",
                percent(share(stdio, total_bytes))
            ),
            files: files_by(&files, |f| f.layers.get("stdio").copied().unwrap_or(0) as f64),
            ranks: Vec::new(),
            call_sites: call_sites_by(summary, &["read", "write"], |_| true)
                .into_iter()
                .filter(|site| ["fwrite", "fread", "fprintf", "fputs", "fgets", "fscanf", "printf", "puts"].iter().any(|call| site.contains(call)))
                .collect(),
            recommendation: "stdio buffers are small and serialise the stream: write bulk data with POSIX, MPI-IO or an I/O library",
        });
    }

    // Metadata time.
    let metadata: f64 = files.iter().copied().map(|f| f.meta_time).sum();
    let per_process = metadata / summary.processes.max(1) as f64;
    if per_process > t.metadata_seconds {
        found.push(Insight {
            id: "metadata_time",
            level: "high",
            message: format!(
                "each process spends {per_process:.3} s on average in metadata calls (open, close, stat, seek, sync...)"
            ),
            files: files_by(&files, |f| f.meta_time),
            ranks: Vec::new(),
            call_sites: call_sites_by(summary, &["open", "close", "stat", "meta", "seek", "sync"], |_| true),
            recommendation: "open files once and keep them open, avoid stat and seek in loops, and use fewer, larger files",
        });
    }

    // Redundant reads: more bytes read from a file than its extent (judged only where the
    // extent is known: MPI-IO's offsets, in etypes of a view, do not give one).
    let redundant_of = |file: &FileSummary| -> f64 {
        if file.max_offset == 0 {
            return 0.0;
        }
        let extra = file.bytes_read.saturating_sub(file.max_offset) as f64;
        if share(extra, file.bytes_read as f64) > t.redundant_read_share {
            extra
        } else {
            0.0
        }
    };
    let redundant: f64 = files.iter().copied().map(redundant_of).sum();
    if redundant > 0.0 {
        found.push(Insight {
            id: "redundant_reads",
            level: "warn",
            message: format!(
                "{redundant:.0} bytes were read again: files read beyond their extent, so parts of them more than once"
            ),
            files: files_by(&files, redundant_of),
            ranks: Vec::new(),
            call_sites: call_sites_by(summary, &["read"], |_| true),
            recommendation: "read data once and keep it in memory, or read it on one rank and broadcast it",
        });
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn terminals_pipes_and_kernel_files_are_not_data() {
        for path in [
            "/dev/pts/0",
            "/dev/null",
            "pipe:[1234]",
            "/proc/self/status",
            "socket:[9]",
        ] {
            assert!(!super::is_data_file(path), "{path}");
        }
        for path in ["/dev/shm/ior.dat", "/scratch/a.h5", "/tmp/x"] {
            assert!(super::is_data_file(path), "{path}");
        }
    }
}
