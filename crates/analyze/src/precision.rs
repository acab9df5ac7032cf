//! What a precision level below 100 blurred: per call and parameter (request sizes,
//! offsets), how many events carry values drawn from a histogram rather than kept, and the
//! range those values span. Counts and byte totals stay exact at every precision level
//! (a histogram keeps its exact count and sum); the figures listed here are the ones that
//! became estimates: access sizes and offsets, and whatever a reader derives from them
//! (size histograms, alignment, expanded events).

use std::collections::BTreeMap;

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
        let Some(blurred) = occurrence.blurred else {
            return;
        };
        for (parameter, histogram) in [("size", &blurred.size), ("offset", &blurred.offset)] {
            // A histogram of one value lost nothing.
            let Some(histogram) = histogram.as_ref().filter(|h| !h.is_exact()) else {
                continue;
            };
            let name = occurrence.call.name.clone();
            let entry = self
                .parameters
                .entry((name.clone(), parameter))
                .or_insert_with(|| BlurredParameter {
                    call: name,
                    parameter,
                    events: 0,
                    min: histogram.min,
                    max: histogram.max,
                });
            entry.events += occurrence.count;
            entry.min = entry.min.min(histogram.min);
            entry.max = entry.max.max(histogram.max);
        }
    }

    pub fn finish(self) -> Vec<BlurredParameter> {
        self.parameters.into_values().collect()
    }
}
