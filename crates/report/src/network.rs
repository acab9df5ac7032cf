//! The radial I/O network's data (shared/seeds/001, sections III–IV): who carried whose I/O
//! to which storage, and the latency and size values seen on each link, by time.
//!
//! Rings, outside in:
//! - the application's processes, by rank (then pid);
//! - the nodes that carried their I/O: with MPI-IO, the ranks that made the POSIX calls
//!   inside MPI-IO calls (a collective call's aggregators, and each rank for its own
//!   independent calls); without MPI-IO, the hosts. Ordered by the ranks they serve, so
//!   edges cross as little as they can;
//! - the storage targets: the file system (mount point and type, as the reading machine
//!   mounts it) of each file.
//!
//! Values, as the seed defines them: application → I/O node, from the MPI-IO call's start on
//! the rank to the I/O node's first POSIX data call inside the same call (for a collective
//! call, the k-th call of that name on that file on every rank; an independent call is
//! carried by its own rank); I/O node → storage, the POSIX call's duration.
//! Without MPI-IO, both links carry the I/O calls' durations. Times across ranks are put on
//! one clock by the first collective `MPI_File_open`, which returns at the same moment on
//! every rank; latencies still negative after that are clamped to 0 and counted.
//!
//! Each value goes into a fine logarithmic bucket (8 per power of two) per time bin; the
//! display bins (between each ring's own minimum and maximum) are made from them at the end,
//! so one pass over the events suffices. Only I/O calls are expanded; memory is a bucket
//! count per (edge, time bin, bucket) seen, plus, with MPI-IO, each MPI-IO call's start.

use std::collections::{BTreeMap, HashMap};

use cairn_export::Filter;
use cairn_model::{CallClass, Event, Layer};
use cairn_trace::Trace;
use serde::Serialize;

/// Time bins over the run.
pub const TIME_BINS: u32 = 120;
/// Outer-ring segments at most: more ranks than this are shown as ranges.
pub const MAX_OUTER: u32 = 256;
/// Value bins of each edge's heat map.
pub const VALUE_BINS: u32 = 32;
/// Fine buckets per power of two.
const FINE: f64 = 8.0;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Node {
    pub label: String,
    /// The MPI rank or, without one, the pid (outer ring); the rank (middle ring of I/O
    /// ranks).
    pub id: u64,
}

/// One link: counts per (time bin, value bin) of latency and of request size.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Edge {
    /// 0: application → I/O node; 1: I/O node → storage.
    pub ring: u8,
    pub from: u32,
    pub to: u32,
    /// [time bin, value bin, count], sparse.
    pub latency: Vec<[u64; 3]>,
    pub size: Vec<[u64; 3]>,
}

/// The range of one ring's values: the display bins split [min, max] evenly on a log scale.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeBin {
    pub count: u64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Network {
    pub ranks: Vec<Node>,
    /// `aggregators` (I/O ranks under MPI-IO) or `hosts`.
    pub middle_kind: &'static str,
    pub middle: Vec<Node>,
    pub targets: Vec<Node>,
    pub edges: Vec<Edge>,
    /// Per ring: latency (ns) and size (bytes) ranges.
    pub latency_range: [Range; 2],
    pub size_range: [Range; 2],
    /// The span the time bins cover, ns since the run's start: from the first I/O call's
    /// start to the last one's end.
    pub time_start: u64,
    pub time_end: u64,
    pub time_bins: u32,
    pub value_bins: u32,
    /// Application-side latency (ns) per time bin: the timeline.
    pub timeline: Vec<TimeBin>,
    /// Latencies that stayed negative after the clock correction, clamped to 0.
    pub clamped: u64,
    /// The largest clock correction applied to a rank, ns.
    pub largest_correction: i64,
    /// Ranks per outer segment (1 unless there were more than [`MAX_OUTER`]).
    pub grouped: u32,
    /// I/O calls that are on no link (POSIX calls outside MPI-IO in an MPI-IO run, calls
    /// on descriptors that are not files).
    pub unlinked_calls: u64,
}

/// A value's fine bucket.
fn fine(value: f64) -> u32 {
    ((value.max(0.0) + 1.0).log2() * FINE).floor() as u32
}

fn fine_low(bucket: u32) -> f64 {
    (bucket as f64 / FINE).exp2() - 1.0
}

/// Counts per (edge, time bin, fine bucket), before the display bins are known.
#[derive(Default)]
struct Samples {
    latency: BTreeMap<(u8, u32, u32, u32, u32), u64>,
    size: BTreeMap<(u8, u32, u32, u32, u32), u64>,
    timeline: Vec<TimeBin>,
}

impl Samples {
    #[allow(clippy::too_many_arguments)]
    fn add(&mut self, ring: u8, from: u32, to: u32, time_bin: u32, latency: f64, size: u64) {
        *self
            .latency
            .entry((ring, from, to, time_bin, fine(latency)))
            .or_default() += 1;
        *self
            .size
            .entry((ring, from, to, time_bin, fine(size as f64)))
            .or_default() += 1;
        if ring == 0 {
            let bin = &mut self.timeline[time_bin as usize];
            if bin.count == 0 || latency < bin.min {
                bin.min = latency;
            }
            bin.max = bin.max.max(latency);
            bin.count += 1;
            bin.mean += (latency - bin.mean) / bin.count as f64;
        }
    }
}

/// The file system holding each path, by the longest mount point that is a prefix of it
/// (this machine's mounts: the trace does not record them).
struct Mounts(Vec<(String, String)>);

impl Mounts {
    fn read() -> Mounts {
        let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let mut mounts: Vec<(String, String)> = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split(' ');
                let _device = fields.next()?;
                let point = fields.next()?.replace("\\040", " ");
                let kind = fields.next()?.to_string();
                Some((point, kind))
            })
            .collect();
        mounts.sort_by_key(|(point, _)| std::cmp::Reverse(point.len()));
        Mounts(mounts)
    }

    fn target(&self, path: &str) -> String {
        for (point, kind) in &self.0 {
            let inside = path == point
                || point == "/"
                || path
                    .strip_prefix(point.as_str())
                    .is_some_and(|rest| rest.starts_with('/'));
            if inside {
                return format!("{point} ({kind})");
            }
        }
        let top = path.split('/').nth(1).unwrap_or_default();
        format!("/{top}")
    }
}

/// One MPI-IO call instance seen on a rank: when it started there, and when its first
/// POSIX data sub-call started (if it made any), and its bytes.
struct Instance {
    rank: u32,
    start: u64,
    first_subcall: Option<u64>,
    bytes: u64,
}

pub fn build(trace: &Trace, progress: Option<cairn_export::Progress>) -> Network {
    let mounts = Mounts::read();
    let filter = Filter {
        layers: Some(vec![Layer::Posix, Layer::Stdio, Layer::MpiIo]),
        ..Filter::default()
    };
    // The time axis spans the I/O, not the whole run (a job's I/O is often a short part of
    // it): a first walk over the I/O calls finds when it starts and ends.
    let (mut time_start, mut time_end) = (u64::MAX, 0u64);
    for stream in &trace.streams {
        filter.expand(trace, stream, |event| {
            time_start = time_start.min(event.start);
            time_end = time_end.max(event.start + event.duration);
            true
        });
    }
    if time_start > time_end {
        (time_start, time_end) = (0, 1);
    }
    let span = (time_end - time_start).max(1) as u128;
    let time_bin = |t: u64| {
        ((t.saturating_sub(time_start) as u128 * TIME_BINS as u128 / (span + 1)) as u32)
            .min(TIME_BINS - 1)
    };
    let filter = Filter { progress, ..filter };
    let data_call = |event: &Event| {
        matches!(
            trace.calls[event.call as usize].class(),
            Some(CallClass::Read | CallClass::Write)
        ) && !event.failed()
    };
    let path_of = |event: &Event| {
        event
            .file
            .map(|file| cairn_analyze::summary::escape_path(&trace.files[file as usize].path).0)
            .filter(|path| path.starts_with('/'))
    };
    let with_mpiio = trace
        .calls
        .iter()
        .any(|call| call.layer() == Some(Layer::MpiIo));

    // The outer ring: processes by rank, then pid.
    let mut processes: Vec<(Option<u32>, u32, u32)> = trace
        .processes
        .iter()
        .enumerate()
        .map(|(index, process)| (process.rank, process.pid, index as u32))
        .collect();
    processes.sort_by_key(|(rank, pid, _)| (rank.is_none(), *rank, *pid));
    processes.dedup_by_key(|(rank, _, _)| rank.map(u64::from).unwrap_or(u64::MAX));
    let mut outer_of_process: HashMap<u32, u32> = HashMap::new();
    let mut network = Network {
        time_start,
        time_end,
        time_bins: TIME_BINS,
        value_bins: VALUE_BINS,
        grouped: 1,
        ..Network::default()
    };
    for (position, (rank, pid, _)) in processes.iter().enumerate() {
        network.ranks.push(Node {
            label: rank.map_or(format!("pid {pid}"), |rank| format!("rank {rank}")),
            id: rank.map_or(*pid as u64, u64::from),
        });
        for (index, process) in trace.processes.iter().enumerate() {
            if process.rank.is_some() && process.rank == *rank || process.pid == *pid {
                outer_of_process
                    .entry(index as u32)
                    .or_insert(position as u32);
            }
        }
    }
    let mut samples = Samples {
        timeline: vec![TimeBin::default(); TIME_BINS as usize],
        ..Samples::default()
    };
    let mut targets: Vec<String> = Vec::new();
    let mut target_of = |path: &str| {
        let target = mounts.target(path);
        match targets.iter().position(|known| *known == target) {
            Some(index) => index as u32,
            None => {
                targets.push(target);
                targets.len() as u32 - 1
            }
        }
    };
    // Middle ring members as first met: (rank or host) → index.
    let mut middle: Vec<(u64, String)> = Vec::new();
    let mut middle_of = |key: u64, label: String| match middle.iter().position(|(k, _)| *k == key) {
        Some(index) => index as u32,
        None => {
            middle.push((key, label));
            middle.len() as u32 - 1
        }
    };
    // With MPI-IO: (file, call, k) → instances, and each rank's clock correction.
    let mut instances: HashMap<(u32, u16, u64, u32), Vec<Instance>> = HashMap::new();
    let mut first_open_end: BTreeMap<u32, u64> = BTreeMap::new();
    for stream in &trace.streams {
        let process = &trace.processes[stream.process as usize];
        let outer = outer_of_process[&stream.process];
        let host = String::from_utf8_lossy(&process.hostname).into_owned();
        let mut seen: HashMap<(u32, u16), u64> = HashMap::new();
        filter.expand_calls(trace, stream, |event, subcalls| {
            let call = &trace.calls[event.call as usize];
            if !with_mpiio {
                if data_call(&event) {
                    match path_of(&event) {
                        Some(path) => {
                            let node = middle_of(hash(&host), host.clone());
                            let target = target_of(&path);
                            let bin = time_bin(event.start);
                            let latency = event.duration as f64;
                            samples.add(0, outer, node, bin, latency, event.bytes());
                            samples.add(1, node, target, bin, latency, event.bytes());
                        }
                        None => network.unlinked_calls += 1,
                    }
                }
                return true;
            }
            if call.layer() != Some(Layer::MpiIo) {
                // Sub-calls whose MPI-IO call never came are on no link either way.
                if !cairn_export::is_subcall(trace, &event) && data_call(&event) {
                    network.unlinked_calls += 1;
                }
                return true;
            }
            let rank = process.rank.unwrap_or(outer);
            if call.name == "MPI_File_open" && !event.failed() {
                first_open_end
                    .entry(rank)
                    .or_insert(event.start + event.duration);
            }
            let mut first_subcall = None;
            for subcall in subcalls {
                if !data_call(subcall) {
                    continue;
                }
                let Some(path) = path_of(subcall) else {
                    continue;
                };
                first_subcall.get_or_insert(subcall.start);
                let node = middle_of(rank as u64, format!("rank {rank}"));
                let target = target_of(&path);
                samples.add(
                    1,
                    node,
                    target,
                    time_bin(subcall.start),
                    subcall.duration as f64,
                    subcall.bytes(),
                );
            }
            if let Some(file) = event.file {
                // The k-th collective call on a file is one call of every rank; an
                // independent call is its rank's alone.
                let owner = if collective(&call.name) {
                    u32::MAX
                } else {
                    rank
                };
                let k = seen.entry((file, event.call)).or_default();
                instances
                    .entry((file, event.call, *k, owner))
                    .or_default()
                    .push(Instance {
                        rank,
                        start: event.start,
                        first_subcall,
                        bytes: if data_call(&event) { event.bytes() } else { 0 },
                    });
                *k += 1;
            }
            true
        });
    }
    if with_mpiio {
        // One clock: each rank's first collective open ends when the lowest rank's does.
        let reference = first_open_end.values().next().copied().unwrap_or(0);
        let correction: HashMap<u32, i64> = first_open_end
            .iter()
            .map(|(rank, end)| (*rank, *end as i64 - reference as i64))
            .collect();
        network.largest_correction = correction.values().map(|c| c.abs()).max().unwrap_or(0);
        let corrected = |rank: u32, t: u64| t as i64 - correction.get(&rank).copied().unwrap_or(0);
        let mut keys: Vec<_> = instances.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            let instance = &instances[&key];
            for carrier in instance.iter().filter(|i| i.first_subcall.is_some()) {
                let node = middle_of(carrier.rank as u64, format!("rank {}", carrier.rank));
                let reached = corrected(carrier.rank, carrier.first_subcall.unwrap_or(0));
                for from in instance {
                    let mut latency = reached - corrected(from.rank, from.start);
                    if latency < 0 {
                        network.clamped += 1;
                        latency = 0;
                    }
                    let outer = network
                        .ranks
                        .iter()
                        .position(|node| node.id == from.rank as u64)
                        .unwrap_or(0) as u32;
                    samples.add(
                        0,
                        outer,
                        node,
                        time_bin(from.start),
                        latency as f64,
                        from.bytes,
                    );
                }
            }
        }
    }
    network.middle_kind = if with_mpiio { "aggregators" } else { "hosts" };
    finish(&mut network, samples, &middle, &targets);
    network
}

/// MPI-IO calls every rank of the file's communicator makes together.
fn collective(name: &str) -> bool {
    name.contains("_all")
        || name.contains("_ordered")
        || matches!(
            name,
            "MPI_File_open"
                | "MPI_File_close"
                | "MPI_File_set_view"
                | "MPI_File_set_size"
                | "MPI_File_preallocate"
                | "MPI_File_sync"
        )
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Orders the middle ring by the outer nodes it serves, and turns fine buckets into each
/// ring's display bins.
fn finish(network: &mut Network, samples: Samples, middle: &[(u64, String)], targets: &[String]) {
    // Mean outer position served, per middle node.
    let mut served: Vec<(f64, u64)> = vec![(0.0, 0); middle.len()];
    for ((ring, from, to, _, _), count) in &samples.latency {
        if *ring == 0 {
            let entry = &mut served[*to as usize];
            entry.0 += *from as f64 * *count as f64;
            entry.1 += count;
        }
    }
    let mut order: Vec<usize> = (0..middle.len()).collect();
    order.sort_by(|a, b| {
        let mean = |i: usize| served[i].0 / served[i].1.max(1) as f64;
        mean(*a)
            .total_cmp(&mean(*b))
            .then(middle[*a].0.cmp(&middle[*b].0))
    });
    let mut position = vec![0u32; middle.len()];
    for (new, old) in order.iter().enumerate() {
        position[*old] = new as u32;
        network.middle.push(Node {
            label: middle[*old].1.clone(),
            id: middle[*old].0,
        });
    }
    network.targets = targets
        .iter()
        .enumerate()
        .map(|(index, label)| Node {
            label: label.clone(),
            id: index as u64,
        })
        .collect();
    // Thousands of ranks: the outer ring shows ranges of consecutive ranks, each with the
    // values of all its ranks, so the page stays light and quick to draw.
    let ranks = network.ranks.len() as u32;
    let per_group = ranks.div_ceil(MAX_OUTER).max(1);
    if per_group > 1 {
        network.ranks = network
            .ranks
            .chunks(per_group as usize)
            .map(|group| Node {
                label: format!(
                    "{} – {}",
                    group[0].label,
                    group[group.len() - 1].label.trim_start_matches("rank ")
                ),
                id: group[0].id,
            })
            .collect();
        network.grouped = per_group;
    }
    let mut edges: BTreeMap<(u8, u32, u32), Edge> = BTreeMap::new();
    for (metric, counts, ranges) in [
        (0, &samples.latency, &mut network.latency_range),
        (1, &samples.size, &mut network.size_range),
    ] {
        for ring in 0..2u8 {
            let buckets = counts.keys().filter(|key| key.0 == ring).map(|key| key.4);
            let (low, high) =
                buckets.fold((u32::MAX, 0), |(low, high), b| (low.min(b), high.max(b)));
            if low == u32::MAX {
                continue;
            }
            ranges[ring as usize] = Range {
                min: fine_low(low),
                max: fine_low(high + 1),
            };
            let span = (high - low + 1) as u64;
            for ((r, from, to, time, bucket), count) in
                counts.iter().filter(|(key, _)| key.0 == ring)
            {
                let (from, to) = if *r == 0 {
                    (*from / per_group, position[*to as usize])
                } else {
                    (position[*from as usize], *to)
                };
                let value_bin = (bucket - low) as u64 * VALUE_BINS as u64 / span;
                let edge = edges.entry((*r, from, to)).or_insert_with(|| Edge {
                    ring: *r,
                    from,
                    to,
                    ..Edge::default()
                });
                let list = if metric == 0 {
                    &mut edge.latency
                } else {
                    &mut edge.size
                };
                match list.last_mut() {
                    Some(last) if last[0] == *time as u64 && last[1] == value_bin => {
                        last[2] += count
                    }
                    _ => list.push([*time as u64, value_bin, *count]),
                }
            }
        }
    }
    network.edges = edges.into_values().collect();
    network.timeline = samples.timeline;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fine_buckets_are_logarithmic_and_ordered() {
        assert_eq!(fine(0.0), 0);
        assert!(fine(1023.0) < fine(1024.0 * 1024.0));
        for value in [1.0, 10.0, 4096.0, 1e9] {
            let bucket = fine(value);
            assert!(
                fine_low(bucket) <= value && value < fine_low(bucket + 1),
                "{value}"
            );
        }
    }

    #[test]
    fn paths_go_to_the_longest_mount_holding_them() {
        let mounts = Mounts(vec![
            ("/scratch/big".into(), "lustre".into()),
            ("/scratch".into(), "nfs".into()),
            ("/".into(), "ext4".into()),
        ]);
        assert_eq!(mounts.target("/scratch/big/a.dat"), "/scratch/big (lustre)");
        assert_eq!(mounts.target("/scratch/bigger/a.dat"), "/scratch (nfs)");
        assert_eq!(mounts.target("/home/a"), "/ (ext4)");
    }
}
