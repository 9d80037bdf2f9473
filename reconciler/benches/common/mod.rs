//! Code the benchmarks share. Each benchmark uses a part of it.

pub mod measure;
pub mod trail;
