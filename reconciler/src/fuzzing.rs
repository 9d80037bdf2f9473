//! The properties the fuzz targets check (`fuzz/fuzz_targets/`), one function per target, so
//! `cargo fuzz` and the ordinary tests (which replay the seed corpus through them) check the
//! same thing. Each panics when its property fails.

use std::collections::BTreeMap;

use crate::ingest::Origin;
use crate::ingest::framing::{FrameBody, Splitter, resync};
use crate::ingest::record::Call;
use crate::synthesize::edit::run_tool;
use crate::terraform::functions::{EvalScope, evaluate};
use crate::terraform::state::{State, StateIndex};

/// Record framing and parsing: any bytes split into frames without a panic, every frame
/// inside the input, and each record frame parsed (or refused) without a panic; the resync
/// point of a malformed value lies inside it.
pub fn framing(data: &[u8]) {
    let mut splitter = Splitter::new(data);
    while let Ok(Some(frame)) = splitter.next_frame() {
        assert!(
            frame.offset as usize <= data.len(),
            "a frame outside the input"
        );
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
                    assert!(end <= next && next < bytes.len(), "a resync point outside");
                }
            }
            FrameBody::Garbage => {}
        }
    }
}

/// Any bytes read as a Terraform state or refused, and the index built over what was read
/// finds each of its instances.
pub fn state(data: &[u8]) {
    if let Ok(state) = State::parse(data, "fuzz") {
        let index = StateIndex::new(state);
        for instance in index.iter() {
            let _ = index.lookup(None, &instance.address);
        }
    }
}

/// An edit tool on any HCL text that parses: setting an attribute on its first resource
/// block leaves a text that parses, with every byte before and after that block as it was,
/// and no raw direction override. (A byte-for-byte print of `terraform::source` was dropped
/// from this check after it found six cases `hcl::edit` does not print back exactly; the
/// edit tools splice the original text and do not print through it.)
pub fn hcl_edit(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(body) = hcl::edit::parser::parse_body(text) else {
        return;
    };
    let Some(block) = body
        .blocks()
        .find(|b| b.ident.as_str() == "resource" && b.labels.len() == 2)
    else {
        return;
    };
    let Some(span) = hcl::edit::Span::span(block) else {
        return;
    };
    let labels: Vec<String> = block.labels.iter().map(|l| l.as_str().to_owned()).collect();
    let input = serde_json::json!({
        "target": {"file": "main.tf", "block_type": "resource", "labels": labels},
        "attribute": "fuzz_attribute",
        "value": "fuzz \u{202e} value"
    });
    let files = BTreeMap::from([("main.tf".to_owned(), text.to_owned())]);
    let Ok(result) = run_tool("set_attribute", &input.to_string(), &files) else {
        return;
    };
    let Some(new) = result.files.get("main.tf") else {
        return;
    };
    assert!(
        hcl::edit::parser::parse_body(new).is_ok(),
        "the edit does not parse"
    );
    assert!(
        !new.contains('\u{202e}'),
        "a direction override was written raw"
    );
    // Alignment may touch the lines of the edited block only.
    let before = &text[..text[..span.start].rfind('\n').map_or(0, |n| n + 1)];
    assert!(new.starts_with(before), "bytes before the block changed");
    let after = &text[span.end..];
    assert!(new.ends_with(after), "bytes after the block changed");
}

/// Any expression that parses evaluates to a value or an error, without a panic.
pub fn expression(data: &[u8]) {
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
}
