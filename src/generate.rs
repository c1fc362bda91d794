//! `carve generate`: turn a recorded run into Rust test files.

use carve_generator::{GenerateOptions, Report};
use carve_storage::Store;

use crate::args::{Format, GenerateArgs};

pub fn run(a: GenerateArgs) -> anyhow::Result<i32> {
    let report = generate(&a)?;
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Text => {
            let mut text = String::new();
            for f in &report.files {
                text.push_str(&format!("wrote {}\n", f.display()));
            }
            text + &report.summary_line() + "\n"
        }
    };
    crate::emit(&text)?;
    Ok(0)
}

pub fn generate(a: &GenerateArgs) -> anyhow::Result<Report> {
    let store = Store::open(&a.db)?;
    let run = crate::show::pick_run(&store, a.run)?;
    let trace = store.load_trace(run)?;
    let options = GenerateOptions {
        out_dir: a.out.clone(),
        crate_dir: a.crate_dir.clone(),
        templates: a.templates.clone(),
        verify: None,
    };
    Ok(carve_generator::generate(&trace, &options)?)
}
