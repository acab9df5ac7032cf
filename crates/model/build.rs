//! Writes `for_each_call!`: the user's rows, if `CAIRN_USER_CALLS` names a file of them,
//! then the built-in and generated rows (`for_each_builtin_call!`). `CAIRN_USER_CALLS=FILE
//! cargo build` with FILE from `cairn wrapgen HEADER --include … -o FILE` builds a
//! libcairn.so that hooks that library's functions too; without it, no user rows.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=CAIRN_USER_CALLS");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let rows = match std::env::var_os("CAIRN_USER_CALLS").filter(|path| !path.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            println!("cargo:rerun-if-changed={}", path.display());
            let rows = std::fs::read_to_string(&path)
                .unwrap_or_else(|error| panic!("CAIRN_USER_CALLS={}: {error}", path.display()));
            assert!(
                rows.contains(" generated ("),
                "CAIRN_USER_CALLS={} holds no rows: write it with `cairn wrapgen HEADER -o FILE`",
                path.display()
            );
            rows
        }
        None => String::new(),
    };
    let text = format!(
        "/// Calls every row of the call table through `$callback!`.
#[macro_export]
macro_rules! for_each_call {{
    ($callback:path) => {{
        $crate::for_each_builtin_call! {{ $callback;
{rows}
        }}
    }};
}}
"
    );
    std::fs::write(out.join("for_each_call.rs"), text).expect("OUT_DIR is writable");
}
