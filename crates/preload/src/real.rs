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

#[cold]
fn resolve(call: Call) -> Option<usize> {
    if RESOLVING.with(|flag| flag.replace(true)) {
        return None;
    }
    // SAFETY: the symbol name is NUL-terminated; RTLD_NEXT searches after this library.
    let address =
        unsafe { libc::dlsym(libc::RTLD_NEXT, SYMBOLS[call as usize].as_ptr().cast()) } as usize;
    RESOLVING.with(|flag| flag.set(false));
    if address == 0 {
        return None;
    }
    REAL[call as usize].store(address, Ordering::Relaxed);
    Some(address)
}

/// Resolves every call up front (at start-up) so hooks never need dlsym later.
pub fn resolve_all() {
    for call in Call::ALL {
        get(*call);
    }
}
