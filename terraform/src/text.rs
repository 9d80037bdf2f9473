//! The character checks the Terraform model and the edit tools share with the rest of
//! retrace: which characters must never be written raw, and what counts as whole sentences
//! in a description a language model reads.

/// Whether a character must not reach a terminal or a file raw: C0 and C1 controls and DEL
/// (newline and tab aside), and the invisible formatting characters that change how text
/// around them reads (bidirectional overrides and isolates, zero-width characters, the byte
/// order mark).
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Whether `text` is whole sentences, as a description for a model must be: a capital (or
/// code) first, a full stop last, and not cut after an abbreviation such as "e.g.".
pub fn is_sentence(text: &str) -> bool {
    let first = text.chars().next();
    first.is_some_and(|c| c.is_uppercase() || c == '`')
        && text.ends_with('.')
        && !["e.g.", "i.e.", "etc."]
            .iter()
            .any(|cut| text.ends_with(cut))
}
