//! Dotted JSON paths into CloudTrail payloads: `groupSet.items[].groupId`.
//!
//! A segment is an object key; a trailing `[]` iterates the array at that key (a lone object
//! counts as a one-element array, since XML-shaped payloads drop the array for one element).
//! The empty path names the payload itself.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Each,
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
        for segment in text.split('.') {
            let (key, each) = match segment.strip_suffix("[]") {
                Some(key) => (key, true),
                None => (segment, false),
            };
            if key.is_empty() && !(each && steps.is_empty()) {
                return Err(format!("path {text:?} has an empty segment"));
            }
            if key.contains('[') || key.contains(']') {
                return Err(format!("path {text:?}: `[]` may only end a segment"));
            }
            if !key.is_empty() {
                steps.push(Step::Key(key.to_owned()));
            }
            if each {
                steps.push(Step::Each);
            }
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

fn step_into<'a>(step: &Step, value: &'a Value) -> Vec<&'a Value> {
    match (step, value) {
        (Step::Key(key), Value::Object(map)) => map.get(key).into_iter().collect(),
        (Step::Key(_), _) => Vec::new(),
        (Step::Each, Value::Array(items)) => items.iter().collect(),
        (Step::Each, Value::Null) => Vec::new(),
        // An XML-shaped payload holding one element drops the array around it.
        (Step::Each, other) => vec![other],
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
    fn bad_paths_are_rejected() {
        assert!(JsonPath::parse("a..b").is_err());
        assert!(JsonPath::parse("a[0].b").is_err());
        assert!(JsonPath::parse("a.").is_err());
        assert!(JsonPath::parse("a[]").expect("valid").iterates());
        assert!(!JsonPath::parse("a.b").expect("valid").iterates());
    }
}
