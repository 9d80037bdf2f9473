//! Record framing and parsing: any bytes split into frames without a panic, every frame
//! inside the input, and each record frame parsed (or refused) without a panic; the resync
//! point of a malformed value lies inside it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconciler::ingest::Origin;
use reconciler::ingest::framing::{FrameBody, Splitter, resync};
use reconciler::ingest::record::Call;

fuzz_target!(|data: &[u8]| {
    let mut splitter = Splitter::new(data);
    while let Ok(Some(frame)) = splitter.next_frame() {
        assert!(frame.offset as usize <= data.len());
        match frame.body {
            FrameBody::Record(bytes) => {
                let origin = Origin {
                    source: "fuzz".into(),
                    index: frame.index,
                    offset: Some(frame.offset),
                };
                let _ = Call::parse(bytes, origin);
            }
            FrameBody::Truncated(bytes) => {
                if let Some((end, next)) = resync(bytes) {
                    assert!(end <= next && next < bytes.len());
                }
            }
            FrameBody::Garbage => {}
        }
    }
});
