//! Release builds of retrace's executables on Linux leave the local symbols out of the symbol
//! table (5 of the 48 MB of `retrace`): backtraces name retrace's and the standard library's
//! frames from the line tables and the debug-info package beside the binary instead (a unit
//! test of the `retrace` binary checks one). Frames of dependencies, built without debug
//! info, then print as `<unknown>` unless inlined into retrace's code.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if release && linux {
        println!("cargo::rustc-link-arg=-Wl,--discard-all");
    }
}
