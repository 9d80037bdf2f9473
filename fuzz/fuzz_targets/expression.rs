//! The expression evaluator: any expression that parses evaluates to a value or an error,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| reconciler::fuzzing::expression(data));
