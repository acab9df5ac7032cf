//! Phases the program marks: `cairn_phase_begin("checkpoint")` … `cairn_phase_end(…)`
//! (`include/cairn.h`, whose declarations are weak so that a build run without the tracer
//! links and skips them). Nothing is forwarded — there is no real function — the mark is
//! recorded as an event whose file is the phase's name (`phase:NAME`, classified as not a
//! file), so the analyses attribute the calls between the marks to the phase.

use std::ffi::{c_char, CStr};

use cairn_format::segment::path_origin;
use cairn_model::Call;

use crate::files;
use crate::hooks::{record, traced_with};
use crate::recorder::Scope;

/// Longest phase name kept (a longer one is cut).
const MAX_NAME: usize = 256;
const PREFIX: &[u8] = b"phase:";

/// Records `call` with the phase name `name` (cut at [`MAX_NAME`] bytes).
fn mark(call: Call, name: &[u8]) {
    let Some(scope) = Scope::enter() else { return };
    // The name as a path, on the stack: a hook does not allocate.
    let mut path = [0u8; PREFIX.len() + MAX_NAME];
    let length = name.len().min(MAX_NAME);
    path[..PREFIX.len()].copy_from_slice(PREFIX);
    path[PREFIX.len()..PREFIX.len() + length].copy_from_slice(&name[..length]);
    let path = &path[..PREFIX.len() + length];
    traced_with(
        &scope,
        call,
        || (),
        |scope, times, ()| {
            record(scope, call, times, |event, state| {
                event.file = files::intern(state, path, path_origin::NAMED);
                true
            })
        },
    );
}

/// The bytes of a C string from the program (empty for a null pointer).
///
/// # Safety
/// `name` is null or NUL-terminated.
unsafe fn c_name<'a>(name: *const c_char) -> &'a [u8] {
    if name.is_null() {
        return b"";
    }
    // SAFETY: a NUL-terminated string, as the API asks.
    unsafe { CStr::from_ptr(name) }.to_bytes()
}

/// A Fortran character argument: `length` bytes, blank-padded.
///
/// # Safety
/// `name` points to `length` readable bytes (or is null).
unsafe fn fortran_name<'a>(name: *const c_char, length: usize) -> &'a [u8] {
    if name.is_null() {
        return b"";
    }
    // SAFETY: gfortran passes the character's address and its length.
    let bytes = unsafe { std::slice::from_raw_parts(name.cast::<u8>(), length.min(MAX_NAME)) };
    let end = bytes
        .iter()
        .rposition(|byte| *byte != b' ')
        .map_or(0, |at| at + 1);
    &bytes[..end]
}

/// Starts the phase `name`.
///
/// # Safety
/// `name` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn cairn_phase_begin(name: *const c_char) {
    // SAFETY: as the caller promises.
    mark(Call::cairn_phase_begin, unsafe { c_name(name) });
}

/// Ends the phase `name`.
///
/// # Safety
/// `name` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn cairn_phase_end(name: *const c_char) {
    // SAFETY: as the caller promises.
    mark(Call::cairn_phase_end, unsafe { c_name(name) });
}

/// Fortran's `call cairn_phase_begin("checkpoint")` (gfortran's name and hidden length).
///
/// # Safety
/// `name` points to `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn cairn_phase_begin_(name: *const c_char, length: usize) {
    // SAFETY: as the caller promises.
    mark(Call::cairn_phase_begin, unsafe {
        fortran_name(name, length)
    });
}

/// Fortran's `call cairn_phase_end("checkpoint")`.
///
/// # Safety
/// `name` points to `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn cairn_phase_end_(name: *const c_char, length: usize) {
    // SAFETY: as the caller promises.
    mark(Call::cairn_phase_end, unsafe { fortran_name(name, length) });
}
