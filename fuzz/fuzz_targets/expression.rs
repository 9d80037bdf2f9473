//! The expression evaluator: any expression that parses evaluates to a value or an error,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconciler::terraform::functions::{EvalScope, evaluate};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.len() > 4096 {
        return;
    }
    let Ok(expr) = text.parse::<hcl::Expression>() else {
        return;
    };
    let scope = EvalScope::new("/nonexistent-fuzz-module");
    let _ = evaluate(&expr, &scope);
});
