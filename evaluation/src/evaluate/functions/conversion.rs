//! Type conversion functions; null converts to null.

use super::{Value, text};
use super::{arg, boolean, list_arg, map_arg, mismatch, number, number_value, sets, sorted_map};

/// `sensitive(value)`, `nonsensitive(value)`: the value (the judges track no sensitivity).
pub(super) fn identity(args: &[Value]) -> Result<Value, String> {
    Ok(arg(args, 0).clone())
}

/// `tostring(value)`: a string, number or bool as a string.
pub(super) fn tostring(args: &[Value]) -> Result<Value, String> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        other => text(other)
            .map(Value::String)
            .ok_or_else(|| format!("cannot convert {} to a string", super::kind(other))),
    }
}

/// `tonumber(value)`: a number or numeric string as a number.
pub(super) fn tonumber(args: &[Value]) -> Result<Value, String> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        other => number_value(number(other).ok_or_else(|| mismatch(args, 0, "a number"))?),
    }
}

/// `tobool(value)`: a bool or the string "true" or "false" as a bool.
pub(super) fn tobool(args: &[Value]) -> Result<Value, String> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        other => boolean(other)
            .map(Value::Bool)
            .ok_or_else(|| mismatch(args, 0, "a bool")),
    }
}

/// `tolist(value)`: a list or set as a list of one element type.
pub(super) fn tolist(args: &[Value]) -> Result<Value, String> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        _ => Ok(Value::Array(sets::unify(list_arg(args, 0)?.to_vec()))),
    }
}

/// `toset(value)`: a list or set as a set of one element type.
pub(super) fn toset(args: &[Value]) -> Result<Value, String> {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        _ => Ok(sets::set_of(list_arg(args, 0)?.to_vec())),
    }
}

/// `tomap(value)`: an object or map as a map of one element type.
pub(super) fn tomap(args: &[Value]) -> Result<Value, String> {
    if matches!(arg(args, 0), Value::Null) {
        return Ok(Value::Null);
    }
    let map = map_arg(args, 0)?;
    let values = sets::unify(map.values().cloned().collect());
    Ok(sorted_map(map.keys().cloned().zip(values)))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_unknown, fails};

    #[test]
    fn tostring_tonumber_and_tobool() {
        // Documentation: tostring("hello"), tostring(1) is "1", tostring(true) is "true",
        // tostring(null) is null, tostring([]) an error; tonumber(1), tonumber("1") is 1,
        // tonumber(null) null, tonumber("no") an error; tobool(true), tobool("true") is true,
        // tobool(null) null, tobool("no") and tobool(1) errors.
        check(r#"tostring("hello")"#, r#""hello""#);
        check("tostring(1)", r#""1""#);
        check("tostring(1.5)", r#""1.5""#);
        check("tostring(2.0)", r#""2""#);
        check("tostring(true)", r#""true""#);
        check("tostring(null)", "null");
        fails("tostring([])", "cannot convert a list to a string");
        check("tonumber(1)", "1");
        check(r#"tonumber("1")"#, "1");
        check(r#"tonumber("-0.25")"#, "-0.25");
        check("tonumber(null)", "null");
        fails(r#"tonumber("no")"#, "must be a number");
        check("tobool(true)", "true");
        check(r#"tobool("true")"#, "true");
        check("tobool(null)", "null");
        fails(r#"tobool("no")"#, "must be a bool");
        fails("tobool(1)", "must be a bool");
        check_unknown("tostring(u)");
    }

    #[test]
    fn tolist_toset_and_tomap() {
        // Documentation: tolist(["a", "b", 3]) is ["a", "b", "3"]; toset(["a", "b", 3]) is
        // the set of "a", "b" and "3", toset(["c", "b", "b"]) of "b" and "c";
        // tomap({"a" = "foo", "b" = true}) is {"a" = "foo", "b" = "true"}.
        check(r#"tolist(["a", "b", "c"])"#, r#"["a", "b", "c"]"#);
        check(r#"tolist(["a", "b", 3])"#, r#"["a", "b", "3"]"#);
        check(r#"toset(["a", "b", 3])"#, r#"["3", "a", "b"]"#);
        check(r#"toset(["c", "b", "b"])"#, r#"["b", "c"]"#);
        check("toset([3, 1, 2, 1])", "[1, 2, 3]");
        check(r#"tomap({"a" = 1, "b" = 2})"#, r#"{"a" = 1, "b" = 2}"#);
        check(
            r#"tomap({"a" = "foo", "b" = true})"#,
            r#"{"a" = "foo", "b" = "true"}"#,
        );
        check("tolist(null)", "null");
        fails(r#"tomap(["a"])"#, "must be a map");
        check("length(tolist([u, u]))", "2");
        check_unknown("toset([u])");
        check_unknown("tomap(u)");
    }

    #[test]
    fn sensitive_and_nonsensitive_return_their_argument() {
        check(r#"sensitive("secret")"#, r#""secret""#);
        check(r#"nonsensitive(["a"])"#, r#"["a"]"#);
    }
}
