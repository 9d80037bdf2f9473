//! `yamlencode`: YAML in block style as Terraform writes it, every string double-quoted.

use super::{Value, arg, encoding::quote, number_text};

/// `yamlencode(value)`: the value as a YAML document (map keys sorted).
pub(super) fn yamlencode(args: &[Value]) -> Result<Value, String> {
    let value = arg(args, 0);
    let document = if is_block(value) {
        block(value, 0)
    } else {
        format!("{}\n", scalar(value))
    };
    Ok(Value::from(document))
}

/// Whether `value` is written as indented lines: a non-empty list or map.
fn is_block(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        _ => false,
    }
}

/// A value written on one line: a scalar, or an empty list or map in flow style.
fn scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number_text(number),
        Value::String(text) => quote(text, false),
        Value::Array(_) => "[]".to_owned(),
        Value::Object(_) => "{}".to_owned(),
    }
}

/// The lines of a non-empty list or map, each indented by `indent` spaces.
fn block(value: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut lines = String::new();
    match value {
        Value::Array(items) => {
            for item in items {
                if is_block(item) {
                    let nested = block(item, indent + 2);
                    lines.push_str(&format!("{pad}- {}", &nested[indent + 2..]));
                } else {
                    lines.push_str(&format!("{pad}- {}\n", scalar(item)));
                }
            }
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by_key(|(key, _)| *key);
            for (key, item) in entries {
                let key = quote(key, false);
                match item {
                    Value::Object(_) if is_block(item) => {
                        lines.push_str(&format!("{pad}{key}:\n{}", block(item, indent + 2)));
                    }
                    Value::Array(_) if is_block(item) => {
                        lines.push_str(&format!("{pad}{key}:\n{}", block(item, indent)));
                    }
                    _ => lines.push_str(&format!("{pad}{key}: {}\n", scalar(item))),
                }
            }
        }
        _ => {}
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check_text, check_unknown};

    #[test]
    fn yamlencode_writes_block_style() {
        // Documentation examples of yamlencode.
        check_text(
            r#"yamlencode({"a" = "b", "c" = "d"})"#,
            "\"a\": \"b\"\n\"c\": \"d\"\n",
        );
        check_text(
            r#"yamlencode({"foo" = [1, 2, 3], "bar" = "baz"})"#,
            "\"bar\": \"baz\"\n\"foo\":\n- 1\n- 2\n- 3\n",
        );
        check_text(
            r#"yamlencode({"foo" = [1, {"a" = "b", "c" = "d"}, 3], "bar" = "baz"})"#,
            "\"bar\": \"baz\"\n\"foo\":\n- 1\n- \"a\": \"b\"\n  \"c\": \"d\"\n- 3\n",
        );
        check_text(
            r#"yamlencode({a = {b = [[1, 2]], c = {}}})"#,
            "\"a\":\n  \"b\":\n  - - 1\n    - 2\n  \"c\": {}\n",
        );
        check_text(r#"yamlencode("x")"#, "\"x\"\n");
        check_unknown("yamlencode([u])");
    }
}
