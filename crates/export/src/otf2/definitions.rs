//! The archive's definitions, gathered while its events are written and written after
//! them: what each event refers to is numbered as first met.

use std::collections::HashMap;
use std::ffi::{c_void, CString};

use cairn_model::{CallClass, Layer};
use cairn_trace::Trace;

use super::library::*;
use super::{IO_PARADIGMS, WORLD};
use crate::ExportError;

/// A location, for its definition.
pub(super) struct Location {
    pub location: u64,
    process: u32,
    thread: u32,
    events: u64,
}

/// The definitions the events refer to, numbered as first met.
#[derive(Default)]
pub(super) struct Definitions {
    regions: HashMap<u16, u32>,
    /// (process, file, I/O paradigm) → (handle, opened in the trace).
    handles: HashMap<(u32, u32, u8), (u32, bool)>,
    pub locations: Vec<Location>,
}

impl Definitions {
    pub(super) fn region(&mut self, call: u16) -> u32 {
        let next = self.regions.len() as u32;
        *self.regions.entry(call).or_insert(next)
    }

    /// The handle of `file` in `process` through `paradigm`, and whether an open made it.
    pub(super) fn handle(&mut self, process: u32, file: u32, paradigm: u8) -> (u32, &mut bool) {
        let next = self.handles.len() as u32;
        let (handle, opened) = self
            .handles
            .entry((process, file, paradigm))
            .or_insert((next, false));
        (*handle, opened)
    }

    pub(super) fn location(&mut self, process: u32, thread: u32, location: u64, events: u64) {
        self.locations.push(Location {
            location,
            process,
            thread,
            events,
        });
    }

    /// The global definitions: strings, clock, paradigms, system tree, location groups and
    /// locations, regions, files and handles, and `MPI_COMM_WORLD` when every rank is there.
    pub(super) fn write(
        &self,
        library: &Library,
        trace: &Trace,
        archive: *mut c_void,
        end: u64,
        world: bool,
    ) -> Result<(), ExportError> {
        // SAFETY: an open archive whose event and local definition files are closed.
        let writer = unsafe { (library.Archive_GetGlobalDefWriter)(archive) };
        if writer.is_null() {
            return Err(ExportError::Otf2(
                "libotf2 gave no global definition writer".into(),
            ));
        }
        let mut strings = Strings {
            library,
            writer,
            known: HashMap::new(),
        };
        let call = |code: i32, what: &str| library.check(code, what);
        // SAFETY (every block below): the global definition writer, references to
        // definitions written before them (strings first).
        call(
            unsafe {
                (library.GlobalDefWriter_WriteClockProperties)(
                    writer,
                    1_000_000_000,
                    0,
                    end,
                    UNDEFINED_U64,
                )
            },
            "writing the clock",
        )?;
        let mpi = strings.get(b"MPI")?;
        call(
            unsafe {
                (library.GlobalDefWriter_WriteParadigm)(
                    writer,
                    PARADIGM_MPI,
                    mpi,
                    PARADIGM_CLASS_PROCESS,
                )
            },
            "writing the MPI paradigm",
        )?;
        for (index, (_, identification, name, class, flags)) in IO_PARADIGMS.iter().enumerate() {
            let (identification, name) = (
                strings.get(identification.as_bytes())?,
                strings.get(name.as_bytes())?,
            );
            call(
                unsafe {
                    (library.GlobalDefWriter_WriteIoParadigm)(
                        writer,
                        index as u8,
                        identification,
                        name,
                        *class,
                        *flags,
                        0,
                        std::ptr::null(),
                        std::ptr::null(),
                        std::ptr::null(),
                    )
                },
                "writing an I/O paradigm",
            )?;
        }
        // The system tree: the job, then its hosts.
        let (job, machine) = (strings.get(b"cairn job")?, strings.get(b"machine")?);
        call(
            unsafe {
                (library.GlobalDefWriter_WriteSystemTreeNode)(
                    writer,
                    0,
                    job,
                    machine,
                    UNDEFINED_U32,
                )
            },
            "writing the system tree",
        )?;
        let mut hosts: HashMap<&[u8], u32> = HashMap::new();
        let node = strings.get(b"node")?;
        let mut groups: Vec<u32> = Vec::new();
        for location in &self.locations {
            if groups.contains(&location.process) {
                continue;
            }
            groups.push(location.process);
            let process = &trace.processes[location.process as usize];
            let host = match hosts.get(process.hostname.as_slice()) {
                Some(host) => *host,
                None => {
                    let host = hosts.len() as u32 + 1;
                    let name = strings.get(&process.hostname)?;
                    call(
                        unsafe {
                            (library.GlobalDefWriter_WriteSystemTreeNode)(
                                writer, host, name, node, 0,
                            )
                        },
                        "writing a host",
                    )?;
                    hosts.insert(&process.hostname, host);
                    host
                }
            };
            let name = match process.rank {
                Some(rank) => format!("rank {rank}"),
                None => format!(
                    "pid {} ({})",
                    process.pid,
                    String::from_utf8_lossy(&process.executable)
                ),
            };
            let name = strings.get(name.as_bytes())?;
            call(
                unsafe {
                    (library.GlobalDefWriter_WriteLocationGroup)(
                        writer,
                        location.process,
                        name,
                        LOCATION_GROUP_TYPE_PROCESS,
                        host,
                        UNDEFINED_U32,
                    )
                },
                "writing a location group",
            )?;
        }
        for location in &self.locations {
            let name = strings.get(format!("thread {}", location.thread).as_bytes())?;
            call(
                unsafe {
                    (library.GlobalDefWriter_WriteLocation)(
                        writer,
                        location.location,
                        name,
                        LOCATION_TYPE_CPU_THREAD,
                        location.events,
                        location.process,
                    )
                },
                "writing a location",
            )?;
        }
        let empty = strings.get(b"")?;
        let mut regions: Vec<(u16, u32)> = self.regions.iter().map(|(c, r)| (*c, *r)).collect();
        regions.sort_by_key(|(_, region)| *region);
        for (index, region) in regions {
            let info = &trace.calls[index as usize];
            let name = strings.get(info.name.as_bytes())?;
            let role = match info.class() {
                Some(CallClass::PointToPoint) => REGION_ROLE_POINT2POINT,
                Some(CallClass::Collective) => REGION_ROLE_COLL_ALL2ALL,
                _ if matches!(
                    info.layer(),
                    Some(Layer::Posix | Layer::Stdio | Layer::MpiIo)
                ) =>
                {
                    REGION_ROLE_FILE_IO
                }
                _ => REGION_ROLE_FUNCTION,
            };
            let paradigm = match info.layer() {
                Some(Layer::Mpi | Layer::MpiIo) => PARADIGM_MPI,
                _ => PARADIGM_UNKNOWN,
            };
            call(
                unsafe {
                    (library.GlobalDefWriter_WriteRegion)(
                        writer,
                        region,
                        name,
                        name,
                        empty,
                        role,
                        paradigm,
                        REGION_FLAG_NONE,
                        empty,
                        0,
                        0,
                    )
                },
                "writing a region",
            )?;
        }
        let mut handles: Vec<_> = self.handles.iter().collect();
        handles.sort_by_key(|(_, (handle, _))| *handle);
        let mut files: HashMap<u32, u32> = HashMap::new();
        for ((_, file, paradigm), (handle, opened)) in handles {
            let name = strings.get(&trace.files[*file as usize].path)?;
            let io_file = match files.get(file) {
                Some(io_file) => *io_file,
                None => {
                    let io_file = files.len() as u32;
                    call(
                        unsafe {
                            (library.GlobalDefWriter_WriteIoRegularFile)(writer, io_file, name, 0)
                        },
                        "writing a file",
                    )?;
                    files.insert(*file, io_file);
                    io_file
                }
            };
            // A file used but never opened in the trace (standard streams, descriptors
            // inherited) was open before it began.
            let flags = if *opened {
                IO_HANDLE_FLAG_NONE
            } else {
                IO_HANDLE_FLAG_PRE_CREATED
            };
            call(
                unsafe {
                    (library.GlobalDefWriter_WriteIoHandle)(
                        writer,
                        *handle,
                        name,
                        io_file,
                        *paradigm,
                        flags,
                        UNDEFINED_U32,
                        UNDEFINED_U32,
                    )
                },
                "writing an I/O handle",
            )?;
        }
        if !world {
            return Ok(());
        }
        self.write_world(library, trace, writer, &mut strings)
    }

    /// `MPI_COMM_WORLD`: the locations of the ranks' main threads in rank order (written
    /// when every rank is exported: message records name peers by world rank).
    fn write_world(
        &self,
        library: &Library,
        trace: &Trace,
        writer: *mut c_void,
        strings: &mut Strings,
    ) -> Result<(), ExportError> {
        let mut ranks: Vec<(u32, u32, u64)> = self
            .locations
            .iter()
            .filter_map(|location| {
                let rank = trace.processes[location.process as usize].rank?;
                Some((rank, location.thread, location.location))
            })
            .collect();
        ranks.sort();
        ranks.dedup_by_key(|(rank, _, _)| *rank);
        let members: Vec<u64> = ranks.iter().map(|(_, _, location)| *location).collect();
        let indices: Vec<u64> = (0..members.len() as u64).collect();
        let (locations_name, world) = (strings.get(b"")?, strings.get(b"MPI_COMM_WORLD")?);
        // SAFETY: the global definition writer; member arrays as long as the counts given.
        unsafe {
            library.check(
                (library.GlobalDefWriter_WriteGroup)(
                    writer,
                    0,
                    locations_name,
                    GROUP_TYPE_COMM_LOCATIONS,
                    PARADIGM_MPI,
                    GROUP_FLAG_NONE,
                    members.len() as u32,
                    members.as_ptr(),
                ),
                "writing the MPI locations",
            )?;
            library.check(
                (library.GlobalDefWriter_WriteGroup)(
                    writer,
                    1,
                    world,
                    GROUP_TYPE_COMM_GROUP,
                    PARADIGM_MPI,
                    GROUP_FLAG_NONE,
                    indices.len() as u32,
                    indices.as_ptr(),
                ),
                "writing the world group",
            )?;
            library.check(
                (library.GlobalDefWriter_WriteComm)(
                    writer,
                    WORLD,
                    world,
                    1,
                    UNDEFINED_U32,
                    COMM_FLAG_NONE,
                ),
                "writing MPI_COMM_WORLD",
            )
        }
    }
}

/// String definitions, each written once, when first needed.
struct Strings<'a> {
    library: &'a Library,
    writer: *mut c_void,
    known: HashMap<Vec<u8>, u32>,
}

impl Strings<'_> {
    fn get(&mut self, text: &[u8]) -> Result<u32, ExportError> {
        if let Some(reference) = self.known.get(text) {
            return Ok(*reference);
        }
        let reference = self.known.len() as u32;
        // Paths cannot hold NUL bytes; anything else might, and is cut there.
        let end = text
            .iter()
            .position(|byte| *byte == 0)
            .unwrap_or(text.len());
        let c_text = CString::new(&text[..end]).expect("cut at the first NUL");
        // SAFETY: the global definition writer and a NUL-terminated string it copies.
        self.library.check(
            unsafe {
                (self.library.GlobalDefWriter_WriteString)(self.writer, reference, c_text.as_ptr())
            },
            "writing a string",
        )?;
        self.known.insert(text.to_vec(), reference);
        Ok(reference)
    }
}
