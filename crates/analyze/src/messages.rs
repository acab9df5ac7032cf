//! MPI message bytes: what was sent, what arrived, and the capacity the receives posted.
//! A receive posted with room for 64 KiB that gets 800 bytes counts 800 received (from the
//! status the library filled, which the tracer reads even where the program passed
//! `MPI_STATUS_IGNORE`); a non-blocking receive's bytes are counted when a completion
//! finishes it. In a correct program the bytes received equal the bytes sent, over the
//! whole job; Darshan does not trace messages, and Score-P counts the posted size.
//! Receives made through Fortran bindings count alike: the tracer converts their
//! requests and reads their statuses (trace format EVNT 27 on).

use cairn_model::MessageBytes;
use cairn_trace::walk::Occurrence;
use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct MessageSummary {
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// The capacity of every receive posted (blocking or not).
    pub posted_receive_bytes: u64,
}

impl MessageSummary {
    /// Counts one visit of the trace walk (any call; only messages count).
    pub fn add_occurrence(&mut self, occurrence: &Occurrence) {
        let Some(role) = occurrence.call.call.and_then(|call| call.message_bytes()) else {
            return;
        };
        let bytes = occurrence.bytes();
        let capacity = if occurrence.failed() {
            0
        } else if let Some(capacity) = occurrence.blurred_capacity() {
            capacity
        } else if occurrence.key.flags
            & (cairn_compress::stream::BLURRED_SIZE | cairn_compress::stream::BLURRED_RESULT)
            == cairn_compress::stream::BLURRED_SIZE
        {
            // Sizes in a histogram: the bytes (its exact share) less what the results
            // differed from the requests.
            (bytes as i128 - occurrence.key.result as i128 * occurrence.count as i128).max(0) as u64
        } else {
            occurrence.key.request.saturating_mul(occurrence.count)
        };
        match role {
            MessageBytes::Sent => self.sent_bytes += bytes,
            MessageBytes::Completed => self.received_bytes += bytes,
            MessageBytes::Received | MessageBytes::Posted => {
                self.received_bytes += bytes;
                self.posted_receive_bytes += capacity;
            }
            MessageBytes::Probed | MessageBytes::Described => {}
        }
    }

    pub fn add(&mut self, other: &MessageSummary) {
        self.sent_bytes += other.sent_bytes;
        self.received_bytes += other.received_bytes;
        self.posted_receive_bytes += other.posted_receive_bytes;
    }

    pub fn is_empty(&self) -> bool {
        *self == MessageSummary::default()
    }
}
