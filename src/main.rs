//! The `carve` binary; the command line lives in the library (`src/lib.rs`), shared with
//! `cargo-carve`.

fn main() {
    carve::carve_main()
}
