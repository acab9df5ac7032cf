//! Expanding a stream into its events: every occurrence in order, with exact keys, files
//! and offsets, times from the leaves' statistics, blurred values drawn from their
//! histograms at well-spread points; loop bodies decoded once per expansion.

use super::*;

impl EncodedStream {
    /// Every event in order, with exact keys, files and offsets; start and duration come
    /// from the leaves' mean gap and duration (exact only for the first start).
    pub fn expand(&self, class_of: impl Fn(u16) -> Option<CallClass>, visit: impl FnMut(Event)) {
        self.expand_for_rank(0, self.first_start, class_of, visit)
    }

    /// [`EncodedStream::expand`] for the rank `rank_delta` from the base rank, whose first
    /// event started at `first_start`.
    pub fn expand_for_rank(
        &self,
        rank_delta: i64,
        first_start: u64,
        class_of: impl Fn(u16) -> Option<CallClass>,
        mut visit: impl FnMut(Event),
    ) {
        self.expand_while_for_rank(rank_delta, first_start, class_of, |event| {
            visit(event);
            true
        })
    }

    /// [`EncodedStream::expand_for_rank`] until `visit` returns false: the walk stops there
    /// (a reader that has what it wants, or an export whose output failed, does not walk
    /// the rest of a billion-iteration loop).
    pub fn expand_while_for_rank(
        &self,
        rank_delta: i64,
        first_start: u64,
        class_of: impl Fn(u16) -> Option<CallClass>,
        visit: impl FnMut(Event) -> bool,
    ) {
        self.expand_while_for_view(RankView::of(rank_delta), first_start, class_of, visit)
    }

    /// [`EncodedStream::expand_while_for_rank`] as `view` sees the stream.
    pub fn expand_while_for_view(
        &self,
        view: RankView,
        first_start: u64,
        class_of: impl Fn(u16) -> Option<CallClass>,
        mut visit: impl FnMut(Event) -> bool,
    ) {
        for event in self.events_for_view(view, first_start, class_of) {
            if !visit(event) {
                return;
            }
        }
    }

    /// The events `view` sees, one at a time (`Events`): a reader that walks several
    /// streams side by side (the replay of a trace with histograms follows every rank's
    /// sends epoch by epoch) holds one of these per stream, not their events.
    pub fn events_for_view<C: Fn(u16) -> Option<CallClass>>(
        &self,
        view: RankView,
        first_start: u64,
        class_of: C,
    ) -> Events<'_, C> {
        self.events_for_view_seeded(view, first_start, class_of, EXPANSION_SEED)
    }

    /// [`EncodedStream::events_for_view`] with blurred values drawn from another seed (a
    /// replay's `--seed`): every reader given the same seed draws the same values.
    pub fn events_for_view_seeded<C: Fn(u16) -> Option<CallClass>>(
        &self,
        view: RankView,
        first_start: u64,
        class_of: C,
        seed: u64,
    ) -> Events<'_, C> {
        self.events_with_column(view, first_start, class_of, seed, &self.column)
    }

    /// [`EncodedStream::events_for_view_seeded`] taking irregular offsets from `column`:
    /// a member's own, in a stream ranks share whose members' columns differ (EVNT
    /// version 32; the stream's own column is then empty).
    pub fn events_with_column<'s, C: Fn(u16) -> Option<CallClass>>(
        &'s self,
        view: RankView,
        first_start: u64,
        class_of: C,
        seed: u64,
        column: &'s Column,
    ) -> Events<'s, C> {
        let top = self.nodes_for_view(view);
        let mut relative = Relative::default();
        relative.set_rank(self.rank_for(view.delta));
        Events {
            relative,
            rank: self
                .shared
                .then(|| self.sharing.base_rank.saturating_add(view.delta)),
            column: column.cursor(),
            clock: first_start,
            started: false,
            class_of,
            random: SplitMix::new(seed ^ view.delta as u64),
            loop_draws: FastMap::default(),
            sites: self.site_histograms(),
            points: FastMap::default(),
            relative_peers: FastMap::default(),
            repeats: FastMap::default(),
            decoded: DecodedBodies::default(),
            stack: vec![Frame::Once {
                id: top.id(),
                items: Box::new(top.iter()),
                index: 0,
                scope: (view.member as u64, view.members.max(1) as u64),
            }],
        }
    }

    /// Of each call site (call, calling context), the blurred sizes and peers of all the
    /// stream's leaves there, merged. When ranks merge, a site's values may all land in one
    /// rank part's leaf and leave another part's histograms empty: a rank expanding that
    /// part draws from the site's instead of drawing nothing.
    fn site_histograms(&self) -> FastMap<(u16, u32), SiteHistograms> {
        fn gather(body: Body, sites: &mut FastMap<(u16, u32), SiteHistograms>) {
            for item in body.iter() {
                match item {
                    Item::Leaf(leaf) => {
                        let Some(blurred) = leaf.blurred.as_deref() else {
                            continue;
                        };
                        let site = sites.entry((leaf.key.call, leaf.key.context)).or_default();
                        for (into, from) in [
                            (&mut site.size, blurred.size.as_ref()),
                            (&mut site.peer, blurred.peer.as_ref()),
                            (&mut site.peer_relative, blurred.peer_relative.as_ref()),
                            (&mut site.tag, blurred.tag.as_ref()),
                        ] {
                            if let Some(from) = from.filter(|from| from.count > 0) {
                                into.get_or_insert_with(|| Histogram::new(DEFAULT_BINS))
                                    .merge(from);
                            }
                        }
                    }
                    Item::Loop { body, .. } => gather(body, sites),
                }
            }
        }
        // One walk of the structure (not of the events it stands for).
        let mut sites = FastMap::default();
        gather(self.nodes(), &mut sites);
        sites
    }
}

/// A call site's blurred values over a whole stream.
#[derive(Default)]
struct SiteHistograms {
    size: Option<Histogram>,
    peer: Option<Histogram>,
    peer_relative: Option<Histogram>,
    tag: Option<Histogram>,
}

/// Where an expansion is in one body: read once (the top level, a loop run once) or decoded
/// and run `remaining` more times from `index`.
/// `scope`: which slice of a count histogram in the body is the walked member's (its index
/// among the members that share the body's histograms, and their number; 0 of 1 inside a
/// part only some ranks have, whose members the expansion does not know).
enum Frame<'s> {
    Once {
        id: usize,
        items: Box<dyn Iterator<Item = Item<'s>> + Send + 's>,
        index: usize,
        scope: (u64, u64),
    },
    Repeat {
        id: usize,
        items: Arc<[Item<'s>]>,
        index: usize,
        remaining: u64,
        scope: (u64, u64),
    },
}

/// A stream's events in order, expanded one at a time as they are asked for: memory is the
/// depth of the loop nest plus the decoded bodies, whatever the loops' counts. Every
/// event with exact keys, files and offsets; start and duration from the leaves' mean gap
/// and duration (exact only for the first start); blurred values drawn from their
/// histograms at well-spread points, in the same order by every reader.
pub struct Events<'s, C> {
    relative: Relative,
    /// The walked member's rank, when ranks share the stream (blurred peers relative to
    /// the rank are drawn for it).
    rank: Option<i64>,
    /// The column's entries not yet taken.
    column: super::ColumnCursor<'s>,
    clock: u64,
    started: bool,
    class_of: C,
    random: SplitMix,
    /// Per loop whose counts are a histogram (by body): this member's slice of it, and the
    /// occurrences and iterations drawn so far ([`Events::loop_count`]).
    loop_draws: FastMap<usize, (Histogram, u64, i128)>,
    /// Each call site's sizes and peers over the whole stream, for leaves whose own
    /// histograms are empty ([`EncodedStream::site_histograms`]).
    sites: FastMap<(u16, u32), SiteHistograms>,
    /// Where each blurred value's sequence of well-spread points is (by body, node in it,
    /// and value): its draws take the histogram's bins in proportion.
    points: FastMap<(usize, usize, u8), f64>,
    /// Per leaf (body, node) whose peers are blurred: whether they are drawn relative to
    /// the rank ([`fewer_relative`], decided once: it walks the sets).
    relative_peers: FastMap<(usize, usize), bool>,
    /// Per leaf (body, node) whose column entry stands for several occurrences in a row
    /// ([`super::ColumnSizes::repeat`]): occurrences met, and the entry last taken.
    repeats: FastMap<(usize, usize), (u64, i64)>,
    /// Loop bodies decoded once per expansion, for a body that runs more than once (a
    /// loop's): decoding a leaf's statistics again at every iteration cost more than the
    /// replayed call itself for a small I/O.
    decoded: DecodedBodies<'s>,
    stack: Vec<Frame<'s>>,
}

impl<C: Fn(u16) -> Option<CallClass>> Iterator for Events<'_, C> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            let (item, node, scope) = match self.stack.last_mut()? {
                Frame::Once {
                    id,
                    items,
                    index,
                    scope,
                } => match items.next() {
                    Some(item) => {
                        *index += 1;
                        (Taken::Owned(item), (*id, *index - 1), *scope)
                    }
                    None => {
                        self.stack.pop();
                        continue;
                    }
                },
                Frame::Repeat {
                    id,
                    items,
                    index,
                    remaining,
                    scope,
                } => {
                    if *index == items.len() {
                        *remaining -= 1;
                        *index = 0;
                    }
                    if *remaining == 0 || items.is_empty() {
                        self.stack.pop();
                        continue;
                    }
                    *index += 1;
                    (
                        Taken::Shared(items.clone(), *index - 1),
                        (*id, *index - 1),
                        *scope,
                    )
                }
            };
            match item.get() {
                Item::Leaf(leaf) => return Some(self.leaf(leaf, node)),
                Item::Loop {
                    count,
                    body,
                    counts,
                    ranks,
                    own,
                } => {
                    // Counts that differ: each occurrence draws its own.
                    let body = *body;
                    let count = match counts {
                        Some(counts) if *count > 0 => {
                            self.loop_count(counts, *own, body.id(), node, scope)
                        }
                        _ => *count,
                    };
                    let scope = if ranks.is_some() { (0, 1) } else { scope };
                    if count == 1 {
                        self.stack.push(Frame::Once {
                            id: body.id(),
                            items: Box::new(body.iter()),
                            index: 0,
                            scope,
                        });
                    } else if count > 1 {
                        let items = self.decoded.get(body);
                        self.stack.push(Frame::Repeat {
                            id: body.id(),
                            items,
                            index: 0,
                            remaining: count,
                            scope,
                        });
                    }
                }
            }
        }
    }
}

/// An item read from a body once, or one of a decoded body's.
// Lives on the stack for one step; boxing the item would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
enum Taken<'s> {
    Owned(Item<'s>),
    Shared(Arc<[Item<'s>]>, usize),
}

impl<'s> Taken<'s> {
    fn get(&self) -> &Item<'s> {
        match self {
            Taken::Owned(item) => item,
            Taken::Shared(items, index) => &items[*index],
        }
    }
}

impl<'s, C: Fn(u16) -> Option<CallClass>> Events<'s, C> {
    /// The next point of the sequence of `value` (golden-ratio steps from a drawn start: a
    /// low-discrepancy sequence in [0, 1)).
    fn point(&mut self, value: (usize, usize, u8)) -> f64 {
        const STEP: f64 = 0.618_033_988_749_894_9;
        let random = &mut self.random;
        let point = self.points.entry(value).or_insert_with(|| random.unit());
        let at = *point;
        *point = (at + STEP).fract();
        at
    }

    /// The count of a loop's next occurrence, drawn from this member's slice of its count
    /// histogram — its own exact occurrences and iterations where the loop keeps them
    /// (`own`), else an even slice ([`Histogram::share_evenly`]: the members of a shared
    /// stream hold its occurrences between them) — each draw kept where the slice's exact
    /// sum stays reachable by the occurrences left (within the histogram's range): the
    /// iterations a member expands add up to its slice's, and the members' to the recorded
    /// total.
    fn loop_count(
        &mut self,
        counts: &Histogram,
        own: Option<(u64, u64)>,
        body: usize,
        node: (usize, usize),
        (index, members): (u64, u64),
    ) -> u64 {
        // Taken out while drawing (the draw needs the generator), put back after.
        let (slice, drawn, sum) = self.loop_draws.remove(&body).unwrap_or_else(|| {
            let slice = match own {
                Some((occurrences, iterations)) => counts.exact_share(occurrences, iterations),
                None => counts.share_evenly(index, members),
            };
            (slice, 0, 0)
        });
        let at = self.point((node.0, node.1, 3));
        let source = if slice.count > 0 { &slice } else { counts };
        let mut count = source.draw_at(at, &mut self.random) as i128;
        // While the slice has occurrences left, keep its exact sum within reach: what is
        // left after this one must fit the occurrences after it, each within the range.
        let left = slice.count.saturating_sub(drawn + 1) as i128;
        if drawn < slice.count {
            let remaining = slice.sum - sum;
            let (low, high) = (counts.min as i128, counts.max as i128);
            count = count
                .clamp(remaining - left * high, remaining - left * low)
                .clamp(low, high);
        }
        self.loop_draws
            .insert(body, (slice, drawn + 1, sum + count));
        count.max(0) as u64
    }

    fn leaf(&mut self, leaf: &Leaf<EventKey>, node: (usize, usize)) -> Event {
        let mut key = leaf.key;
        let mut flags =
            key.flags & !(TAG_STEP | MEMBER_EXTENTS | MEMBER_SIZES | PEER_DOUBLED | PEER_HALVED);
        let class = (self.class_of)(key.call);
        // The column holds an occurrence's offset, then its size (each if the key says so).
        let offset_entry = (key.offset == OffsetRef::Column)
            .then(|| self.column.offset(column_site(key.call, key.context)))
            .flatten();
        if key.flags & SIZE_IN_COLUMN != 0 {
            let repeat = leaf.column_sizes.as_ref().map_or(1, |sizes| sizes.repeat);
            let site = column_site(key.call, key.context);
            let met = self.repeats.entry(node).or_default();
            let entry = self.column.repeated_size(site, repeat, met);
            let own = super::with_column_entry(&key, entry);
            (key.request, key.result) = (own.request, own.result);
            flags &= !SIZE_IN_COLUMN;
        }
        let (file_plus_one, offset, aux) = match key.offset {
            OffsetRef::Column => self.relative.decode_from_column(&key, class, offset_entry),
            _ => {
                // Blurred parameters drawn from their histograms: never a value
                // outside what the leaf saw; what follows is relative to them.
                let blurred = leaf.blurred.as_deref();
                let site = self.sites.get(&(key.call, key.context));
                let or_site = |own: Option<&'_ Histogram>, site: Option<&'_ Histogram>| {
                    own.filter(|own| own.count > 0).or(site).or(own).cloned()
                };
                let size = or_site(
                    blurred.and_then(|b| b.size.as_ref()),
                    site.and_then(|s| s.size.as_ref()),
                );
                let peers = or_site(
                    blurred.and_then(|b| b.peer.as_ref()),
                    site.and_then(|s| s.peer.as_ref()),
                );
                let tags = or_site(
                    blurred.and_then(|b| b.tag.as_ref()),
                    site.and_then(|s| s.tag.as_ref()),
                );
                let relative_peers = or_site(
                    blurred.and_then(|b| b.peer_relative.as_ref()),
                    site.and_then(|s| s.peer_relative.as_ref()),
                );
                // Only the parameters the key says are blurred are drawn (a leaf whose
                // size is a histogram may keep its peer and tag exactly).
                let flagged = |flag: u32| blurred.filter(|_| key.flags & flag != 0);
                if let Some(size) = flagged(BLURRED_SIZE).and(size) {
                    let at = self.point((node.0, node.1, 0));
                    let drawn = size.draw_at(at, &mut self.random);
                    if key.flags & BLURRED_RESULT != 0 {
                        key.result = drawn.wrapping_sub(key.request as i64);
                    } else if key.flags & BLURRED_CAPACITY != 0 {
                        // The capacity drawn; the result stays 0.
                        key.request = drawn.max(0) as u64;
                        key.result = (key.request as i64).wrapping_neg();
                    } else {
                        key.request = drawn.max(0) as u64;
                    }
                }
                if let Some(peers) = flagged(BLURRED_PEER).and(peers) {
                    // A peer drawn, then the nearest one the leaf really talked to: of
                    // the peers relative to the rank when they are fewer (ranks talking to
                    // neighbours at wandering distances), else of the ranks.
                    let at = self.point((node.0, node.1, 1));
                    let relative =
                        blurred
                            .zip(self.rank)
                            .zip(relative_peers)
                            .filter(|((b, _), _)| {
                                *self
                                    .relative_peers
                                    .entry((node.0, node.1))
                                    .or_insert_with(|| fewer_relative(b))
                            });
                    let peer = match relative {
                        Some(((b, rank), relative)) => {
                            let drawn = relative.draw_at(at, &mut self.random);
                            let seen = b
                                .peers_seen_relative
                                .as_ref()
                                .and_then(|seen| seen.nearest(drawn, relative.min, relative.max))
                                .unwrap_or(drawn);
                            let peer = rank.saturating_add(seen);
                            match b.peer_modulus {
                                0 => peer,
                                modulus => peer.rem_euclid(modulus),
                            }
                        }
                        None => {
                            let drawn = peers.draw_at(at, &mut self.random);
                            blurred
                                .and_then(|b| b.peers_seen.as_ref())
                                .and_then(|seen| seen.nearest(drawn, peers.min, peers.max))
                                .unwrap_or(drawn)
                        }
                    };
                    key.aux = (key.aux & !0xffff_ffff) | peer as u32 as u64;
                }
                if let Some(tags) = flagged(BLURRED_TAG).and(tags) {
                    let at = self.point((node.0, node.1, 4));
                    let drawn = tags.draw_at(at, &mut self.random);
                    key.aux = (key.aux & 0xffff_ffff) | (drawn as u32 as u64) << 32;
                }
                let offset = blurred.and_then(|b| b.offset.as_ref()).map(|offset| {
                    flags |= BLURRED_OFFSET;
                    (offset, self.point((node.0, node.1, 2)))
                });
                let offset = offset.map(|(offset, at)| offset.draw_at(at, &mut self.random));
                self.relative.decode_drawn(&key, class, offset)
            }
        };
        let key = &key;
        let start = if self.started {
            self.clock.saturating_add(leaf.gap.mean.round() as u64)
        } else {
            self.clock
        };
        self.started = true;
        let duration = leaf.duration.mean.round() as u64;
        self.clock = start.saturating_add(duration);
        let (request, result) = positional::absolute(key.flags, offset, key.request, key.result());
        Event {
            call: key.call,
            start,
            duration,
            file: file_plus_one.checked_sub(1).map(|file| file as u32),
            handle: key.handle,
            offset,
            request,
            result,
            errno: key.errno,
            context: key.context,
            aux,
            flags: flags
                | if leaf.duration.count > 1 {
                    event_flags::TIMES_FROM_STATISTICS
                } else {
                    0
                },
        }
    }
}

/// Whether a blurred peer is drawn relative to the rank: its relative peers seen are kept
/// and hold fewer distinct peers (modulo the job) than the ranks seen.
fn fewer_relative(blurred: &Blurred) -> bool {
    let Some(relative) = &blurred.peers_seen_relative else {
        return false;
    };
    let absolute = blurred
        .peers_seen
        .as_ref()
        .map_or(usize::MAX, |seen| seen.distinct(0));
    relative.distinct(blurred.peer_modulus) < absolute
}
