//! The `cargo-carve` binary: `cargo carve ...`, carve's commands with what cargo knows about the
//! workspace (see `src/cargo.rs`).

fn main() {
    carve::cargo_carve_main()
}
