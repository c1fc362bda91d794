//! Two things ryu's own tests showed (issue 30's corpus: 0 of its calls carved): a generic
//! function bounded by a sealed trait (`fn format<F: Float>(f: F)`, `Float: Sealed` with
//! `Sealed` private) got a mock of the trait, which cannot implement the private supertrait and
//! did not compile; and a NaN with a payload was written `f64::NAN`, another NaN, so the tests
//! formatting it failed against the code they were carved from. Now the recorded float is
//! passed, bit for bit.

mod common;

use common::*;

const LIB: &str = r#"
mod private {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

/// A float the crate knows how to show; only the crate can implement it.
pub trait Float: private::Sealed + Copy {
    fn bits_hex(self) -> String;
}

impl Float for f64 {
    fn bits_hex(self) -> String {
        format!("{:016x}", self.to_bits())
    }
}

impl Float for f32 {
    fn bits_hex(self) -> String {
        format!("{:08x}", self.to_bits())
    }
}

/// The float's bits in hex, after a tag saying whether it is a number.
pub fn describe<F: Float>(f: F) -> String {
    let hex = f.bits_hex();
    if hex.starts_with("7ff") || hex.starts_with("fff") || hex.starts_with("7f8") {
        format!("special {hex}")
    } else {
        format!("number {hex}")
    }
}
"#;

const MAIN: &str = r#"
fn main() {
    println!("{}", sealed::describe(1.5f64));
    println!("{}", sealed::describe(0.25f32));
    println!("{}", sealed::describe(f64::from_bits(0x7ff0_0000_2000_0000)));
    println!("{}", sealed::describe(-f64::NAN));
}
"#;

#[test]
fn a_sealed_trait_argument_is_the_recorded_value_and_a_nan_keeps_its_bits() {
    let c = carve_small_crate("sealed", LIB, MAIN, &[]);
    let file = std::fs::read_to_string(c.dir.join("tests/carved_sealed.rs")).unwrap();
    assert!(
        !file.contains("mock!"),
        "no mock of the sealed trait: {file}"
    );
    assert!(
        !c.dir.join("tests/carved_sealed_quarantine.md").exists()
            && !c.dir.join("tests/carved_quarantine.md").exists(),
        "nothing taken out: {}",
        c.summary
    );
    assert_carved(
        &file,
        &c.summary,
        &[
            "sealed::describe(1.5f64)",
            "sealed::describe(0.25f32)",
            "sealed::describe(f64::from_bits(0x7ff0000020000000))",
            "sealed::describe(f64::from_bits(0xfff8000000000000))",
            "\"special 7ff0000020000000\"",
        ],
    );
    assert_pass_then_fail_after(
        &c.dir,
        "format!(\"special {hex}\")",
        "format!(\"nan {hex}\")",
        "describe",
    );
}
