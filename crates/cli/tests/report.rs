//! `cairn report`: the HTML page opened in a real headless Chromium (Debian's), its drawn
//! SVG read back from the DOM the page's own script built.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// Headless Chromium on `page` (with `fragment` after `#`), its script given 5 s of
/// virtual time, doing what `action` says (`--dump-dom`, `--screenshot=…`).
fn chromium(page: &Path, fragment: &str, action: &str) -> String {
    let output = succeeded(
        Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--virtual-time-budget=5000",
                "--window-size=1200,1600",
                action,
            ])
            .arg(format!("file://{}#{fragment}", page.display())),
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The DOM of `page` once its script ran, as Chromium serialises it.
fn rendered(page: &Path, fragment: &str) -> String {
    let dom = chromium(page, fragment, "--dump-dom");
    assert!(
        dom.contains("data-ready=\"yes\""),
        "the page's script did not finish: {dom}"
    );
    dom
}

/// A screenshot of `page`, kept in target/test-artifacts/ for people to look at.
fn screenshot(page: &Path, name: &str) -> PathBuf {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&directory).unwrap();
    let png = directory.join(name);
    let _ = std::fs::remove_file(&png);
    chromium(page, "", &format!("--screenshot={}", png.display()));
    png
}

fn count(dom: &str, text: &str) -> usize {
    dom.matches(text).count()
}

/// Every coloured stretch of an edge (a value bin with values), its colour, in document
/// order.
fn strokes(dom: &str) -> Vec<&str> {
    dom.split("class=\"bin\" stroke=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect()
}

fn report(trace: &Path, page: &Path) {
    succeeded(
        Command::new(cairn_binary())
            .arg("report")
            .arg(trace)
            .arg("-o")
            .arg(page),
    );
}

#[test]
fn report_of_a_collective_mpi_io_run_draws_each_rank_aggregator_target_and_link() {
    // tests/programs/mpi_ring_io.c on 4 ranks of Open MPI: a collective write and read on
    // one shared file, whose POSIX calls one aggregator makes for every rank, and four
    // independent writes per rank, each made by the rank itself.
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_mpi("mpi_ring_io", 4, directory.path());
    let page = directory.path().join("ring.html");
    report(&trace, &page);
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 5 << 20, "{size} bytes");
    let dom = rendered(&page, "");
    // Ring segments: 4 ranks; 4 I/O ranks (the aggregator, and every rank for its own
    // independent writes); 1 storage target (the file system of the test's directory).
    assert_eq!(count(&dom, "class=\"node rank\""), 4);
    assert_eq!(count(&dom, "class=\"node middle\""), 4);
    assert_eq!(count(&dom, "class=\"node target\""), 1);
    // Links: each rank to the aggregator (collective calls), each other rank to itself
    // (independent calls): 7; each I/O rank to the storage: 4. All active over the run.
    assert_eq!(count(&dom, "<g class=\"edge\" data-ring=\"0\""), 7, "{dom}");
    assert_eq!(count(&dom, "<g class=\"edge\" data-ring=\"1\""), 4);
    assert_eq!(count(&dom, "<g class=\"edge idle\""), 0);
    // A time range selected: the links' colours change (part of the I/O is outside it).
    let whole = strokes(&dom);
    assert!(whole.len() >= 11, "{whole:?}");
    let part = rendered(&page, "t=0:0.5");
    assert_ne!(strokes(&part), whole);
    assert!(part.contains("showing <span id=\"selection\">0."), "{part}");
    // The tables: the shared file. One insight: the independent 1 KiB writes (and the
    // POSIX writes they become) start off 4 KiB boundaries, 12 of the 24 POSIX accesses.
    assert!(dom.contains("shared.dat"));
    assert_eq!(count(&dom, "<div class=\"insight "), 1, "{dom}");
    assert!(
        dom.contains(
            "<strong>HIGH misaligned: </strong><span>12 of 24 POSIX reads and writes (50.0%)"
        ),
        "{dom}"
    );
    // Darshan's job summary per layer: MPI-IO's 16 writes of 1 KiB and 8 calls of 64 KiB
    // (4 collective writes, 4 collective reads), the most common sizes first.
    assert!(
        dom.contains("<tr><td>mpiio</td><td>close: 4\nopen: 4\nread: 4\nwrite: 20</td>"),
        "{dom}"
    );
    assert!(dom.contains("<td>1.0 KiB × 16\n64 KiB × 8</td>"), "{dom}");
    let png = screenshot(&page, "report-mpi-io.png");
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
}

#[test]
fn report_shows_hostile_file_names_as_text_and_runs_nothing() {
    let (directory, traced) = trace_program("hostile_names", &[], &[]);
    assert_eq!(traced.exit_code(), Some(0));
    let page = directory.path().join("names.html");
    report(&traced.trace, &page);
    let dom = rendered(&page, "");
    // Nothing the names hold became markup or ran.
    assert!(!dom.contains("<img"), "{dom}");
    let title = &dom[dom.find("<title>").unwrap()..dom.find("</title>").unwrap()];
    assert!(title.starts_with("<title>cairn report: "), "{title}");
    assert!(!title.contains("pwned"), "{title}");
    // Each name, as text in the files table.
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;</td>"),
        "{dom}"
    );
    assert!(
        dom.contains("&lt;img src=x onerror=\"document.title='pwned'\"&gt;</td>"),
        "{dom}"
    );
    assert!(dom.contains("two\nlines.dat</td>"), "{dom}");
    assert!(dom.contains("bad\\xff.dat</td>"), "{dom}");
    // Without MPI: the process, its host, the storage; a link from each to the next.
    assert_eq!(count(&dom, "class=\"node rank\""), 1);
    assert_eq!(count(&dom, "class=\"node middle\""), 1);
    assert_eq!(count(&dom, "class=\"node target\""), 1);
    assert_eq!(count(&dom, "<g class=\"edge\" data-ring=\"0\""), 1);
    assert_eq!(count(&dom, "<g class=\"edge\" data-ring=\"1\""), 1);
    screenshot(&page, "report-names.png");
}

#[test]
fn report_lists_insights_with_their_evidence() {
    // tests/programs/insights/small_requests.c: 2,000 writes of 100 bytes.
    let (directory, traced) = trace_program("insights/small_requests", &[], &[]);
    let page = directory.path().join("small.html");
    report(&traced.trace, &page);
    let dom = rendered(&page, "");
    assert!(
        dom.contains("<div class=\"insight high\"><strong>HIGH small_requests: </strong><span>2000 of 2000 reads and writes (100.0%)"),
        "{dom}"
    );
    assert!(dom.contains("/records.dat</li>"), "{dom}");
    assert!(
        dom.contains("<li>what to do: gather small requests"),
        "{dom}"
    );
}

#[test]
fn report_attributes_the_calls_to_the_phases_the_program_marked() {
    // tests/programs/patterns/phases.c: checkpoint ×5 (90 calls, 320 KiB written), restart
    // (6 calls, 16 KiB read), solver (5 log lines), 2 calls outside.
    let directory = tempfile::tempdir().unwrap();
    let program = compile("patterns/phases", directory.path(), &[]);
    let traced = trace(
        directory.path(),
        &program,
        &[directory.path().to_str().unwrap()],
    );
    let page = directory.path().join("phases.html");
    report(&traced.trace, &page);
    let dom = rendered(&page, "");
    let section = &dom[dom.find("<div id=\"phases\">").expect("the phases section")..];
    let section = &section[..section.find("</table>").expect("a table")];
    let rows: Vec<&str> = section.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 4, "{section}");
    assert!(
        rows[0].starts_with(
            "<td>checkpoint</td><td class=\"number\">5</td><td class=\"number\">90</td>"
        ),
        "{section}"
    );
    assert!(
        rows[1]
            .starts_with("<td>restart</td><td class=\"number\">1</td><td class=\"number\">6</td>"),
        "{section}"
    );
    assert!(
        rows[2]
            .starts_with("<td>solver</td><td class=\"number\">1</td><td class=\"number\">5</td>"),
        "{section}"
    );
    assert!(
        rows[3].starts_with("<td>(outside phases)</td><td></td><td class=\"number\">2</td>"),
        "{section}"
    );
}

#[test]
fn report_shows_each_hdf5_call_and_the_mpiio_and_posix_calls_below_it() {
    // tests/programs/patterns/hdf5_hyperslab.c at 4 ranks: 8 collective H5Dwrite of 8 KiB,
    // whose MPI-IO writes and the aggregators' pwrites below moved the same 64 KiB.
    let directory = tempfile::tempdir().unwrap();
    let trace = traced_hdf5(directory.path());
    let page = directory.path().join("hdf5.html");
    report(&trace, &page);
    let dom = rendered(&page, "");
    let section = &dom[dom
        .find("<div id=\"libraries\">")
        .expect("the libraries section")..];
    let section = &section[..section.find("</table>").expect("a table")];
    let write = section
        .split("<tr>")
        .find(|row| row.starts_with("<td>H5Dwrite</td>"))
        .expect("an H5Dwrite row");
    assert!(
        write.starts_with(
            "<td>H5Dwrite</td><td>hdf5</td><td class=\"number\">8</td><td>64 KiB</td>"
        ),
        "{write}"
    );
    // MPI-IO bytes and POSIX bytes: the same 64 KiB.
    assert_eq!(write.matches("<td>64 KiB</td>").count(), 3, "{write}");
}
