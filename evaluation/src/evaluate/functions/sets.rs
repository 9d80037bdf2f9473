//! Sets: arrays without duplicates in Terraform's order, and the set functions.

use super::{Value, list_arg, text};
use std::cmp::Ordering;

/// The elements of a list converted to one type, as Terraform converts a list literal mixing
/// strings, numbers and bools: all to strings. Other elements are left as they are.
pub(super) fn unify(items: Vec<Value>) -> Vec<Value> {
    let primitive_kind = |item: &Value| match item {
        Value::String(_) => Some(0),
        Value::Number(_) => Some(1),
        Value::Bool(_) => Some(2),
        _ => None,
    };
    let mut kinds = items.iter().filter_map(primitive_kind);
    let first = kinds.next();
    if kinds.all(|kind| Some(kind) == first) {
        return items;
    }
    items
        .into_iter()
        .map(|item| text(&item).map_or(item, Value::String))
        .collect()
}

/// A set of `items`: unified, without duplicates and in Terraform's order (strings
/// lexically, numbers by value, false before true); elements of other types stay in the order
/// they first appear.
pub(super) fn set_of(items: Vec<Value>) -> Value {
    let mut set: Vec<Value> = Vec::new();
    for item in unify(items) {
        if !set.contains(&item) {
            set.push(item);
        }
    }
    set.sort_by(order);
    Value::Array(set)
}

/// Terraform's order of two set elements of a primitive type; others compare equal, which
/// keeps them in place in a stable sort.
fn order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::Number(a), Value::Number(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        _ => Ordering::Equal,
    }
}

/// `setunion(sets...)`: the elements of any of the sets.
pub(super) fn setunion(args: &[Value]) -> Result<Value, String> {
    let mut items = Vec::new();
    for index in 0..args.len() {
        items.extend_from_slice(list_arg(args, index)?);
    }
    Ok(set_of(items))
}

/// `setintersection(sets...)`: the elements of the first set that are in every other one.
pub(super) fn setintersection(args: &[Value]) -> Result<Value, String> {
    let others = (1..args.len())
        .map(|index| list_arg(args, index))
        .collect::<Result<Vec<_>, _>>()?;
    let common = list_arg(args, 0)?
        .iter()
        .filter(|item| others.iter().all(|other| other.contains(item)))
        .cloned()
        .collect();
    Ok(set_of(common))
}

/// `setsubtract(a, b)`: the elements of `a` that are not in `b`.
pub(super) fn setsubtract(args: &[Value]) -> Result<Value, String> {
    let removed = list_arg(args, 1)?;
    let kept = list_arg(args, 0)?
        .iter()
        .filter(|item| !removed.contains(item))
        .cloned()
        .collect();
    Ok(set_of(kept))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_unknown, fails};

    #[test]
    fn setunion_joins_sets_in_order() {
        // Documentation: setunion(["a", "b"], ["b", "c"], ["d"]) is the set of "a" to "d".
        check(
            r#"setunion(["a", "b"], ["b", "c"], ["d"])"#,
            r#"["a", "b", "c", "d"]"#,
        );
        check("setunion([3, 1], [2, 10])", "[1, 2, 3, 10]");
        check(r#"setunion(["b"], [1, true])"#, r#"["1", "b", "true"]"#);
        fails(r#"setunion(["a"], "b")"#, "argument 2 must be a list");
        check_unknown(r#"setunion(["a"], [u])"#);
    }

    #[test]
    fn setintersection_keeps_common_elements() {
        // Documentation: setintersection(["a", "b"], ["b", "c"], ["b", "d"]) is ["b"].
        check(
            r#"setintersection(["a", "b"], ["b", "c"], ["b", "d"])"#,
            r#"["b"]"#,
        );
        check(r#"setintersection(["b", "a"])"#, r#"["a", "b"]"#);
        check_unknown(r#"setintersection([u], ["a"])"#);
    }

    #[test]
    fn setsubtract_removes_elements() {
        // Documentation: setsubtract(["a", "b", "c"], ["a", "c"]) is ["b"].
        check(r#"setsubtract(["a", "b", "c"], ["a", "c"])"#, r#"["b"]"#);
        check(r#"setsubtract(["c", "b", "a"], [])"#, r#"["a", "b", "c"]"#);
        check_unknown(r#"setsubtract(["a"], u)"#);
    }
}
