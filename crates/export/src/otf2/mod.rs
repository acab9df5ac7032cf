//! OTF2 archives, for Vampir and every tool of the Score-P family, written through libotf2
//! (loaded at run time, see [`library`]).
//!
//! The archive looks like a Score-P trace of the same run: a system tree of the hosts, a
//! location group per process (named by rank), a location per thread, a region per call
//! entered and left around each call, and the I/O paradigm records Vampir's I/O views read:
//! an I/O handle per process, file and paradigm (`POSIX`, `ISOC` for stdio, `MPI-IO`),
//! created by each successful open (`IoCreateHandle`), destroyed by each close, and an
//! `IoOperationBegin`/`IoOperationComplete` pair per read, write and flush with the bytes
//! asked for and moved. Point-to-point messages on `MPI_COMM_WORLD` with a concrete peer and
//! tag become `MpiSend`/`MpiRecv` records, so Vampir draws their lines, when every rank is
//! exported, and blocking collectives on it `MpiCollectiveBegin`/`End` records (the
//! operation, its root, the call's bytes as sent and received). A non-blocking receive's
//! `MpiRecv` is written when the completion that finished it ends: the completion of one
//! receive names its source (the earliest receive posted from it, with the bytes that
//! arrived); any other completion call (wait, test) that got bytes draws every receive
//! still posted, with the bytes that arrived if it was one, else with the size posted (the
//! trace does not say which of several requests were receives, nor how the bytes split);
//! what is left when the thread ends is drawn at its last call's end.
//!
//! Events are written stream by stream as the trace is expanded (libotf2 buffers a chunk
//! per location and flushes it), and the definitions, gathered meanwhile, at the end; a
//! stream's expanded events follow one another in time (the expansion's clock only moves
//! forward), which is the order OTF2 asks for within a location.

mod definitions;
mod library;

use std::ffi::{c_void, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use cairn_model::{CallClass, Event, Layer, MessageBytes};
use cairn_trace::Trace;
use definitions::Definitions;
use library::*;

use crate::{ExportError, Filter};

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub locations: u64,
    /// Enter/Leave pairs: one per call.
    pub calls: u64,
    /// IoOperationBegin/Complete pairs.
    pub io_operations: u64,
    /// MpiSend and MpiRecv records.
    pub messages: u64,
    /// MpiCollectiveBegin/End pairs.
    pub collectives: u64,
}

/// The archive's I/O paradigms, by the identification Score-P gives them.
const IO_PARADIGMS: [(Layer, &str, &str, u8, u32); 3] = [
    (
        Layer::Posix,
        "POSIX",
        "POSIX I/O",
        IO_PARADIGM_CLASS_SERIAL,
        IO_PARADIGM_FLAG_OS,
    ),
    (
        Layer::Stdio,
        "ISOC",
        "ISO C I/O",
        IO_PARADIGM_CLASS_SERIAL,
        IO_PARADIGM_FLAG_NONE,
    ),
    (
        Layer::MpiIo,
        "MPI-IO",
        "MPI I/O",
        IO_PARADIGM_CLASS_PARALLEL,
        IO_PARADIGM_FLAG_NONE,
    ),
];

/// The communicator every message record names: `MPI_COMM_WORLD`.
const WORLD: u32 = 0;

/// The blocking collectives, at the index of their `OTF2_CollectiveOp`.
const COLLECTIVES: [&str; 17] = [
    "MPI_Barrier",
    "MPI_Bcast",
    "MPI_Gather",
    "MPI_Gatherv",
    "MPI_Scatter",
    "MPI_Scatterv",
    "MPI_Allgather",
    "MPI_Allgatherv",
    "MPI_Alltoall",
    "MPI_Alltoallv",
    "MPI_Alltoallw",
    "MPI_Allreduce",
    "MPI_Reduce",
    "MPI_Reduce_scatter",
    "MPI_Scan",
    "MPI_Exscan",
    "MPI_Reduce_scatter_block",
];

/// Whether every rank of the job is exported (then `MPI_COMM_WORLD` is defined): ranks
/// 0 to N−1 all there, none left out by the filter.
fn whole_world(trace: &Trace, filter: &Filter) -> bool {
    let mut ranks: Vec<u32> = trace.processes.iter().filter_map(|p| p.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    !ranks.is_empty()
        && ranks
            .iter()
            .enumerate()
            .all(|(index, rank)| *rank == index as u32)
        && trace
            .processes
            .iter()
            .all(|process| process.rank.is_none() || filter.keeps_process(process))
}

/// Writes `trace` as an OTF2 archive in `directory` (made by libotf2; it must not exist):
/// `traces.otf2`, `traces.def` and `traces/`.
pub fn write(trace: &Trace, filter: &Filter, directory: &Path) -> Result<Written, ExportError> {
    let library = Library::load()?;
    let path = CString::new(directory.as_os_str().as_bytes())
        .map_err(|_| ExportError::Otf2("the output path holds a NUL byte".into()))?;
    // SAFETY: NUL-terminated strings; chunk sizes within libotf2's limits (256 KiB–16 MiB).
    let handle = unsafe {
        (library.Archive_Open)(
            path.as_ptr(),
            c"traces".as_ptr(),
            FILEMODE_WRITE,
            1 << 20,
            4 << 20,
            SUBSTRATE_POSIX,
            COMPRESSION_NONE,
        )
    };
    if handle.is_null() {
        return Err(ExportError::Otf2(format!(
            "libotf2 could not create an archive in {}",
            directory.display()
        )));
    }
    let archive = Archive {
        library: &library,
        handle,
    };
    let callbacks = FlushCallbacks {
        pre_flush,
        post_flush,
    };
    // SAFETY: an open archive; the callbacks are plain functions, the creator a static
    // string; libotf2 copies the callbacks' struct.
    unsafe {
        library.check(
            (library.Archive_SetFlushCallbacks)(handle, &callbacks, std::ptr::null_mut()),
            "setting flush callbacks",
        )?;
        library.check(
            (library.Archive_SetSerialCollectiveCallbacks)(handle),
            "setting collective callbacks",
        )?;
        library.check(
            (library.Archive_SetCreator)(handle, c"cairn".as_ptr()),
            "setting the creator",
        )?;
        library.check(
            (library.Archive_OpenEvtFiles)(handle),
            "opening event files",
        )?;
    }
    let world = whole_world(trace, filter);
    let mut definitions = Definitions::default();
    let mut written = Written::default();
    let mut end = 0u64;
    for (index, stream) in trace.streams.iter().enumerate() {
        let process = &trace.processes[stream.process as usize];
        if !filter.keeps_process(process) {
            continue;
        }
        let location = index as u64;
        // SAFETY: an open archive with its event files open.
        let writer = unsafe { (library.Archive_GetEvtWriter)(handle, location) };
        if writer.is_null() {
            return Err(ExportError::Otf2("libotf2 gave no event writer".into()));
        }
        let mut events = Events {
            library: &library,
            writer,
            process: stream.process,
            definitions: &mut definitions,
            written: &mut written,
            next_matching: 0,
            world,
            posted: Vec::new(),
            last_end: 0,
        };
        let mut failure = Ok(());
        filter.expand(trace, stream, |event| {
            end = end.max(event.start + event.duration);
            failure = events.call(trace, &event);
            failure.is_ok()
        });
        failure?;
        events.finish()?;
        let mut count = 0u64;
        // SAFETY: the writer just used, closed once, after its events are counted.
        unsafe {
            library.check(
                (library.EvtWriter_GetNumberOfEvents)(writer, &mut count),
                "counting events",
            )?;
            library.check(
                (library.Archive_CloseEvtWriter)(handle, writer),
                "closing an event writer",
            )?;
        }
        definitions.location(stream.process, stream.thread, location, count);
        written.locations += 1;
    }
    // SAFETY: an open archive; each local definition file is made empty, as readers expect
    // one per location.
    unsafe {
        library.check(
            (library.Archive_CloseEvtFiles)(handle),
            "closing event files",
        )?;
        library.check(
            (library.Archive_OpenDefFiles)(handle),
            "opening definition files",
        )?;
        for location in &definitions.locations {
            let writer = (library.Archive_GetDefWriter)(handle, location.location);
            if writer.is_null() {
                return Err(ExportError::Otf2(
                    "libotf2 gave no definition writer".into(),
                ));
            }
            library.check(
                (library.Archive_CloseDefWriter)(handle, writer),
                "closing a definition writer",
            )?;
        }
        library.check(
            (library.Archive_CloseDefFiles)(handle),
            "closing definition files",
        )?;
    }
    definitions.write(&library, trace, handle, end, world)?;
    archive.close()?;
    Ok(written)
}

/// An open archive, closed on every path (on errors too, so libotf2 releases its buffers).
struct Archive<'l> {
    library: &'l Library,
    handle: *mut c_void,
}

impl Archive<'_> {
    fn close(self) -> Result<(), ExportError> {
        let (library, handle) = (self.library, self.handle);
        std::mem::forget(self);
        // SAFETY: the archive opened by `write`, closed once.
        library.check(
            unsafe { (library.Archive_Close)(handle) },
            "closing the archive",
        )
    }
}

impl Drop for Archive<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `close`; only reached when `close` was not.
        unsafe { (self.library.Archive_Close)(self.handle) };
    }
}

extern "C" fn pre_flush(_: *mut c_void, _: u8, _: u64, _: *mut c_void, _: bool) -> u8 {
    FLUSH
}

extern "C" fn post_flush(_: *mut c_void, _: u8, _: u64) -> u64 {
    // No BufferFlush records are wanted: the flush costs the exporter, not the program.
    0
}

/// One location's event records.
struct Events<'a> {
    library: &'a Library,
    writer: *mut c_void,
    process: u32,
    definitions: &'a mut Definitions,
    written: &'a mut Written,
    next_matching: u64,
    /// Every rank is exported: message and collective records can name `MPI_COMM_WORLD`.
    world: bool,
    /// Non-blocking receives posted and not yet drawn: (peer, (tag, bytes posted)).
    posted: Vec<(u32, (u32, u64))>,
    /// When the last call written ended.
    last_end: u64,
}

impl Events<'_> {
    /// The records of one call: Enter, its I/O or message records, Leave.
    fn call(&mut self, trace: &Trace, event: &Event) -> Result<(), ExportError> {
        let (library, writer) = (self.library, self.writer);
        let info = &trace.calls[event.call as usize];
        let region = self.definitions.region(event.call);
        let (start, end) = (event.start, event.start + event.duration);
        let null = std::ptr::null_mut();
        // SAFETY (every block below): an open event writer; records in time order.
        library.check(
            unsafe { (library.EvtWriter_Enter)(writer, null, start, region) },
            "writing Enter",
        )?;
        let paradigm = info
            .layer()
            .and_then(|layer| IO_PARADIGMS.iter().position(|p| p.0 == layer));
        if let (Some(paradigm), Some(file)) = (paradigm, event.file) {
            let (handle, opened) = self.definitions.handle(self.process, file, paradigm as u8);
            let mode = match info.class() {
                Some(CallClass::Read) => Some(IO_OPERATION_MODE_READ),
                Some(CallClass::Write) => Some(IO_OPERATION_MODE_WRITE),
                Some(CallClass::Sync | CallClass::Flush) => Some(IO_OPERATION_MODE_FLUSH),
                _ => None,
            };
            match info.class() {
                Some(CallClass::Open) if !event.failed() => {
                    *opened = true;
                    library.check(
                        unsafe {
                            (library.EvtWriter_IoCreateHandle)(
                                writer,
                                null,
                                end,
                                handle,
                                IO_ACCESS_MODE_READ_WRITE,
                                IO_CREATION_FLAG_NONE,
                                IO_STATUS_FLAG_NONE,
                            )
                        },
                        "writing IoCreateHandle",
                    )?;
                }
                Some(CallClass::Close) if !event.failed() => {
                    library.check(
                        unsafe { (library.EvtWriter_IoDestroyHandle)(writer, null, end, handle) },
                        "writing IoDestroyHandle",
                    )?;
                }
                _ => {}
            }
            if let Some(mode) = mode {
                let matching = self.next_matching;
                self.next_matching += 1;
                let request = if mode == IO_OPERATION_MODE_FLUSH {
                    0
                } else {
                    event.request
                };
                library.check(
                    unsafe {
                        (library.EvtWriter_IoOperationBegin)(
                            writer,
                            null,
                            start,
                            handle,
                            mode,
                            IO_OPERATION_FLAG_NONE,
                            request,
                            matching,
                        )
                    },
                    "writing IoOperationBegin",
                )?;
                library.check(
                    unsafe {
                        (library.EvtWriter_IoOperationComplete)(
                            writer,
                            null,
                            end,
                            handle,
                            event.bytes(),
                            matching,
                        )
                    },
                    "writing IoOperationComplete",
                )?;
                self.written.io_operations += 1;
            }
        }
        match self.message(trace, event) {
            Some((MessageBytes::Sent, peer, tag)) => {
                self.message_record(library.EvtWriter_MpiSend, start, peer, tag, event.bytes())?
            }
            Some((MessageBytes::Received, peer, tag)) => {
                self.message_record(library.EvtWriter_MpiRecv, end, peer, tag, event.bytes())?
            }
            // A non-blocking receive is drawn as arriving when a completion call ends.
            Some((_, peer, tag)) => self.posted.push((peer, (tag, event.request))),
            None => {}
        }
        let collective = self.collective(trace, event);
        if let Some((operation, root)) = collective {
            // SAFETY: an open event writer; records in time order.
            library.check(
                unsafe { (library.EvtWriter_MpiCollectiveBegin)(writer, null, start) },
                "writing MpiCollectiveBegin",
            )?;
            library.check(
                unsafe {
                    (library.EvtWriter_MpiCollectiveEnd)(
                        writer,
                        null,
                        end,
                        operation,
                        WORLD,
                        root,
                        event.bytes(),
                        event.bytes(),
                    )
                },
                "writing MpiCollectiveEnd",
            )?;
            self.written.collectives += 1;
        }
        if info.class() == Some(CallClass::Completion) {
            // The receives it finished: one alone got every byte the completion counts;
            // of several, each is drawn with the size posted.
            let finished = crate::finished_receives(&mut self.posted, event);
            let alone = finished.len() == 1;
            for (peer, (tag, posted)) in finished {
                let bytes = if alone { event.bytes() } else { posted };
                self.message_record(library.EvtWriter_MpiRecv, end, peer, tag, bytes)?;
            }
        }
        library.check(
            unsafe { (library.EvtWriter_Leave)(writer, null, end, region) },
            "writing Leave",
        )?;
        self.written.calls += 1;
        self.last_end = end;
        Ok(())
    }

    /// Receives no completion call followed: drawn at the thread's last call's end.
    fn finish(&mut self) -> Result<(), ExportError> {
        for (peer, (tag, bytes)) in std::mem::take(&mut self.posted) {
            let record = self.library.EvtWriter_MpiRecv;
            self.message_record(record, self.last_end, peer, tag, bytes)?;
        }
        Ok(())
    }

    /// An `MpiSend` or `MpiRecv` record on `MPI_COMM_WORLD`.
    fn message_record(
        &mut self,
        record: unsafe extern "C" fn(*mut c_void, *mut c_void, u64, u32, u32, u32, u64) -> i32,
        time: u64,
        peer: u32,
        tag: u32,
        bytes: u64,
    ) -> Result<(), ExportError> {
        // SAFETY: an open event writer; `time` within the call being written.
        let code = unsafe {
            record(
                self.writer,
                std::ptr::null_mut(),
                time,
                peer,
                WORLD,
                tag,
                bytes,
            )
        };
        self.library.check(code, "writing a message record")?;
        self.written.messages += 1;
        Ok(())
    }

    /// A blocking collective on `MPI_COMM_WORLD`: its OTF2 operation and root (undefined
    /// for rootless operations).
    fn collective(&self, trace: &Trace, event: &Event) -> Option<(u8, u32)> {
        let info = &trace.calls[event.call as usize];
        if !self.world
            || info.class() != Some(CallClass::Collective)
            || event.handle != 0
            || event.failed()
        {
            return None;
        }
        let operation = COLLECTIVES.iter().position(|name| *name == info.name)? as u8;
        let (root, _) = cairn_model::peer_and_tag(event.aux);
        Some((operation, u32::try_from(root).unwrap_or(UNDEFINED_U32)))
    }

    /// A send or receive on `MPI_COMM_WORLD` (handle 0) with a concrete peer and tag.
    fn message(&self, trace: &Trace, event: &Event) -> Option<(MessageBytes, u32, u32)> {
        let role = trace.calls[event.call as usize].call?.message_bytes()?;
        if !self.world
            || !matches!(
                role,
                MessageBytes::Sent | MessageBytes::Received | MessageBytes::Posted
            )
            || event.handle != 0
            || event.failed()
        {
            return None;
        }
        let (peer, tag) = crate::message(trace, event)?;
        Some((role, u32::try_from(peer).ok()?, u32::try_from(tag?).ok()?))
    }
}
