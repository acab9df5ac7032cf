//! The real functions behind the hooks: the next definition after this library
//! (`dlsym(RTLD_NEXT)`), so another preload library — a site-wide Darshan — is chained to,
//! never skipped.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_model::{for_each_call, Call};

macro_rules! symbol_names {
    ($( $name:ident $layer:ident $class:ident $kind:ident
        $( ( $($arg:ident : $ty:ty),* ) -> $ret:ty => $adapter:ident ( $($adapter_arg:expr),* ) )? ; )*) => {
        /// One NUL-terminated symbol name per call, in table order.
        const SYMBOLS: &[&str] = &[ $( concat!(stringify!($name), "\0"), )* ];
    };
}

for_each_call!(symbol_names);

const CALL_COUNT: usize = SYMBOLS.len();

static REAL: [AtomicUsize; CALL_COUNT] = [const { AtomicUsize::new(0) }; CALL_COUNT];

thread_local! {
    /// Set while this thread is inside dlsym, in case dlsym itself calls a hooked function.
    static RESOLVING: Cell<bool> = const { Cell::new(false) };
    /// Set during start-up resolution, which skips the slow search of `RTLD_LOCAL` objects
    /// (a call made later searches then).
    static EAGER: Cell<bool> = const { Cell::new(false) };
}

/// The real function for `call`, or `None` if there is none (or we are resolving).
#[inline(always)]
pub fn get(call: Call) -> Option<usize> {
    let address = REAL[call as usize].load(Ordering::Relaxed);
    if address != 0 {
        return Some(address);
    }
    resolve(call)
}

/// Linked into a static program (`cairn link-flags`): the linker's `__real_` name of each
/// wrapped call is the real function, and nothing is loaded at run time. No thread-local
/// state: the start code calls `__libc_start_main` before it sets up threads' storage.
#[cfg(cairn_wrap)]
#[cold]
fn resolve(call: Call) -> Option<usize> {
    let address = wrapped::address(call);
    if address == 0 {
        return None;
    }
    REAL[call as usize].store(address, Ordering::Relaxed);
    Some(address)
}

#[cfg(not(cairn_wrap))]
#[cold]
fn resolve(call: Call) -> Option<usize> {
    if RESOLVING.with(|flag| flag.replace(true)) {
        return None;
    }
    let name = SYMBOLS[call as usize];
    // SAFETY: the symbol name is NUL-terminated; RTLD_NEXT searches after this library.
    let mut address = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    // MPI (`MPI_Init` is of the process layer, hence the name) and the libraries of
    // generated rows may be loaded `RTLD_LOCAL` (by a Python extension); libc never is.
    let maybe_local = name.to_ascii_lowercase().starts_with("mpi_") || call.layer().is_library();
    if address == 0 && maybe_local && !EAGER.with(|flag| flag.get()) {
        address = search_loaded_objects(name);
    }
    RESOLVING.with(|flag| flag.set(false));
    if address == 0 {
        return None;
    }
    REAL[call as usize].store(address, Ordering::Relaxed);
    Some(address)
}

/// The real functions of a static program: `ld --wrap=X` sends the program's calls of X to
/// `__wrap_X` (the hook) and makes `__real_X` the real X. Each `__real_` name is a weak
/// reference, 0 when its call was not wrapped (an MPI call in a program without MPI).
#[cfg(cairn_wrap)]
mod wrapped {
    use cairn_model::{for_each_call, Call};

    macro_rules! weak_reals {
        ($( $name:ident $layer:ident $class:ident $kind:ident
            $( ( $($arg:ident : $ty:ty),* ) -> $ret:ty => $adapter:ident ( $($adapter_arg:expr),* ) )? ; )*) => {
            $( std::arch::global_asm!(concat!(".weak __real_", stringify!($name))); )*
            #[allow(non_snake_case, dead_code)]
            mod reals {
                extern "C" {
                    $( #[link_name = concat!("__real_", stringify!($name))] pub fn $name(); )*
                }
            }
            /// The address `__real_` of `call` resolved to (0: not wrapped).
            pub fn address(call: Call) -> usize {
                // The compiler may not assume a weak reference's address is non-zero.
                match call { $( Call::$name => std::hint::black_box(reals::$name as *const () as usize), )* }
            }
        };
    }

    for_each_call!(weak_reals);
}

/// Resolves every call up front (at start-up) so hooks never need dlsym later.
pub fn resolve_all() {
    EAGER.with(|flag| flag.set(true));
    for call in Call::ALL {
        get(*call);
    }
    EAGER.with(|flag| flag.set(false));
}

/// A library's own function that is not hooked (HDF5's `H5Tget_size`, which an adapter
/// asks): the first definition in the global scope, else in a library loaded
/// `RTLD_LOCAL`; 0 if none. `name` is NUL-terminated.
pub fn find_symbol(name: &str) -> usize {
    // SAFETY: the name is NUL-terminated; RTLD_DEFAULT searches the global scope.
    let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr().cast()) } as usize;
    if address != 0 {
        return address;
    }
    search_loaded_objects(name)
}

/// Finds `name` in a loaded object outside the global lookup scope: a library loaded with
/// `RTLD_LOCAL` (libmpi opened by a Python extension) is invisible to `RTLD_NEXT`, yet its
/// users' calls reach our hooks first.
fn search_loaded_objects(name: &str) -> usize {
    struct Search {
        name: *const libc::c_char,
        own: usize,
        found: usize,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid record and the Search we gave it.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        // SAFETY: a non-null dlpi_name is a NUL-terminated path.
        if info.dlpi_name.is_null() || unsafe { *info.dlpi_name } == 0 {
            return 0;
        }
        // SAFETY: RTLD_NOLOAD only returns a handle to an object that is already loaded.
        let handle = unsafe { libc::dlopen(info.dlpi_name, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if handle.is_null() {
            return 0;
        }
        // SAFETY: looking up a NUL-terminated name in a loaded object.
        let address = unsafe { libc::dlsym(handle, search.name) } as usize;
        // SAFETY: balances the dlopen above; the object stays loaded for its other users.
        unsafe { libc::dlclose(handle) };
        if address != 0 && address != search.own {
            search.found = address;
            return 1;
        }
        0
    }
    // SAFETY: looking up our own definition (the first in the global scope), to skip it.
    let own = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr().cast()) } as usize;
    let mut search = Search {
        name: name.as_ptr().cast(),
        own,
        found: 0,
    };
    // SAFETY: the callback only reads the loader's records and writes our Search.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut search as *mut Search).cast()) };
    search.found
}
