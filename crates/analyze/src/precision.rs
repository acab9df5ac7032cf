//! What a precision level below 100 blurred: per call and parameter (request sizes,
//! offsets), how many events carry values drawn from a histogram rather than kept, and the
//! range those values span. Counts and byte totals stay exact at every precision level
//! (a histogram keeps its exact count and sum); the figures listed here are the ones that
//! became estimates: access sizes and offsets, and whatever a reader derives from them
//! (size histograms, alignment, expanded events).

use std::collections::BTreeMap;

use cairn_compress::stream::{Body, Item};
use cairn_compress::stream::{OffsetRef, BLURRED_PEER, BLURRED_SIZE, BLURRED_TAG};
use cairn_trace::walk::Occurrence;
use cairn_trace::Trace;
use serde::Serialize;

/// One blurred parameter of one call.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BlurredParameter {
    pub call: String,
    /// `size`, `offset`, `peer` or `tag` (a point-to-point call's), or `iterations` (a loop's
    /// count; `call` is its body's first).
    pub parameter: &'static str,
    /// Events whose value comes from a histogram (for loops: the loop's occurrences).
    pub events: u64,
    /// The range of the values the histograms hold (exact).
    pub min: i64,
    pub max: i64,
}

/// Gathers [`BlurredParameter`]s from the walk's visits.
#[derive(Default)]
pub struct Blurred {
    parameters: BTreeMap<(String, &'static str), BlurredParameter>,
}

impl Blurred {
    pub fn add_occurrence(&mut self, occurrence: &Occurrence) {
        let key = occurrence.key;
        let flagged = [
            (
                "size",
                key.flags & BLURRED_SIZE != 0,
                occurrence.blurred.and_then(|b| b.size.as_ref()),
            ),
            (
                "offset",
                key.offset == OffsetRef::Blurred,
                occurrence.blurred.and_then(|b| b.offset.as_ref()),
            ),
            (
                "peer",
                key.flags & BLURRED_PEER != 0,
                occurrence.blurred.and_then(|b| b.peer.as_ref()),
            ),
            (
                "tag",
                key.flags & BLURRED_TAG != 0,
                occurrence.blurred.and_then(|b| b.tag.as_ref()),
            ),
        ];
        for (parameter, blurred, histogram) in flagged {
            if !blurred {
                continue;
            }
            let name = occurrence.call.name.clone();
            let entry = self
                .parameters
                .entry((name.clone(), parameter))
                .or_insert_with(|| BlurredParameter {
                    call: name,
                    parameter,
                    events: 0,
                    min: i64::MAX,
                    max: i64::MIN,
                });
            entry.events += occurrence.count;
            // A leaf of a shared stream may hold no values of its own (the rank merge
            // kept them in another part's histogram).
            if let Some(histogram) = histogram.filter(|histogram| histogram.count > 0) {
                entry.min = entry.min.min(histogram.min);
                entry.max = entry.max.max(histogram.max);
            }
        }
    }

    /// The blurred parameters; those whose histograms all hold one value lost nothing
    /// (a message size kept in a histogram from its first value, so ranks can share it)
    /// and are left out.
    pub fn finish(self) -> Vec<BlurredParameter> {
        self.parameters
            .into_values()
            .filter(|parameter| parameter.min != parameter.max)
            .collect()
    }
}

/// Loops whose iteration counts differ and were kept as histograms, named by the first call
/// of their body: `parameter` is `iterations`, `events` the loop's occurrences (each
/// stored stream once: a shared stream's histogram holds all its members' occurrences).
pub fn blurred_loops(trace: &Trace) -> Vec<BlurredParameter> {
    fn first_call(body: Body) -> Option<u16> {
        body.iter().find_map(|item| match item {
            Item::Leaf(leaf) => Some(leaf.key.call),
            Item::Loop { body, .. } => first_call(body),
        })
    }
    fn gather(trace: &Trace, body: Body, found: &mut BTreeMap<String, BlurredParameter>) {
        for item in body.iter() {
            let Item::Loop { body, counts, .. } = item else {
                continue;
            };
            if let Some(counts) = counts.filter(|counts| !counts.is_exact()) {
                let call = first_call(body)
                    .and_then(|call| trace.calls.get(call as usize))
                    .map_or_else(|| "?".to_string(), |call| call.name.clone());
                let entry = found.entry(call.clone()).or_insert(BlurredParameter {
                    call,
                    parameter: "iterations",
                    events: 0,
                    min: i64::MAX,
                    max: i64::MIN,
                });
                entry.events += counts.count;
                entry.min = entry.min.min(counts.min);
                entry.max = entry.max.max(counts.max);
            }
            gather(trace, body, found);
        }
    }
    let mut found = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for stream in &trace.streams {
        if seen.insert(std::sync::Arc::as_ptr(&stream.events)) {
            gather(trace, stream.events.nodes(), &mut found);
        }
    }
    found.into_values().collect()
}
