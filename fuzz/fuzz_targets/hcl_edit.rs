//! An edit tool on any HCL text that parses: setting an attribute on its first resource block
//! leaves a text that parses, with every byte before and after that block as it was, and no
//! raw direction override. (A byte-for-byte print of `terraform::source` was dropped from this
//! target after it found six cases `hcl::edit` does not print back exactly; see
//! ARCHITECTURE.md. The edit tools splice the original text and do not print through it.)
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use reconciler::synthesize::edit::run_tool;

fuzz_target!(|data: &[u8]| {
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
});
