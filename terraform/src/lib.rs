//! The model of a Terraform project: state, configuration, expression evaluation with
//! Terraform's built-in functions, and provenance of attribute values; and the
//! format-preserving HCL edit tools ([`edit`]). It calls no cloud API itself: it reads and
//! writes files, and runs `terraform state pull` only when asked ([`state::State::pull`]).
//!
//! Modules, lowest first (no module imports a later one):
//! - [`text`]: the characters never written raw, and whole sentences for descriptions;
//! - [`syntax`], [`source`], [`values`]: HCL parsing, module sources, Terraform's value
//!   equality;
//! - [`state`]: state files and the index of their instances;
//! - [`functions`]: expressions and the built-in functions;
//! - [`config`]: configuration with provenance;
//! - [`edit`]: the edit tools.

#![forbid(unsafe_code)]

pub mod config;
pub mod edit;
pub mod functions;
pub mod source;
pub mod state;
pub mod syntax;
pub mod text;
pub mod values;

/// Quotes and escapes `s` as an HCL string literal, escaping template sequences too; also
/// the form Terraform uses for string keys in instance addresses (`aws_subnet.x["a"]`).
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c => push_escaped(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// Appends `c` as a quoted HCL string holds it: quotes, backslashes and line ends escaped;
/// controls and invisible or direction-changing characters as `\u{…}`, never raw.
pub fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if crate::text::is_unsafe(c) || c.is_control() => {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        }
        c => out.push(c),
    }
}
