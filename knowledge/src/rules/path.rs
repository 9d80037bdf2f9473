//! Dotted JSON paths into CloudTrail payloads: `groupSet.items[].groupId`.
//!
//! A segment is an object key; a trailing `[]` iterates the array at that key (a lone object
//! counts as a one-element array, since XML-shaped payloads drop the array for one element).
//! The empty path names the payload itself. A segment ending in `[Field=literal]` keeps the
//! elements of the array at that key whose `Field` is the string `literal` (ELBv2's attribute
//! lists: `attributes[Key=idle_timeout.timeout_seconds].Value`); the literal may hold dots but
//! not `]`, and the path does not count as iterating, since it names one entry of a list. A
//! boolean or number field matches its written form (`clusterLogging[enabled=true]`).

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Each,
    /// Keep the array elements whose `field` is the string `equals`.
    Select {
        field: String,
        equals: String,
    },
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses a dotted path; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut steps = Vec::new();
        if text.is_empty() {
            return Ok(Self { steps });
        }
        for segment in segments(text) {
            let (key, last) =
                split_segment(segment).map_err(|m| format!("path \"{text}\": {m}"))?;
            if key.is_empty() && !(last.is_some() && steps.is_empty()) {
                return Err(format!("path \"{text}\" has an empty segment"));
            }
            if key.contains('[') || key.contains(']') {
                return Err(format!(
                    "path \"{text}\": `[]` or `[Field=value]` may only end a segment"
                ));
            }
            if !key.is_empty() {
                steps.push(Step::Key(key.to_owned()));
            }
            steps.extend(last);
        }
        Ok(Self { steps })
    }

    /// Whether the path iterates an array, so it may yield several values.
    pub fn iterates(&self) -> bool {
        self.steps.contains(&Step::Each)
    }

    /// The values the path reaches; empty when any key is missing or null.
    pub fn select<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![root];
        for step in &self.steps {
            current = current
                .into_iter()
                .flat_map(|value| step_into(step, value))
                .collect();
        }
        current.retain(|v| !v.is_null());
        current
    }
}

/// The dot-separated segments of a path; dots inside `[...]` do not separate.
fn segments(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let (mut start, mut depth) = (0, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                found.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    found.push(&text[start..]);
    found
}

/// A segment's key and the step its trailing `[]` or `[Field=literal]` adds.
fn split_segment(segment: &str) -> Result<(&str, Option<Step>), String> {
    if let Some(key) = segment.strip_suffix("[]") {
        return Ok((key, Some(Step::Each)));
    }
    let Some(open) = segment.find('[').filter(|_| segment.ends_with(']')) else {
        return Ok((segment, None));
    };
    let inner = &segment[open + 1..segment.len() - 1];
    match inner.split_once('=') {
        Some((field, equals))
            if !field.is_empty() && !equals.is_empty() && !inner.contains(['[', ']']) =>
        {
            let step = Step::Select {
                field: field.to_owned(),
                equals: equals.to_owned(),
            };
            Ok((&segment[..open], Some(step)))
        }
        _ => Err(format!("`[{inner}]` is neither `[]` nor `[Field=value]`")),
    }
}

fn step_into<'a>(step: &Step, value: &'a Value) -> Vec<&'a Value> {
    match (step, value) {
        (Step::Select { field, equals }, value) => step_into(&Step::Each, value)
            .into_iter()
            .filter(|item| {
                item.get(field)
                    .is_some_and(|v| written(v).as_deref() == Some(equals.as_str()))
            })
            .collect(),
        (Step::Key(key), Value::Object(map)) => map.get(key).into_iter().collect(),
        (Step::Key(_), _) => Vec::new(),
        (Step::Each, Value::Array(items)) => items.iter().collect(),
        (Step::Each, Value::Null) => Vec::new(),
        // An XML-shaped payload holding one element drops the array around it.
        (Step::Each, other) => vec![other],
    }
}

/// A scalar as a selector literal writes it: a string itself, a boolean or number in words.
fn written(value: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match value {
        Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
        Value::Bool(_) | Value::Number(_) => Some(std::borrow::Cow::Owned(value.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn select(path: &str, value: &Value) -> Vec<Value> {
        JsonPath::parse(path)
            .expect("valid path")
            .select(value)
            .into_iter()
            .cloned()
            .collect()
    }

    #[test]
    fn keys_and_iteration() {
        let v = json!({"groupSet": {"items": [{"groupId": "sg-1"}, {"groupId": "sg-2"}, {}]}});
        assert_eq!(
            select("groupSet.items[].groupId", &v),
            vec![json!("sg-1"), json!("sg-2")]
        );
        assert_eq!(select("groupSet.missing", &v), Vec::<Value>::new());
        assert_eq!(select("", &v), vec![v.clone()]);
    }

    #[test]
    fn lone_object_counts_as_one_element() {
        let v = json!({"Tag": {"Key": "a", "Value": "b"}});
        assert_eq!(select("Tag[].Key", &v), vec![json!("a")]);
        let v = json!({"Tag": [{"Key": "a"}, {"Key": "c"}]});
        assert_eq!(select("Tag[].Key", &v), vec![json!("a"), json!("c")]);
    }

    #[test]
    fn nulls_are_absent() {
        let v = json!({"a": null, "b": [null, 1]});
        assert!(select("a", &v).is_empty());
        assert_eq!(select("b[]", &v), vec![json!(1)]);
        assert_eq!(select("[]", &json!([1, 2])), vec![json!(1), json!(2)]);
    }

    #[test]
    fn select_by_field_value() {
        let v = json!({"attributes": [
            {"key": "idle_timeout.timeout_seconds", "value": "120"},
            {"key": "deletion_protection.enabled", "value": "false"},
            {"key": 7, "value": "not a string key"}
        ]});
        let path = "attributes[key=idle_timeout.timeout_seconds].value";
        assert_eq!(select(path, &v), vec![json!("120")]);
        assert!(!JsonPath::parse(path).expect("valid").iterates());
        assert_eq!(
            select("attributes[key=deletion_protection.enabled].value", &v),
            vec![json!("false")]
        );
        assert!(select("attributes[key=routing.http2.enabled].value", &v).is_empty());
        // A number or boolean matches its written form (EKS's `clusterLogging[enabled=true]`).
        assert_eq!(
            select("attributes[key=7].value", &v),
            vec![json!("not a string key")]
        );
        let logging = json!({"clusterLogging": [
            {"enabled": true, "types": ["api"]}, {"enabled": false, "types": ["audit"]}
        ]});
        assert_eq!(
            select("clusterLogging[enabled=false].types[]", &logging),
            vec![json!("audit")]
        );
        // A lone object is a one-element list here too; a root array is selected from.
        let lone = json!({"a": {"k": "x", "v": 1}});
        assert_eq!(select("a[k=x].v", &lone), vec![json!(1)]);
        assert_eq!(
            select("[k=y].v", &json!([{"k": "x", "v": 1}, {"k": "y", "v": 2}])),
            vec![json!(2)]
        );
        assert!(JsonPath::parse("a[k=x].b[]").expect("valid").iterates());
    }

    #[test]
    fn bad_paths_are_rejected() {
        assert!(JsonPath::parse("a[=x].b").is_err());
        assert!(JsonPath::parse("a[k=].b").is_err());
        assert!(JsonPath::parse("a[k].b").is_err());
        assert!(JsonPath::parse("a[k=x]y.b").is_err());
        assert!(JsonPath::parse("a[k=[x]].b").is_err());
        assert!(JsonPath::parse("a..b").is_err());
        assert!(JsonPath::parse("a[0].b").is_err());
        assert!(JsonPath::parse("a.").is_err());
        assert!(JsonPath::parse("a[]").expect("valid").iterates());
        assert!(!JsonPath::parse("a.b").expect("valid").iterates());
    }
}
