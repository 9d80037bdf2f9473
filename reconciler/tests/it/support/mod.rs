//! Test doubles shared by the integration tests.

pub mod forge;
pub mod world;
