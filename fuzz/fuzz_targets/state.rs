//! The state reader: any bytes are a state or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| reconciler::fuzzing::state(data));
