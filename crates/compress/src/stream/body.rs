//! Reading an encoded stream: its nodes as [`Item`]s of a [`Body`] — a loop's body is read
//! again each time it is walked, nothing is materialised — and a member's own nodes with
//! its share of a shared stream's statistics ([`Shares`]).

use super::pending::{self, Pending};
use super::*;

/// One node read from an encoded stream.
// Items live on the stack for one step of a walk; boxing the leaf would cost an
// allocation per event visited.
#[allow(clippy::large_enum_variant)]
pub enum Item<'a> {
    Leaf(Leaf<EventKey>),
    /// `count` is the walked rank's (0 if the loop is only some ranks' and not its own);
    /// `ranks`: the only ranks that have the loop (they run it once), if not all.
    Loop {
        count: u64,
        body: Body<'a>,
        ranks: Option<&'a RankSet>,
        /// Below precision 100: the iteration counts of all the loop's occurrences, when
        /// they differ (`count` is then the first's).
        counts: Option<Box<Histogram>>,
        /// With `counts` in a shared stream whose loop accesses files: the walked member's
        /// own exact occurrences and iterations ([`Sharing::loop_totals`]), when the walk is
        /// of the members they were kept for.
        own: Option<(u64, u64)>,
    },
}

/// Items of loop bodies kept decoded by one reader, at most (about 300 bytes each).
const DECODED_ITEMS: usize = 1 << 16;

/// Loop bodies decoded once for a reader that goes through them many times (an expansion,
/// a walk that reads the column: a loop's body at every iteration), up to
/// [`DECODED_ITEMS`] items in all; past that a body is decoded each time.
#[derive(Default)]
pub struct DecodedBodies<'a> {
    bodies: FastMap<usize, Arc<[Item<'a>]>>,
    items: usize,
}

impl<'a> DecodedBodies<'a> {
    pub fn get(&mut self, body: Body<'a>) -> Arc<[Item<'a>]> {
        if let Some(items) = self.bodies.get(&body.id()) {
            return items.clone();
        }
        let items: Arc<[Item<'a>]> = body.iter().collect();
        if self.items + items.len() <= DECODED_ITEMS {
            self.items += items.len();
            self.bodies.insert(body.id(), items.clone());
        }
        items
    }
}

/// A sequence of encoded nodes (a stream's top level, or a loop's body); walking it twice
/// reads it twice, nothing is materialised.
#[derive(Clone, Copy)]
pub struct Body<'a> {
    pub(super) data: &'a [u8],
    pub(super) nodes: u64,
    pub(super) dictionary: &'a [EventKey],
    /// The stream's rank slopes and sets, and how far the walked rank is from its base
    /// rank (inside a part only some ranks have: from the first of them).
    pub(super) parameters: &'a [RankSlopes],
    pub(super) rank_sets: &'a [RankSet],
    pub(super) shared: bool,
    pub(super) rank_delta: i64,
    /// The rank `rank_delta` is counted from (the stream's base rank, or inside a part
    /// only some ranks have, the first of them).
    pub(super) first_rank: i64,
    /// The distance whose membership of rank sets counts (`rank_delta` but in a scaled
    /// replay, [`RankView`]), and the job sizes a wrapping peer moves between.
    pub(super) member_delta: i64,
    pub(super) sizes: Option<(i64, i64)>,
    /// In a scaled walk, inside a part only one recorded rank has: its leaves are marked
    /// (`event_flags::FROM_ONE_RANK`), their values having no slope to follow.
    pub(super) one_rank: bool,
    /// How many times the stored loop counts around this body run it (their product, for
    /// the base rank): a leaf's statistics count is stored against it.
    pub(super) occurrences: u64,
    /// The walked member's place among the stream's members: its own offset ranges of
    /// leaves that keep each member's.
    pub(super) walked: Walked,
    /// What was posted before this body in the walked rank's view (a part only some ranks
    /// have continues the body around it; any other body starts from nothing), and
    /// whether the stream keeps completions against it ([`pending`](super::pending)).
    pub(super) pending: Pending,
    pub(super) counts_pending: bool,
}

impl<'a> Body<'a> {
    /// Where this body is stored: names one loop's body within its stream, the same for
    /// every member of a shared stream (for readers that keep something per loop).
    pub fn id(&self) -> usize {
        self.data.as_ptr() as usize
    }

    pub fn len(&self) -> u64 {
        self.nodes
    }

    pub fn is_empty(&self) -> bool {
        self.nodes == 0
    }

    /// The nodes in order, as the walked rank has them. The stream was checked when it was
    /// opened, so reading cannot fail.
    pub fn iter(&self) -> impl Iterator<Item = Item<'a>> + 'a {
        self.items()
    }

    fn items(&self) -> Items<'a> {
        Items {
            reader: ByteReader::new(self.data, "event stream"),
            body: *self,
            pending: self.pending,
            left: self.nodes,
        }
    }

    /// The nodes as stored: completions kept against what their body posted stay so, to
    /// be written back with the stream's [`Sharing`].
    fn iter_stored(&self) -> impl Iterator<Item = Item<'a>> + 'a {
        let mut reader = ByteReader::new(self.data, "event stream");
        let body = *self;
        (0..self.nodes).map_while(move |_| read_item(&mut reader, &body).ok())
    }

    /// What the walked rank has posted at the end of this body (a part: to go on with
    /// the body around it).
    pub(super) fn pending_after(&self) -> Pending {
        let mut items = self.items();
        items.by_ref().for_each(drop);
        items.pending
    }

    /// The nodes as stored (memory proportional to the folded size, not the event count):
    /// a part only some ranks have stays a loop run once, to be written back with the
    /// stream's [`Sharing`].
    pub fn to_nodes(&self) -> Vec<Node<EventKey>> {
        self.iter_stored()
            .map(|item| match item {
                Item::Leaf(leaf) => Node::Leaf(leaf),
                Item::Loop {
                    count,
                    body,
                    ranks,
                    counts,
                    ..
                } => Node::Loop {
                    count: if ranks.is_some() { 1 } else { count },
                    body: body.to_nodes(),
                    counts,
                },
            })
            .collect()
    }

    /// The walked rank's own nodes: parts of other ranks left out, its own parts inlined,
    /// and its share of the statistics of each leaf ([`Shares`]): the ranks that have a
    /// leaf split its statistics evenly, so however a later merge regroups them, each
    /// group gets its own ranks' part and the totals stay exact. `member` is its index
    /// among the sorted distances `shares` holds; what the stream keeps per member (loop
    /// totals, offset ranges, sizes) is read for the member this body is a view of.
    pub fn member_nodes(&self, shares: &mut Shares, member: usize) -> Vec<Node<EventKey>> {
        let mut nodes = Vec::new();
        let sharers = shares.members.clone();
        self.member_nodes_into(shares, &sharers, member, 1, &mut nodes);
        nodes
    }

    /// `sharers`: the distances (from this body's first rank) of the members that have
    /// this body, increasing; `member`: the walked one's index among them; `runs`: how
    /// many times the walked member runs this body.
    fn member_nodes_into(
        &self,
        shares: &mut Shares,
        sharers: &[i64],
        member: usize,
        runs: u64,
        nodes: &mut Vec<Node<EventKey>>,
    ) {
        let parts = sharers.len().max(1) as u64;
        for item in self.iter() {
            match item {
                Item::Leaf(mut leaf) => {
                    // Its own offset range and sizes are the member's now (read for its
                    // place), not shares.
                    let own_sizes = leaf.key.flags & MEMBER_SIZES != 0;
                    leaf.key.flags &= !(MEMBER_EXTENTS | MEMBER_SIZES);
                    leaf.duration = leaf.duration.share(member as u64, parts);
                    leaf.gap = leaf.gap.share(member as u64, parts);
                    if let Some(blurred) = &mut leaf.blurred {
                        let size = blurred.size.clone();
                        **blurred = blurred.share(member as u64, parts);
                        if own_sizes {
                            blurred.size = size;
                        }
                    }
                    nodes.push(Node::Leaf(leaf));
                }
                Item::Loop {
                    count,
                    body,
                    ranks: Some(set),
                    ..
                } => {
                    if count > 0 {
                        let inner = shares.part(body.id(), sharers, set);
                        // Where the walked member falls among the part's (members of
                        // one rank follow one another).
                        let delta = sharers.get(member).map_or(0, |delta| delta - set.first());
                        let same_rank = member - sharers.partition_point(|d| *d < sharers[member]);
                        let index = inner.partition_point(|d| *d < delta) + same_rank;
                        body.member_nodes_into(shares, &inner, index, runs, nodes);
                    }
                }
                Item::Loop {
                    count,
                    body,
                    ranks: None,
                    counts,
                    own,
                } => {
                    // A count histogram is over all the members' occurrences: each takes
                    // its own iterations where the loop keeps them (it accesses files),
                    // else an even slice of their iterations (the slices add up to the
                    // sum), counted as the occurrences it walks (members whose loops
                    // around this one run different counts walk it unevenly), so a merge
                    // of these members stores what walks of them take.
                    let counts = counts.map(|counts| {
                        Box::new(match own {
                            Some((_, iterations)) => counts.exact_share(runs, iterations),
                            None => counts.share_evenly(member as u64, parts).with_count(runs),
                        })
                    });
                    let inner_runs = body_runs(count, counts.as_deref(), runs);
                    let mut inner = Vec::new();
                    body.member_nodes_into(shares, sharers, member, inner_runs, &mut inner);
                    nodes.push(Node::Loop {
                        count,
                        body: inner,
                        counts,
                    });
                }
            }
        }
    }
}

/// A body's nodes as read for the walked rank, with what it has posted so far
/// ([`pending::step`]).
struct Items<'a> {
    reader: ByteReader<'a>,
    body: Body<'a>,
    pending: Pending,
    left: u64,
}

impl<'a> Iterator for Items<'a> {
    type Item = Item<'a>;

    fn next(&mut self) -> Option<Item<'a>> {
        self.left = self.left.checked_sub(1)?;
        let Ok(mut item) = read_item(&mut self.reader, &self.body) else {
            self.left = 0;
            return None;
        };
        pending::step(&mut self.pending, &mut item, self.body.counts_pending);
        Some(item)
    }
}

/// The walked member's place in its stream's list of members, and their number: which of
/// what a stream keeps per member is its own.
#[derive(Clone, Copy)]
pub(super) struct Walked {
    pub position: usize,
    pub members: usize,
    /// How many times the walked member runs the body being read: the loops' counts as
    /// it walks them (its own iterations where a loop keeps each member's).
    pub runs: u64,
}

impl Walked {
    pub(super) fn of(view: RankView) -> Walked {
        Walked {
            position: view.member as usize,
            members: view.members.max(1) as usize,
            runs: 1,
        }
    }

    /// The member's pair of a loop's or leaf's [`MemberTotals`]; `None` when there are
    /// none, or when the walk is not of the members they were kept for (a replay on
    /// another rank count).
    pub(super) fn own(&self, totals: Option<&MemberTotals>) -> Option<(u64, u64)> {
        totals
            .filter(|totals| totals.len() == self.members)
            .and_then(|totals| totals.get(self.position))
            .copied()
    }
}

/// The members of a shared stream, for splitting its statistics among them
/// ([`Body::member_nodes`]): their distances from the base rank, and for each part only
/// some ranks have, which of them have it (computed once per part, not per member).
pub struct Shares {
    members: Arc<[i64]>,
    parts: FastMap<usize, Arc<[i64]>>,
}

impl Shares {
    /// `members`: every member's distance from the stream's base rank (two processes of
    /// one rank: twice); the index given to [`Body::member_nodes`] is into them, sorted.
    pub fn new(mut members: Vec<i64>) -> Shares {
        members.sort_unstable();
        Shares {
            members: members.into(),
            parts: FastMap::default(),
        }
    }

    /// The members of the part `body` of `set` (distances from its first rank), of the
    /// `sharers` of the body around it.
    fn part(&mut self, body: usize, sharers: &[i64], set: &RankSet) -> Arc<[i64]> {
        self.parts
            .entry(body)
            .or_insert_with(|| {
                sharers
                    .iter()
                    .filter(|delta| set.contains(**delta))
                    .map(|delta| delta - set.first())
                    .collect()
            })
            .clone()
    }
}

/// Each member's (lowest offset, highest offset + size) of a leaf, as read.
pub(super) type Extents = Vec<(i64, i64)>;

/// What a leaf keeps per member, as read (without a walked member): offset ranges, and
/// the count and sum of blurred sizes.
pub(super) struct PerMember {
    pub extents: Option<Extents>,
    pub sizes: Option<MemberTotals>,
    pub orders: Option<MemberTotals>,
}

/// A leaf as stored; one that keeps each member's offset range (or sizes' count and sum)
/// takes `walked`'s own (when the walk is of the members they were kept for), or without
/// `walked` gives them all.
pub(super) fn read_leaf(
    reader: &mut ByteReader,
    key: EventKey,
    shared: bool,
    occurrences: u64,
    walked: Option<Walked>,
) -> Result<(Leaf<EventKey>, PerMember)> {
    let count = occurrences.wrapping_add(reader.i64()? as u64);
    let duration = Stats::decode_with_count(reader, true, count)?;
    let gap_count = duration.count.wrapping_add(reader.i64()? as u64);
    let gap = Stats::decode_with_count(reader, false, gap_count)?;
    let mut offset_low = reader.i64()?;
    let mut offset_high = offset_low.wrapping_add(reader.i64()?);
    let slowest = if shared { reader.i64()? } else { 0 };
    let mut all_extents = None;
    if shared && key.flags & MEMBER_EXTENTS != 0 {
        let extents = super::decode_extents(reader)?;
        match walked {
            Some(walked) => {
                if let Some(own) = (extents.len() == walked.members)
                    .then(|| extents.get(walked.position))
                    .flatten()
                {
                    (offset_low, offset_high) = *own;
                }
            }
            None => all_extents = Some(extents),
        }
    }
    let member_sizes = if shared && key.flags & MEMBER_SIZES != 0 {
        Some(super::decode_member_totals(reader)?)
    } else {
        None
    };
    let (mut order_counts, mut order_of, mut all_orders) = ([0; 2], 0, None);
    if key.order_in_leaf() {
        if shared {
            // Each member's own (one pair: every member's, alike): the walked member takes
            // its own, of its own occurrences; a reader of the whole stream, the pair or
            // the members' sums.
            let orders = super::decode_member_totals(reader)?;
            order_counts = super::pair_sums(orders.iter().copied());
            let own = match orders.len() {
                1 => Some(orders[0]),
                _ => walked.and_then(|walked| walked.own(Some(&orders))),
            };
            match (walked, own) {
                (Some(walked), Some((consecutive, sequential))) => {
                    order_counts = [consecutive, sequential];
                    order_of = walked.runs;
                }
                (None, _) if orders.len() > 1 => all_orders = Some(orders),
                _ => {}
            }
        } else {
            order_counts = [reader.u64()?, reader.u64()?];
        }
    }
    let mut blurred = None;
    if key.offset == OffsetRef::Blurred {
        blurred.get_or_insert_with(Box::<Blurred>::default).offset =
            Some(Histogram::decode(reader)?);
    }
    if key.flags & BLURRED_SIZE != 0 {
        blurred.get_or_insert_with(Box::<Blurred>::default).size = Some(Histogram::decode(reader)?);
    }
    if key.flags & BLURRED_PEER != 0 {
        let blurred = blurred.get_or_insert_with(Box::<Blurred>::default);
        blurred.peer = Some(Histogram::decode(reader)?);
        blurred.peers_seen = match reader.u64()? {
            0 => None,
            _ => Some(PeerSet::decode(reader)?),
        };
        let relative = reader.u64()?;
        if relative > 2 {
            return Err(reader.corrupt("relative peers marker out of range"));
        }
        if relative > 0 {
            blurred.peer_relative = Some(Histogram::decode(reader)?);
            if relative == 2 {
                blurred.peers_seen_relative = Some(PeerSet::decode(reader)?);
            }
            blurred.peer_modulus = reader.i64()?;
            if blurred.peer_modulus < 0 {
                return Err(reader.corrupt("negative job size of relative peers"));
            }
        }
    }
    if key.flags & BLURRED_TAG != 0 {
        blurred.get_or_insert_with(Box::<Blurred>::default).tag = Some(Histogram::decode(reader)?);
    }
    // In a stream ranks share, only the parts of the one rank that brought the column
    // read it (EVNT version 28), so a leaf's sizes are that rank's.
    let column_sizes = if key.flags & SIZE_IN_COLUMN != 0 {
        Some(Box::new(ColumnSizes::decode(reader, duration.count)?))
    } else {
        None
    };
    let mut all_sizes = None;
    if let Some(sizes) = member_sizes {
        let Some(whole) = blurred.as_mut().and_then(|b| b.size.as_mut()) else {
            return Err(reader.corrupt("member sizes without a size histogram"));
        };
        let (count, sum) = sizes.iter().fold((0u128, 0i128), |(count, sum), (c, s)| {
            (count + *c as u128, sum + *s as i128)
        });
        if count != whole.count as u128 || sum != whole.sum {
            return Err(reader.corrupt("member sizes do not add up to the leaf's"));
        }
        match walked {
            Some(walked) => {
                if let Some((count, sum)) = walked.own(Some(&sizes)) {
                    *whole = whole.exact_share(count, sum);
                }
            }
            None => all_sizes = Some(sizes),
        }
    }
    Ok((
        Leaf {
            key,
            duration,
            gap,
            offset_low,
            offset_high,
            slowest,
            order_counts,
            order_of,
            blurred,
            column_sizes,
        },
        PerMember {
            extents: all_extents,
            sizes: all_sizes,
            orders: all_orders,
        },
    ))
}

fn read_item<'a>(reader: &mut ByteReader<'a>, outer: &Body<'a>) -> Result<Item<'a>> {
    let tag = reader.u64()?;
    let key = match tag & 3 {
        TAG_KEY_REFERENCE => *outer
            .dictionary
            .get((tag >> 2) as usize)
            .ok_or_else(|| reader.corrupt("key index out of range"))?,
        TAG_LOOP => {
            let nodes = reader.u64()?;
            let counts = if nodes & 1 != 0 {
                Some(Box::new(Histogram::decode(reader)?))
            } else {
                None
            };
            let has_totals = nodes & 2 != 0;
            let nodes = nodes >> 2;
            let (slope, ranks) = if outer.shared {
                (reader.i64()?, reader.u64()?)
            } else {
                (0, 0)
            };
            let own = match &counts {
                Some(counts) if has_totals => outer
                    .walked
                    .own(Some(&super::decode_totals(reader, counts)?)),
                _ => None,
            };
            let data = reader.bytes()?;
            // In a stream ranks share, the count may be affine in the rank.
            let mut count = (tag >> 2) as i128 + slope as i128 * outer.rank_delta as i128;
            let mut rank_delta = outer.rank_delta;
            let mut member_delta = outer.member_delta;
            let mut first_rank = outer.first_rank;
            let ranks = (ranks as usize)
                .checked_sub(1)
                .and_then(|index| outer.rank_sets.get(index));
            // A part only some ranks have stores its values as the first of them has them;
            // a rank without it sees it as that rank does (to show), run no times.
            let mut one_rank = outer.one_rank;
            if let Some(set) = ranks {
                one_rank |= outer.sizes.is_some() && set.len() == 1;
                first_rank = first_rank.wrapping_add(set.first());
                if set.contains(member_delta) {
                    rank_delta -= set.first();
                    member_delta -= set.first();
                } else {
                    (count, rank_delta, member_delta) = (0, 0, 0);
                }
            }
            let occurrences = body_runs(tag >> 2, counts.as_deref(), outer.occurrences);
            let count = count.clamp(0, u64::MAX as i128) as u64;
            let walked = Walked {
                runs: match own {
                    Some((_, iterations)) => iterations,
                    None => count.saturating_mul(outer.walked.runs),
                },
                ..outer.walked
            };
            return Ok(Item::Loop {
                count,
                body: Body {
                    data,
                    nodes,
                    rank_delta,
                    member_delta,
                    one_rank,
                    first_rank,
                    occurrences,
                    walked,
                    ..*outer
                },
                ranks,
                counts,
                own,
            });
        }
        _ => decode_key(reader)?,
    };
    let (mut leaf, _) = read_leaf(
        reader,
        key,
        outer.shared,
        outer.occurrences,
        Some(outer.walked),
    )?;
    if let Some(slopes) = (leaf.key.parameters as usize)
        .checked_sub(1)
        .and_then(|index| outer.parameters.get(index))
    {
        slopes.apply(&mut leaf, outer.first_rank, outer.rank_delta, outer.sizes);
    }
    leaf.slowest = leaf.slowest.wrapping_sub(outer.rank_delta);
    if outer.one_rank {
        leaf.key.flags |= event_flags::FROM_ONE_RANK;
    }
    Ok(Item::Leaf(leaf))
}
