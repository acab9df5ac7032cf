//! Compiles the C shim for the C-variadic stdio calls (Rust cannot define variadic
//! functions on stable) and exports its symbols: rustc's own version script would hide them.
fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-changed=exports.map");
    // Set by crates/preload-static, which builds this source for static programs.
    println!("cargo:rustc-check-cfg=cfg(cairn_wrap)");
    cc::Build::new()
        .file("src/shim.c")
        .flag("-fno-omit-frame-pointer")
        // Keeps the frame depth fixed for context capture (no tail calls into traced_*).
        .flag("-fno-optimize-sibling-calls")
        .flag("-fvisibility=default")
        .warnings(true)
        .compile("cairn_shim");
    let map =
        std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("exports.map");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
}
