//! Functions on lists, sets, maps and objects.

use super::{
    Value, arg, boolean, integer_arg, kind, list_arg, map_arg, sets, sorted_map, string_arg,
    string_list, text,
};

/// `length(value)`: the number of elements of a collection or characters of a string.
pub(super) fn length(args: &[Value]) -> Result<Value, String> {
    let count = match arg(args, 0) {
        Value::Array(items) => items.len(),
        Value::Object(map) => map.len(),
        Value::String(text) => super::strings::graphemes(text).len(),
        other => return Err(format!("cannot take the length of {}", kind(other))),
    };
    Ok(Value::from(count))
}

/// `element(list, index)`: the element at `index`, which wraps around the list's length (so
/// -1 is the last element).
pub(super) fn element(args: &[Value]) -> Result<Value, String> {
    let (items, index) = (list_arg(args, 0)?, integer_arg(args, 1)?);
    if items.is_empty() {
        return Err("cannot use element with an empty list".to_owned());
    }
    let wrapped = index.rem_euclid(items.len() as i64) as usize;
    Ok(items[wrapped].clone())
}

/// The lists given as arguments from `first` on.
fn lists(args: &[Value], first: usize) -> Result<Vec<&[Value]>, String> {
    (first..args.len())
        .map(|index| list_arg(args, index))
        .collect()
}

/// `concat(lists...)`: the lists' elements, in order.
pub(super) fn concat(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Array(lists(args, 0)?.concat()))
}

/// `flatten(list)`: the list with every nested list replaced by its elements, recursively.
pub(super) fn flatten(args: &[Value]) -> Result<Value, String> {
    let mut flat = Vec::new();
    flatten_into(list_arg(args, 0)?, &mut flat);
    Ok(Value::Array(flat))
}

/// Appends `items` to `flat`, nested lists by their elements.
fn flatten_into(items: &[Value], flat: &mut Vec<Value>) {
    for item in items {
        match item {
            Value::Array(nested) => flatten_into(nested, flat),
            other => flat.push(other.clone()),
        }
    }
}

/// `distinct(list)`: the list without repeated elements, first occurrences kept in order.
pub(super) fn distinct(args: &[Value]) -> Result<Value, String> {
    let mut kept: Vec<Value> = Vec::new();
    for item in list_arg(args, 0)? {
        if !kept.contains(item) {
            kept.push(item.clone());
        }
    }
    Ok(Value::Array(kept))
}

/// `compact(list)`: the list of strings without its null and empty elements.
pub(super) fn compact(args: &[Value]) -> Result<Value, String> {
    let mut kept = Vec::new();
    for item in list_arg(args, 0)? {
        match item {
            Value::Null => {}
            other => kept.push(text(other).ok_or("compact takes a list of strings")?),
        }
    }
    Ok(string_list(
        kept.into_iter().filter(|item| !item.is_empty()),
    ))
}

/// `coalesce(values...)`: the first argument neither null nor an empty string, after
/// converting mixed strings, numbers and bools all to strings.
pub(super) fn coalesce(args: &[Value]) -> Result<Value, String> {
    let primitive = |item: &Value| !matches!(item, Value::Array(_) | Value::Object(_));
    let given = args.iter().filter(|item| !matches!(item, Value::Null));
    if given.clone().any(primitive) && !given.clone().all(primitive) {
        return Err("all arguments must have the same type".to_owned());
    }
    sets::unify(args.to_vec())
        .into_iter()
        .find(|item| !matches!(item, Value::Null) && item.as_str() != Some(""))
        .ok_or_else(|| "no non-null, non-empty-string arguments".to_owned())
}

/// `coalescelist(lists...)`: the first non-empty list (null arguments are skipped).
pub(super) fn coalescelist(args: &[Value]) -> Result<Value, String> {
    for (index, item) in args.iter().enumerate() {
        match item {
            Value::Null => {}
            Value::Array(items) if items.is_empty() => {}
            Value::Array(_) => return Ok(item.clone()),
            _ => return Err(super::mismatch(args, index, "a list")),
        }
    }
    Err("no non-empty list arguments".to_owned())
}

/// `zipmap(keys, values)`: the map of each key to the value at the same position.
pub(super) fn zipmap(args: &[Value]) -> Result<Value, String> {
    let (keys, values) = (list_arg(args, 0)?, list_arg(args, 1)?);
    if keys.len() != values.len() {
        return Err(format!(
            "{} keys but {} values: the lists must have the same length",
            keys.len(),
            values.len()
        ));
    }
    let keys = keys
        .iter()
        .map(|key| text(key).ok_or("the keys must be strings"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(sorted_map(keys.into_iter().zip(values.iter().cloned())))
}

/// `slice(list, start, end)`: the elements from `start` up to, not including, `end`.
pub(super) fn slice(args: &[Value]) -> Result<Value, String> {
    let items = list_arg(args, 0)?;
    let (start, end) = (integer_arg(args, 1)?, integer_arg(args, 2)?);
    let in_range = |bound: i64| usize::try_from(bound).ok().filter(|&at| at <= items.len());
    match (in_range(start), in_range(end)) {
        (Some(start), Some(end)) if start <= end => Ok(Value::Array(items[start..end].to_vec())),
        _ => Err(format!(
            "cannot slice {start}..{end} of a list of {} elements",
            items.len()
        )),
    }
}

/// The argument at `index` as a map's entries, sorted by key.
fn sorted_entries(args: &[Value], index: usize) -> Result<Vec<(&String, &Value)>, String> {
    let mut entries: Vec<_> = map_arg(args, index)?.iter().collect();
    entries.sort_by_key(|(key, _)| *key);
    Ok(entries)
}

/// `keys(map)`: the map's keys in lexical order.
pub(super) fn keys(args: &[Value]) -> Result<Value, String> {
    let entries = sorted_entries(args, 0)?;
    Ok(string_list(entries.into_iter().map(|(key, _)| key.clone())))
}

/// `values(map)`: the map's values, in the order of their keys.
pub(super) fn values(args: &[Value]) -> Result<Value, String> {
    let entries = sorted_entries(args, 0)?;
    Ok(Value::Array(
        entries.into_iter().map(|(_, item)| item.clone()).collect(),
    ))
}

/// `lookup(map, key, default)`: the value at `key`, else `default`, else an error.
pub(super) fn lookup(args: &[Value]) -> Result<Value, String> {
    let (map, key) = (map_arg(args, 0)?, string_arg(args, 1)?);
    match (map.get(&key), args.get(2)) {
        (Some(found), _) => Ok(found.clone()),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) => Err(format!(
            "the map has no key \"{key}\" and no default is given"
        )),
    }
}

/// `merge(maps...)`: the maps' entries, a later map's value winning; null arguments skipped.
pub(super) fn merge(args: &[Value]) -> Result<Value, String> {
    let mut merged = Vec::new();
    for (index, item) in args.iter().enumerate() {
        if !matches!(item, Value::Null) {
            merged.extend(map_arg(args, index)?.clone());
        }
    }
    let mut last_wins = hcl::Map::new();
    for (key, item) in merged {
        last_wins.insert(key, item);
    }
    Ok(sorted_map(last_wins))
}

/// `contains(list, value)`: whether the list has an element equal to `value`.
pub(super) fn contains(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(list_arg(args, 0)?.contains(arg(args, 1))))
}

/// `index(list, value)`: the position of the first element equal to `value`.
pub(super) fn index(args: &[Value]) -> Result<Value, String> {
    list_arg(args, 0)?
        .iter()
        .position(|item| item == arg(args, 1))
        .map(Value::from)
        .ok_or_else(|| "the item is not in the list".to_owned())
}

/// `reverse(list)`: the elements in reverse order.
pub(super) fn reverse(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Array(
        list_arg(args, 0)?.iter().rev().cloned().collect(),
    ))
}

/// `one(list)`: null for an empty list, the element of a one-element list, else an error.
pub(super) fn one(args: &[Value]) -> Result<Value, String> {
    match list_arg(args, 0)? {
        [] => Ok(Value::Null),
        [only] => Ok(only.clone()),
        more => Err(format!(
            "the list must have no more than one element, it has {}",
            more.len()
        )),
    }
}

/// `setproduct(sets...)`: every combination of one element of each argument, as lists.
pub(super) fn setproduct(args: &[Value]) -> Result<Value, String> {
    let mut product: Vec<Vec<Value>> = vec![Vec::new()];
    for factor in lists(args, 0)? {
        product = product
            .iter()
            .flat_map(|prefix| {
                factor.iter().map(|item| {
                    let mut combination = prefix.clone();
                    combination.push(item.clone());
                    combination
                })
            })
            .collect();
    }
    Ok(Value::Array(
        product.into_iter().map(Value::Array).collect(),
    ))
}

/// `chunklist(list, size)`: the list cut into lists of `size` elements (the last one may be
/// shorter); size 0 gives the whole list as one chunk.
pub(super) fn chunklist(args: &[Value]) -> Result<Value, String> {
    let items = list_arg(args, 0)?;
    let size =
        usize::try_from(integer_arg(args, 1)?).map_err(|_| "the size must not be negative")?;
    if size == 0 {
        return Ok(Value::Array(vec![Value::Array(items.to_vec())]));
    }
    let chunks = items.chunks(size).map(|chunk| Value::Array(chunk.to_vec()));
    Ok(Value::Array(chunks.collect()))
}

/// `matchkeys(values, keys, searchset)`: the values whose key, at the same position, is in
/// `searchset`.
pub(super) fn matchkeys(args: &[Value]) -> Result<Value, String> {
    let (values, keys, wanted) = (list_arg(args, 0)?, list_arg(args, 1)?, list_arg(args, 2)?);
    if values.len() != keys.len() {
        return Err("the values and keys lists must have the same length".to_owned());
    }
    let matching = values
        .iter()
        .zip(keys)
        .filter(|(_, key)| wanted.contains(key))
        .map(|(item, _)| item.clone());
    Ok(Value::Array(matching.collect()))
}

/// `transpose(map)`: a map of lists of strings with keys and values swapped.
pub(super) fn transpose(args: &[Value]) -> Result<Value, String> {
    let mut swapped: hcl::Map<String, Vec<String>> = hcl::Map::new();
    for (key, items) in sorted_entries(args, 0)? {
        let Value::Array(items) = items else {
            return Err("transpose takes a map of lists of strings".to_owned());
        };
        for item in items {
            let item = text(item).ok_or("transpose takes a map of lists of strings")?;
            swapped.entry(item).or_default().push(key.clone());
        }
    }
    Ok(sorted_map(
        swapped
            .into_iter()
            .map(|(key, items)| (key, string_list(items))),
    ))
}

/// `sort(list)`: the elements, as strings, in lexical order.
pub(super) fn sort(args: &[Value]) -> Result<Value, String> {
    let mut sorted = list_arg(args, 0)?
        .iter()
        .map(|item| text(item).ok_or("sort takes a list of strings"))
        .collect::<Result<Vec<_>, _>>()?;
    sorted.sort();
    Ok(string_list(sorted))
}

/// The elements of the list argument as bools.
fn bools(args: &[Value]) -> Result<Vec<bool>, String> {
    list_arg(args, 0)?
        .iter()
        .map(|item| boolean(item).ok_or_else(|| "the list must hold bools".to_owned()))
        .collect()
}

/// `alltrue(list)`: whether every element is true (true for an empty list).
pub(super) fn alltrue(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(bools(args)?.into_iter().all(|flag| flag)))
}

/// `anytrue(list)`: whether some element is true (false for an empty list).
pub(super) fn anytrue(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(bools(args)?.into_iter().any(|flag| flag)))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_unknown, fails};

    #[test]
    fn length_counts_elements_and_characters() {
        // Documentation: length([]) is 0, length(["a", "b"]) is 2, length({"a" = "b"}) is 1,
        // length("hello") is 5, length("👾🕹️") is 2 (three code points, two characters).
        check("length([])", "0");
        check(r#"length(["a", "b"])"#, "2");
        check(r#"length({"a" = "b"})"#, "1");
        check(r#"length("hello")"#, "5");
        check(r#"length("алло")"#, "4");
        check(r#"length("👾🕹️")"#, "2");
        check("length([u, u])", "2");
        check_unknown("length(u)");
        fails("length(null)", "cannot take the length of null");
    }

    #[test]
    fn element_wraps_around() {
        // Documentation: element(["a", "b", "c"], 1) is "b", index 3 wraps to "a", index -1
        // is the last, "c".
        check(r#"element(["a", "b", "c"], 1)"#, r#""b""#);
        check(r#"element(["a", "b", "c"], 3)"#, r#""a""#);
        check(
            r#"element(["a", "b", "c"], length(["a", "b", "c"])-1)"#,
            r#""c""#,
        );
        check(r#"element(["a", u], 0)"#, r#""a""#);
        check_unknown(r#"element(["a"], u)"#);
        fails("element([], 0)", "empty list");
        check(r#"element(["a", "b", "c"], -1)"#, r#""c""#);
        check(r#"element(["a", "b", "c"], -4)"#, r#""c""#);
    }

    #[test]
    fn concat_and_flatten() {
        // Documentation: concat(["a", ""], ["b", "c"]) is ["a", "", "b", "c"];
        // flatten([["a", "b"], [], ["c"]]) and flatten([[["a", "b"], []], ["c"]]) are
        // ["a", "b", "c"].
        check(r#"concat(["a", ""], ["b", "c"])"#, r#"["a", "", "b", "c"]"#);
        check(r#"concat(["a"], [u])[0]"#, r#""a""#);
        check_unknown(r#"concat(["a"], u)"#);
        fails(r#"concat(["a"], "b")"#, "argument 2 must be a list");
        check(r#"flatten([["a", "b"], [], ["c"]])"#, r#"["a", "b", "c"]"#);
        check(
            r#"flatten([[["a", "b"], []], ["c"]])"#,
            r#"["a", "b", "c"]"#,
        );
        check_unknown(r#"flatten([["a"], [u]])"#);
    }

    #[test]
    fn distinct_and_compact() {
        // Documentation: distinct(["a", "b", "a", "c", "d", "b"]) is ["a", "b", "c", "d"];
        // compact(["a", "", "b", null, "c"]) is ["a", "b", "c"].
        check(
            r#"distinct(["a", "b", "a", "c", "d", "b"])"#,
            r#"["a", "b", "c", "d"]"#,
        );
        check(
            r#"compact(["a", "", "b", null, "c"])"#,
            r#"["a", "b", "c"]"#,
        );
        check_unknown(r#"compact(["a", u])"#);
    }

    #[test]
    fn coalesce_and_coalescelist() {
        // Documentation: coalesce("a", "b") is "a", coalesce("", "b") is "b", coalesce(1, 2)
        // is 1, coalesce(1, "hello") is "1", coalesce(true, "hello") is "true",
        // coalesce({}, "hello") is an error; coalescelist(["a", "b"], ["c", "d"]) is
        // ["a", "b"], coalescelist([], ["c", "d"]) is ["c", "d"].
        check(r#"coalesce("a", "b")"#, r#""a""#);
        check(r#"coalesce("", "b")"#, r#""b""#);
        check("coalesce(1, 2)", "1");
        check(r#"coalesce(1, "hello")"#, r#""1""#);
        check(r#"coalesce(true, "hello")"#, r#""true""#);
        fails(r#"coalesce({}, "hello")"#, "must have the same type");
        check(r#"coalesce(null, "x")"#, r#""x""#);
        fails(r#"coalesce(null, "")"#, "no non-null");
        check_unknown(r#"coalesce(u, "b")"#);
        check(r#"coalescelist(["a", "b"], ["c", "d"])"#, r#"["a", "b"]"#);
        check(r#"coalescelist([], ["c", "d"])"#, r#"["c", "d"]"#);
        fails("coalescelist([], [])", "no non-empty list");
    }

    #[test]
    fn zipmap_and_slice() {
        // Documentation: zipmap(["a", "b"], [1, 2]) is {"a" = 1, "b" = 2};
        // slice(["a", "b", "c", "d"], 1, 3) is ["b", "c"].
        check(r#"zipmap(["a", "b"], [1, 2])"#, "{a = 1, b = 2}");
        fails(r#"zipmap(["a"], [])"#, "same length");
        check_unknown(r#"zipmap(["a"], [u])"#);
        check(r#"slice(["a", "b", "c", "d"], 1, 3)"#, r#"["b", "c"]"#);
        check(r#"slice(["a", u], 0, 1)"#, r#"["a"]"#);
        fails(r#"slice(["a"], 0, 2)"#, "cannot slice 0..2");
    }

    #[test]
    fn keys_values_and_lookup() {
        // Documentation: keys({a=1, c=2, d=3}) is ["a", "c", "d"]; values({a=3, c=2, d=1})
        // is [3, 2, 1]; lookup({a="ay", b="bee"}, "a", "what?") is "ay", with "c" "what?".
        check("keys({d = 3, a = 1, c = 2})", r#"["a", "c", "d"]"#);
        check("values({d = 1, a = 3, c = 2})", "[3, 2, 1]");
        check(r#"lookup({a = "ay", b = "bee"}, "a", "what?")"#, r#""ay""#);
        check(
            r#"lookup({a = "ay", b = "bee"}, "c", "what?")"#,
            r#""what?""#,
        );
        fails(r#"lookup({a = "ay"}, "c")"#, "no key \"c\"");
        check("keys({a = u})", r#"["a"]"#);
        check_unknown(r#"lookup(u, "a", 1)"#);
    }

    #[test]
    fn merge_lets_the_last_map_win() {
        // Documentation: merge({a="b", c="d"}, {e="f", c="z"}) is {a="b", c="z", e="f"};
        // merge({a="b"}, {a=[1,2], c="z"}, {d=3}) is {a=[1,2], c="z", d=3}.
        check(
            r#"merge({a = "b", c = "d"}, {e = "f", c = "z"})"#,
            r#"{a = "b", c = "z", e = "f"}"#,
        );
        check(
            r#"merge({a = "b"}, {a = [1, 2], c = "z"}, {d = 3})"#,
            r#"{a = [1, 2], c = "z", d = 3}"#,
        );
        check(r#"merge(null, {a = 1})"#, "{a = 1}");
        check(r#"keys(merge({b = 1}, {a = u}))"#, r#"["a", "b"]"#);
        check_unknown(r#"merge({a = 1}, u)"#);
        fails(r#"merge({a = 1}, "b")"#, "argument 2 must be a map");
    }

    #[test]
    fn contains_index_reverse_and_one() {
        // Documentation: contains(["a", "b", "c"], "a") is true, "d" false; index(["a", "b",
        // "c"], "b") is 1, index(["one", "two", "two"], "two") is 1; reverse([1, 2, 3]) is
        // [3, 2, 1]; one([]) is null, one(["hello"]) is "hello", one(["hello", "goodbye"]) is
        // an error.
        check(r#"contains(["a", "b", "c"], "a")"#, "true");
        check(r#"contains(["a", "b", "c"], "d")"#, "false");
        check_unknown(r#"contains(["a", u], "a")"#);
        check(r#"index(["a", "b", "c"], "b")"#, "1");
        check(r#"index(["one", "two", "two"], "two")"#, "1");
        fails(r#"index(["a"], "z")"#, "not in the list");
        check("reverse([1, 2, 3])", "[3, 2, 1]");
        check("one([])", "null");
        check(r#"one(["hello"])"#, r#""hello""#);
        fails(r#"one(["hello", "goodbye"])"#, "no more than one element");
        check_unknown("one([u])");
    }

    #[test]
    fn setproduct_combines_every_element() {
        // Documentation: setproduct(["development", "staging", "production"], ["app1",
        // "app2"]) pairs each environment with each app; an empty set gives [].
        check(
            r#"setproduct(["development", "staging", "production"], ["app1", "app2"])"#,
            r#"[["development", "app1"], ["development", "app2"], ["staging", "app1"],
                ["staging", "app2"], ["production", "app1"], ["production", "app2"]]"#,
        );
        check(r#"setproduct(["a"], [])"#, "[]");
        check_unknown(r#"setproduct(["a"], [u])"#);
    }

    #[test]
    fn chunklist_matchkeys_and_transpose() {
        // Documentation: chunklist(["a", "b", "c", "d", "e"], 2) is [["a", "b"], ["c", "d"],
        // ["e"]]; matchkeys(["i-123", "i-abc", "i-def"], ["us-west", "us-east", "us-east"],
        // ["us-east"]) is ["i-abc", "i-def"]; transpose({"a" = ["1", "2"], "b" = ["2", "3"]})
        // is {"1" = ["a"], "2" = ["a", "b"], "3" = ["b"]}.
        check(
            r#"chunklist(["a", "b", "c", "d", "e"], 2)"#,
            r#"[["a", "b"], ["c", "d"], ["e"]]"#,
        );
        check(r#"chunklist(["a", "b"], 1)"#, r#"[["a"], ["b"]]"#);
        check(
            r#"matchkeys(["i-123", "i-abc", "i-def"], ["us-west", "us-east", "us-east"], ["us-east"])"#,
            r#"["i-abc", "i-def"]"#,
        );
        check(
            r#"transpose({"b" = ["2", "3"], "a" = ["1", "2"]})"#,
            r#"{"1" = ["a"], "2" = ["a", "b"], "3" = ["b"]}"#,
        );
        check_unknown(r#"transpose({"a" = [u]})"#);
    }

    #[test]
    fn sort_alltrue_and_anytrue() {
        // Documentation: sort(["e", "d", "a", "x"]) is ["a", "d", "e", "x"];
        // alltrue(["true", true]) is true, alltrue([true, false]) false; anytrue(["true"]) is
        // true, anytrue([true, false]) true, anytrue([]) false.
        check(r#"sort(["e", "d", "a", "x"])"#, r#"["a", "d", "e", "x"]"#);
        check("sort([10, 9])", r#"["10", "9"]"#);
        check(r#"alltrue(["true", true])"#, "true");
        check("alltrue([true, false])", "false");
        check("alltrue([])", "true");
        check(r#"anytrue(["true"])"#, "true");
        check("anytrue([true, false])", "true");
        check("anytrue([])", "false");
        fails(r#"anytrue(["yes"])"#, "must hold bools");
        check_unknown("alltrue([true, u])");
    }
}
