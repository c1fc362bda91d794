//! `carve explore`: new call sequences beyond the recorded run (seeds 001 and 004).
mod api;
mod error;
mod harness;
mod pools;
mod strategy;
