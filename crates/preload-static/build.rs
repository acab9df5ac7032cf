//! Builds the tracer for static programs: `cfg(cairn_wrap)` for the Rust side, and the C
//! shim of the variadic stdio hooks with `CAIRN_WRAP` (hooks named `__wrap_fprintf`...).
fn main() {
    let shim = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .join("../preload/src/shim.c");
    println!("cargo:rerun-if-changed={}", shim.display());
    println!("cargo:rustc-check-cfg=cfg(cairn_wrap)");
    println!("cargo:rustc-cfg=cairn_wrap");
    cc::Build::new()
        .file(shim)
        .define("CAIRN_WRAP", None)
        .flag("-fno-omit-frame-pointer")
        .flag("-fno-optimize-sibling-calls")
        .warnings(true)
        .compile("cairn_static_shim");
}
