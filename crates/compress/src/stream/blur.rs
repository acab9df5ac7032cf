//! Precision levels below 100 (the thesis' lossy encoding): which parameters of which call
//! sites become histograms. A site's size (or offset) stays exact while it repeats one of
//! its last [`RECENT`] values; the first time it differs from one of them (at the same call
//! and calling context) by at most (100 − P)% of the larger (any difference at P = 0), it
//! becomes a histogram from there on, so every later occurrence has the same key and folds
//! whatever its value. A difference beyond the margin keeps the value exact (a new key), so
//! P = 95 merges a solver's jittering message sizes but not a 4 KiB write with a 4 MiB one.
//! Comparing with a few recent values, not only the last, is what lets random values
//! (IOR's `-z` offsets, compressed blocks' sizes) blur after a few occurrences, not after
//! however many it takes two in a row to fall within the margin (hundreds at 90, by luck).
//!
//! Message sizes (point-to-point calls, completions) are histograms from their first value,
//! so ranks whose sizes differ share keys (the rank merge then joins their histograms
//! within the margin); a receive's or completion's size is its result (the bytes it got,
//! [`BLURRED_RESULT`]), and a posting's, which got nothing yet, its capacity
//! ([`BLURRED_CAPACITY`]). Point-to-point peers that change blur too, with the set of peers
//! seen, and so do tags that change (as the key keeps them: tags that count are steps).
//!
//! Offsets are judged by their key (the step from where the file's previous access ended):
//! a sequential or strided stream repeats its step and stays exact at every P above 0; only
//! steps that wander (random access) blur. Blurred offsets are kept as absolute offsets,
//! so a reader's drawn offsets stay within the file's range.

use crate::hash::FastMap;

/// Key flag (above the event flags, beside [`super::TAG_STEP`]): the size is kept in the
/// leaf's histogram; the key's request is 0.
pub const BLURRED_SIZE: u32 = 1 << 29;
/// Key flag: the access follows a seek to a blurred offset; its order (as irregular as the
/// seek) is counted in the leaf, not kept in the key, so IOR's random `lseek` + `write`
/// folds at a precision level below 100.
pub const ORDER_IN_LEAF: u32 = 1 << 27;
/// Key flag, with [`BLURRED_SIZE`]: the size histogram holds the call's results (the bytes
/// a completion or a receive reported), not its requests; the key's result is −request (so
/// it reads 0) and its request stays.
pub const BLURRED_RESULT: u32 = 1 << 25;
/// Key flag, with [`BLURRED_SIZE`]: the size histogram holds the capacities (requests) of
/// point-to-point calls whose result is 0 — a non-blocking receive's posting (nothing has
/// arrived yet), a receive of an empty message; the key's request and result are both 0
/// (the result reads 0). A solver whose ghost counts change posts `MPI_Irecv`s of a new
/// capacity every few steps (LAMMPS): kept in the key, each capacity was a leaf of its own.
pub const BLURRED_CAPACITY: u32 = 1 << 17;
/// Key flag: a point-to-point call's peer is kept in the leaf's histogram (and set of peers
/// seen); the key's peer (aux's low 32 bits) is 0.
pub const BLURRED_PEER: u32 = 1 << 26;
/// Key flag: a point-to-point call's tag is kept in the leaf's histogram; the key's tag
/// (aux's high 32 bits) is 0. Tags that count (`tag = step`) are steps already and stay
/// exact; tags that wander (a task id, a message number) blur.
pub const BLURRED_TAG: u32 = 1 << 23;
/// Key flag, in a stream ranks share: the leaf keeps each member's exact offset range
/// ([`super::MemberExtents`]): a leaf inside a loop whose counts differ between ranks
/// (a load-imbalanced rank's writes to its own file) reaches offsets no slope gives.
pub const MEMBER_EXTENTS: u32 = 1 << 22;
/// Key flag, in a stream ranks share, with [`BLURRED_SIZE`]: the leaf keeps each member's
/// exact count and sum of its sizes (a leaf that writes to each rank's own file), so every
/// file's bytes stay exact.
pub const MEMBER_SIZES: u32 = 1 << 19;
/// Key flag: a point-to-point call's peer is the rank XOR twice the mask (peer XOR rank)
/// of the last call at the same call site — recursive doubling's partners, a binomial
/// tree's children; the key's peer is 0 (see `relative.rs`).
pub const PEER_DOUBLED: u32 = 1 << 21;
/// Key flag: likewise, half the last mask (recursive halving).
pub const PEER_HALVED: u32 = 1 << 20;
/// Flag of an expanded event (never of a key): its offset was drawn from a histogram.
pub const BLURRED_OFFSET: u32 = 1 << 28;

/// How many of a site's last values a new one is compared with.
pub(super) const RECENT: usize = 4;

/// A site's last values, newest first (the first repeated until there are [`RECENT`]).
#[derive(Clone, Copy, Debug)]
struct Recent([i64; RECENT]);

impl Recent {
    fn of(value: i64) -> Recent {
        Recent([value; RECENT])
    }

    fn holds(&self, value: i64) -> bool {
        self.0.contains(&value)
    }

    fn within(&self, precision: u8, value: i64) -> bool {
        self.0
            .iter()
            .any(|recent| crate::histogram::Histogram::within(precision, *recent, value))
    }

    fn push(mut self, value: i64) -> Recent {
        self.0.rotate_right(1);
        self.0[0] = value;
        self
    }
}

#[derive(Clone, Copy, Debug)]
enum Site {
    /// The last values.
    Exact(Recent),
    /// A message size's first value, kept in a histogram of its own (see
    /// [`Blur::message_size`]); the last values.
    Tentative(Recent),
    /// An offset site that has seen one value: the distance from where another site's
    /// access ended (a loop's way in) says nothing of the steps to come, so it is kept
    /// exact and the next one is the first compared with.
    Fresh,
    Blurred,
}

/// What a site's value is: a size, or an offset's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Parameter {
    Size,
    Offset,
    Peer,
    Tag,
}

/// The encoder's per-thread precision state.
#[derive(Clone, Debug)]
pub(super) struct Blur {
    precision: u8,
    sites: FastMap<(Parameter, u16, u32), Site>,
}

impl Default for Blur {
    fn default() -> Blur {
        Blur::new(100)
    }
}

impl Blur {
    pub(super) fn new(precision: u8) -> Blur {
        Blur {
            precision: precision.min(100),
            sites: FastMap::default(),
        }
    }

    pub(super) fn is_lossless(&self) -> bool {
        self.precision == 100
    }

    /// Whether the size at this site is kept in a histogram (from this occurrence on).
    pub(super) fn size(&mut self, call: u16, context: u32, size: i64) -> bool {
        self.judge(
            Parameter::Size,
            call,
            context,
            size,
            Site::Exact(Recent::of(size)),
        )
    }

    /// As [`Blur::size`], for a message's size (a point-to-point call's, a completion's):
    /// its first value already goes to a histogram (of that one value, exact), so that
    /// ranks whose messages differ in size — a value each rank keeps the same, or a first
    /// step before its site blurred — have equal keys and their histograms merge across
    /// ranks, within the margin (`ranks/parts.rs`). A next value beyond the margin is kept
    /// exact, as at any site.
    pub(super) fn message_size(&mut self, call: u16, context: u32, size: i64) -> bool {
        self.judge(
            Parameter::Size,
            call,
            context,
            size,
            Site::Tentative(Recent::of(size)),
        )
    }

    /// Whether the offset of this access (its key `step`, the distance from where the
    /// file's previous access ended) is kept in a histogram. Steps, not offsets, are
    /// compared: in a large file every offset is within 1% of the next, and a regular
    /// pattern's steps repeat or jump, so only steps that wander (random access) blur.
    pub(super) fn offset(&mut self, call: u16, context: u32, step: i64) -> bool {
        self.judge(Parameter::Offset, call, context, step, Site::Fresh)
    }

    /// Whether `value` at the site goes to its histogram; `first`: the site's state before
    /// its first value.
    /// Whether the peer of this point-to-point call is kept in a histogram: a master
    /// receiving from whichever worker is done, a solver's changing partners.
    pub(super) fn peer(&mut self, call: u16, context: u32, peer: i64) -> bool {
        self.judge(
            Parameter::Peer,
            call,
            context,
            peer,
            Site::Exact(Recent::of(peer)),
        )
    }

    /// Whether the tag of this point-to-point call (as the key keeps it: a step when the
    /// tags count) is kept in a histogram.
    pub(super) fn tag(&mut self, call: u16, context: u32, tag: i64) -> bool {
        self.judge(
            Parameter::Tag,
            call,
            context,
            tag,
            Site::Exact(Recent::of(tag)),
        )
    }

    fn judge(
        &mut self,
        parameter: Parameter,
        call: u16,
        context: u32,
        value: i64,
        first: Site,
    ) -> bool {
        if self.is_lossless() {
            return false;
        }
        let (site, new) = match self.sites.entry((parameter, call, context)) {
            std::collections::hash_map::Entry::Occupied(site) => (site.into_mut(), false),
            std::collections::hash_map::Entry::Vacant(site) => (site.insert(first), true),
        };
        match *site {
            Site::Blurred => true,
            Site::Fresh if new => false,
            Site::Fresh => {
                *site = Site::Exact(Recent::of(value));
                false
            }
            Site::Tentative(_) if new => true,
            Site::Tentative(recent) if recent.holds(value) => {
                *site = Site::Blurred;
                true
            }
            Site::Exact(recent) if recent.holds(value) => false,
            Site::Exact(recent) | Site::Tentative(recent) => {
                if recent.within(self.precision, value) {
                    *site = Site::Blurred;
                    true
                } else {
                    *site = Site::Exact(recent.push(value));
                    false
                }
            }
        }
    }
}
