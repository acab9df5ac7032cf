//! A completion of every request its loop body posted (`MPI_Waitall` after a halo
//! exchange's `MPI_Irecv`s and `MPI_Isend`s), kept against what the body posted.
//!
//! Why: on a process grid a corner rank posts 4 requests, an edge rank 6 and an interior
//! rank 8, so its `MPI_Waitall` names 4, 6 or 8 requests and gets 2, 3 or 4 receives'
//! bytes: three keys, so three parts of the merged stream, each with its own timing
//! statistics and rank set, where the ranks' posts already share a loop (each rank lacking
//! the directions it has no neighbour in). Kept as "every request posted since" — the
//! count and bytes minus what the body posted before it — the waits of all ranks have one
//! key and merge into one leaf.
//!
//! The rule is structural, not dynamic, so that a reader that takes loops in bulk (a walk
//! visits a loop's body once for many iterations) computes the same thing as the writer:
//! within one body, in order, every leaf of a call that posts a request adds one request and the bytes a
//! receive may still get (its capacity less what it got at posting: `−key.result`); a part
//! only some ranks have counts as its nodes inlined, for the ranks that run it; a loop is a
//! body of its own (it starts from nothing). A completion that names exactly that many
//! requests, two or more ([`COUNTS_PENDING`]), stores the differences (0 and, when every receive filled
//! its buffer, 0) and starts the count again; the posts it counted are flagged
//! ([`POSTED`]), which is all a reader counts. The writer marks the ranks' own trees, as a
//! rank's inlined view of the merged stream has them, before ranks merge; readers undo it in
//! [`super::Body::iter`], so nothing past the stored form ever sees either flag.

use super::{EventKey, Item, Node, BLURRED_RESULT, BLURRED_SIZE};
use cairn_model::event_flags;

/// A leaf of a call that posts a request (`MPI_Isend`, `MPI_Irecv`, `MPI_Iallreduce`,
/// `MPI_File_iwrite`) that a later [`COUNTS_PENDING`] completion in its body counts.
pub const POSTED: u32 = 1 << 15;
/// A completion whose request count (`aux`) and result are kept less the requests and
/// receive bytes its body posted since the previous such completion.
pub const COUNTS_PENDING: u32 = 1 << 16;

/// What a body posted since its start or its last [`COUNTS_PENDING`] completion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    requests: u64,
    bytes: u64,
}

impl Pending {
    fn post(&mut self, key: &EventKey) {
        self.requests = self.requests.saturating_add(1);
        // A receive got nothing at posting: its result is its capacity less.
        let open = key.result.checked_neg().unwrap_or(0).max(0) as u64;
        self.bytes = self.bytes.saturating_add(open);
    }
}

/// Marks a rank's own tree (no parts): every completion that names exactly the requests
/// its body posted since the last one so marked [`COUNTS_PENDING`], its count and bytes
/// kept less those, and the posts it counted [`POSTED`]. Not a completion of one request
/// (`MPI_Wait` after `MPI_Isend`): every rank's is alike anyway, and flagged keys are a
/// byte or two longer. `posts` and `completes` say which calls post requests and which
/// complete them.
pub fn mark(
    nodes: &mut [Node<EventKey>],
    posts: &dyn Fn(u16) -> bool,
    completes: &dyn Fn(u16) -> bool,
) {
    let mut pending = Pending::default();
    // The posts since the last marked completion: marked with the next one (a post no
    // marked completion counts keeps its key, which costs a byte or two more flagged).
    let mut posted = Vec::new();
    for index in 0..nodes.len() {
        match &mut nodes[index] {
            Node::Leaf(leaf) => {
                let key = &mut leaf.key;
                if posts(key.call) {
                    posted.push(index);
                    pending.post(key);
                } else if completes(key.call)
                    && pending.requests > 1
                    && key.aux == pending.requests
                    && key.flags
                        & (event_flags::COMPLETED_FROM
                            | event_flags::FAILED
                            | BLURRED_SIZE
                            | BLURRED_RESULT)
                        == 0
                {
                    key.flags |= COUNTS_PENDING;
                    key.aux = 0;
                    key.result = key.result.wrapping_sub(pending.bytes as i64);
                    pending = Pending::default();
                    for post in posted.drain(..) {
                        if let Node::Leaf(leaf) = &mut nodes[post] {
                            leaf.key.flags |= POSTED;
                        }
                    }
                }
            }
            Node::Loop { body, .. } => mark(body, posts, completes),
        }
    }
}

/// Undoes [`mark`] on a tree without parts (a stream one rank kept alone after all).
pub fn resolve(nodes: &mut [Node<EventKey>]) {
    let mut pending = Pending::default();
    for node in nodes {
        match node {
            Node::Leaf(leaf) => resolve_leaf(&mut pending, &mut leaf.key),
            Node::Loop { body, .. } => resolve(body),
        }
    }
}

fn resolve_leaf(pending: &mut Pending, key: &mut EventKey) {
    if key.flags & POSTED != 0 {
        key.flags &= !POSTED;
        pending.post(key);
    } else if key.flags & COUNTS_PENDING != 0 {
        key.flags &= !COUNTS_PENDING;
        key.aux = key.aux.wrapping_add(pending.requests);
        key.result = key.result.wrapping_add(pending.bytes as i64);
        *pending = Pending::default();
    }
}

/// One item of a body as read, as the walked rank has it: flags undone, a marked
/// completion's count and bytes restored, a part's body told what was posted before it and
/// (`parts`: the stream has marked completions) looked through for what it posts.
pub(super) fn step(pending: &mut Pending, item: &mut Item, parts: bool) {
    match item {
        Item::Leaf(leaf) => resolve_leaf(pending, &mut leaf.key),
        Item::Loop {
            count,
            body,
            ranks: Some(_),
            ..
        } => {
            body.pending = *pending;
            // A part the walked rank does not run is shown as its first rank has it; what
            // that rank posted before it is not known here (readers that show it walk
            // that rank), and it posts nothing for the walked rank.
            if parts && *count > 0 {
                *pending = body.pending_after();
            }
        }
        Item::Loop { body, .. } => body.pending = Pending::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold::Leaf;
    use crate::stream::{FileRef, OffsetRef};

    fn leaf(call: u16, request: u64, result: i64, aux: u64) -> Node<EventKey> {
        let key = EventKey {
            call,
            context: 0,
            handle: 0,
            file: FileRef::None,
            offset: OffsetRef::Unknown,
            request,
            result: result - request as i64,
            errno: 0,
            aux,
            flags: 0,
            order: 0,
            parameters: 0,
        };
        Node::Leaf(Leaf::bare(key))
    }

    const IRECV: u16 = 1;
    const ISEND: u16 = 2;
    const WAITALL: u16 = 3;
    const SEND: u16 = 4;

    fn marked(mut nodes: Vec<Node<EventKey>>) -> Vec<Node<EventKey>> {
        mark(&mut nodes, &|call| matches!(call, IRECV | ISEND), &|call| {
            call == WAITALL
        });
        nodes
    }

    fn key(node: &Node<EventKey>) -> EventKey {
        match node {
            Node::Leaf(leaf) => leaf.key,
            Node::Loop { .. } => panic!("a loop"),
        }
    }

    /// A corner's and an interior rank's exchanges: their waits get one key, and undoing
    /// the marks gives back each rank's own.
    #[test]
    fn waits_of_every_request_posted_get_one_key_and_come_back() {
        let exchange = |neighbours: usize| {
            let mut nodes: Vec<Node<EventKey>> =
                (0..neighbours).map(|_| leaf(IRECV, 8192, 0, 7)).collect();
            nodes.extend((0..neighbours).map(|_| leaf(ISEND, 8192, 8192, 7)));
            nodes.push(leaf(
                WAITALL,
                0,
                8192 * neighbours as i64,
                2 * neighbours as u64,
            ));
            nodes.push(leaf(SEND, 8, 8, 0));
            vec![Node::Loop {
                count: 20,
                body: nodes,
                counts: None,
            }]
        };
        let corner = marked(exchange(2));
        let interior = marked(exchange(4));
        let wait = |nodes: &[Node<EventKey>], at: usize| match &nodes[0] {
            Node::Loop { body, .. } => key(&body[at]),
            Node::Leaf(_) => unreachable!(),
        };
        assert_eq!(wait(&corner, 4), wait(&interior, 8));
        assert_eq!(wait(&corner, 4).aux, 0);
        assert_eq!(wait(&corner, 4).result, 0);
        assert_eq!(wait(&corner, 0).flags, POSTED);
        assert_eq!(wait(&corner, 5).flags, 0, "a blocking send is not posted");
        for (mut nodes, neighbours) in [(corner, 2usize), (interior, 4)] {
            resolve(&mut nodes);
            assert!(nodes == exchange(neighbours), "{neighbours} neighbours");
        }
    }

    /// A wait of fewer requests than posted (one of two sends' waits), or after a receive
    /// that got less than it posted for, keeps its own values.
    #[test]
    fn a_wait_of_other_requests_keeps_its_count() {
        let nodes = marked(vec![
            leaf(ISEND, 8, 8, 1),
            leaf(ISEND, 8, 8, 1),
            leaf(WAITALL, 0, 0, 1),
            leaf(WAITALL, 0, 0, 1),
        ]);
        assert_eq!(key(&nodes[2]).aux, 1);
        assert_eq!(key(&nodes[2]).flags, 0);
        let nodes = marked(vec![
            leaf(IRECV, 100, 0, 1),
            leaf(IRECV, 100, 0, 1),
            leaf(WAITALL, 0, 160, 2),
        ]);
        assert_eq!(key(&nodes[2]).flags, COUNTS_PENDING);
        assert_eq!(key(&nodes[2]).result, -40, "160 of the 200 posted");
        // One request's completion is left alone (every rank's is alike).
        let nodes = marked(vec![leaf(ISEND, 8, 8, 1), leaf(WAITALL, 0, 0, 1)]);
        assert_eq!(key(&nodes[1]).flags, 0);
        assert_eq!(key(&nodes[0]).flags, 0);
    }
}
