//! DNS names compared as Route 53 compares them.
//!
//! Route 53 treats `www.example.com` and `www.example.com.` as the same name, stores letters
//! in lower case however they were given (escape codes included), and writes characters
//! other than letters, digits and `-` as a three-digit octal escape (`\052` for the `*` of a
//! wildcard record) in what it returns. The Terraform AWS provider keeps a record's name
//! lower-cased and without the dot, while its `id` keeps the name as the code gave it.

/// `name` in one form for comparison: without its trailing dot, octal escapes of printable
/// characters other than `.` decoded (`\052` → `*`), letters in lower case.
pub fn canonical_name(name: &str) -> String {
    let name = name.strip_suffix('.').unwrap_or(name);
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escaped = &rest[at..];
        match escaped_char(escaped) {
            Some(c) => {
                out.push(c);
                rest = &escaped[4..];
            }
            None => {
                out.push('\\');
                rest = &escaped[1..];
            }
        }
    }
    out.push_str(rest);
    out.to_ascii_lowercase()
}

/// The printable character (not `.`) of the octal escape `text` starts with (`\052`).
fn escaped_char(text: &str) -> Option<char> {
    let digits = text.get(1..4)?;
    if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    let code = u8::from_str_radix(digits, 8).ok()?;
    let c = char::from(code);
    (c.is_ascii_graphic() && c != '.').then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trailing_dot_is_optional() {
        assert_eq!(canonical_name("www.example.com."), "www.example.com");
        assert_eq!(canonical_name("www.example.com"), "www.example.com");
    }

    #[test]
    fn letters_compare_in_lower_case() {
        assert_eq!(
            canonical_name("_A1B2.WWW.Example.COM."),
            "_a1b2.www.example.com"
        );
    }

    #[test]
    fn the_wildcard_escape_is_an_asterisk() {
        assert_eq!(canonical_name("\\052.example.com."), "*.example.com");
        assert_eq!(canonical_name("*.example.com"), "*.example.com");
        // Letters given as escape codes are stored in lower case too (\101 is `A`).
        assert_eq!(canonical_name("\\101pi.example.com"), "api.example.com");
    }

    #[test]
    fn an_escaped_dot_and_a_lone_backslash_are_kept() {
        // \056 is a dot inside a label, not a label separator.
        assert_eq!(canonical_name("a\\056b.example.com"), "a\\056b.example.com");
        assert_eq!(canonical_name("a\\b.example.com"), "a\\b.example.com");
        assert_eq!(canonical_name("tail\\05"), "tail\\05");
    }
}
