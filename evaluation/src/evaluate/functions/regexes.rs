//! Regular expression functions (RE2's syntax, which the `regex` crate shares).

use super::{Value, sorted_map, string_arg};
use regex::{Captures, Regex};

/// `pattern` compiled, or an error naming it.
pub(super) fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|err| format!("invalid regular expression \"{pattern}\": {err}"))
}

/// `regex(pattern, string)`: the first match, shaped as [`shape`] says; an error without one.
pub(super) fn regex(args: &[Value]) -> Result<Value, String> {
    let (pattern, string) = matcher(args)?;
    let captures = pattern.captures(&string).ok_or_else(|| {
        format!(
            "pattern \"{}\" does not match \"{string}\"",
            pattern.as_str()
        )
    })?;
    Ok(shape(&pattern, &captures))
}

/// `regexall(pattern, string)`: every match, each shaped as [`shape`] says.
pub(super) fn regexall(args: &[Value]) -> Result<Value, String> {
    let (pattern, string) = matcher(args)?;
    let matches = pattern
        .captures_iter(&string)
        .map(|captures| shape(&pattern, &captures))
        .collect();
    Ok(Value::Array(matches))
}

/// The compiled pattern and the string of `regex` and `regexall`, after checking that the
/// pattern does not mix named and unnamed groups.
fn matcher(args: &[Value]) -> Result<(Regex, String), String> {
    let pattern = compile(&string_arg(args, 0)?)?;
    let names: Vec<Option<&str>> = pattern.capture_names().skip(1).collect();
    if names.iter().any(Option::is_some) && names.iter().any(Option::is_none) {
        return Err("a pattern cannot mix named and unnamed capture groups".to_owned());
    }
    Ok((pattern, string_arg(args, 1)?))
}

/// A match as Terraform returns it: the matched string without capture groups, a map by name
/// with named groups, else a list of the groups; a group that did not take part is null.
fn shape(pattern: &Regex, captures: &Captures) -> Value {
    let group = |index: usize| {
        captures
            .get(index)
            .map_or(Value::Null, |found| Value::from(found.as_str()))
    };
    let names: Vec<Option<&str>> = pattern.capture_names().collect();
    match names.get(1) {
        None => group(0),
        Some(Some(_)) => sorted_map(
            names
                .iter()
                .enumerate()
                .filter_map(|(index, name)| name.map(|name| (name.to_owned(), group(index)))),
        ),
        Some(None) => Value::Array((1..names.len()).map(group).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_text, check_unknown, fails};

    #[test]
    fn regex_shapes_its_match_by_the_groups() {
        // Documentation examples of regex.
        check_text(
            r#"regex("[a-z]+", "53453453.345345aaabbbccc23454")"#,
            "aaabbbccc",
        );
        check(
            r#"regex("(\\d\\d\\d\\d)-(\\d\\d)-(\\d\\d)", "2019-02-01")"#,
            r#"["2019", "02", "01"]"#,
        );
        check(
            r#"regex("^(?:(?P<scheme>[^:/?#]+):)?(?://(?P<authority>[^/?#]*))?", "https://terraform.io/docs/")"#,
            r#"{authority = "terraform.io", scheme = "https"}"#,
        );
        check(r#"regex("(a)|(b)", "b")"#, r#"[null, "b"]"#);
        fails(
            r#"regex("[a-z]+", "53453453.34534523454")"#,
            "does not match",
        );
        fails(r#"regex("(?P<x>a)(b)", "ab")"#, "cannot mix");
        fails(r#"regex("(", "ab")"#, "invalid regular expression");
        check_unknown(r#"regex("a", u)"#);
    }

    #[test]
    fn regexall_lists_every_match() {
        // Documentation examples of regexall.
        check(
            r#"regexall("[a-z]+", "1234abcd5678efgh9")"#,
            r#"["abcd", "efgh"]"#,
        );
        check(r#"length(regexall("[a-z]+", "123456789")) > 0"#, "false");
        check(r#"regexall("^[a-z]{2}-", "eu-west-1a")"#, r#"["eu-"]"#);
        check(
            r#"regexall("(\\d)(\\w)", "1a 2b")"#,
            r#"[["1", "a"], ["2", "b"]]"#,
        );
        check_unknown(r#"regexall(u, "a")"#);
    }
}
