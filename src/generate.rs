//! `carve generate`: turn a recorded run into Rust test files.

use carve_generator::{GenerateOptions, Report};
use carve_storage::Store;

use crate::args::{Format, GenerateArgs};

pub fn run(a: GenerateArgs) -> anyhow::Result<i32> {
    let report = generate(&a)?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => {
            for f in &report.files {
                println!("wrote {}", f.display());
            }
            println!("{}", report.summary_line());
        }
    }
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
    };
    Ok(carve_generator::generate(&trace, &options)?)
}
