//! `cairn`: trace a program's I/O and read the trace.
//!
//! Design decisions: the binary never links the preload library; it finds `libcairn.so`
//! next to itself (or in `../lib/cairn/`), so an installed copy works. Every failure is one
//! line on stderr and a nonzero exit; `cairn run` exits with the traced command's status.

mod elf;
mod render;
mod run;
mod static_link;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "Trace what programs do with files, and read the trace."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Formats `cairn export` writes.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ExportFormat {
    /// Perfetto's protobuf trace.
    Perfetto,
    /// Chrome's JSON trace events.
    Chrome,
    /// A directory of CSV tables: events (a row per call), files, processes, call sites.
    Csv,
    /// The same tables as Parquet files.
    Parquet,
    /// An OTF2 archive (a directory) for Vampir and the Score-P tools, through libotf2.
    Otf2,
}

/// Ranks as inclusive ranges (one value to clap, which would read a `Vec` as many).
#[derive(Clone, Debug)]
struct RankRanges(Vec<(u32, u32)>);

/// `0-3,8` as inclusive ranges.
fn parse_ranks(text: &str) -> std::result::Result<RankRanges, String> {
    text.split(',')
        .map(|part| {
            let (first, last) = part.split_once('-').unwrap_or((part, part));
            let number = |value: &str| {
                value
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| format!("`{part}` is not a rank or a range of ranks"))
            };
            Ok((number(first)?, number(last)?))
        })
        .collect::<std::result::Result<_, String>>()
        .map(RankRanges)
}

/// A size in bytes, with an optional K, M or G suffix (powers of 1024).
fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().last() {
        Some((at, suffix)) if suffix.is_ascii_alphabetic() => (&text[..at], suffix),
        _ => (text, 'B'),
    };
    let shift = match unit.to_ascii_uppercase() {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => return Err(format!("{text}: a size is a number, then K, M or G")),
    };
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text}: a size is a number, then K, M or G"))?;
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text}: too large"))
}

fn parse_layer(text: &str) -> std::result::Result<cairn_model::Layer, String> {
    cairn_model::Layer::from_name(text.trim())
        .ok_or_else(|| format!("`{text}` is not a layer (posix, stdio, mpi, mpiio, process)"))
}

/// `0.5:1.25` seconds as nanoseconds [from, to).
fn parse_window(text: &str) -> std::result::Result<(u64, u64), String> {
    let (from, to) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}` is not FROM:TO in seconds"))?;
    let seconds = |value: &str| {
        value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|seconds| *seconds >= 0.0 && seconds.is_finite())
            .map(|seconds| (seconds * 1e9) as u64)
            .ok_or_else(|| format!("`{value}` is not a number of seconds"))
    };
    Ok((seconds(from)?, seconds(to)?))
}

#[derive(Subcommand)]
enum Command {
    /// Run a command under the tracer and write one trace file.
    ///
    /// The trace is named after the command (`prog.cairn`, then `prog.1.cairn`, ...) unless
    /// -o is given; an existing file is never overwritten silently. The exit status is the
    /// command's own (128+N if it died of signal N).
    Run {
        /// Trace file to write (replaced if it exists, with a note).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Keep the staging directory of raw segments.
        #[arg(long)]
        keep_staging: bool,
        /// Where the staging directory of raw segments goes (default: beside the trace;
        /// created if missing): node-local or scratch storage keeps the traced run's own
        /// writes off the file system the trace goes to. Every rank of a job must see it
        /// (the first rank builds the trace from it).
        #[arg(long, value_name = "DIR")]
        staging: Option<PathBuf>,
        /// Print nothing but errors.
        #[arg(short, long)]
        quiet: bool,
        /// The MPI runtime's own I/O (MPI_Init, MPI_Finalize, progress threads): only
        /// counted (the default: it is not the program's I/O, and it differs from rank to
        /// rank and between job sizes), kept for the first rank, or kept for every rank.
        #[arg(long, value_enum, default_value_t = RuntimeIo::None)]
        runtime_io: RuntimeIo,
        /// Precision level, 0–100 (100: lossless). Below 100, a call site's request sizes
        /// (I/O sizes, MPI counts) and offsets that differ from the last there by at most
        /// (100 − level)% of the larger (any difference at 0) become histograms from then
        /// on, so jittering values fold; counts and byte totals stay exact, and `summary`
        /// and `dump` say which calls were blurred. Processes' start, end and `main` times
        /// that lie close together share one value, and timing statistics keep the matching
        /// significant bits. The trace says what was rounded.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u8).range(0..=100))]
        precision: u8,
        /// Bins of each histogram a precision level below 100 makes (their ranges adapt to
        /// the values).
        #[arg(long, default_value_t = cairn_compress::histogram::DEFAULT_BINS, value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16).range(1..=64), usize::from))]
        histogram_bins: usize,
        /// The most each thread's stream may hold as the trace is built (bytes, or with a
        /// K, M or G suffix; 0: no bound), so that building the trace of a long irregular
        /// run stays within bounded memory: past it, the rest of the stream keeps its
        /// changing sizes and offsets and its loops' differing counts as histograms
        /// (precision 0), counts and bytes exact, and the trace's diagnostics say which
        /// streams did so and from which event.
        #[arg(long, default_value = "64M", value_parser = parse_size)]
        stream_budget: u64,
        /// The command and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Print the path of the preload library, for `LD_PRELOAD=$(cairn lib) ...`.
    Lib,
    /// Print the linker arguments that link the tracer into a statically linked program,
    /// which preloading cannot reach: `cc -static prog.o $(cairn link-flags) -o prog`, then
    /// `cairn run -- ./prog` as usual. The program's POSIX and stdio calls go through the
    /// tracer (`ld --wrap`, one option per call in a response file written beside
    /// libcairn_static.a); MPI and library layers need a dynamically linked program.
    LinkFlags,
    /// Build one trace from staging directories (CAIRN_DIR) and trace files: a run that
    /// was not collected, a job that died before its end, per-rank traces.
    Merge {
        /// Staging directories (their `.seg` files make one trace; each subdirectory with
        /// `.seg` files, one rank's staging, makes another), segment files (together one
        /// trace), trace files, and directories of trace files; all merged.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Trace file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// As for `run` (applies to staging directories; a trace file's is already applied).
        #[arg(long, value_enum, default_value_t = RuntimeIo::None)]
        runtime_io: RuntimeIo,
        /// The job's first rank, when the staging holds only some of its ranks (its runtime
        /// I/O is the one `--runtime-io first-rank` keeps); without it, the lowest rank
        /// staged.
        #[arg(long)]
        first_rank: Option<u32>,
        /// As for `run` (sizes and offsets blur only in staging directories built here).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u8).range(0..=100))]
        precision: u8,
        /// As for `run`.
        #[arg(long, default_value_t = cairn_compress::histogram::DEFAULT_BINS, value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16).range(1..=64), usize::from))]
        histogram_bins: usize,
        /// As for `run` (applies to staging directories).
        #[arg(long, default_value = "64M", value_parser = parse_size)]
        stream_budget: u64,
        /// Print nothing but errors.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Write a trace in another tool's format: `perfetto` (open it at ui.perfetto.dev or
    /// with Perfetto's trace processor): a track per process, thread and layer, a slice per
    /// call, flows from each MPI-IO call to its POSIX sub-calls, from each library call
    /// (HDF5) to the calls below it and from each send to its receive, byte counters; `chrome`: Chrome's JSON trace events, for small traces;
    /// `csv` and `parquet`: a directory of tables, events (a row per call: rank, call, file,
    /// times, sizes…), files, processes and call sites; `otf2`: an OTF2 archive
    /// directory for Vampir (I/O handles and operations, MPI messages), through libotf2.
    /// Loops are expanded; the times of a folded loop's calls are its means (marked
    /// `times_estimated`).
    Export {
        trace: PathBuf,
        /// File to write, a directory for `csv`, `parquet` and `otf2` (replaced only once
        /// complete).
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long, value_enum, default_value_t = ExportFormat::Perfetto)]
        format: ExportFormat,
        /// Include runtime noise (loader, /proc, language runtime, MPI runtime).
        #[arg(long)]
        all: bool,
        /// Only these ranks: `0-3,8`.
        #[arg(long, value_parser = parse_ranks)]
        ranks: Option<RankRanges>,
        /// Only these layers: `posix,stdio,mpi,mpiio`.
        #[arg(long, value_delimiter = ',', value_parser = parse_layer)]
        layers: Option<Vec<cairn_model::Layer>>,
        /// Only calls starting in this window, seconds since the run's start: `0.5:1.25`.
        #[arg(long, value_parser = parse_window)]
        time: Option<(u64, u64)>,
    },
    /// Write one self-contained HTML report: the radial I/O network (ranks, the I/O ranks or
    /// hosts that carried their I/O, storage targets; each link a heat map of latency or
    /// request size), a latency timeline whose selection redraws the network, and the
    /// summary's tables. Opens in any browser, offline.
    Report {
        trace: PathBuf,
        /// File to write (replaced only once complete); default: the trace's name with
        /// `.html`.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// A JSON file changing when insights are raised (docs/SUMMARY-JSON.md, `insights`).
        #[arg(long)]
        thresholds: Option<PathBuf>,
    },
    /// Re-issue the trace's POSIX, stdio, MPI and MPI-IO calls (same calls, sizes, offsets,
    /// peers, file names) under a scratch directory, one process per recorded process and a
    /// thread per recorded thread, with the recorded compute time between calls; then say
    /// how the replay compares with the recorded run. A trace of N MPI ranks is replayed
    /// with `mpirun -np N cairn replay TRACE`.
    Replay {
        trace: PathBuf,
        /// Where the recorded paths are recreated (`/a/b` becomes `ROOT/a/b`).
        #[arg(long, default_value = "cairn-replay")]
        root: PathBuf,
        /// Replay on the recorded paths themselves (the files there are overwritten).
        #[arg(long, conflicts_with = "root")]
        in_place: bool,
        /// The seed of the values drawn from a trace's histograms (precision below 100);
        /// give every rank the same. Default: the one `cairn dump --expand` and the exports
        /// use, so the replay issues the values they show.
        #[arg(long)]
        seed: Option<u64>,
        /// Skip the compute time between calls.
        #[arg(long)]
        no_compute: bool,
        /// Print what would be issued instead.
        #[arg(long)]
        dry_run: bool,
        /// The fidelity report as JSON.
        #[arg(long)]
        json: bool,
        /// The MPI library to load (default: the launcher's: libmpi.so.40 under Open MPI,
        /// libmpich.so.12 under MPICH's Hydra).
        #[arg(long)]
        mpi_library: Option<PathBuf>,
        /// Replay an MPI trace on M ranks instead of the recorded number (`mpirun -np M`):
        /// each rank takes after the recorded rank in the same place (first, interior,
        /// last), peers, offsets and per-rank file names follow the rank as recorded.
        #[arg(long, value_name = "M")]
        scale_ranks: Option<u32>,
    },
    /// Print per-file and per-call tables.
    Summary {
        trace: PathBuf,
        /// One JSON object instead of tables (schema: docs/SUMMARY-JSON.md).
        #[arg(long)]
        json: bool,
        /// Include runtime noise (loader, /proc, language runtime, before main).
        #[arg(long)]
        all: bool,
        /// A JSON file changing when insights are raised (docs/SUMMARY-JSON.md, `insights`).
        #[arg(long)]
        thresholds: Option<PathBuf>,
        /// Functions whose calls are phases, comma-separated (`write_checkpoint,read_restart`;
        /// default: $CAIRN_PHASES): a call with one in its calling context counts in it.
        #[arg(long, value_delimiter = ',')]
        phases: Option<Vec<String>>,
        /// Files the tables show: the N busiest (bytes moved, then operations), the rest
        /// totalled on one line; 0 shows every file (`--json` always lists them all).
        #[arg(long, value_name = "N", default_value_t = 20)]
        files: usize,
    },
    /// Print the trace's processes, files and events.
    Dump {
        trace: PathBuf,
        /// Include events on runtime-noise files.
        #[arg(long)]
        all: bool,
        /// Print every event (loops expanded) instead of the folded structure.
        #[arg(long)]
        expand: bool,
        /// With --expand: print at most this many events per thread.
        #[arg(long)]
        limit: Option<u64>,
        /// Print only the file's sections with their stored and raw sizes.
        #[arg(long)]
        sections: bool,
    },
    /// Read a C library's header with a real C parser (the system's `cc -E`, then lang-c)
    /// and print call-table rows for its functions: one hook per selected function, of
    /// the same form as the built-in calls, attributed to the given layer. Functions a hook
    /// cannot forward (variadic, a struct by value) are listed as skipped. HDF5's rows in
    /// cairn are generated this way (`scripts/generate-calls.sh`).
    Wrapgen {
        /// The header, e.g. /usr/include/hdf5/openmpi/hdf5.h. Functions declared in it or
        /// in a header in the same directory are candidates.
        header: PathBuf,
        /// Only these functions: names, or prefixes ending in `*` (comma-separated).
        #[arg(long, value_delimiter = ',')]
        include: Vec<String>,
        /// Never these functions (same form).
        #[arg(long, value_delimiter = ',')]
        exclude: Vec<String>,
        /// The layer the calls count in: `hdf5` (knows the bytes of H5Dwrite/H5Dread, the
        /// file of every object), `netcdf`, or `library`.
        #[arg(long, default_value = "library")]
        layer: String,
        /// A directory of headers the header includes (the preprocessor's -I).
        #[arg(short = 'I', value_name = "DIR")]
        include_directory: Vec<PathBuf>,
        /// A macro for the preprocessor (its -D).
        #[arg(short = 'D', value_name = "NAME[=VALUE]")]
        define: Vec<String>,
        /// Write the rows as a module of the model crate: a `macro_rules!` of this name
        /// that appends them to the built-in rows.
        #[arg(long, value_name = "NAME")]
        macro_name: Option<String>,
        /// With --macro-name: hand the rows on to this generated macro (another library's
        /// module) rather than to the callback.
        #[arg(long, value_name = "NAME", requires = "macro_name")]
        then: Option<String>,
        /// File to write (replaced atomically); default: standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RuntimeIo {
    None,
    FirstRank,
    All,
}

impl RuntimeIo {
    fn policy(self) -> cairn_trace::collect::RuntimeIo {
        match self {
            RuntimeIo::FirstRank => cairn_trace::collect::RuntimeIo::FirstRank,
            RuntimeIo::All => cairn_trace::collect::RuntimeIo::AllRanks,
            RuntimeIo::None => cairn_trace::collect::RuntimeIo::NoRank,
        }
    }
}

/// The error and its causes on one line, each said once: a context naming a file is
/// dropped when the cause below names it too (`t.cairn: t.cairn: No such file…`).
fn one_line(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string().replace('\n', " ");
        if let Some(last) = parts.last_mut() {
            if text.starts_with(last.as_str()) {
                *last = text;
                continue;
            }
        }
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// The insights' thresholds: the defaults, changed by the fields a JSON file gives.
fn read_thresholds(path: Option<&std::path::Path>) -> Result<cairn_analyze::insights::Thresholds> {
    let Some(path) = path else {
        return Ok(Default::default());
    };
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a thresholds file", path.display()))
}

fn open_trace(path: &std::path::Path) -> Result<cairn_trace::Trace> {
    if !path.exists() {
        // A job that died before building its trace leaves its staging beside it.
        if let Some(staging) = run::staging_beside(path) {
            anyhow::bail!(
                "{}: no such trace; a run that did not finish left its staging in {}: {}",
                path.display(),
                staging.display(),
                run::merge_hint(&staging, path)
            );
        }
    }
    cairn_trace::Trace::open(path).with_context(|| format!("{}", path.display()))
}

fn main() -> ExitCode {
    // A bug of cairn's is one line on the error stream (the whole report with
    // RUST_BACKTRACE set), not a screenful between the traced program's own output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            default_hook(info);
        } else {
            let message = run::panic_message(info.payload());
            let at = info
                .location()
                .map(|location| format!(" at {}:{}", location.file(), location.line()))
                .unwrap_or_default();
            eprintln!("cairn: internal error{at}: {message} (please report it; RUST_BACKTRACE=1 shows where)");
        }
    }));
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Run { .. } | Command::Merge { .. }) {
        run::end_quietly_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Run {
            output,
            keep_staging,
            staging,
            quiet,
            runtime_io,
            precision,
            histogram_bins,
            stream_budget,
            command,
        } => run::run(run::RunOptions {
            output,
            keep_staging,
            staging,
            quiet,
            runtime_io: runtime_io.policy(),
            building: run::Building {
                precision,
                histogram_bins,
                stream_budget,
            },
            command,
        }),
        Command::LinkFlags => static_link::link_flags().map(|flags| {
            println!("{flags}");
            ExitCode::SUCCESS
        }),
        Command::Lib => run::library_path().map(|path| {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }),
        Command::Merge {
            inputs,
            output,
            runtime_io,
            first_rank,
            precision,
            histogram_bins,
            stream_budget,
            quiet,
        } => run::merge(
            &inputs,
            &output,
            runtime_io.policy(),
            first_rank,
            run::Building {
                precision,
                histogram_bins,
                stream_budget,
            },
            quiet,
        )
        .map(|_| ExitCode::SUCCESS),
        Command::Export {
            trace,
            output,
            format,
            all,
            ranks,
            layers,
            time,
        } => open_trace(&trace).and_then(|trace| {
            let mut filter = cairn_export::Filter {
                all,
                ranks: ranks.map(|RankRanges(ranges)| ranges),
                layers,
                time,
                progress: None,
            };
            let bar = run::progress_bar(&trace, &filter);
            filter.progress = bar.as_ref().map(run::ExpansionBar::progress);
            let tables = |rows: u64| {
                format!("{rows} events, with the files, processes and call sites tables")
            };
            let said = match format {
                ExportFormat::Perfetto => run::write_replacing(&output, |file| {
                    let written = cairn_export::perfetto::write(&trace, &filter, file)?;
                    Ok(format!(
                        "{} slices on {} tracks, {} MPI-IO flows, {} messages",
                        written.slices, written.tracks, written.flows, written.messages
                    ))
                })?,
                ExportFormat::Chrome => run::write_replacing(&output, |file| {
                    let calls = cairn_export::chrome::write(&trace, &filter, file)?;
                    Ok(format!("{calls} calls"))
                })?,
                ExportFormat::Csv => run::write_directory_replacing(&output, |directory| {
                    Ok(tables(cairn_export::csv::write(
                        &trace, &filter, directory,
                    )?))
                })?,
                ExportFormat::Parquet => run::write_directory_replacing(&output, |directory| {
                    Ok(tables(cairn_export::parquet::write(
                        &trace, &filter, directory,
                    )?))
                })?,
                ExportFormat::Otf2 => run::write_directory_replacing(&output, |directory| {
                    let written = cairn_export::otf2::write(&trace, &filter, directory)?;
                    Ok(format!(
                        "{} calls on {} locations, {} I/O operations, {} message records, {} collectives",
                        written.calls,
                        written.locations,
                        written.io_operations,
                        written.messages,
                        written.collectives
                    ))
                })?,
            };
            drop(bar);
            run::warn_incomplete(&trace);
            eprintln!("cairn: {said} -> {}", output.display());
            Ok(ExitCode::SUCCESS)
        }),
        Command::Report {
            trace: path,
            output,
            thresholds,
        } => open_trace(&path).and_then(|trace| {
            let thresholds = read_thresholds(thresholds.as_deref())?;
            let output = output.unwrap_or_else(|| path.with_extension("html"));
            // Every process's streams are walked (the report chooses the calls it reads).
            let bar = run::progress_bar(&trace, &cairn_export::Filter::default());
            let progress = bar.as_ref().map(run::ExpansionBar::progress);
            let written = run::write_replacing(&output, |file| {
                Ok(cairn_report::write(&trace, thresholds, progress, file)?)
            })?;
            drop(bar);
            run::warn_incomplete(&trace);
            eprintln!(
                "cairn: report of {} processes, {} links ({} bytes) -> {}",
                written.ranks,
                written.links,
                written.bytes,
                output.display()
            );
            Ok(ExitCode::SUCCESS)
        }),
        Command::Replay {
            trace,
            root,
            in_place,
            seed,
            no_compute,
            dry_run,
            json,
            mpi_library,
            scale_ranks,
        } => open_trace(&trace).and_then(|trace| {
            // Said once for a job: by its rank 0, or by the one process.
            let first_rank = ["OMPI_COMM_WORLD_RANK", "PMI_RANK"]
                .iter()
                .find_map(|name| std::env::var(name).ok())
                .is_none_or(|rank| rank == "0");
            if in_place && !dry_run && first_rank {
                eprintln!("cairn: replaying in place: the recorded files are overwritten");
            }
            let options = cairn_replay::Options {
                root: if in_place { PathBuf::from("/") } else { root },
                no_compute,
                dry_run,
                mpi_library,
                scale_ranks,
                seed,
            };
            // Ranks other than 0 report nothing: rank 0 speaks for the job.
            let Some(fidelity) = cairn_replay::replay(&trace, &options)? else {
                return Ok(ExitCode::SUCCESS);
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&fidelity)?);
            } else if !dry_run {
                eprintln!(
                    "cairn: replayed {} calls of {} processes ({} threads{}) in {:.3} s (recorded: {:.3} s, ×{:.2}); read {} of {} bytes, wrote {} of {} bytes",
                    fidelity.calls_replayed,
                    fidelity.processes,
                    fidelity.threads,
                    if fidelity.ranks > 0 {
                        format!(", {} MPI ranks", fidelity.ranks)
                    } else {
                        String::new()
                    },
                    fidelity.replay_seconds,
                    fidelity.recorded_seconds,
                    fidelity.replay_seconds / fidelity.recorded_seconds.max(1e-9),
                    fidelity.bytes_read,
                    fidelity.recorded_bytes_read,
                    fidelity.bytes_written,
                    fidelity.recorded_bytes_written
                );
                if let Some(recorded) = fidelity.scaled_from {
                    eprintln!(
                        "cairn: a trace of {recorded} ranks replayed on {} (recorded bytes: what the scaled ranks' events ask for)",
                        fidelity.ranks
                    );
                    if fidelity.names_kept > 0 {
                        eprintln!(
                            "cairn: {} per-rank files kept the name of the rank they take after (no number in the name to follow)",
                            fidelity.names_kept
                        );
                    }
                }
                for (name, count) in &fidelity.not_replayed {
                    eprintln!("cairn: not replayed: {count} {name} calls");
                }
                if fidelity.library_calls > 0 {
                    eprintln!(
                        "cairn: {} library calls (HDF5...) replayed as the MPI-IO, MPI and POSIX calls they made",
                        fidelity.library_calls
                    );
                }
                if fidelity.unfinished_requests > 0 {
                    eprintln!(
                        "cairn: {} non-blocking MPI-IO transfers had not finished when their file was closed (left to the library)",
                        fidelity.unfinished_requests
                    );
                }
                if fidelity.inherited_calls > 0 {
                    eprintln!(
                        "cairn: {} calls on inherited descriptors (standard streams, a forked child's copies of its parent's) went to /dev/null",
                        fidelity.inherited_calls
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }),
        Command::Summary {
            trace,
            json,
            all,
            thresholds,
            phases,
            files,
        } => open_trace(&trace).and_then(|trace| {
            let phase_functions = phases.unwrap_or_else(|| {
                std::env::var("CAIRN_PHASES")
                    .map(|list| list.split(',').map(str::to_string).collect())
                    .unwrap_or_default()
            });
            let summary = cairn_analyze::summary::summarize(
                &trace,
                cairn_analyze::summary::Options {
                    include_noise: all,
                    thresholds: read_thresholds(thresholds.as_deref())?,
                    phase_functions: phase_functions
                        .into_iter()
                        .map(|name| name.trim().to_string())
                        .filter(|name| !name.is_empty())
                        .collect(),
                },
            )?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                print!("{}", render::summary_text(&summary, files));
            }
            Ok(ExitCode::SUCCESS)
        }),
        Command::Wrapgen {
            header,
            include,
            exclude,
            layer,
            include_directory,
            define,
            macro_name,
            then,
            output,
        } => (|| {
            let mut preprocessor_arguments: Vec<String> = include_directory
                .iter()
                .map(|directory| format!("-I{}", directory.display()))
                .collect();
            preprocessor_arguments.extend(define.iter().map(|define| format!("-D{define}")));
            let options = cairn_wrapgen::Options {
                header,
                include,
                exclude,
                layer,
                preprocessor_arguments,
            };
            let generated = cairn_wrapgen::generate(&options)?;
            let text = match &macro_name {
                Some(name) => generated.render_macro(&options, name, then.as_deref()),
                None => generated.render(&options),
            };
            match &output {
                Some(path) => {
                    run::write_replacing(path, |file| Ok(file.write_all(text.as_bytes())?))?;
                    eprintln!(
                        "cairn: {} rows ({} skipped) -> {}",
                        generated.rows.len(),
                        generated.skipped.len(),
                        path.display()
                    );
                }
                None => print!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        })(),
        Command::Dump {
            trace,
            sections: true,
            ..
        } => cairn_format::container::TraceFile::open(&trace)
            .with_context(|| format!("{}", trace.display()))
            .map(|file| {
                println!("{} bytes", file.file_size());
                for entry in file.entries() {
                    println!(
                        "  {} v{}: {} bytes stored, {} raw",
                        entry.kind.name(),
                        entry.version,
                        file.stored_size(entry),
                        file.raw_size(entry)
                    );
                }
                ExitCode::SUCCESS
            }),
        Command::Dump {
            trace,
            all,
            expand,
            limit,
            sections: false,
        } => open_trace(&trace).and_then(|trace| {
            render::dump(&trace, all, expand, limit, &mut std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("cairn: error: {}", one_line(&error));
            ExitCode::from(2)
        }
    }
}
