//! The encoded stream as stored and read back: checked once when opened (sizes, key
//! references, nesting, counts), then read as [`Body`] views for any member rank, and
//! rewritten whole where a trace changes (renumbered calls, merged loops).

use super::*;

/// An encoded, checked stream (EVNT section, docs/FORMAT.md).
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedStream {
    data: Vec<u8>,
    /// Irregular offsets (with their access order) and sizes of their own, per call site.
    pub(super) column: Column,
    body_start: usize,
    top_level_nodes: u64,
    pub(super) dictionary: Vec<EventKey>,
    /// Several ranks share the stream: its leaves say which rank was slowest.
    pub(super) shared: bool,
    /// A stream of one rank that keeps its rank (in `sharing.base_rank`): some peer is
    /// kept against it.
    ranked: bool,
    /// Rank slopes, loops' count slopes and rank sets (all empty or 0 unless shared).
    pub(super) sharing: Sharing,
    pub first_start: u64,
    pub last_end: u64,
    /// Events the stream stands for.
    pub count: u64,
    /// Highest call index and context any key uses, for the trace to check.
    pub max_call: u16,
    pub max_context: u32,
    blurred_sizes: bool,
    /// Some leaf keeps its sizes in the column ([`SIZE_IN_COLUMN`]).
    column_sizes: bool,
    /// Some loop's counts are a histogram (a member's event count is then walked).
    count_histograms: bool,
    /// Some peer doubles or halves the last at its call site ([`PEER_DOUBLED`]).
    rank_peers: bool,
    /// Some completion is kept against what its body posted ([`pending::COUNTS_PENDING`]).
    counts_pending: bool,
}

impl EncodedStream {
    /// Checks the whole structure once (sizes, key references, nesting depth, and that the
    /// loops add up to the event count) and builds the key dictionary.
    pub fn from_bytes(data: Vec<u8>) -> Result<EncodedStream> {
        let mut reader = ByteReader::new(&data, "event stream");
        let first_start = reader.u64()?;
        let last_end = first_start.saturating_add(reader.u64()?);
        let count = reader.u64()?;
        let top_level_nodes = reader.u64()?;
        let mut parameters = Vec::new();
        let table = reader.u64()?;
        let shared = table & 1 != 0;
        let ranked = table & 2 != 0 && !shared;
        let slopes = usize::try_from(table >> 2)
            .ok()
            .filter(|slopes| slopes.saturating_mul(RankSlopes::FIELDS + 1) <= reader.remaining())
            .ok_or_else(|| reader.corrupt("rank slopes table larger than the stream"))?;
        for _ in 0..slopes {
            let mut values = [0i64; RankSlopes::FIELDS];
            for value in &mut values {
                *value = reader.i64()?;
            }
            let mut slopes = RankSlopes::from_array(values);
            let peer = reader.u64()?;
            slopes.peer_modulus = i64::try_from(peer >> 2)
                .map_err(|_| reader.corrupt("peer modulus out of range"))?;
            slopes.peer_xor = peer & 1 != 0;
            if peer & 2 != 0 {
                slopes.peer_row_width = i64::try_from(reader.u64()?)
                    .ok()
                    .filter(|width| *width > 0)
                    .ok_or_else(|| reader.corrupt("grid width out of range"))?;
                slopes.peer_row_slope = reader.i64()?;
            }
            parameters.push(slopes);
        }
        let mut rank_sets = Vec::new();
        let mut base_rank = 0;
        if shared {
            base_rank = reader.i64()?;
            let sets = reader.u64()?;
            if sets as usize > reader.remaining() / 4 {
                return Err(reader.corrupt("rank sets larger than the stream"));
            }
            for _ in 0..sets {
                rank_sets.push(RankSet::decode(&mut reader)?);
            }
        } else if ranked {
            base_rank = reader.i64()?;
        }
        // Kept packed: its blocks' headers checked, no value decoded.
        let column = Column::read(&mut reader)?;
        let body_start = data.len() - reader.remaining();
        struct Check {
            dictionary: Vec<EventKey>,
            max_call: u16,
            max_context: u32,
            parameters: usize,
            shared: bool,
            rank_sets: usize,
            loop_slopes: Vec<i64>,
            loop_ranks: Vec<u32>,
            loop_totals: Vec<Option<MemberTotals>>,
            leaf_extents: Vec<Option<MemberExtents>>,
            leaf_sizes: Vec<Option<MemberTotals>>,
            leaf_orders: Vec<Option<MemberTotals>>,
            /// Column entries the leaves take (one per occurrence of a column leaf): offsets
            /// and sizes.
            offsets_taken: u64,
            sizes_taken: u64,
            blurred_sizes: bool,
            column_sizes: bool,
            count_histograms: bool,
            /// The stream knows its rank (shared, or kept): peers may follow it.
            has_rank: bool,
            rank_peers: bool,
            counts_pending: bool,
        }
        /// `runs`: how many times the loops around these nodes run them in all. Returns
        /// the events they stand for, in all.
        fn check(
            reader: &mut ByteReader,
            nodes: u64,
            depth: usize,
            runs: u64,
            state: &mut Check,
        ) -> Result<u64> {
            if depth > MAX_DEPTH {
                return Err(reader.corrupt("loops nested too deeply"));
            }
            let mut occurrences: u64 = 0;
            for _ in 0..nodes {
                let tag = reader.u64()?;
                let key = match tag & 3 {
                    TAG_KEY_REFERENCE => Some(
                        *state
                            .dictionary
                            .get((tag >> 2) as usize)
                            .ok_or_else(|| reader.corrupt("key index out of range"))?,
                    ),
                    TAG_LOOP => None,
                    kind => {
                        let key = decode_key(reader)?;
                        if kind == TAG_KEY_DEFINED {
                            if state.dictionary.len() >= MAX_DICTIONARY {
                                return Err(reader.corrupt("key dictionary too large"));
                            }
                            state.dictionary.push(key);
                        }
                        Some(key)
                    }
                };
                match key {
                    Some(key) => {
                        if key.parameters as usize > state.parameters {
                            return Err(reader.corrupt("rank slopes index out of range"));
                        }
                        if key.flags & (PEER_DOUBLED | PEER_HALVED) != 0 {
                            if !state.has_rank {
                                return Err(reader.corrupt("peer against a rank the stream lacks"));
                            }
                            state.rank_peers = true;
                        }
                        state.max_call = state.max_call.max(key.call);
                        state.max_context = state.max_context.max(key.context);
                        state.blurred_sizes |= key.flags & BLURRED_SIZE != 0;
                        state.column_sizes |= key.flags & SIZE_IN_COLUMN != 0;
                        state.counts_pending |= key.flags & pending::COUNTS_PENDING != 0;
                        let (leaf, per_member) = read_leaf(reader, key, state.shared, runs, None)?;
                        // One size entry stands for `repeat` occurrences in a row.
                        let repeat = leaf.column_sizes.as_ref().map_or(1, |sizes| sizes.repeat);
                        if !runs.is_multiple_of(repeat) {
                            return Err(reader.corrupt("column sizes do not agree with their leaf"));
                        }
                        state.leaf_extents.push(per_member.extents.map(Into::into));
                        state.leaf_sizes.push(per_member.sizes);
                        state.leaf_orders.push(per_member.orders);
                        let taken = |yes: bool| runs.saturating_mul(yes as u64);
                        state.offsets_taken = state
                            .offsets_taken
                            .saturating_add(taken(key.offset == OffsetRef::Column));
                        state.sizes_taken = state
                            .sizes_taken
                            .saturating_add(taken(key.flags & SIZE_IN_COLUMN != 0) / repeat);
                        occurrences = occurrences.saturating_add(runs);
                    }
                    None => {
                        let inner_nodes = reader.u64()?;
                        let counts = if inner_nodes & 1 != 0 {
                            Some(Histogram::decode(reader)?)
                        } else {
                            None
                        };
                        let has_totals = inner_nodes & 2 != 0;
                        state.count_histograms |= counts.is_some();
                        let inner_nodes = inner_nodes >> 2;
                        let (slope, ranks) = if state.shared {
                            (reader.i64()?, reader.u64()?)
                        } else {
                            (0, 0)
                        };
                        if ranks > state.rank_sets as u64 {
                            return Err(reader.corrupt("rank set index out of range"));
                        }
                        let totals = match (has_totals, &counts) {
                            (false, _) => None,
                            (true, Some(counts)) if state.shared => {
                                Some(decode_totals(reader, counts)?)
                            }
                            (true, _) => {
                                return Err(reader
                                    .corrupt("member totals of a loop without a count histogram"))
                            }
                        };
                        state.loop_totals.push(totals);
                        // A part only some ranks have is run once by them.
                        if ranks > 0 && (tag >> 2 != 1 || slope != 0) {
                            return Err(reader.corrupt("part of some ranks is not run once"));
                        }
                        state.loop_slopes.push(slope);
                        state.loop_ranks.push(ranks as u32);
                        let body = reader.bytes()?;
                        let mut inner = ByteReader::new(body, "loop body");
                        // A loop whose counts differ runs its body as often as they add
                        // up to, over all its occurrences.
                        let inner_runs = body_runs(tag >> 2, counts.as_ref(), runs);
                        let inside = check(&mut inner, inner_nodes, depth + 1, inner_runs, state)?;
                        if !inner.is_empty() {
                            return Err(reader.corrupt("loop body has trailing bytes"));
                        }
                        occurrences = occurrences.saturating_add(inside);
                    }
                }
            }
            Ok(occurrences)
        }
        let mut state = Check {
            dictionary: Vec::new(),
            max_call: 0,
            max_context: 0,
            parameters: parameters.len(),
            shared,
            rank_sets: rank_sets.len(),
            loop_slopes: Vec::new(),
            loop_ranks: Vec::new(),
            loop_totals: Vec::new(),
            leaf_extents: Vec::new(),
            leaf_sizes: Vec::new(),
            leaf_orders: Vec::new(),
            offsets_taken: 0,
            sizes_taken: 0,
            blurred_sizes: false,
            column_sizes: false,
            count_histograms: false,
            has_rank: shared || ranked,
            rank_peers: false,
            counts_pending: false,
        };
        let occurrences = check(&mut reader, top_level_nodes, 0, 1, &mut state)?;
        // A stream ranks share may keep no column of its own while its leaves take offsets
        // from one: each member has its own (EVNT version 32), and a reader that finds a
        // member's column short takes the offsets as unknown.
        let members_columns = shared && column.is_empty() && state.sizes_taken == 0;
        if (state.offsets_taken, state.sizes_taken) != (column.offsets(), column.sizes())
            && !members_columns
        {
            return Err(FormatError::Corrupt(
                "event stream's offset column does not match its leaves".into(),
            ));
        }
        if !reader.is_empty() {
            return Err(FormatError::Corrupt(
                "event stream has trailing bytes".into(),
            ));
        }
        if occurrences != count {
            return Err(FormatError::Corrupt(
                "event stream's loops do not add up to its event count".into(),
            ));
        }
        Ok(EncodedStream {
            data,
            column,
            body_start,
            top_level_nodes,
            dictionary: state.dictionary,
            shared,
            ranked,
            sharing: Sharing {
                parameters,
                loop_slopes: state.loop_slopes,
                loop_ranks: state.loop_ranks,
                loop_totals: state.loop_totals,
                leaf_extents: if state.leaf_extents.iter().any(Option::is_some) {
                    state.leaf_extents
                } else {
                    Vec::new()
                },
                leaf_sizes: if state.leaf_sizes.iter().any(Option::is_some) {
                    state.leaf_sizes
                } else {
                    Vec::new()
                },
                leaf_orders: if state.leaf_orders.iter().any(Option::is_some) {
                    state.leaf_orders
                } else {
                    Vec::new()
                },
                rank_sets,
                base_rank,
            },
            first_start,
            last_end,
            count,
            max_call: state.max_call,
            max_context: state.max_context,
            blurred_sizes: state.blurred_sizes,
            column_sizes: state.column_sizes,
            count_histograms: state.count_histograms,
            rank_peers: state.rank_peers,
            counts_pending: state.counts_pending,
        })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// Whether some of the stream's offsets or sizes are in its column (irregular
    /// accesses, lines of their own sizes): such a stream is shared only with ranks whose
    /// parts do not read it (EVNT version 28: rank 0's prints in the others' stream).
    pub fn has_column(&self) -> bool {
        !self.column.is_empty()
    }

    /// Whether a precision level below 100 made some of the stream's sizes histograms.
    pub fn has_blurred_sizes(&self) -> bool {
        self.blurred_sizes
    }

    /// Whether some leaf keeps its sizes in the column ([`SIZE_IN_COLUMN`]): a walk then
    /// reads the column to give each of those calls its own size.
    pub fn has_column_sizes(&self) -> bool {
        self.column_sizes
    }

    /// The column: each irregular offset's entry (see [`column_parts`]) and each size kept
    /// there, per call site in event order.
    pub fn column(&self) -> &Column {
        &self.column
    }

    /// The stream's top level.
    pub fn nodes(&self) -> Body<'_> {
        self.nodes_for_rank(0)
    }

    /// The stream's top level as the rank `rank_delta` away from its base rank sees it.
    pub fn nodes_for_rank(&self, rank_delta: i64) -> Body<'_> {
        self.nodes_for_view(RankView::of(rank_delta))
    }

    /// The stream's top level as `view` sees it.
    pub fn nodes_for_view(&self, view: RankView) -> Body<'_> {
        Body {
            data: &self.data[self.body_start..],
            nodes: self.top_level_nodes,
            dictionary: &self.dictionary,
            parameters: &self.sharing.parameters,
            rank_sets: &self.sharing.rank_sets,
            shared: self.shared,
            rank_delta: view.delta,
            member_delta: view.member_delta,
            sizes: view.sizes,
            one_rank: false,
            first_rank: self.sharing.base_rank,
            occurrences: 1,
            walked: Walked::of(view),
            pending: Default::default(),
            counts_pending: self.counts_pending,
        }
    }

    /// Whether some leaf keeps each member's blurred sizes ([`MEMBER_SIZES`]).
    pub fn has_member_sizes(&self) -> bool {
        !self.sharing.leaf_sizes.is_empty()
    }

    /// Whether some point-to-point call's peer doubles or halves the last mask at its call
    /// site (recursive doubling, whose number of rounds follows the job size).
    pub fn has_doubling_peers(&self) -> bool {
        self.rank_peers
    }

    /// The MPI rank of the member `rank_delta` from the base rank, when the stream knows
    /// its ranks (shared, or a rank's own stream that keeps it): readers decode peers kept
    /// against the rank with it.
    pub fn rank_for(&self, rank_delta: i64) -> Option<i64> {
        (self.shared || self.ranked).then(|| self.sharing.base_rank.wrapping_add(rank_delta))
    }

    /// The stream's rank slopes (empty unless several ranks share it).
    pub fn parameters(&self) -> &[RankSlopes] {
        &self.sharing.parameters
    }

    /// Rank slopes, loop count slopes and rank sets, as stored.
    pub fn sharing(&self) -> &Sharing {
        &self.sharing
    }

    /// Events the rank `rank_delta` away from the base rank made (loop counts may depend
    /// on the rank).
    pub fn count_for_rank(&self, rank_delta: i64) -> u64 {
        self.count_for_view(RankView::of(rank_delta))
    }

    /// Events the rank `view` stands for makes.
    pub fn count_for_view(&self, view: RankView) -> u64 {
        let slopes = view.delta != 0 && self.sharing.loop_slopes.iter().any(|slope| *slope != 0);
        let histograms = self.shared && self.count_histograms;
        if !slopes && !histograms && self.sharing.rank_sets.is_empty() {
            return self.count;
        }
        // The events of `runs` runs of `body`: a loop whose counts differ runs its body
        // the member's own iterations where it keeps them, else the member's even share
        // of their sum.
        fn count(body: Body, runs: u64) -> u64 {
            body.iter()
                .map(|item| match item {
                    Item::Leaf(_) => runs,
                    Item::Loop {
                        count: times,
                        body,
                        counts,
                        own,
                        ..
                    } => {
                        let inner = match (counts, own) {
                            (Some(_), Some((_, iterations))) if times > 0 => iterations,
                            (Some(counts), None) if times > 0 && counts.count > 0 => {
                                (counts.sum.max(0) as u128 * runs as u128 / counts.count as u128)
                                    .min(u64::MAX as u128) as u64
                            }
                            _ => runs.saturating_mul(times),
                        };
                        count(body, inner)
                    }
                })
                .fold(0u64, u64::saturating_add)
        }
        count(self.nodes_for_view(view), 1)
    }

    /// The same stream with other first and last times (traces merged from runs that
    /// started at different moments are put on one time line).
    pub fn with_times(&self, first_start: u64, last_end: u64) -> EncodedStream {
        assemble(
            first_start,
            last_end,
            self.count,
            self.top_level_nodes,
            &self.sharing,
            (self.shared, self.ranked),
            &self.column,
            &self.data[self.body_start..],
        )
        .expect("a stream read back is written again")
    }

    /// The same stream with every key passed through `change` (a merged trace renumbers
    /// calls and contexts). Costs a decode and an encode of the folded form.
    pub fn map_keys(&self, mut change: impl FnMut(&mut EventKey)) -> EncodedStream {
        self.map_leaves(|leaf| change(&mut leaf.key))
    }

    /// The same stream with every leaf passed through `change`.
    pub fn map_leaves(&self, mut change: impl FnMut(&mut Leaf<EventKey>)) -> EncodedStream {
        let mut nodes = self.nodes().to_nodes();
        crate::fold::for_each_leaf_mut(&mut nodes, &mut change);
        Self::encode_nodes(
            &nodes,
            self.first_start,
            self.last_end,
            &self.sharing,
            self.shared,
            &self.column,
        )
    }

    /// This stream with adjacent loops that differ only in reads' and writes' sizes merged,
    /// and iterations left beside their loops joined (`stream/resized.rs`), if any were;
    /// `io`: what a call's column entry would hold. Only for a stream of one thread of one
    /// rank without a column (which ranks would no longer share): when the trace is written.
    pub fn with_resized_loops_merged(
        &self,
        io: &dyn Fn(u16) -> Option<ColumnRole>,
    ) -> Option<EncodedStream> {
        self.rewritten(io, true)
    }

    /// This stream with iterations left beside their loops joined (those that differ only
    /// in access order: a file's first access), if any were. No column is made, so ranks
    /// may still share it: for each rank's streams, before ranks merge.
    pub fn with_iterations_joined(
        &self,
        io: &dyn Fn(u16) -> Option<ColumnRole>,
    ) -> Option<EncodedStream> {
        self.rewritten(io, false)
    }

    fn rewritten(
        &self,
        io: &dyn Fn(u16) -> Option<ColumnRole>,
        resize: bool,
    ) -> Option<EncodedStream> {
        // Completions kept against what their body posted would not survive loops
        // regrouped.
        if self.shared
            || !self.column.is_empty()
            || self.column_sizes
            || self.count_histograms
            || self.counts_pending
        {
            return None;
        }
        let nodes = self.nodes().to_nodes();
        let (nodes, column) = resized::merge_resized_loops(&nodes, io, resize)?;
        let rewritten = Self::encode_nodes(
            &nodes,
            self.first_start,
            self.last_end,
            &self.sharing,
            false,
            &column,
        );
        // Loops merged for their sizes trade keys for column entries: kept only when that
        // is smaller (a farm's irregular messages merged into loops whose sizes all
        // differ are not).
        if resize && rewritten.bytes().len() >= self.bytes().len() {
            return None;
        }
        Some(rewritten)
    }

    fn encode_nodes(
        nodes: &[Node<EventKey>],
        first_start: u64,
        last_end: u64,
        sharing: &Sharing,
        shared: bool,
        column: &Column,
    ) -> EncodedStream {
        Self::from_nodes_with_column(nodes, (first_start, last_end), sharing, shared, column)
            .expect("a stream this encoder wrote reads back")
    }

    /// Encodes a tree of nodes (e.g. several ranks' streams merged) with its rank slopes
    /// and sets; `shared`: several ranks share it (their leaves' `slowest` is kept).
    pub fn from_nodes(
        nodes: &[Node<EventKey>],
        first_start: u64,
        last_end: u64,
        sharing: &Sharing,
        shared: bool,
    ) -> EncodedStream {
        Self::encode_nodes(
            nodes,
            first_start,
            last_end,
            sharing,
            shared,
            &Column::default(),
        )
    }

    /// As [`EncodedStream::from_nodes`], with the column of the one member whose leaves
    /// read it (ranks merged with a rank that printed lines of their own sizes: only that
    /// rank's parts read the column, in its own order). An error when the leaves would not
    /// take exactly the column's entries (the caller then keeps that rank apart).
    pub fn from_nodes_with_column(
        nodes: &[Node<EventKey>],
        (first_start, last_end): (u64, u64),
        sharing: &Sharing,
        shared: bool,
        column: &Column,
    ) -> cairn_format::Result<EncodedStream> {
        let mut writer = NodeWriter {
            shared,
            sharing,
            ..NodeWriter::default()
        };
        let mut body = ByteWriter::new();
        for node in nodes {
            writer.node(node, 1, &mut body);
        }
        assemble(
            first_start,
            last_end,
            crate::fold::occurrence_count(nodes),
            nodes.len() as u64,
            sharing,
            (shared, writer.rank_peers),
            column,
            &body.buffer,
        )
    }
}
