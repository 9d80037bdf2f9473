//! Collection functions: `length`, `merge`, `concat`, `flatten`, the set functions, ...

use std::collections::BTreeMap;

use super::convert::{into_set, to_bool};
use super::{Builtin, Call, EvalError, Value};

/// The collection functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("alltrue", 1, alltrue),
    Builtin::fixed("anytrue", 1, anytrue),
    Builtin::fixed("chunklist", 2, chunklist).shallow(),
    Builtin::between("coalesce", 1, None, coalesce),
    Builtin::between("coalescelist", 1, None, coalescelist).shallow(),
    Builtin::fixed("compact", 1, compact),
    Builtin::between("concat", 0, None, concat).shallow(),
    Builtin::fixed("contains", 2, contains),
    Builtin::fixed("distinct", 1, distinct),
    Builtin::fixed("element", 2, element).shallow(),
    Builtin::fixed("flatten", 1, flatten).shallow(),
    Builtin::fixed("index", 2, index),
    Builtin::fixed("keys", 1, keys).shallow(),
    Builtin::fixed("length", 1, length).shallow(),
    Builtin::between("lookup", 2, Some(3), lookup).shallow(),
    Builtin::fixed("matchkeys", 3, matchkeys),
    Builtin::between("merge", 0, None, merge).shallow(),
    Builtin::fixed("one", 1, one).shallow(),
    Builtin::between("range", 1, Some(3), range),
    Builtin::fixed("reverse", 1, reverse).shallow(),
    Builtin::between("setintersection", 1, None, setintersection),
    Builtin::between("setproduct", 1, None, setproduct),
    Builtin::between("setsubtract", 2, Some(2), setsubtract),
    Builtin::between("setunion", 1, None, setunion),
    Builtin::fixed("slice", 3, slice).shallow(),
    Builtin::fixed("sort", 1, sort),
    Builtin::fixed("transpose", 1, transpose),
    Builtin::fixed("values", 1, values).shallow(),
    Builtin::fixed("zipmap", 2, zipmap).shallow(),
];

/// Terraform refuses to build a `range` longer than this.
const RANGE_LIMIT: usize = 1024;

fn length(call: &Call) -> Result<Value, EvalError> {
    let count = match call.arg(0)? {
        Value::String(text) => text.chars().count(),
        Value::List(items) | Value::Set(items) => items.len(),
        Value::Object(map) => map.len(),
        other => {
            return Err(call.error(format!("cannot take the length of a {}", other.type_name())));
        }
    };
    Ok(Value::Number(count as f64))
}

fn merge(call: &Call) -> Result<Value, EvalError> {
    let mut merged = BTreeMap::new();
    for (index, arg) in call.args.iter().enumerate() {
        if *arg != Value::Null {
            merged.extend(call.object(index)?.clone());
        }
    }
    Ok(Value::Object(merged))
}

fn lookup(call: &Call) -> Result<Value, EvalError> {
    let key = call.string(1)?;
    match (call.object(0)?.get(&key), call.args.get(2)) {
        (Some(found), _) => Ok(found.clone()),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) => Err(call.error(format!(
            "the map has no key \"{key}\" and no default was given"
        ))),
    }
}

/// The elements of the first list whose counterparts in the second list (by index) are in
/// the search set, in order.
fn matchkeys(call: &Call) -> Result<Value, EvalError> {
    let (values, keys, search) = (call.list(0)?, call.list(1)?, call.list(2)?);
    if values.len() != keys.len() {
        return Err(call.error("length of keys and values should be equal"));
    }
    let wanted = |key: &Value| search.iter().any(|item| loosely_equal(key, item));
    let matched = values.iter().zip(keys).filter(|(_, key)| wanted(key));
    Ok(Value::List(
        matched.map(|(value, _)| value.clone()).collect(),
    ))
}

/// Equality after Terraform's unification of a string with a number or bool: both as strings.
fn loosely_equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::String(_), Value::Number(_) | Value::Bool(_))
        | (Value::Number(_) | Value::Bool(_), Value::String(_)) => {
            left.to_text() == right.to_text()
        }
        _ => left == right,
    }
}

fn concat(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::List(call.lists_from(0)?.concat()))
}

fn element(call: &Call) -> Result<Value, EvalError> {
    let items = call.list(0)?;
    let index = call.integer(1)?;
    if items.is_empty() {
        return Err(call.error("cannot use element with an empty list"));
    }
    let position =
        usize::try_from(index).map_err(|_| call.error("the index must not be negative"))?;
    Ok(items[position % items.len()].clone())
}

fn keys(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::List(
        call.object(0)?
            .keys()
            .map(|key| Value::String(key.clone()))
            .collect(),
    ))
}

fn values(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::List(call.object(0)?.values().cloned().collect()))
}

fn coalesce(call: &Call) -> Result<Value, EvalError> {
    call.args
        .iter()
        .find(|arg| !matches!(arg, Value::Null) && **arg != Value::String(String::new()))
        .cloned()
        .ok_or_else(|| call.error("no non-null, non-empty-string arguments"))
}

/// `coalescelist`: a null argument (an `optional()` list attribute left out) is skipped, as
/// Terraform skips a null list.
fn coalescelist(call: &Call) -> Result<Value, EvalError> {
    let lists = (0..call.args.len())
        .filter(|&index| call.args[index] != Value::Null)
        .map(|index| call.list(index))
        .collect::<Result<Vec<_>, _>>()?;
    let first = lists.into_iter().find(|items| !items.is_empty());
    first
        .map(|items| Value::List(items.to_vec()))
        .ok_or_else(|| call.error("no non-empty list arguments"))
}

/// `flatten`: an unknown element might be a list, so it makes the result unknown; unknowns
/// inside objects pass through.
fn flatten(call: &Call) -> Result<Value, EvalError> {
    fn flatten_into(items: &[Value], out: &mut Vec<Value>) -> bool {
        for item in items {
            match item.elements() {
                Some(inner) if !flatten_into(inner, out) => return false,
                Some(_) => {}
                None if *item == Value::Unknown => return false,
                None => out.push(item.clone()),
            }
        }
        true
    }
    let mut out = Vec::new();
    Ok(match flatten_into(call.list(0)?, &mut out) {
        true => Value::List(out),
        false => Value::Unknown,
    })
}

fn distinct(call: &Call) -> Result<Value, EvalError> {
    let mut seen: Vec<Value> = Vec::new();
    for item in call.list(0)? {
        if !seen.contains(item) {
            seen.push(item.clone());
        }
    }
    Ok(Value::List(seen))
}

fn zipmap(call: &Call) -> Result<Value, EvalError> {
    let (keys, values) = (call.list(0)?, call.list(1)?);
    if keys.len() != values.len() {
        return Err(call.error(format!("{} keys but {} values", keys.len(), values.len())));
    }
    let keys = keys.iter().map(|key| {
        key.to_text()
            .ok_or_else(|| call.error("keys must be strings"))
    });
    keys.zip(values)
        .map(|(key, value)| Ok((key?, value.clone())))
        .collect::<Result<_, _>>()
        .map(Value::Object)
}

fn range(call: &Call) -> Result<Value, EvalError> {
    let numbers = call.numbers_from(0)?;
    let (start, limit, step) = match numbers[..] {
        [limit] => (0.0, limit, 1.0),
        [start, limit] => (start, limit, if start <= limit { 1.0 } else { -1.0 }),
        [start, limit, step] => (start, limit, step),
        _ => return Err(call.error("takes one to three numbers")),
    };
    if step == 0.0 || (step > 0.0) != (start <= limit) && start != limit {
        return Err(call.error("the step must move from the start towards the limit"));
    }
    let mut out = Vec::new();
    let mut current = start;
    while (step > 0.0 && current < limit) || (step < 0.0 && current > limit) {
        if out.len() == RANGE_LIMIT {
            return Err(call.error(format!("more than {RANGE_LIMIT} elements")));
        }
        out.push(Value::Number(current));
        current += step;
    }
    Ok(Value::List(out))
}

fn contains(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Bool(call.list(0)?.contains(call.arg(1)?)))
}

fn index(call: &Call) -> Result<Value, EvalError> {
    let target = call.arg(1)?;
    let position = call.list(0)?.iter().position(|item| item == target);
    position
        .map(|at| Value::Number(at as f64))
        .ok_or_else(|| call.error("the value is not in the list"))
}

fn slice(call: &Call) -> Result<Value, EvalError> {
    let items = call.list(0)?;
    let (start, end) = (call.integer(1)?, call.integer(2)?);
    let bounds = usize::try_from(start).ok().zip(usize::try_from(end).ok());
    match bounds {
        Some((start, end)) if start <= end && end <= items.len() => {
            Ok(Value::List(items[start..end].to_vec()))
        }
        _ => Err(call.error(format!(
            "invalid range {start}..{end} for a list of {} elements",
            items.len()
        ))),
    }
}

fn reverse(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::List(call.list(0)?.iter().rev().cloned().collect()))
}

fn sort(call: &Call) -> Result<Value, EvalError> {
    let mut texts = strings_of(call, call.list(0)?)?;
    texts.sort();
    Ok(Value::from(texts))
}

fn compact(call: &Call) -> Result<Value, EvalError> {
    let items = call
        .list(0)?
        .iter()
        .filter(|item| !matches!(item, Value::Null));
    let texts = strings_of(call, &items.cloned().collect::<Vec<_>>())?;
    Ok(Value::from(
        texts
            .into_iter()
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>(),
    ))
}

fn one(call: &Call) -> Result<Value, EvalError> {
    match call.list(0)? {
        [] => Ok(Value::Null),
        [only] => Ok(only.clone()),
        more => Err(call.error(format!(
            "must have zero or one elements, not {}",
            more.len()
        ))),
    }
}

fn chunklist(call: &Call) -> Result<Value, EvalError> {
    let items = call.list(0)?;
    let size = usize::try_from(call.integer(1)?)
        .map_err(|_| call.error("the chunk size must not be negative"))?;
    if items.is_empty() {
        return Ok(Value::List(Vec::new()));
    }
    if size == 0 {
        return Ok(Value::List(vec![Value::List(items.to_vec())]));
    }
    Ok(Value::List(
        items
            .chunks(size)
            .map(|chunk| Value::List(chunk.to_vec()))
            .collect(),
    ))
}

fn setunion(call: &Call) -> Result<Value, EvalError> {
    Ok(into_set(call.lists_from(0)?.concat()))
}

fn setintersection(call: &Call) -> Result<Value, EvalError> {
    let lists = call.lists_from(0)?;
    let (first, rest) = lists
        .split_first()
        .ok_or_else(|| call.error("needs at least one set"))?;
    let common = first
        .iter()
        .filter(|item| rest.iter().all(|list| list.contains(item)));
    Ok(into_set(common.cloned().collect()))
}

fn setsubtract(call: &Call) -> Result<Value, EvalError> {
    let (from, remove) = (call.list(0)?, call.list(1)?);
    Ok(into_set(
        from.iter()
            .filter(|item| !remove.contains(item))
            .cloned()
            .collect(),
    ))
}

/// `setproduct`: a list, in the order of its arguments, when they are all lists or tuples;
/// a set as soon as one of them is a set.
fn setproduct(call: &Call) -> Result<Value, EvalError> {
    let mut product = vec![Vec::new()];
    for list in call.lists_from(0)? {
        product = product
            .iter()
            .flat_map(|prefix| {
                list.iter()
                    .map(move |item| [prefix.clone(), vec![item.clone()]].concat())
            })
            .collect();
    }
    let product = product.into_iter().map(Value::List).collect();
    Ok(
        if call.args.iter().any(|arg| matches!(arg, Value::Set(_))) {
            into_set(product)
        } else {
            Value::List(product)
        },
    )
}

fn transpose(call: &Call) -> Result<Value, EvalError> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (key, value) in call.object(0)? {
        let Some(items) = value.elements() else {
            return Err(call.error("every value must be a list of strings"));
        };
        for item in strings_of(call, items)? {
            out.entry(item)
                .or_default()
                .push(Value::String(key.clone()));
        }
    }
    Ok(Value::Object(
        out.into_iter()
            .map(|(key, keys)| (key, Value::List(keys)))
            .collect(),
    ))
}

fn alltrue(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Bool(bools_of(call)?.into_iter().all(|flag| flag)))
}

fn anytrue(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Bool(bools_of(call)?.into_iter().any(|flag| flag)))
}

/// The elements of `items` as strings; numbers and booleans convert, anything else fails.
pub(super) fn strings_of(call: &Call, items: &[Value]) -> Result<Vec<String>, EvalError> {
    items
        .iter()
        .map(|item| {
            item.to_text().ok_or_else(|| {
                call.error(format!(
                    "elements must be strings, not {}",
                    item.type_name()
                ))
            })
        })
        .collect()
}

fn bools_of(call: &Call) -> Result<Vec<bool>, EvalError> {
    let items = call.list(0)?.iter();
    items
        .map(|item| to_bool(item).ok_or_else(|| call.error("elements must be booleans")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{EvalScope, evaluate_str};
    use super::*;

    fn eval(source: &str) -> Value {
        evaluate_str(source, &EvalScope::new(".")).expect("evaluates")
    }

    fn set(items: &[&str]) -> Value {
        Value::Set(items.iter().map(|&item| item.into()).collect())
    }

    /// Terraform's documentation of `setunion`: "The given arguments are converted to sets,
    /// so the result is also a set"; its elements in Terraform's order, each once.
    #[test]
    fn the_set_functions_give_sets() {
        assert_eq!(
            eval("setunion([\"b\", \"a\"], [\"c\", \"a\"])"),
            set(&["a", "b", "c"])
        );
        assert_eq!(
            eval("setintersection([\"a\", \"b\"], [\"b\", \"c\"], [\"b\", \"d\"])"),
            set(&["b"])
        );
        assert_eq!(
            eval("setsubtract([\"a\", \"b\", \"c\"], [\"a\", \"c\"])"),
            set(&["b"])
        );
        assert_eq!(
            eval("flatten([toset([\"b\", \"a\"]), [\"c\"]])"),
            eval("[\"a\", \"b\", \"c\"]")
        );
    }

    /// Terraform's documentation of `setproduct`: "If all of the given arguments are lists
    /// then the result is a list, preserving the ordering of the given lists. Otherwise the
    /// result is a set."
    #[test]
    fn setproduct_gives_a_list_from_lists_and_a_set_otherwise() {
        assert_eq!(
            eval("setproduct([\"b\", \"a\"], [\"x\"])"),
            eval("[[\"b\", \"x\"], [\"a\", \"x\"]]")
        );
        assert_eq!(
            eval("setproduct(toset([\"b\", \"a\"]), [\"x\"])"),
            Value::Set(vec![eval("[\"a\", \"x\"]"), eval("[\"b\", \"x\"]")])
        );
    }
}
