//! Per-process numbering of what an event's handle names — descriptors, stdio streams, MPI
//! objects, HDF5 ids, mapping addresses — so that ranks and steps that do the same thing
//! name it alike, whatever numbers the kernel or library gave.
//!
//! Design decisions:
//! - Descriptors other than 0–2 are numbered from 3 in order of first use: the kernel's
//!   numbers depend on what the MPI runtime and libraries opened first, which differs
//!   between ranks. Addresses (streams, MPI handles, mappings) and HDF5 ids are numbered in
//!   order of first use and tagged with [`NUMBERED_HANDLE`], so they never equal a
//!   descriptor.
//! - What the program makes and ends — communicators made and freed, MPI files opened and
//!   closed, HDF5 objects created or opened and closed — takes a number of its own kind,
//!   the lowest a freed one left first, as the kernel takes descriptors: a step that makes
//!   and ends its own (PnetCDF dups a communicator per file, S3D-IO writes a file per
//!   checkpoint, IOR's HDF5 backend creates a dataset per segment) names it the same every
//!   step, whatever memory or id the library gave it, and the steps fold. Ranks that make
//!   the same objects name them alike too: Open MPI reuses a freed communicator's memory
//!   on some ranks and not on others (mdtest's third communicator was 1 on most ranks by
//!   first use, 3 on one).

use std::collections::{BTreeSet, HashMap};

use cairn_model::{Call, CallClass, Event, Layer};

/// Marks a stream or MPI handle, an HDF5 id, or a mapping address, numbered per process.
pub const NUMBERED_HANDLE: u64 = 1 << 40;
/// With [`NUMBERED_HANDLE`]: a communicator the program made, numbered in the order the
/// process made them, a freed one's number taken again (the others in order of first use).
pub const MADE_COMMUNICATOR: u64 = 1 << 32;
/// With [`NUMBERED_HANDLE`]: an MPI file the program opened, numbered in the order the
/// process opened them, a closed one's number taken again.
pub const OPENED_MPI_FILE: u64 = 1 << 33;
/// With [`NUMBERED_HANDLE`]: an HDF5 object (file, group, dataset, attribute) the program
/// created or opened, numbered in that order, a closed one's number taken again.
pub const MADE_HDF5_ID: u64 = 1 << 34;

/// Numbers taken in order, a returned one taken again first (lowest first).
#[derive(Default)]
struct Pool {
    taken: u64,
    returned: BTreeSet<u64>,
}

impl Pool {
    fn take(&mut self) -> u64 {
        self.returned.pop_first().unwrap_or_else(|| {
            self.taken += 1;
            self.taken
        })
    }
}

/// One process's numbering (see the module's documentation).
#[derive(Default)]
pub struct Handles {
    descriptors: HashMap<u64, u64>,
    /// Address or id → its number with its tags.
    numbers: HashMap<u64, u64>,
    used: u64,
    communicators: Pool,
    mpi_files: Pool,
    hdf5_ids: Pool,
}

/// What an HDF5 call does with the id in its handle: makes it (its result), ends it, or
/// only uses it. By name, as the call table's generator (`wrapgen`'s HDF5 profile) chose
/// the hook: `H5?close` ends an id; `H5Fcreate`, `H5Fopen`, `H5?create*`, `H5?open*`
/// return one (property lists, `H5P*`, are only used).
fn hdf5_id_use(call: Call) -> Option<bool> {
    let name = call.name();
    if call.layer() != Layer::Hdf5 || name.starts_with("H5P") {
        return None;
    }
    if name.ends_with("close") {
        Some(false)
    } else if name.contains("create") || name.contains("open") {
        Some(true)
    } else {
        None
    }
}

impl Handles {
    /// Renumbers `event`'s descriptors, handles and addresses, as `call` uses them.
    pub fn renumber(&mut self, call: Call, event: &mut Event) {
        let (layer, class) = (call.layer(), call.class());
        match (layer, class) {
            (Layer::Posix, class) => {
                event.handle = self.descriptor(event.handle);
                if matches!(class, CallClass::Open | CallClass::Dup) && event.result >= 0 {
                    event.result = self.descriptor(event.result as u64) as i64;
                }
            }
            (Layer::Stdio, CallClass::Open | CallClass::Close) => {
                event.aux = self.descriptor(event.aux);
            }
            _ => {}
        }
        let hdf5 = hdf5_id_use(call);
        if call == Call::MPI_Comm_made && event.handle != 0 {
            let number = self.communicators.take();
            self.numbers
                .insert(event.handle, NUMBERED_HANDLE | MADE_COMMUNICATOR | number);
        }
        if layer == Layer::MpiIo && class == CallClass::Open && event.handle != 0 {
            let number = self.mpi_files.take();
            self.numbers
                .insert(event.handle, NUMBERED_HANDLE | OPENED_MPI_FILE | number);
        }
        if hdf5 == Some(true) && event.result >= 0 && event.handle != 0 {
            let number = self.hdf5_ids.take();
            self.numbers
                .insert(event.handle, NUMBERED_HANDLE | MADE_HDF5_ID | number);
        }
        // A communicator freed (from C or Fortran), an MPI file or HDF5 object closed.
        let ended = ((layer == Layer::MpiIo && class == CallClass::Close)
            || hdf5 == Some(false)
            || (layer == Layer::Mpi
                && class == CallClass::Meta
                && Call::reported_name(call.name()) == "MPI_Comm_free"))
            .then_some(event.handle);
        if matches!(
            layer,
            Layer::Stdio | Layer::Mpi | Layer::MpiIo | Layer::Hdf5
        ) && event.handle != 0
        {
            event.handle = self.number(event.handle);
        }
        if hdf5 == Some(true) && event.result >= 0 {
            // The id made is the call's result too.
            event.result = event.handle as i64;
        }
        if hdf5 == Some(true) && event.aux != 0 {
            // The location the object was made at: a file's or group's id.
            event.aux = self.number(event.aux);
        }
        if class == CallClass::Mmap && event.aux != 0 {
            // The mapping's address, which only says which munmap ends which mmap.
            event.aux = self.number(event.aux);
        }
        // The number goes back to the program's; the address or id may name something else
        // from now on.
        if let Some(address) = ended.filter(|address| *address != 0) {
            match self.numbers.remove(&address) {
                Some(number) if number & MADE_COMMUNICATOR != 0 => {
                    self.communicators.returned.insert(number & 0xFFFF_FFFF);
                }
                Some(number) if number & OPENED_MPI_FILE != 0 => {
                    self.mpi_files.returned.insert(number & 0xFFFF_FFFF);
                }
                Some(number) if number & MADE_HDF5_ID != 0 => {
                    self.hdf5_ids.returned.insert(number & 0xFFFF_FFFF);
                }
                _ => {}
            }
        }
    }

    fn descriptor(&mut self, fd: u64) -> u64 {
        if fd <= 2 || fd > i32::MAX as u64 {
            return fd;
        }
        let next = self.descriptors.len() as u64 + 3;
        *self.descriptors.entry(fd).or_insert(next)
    }

    fn number(&mut self, address: u64) -> u64 {
        let used = &mut self.used;
        *self.numbers.entry(address).or_insert_with(|| {
            *used += 1;
            NUMBERED_HANDLE | *used
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(handle: u64, result: i64) -> Event {
        Event {
            call: 0,
            start: 0,
            duration: 0,
            file: None,
            handle,
            offset: -1,
            request: 0,
            result,
            errno: 0,
            context: 0,
            aux: 0,
            flags: 0,
        }
    }

    #[test]
    fn a_dataset_made_and_closed_every_step_is_the_same_number_every_step() {
        let mut handles = Handles::default();
        let mut file = event(0x0100_0000_0000_0000, 0x0100_0000_0000_0000);
        handles.renumber(Call::H5Fcreate, &mut file);
        assert_eq!(file.handle, NUMBERED_HANDLE | MADE_HDF5_ID | 1);
        let mut numbers = Vec::new();
        for step in 0..3u64 {
            // HDF5 never gives the same id twice.
            let id = 0x0500_0000_0000_0000 + step;
            let mut create = Event {
                aux: 0x0100_0000_0000_0000,
                ..event(id, id as i64)
            };
            handles.renumber(Call::H5Dcreate2, &mut create);
            assert_eq!(create.aux, file.handle, "made in the file");
            assert_eq!(create.result, create.handle as i64);
            let mut write = event(id, 0);
            handles.renumber(Call::H5Dwrite, &mut write);
            let mut close = event(id, 0);
            handles.renumber(Call::H5Dclose, &mut close);
            numbers.push((create.handle, write.handle, close.handle));
        }
        let two = NUMBERED_HANDLE | MADE_HDF5_ID | 2;
        assert_eq!(numbers, vec![(two, two, two); 3]);
        // A failed create makes nothing; a property list is numbered by first use.
        let mut failed = event(u64::MAX, -1);
        handles.renumber(Call::H5Dcreate2, &mut failed);
        assert_eq!(failed.handle, NUMBERED_HANDLE | 1);
        let mut property = event(0x0a00_0000_0000_0007, 0);
        handles.renumber(Call::H5Pset_dxpl_mpio, &mut property);
        assert_eq!(property.handle, NUMBERED_HANDLE | 2);
    }
}
