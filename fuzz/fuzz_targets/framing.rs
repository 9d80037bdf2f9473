//! Record framing and parsing: any bytes split into frames without a panic, every frame
//! inside the input, and each record frame parsed (or refused) without a panic; the resync
//! point of a malformed value lies inside it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| reconciler::fuzzing::framing(data));
