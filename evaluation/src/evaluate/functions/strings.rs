//! String functions.

use super::{Value, list_arg, regexes, string_arg, string_list, text};

/// `upper(string)`: the string in upper case.
pub(super) fn upper(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(string_arg(args, 0)?.to_uppercase()))
}

/// `lower(string)`: the string in lower case.
pub(super) fn lower(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(string_arg(args, 0)?.to_lowercase()))
}

/// `title(string)`: the first letter of each word in upper case, a word starting after a
/// separator (see [`separates`]).
pub(super) fn title(args: &[Value]) -> Result<Value, String> {
    let mut titled = String::new();
    let mut after_separator = true;
    for c in string_arg(args, 0)?.chars() {
        if after_separator {
            titled.extend(c.to_uppercase());
        } else {
            titled.push(c);
        }
        after_separator = separates(c);
    }
    Ok(Value::from(titled))
}

/// Whether `c` separates words for `title`: an ASCII character other than a letter, digit
/// or underscore, or white space.
fn separates(c: char) -> bool {
    if c.is_ascii() {
        !(c.is_ascii_alphanumeric() || c == '_')
    } else {
        c.is_whitespace()
    }
}

/// `trimspace(string)`: the string without leading and trailing white space.
pub(super) fn trimspace(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(string_arg(args, 0)?.trim()))
}

/// `trim(string, cutset)`: the string without the leading and trailing characters in `cutset`.
pub(super) fn trim(args: &[Value]) -> Result<Value, String> {
    let cutset = string_arg(args, 1)?;
    let trimmed = string_arg(args, 0)?
        .trim_matches(|c| cutset.contains(c))
        .to_owned();
    Ok(Value::from(trimmed))
}

/// `trimprefix(string, prefix)`: the string without `prefix` at its start, once.
pub(super) fn trimprefix(args: &[Value]) -> Result<Value, String> {
    let (string, prefix) = (string_arg(args, 0)?, string_arg(args, 1)?);
    let trimmed = string.strip_prefix(prefix.as_str()).unwrap_or(&string);
    Ok(Value::from(trimmed))
}

/// `trimsuffix(string, suffix)`: the string without `suffix` at its end, once.
pub(super) fn trimsuffix(args: &[Value]) -> Result<Value, String> {
    let (string, suffix) = (string_arg(args, 0)?, string_arg(args, 1)?);
    let trimmed = string.strip_suffix(suffix.as_str()).unwrap_or(&string);
    Ok(Value::from(trimmed))
}

/// `startswith(string, prefix)`.
pub(super) fn startswith(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(
        string_arg(args, 0)?.starts_with(&string_arg(args, 1)?),
    ))
}

/// `endswith(string, suffix)`.
pub(super) fn endswith(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(
        string_arg(args, 0)?.ends_with(&string_arg(args, 1)?),
    ))
}

/// Whether `c` joins the character before it in one user-perceived character: a combining
/// mark, a variation selector, an emoji modifier or a zero-width joiner.
fn extends(c: char) -> bool {
    matches!(c,
        '\u{300}'..='\u{36f}'
        | '\u{1ab0}'..='\u{1aff}'
        | '\u{1dc0}'..='\u{1dff}'
        | '\u{200d}'
        | '\u{20d0}'..='\u{20ff}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{fe20}'..='\u{fe2f}'
        | '\u{1f3fb}'..='\u{1f3ff}'
        | '\u{e0100}'..='\u{e01ef}')
}

/// The user-perceived characters of `text`, as Terraform counts them, approximated: a base
/// character with the marks, selectors and modifiers after it, and characters joined by a
/// zero-width joiner.
pub(super) fn graphemes(text: &str) -> Vec<&str> {
    let mut clusters: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut joined = false;
    for (at, c) in text.char_indices() {
        if at > 0 && !extends(c) && !joined {
            clusters.push(&text[start..at]);
            start = at;
        }
        joined = c == '\u{200d}';
    }
    if start < text.len() {
        clusters.push(&text[start..]);
    }
    clusters
}

/// `strrev(string)`: the string's characters in reverse order.
pub(super) fn strrev(args: &[Value]) -> Result<Value, String> {
    let string = string_arg(args, 0)?;
    Ok(Value::from(
        graphemes(&string).into_iter().rev().collect::<String>(),
    ))
}

/// `substr(string, offset, length)`: `length` characters from `offset`; a negative offset
/// counts from the end, a negative length takes the rest.
pub(super) fn substr(args: &[Value]) -> Result<Value, String> {
    let string = string_arg(args, 0)?;
    let chars = graphemes(&string);
    let (offset, length) = (super::integer_arg(args, 1)?, super::integer_arg(args, 2)?);
    let count = chars.len() as i64;
    let start = if offset < 0 { count + offset } else { offset }.max(0);
    if start > count {
        return Ok(Value::from(""));
    }
    let end = if length < 0 {
        count
    } else {
        (start + length).min(count)
    };
    let taken: String = chars[start as usize..end as usize].concat();
    Ok(Value::from(taken))
}

/// `split(separator, string)`: the parts of the string between the separators.
pub(super) fn split(args: &[Value]) -> Result<Value, String> {
    let (separator, string) = (string_arg(args, 0)?, string_arg(args, 1)?);
    Ok(string_list(
        string.split(separator.as_str()).map(str::to_owned),
    ))
}

/// `join(separator, list...)`: the elements of the lists, in order, between separators.
pub(super) fn join(args: &[Value]) -> Result<Value, String> {
    let separator = string_arg(args, 0)?;
    let mut parts = Vec::new();
    for index in 1..args.len() {
        for item in list_arg(args, index)? {
            parts.push(text(item).ok_or_else(|| {
                format!(
                    "the elements to join must be strings, got {}",
                    super::kind(item)
                )
            })?);
        }
    }
    Ok(Value::from(parts.join(&separator)))
}

/// `replace(string, substring, replacement)`: every occurrence replaced; a substring in
/// slashes is a regular expression, whose replacement may refer to its groups (`$1`).
pub(super) fn replace(args: &[Value]) -> Result<Value, String> {
    let (string, substring) = (string_arg(args, 0)?, string_arg(args, 1)?);
    let replacement = string_arg(args, 2)?;
    let pattern = substring
        .strip_prefix('/')
        .and_then(|rest| rest.strip_suffix('/'));
    let replaced = match pattern {
        Some(pattern) => regexes::compile(pattern)?
            .replace_all(&string, replacement.as_str())
            .into_owned(),
        None => string.replace(&substring, &replacement),
    };
    Ok(Value::from(replaced))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_text, check_unknown, fails};

    #[test]
    fn upper_lower_and_title() {
        // Documentation: upper("hello") is "HELLO", upper("алло!") is "АЛЛО!".
        check_text(r#"upper("hello")"#, "HELLO");
        check_text(r#"upper("алло!")"#, "АЛЛО!");
        check_text(r#"lower("HELLO")"#, "hello");
        check_text(r#"lower("АЛЛО!")"#, "алло!");
        check_text(r#"title("hello world")"#, "Hello World");
        check_text(r#"title("web-server_a b")"#, "Web-Server_a B");
        check_text(r#"title("«élan» été")"#, "«élan» Été");
        check_text("upper(1)", "1");
        check_unknown("title(u)");
    }

    #[test]
    fn trimming() {
        // Documentation: trimspace("  hello\n\n") is "hello", trim("?!hello?!", "!?") is
        // "hello", trimprefix("helloworld", "hello") is "world", trimsuffix("helloworld",
        // "world") is "hello".
        check_text(r#"trimspace("  hello\n\n")"#, "hello");
        check_text(r#"trim("?!hello?!", "!?")"#, "hello");
        check_text(r#"trim("foobar", "far")"#, "oob");
        check_text(r#"trimprefix("helloworld", "hello")"#, "world");
        check_text(r#"trimprefix("helloworld", "cat")"#, "helloworld");
        check_text(r#"trimsuffix("helloworld", "world")"#, "hello");
        check_text(r#"trimprefix("aaab", "a")"#, "aab");
        check_unknown(r#"trimsuffix(u, "x")"#);
    }

    #[test]
    fn startswith_and_endswith() {
        // Documentation: startswith("hello world", "hello") is true, endswith("hello world",
        // "world") is true.
        check(r#"startswith("hello world", "hello")"#, "true");
        check(r#"startswith("hello world", "world")"#, "false");
        check(r#"endswith("hello world", "world")"#, "true");
        check(r#"endswith("hello world", "hello")"#, "false");
        check_unknown(r#"endswith(u, "x")"#);
    }

    #[test]
    fn strrev_and_substr() {
        // Documentation: strrev("hello") is "olleh"; substr("hello world", 1, 4) is "ello",
        // substr("🤔🤷", 0, 1) is "🤔", substr("hello world", -5, -1) is "world".
        check_text(r#"strrev("hello")"#, "olleh");
        check_text(r#"strrev("a ☃")"#, "☃ a");
        check_text(r#"strrev("e\u0301x")"#, "xe\u{301}");
        check_text(r#"substr("hello world", 1, 4)"#, "ello");
        check_text(r#"substr("🤔🤷", 0, 1)"#, "🤔");
        check_text(r#"substr("hello world", -5, -1)"#, "world");
        check_text(r#"substr("hello", 3, 10)"#, "lo");
        check_text(r#"substr("hello", 9, 1)"#, "");
        check_text(r#"substr("👾🕹️x", 1, 1)"#, "🕹️");
        check_unknown("substr(u, 0, 1)");
    }

    #[test]
    fn split_and_join() {
        // Documentation: split(",", "foo,bar,baz") is ["foo", "bar", "baz"], split(",",
        // "foo") is ["foo"], split(",", "") is [""]; join("-", ["foo", "bar", "baz"]) is
        // "foo-bar-baz", join(", ", ["foo"]) is "foo".
        check(r#"split(",", "foo,bar,baz")"#, r#"["foo", "bar", "baz"]"#);
        check(r#"split(",", "foo")"#, r#"["foo"]"#);
        check(r#"split(",", "")"#, r#"[""]"#);
        check_text(r#"join("-", ["foo", "bar", "baz"])"#, "foo-bar-baz");
        check_text(r#"join(", ", ["foo"])"#, "foo");
        check_text(r#"join(",", ["a"], [1, true])"#, "a,1,true");
        fails(r#"join(",", ["a", null])"#, "must be strings");
        fails(r#"join(",", "a")"#, "argument 2 must be a list");
        check_unknown(r#"split(",", u)"#);
    }

    #[test]
    fn replace_plain_and_regex() {
        // Documentation: replace("1 + 2 + 3", "+", "-") is "1 - 2 - 3",
        // replace("hello world", "/w.*d/", "everybody") is "hello everybody".
        check_text(r#"replace("1 + 2 + 3", "+", "-")"#, "1 - 2 - 3");
        check_text(
            r#"replace("hello world", "/w.*d/", "everybody")"#,
            "hello everybody",
        );
        check_text(r#"replace("a.b.c", ".", "-")"#, "a-b-c");
        check_text(
            r#"replace("key=value", "/(\\w+)=(\\w+)/", "$2=$1")"#,
            "value=key",
        );
        check_text(r#"replace("a/b", "/", "-")"#, "a-b");
        fails(r#"replace("a", "/(/", "")"#, "regular expression");
        check_unknown(r#"replace(u, ".", "-")"#);
    }
}
