//! What a generated row records: its call class and its adapter (a function of the preload
//! library, `crates/preload/src/adapters/library.rs`).
//!
//! A layer's profile knows the calls whose meaning the types alone do not say: HDF5's
//! `H5Dwrite` moves `npoints(selection) × size(memory type)` bytes, `H5Fcreate` names a
//! file, an object made by `H5Dcreate2` lives in the file of its location, a property-list
//! call's second argument is the setting (`H5Pset_dxpl_mpio`'s collective mode); NetCDF's
//! typed array calls move `product(count) × sizeof(type)`. Any other
//! call, and every call of the generic `library` layer, gets [`generic`]: its class from
//! its name, its first integer argument as the handle, its first size as the size, and its
//! first `const char *` name argument as the file.

use crate::{CType, Parameter};

/// Layer names `--layer` accepts.
pub const LAYERS: [&str; 3] = ["hdf5", "netcdf", "library"];

/// The model's layer for a `--layer` name.
pub fn layer_name(layer: &str) -> Option<&'static str> {
    match layer {
        "hdf5" => Some("Hdf5"),
        "netcdf" => Some("NetCdf"),
        "library" => Some("Library"),
        _ => None,
    }
}

/// The call class and the adapter call of one function.
pub fn classify(
    layer: &str,
    name: &str,
    parameters: &[Parameter],
    result: &CType,
) -> (&'static str, String) {
    match layer {
        "hdf5" => hdf5(name, parameters, result),
        "netcdf" => netcdf(name, parameters),
        _ => generic(name, parameters),
    }
}

/// Bytes of one element of a typed NetCDF call (`ncmpi_put_vara_double_all`: `double`).
fn netcdf_element_size(name: &str) -> Option<u64> {
    let typed = name
        .trim_end_matches("_all")
        .rsplit_once("_vara_")
        .map(|(_, element)| element)?;
    Some(match typed {
        "text" | "schar" | "uchar" => 1,
        "short" | "ushort" => 2,
        "int" | "uint" | "float" => 4,
        "long" | "double" | "longlong" | "ulonglong" => 8,
        _ => return None,
    })
}

/// NetCDF (`nc_`) and PnetCDF (`ncmpi_`): a dataset is an `int ncid`, opened by path
/// (`ncmpi_create(comm, path, mode, info, &ncid)`); a typed array access moves the
/// product of its `count` array times the element size its name says.
fn netcdf(name: &str, parameters: &[Parameter]) -> (&'static str, String) {
    if !name.starts_with("nc_") && !name.starts_with("ncmpi_") {
        return generic(name, parameters);
    }
    let base = name
        .trim_start_matches("ncmpi_")
        .trim_start_matches("nc_")
        .trim_end_matches("_all");
    let class = if base.starts_with("put_var") {
        "Write"
    } else if base.starts_with("get_var") {
        "Read"
    } else if base == "create" || base == "open" {
        "Open"
    } else if base == "close" {
        "Close"
    } else if base == "sync" {
        "Sync"
    } else {
        "Meta"
    };
    let named = |wanted: &str| parameters.iter().find(|parameter| parameter.name == wanted);
    let adapter = match class {
        "Open" => match (named("path"), parameters.last()) {
            (Some(path), Some(id)) if matches!(id.ctype, CType::Pointer { .. }) => {
                format!("netcdf_open({}, {} as *const c_int)", path.name, id.name)
            }
            _ => return generic(name, parameters),
        },
        "Close" => format!("netcdf_close({})", as_i64(parameters.first())),
        "Write" | "Read" => match (
            named("varid"),
            named("count").or_else(|| named("countp")),
            netcdf_element_size(name),
        ) {
            // PnetCDF's counts are `MPI_Offset`s, NetCDF's `size_t`s: both 8 bytes here;
            // the number of dimensions is asked of the library that made the call.
            (Some(varid), Some(count), Some(size)) => format!(
                "{}({}, {} as i64, {} as *const i64, {size})",
                if name.starts_with("ncmpi_") {
                    "pnetcdf_vara"
                } else {
                    "netcdf_vara"
                },
                as_i64(parameters.first()),
                varid.name,
                count.name
            ),
            _ => format!("netcdf_call({})", as_i64(parameters.first())),
        },
        _ => format!("netcdf_call({})", as_i64(parameters.first())),
    };
    (class, adapter)
}

fn integer(parameter: Option<&Parameter>) -> Option<&str> {
    parameter
        .filter(|parameter| matches!(parameter.ctype, CType::Integer(_)))
        .map(|parameter| parameter.name.as_str())
}

/// An argument as the adapters take it (`i64`), or 0.
fn as_i64(parameter: Option<&Parameter>) -> String {
    integer(parameter).map_or("0".into(), |name| format!("{name} as i64"))
}

fn hdf5(name: &str, parameters: &[Parameter], result: &CType) -> (&'static str, String) {
    if !name.starts_with("H5") {
        return generic(name, parameters);
    }
    let argument = |index: usize| as_i64(parameters.get(index));
    let class = match name {
        "H5Fcreate" | "H5Fopen" => "Open",
        "H5Fclose" => "Close",
        "H5Fflush" => "Flush",
        "H5Dwrite" | "H5Awrite" => "Write",
        "H5Dread" | "H5Aread" => "Read",
        _ => "Meta",
    };
    let adapter = match name {
        "H5Fcreate" | "H5Fopen" => match parameters.first() {
            Some(file)
                if file.ctype
                    == (CType::Pointer {
                        constant: true,
                        text: true,
                    }) =>
            {
                format!("hdf5_file_open({})", file.name)
            }
            _ => return generic(name, parameters),
        },
        "H5Dwrite" | "H5Dread" if parameters.len() >= 4 => format!(
            "hdf5_transfer({}, {}, {}, {})",
            argument(0),
            argument(1),
            argument(2),
            argument(3)
        ),
        "H5Awrite" | "H5Aread" if parameters.len() >= 2 => {
            format!("hdf5_attribute_transfer({}, {})", argument(0), argument(1))
        }
        // The setting is the last integer argument: `H5Pset_dxpl_mpio`'s transfer mode,
        // `H5Pset_chunk`'s rank, `H5Pset_alignment`'s alignment.
        _ if name.starts_with("H5P") => format!(
            "hdf5_property({}, {})",
            argument(0),
            as_i64(
                parameters
                    .iter()
                    .skip(1)
                    .rfind(|parameter| matches!(parameter.ctype, CType::Integer(_)))
            )
        ),
        _ if name.ends_with("close") => format!("hdf5_close({})", argument(0)),
        // Makes or opens an object at a location (returns an `hid_t`, 64 bits; `herr_t` is
        // an `int`): the new id belongs to the location's file.
        _ if matches!(result, CType::Integer("c_long" | "i64"))
            && integer(parameters.first()).is_some() =>
        {
            format!("hdf5_create({})", argument(0))
        }
        _ => format!("hdf5_object({})", argument(0)),
    };
    (class, adapter)
}

/// A call the profile knows nothing special about.
pub fn generic(name: &str, parameters: &[Parameter]) -> (&'static str, String) {
    let lower = name.to_ascii_lowercase();
    let class = if lower.contains("write") || lower.contains("_put_") {
        "Write"
    } else if lower.contains("read") || lower.contains("_get_var") {
        "Read"
    } else if lower.contains("create") || lower.contains("open") {
        "Open"
    } else if lower.contains("close") {
        "Close"
    } else if lower.contains("flush") || lower.contains("sync") {
        "Sync"
    } else {
        "Meta"
    };
    // An open's handle is its result (kept as the event's result); another call's, its
    // first integer argument.
    let handle = if class == "Open" {
        "0".into()
    } else {
        as_i64(
            parameters
                .iter()
                .find(|parameter| matches!(parameter.ctype, CType::Integer(_))),
        )
    };
    let size = parameters
        .iter()
        .find(|parameter| {
            matches!(parameter.ctype, CType::Integer("c_ulong" | "u64"))
                && ["size", "count", "len", "bytes", "nbytes", "n"]
                    .iter()
                    .any(|word| parameter.name.to_ascii_lowercase().contains(word))
        })
        .map_or("0".into(), |parameter| format!("{} as u64", parameter.name));
    let file = parameters
        .iter()
        .find(|parameter| {
            parameter.ctype
                == CType::Pointer {
                    constant: true,
                    text: true,
                }
                && ["path", "file", "name"]
                    .iter()
                    .any(|word| parameter.name.to_ascii_lowercase().contains(word))
        })
        .map_or("std::ptr::null()".into(), |parameter| {
            parameter.name.clone()
        });
    (class, format!("library_call({handle}, {size}, {file})"))
}
