//! The call table: one row per hooked call.
//!
//! `for_each_call!(callback)` hands every row to `callback!`. This crate turns the rows
//! into the [`Call`] enum and its metadata; the preload library turns the same rows into
//! hooks. A row is
//!
//! ```text
//! name  Layer  Class  generated (arg: Type, ...) -> Ret => adapter(arg, ...);
//! name  Layer  Class  custom;
//! name  Layer  Class  share;
//! ```
//!
//! `generated` rows get their hook written by the macro: time the real call and let the
//! named adapter (a function in the preload crate) fill in file, offset and sizes from the
//! arguments and the return value. `custom` rows are C-variadic or need handling that does
//! not fit one adapter call (`open`, `fcntl`, `fprintf`, `_exit`); their hooks are written
//! by hand in the preload crate, but they are still declared only here. `share` rows are
//! never hooked: another row's hook writes them, for the part of its call that belongs to
//! a second file or a later moment (`copy_file_range_into`, the destination's share of a
//! `copy_file_range`; `aio_write_done`, the bytes `aio_return` collected).
//!
//! The types in the signatures are only tokens to this crate; the preload crate resolves
//! them against `libc`.
//!
//! The built-in rows are in `calls/table.rs`; the rows wrapgen generated from libraries'
//! headers in `calls/hdf5.rs`, `calls/pnetcdf.rs` and `calls/netcdf.rs`
//! (`scripts/generate-calls.sh`), checked
//! in and checked against the headers by a test (`crates/cli/tests/libraries.rs`). The
//! build script writes `for_each_call!` itself, with a user's rows in front when
//! `CAIRN_USER_CALLS` names a file of them (`cairn wrapgen HEADER -o FILE`): a libcairn.so
//! that hooks that library too.

mod hdf5;
mod netcdf;
mod pnetcdf;
mod table;

// `for_each_call!`, from build.rs. Macro-expanded (by `include!`), so this crate invokes it
// by its plain name, never by path.
include!(concat!(env!("OUT_DIR"), "/for_each_call.rs"));

/// The layer of the I/O stack a call belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layer {
    Posix,
    Stdio,
    Mpi,
    MpiIo,
    /// A library above MPI-IO whose hooks wrapgen generated from its header: HDF5, NetCDF,
    /// or any other (`Library`). Its calls are the parents of the MPI-IO and POSIX calls
    /// made inside them ([`event_flags::INSIDE_LIBRARY`](crate::event_flags::INSIDE_LIBRARY)).
    Hdf5,
    NetCdf,
    Library,
    Process,
}

impl Layer {
    pub const ALL: [Layer; 8] = [
        Layer::Posix,
        Layer::Stdio,
        Layer::Mpi,
        Layer::MpiIo,
        Layer::Hdf5,
        Layer::NetCdf,
        Layer::Library,
        Layer::Process,
    ];

    /// A layer of generated hooks, above MPI-IO.
    pub const fn is_library(self) -> bool {
        matches!(self, Layer::Hdf5 | Layer::NetCdf | Layer::Library)
    }

    pub fn name(self) -> &'static str {
        match self {
            Layer::Posix => "posix",
            Layer::Stdio => "stdio",
            Layer::Mpi => "mpi",
            Layer::MpiIo => "mpiio",
            Layer::Hdf5 => "hdf5",
            Layer::NetCdf => "netcdf",
            Layer::Library => "library",
            Layer::Process => "process",
        }
    }

    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|layer| layer.name() == name)
    }
}

/// What an MPI point-to-point event's request and result mean ([`Call::message_bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageBytes {
    /// A send: the bytes sent.
    Sent,
    /// A blocking receive: the capacity posted (request) and the bytes its status says
    /// arrived (result), whichever language binding made it.
    Received,
    /// A non-blocking receive's posting: the capacity (request); nothing arrived yet
    /// (result 0).
    Posted,
    /// A completion (`MPI_Wait*`, `MPI_Test*`): the bytes of the posted receives it
    /// finished (result).
    Completed,
    /// A probe: no bytes.
    Probed,
    /// A persistent request's init (`MPI_Send_init`, `MPI_Recv_init`): the message each
    /// start of it moves (its peer, tag and size in the key), no bytes itself.
    Described,
}

/// What a call does, independent of its layer; analyses count by class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallClass {
    Open,
    Close,
    Read,
    Write,
    Seek,
    Sync,
    Flush,
    Stat,
    Meta,
    Dup,
    Mmap,
    Lifecycle,
    /// MPI point-to-point communication (send, receive, blocking or not).
    PointToPoint,
    /// MPI collective communication.
    Collective,
    /// Completion of non-blocking MPI requests (wait, test).
    Completion,
}

impl CallClass {
    pub const ALL: [CallClass; 15] = [
        CallClass::Open,
        CallClass::Close,
        CallClass::Read,
        CallClass::Write,
        CallClass::Seek,
        CallClass::Sync,
        CallClass::Flush,
        CallClass::Stat,
        CallClass::Meta,
        CallClass::Dup,
        CallClass::Mmap,
        CallClass::Lifecycle,
        CallClass::PointToPoint,
        CallClass::Collective,
        CallClass::Completion,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CallClass::Open => "open",
            CallClass::Close => "close",
            CallClass::Read => "read",
            CallClass::Write => "write",
            CallClass::Seek => "seek",
            CallClass::Sync => "sync",
            CallClass::Flush => "flush",
            CallClass::Stat => "stat",
            CallClass::Meta => "meta",
            CallClass::Dup => "dup",
            CallClass::Mmap => "mmap",
            CallClass::Lifecycle => "lifecycle",
            CallClass::PointToPoint => "point-to-point",
            CallClass::Collective => "collective",
            CallClass::Completion => "completion",
        }
    }

    pub fn from_name(name: &str) -> Option<CallClass> {
        CallClass::ALL
            .into_iter()
            .find(|class| class.name() == name)
    }

    /// Calls whose result is a number of bytes moved (file data or messages).
    pub fn moves_data(self) -> bool {
        matches!(
            self,
            CallClass::Read | CallClass::Write | CallClass::PointToPoint | CallClass::Collective
        )
    }

    /// Calls whose time Darshan counts as metadata time (open, close, seek, stat, sync...).
    pub fn is_metadata(self) -> bool {
        !matches!(
            self,
            CallClass::Read | CallClass::Write | CallClass::Lifecycle
        )
    }
}

/// Whether the call `name` of `class` posts a request a completion (`MPI_Wait*`,
/// `MPI_Test*`) later takes: MPI's non-blocking sends, receives and collectives, and
/// MPI-IO's non-blocking reads and writes, in C (`MPI_Isend`) and Fortran (`mpi_isend_`).
/// By name, so that calls of generated hooks or of a newer cairn count alike.
pub fn posts_request(name: &str, class: CallClass) -> bool {
    let prefix = |prefix: &str| {
        name.get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    };
    match class {
        CallClass::PointToPoint | CallClass::Collective => {
            // `MPI_Iprobe` and `MPI_Improbe` post nothing to wait for.
            // A persistent request's start is a share per request (`MPI_Start_send`,
            // `MPI_Start_recv`).
            (prefix("MPI_I") && !prefix("MPI_Iprobe") && !prefix("MPI_Improbe"))
                || prefix("MPI_Start_")
        }
        CallClass::Read | CallClass::Write => prefix("MPI_File_i"),
        _ => false,
    }
}

macro_rules! row_is_share {
    (share) => {
        true
    };
    ($kind:ident) => {
        false
    };
}

macro_rules! define_call_enum {
    ($( $name:ident $layer:ident $class:ident $kind:ident
        $( ( $($arg:ident : $ty:ty),* ) -> $ret:ty => $adapter:ident ( $($adapter_arg:expr),* ) )? ; )*) => {
        /// Every hooked call of this build. The discriminant is only an in-memory id: files
        /// store call names (see the CALLS section in docs/FORMAT.md).
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Call {
            $( $name, )*
        }

        impl Call {
            /// All calls, in table order (`Call::ALL[c as usize] == c`).
            pub const ALL: &'static [Call] = &[ $( Call::$name, )* ];

            /// The symbol name of the call, e.g. `"pwrite64"`.
            pub const fn name(self) -> &'static str {
                match self { $( Call::$name => stringify!($name), )* }
            }

            #[inline(always)]
            pub const fn layer(self) -> Layer {
                match self { $( Call::$name => Layer::$layer, )* }
            }

            #[inline(always)]
            pub const fn class(self) -> CallClass {
                match self { $( Call::$name => CallClass::$class, )* }
            }

            /// A `share` row: part of another call's work (the destination of a
            /// `copy_file_range`, the bytes `aio_return` collected), never a call of its own.
            #[inline(always)]
            pub const fn is_share(self) -> bool {
                match self { $( Call::$name => row_is_share!($kind), )* }
            }
        }
    };
}

for_each_call!(define_call_enum);

const fn ends_with(name: &[u8], suffix: &[u8]) -> bool {
    if suffix.len() > name.len() {
        return false;
    }
    let mut index = 0;
    while index < suffix.len() {
        if name[name.len() - suffix.len() + index] != suffix[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// How a Fortran program's MPI call reaches the library, which decides which hook traces it
/// (each call must be traced exactly once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FortranBinding {
    /// A C call.
    None,
    /// `use mpi` / `mpif.h` (gfortran's `mpi_send_`): Open MPI's call `PMPI_*` (traced
    /// here), MPICH's the C `MPI_*` entry points (traced there).
    Legacy,
    /// Open MPI's functions behind both modules (`ompi_send_f`), which `use mpi_f08`
    /// reaches through the dynamic linker.
    OpenMpiInner,
    /// `use mpi_f08` names without a buffer argument (`mpi_wait_f08_`): Open MPI's call
    /// `ompi_wait_f` (traced there), MPICH's `PMPI_*` (traced here).
    F08,
}

impl Call {
    /// Which Fortran binding this entry point belongs to, if any (see [`FortranBinding`]).
    /// Constant for a known call, so a hook's check of it costs nothing.
    pub const fn fortran_binding(self) -> FortranBinding {
        let name = self.name().as_bytes();
        let length = name.len();
        if ends_with(name, b"_f08_") {
            FortranBinding::F08
        } else if length > 7 && name[0] == b'o' && name[1] == b'm' && ends_with(name, b"_f") {
            FortranBinding::OpenMpiInner
        } else if name[length - 1] == b'_' {
            FortranBinding::Legacy
        } else {
            FortranBinding::None
        }
    }

    /// The name traces report for a call: a Fortran binding's (`mpi_x_`, Open MPI's
    /// `ompi_x_f` and `pmpi_x_`, the `mpi_x_f08_` names behind `use mpi_f08`) is the MPI
    /// call it stands for, `MPI_X` as C spells it — the binding is noted on each event
    /// ([`crate::event_flags::FORTRAN`]) — so a call has one name whatever the language
    /// and the module it came through. Other names are their own.
    pub fn reported_name(name: &str) -> std::borrow::Cow<'_, str> {
        let stem = name
            .strip_prefix("ompi_")
            .and_then(|rest| rest.strip_suffix("_f"))
            .or_else(|| name.strip_prefix("mpi_")?.strip_suffix("_f08_"))
            .or_else(|| name.strip_prefix("pmpi_")?.strip_suffix('_'))
            .or_else(|| name.strip_prefix("mpi_")?.strip_suffix('_'));
        let c_call = stem.and_then(|stem| {
            Call::ALL.iter().find(|call| {
                let c_name = call.name();
                c_name.len() == stem.len() + 4
                    && c_name.starts_with("MPI_")
                    && c_name[4..].eq_ignore_ascii_case(stem)
            })
        });
        match (stem, c_call) {
            (_, Some(call)) => call.name().into(),
            (Some(stem), None) => format!("mpi_{stem}_").into(),
            (None, None) => name.into(),
        }
    }

    /// An AIO completion (`aio_read_done`, `aio_write_done`): its `aux` holds the latency
    /// from submission to collection in nanoseconds (in the segment, the submission's
    /// clock reading), which analyses count as its I/O time, as Darshan does.
    pub const fn latency_in_aux(self) -> bool {
        matches!(self, Call::aio_read_done | Call::aio_write_done)
    }

    /// What the bytes of an MPI message event are (see [`MessageBytes`]); `None` for calls
    /// that are not point-to-point messages or their completions.
    pub fn message_bytes(self) -> Option<MessageBytes> {
        match (self.layer(), self.class()) {
            (Layer::Mpi, CallClass::Completion) => Some(MessageBytes::Completed),
            (Layer::Mpi, CallClass::PointToPoint) => {
                let name = Call::reported_name(self.name());
                Some(match &*name {
                    "MPI_Recv"
                    | "MPI_Mrecv"
                    | "MPI_Sendrecv_received"
                    | "MPI_Sendrecv_replace_received" => MessageBytes::Received,
                    "MPI_Irecv" | "MPI_Imrecv" | "MPI_Start_recv" => MessageBytes::Posted,
                    "MPI_Probe" | "MPI_Iprobe" | "MPI_Mprobe" | "MPI_Improbe" => {
                        MessageBytes::Probed
                    }
                    _ if name.ends_with("_init") => MessageBytes::Described,
                    _ => MessageBytes::Sent,
                })
            }
            _ => None,
        }
    }

    /// What a trace builder processes an unknown library call of `class` as (its name,
    /// layer and class stay its own): a call of a generated library layer, which the
    /// builder tracks nothing of beyond its class.
    pub fn stand_in(class: CallClass) -> Call {
        match class {
            CallClass::Open => Call::cairn_library_open,
            CallClass::Close => Call::cairn_library_close,
            CallClass::Read => Call::cairn_library_read,
            CallClass::Write => Call::cairn_library_write,
            CallClass::Sync => Call::cairn_library_sync,
            CallClass::Flush => Call::cairn_library_flush,
            _ => Call::cairn_library_meta,
        }
    }

    pub fn from_id(id: u16) -> Option<Call> {
        Call::ALL.get(id as usize).copied()
    }

    /// The call of this name. By a table built on first use: every trace build looks up
    /// each of the segment's hundreds of hooked calls (a scan of them all took a tenth of
    /// `cairn run -- /bin/true`).
    pub fn from_name(name: &str) -> Option<Call> {
        static BY_NAME: std::sync::OnceLock<std::collections::HashMap<&'static str, Call>> =
            std::sync::OnceLock::new();
        BY_NAME
            .get_or_init(|| Call::ALL.iter().map(|call| (call.name(), *call)).collect())
            .get(name)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_table_order() {
        for (index, call) in Call::ALL.iter().enumerate() {
            assert_eq!(*call as usize, index);
            assert_eq!(Call::from_id(index as u16), Some(*call));
            assert_eq!(Call::from_name(call.name()), Some(*call));
        }
    }

    #[test]
    fn fortran_bindings_are_reported_as_the_mpi_call() {
        for (name, reported) in [
            ("mpi_file_write_at_all_", "MPI_File_write_at_all"),
            ("ompi_isend_f", "MPI_Isend"),
            ("pmpi_file_open_", "MPI_File_open"),
            ("mpi_waitall_f08_", "MPI_Waitall"),
            ("MPI_Send", "MPI_Send"),
            ("pwrite64", "pwrite64"),
        ] {
            assert_eq!(Call::reported_name(name), reported, "{name}");
        }
        // Every Fortran row names a C call of the same layer and class.
        for call in Call::ALL {
            if call.fortran_binding() != FortranBinding::None {
                let reported = Call::reported_name(call.name());
                let c_call = Call::from_name(&reported)
                    .unwrap_or_else(|| panic!("{} reported as {reported}", call.name()));
                assert_eq!(
                    (c_call.layer(), c_call.class()),
                    (call.layer(), call.class())
                );
            }
        }
    }

    #[test]
    fn classes_and_layers() {
        assert_eq!(Call::pwrite64.class(), CallClass::Write);
        assert_eq!(Call::fwrite.layer(), Layer::Stdio);
        assert_eq!(Call::__xstat.class(), CallClass::Stat);
        assert_eq!(Call::from_name("no_such_call"), None);
        let names: std::collections::HashSet<_> = Call::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Call::ALL.len(), "call names are unique");
    }
}
