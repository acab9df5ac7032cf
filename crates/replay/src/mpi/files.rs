//! MPI-IO: files opened over the world or over one rank, transfers at explicit offsets, at
//! the individual, shared and ordered file pointers, their non-blocking and split
//! collective forms, seeks and lengths.

use std::ffi::{c_int, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use cairn_model::Event;

use super::{count, Pending, Thread, H};
use crate::posix::Moved;

impl Thread<'_, '_> {
    pub(super) fn file_call(
        &mut self,
        name: &str,
        event: &Event,
        path: Option<&Path>,
    ) -> Option<Moved> {
        let mpi = self.job.mpi;
        let (f, c) = (&mpi.functions, &mpi.constants);
        let c_path = || path.and_then(|p| CString::new(p.as_os_str().as_bytes()).ok());
        let bytes = count(event.request);
        let each = bytes as usize;
        let mut status = [0u64; 4];
        let status_pointer: H = status.as_mut_ptr().cast();
        let moved = |read: bool| {
            // SAFETY: the status the call just filled.
            let got = unsafe { cairn_mpi_abi::status_bytes(status_pointer) }.unwrap_or(0);
            Some(if read {
                Moved::Read(got)
            } else {
                Moved::Written(got)
            })
        };
        // SAFETY (every block below): a path made here, buffers of at least `each` bytes
        // (owned by the pending request for the non-blocking forms), a file this thread
        // opened, the library's own handles and out-pointers to values of ours.
        match name {
            "MPI_File_open" => {
                let path = c_path()?;
                if let Some(parent) =
                    Path::new(std::ffi::OsStr::from_bytes(path.as_bytes())).parent()
                {
                    crate::posix::make_directories(parent);
                }
                // Over the world when the run opened it over as many ranks as the world has
                // (the tracer keeps the communicator's size), else over this rank alone:
                // a sub-communicator's members are not kept, and an open over one rank
                // never waits for another.
                let shared = (event.aux >> 32) as c_int == self.job.size;
                let comm = if shared { c.world } else { c.comm_self };
                let mut file = 0u64;
                let failed = unsafe {
                    (f.file_open)(
                        comm,
                        path.as_ptr().cast_mut().cast(),
                        event.aux as u32 as c_int,
                        c.info_null,
                        (&raw mut file).cast(),
                    )
                } != 0;
                if !failed {
                    self.files.insert(event.handle, file);
                }
                return Some(Moved::Nothing);
            }
            "MPI_File_delete" => {
                let path = c_path()?;
                unsafe { (f.file_delete)(path.as_ptr().cast_mut().cast(), c.info_null) };
                return Some(Moved::Nothing);
            }
            _ => {}
        }
        // With histograms, ranks may have drawn different counts of a collective transfer:
        // each becomes its independent form (see `derived`).
        let name = match name {
            _ if !self.job.derived_mode() => name,
            "MPI_File_write_at_all" => "MPI_File_write_at",
            "MPI_File_read_at_all" => "MPI_File_read_at",
            "MPI_File_write_all" => "MPI_File_write",
            "MPI_File_read_all" => "MPI_File_read",
            "MPI_File_write_ordered" => "MPI_File_write_shared",
            "MPI_File_read_ordered" => "MPI_File_read_shared",
            "MPI_File_write_at_all_begin" => "MPI_File_write_at",
            "MPI_File_read_at_all_begin" => "MPI_File_read_at",
            "MPI_File_write_all_begin" => "MPI_File_write",
            "MPI_File_read_all_begin" => "MPI_File_read",
            "MPI_File_write_ordered_begin" => "MPI_File_write_shared",
            "MPI_File_read_ordered_begin" => "MPI_File_read_shared",
            "MPI_File_write_at_all_end"
            | "MPI_File_read_at_all_end"
            | "MPI_File_write_all_end"
            | "MPI_File_read_all_end"
            | "MPI_File_write_ordered_end"
            | "MPI_File_read_ordered_end" => return Some(Moved::Nothing),
            "MPI_File_iwrite_at_all" => "MPI_File_iwrite_at",
            "MPI_File_iread_at_all" => "MPI_File_iread_at",
            "MPI_File_iwrite_all" => "MPI_File_iwrite",
            "MPI_File_iread_all" => "MPI_File_iread",
            _ => name,
        };
        let mut file = *self.files.get(&event.handle)?;
        let handle = file as usize as H;
        let offset = event.aux as i64;
        match name {
            "MPI_File_close" => {
                self.settle_file(event.handle);
                self.files.remove(&event.handle);
                unsafe { (f.file_close)((&raw mut file).cast()) };
                Some(Moved::Nothing)
            }
            "MPI_File_sync" => {
                unsafe { (f.file_sync)(handle) };
                Some(Moved::Nothing)
            }
            // The length the tracer keeps in `aux` (0 in traces older than it).
            "MPI_File_set_size" => {
                unsafe { (f.file_set_size)(handle, event.aux as i64) };
                Some(Moved::Nothing)
            }
            "MPI_File_preallocate" => {
                unsafe { (f.file_preallocate)(handle, event.aux as i64) };
                Some(Moved::Nothing)
            }
            "MPI_File_get_size" => {
                let mut size = 0i64;
                unsafe { (f.file_get_size)(handle, (&raw mut size).cast()) };
                Some(Moved::Nothing)
            }
            // The individual file pointer where the run put it (offset in etypes, whence
            // as MPI numbers it: 600/602/604 in both families).
            "MPI_File_seek" => {
                unsafe { (f.file_seek)(handle, event.aux as i64, event.request as c_int) };
                Some(Moved::Nothing)
            }
            "MPI_File_seek_shared" => {
                unsafe { (f.file_seek_shared)(handle, event.aux as i64, event.request as c_int) };
                Some(Moved::Nothing)
            }
            // A split collective as the run made it, its buffer kept from the beginning to
            // the end (with histograms, the beginning is the independent transfer: see
            // above).
            "MPI_File_write_at_all_begin"
            | "MPI_File_read_at_all_begin"
            | "MPI_File_write_all_begin"
            | "MPI_File_read_all_begin"
            | "MPI_File_write_ordered_begin"
            | "MPI_File_read_ordered_begin" => {
                self.split = vec![b'c'; each];
                let buffer = self.split.as_mut_ptr().cast();
                unsafe {
                    match name {
                        "MPI_File_write_at_all_begin" => {
                            (f.write_at_all_begin)(handle, offset, buffer, bytes, c.byte)
                        }
                        "MPI_File_read_at_all_begin" => {
                            (f.read_at_all_begin)(handle, offset, buffer, bytes, c.byte)
                        }
                        "MPI_File_write_all_begin" => {
                            (f.write_all_begin)(handle, buffer, bytes, c.byte)
                        }
                        "MPI_File_read_all_begin" => {
                            (f.read_all_begin)(handle, buffer, bytes, c.byte)
                        }
                        "MPI_File_write_ordered_begin" => {
                            (f.write_ordered_begin)(handle, buffer, bytes, c.byte)
                        }
                        _ => (f.read_ordered_begin)(handle, buffer, bytes, c.byte),
                    }
                };
                Some(if name.contains("read") {
                    Moved::Read(each as u64)
                } else {
                    Moved::Written(each as u64)
                })
            }
            "MPI_File_write_at_all_end"
            | "MPI_File_read_at_all_end"
            | "MPI_File_write_all_end"
            | "MPI_File_read_all_end"
            | "MPI_File_write_ordered_end"
            | "MPI_File_read_ordered_end" => {
                let buffer = self.split.as_mut_ptr().cast();
                unsafe {
                    match name {
                        "MPI_File_write_at_all_end" => {
                            (f.write_at_all_end)(handle, buffer, status_pointer)
                        }
                        "MPI_File_read_at_all_end" => {
                            (f.read_at_all_end)(handle, buffer, status_pointer)
                        }
                        "MPI_File_write_all_end" => {
                            (f.write_all_end)(handle, buffer, status_pointer)
                        }
                        "MPI_File_read_all_end" => (f.read_all_end)(handle, buffer, status_pointer),
                        "MPI_File_write_ordered_end" => {
                            (f.write_ordered_end)(handle, buffer, status_pointer)
                        }
                        _ => (f.read_ordered_end)(handle, buffer, status_pointer),
                    }
                };
                Some(Moved::Nothing)
            }
            "MPI_File_write_at"
            | "MPI_File_write_at_all"
            | "MPI_File_read_at"
            | "MPI_File_read_at_all" => {
                let read = name.contains("read");
                let buffer = if read {
                    self.landing(each)
                } else {
                    self.payload(each)
                };
                let call = match name {
                    "MPI_File_write_at" => f.write_at,
                    "MPI_File_write_at_all" => f.write_at_all,
                    "MPI_File_read_at" => f.read_at,
                    _ => f.read_at_all,
                };
                unsafe { call(handle, offset, buffer, bytes, c.byte, status_pointer) };
                moved(read)
            }
            "MPI_File_write"
            | "MPI_File_read"
            | "MPI_File_write_all"
            | "MPI_File_read_all"
            | "MPI_File_write_shared"
            | "MPI_File_read_shared"
            | "MPI_File_write_ordered"
            | "MPI_File_read_ordered" => {
                let read = name.contains("read");
                let buffer = if read {
                    self.landing(each)
                } else {
                    self.payload(each)
                };
                let call = match name {
                    "MPI_File_write" => f.write,
                    "MPI_File_read" => f.read,
                    "MPI_File_write_all" => f.write_all,
                    "MPI_File_read_all" => f.read_all,
                    "MPI_File_write_shared" => f.write_shared,
                    "MPI_File_read_shared" => f.read_shared,
                    "MPI_File_write_ordered" => f.write_ordered,
                    _ => f.read_ordered,
                };
                unsafe { call(handle, buffer, bytes, c.byte, status_pointer) };
                moved(read)
            }
            "MPI_File_iwrite_at"
            | "MPI_File_iread_at"
            | "MPI_File_iwrite"
            | "MPI_File_iread"
            | "MPI_File_iwrite_at_all"
            | "MPI_File_iread_at_all"
            | "MPI_File_iwrite_all"
            | "MPI_File_iread_all"
            | "MPI_File_iwrite_shared"
            | "MPI_File_iread_shared" => {
                let read = name.contains("read");
                let mut pending = Pending {
                    request: 0,
                    buffer: vec![b'c'; each],
                    receive: false,
                    file: Some(event.handle),
                    arrays: Vec::new(),
                };
                let buffer = pending.buffer.as_mut_ptr().cast();
                let request: H = (&raw mut pending.request).cast();
                unsafe {
                    match name {
                        "MPI_File_iwrite_at" => {
                            (f.iwrite_at)(handle, offset, buffer, bytes, c.byte, request)
                        }
                        "MPI_File_iread_at" => {
                            (f.iread_at)(handle, offset, buffer, bytes, c.byte, request)
                        }
                        "MPI_File_iwrite_at_all" => {
                            (f.iwrite_at_all)(handle, offset, buffer, bytes, c.byte, request)
                        }
                        "MPI_File_iread_at_all" => {
                            (f.iread_at_all)(handle, offset, buffer, bytes, c.byte, request)
                        }
                        "MPI_File_iwrite" => (f.iwrite)(handle, buffer, bytes, c.byte, request),
                        "MPI_File_iwrite_all" => {
                            (f.iwrite_all)(handle, buffer, bytes, c.byte, request)
                        }
                        "MPI_File_iread_all" => {
                            (f.iread_all)(handle, buffer, bytes, c.byte, request)
                        }
                        "MPI_File_iwrite_shared" => {
                            (f.iwrite_shared)(handle, buffer, bytes, c.byte, request)
                        }
                        "MPI_File_iread_shared" => {
                            (f.iread_shared)(handle, buffer, bytes, c.byte, request)
                        }
                        _ => (f.iread)(handle, buffer, bytes, c.byte, request),
                    }
                };
                self.pending.push_back(pending);
                Some(if read {
                    Moved::Read(each as u64)
                } else {
                    Moved::Written(each as u64)
                })
            }
            _ => None,
        }
    }
}
