//! `cairn report`: one self-contained HTML file (no network access: inline SVG drawn by a
//! small script, CSS, and the data as JSON in the page) with the radial I/O network of
//! shared/seeds/001 ([`network`]), a latency timeline whose range selection redraws the
//! network, and the summary's tables.
//!
//! Design decisions: the page's data is the summary (`cairn summary --json`, the same
//! figures as every other view) and the network's binned counts, never the events, so the
//! file's size follows the number of links and bins, not of calls. Trace text reaches the
//! page only as JSON, with `<`, `>` and `&` escaped, and the script puts it in the document
//! as text: a file named `<script>…` is shown, not run.

pub mod network;

use std::io::Write;

use cairn_trace::Trace;

/// What can go wrong while building a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("writing the report: {0}")]
    Io(#[from] std::io::Error),
    #[error("summarising the trace: {0}")]
    Summary(String),
}

const TEMPLATE: &str = include_str!("../assets/report.html");
const SCRIPT: &str = include_str!("../assets/report.js");
const STYLE: &str = include_str!("../assets/report.css");

/// What was written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Written {
    pub bytes: u64,
    pub links: u64,
    pub ranks: u64,
}

/// Writes the report of `trace` to `out`, its insights raised at `thresholds`; `progress`
/// is told of the events walked.
pub fn write(
    trace: &Trace,
    thresholds: cairn_analyze::insights::Thresholds,
    progress: Option<cairn_export::Progress>,
    out: &mut impl Write,
) -> Result<Written, ReportError> {
    let options = cairn_analyze::summary::Options {
        include_noise: false,
        thresholds,
        phase_functions: Vec::new(),
    };
    let summary = cairn_analyze::summary::summarize(trace, options)
        .map_err(|error| ReportError::Summary(error.to_string()))?;
    let network = network::build(trace, progress);
    let data = serde_json::json!({
        "summary": page_summary(&summary),
        "network": network,
    });
    let data = script_safe(&data.to_string());
    let page = TEMPLATE
        .replacen("/*CSS*/", STYLE, 1)
        .replacen("/*SCRIPT*/", SCRIPT, 1)
        .replacen("/*DATA*/", &data, 1);
    out.write_all(page.as_bytes())?;
    out.flush()?;
    Ok(Written {
        bytes: page.len() as u64,
        links: network.edges.len() as u64,
        ranks: network.ranks.len() as u64,
    })
}

/// Files in the page's table at most: the busiest (by bytes), the others counted.
const PAGE_FILES: usize = 500;

/// The summary as the page needs it: without the per-process list (thousands of ranks'
/// rows, which the page does not show; the network and the per-layer figures stand for
/// them), and with the busiest [`PAGE_FILES`] files (`files_omitted` counts the rest).
fn page_summary(summary: &cairn_analyze::summary::Summary) -> serde_json::Value {
    let mut value = serde_json::to_value(summary).expect("the summary serialises");
    let object = value.as_object_mut().expect("an object");
    object.remove("process_list");
    let mut files: Vec<&cairn_analyze::summary::FileSummary> = summary.files.iter().collect();
    let omitted = files.len().saturating_sub(PAGE_FILES);
    if omitted > 0 {
        files.sort_by_key(|file| std::cmp::Reverse(file.bytes_read + file.bytes_written));
        files.truncate(PAGE_FILES);
        files.sort_by(|a, b| a.path.cmp(&b.path));
        object.insert(
            "files".into(),
            serde_json::to_value(files).expect("files serialise"),
        );
    }
    object.insert("files_omitted".into(), omitted.into());
    value
}

/// JSON that cannot end its `<script>` element or open another: `<`, `>` and `&` as
/// `\u` escapes (the same string to `JSON.parse`).
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_in_the_page_cannot_close_its_script() {
        let json = serde_json::json!({"path": "</script><script>alert(1)</script>&"}).to_string();
        let safe = super::script_safe(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["path"], "</script><script>alert(1)</script>&");
    }
}
