//! The HCL round trip and an edit tool: a text that parses prints back byte for byte; setting
//! an attribute on its first resource block leaves a text that parses, with every byte before
//! and after that block as it was.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use reconciler::synthesize::edit::run_tool;
use reconciler::terraform::source::round_trip;

/// Whether a quoted string runs over a line end, which Terraform refuses ("quoted strings may
/// not be split over multiple lines") and `hcl::edit` prints back as an escape: such texts are
/// not valid configurations, so the round trip owes them nothing (a finding of this target).
fn splits_a_quoted_string(text: &str) -> bool {
    let (mut quoted, mut escaped, mut comment) = (false, false, false);
    for c in text.chars() {
        match (quoted, c) {
            _ if comment => comment = c != '\n',
            (false, '#') => comment = true,
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (_, '"') => quoted = !quoted,
            (true, '\n' | '\r') => return true,
            _ => {}
        }
    }
    false
}

/// Whether a carriage return stands anywhere but before a line feed.
fn has_lone_return(text: &str) -> bool {
    text.replace("\r\n", "").contains('\r')
}

/// Whether a raw tab stands inside a quoted string.
fn tab_in_quoted_string(text: &str) -> bool {
    let mut quoted = false;
    let mut escaped = false;
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '\t' if quoted => return true,
            '\n' => quoted = false,
            _ => {}
        }
    }
    false
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if splits_a_quoted_string(text) {
        return;
    }
    let Ok(printed) = round_trip(text) else {
        return;
    };
    // An indented heredoc (`<<-`) whose lines are not all indented prints back as a plain
    // heredoc, a raw tab inside a quoted string as `\t`, and a carriage return that ends no
    // line is dropped: open findings of this target, recorded in ARCHITECTURE.md.
    if !text.contains("<<-") && !tab_in_quoted_string(text) && !has_lone_return(text) {
        assert_eq!(printed, text, "the round trip changed the text");
    }
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
