//! Parsing and printing HCL files byte for byte, CRLF line ends included.
//!
//! `hcl::edit` keeps every byte of a file it parses except the `\r` of CRLF line ends that
//! it reads as newline tokens: those print back as `\n`, so a CRLF file comes back with mixed
//! line ends. [`HclFile`] records which lines ended in CRLF, parses the text with LF line ends,
//! and puts each `\r` back when printing. Lines added by an edit of the tree take the file's
//! usual line end.
//!
//! `hcl::edit` also prints a raw control character inside a string or label (valid HCL, which
//! `terraform fmt` leaves alone) as an escape sequence. [`HclFile`] stands each one in for a
//! character of the supplementary private use area while parsing and puts it back when
//! printing (found by the `hcl_edit` fuzz target).

use hcl::edit::structure::Body;

/// A parsed HCL file that prints back with the line ends it was read with.
#[derive(Debug, Clone)]
pub struct HclFile {
    body: Body,
    /// For each line of the file, whether it ended in `\r\n`.
    crlf: Vec<bool>,
    /// The line end of lines past the recorded ones: CRLF when most lines used it.
    crlf_by_default: bool,
    /// Whether raw control characters were stood in for while parsing.
    shielded: bool,
}

/// Where the stand-ins for raw control characters start: U+F0000 plus the character's code.
const STAND_IN: u32 = 0xF0000;

/// Control characters `hcl::edit` would not print back raw: all but tab, newline and return.
fn shielded_control(c: char) -> bool {
    c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// The text with each such control character stood in for, when it has some and none of the
/// stand-ins already.
fn shield(text: &str) -> Option<String> {
    let stand_ins = STAND_IN..STAND_IN + 0x80;
    let needed = text.chars().any(shielded_control);
    let clash = text.chars().any(|c| stand_ins.contains(&u32::from(c)));
    (needed && !clash).then(|| {
        text.chars()
            .map(|c| match shielded_control(c) {
                true => char::from_u32(STAND_IN + u32::from(c)).unwrap_or(c),
                false => c,
            })
            .collect()
    })
}

/// The text with each stand-in put back.
fn unshield(text: &str) -> String {
    text.chars()
        .map(|c| match u32::from(c).checked_sub(STAND_IN) {
            Some(code) if code < 0x80 => char::from_u32(code).unwrap_or(c),
            _ => c,
        })
        .collect()
}

impl HclFile {
    /// Parses `text`; spans in the body are offsets into the text with `\r\n` turned into `\n`.
    pub fn parse(text: &str) -> Result<HclFile, hcl::edit::parser::Error> {
        let crlf: Vec<bool> = text
            .match_indices('\n')
            .map(|(at, _)| at > 0 && text.as_bytes()[at - 1] == b'\r')
            .collect();
        let crlf_lines = crlf.iter().filter(|&&c| c).count();
        let crlf_by_default = crlf_lines * 2 > crlf.len();
        let shielded = shield(text);
        let text = shielded.as_deref().unwrap_or(text);
        let body = hcl::edit::parser::parse_body(&text.replace("\r\n", "\n"))?;
        Ok(HclFile {
            body,
            crlf,
            crlf_by_default,
            shielded: shielded.is_some(),
        })
    }

    /// The parsed body.
    pub fn body(&self) -> &Body {
        &self.body
    }

    /// The parsed body, to edit before printing.
    pub fn body_mut(&mut self) -> &mut Body {
        &mut self.body
    }

    /// The body printed with each line's original line end and raw control character
    /// restored.
    pub fn print(&self) -> String {
        let printed = self.body.to_string();
        let printed = if self.shielded {
            unshield(&printed)
        } else {
            printed
        };
        let mut out = String::with_capacity(printed.len() + self.crlf.len());
        for (number, line) in printed.split_inclusive('\n').enumerate() {
            let crlf = self
                .crlf
                .get(number)
                .copied()
                .unwrap_or(self.crlf_by_default);
            match line.strip_suffix('\n') {
                Some(content) if crlf => {
                    out.push_str(content);
                    out.push_str("\r\n");
                }
                _ => out.push_str(line),
            }
        }
        out
    }
}

/// Parses `text` and prints it back; equal to `text` byte for byte for any valid file, but
/// for an indented heredoc (`<<-`) with lines less indented than its body, which `hcl::edit`
/// prints as a plain heredoc, a raw tab inside a quoted string, which it prints as `\t`, a
/// carriage return that ends no line, which it drops, and extra spaces before a unary minus in
/// a subtraction, which it collapses (found by the `hcl_edit` fuzz target; the edit tools,
/// which splice the original text, are not affected).
pub fn round_trip(text: &str) -> Result<String, hcl::edit::parser::Error> {
    HclFile::parse(text).map(|source| source.print())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_lf_and_mixed_files_round_trip() {
        for text in [
            "a = 1\r\nb = {\r\n  c = \"x\" # note\r\n}\r\n",
            "a = 1\nb = 2\n",
            "a = 1\r\nb = 2\nc = 3\r\n",
            "a = 1",
            "x = <<EOT\r\nline\r\nEOT\r\n",
        ] {
            assert_eq!(round_trip(text).expect("parses"), text);
        }
    }

    #[test]
    fn raw_control_characters_in_strings_and_labels_round_trip() {
        // Found by the hcl_edit fuzz target: hcl::edit printed the NUL as `\u0000`.
        for text in [
            "resource \"aws_sns_topic_subscription\" \"a\u{0}\u{0}b\" {\n  protocol = \"sqs\"\n}\n",
            "locals {\n  bell = \"x\u{7}y\"\n}\r\n",
            "a = \"\u{1b}[31m\"\n",
        ] {
            assert_eq!(round_trip(text).expect("parses"), text);
        }
    }

    #[test]
    fn added_lines_take_the_usual_line_end() {
        let mut source = HclFile::parse("a = 1\r\n").expect("parses");
        source.body_mut().push(hcl::edit::structure::Attribute::new(
            hcl::edit::Ident::new("b"),
            hcl::edit::expr::Expression::from(2),
        ));
        assert_eq!(source.print(), "a = 1\r\nb = 2\r\n");
    }
}
