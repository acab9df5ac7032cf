//! What a precision level below 100 blurred: per call and parameter (request sizes,
//! offsets), how many events carry values drawn from a histogram rather than kept, and the
//! range those values span. Counts and byte totals stay exact at every precision level
//! (a histogram keeps its exact count and sum); the figures listed here are the ones that
//! became estimates: access sizes and offsets, and whatever a reader derives from them
//! (size histograms, alignment, expanded events).

use std::collections::BTreeMap;

use cairn_compress::stream::{OffsetRef, BLURRED_SIZE};
use cairn_trace::walk::Occurrence;
use serde::Serialize;

/// One blurred parameter of one call.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BlurredParameter {
    pub call: String,
    /// `size` or `offset`.
    pub parameter: &'static str,
    /// Events whose value comes from a histogram.
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

    pub fn finish(self) -> Vec<BlurredParameter> {
        self.parameters.into_values().collect()
    }
}
