//! A replayed thread's MPI state: its requests in flight, its open files, its buffers; and
//! the point-to-point calls and completions.

use std::collections::VecDeque;
use std::ffi::c_int;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn_model::Event;
use cairn_mpi_abi::Family;

use super::{count, is_completion, Job, ANY_TAG, H};
use crate::posix::Moved;

pub(super) struct Pending {
    pub(super) request: u64,
    pub(super) buffer: Vec<u8>,
    /// A point-to-point receive: its bytes are what its status says arrived.
    pub(super) receive: bool,
    /// An MPI-IO request, on this recorded file: the library may progress it only inside a
    /// test or a wait (not `MPI_Request_get_status`), so polling tests it, which frees it
    /// when done (its handle becomes `MPI_REQUEST_NULL`, which the wait then completes at
    /// once).
    pub(super) file: Option<u64>,
    /// Count, displacement and datatype arrays a non-blocking v- or w-form reads until it
    /// completes.
    pub(super) arrays: Vec<Vec<u64>>,
}

/// How long a wait keeps polling without a new completion before it takes the requests
/// that are done (a recorded request array that held `MPI_REQUEST_NULL`s).
const STALLED: Duration = Duration::from_secs(2);

/// One replayed thread's MPI state.
pub(crate) struct Thread<'a, 't> {
    pub(super) job: &'a Job<'t>,
    pub(super) pending: VecDeque<Pending>,
    /// Buffers of requests freed with `MPI_Request_free`, kept until the end (the operation
    /// may still use them).
    pub(super) orphans: Vec<Vec<u8>>,
    /// Recorded file handle → the replay's `MPI_File`.
    pub(super) files: std::collections::HashMap<u64, u64>,
    /// The send half of an `MPI_Sendrecv(_replace)` whose received half comes next.
    pub(super) sendrecv: Option<Event>,
    pub(super) payload: Vec<u8>,
    pub(super) landing: Vec<u8>,
    pub(super) statuses: Vec<u64>,
    /// Derived mode ([`super::derived`]): whether this thread posts the derived receives
    /// (one thread per rank), the synchronisation points it issued, the receives of its
    /// epoch, and the bytes they got.
    pub(super) owns_epochs: bool,
    pub(super) synchronised: usize,
    pub(super) derived: Vec<Pending>,
    pub(super) derived_bytes: u64,
    /// MPI-IO requests left unfinished at their file's close ([`Thread::settle_file`]).
    pub(crate) unfinished: u64,
    /// The buffer of the split collective begun and not yet ended (MPI allows one per
    /// file at a time; a thread's are one after another).
    pub(super) split: Vec<u8>,
    /// Messages matched by a probe and not yet received (`MPI_Mprobe`, `MPI_Improbe`), and
    /// the last matched probe's source, tag and communicator (the receive does not know
    /// them).
    pub(super) messages: VecDeque<u64>,
    pub(super) probed: Option<(c_int, c_int, H)>,
    /// Communicators made again (recorded handle → the replay's), and the creating call
    /// waiting for its `MPI_Comm_made` share (its name and parent).
    pub(super) made: std::collections::HashMap<u64, u64>,
    pub(super) creating: Option<(&'static str, H)>,
}

impl<'a, 't> Thread<'a, 't> {
    pub(crate) fn new(job: &'a Job<'t>) -> Thread<'a, 't> {
        let mut thread = Thread {
            job,
            pending: VecDeque::new(),
            orphans: Vec::new(),
            files: Default::default(),
            sendrecv: None,
            payload: Vec::new(),
            landing: Vec::new(),
            statuses: Vec::new(),
            owns_epochs: false,
            synchronised: 0,
            derived: Vec::new(),
            derived_bytes: 0,
            unfinished: 0,
            split: Vec::new(),
            messages: VecDeque::new(),
            probed: None,
            made: Default::default(),
            creating: None,
        };
        if job.derived.is_some() && job.claim_epochs() {
            thread.owns_epochs = true;
            thread.post_epoch();
        }
        thread
    }

    /// Bytes the derived receives got (derived mode), for the report.
    pub(crate) fn received_from_senders(&self) -> u64 {
        self.derived_bytes
    }

    /// Starts an `MPI_Irecv` (traced like the program's) into a buffer of its own.
    pub(super) fn start_receive(&self, source: c_int, tag: c_int, bytes: u64, comm: H) -> Pending {
        let f = &self.job.mpi.functions;
        let c = &self.job.mpi.constants;
        let mut pending = Pending {
            request: 0,
            buffer: vec![0; bytes as usize],
            receive: true,
            file: None,
            arrays: Vec::new(),
        };
        let buffer = pending.buffer.as_mut_ptr().cast();
        // SAFETY: a buffer the pending receive owns until it completes, a request slot of
        // ours, the library's own handles.
        unsafe {
            (f.irecv)(
                buffer,
                count(bytes),
                c.byte,
                source,
                tag,
                comm,
                (&raw mut pending.request).cast(),
            )
        };
        pending
    }

    /// Completes the derived receives (through PMPI, unseen), counting what they got.
    pub(super) fn complete_receives(&mut self) {
        let requests: Vec<u64> = self.derived.iter().map(|p| p.request).collect();
        let mut array = self.request_array(&requests);
        let statuses = self.statuses(requests.len());
        // SAFETY: our requests, room for as many statuses.
        unsafe {
            (self.job.mpi.functions.drain)(
                requests.len() as c_int,
                array.as_mut_ptr().cast(),
                statuses,
            )
        };
        let finished = std::mem::take(&mut self.derived);
        self.derived_bytes += self.received(&finished, |index| index);
    }

    pub(super) fn payload(&mut self, bytes: usize) -> H {
        if self.payload.len() < bytes {
            self.payload.resize(bytes, b'c');
        }
        self.payload.as_mut_ptr().cast()
    }

    pub(super) fn landing(&mut self, bytes: usize) -> H {
        if self.landing.len() < bytes {
            self.landing.resize(bytes, 0);
        }
        self.landing.as_mut_ptr().cast()
    }

    /// Room for `count` statuses of the library, 8-aligned.
    pub(super) fn statuses(&mut self, count: usize) -> H {
        let words = (count.max(1) * self.job.mpi.status_size).div_ceil(8);
        if self.statuses.len() < words {
            self.statuses.resize(words, 0);
        }
        self.statuses.as_mut_ptr().cast()
    }

    /// The bytes status `index` of [`Thread::statuses`] says arrived.
    pub(super) fn status_bytes(&self, index: usize) -> u64 {
        let at = self.statuses.as_ptr().cast::<u8>();
        // SAFETY: `index` is below the count the statuses were made room for, and filled by
        // the library.
        unsafe {
            cairn_mpi_abi::status_bytes(at.add(index * self.job.mpi.status_size).cast())
                .unwrap_or(0)
        }
    }

    /// An array of requests as the library lays it out (pointers, or ints in the MPICH
    /// family).
    pub(super) fn request_array(&self, requests: &[u64]) -> Vec<u64> {
        match self.job.mpi.family {
            Family::OpenMpi => requests.to_vec(),
            Family::Mpich => packed_ints(requests.iter().map(|request| *request as u32)),
        }
    }

    /// Indices into `pending`, oldest first, of up to `wanted` requests that are done (see
    /// the module's note on completions).
    pub(super) fn done_requests(&mut self, wanted: usize) -> Vec<usize> {
        let wanted = wanted.min(self.pending.len());
        let mut done: Vec<usize> = Vec::new();
        let mut status = [0u64; 4];
        let mut last_progress = Instant::now();
        loop {
            let functions = &self.job.mpi.functions;
            for (index, pending) in self.pending.iter_mut().enumerate() {
                if done.len() == wanted {
                    break;
                }
                if done.contains(&index) {
                    continue;
                }
                let mut flag: c_int = 0;
                // SAFETY: a request of ours (tested in place: the library may replace it
                // with the null request); the status has room for either family's.
                unsafe {
                    if pending.file.is_some() {
                        (functions.pmpi_test)(
                            (&raw mut pending.request).cast(),
                            (&raw mut flag).cast(),
                            status.as_mut_ptr().cast(),
                        )
                    } else {
                        (functions.request_status)(
                            pending.request as usize as H,
                            (&raw mut flag).cast(),
                            status.as_mut_ptr().cast(),
                        )
                    }
                };
                if flag != 0 {
                    done.push(index);
                    last_progress = Instant::now();
                }
            }
            if done.len() == wanted || last_progress.elapsed() > STALLED {
                done.sort_unstable();
                return done;
            }
            std::thread::yield_now();
        }
    }

    /// Takes `indices` (ascending) out of `pending`.
    pub(super) fn take(&mut self, indices: &[usize]) -> Vec<Pending> {
        let mut taken = Vec::with_capacity(indices.len());
        for index in indices.iter().rev() {
            if let Some(pending) = self.pending.remove(*index) {
                taken.push(pending);
            }
        }
        taken.reverse();
        taken
    }

    /// Bytes the finished receives among `finished` got, from statuses 0.. of the call.
    pub(super) fn received(&self, finished: &[Pending], status_of: impl Fn(usize) -> usize) -> u64 {
        finished
            .iter()
            .enumerate()
            .filter(|(_, pending)| pending.receive)
            .map(|(index, _)| self.status_bytes(status_of(index)))
            .sum()
    }

    /// Before the file `recorded` closes: this thread's MPI-IO requests on it that are still
    /// pending are tested once more; one not finished is left to the library (its buffer
    /// kept, counted), so no request outlives its file in our hands (a wait on it after the
    /// close would touch a freed file).
    pub(super) fn settle_file(&mut self, recorded: u64) {
        let mut status = [0u64; 4];
        let functions = &self.job.mpi.functions;
        let mut kept = VecDeque::with_capacity(self.pending.len());
        for mut pending in std::mem::take(&mut self.pending) {
            if pending.file != Some(recorded) {
                kept.push_back(pending);
                continue;
            }
            let mut flag: c_int = 0;
            // SAFETY: a request of ours, tested in place; room for either family's status.
            unsafe {
                (functions.pmpi_test)(
                    (&raw mut pending.request).cast(),
                    (&raw mut flag).cast(),
                    status.as_mut_ptr().cast(),
                )
            };
            if flag == 0 {
                self.unfinished += 1;
                self.orphans.push(pending.buffer);
            }
            // Finished: freed by the test; its recorded wait, if any, finds nothing.
        }
        self.pending = kept;
    }

    /// The replay's communicator for a recorded one: one made again, else the job's.
    pub(super) fn communicator(&self, recorded: u64) -> Option<H> {
        match self.made.get(&recorded) {
            Some(made) => Some(*made as usize as H),
            None => self.job.communicator(recorded),
        }
    }

    /// Ranks in `comm`.
    pub(super) fn comm_size(&self, comm: H) -> c_int {
        let mut size: c_int = 0;
        // SAFETY: a communicator of the replay's, an out-pointer to an int of ours.
        unsafe { (self.job.mpi.functions.comm_size)(comm, (&raw mut size).cast()) };
        size
    }

    /// Communicator creation (lossless traces): the creating call is held until its
    /// `MPI_Comm_made` share says who is in the new communicator and in which order (the
    /// world rank of its rank 0 as the color, the rank in it as the key); then a dup is
    /// made as a dup, anything else as a split of the same parent (a group or a grid's
    /// shape is not kept; its members and order are). `None`: not such a call.
    fn communicator_call(&mut self, name: &str, event: &Event) -> Option<Option<Moved>> {
        let mpi = self.job.mpi;
        let held = match name {
            "MPI_Comm_split" => "MPI_Comm_split",
            "MPI_Comm_split_type" => "MPI_Comm_split_type",
            "MPI_Comm_dup" => "MPI_Comm_dup",
            "MPI_Comm_create" => "MPI_Comm_create",
            "MPI_Cart_create" => "MPI_Cart_create",
            "MPI_Comm_made" => {
                let Some((creating, parent)) = self.creating.take() else {
                    return Some(None);
                };
                let color = event.aux as u32 as c_int;
                let key = (event.aux >> 32) as u32 as c_int;
                let mut new = 0u64;
                // SAFETY: a communicator of the replay's, an out-pointer to a slot large
                // enough for either family's handle (zeroed: MPICH writes the low half).
                unsafe {
                    if creating == "MPI_Comm_dup" {
                        (mpi.functions.comm_dup_traced)(parent, (&raw mut new).cast());
                    } else {
                        (mpi.functions.comm_split)(parent, color, key, (&raw mut new).cast());
                    }
                }
                self.made.insert(event.handle, new);
                return Some(Some(Moved::Nothing));
            }
            // One made again is freed again (the world-wide copy of an older trace is not).
            "MPI_Comm_free" => {
                let mut made = self.made.remove(&event.handle)?;
                if made as usize as H != mpi.constants.comm_null {
                    // SAFETY: a communicator this replay made, freed once.
                    unsafe { (mpi.functions.comm_free)((&raw mut made).cast()) };
                }
                return Some(Some(Moved::Nothing));
            }
            _ => return None,
        };
        let parent = self.communicator(event.handle)?;
        self.creating = Some((held, parent));
        Some(Some(Moved::Nothing))
    }

    /// Completes whatever is still in flight (the end of the rank's replay).
    pub(crate) fn drain(&mut self) {
        if self.owns_epochs {
            self.finish_epochs();
        }
        let requests: Vec<u64> = self.pending.iter().map(|p| p.request).collect();
        let mut array = self.request_array(&requests);
        // SAFETY: our requests, statuses ignored.
        unsafe {
            (self.job.mpi.functions.drain)(
                requests.len() as c_int,
                array.as_mut_ptr().cast(),
                self.job.mpi.constants.status_ignore,
            )
        };
        self.pending.clear();
        self.orphans.clear();
    }

    /// Re-issues one MPI or MPI-IO call; `None` for one the replayer does not re-issue.
    pub(crate) fn issue(
        &mut self,
        name: &str,
        event: &Event,
        path: Option<&Path>,
    ) -> Option<Moved> {
        match name {
            // The replayer itself starts and ends MPI.
            "MPI_Init" | "MPI_Init_thread" | "MPI_Finalize" => Some(Moved::Nothing),
            _ if name.starts_with("MPI_File") => self.file_call(name, event, path),
            _ => {
                if is_completion(name) {
                    return self.completion(name, event);
                }
                if !self.job.derived_mode() {
                    if let Some(moved) = self.communicator_call(name, event) {
                        return moved;
                    }
                }
                // Communicators the trace cannot rebuild are skipped (see the module note).
                let comm = self.communicator(event.handle)?;
                if self.owns_epochs {
                    // Derived mode: receives come from the senders' draws, collectives
                    // from rank 0's (see `derived`).
                    if super::derived::receives(name) {
                        return Some(Moved::Nothing);
                    }
                    if super::derived::synchronises(self.job.trace, event) {
                        self.synchronise();
                        return Some(Moved::Written(event.request));
                    }
                    if name == "MPI_Sendrecv" || name == "MPI_Sendrecv_replace" {
                        return self.communication("MPI_Send", event, comm);
                    }
                }
                self.communication(name, event, comm)
            }
        }
    }

    fn communication(&mut self, name: &str, event: &Event, world: H) -> Option<Moved> {
        let mpi = self.job.mpi;
        let (f, c) = (&mpi.functions, &mpi.constants);
        let bytes = count(event.request);
        let peer = event.aux as u32 as i32;
        let tag = (event.aux >> 32) as u32 as i32;
        // A wildcard, whatever family recorded it: the replay's own.
        let source = if peer < 0 {
            cairn_mpi_abi::any_source()
        } else {
            peer
        };
        let receive_tag = if tag < 0 { ANY_TAG } else { tag };
        let root = peer.max(0);
        let mut status = [0u64; 4];
        let status_pointer: H = status.as_mut_ptr().cast();
        let sent = Some(Moved::Written(bytes as u64));
        // SAFETY (every block below): buffers of at least the stated byte counts, owned by
        // this thread (or by the pending request that uses them), the library's own
        // handles, and out-pointers to values of ours.
        match name {
            "MPI_Send" | "MPI_Rsend" | "MPI_Bsend" => {
                let buffer = self.payload(bytes as usize);
                unsafe { (f.send)(buffer, bytes, c.byte, peer, tag, world) };
                sent
            }
            "MPI_Ssend" => {
                let buffer = self.payload(bytes as usize);
                unsafe { (f.ssend)(buffer, bytes, c.byte, peer, tag, world) };
                sent
            }
            // A persistent request's start replays as the non-blocking call it stands for.
            "MPI_Isend" | "MPI_Issend" | "MPI_Irsend" | "MPI_Ibsend" | "MPI_Start_send" => {
                let mut pending = Pending {
                    request: 0,
                    buffer: vec![b'c'; bytes as usize],
                    receive: false,
                    file: None,
                    arrays: Vec::new(),
                };
                let start = if name == "MPI_Issend" {
                    f.issend
                } else {
                    f.isend
                };
                let buffer = pending.buffer.as_mut_ptr().cast();
                unsafe {
                    start(
                        buffer,
                        bytes,
                        c.byte,
                        peer,
                        tag,
                        world,
                        (&raw mut pending.request).cast(),
                    )
                };
                self.pending.push_back(pending);
                sent
            }
            "MPI_Recv" => {
                let buffer = self.landing(bytes as usize);
                unsafe {
                    (f.recv)(
                        buffer,
                        bytes,
                        c.byte,
                        source,
                        receive_tag,
                        world,
                        status_pointer,
                    )
                };
                Some(Moved::Read(
                    unsafe { cairn_mpi_abi::status_bytes(status_pointer) }.unwrap_or(0),
                ))
            }
            "MPI_Irecv" | "MPI_Start_recv" => {
                let pending = self.start_receive(source, receive_tag, event.request, world);
                self.pending.push_back(pending);
                Some(Moved::Nothing)
            }
            "MPI_Probe" => {
                unsafe { (f.probe)(source, receive_tag, world, status_pointer) };
                Some(Moved::Nothing)
            }
            // A matched probe keeps its message for the receive that follows. The trace
            // does not say whether an `MPI_Improbe` found one: each is made once, and a
            // receive with no message in hand probes until one comes (its run received one).
            "MPI_Mprobe" | "MPI_Improbe" => {
                let (mut message, mut flag) = (0u64, 0 as c_int);
                unsafe {
                    if name == "MPI_Mprobe" {
                        flag = 1;
                        (f.mprobe)(
                            source,
                            receive_tag,
                            world,
                            (&raw mut message).cast(),
                            status_pointer,
                        );
                    } else {
                        (f.improbe)(
                            source,
                            receive_tag,
                            world,
                            (&raw mut flag).cast(),
                            (&raw mut message).cast(),
                            status_pointer,
                        );
                    }
                }
                if flag != 0 {
                    self.messages.push_back(message);
                }
                self.probed = Some((source, receive_tag, world));
                Some(Moved::Nothing)
            }
            "MPI_Mrecv" | "MPI_Imrecv" => {
                let mut message = match self.messages.pop_front() {
                    Some(message) => message,
                    None => {
                        let (source, tag, comm) = self.probed?;
                        let (mut message, mut flag) = (0u64, 0 as c_int);
                        while flag == 0 {
                            unsafe {
                                (f.improbe)(
                                    source,
                                    tag,
                                    comm,
                                    (&raw mut flag).cast(),
                                    (&raw mut message).cast(),
                                    status_pointer,
                                )
                            };
                        }
                        message
                    }
                };
                if name == "MPI_Mrecv" {
                    let buffer = self.landing(bytes as usize);
                    unsafe {
                        (f.mrecv)(
                            buffer,
                            bytes,
                            c.byte,
                            (&raw mut message).cast(),
                            status_pointer,
                        )
                    };
                    return Some(Moved::Read(
                        unsafe { cairn_mpi_abi::status_bytes(status_pointer) }.unwrap_or(0),
                    ));
                }
                let mut pending = Pending {
                    request: 0,
                    buffer: vec![0; bytes.max(0) as usize],
                    receive: true,
                    file: None,
                    arrays: Vec::new(),
                };
                unsafe {
                    (f.imrecv)(
                        pending.buffer.as_mut_ptr().cast(),
                        bytes,
                        c.byte,
                        (&raw mut message).cast(),
                        (&raw mut pending.request).cast(),
                    )
                };
                self.pending.push_back(pending);
                Some(Moved::Nothing)
            }
            "MPI_Iprobe" => {
                let mut flag: c_int = 0;
                unsafe {
                    (f.iprobe)(
                        source,
                        receive_tag,
                        world,
                        (&raw mut flag).cast(),
                        status_pointer,
                    )
                };
                Some(Moved::Nothing)
            }
            "MPI_Sendrecv" | "MPI_Sendrecv_replace" => {
                self.sendrecv = Some(event.clone());
                sent
            }
            "MPI_Sendrecv_received" | "MPI_Sendrecv_replace_received" => {
                let send = self.sendrecv.take()?;
                let (send_bytes, destination) = (count(send.request), send.aux as u32 as i32);
                let send_tag = (send.aux >> 32) as u32 as i32;
                if name == "MPI_Sendrecv_replace_received" {
                    let buffer = self.landing(send_bytes.max(bytes) as usize);
                    unsafe {
                        (f.sendrecv_replace)(
                            buffer,
                            send_bytes,
                            c.byte,
                            destination,
                            send_tag,
                            source,
                            receive_tag,
                            world,
                            status_pointer,
                        )
                    };
                } else {
                    let out = self.payload(send_bytes as usize);
                    let into = self.landing(bytes as usize);
                    unsafe {
                        (f.sendrecv)(
                            out,
                            send_bytes,
                            c.byte,
                            destination,
                            send_tag,
                            into,
                            bytes,
                            c.byte,
                            source,
                            receive_tag,
                            world,
                            status_pointer,
                        )
                    };
                }
                Some(Moved::Read(
                    unsafe { cairn_mpi_abi::status_bytes(status_pointer) }.unwrap_or(0),
                ))
            }
            _ => self.collective(name, event, bytes, root, world),
        }
    }

    fn completion(&mut self, name: &str, event: &Event) -> Option<Moved> {
        let mpi = self.job.mpi;
        let f = &mpi.functions;
        let named = cairn_model::completion_requests(event.aux, event.flags) as usize;
        let mut flag: c_int = 0;
        let mut index: c_int = 0;
        let mut outcount: c_int = 0;
        let received;
        // SAFETY (every block below): arrays of our requests laid out as the library wants
        // them, room for as many statuses and indices, out-pointers to ints of ours.
        match name {
            "MPI_Wait" | "MPI_Waitall" | "MPI_Testall" | "MPI_Test" | "MPI_Request_free" => {
                // A test that finished receives in the run waits for them in the replay, so
                // that their bytes arrive in the same call.
                let blocking = name.starts_with("MPI_Wait")
                    || (name.starts_with("MPI_Test") && event.result > 0);
                let chosen: Vec<usize> = if blocking {
                    self.done_requests(named.max(1))
                } else {
                    (0..named.max(1).min(self.pending.len())).collect()
                };
                let requests: Vec<u64> = chosen.iter().map(|i| self.pending[*i].request).collect();
                if name == "MPI_Request_free" && requests.is_empty() {
                    // A persistent request freed after its last completion (its starts
                    // replay as non-blocking calls): nothing to free, and freeing
                    // MPI_REQUEST_NULL is an error.
                    return Some(Moved::Nothing);
                }
                let mut array = self.request_array(&requests);
                if name != "MPI_Waitall" && name != "MPI_Testall" && requests.is_empty() {
                    // Nothing pending: the call on MPI_REQUEST_NULL, as a program may make it.
                    array = self.request_array(&[mpi.constants.request_null as usize as u64]);
                }
                let statuses = self.statuses(requests.len());
                let array_pointer: H = array.as_mut_ptr().cast();
                let n = requests.len() as c_int;
                unsafe {
                    match name {
                        "MPI_Wait" => (f.wait)(array_pointer, statuses),
                        "MPI_Waitall" => (f.waitall)(n, array_pointer, statuses),
                        "MPI_Test" => (f.test)(array_pointer, (&raw mut flag).cast(), statuses),
                        "MPI_Testall" => {
                            (f.testall)(n, array_pointer, (&raw mut flag).cast(), statuses)
                        }
                        _ => (f.request_free)(array_pointer),
                    }
                };
                if requests.is_empty() {
                    return Some(Moved::Nothing);
                }
                if name == "MPI_Request_free" {
                    let freed = self.take(&chosen);
                    self.orphans.extend(freed.into_iter().map(|p| p.buffer));
                    return Some(Moved::Nothing);
                }
                if name.starts_with("MPI_Wait") || flag != 0 {
                    let finished = self.take(&chosen);
                    received = self.received(&finished, |i| i);
                } else {
                    received = 0;
                }
            }
            "MPI_Waitany" | "MPI_Waitsome" | "MPI_Testany" | "MPI_Testsome" => {
                if name.starts_with("MPI_Wait") || event.result > 0 {
                    // Block only once something is done (see the module note); a test that
                    // finished receives in the run waits for one.
                    self.done_requests(1);
                }
                let requests: Vec<u64> = self.pending.iter().map(|p| p.request).collect();
                let mut array = self.request_array(&requests);
                let n = requests.len() as c_int;
                let statuses = self.statuses(requests.len());
                let mut indices = vec![0 as c_int; requests.len().max(1)];
                let array_pointer: H = array.as_mut_ptr().cast();
                let indices_pointer: H = indices.as_mut_ptr().cast();
                unsafe {
                    match name {
                        "MPI_Waitany" => {
                            (f.waitany)(n, array_pointer, (&raw mut index).cast(), statuses)
                        }
                        "MPI_Testany" => (f.testany)(
                            n,
                            array_pointer,
                            (&raw mut index).cast(),
                            (&raw mut flag).cast(),
                            statuses,
                        ),
                        "MPI_Waitsome" => (f.waitsome)(
                            n,
                            array_pointer,
                            (&raw mut outcount).cast(),
                            indices_pointer,
                            statuses,
                        ),
                        _ => (f.testsome)(
                            n,
                            array_pointer,
                            (&raw mut outcount).cast(),
                            indices_pointer,
                            statuses,
                        ),
                    }
                };
                let finished: Vec<usize> = if name.ends_with("any") {
                    if index >= 0 && (name == "MPI_Waitany" || flag != 0) && n > 0 {
                        vec![index as usize]
                    } else {
                        Vec::new()
                    }
                } else {
                    let mut some: Vec<usize> = indices[..outcount.max(0) as usize]
                        .iter()
                        .map(|i| *i as usize)
                        .collect();
                    some.sort_unstable();
                    some
                };
                let statuses_in_order: Vec<usize> = if name.ends_with("any") {
                    vec![0]
                } else {
                    // Waitsome and Testsome fill statuses in the order of `indices`.
                    let order: Vec<usize> = indices[..outcount.max(0) as usize]
                        .iter()
                        .map(|i| *i as usize)
                        .collect();
                    finished
                        .iter()
                        .map(|i| order.iter().position(|o| o == i).unwrap_or(0))
                        .collect()
                };
                let finished = self.take(&finished);
                received = self.received(&finished, |i| statuses_in_order[i]);
            }
            _ => return None,
        }
        Some(Moved::Read(received))
    }
}

/// 32-bit values laid out as a C `int` array, in 64-bit words (zeroed past the end): MPICH's
/// handle arrays, and count and displacement arrays in either family.
pub(super) fn packed_ints(values: impl ExactSizeIterator<Item = u32>) -> Vec<u64> {
    let mut packed = vec![0u64; values.len().div_ceil(2).max(1)];
    let at = packed.as_mut_ptr().cast::<u32>();
    for (index, value) in values.enumerate() {
        // SAFETY: `packed` holds room for `values.len()` u32s.
        unsafe { *at.add(index) = value };
    }
    packed
}
