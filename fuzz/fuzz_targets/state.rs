//! The state reader: any bytes are a state or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconciler::terraform::state::{State, StateIndex};

fuzz_target!(|data: &[u8]| {
    if let Ok(state) = State::parse(data, "fuzz") {
        let index = StateIndex::new(state);
        for instance in index.iter() {
            let _ = index.lookup(None, &instance.address);
        }
    }
});
