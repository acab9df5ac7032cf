//! libotf2, loaded when an OTF2 export is asked for rather than linked: `cairn` then runs
//! (and exports every other format) on machines without it, and says what to install when
//! an OTF2 export finds none. Only the functions the writer calls are looked up; their
//! signatures are OTF2 3.0's (`/usr/include/otf2/*.h`), whose integer typedefs are spelled
//! out here as their fixed-width types.

use std::ffi::{c_char, c_void, CStr};

use crate::ExportError;

/// The shared object names libotf2 goes by: Debian's (`libopen-trace-format2-10`), then
/// the upstream build's.
const NAMES: [&CStr; 3] = [
    c"libopen-trace-format2.so.10",
    c"libotf2.so.10",
    c"libotf2.so",
];

/// `OTF2_FlushCallbacks`.
#[repr(C)]
pub struct FlushCallbacks {
    pub pre_flush: extern "C" fn(*mut c_void, u8, u64, *mut c_void, bool) -> u8,
    pub post_flush: extern "C" fn(*mut c_void, u8, u64) -> u64,
}

macro_rules! functions {
    ($($name:ident: fn($($argument:ty),*) -> $result:ty;)*) => {
        /// libotf2's entry points, each `OTF2_<field name>`.
        #[allow(non_snake_case)]
        pub struct Library {
            $(pub $name: unsafe extern "C" fn($($argument),*) -> $result,)*
        }

        impl Library {
            pub fn load() -> Result<Library, ExportError> {
                let handle = NAMES
                    .iter()
                    // SAFETY: dlopen with a NUL-terminated name; libotf2's initialisers
                    // only set up its own state.
                    .map(|name| unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) })
                    .find(|handle| !handle.is_null())
                    .ok_or_else(|| ExportError::Otf2(
                        "libotf2 was not found (on Debian: apt install libopen-trace-format2-10, or otf2-tools)".into(),
                    ))?;
                Ok(Library {
                    $($name: {
                        let symbol = concat!("OTF2_", stringify!($name), "\0");
                        // SAFETY: a symbol looked up in the handle just opened, by a
                        // NUL-terminated name.
                        let address = unsafe { libc::dlsym(handle, symbol.as_ptr().cast()) };
                        if address.is_null() {
                            return Err(ExportError::Otf2(format!(
                                "libotf2 has no {}: a version older than 3.0?",
                                symbol.trim_end_matches('\0')
                            )));
                        }
                        // SAFETY: the function of that name in OTF2 3.0's API, whose
                        // signature is the one declared for the field.
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($argument),*) -> $result>(address) }
                    },)*
                })
            }
        }
    };
}

type Pointer = *mut c_void;

functions! {
    Archive_Open: fn(*const c_char, *const c_char, u8, u64, u64, u8, u8) -> Pointer;
    Archive_Close: fn(Pointer) -> i32;
    Archive_SetCreator: fn(Pointer, *const c_char) -> i32;
    Archive_SetFlushCallbacks: fn(Pointer, *const FlushCallbacks, Pointer) -> i32;
    Archive_SetSerialCollectiveCallbacks: fn(Pointer) -> i32;
    Archive_OpenEvtFiles: fn(Pointer) -> i32;
    Archive_CloseEvtFiles: fn(Pointer) -> i32;
    Archive_GetEvtWriter: fn(Pointer, u64) -> Pointer;
    Archive_CloseEvtWriter: fn(Pointer, Pointer) -> i32;
    Archive_OpenDefFiles: fn(Pointer) -> i32;
    Archive_CloseDefFiles: fn(Pointer) -> i32;
    Archive_GetDefWriter: fn(Pointer, u64) -> Pointer;
    Archive_CloseDefWriter: fn(Pointer, Pointer) -> i32;
    Archive_GetGlobalDefWriter: fn(Pointer) -> Pointer;
    Error_GetDescription: fn(i32) -> *const c_char;
    EvtWriter_GetNumberOfEvents: fn(Pointer, *mut u64) -> i32;
    EvtWriter_Enter: fn(Pointer, Pointer, u64, u32) -> i32;
    EvtWriter_Leave: fn(Pointer, Pointer, u64, u32) -> i32;
    EvtWriter_MpiSend: fn(Pointer, Pointer, u64, u32, u32, u32, u64) -> i32;
    EvtWriter_MpiRecv: fn(Pointer, Pointer, u64, u32, u32, u32, u64) -> i32;
    EvtWriter_MpiCollectiveBegin: fn(Pointer, Pointer, u64) -> i32;
    EvtWriter_MpiCollectiveEnd: fn(Pointer, Pointer, u64, u8, u32, u32, u64, u64) -> i32;
    EvtWriter_IoCreateHandle: fn(Pointer, Pointer, u64, u32, u8, u32, u32) -> i32;
    EvtWriter_IoDestroyHandle: fn(Pointer, Pointer, u64, u32) -> i32;
    EvtWriter_IoOperationBegin: fn(Pointer, Pointer, u64, u32, u8, u32, u64, u64) -> i32;
    EvtWriter_IoOperationComplete: fn(Pointer, Pointer, u64, u32, u64, u64) -> i32;
    GlobalDefWriter_WriteClockProperties: fn(Pointer, u64, u64, u64, u64) -> i32;
    GlobalDefWriter_WriteParadigm: fn(Pointer, u8, u32, u8) -> i32;
    GlobalDefWriter_WriteString: fn(Pointer, u32, *const c_char) -> i32;
    GlobalDefWriter_WriteIoParadigm: fn(Pointer, u8, u32, u32, u8, u32, u8, *const u8, *const u8, *const c_void) -> i32;
    GlobalDefWriter_WriteSystemTreeNode: fn(Pointer, u32, u32, u32, u32) -> i32;
    GlobalDefWriter_WriteLocationGroup: fn(Pointer, u32, u32, u8, u32, u32) -> i32;
    GlobalDefWriter_WriteLocation: fn(Pointer, u64, u32, u8, u64, u32) -> i32;
    GlobalDefWriter_WriteRegion: fn(Pointer, u32, u32, u32, u32, u8, u8, u32, u32, u32, u32) -> i32;
    GlobalDefWriter_WriteGroup: fn(Pointer, u32, u32, u8, u8, u32, u32, *const u64) -> i32;
    GlobalDefWriter_WriteComm: fn(Pointer, u32, u32, u32, u32, u32) -> i32;
    GlobalDefWriter_WriteIoRegularFile: fn(Pointer, u32, u32, u32) -> i32;
    GlobalDefWriter_WriteIoHandle: fn(Pointer, u32, u32, u32, u8, u32, u32, u32) -> i32;
}

impl Library {
    /// `Ok` for `OTF2_SUCCESS`, else libotf2's description of the error, after `what`.
    pub fn check(&self, code: i32, what: &str) -> Result<(), ExportError> {
        if code == SUCCESS {
            return Ok(());
        }
        // SAFETY: libotf2 returns a static string for any error code.
        let description = unsafe { (self.Error_GetDescription)(code) };
        let description = if description.is_null() {
            format!("error {code}")
        } else {
            // SAFETY: a NUL-terminated static string, checked non-null.
            unsafe { CStr::from_ptr(description) }
                .to_string_lossy()
                .into_owned()
        };
        Err(ExportError::Otf2(format!("{what}: {description}")))
    }
}

// The constants of OTF2 3.0's headers this writer uses.
pub const SUCCESS: i32 = 0;
pub const FILEMODE_WRITE: u8 = 0;
pub const SUBSTRATE_POSIX: u8 = 1;
pub const COMPRESSION_NONE: u8 = 1;
pub const FLUSH: u8 = 1;
pub const UNDEFINED_U32: u32 = u32::MAX;
pub const UNDEFINED_U64: u64 = u64::MAX;
pub const LOCATION_GROUP_TYPE_PROCESS: u8 = 1;
pub const LOCATION_TYPE_CPU_THREAD: u8 = 1;
pub const REGION_ROLE_FUNCTION: u8 = 1;
pub const REGION_ROLE_FILE_IO: u8 = 27;
pub const REGION_ROLE_POINT2POINT: u8 = 28;
pub const REGION_ROLE_COLL_ALL2ALL: u8 = 25;
pub const REGION_FLAG_NONE: u32 = 0;
pub const PARADIGM_UNKNOWN: u8 = 0;
pub const PARADIGM_MPI: u8 = 4;
pub const PARADIGM_CLASS_PROCESS: u8 = 0;
pub const IO_PARADIGM_CLASS_SERIAL: u8 = 0;
pub const IO_PARADIGM_CLASS_PARALLEL: u8 = 1;
pub const IO_PARADIGM_FLAG_NONE: u32 = 0;
pub const IO_PARADIGM_FLAG_OS: u32 = 1;
pub const IO_HANDLE_FLAG_NONE: u32 = 0;
pub const IO_HANDLE_FLAG_PRE_CREATED: u32 = 1;
pub const IO_ACCESS_MODE_READ_WRITE: u8 = 2;
pub const IO_CREATION_FLAG_NONE: u32 = 0;
pub const IO_STATUS_FLAG_NONE: u32 = 0;
pub const IO_OPERATION_MODE_READ: u8 = 0;
pub const IO_OPERATION_MODE_WRITE: u8 = 1;
pub const IO_OPERATION_MODE_FLUSH: u8 = 2;
pub const IO_OPERATION_FLAG_NONE: u32 = 0;
pub const GROUP_TYPE_COMM_LOCATIONS: u8 = 4;
pub const GROUP_TYPE_COMM_GROUP: u8 = 5;
pub const GROUP_FLAG_NONE: u32 = 0;
pub const COMM_FLAG_NONE: u32 = 0;
