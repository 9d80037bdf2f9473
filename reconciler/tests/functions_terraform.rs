//! Compares our evaluation with `terraform console` for expressions that need no providers.
//! An expression that fails in both agrees. Skipped, with a note, when `terraform` is not on PATH.

use std::io::Write;
use std::process::{Command, Stdio};

use reconciler::terraform::functions::{EvalScope, Value, evaluate_str};

const EXPRESSIONS: &[&str] = &[
    "cidrsubnet(\"10.0.0.0/16\", 8, 2)",
    "cidrsubnet(\"172.16.0.0/12\", 4, 2)",
    "cidrsubnet(\"fd00:fd12:3456:7890::/56\", 16, 162)",
    "cidrsubnets(\"10.1.0.0/16\", 4, 4, 8, 4)",
    "cidrsubnets(\"10.0.0.0/8\", 8, 4, 8)",
    "cidrhost(\"10.12.112.0/20\", 268)",
    "cidrhost(\"10.0.0.0/24\", -2)",
    "cidrhost(\"fd00:fd12:3456:7890:00a2::/72\", 34)",
    "cidrnetmask(\"10.1.2.3/19\")",
    "merge({a = \"b\", c = \"d\"}, {e = \"f\", c = \"z\"})",
    "lookup({a = 1}, \"b\", 7)",
    "concat([1, 2], [3])",
    "format(\"%05.1f|%-6s|%x|%X|%o|%b|%+d|%q|%t|%v\", 3.14159, \"ab\", 255, 255, 8, 5, 3, \"q\\\"\", true, 1.5)",
    "format(\"%e|%10.3e\", 1234.5678, 0.000123)",
    "format(\"%[2]s-%[1]s-%s\", \"a\", \"b\")",
    "formatlist(\"%s=%d\", [\"a\", \"b\"], [1, 2])",
    "join(\"/\", [\"a\", 1, true], [\"x\"])",
    "split(\"/\", \"a//b/\")",
    "length(\"héllo\")",
    "element([\"a\", \"b\", \"c\"], 5)",
    "keys({z = 1, a = 2})",
    "values({z = 1, a = 2})",
    "coalesce(\"\", \"x\")",
    "coalescelist([], [1])",
    "jsonencode({b = [1, 2.5, \"<x>&\"], a = null})",
    "jsondecode(\"{\\\"b\\\": [1, 2.5], \\\"a\\\": {\\\"c\\\": true}}\")",
    "tolist([\"a\", 1, true])",
    "toset([3, 1, 2, 1])",
    "toset([\"b\", \"a\", \"b\"])",
    "tomap({a = 1, b = \"x\"})",
    "tostring(12.5)",
    "tonumber(\"0.25\")",
    "tobool(\"false\")",
    "flatten([[1, [2, [3]]], [], [4]])",
    "distinct([3, 1, 3, 2, 1])",
    "zipmap([\"x\", \"y\"], [[1], {a = 2}])",
    "range(0, 1, 0.25)",
    "range(5, 0, -2)",
    "replace(\"a-b-c\", \"/-(\\\\w)/\", \"+$1\")",
    "replace(\"hello\", \"l\", \"L\")",
    "regex(\"(\\\\w+)@(\\\\w+)\", \"me@example\")",
    "regex(\"(?P<user>\\\\w+)@(?P<host>\\\\w+)\", \"me@example\")",
    "regexall(\"(\\\\d)(\\\\w)\", \"1a 2b 3c\")",
    "lower(\"ÀB\")",
    "upper(\"àb\")",
    "title(\"hello wORLD foo_bar x-y 9z\")",
    "trimspace(\"\\t hi \\n\")",
    "trim(\"xxhixx\", \"x\")",
    "trimprefix(\"prefix-x\", \"prefix-\")",
    "trimsuffix(\"x.tf\", \".tf\")",
    "substr(\"hello world\", -5, 3)",
    "substr(\"abc\", 1, 100)",
    "contains([1, 2], 2)",
    "min(3, 1.5, 2)",
    "max(-1, -5)",
    "abs(-3.5)",
    "ceil(-1.5)",
    "floor(-1.5)",
    "sum([1, 2, 3.5])",
    "base64encode(\"héllo\")",
    "base64decode(\"aMOpbGxv\")",
    "sha256(\"héllo\")",
    "sha1(\"abc\")",
    "md5(\"abc\")",
    "sha512(\"abc\")",
    "base64sha512(\"abc\")",
    "slice([1, 2, 3, 4], 1, 3)",
    "reverse([\"a\", \"b\"])",
    "sort([\"b\", \"a\", \"10\", \"9\"])",
    "compact([\"a\", \"\", null, \"b\"])",
    "index([\"a\", \"b\"], \"b\")",
    "one([5])",
    "one([])",
    "chunklist([1, 2, 3, 4, 5], 2)",
    "chunklist([1, 2, 3], 0)",
    "setunion([\"b\", \"a\"], [\"c\", \"a\"])",
    "setintersection([1, 2, 3], [3, 2, 5])",
    "setsubtract([\"a\", \"b\", \"c\"], [\"b\"])",
    "setproduct([\"a\", \"b\"], [1, 2])",
    "startswith(\"hello\", \"he\")",
    "endswith(\"hello\", \"lo\")",
    "strrev(\"abc☃\")",
    "basename(\"/a/b/c.txt\")",
    "dirname(\"/a/b/c.txt\")",
    "dirname(\"a/../b/c\")",
    "urlencode(\"a b&c=d/é~\")",
    "parseint(\"zz\", 36)",
    "pow(2, 10)",
    "signum(-7)",
    "indent(4, \"a\\nb\\n\")",
    "chomp(\"x\\r\\n\\n\")",
    "alltrue([])",
    "anytrue([false, \"true\"])",
    "transpose({a = [\"1\", \"2\"], b = [\"2\"]})",
    "try(tonumber(\"x\"), \"fallback\")",
    "can(regex(\"^a\", \"b\"))",
    "[for i, v in [\"a\", \"b\"] : \"${i}:${v}\"]",
    "{for v in [\"a\", \"bb\", \"cc\"] : length(v) => v...}",
    "\"%{ for x in [1, 2] ~} ${x} %{~ endfor }\"",
    "10 % 3 + 7 / 2 - -1",
    "1 == 1.0 && \"a\" != \"b\" || false",
    "[{a = 1}, {a = 2}][*].a",
    // Both sides must fail on these.
    "signum(-0.5)",
    "one([1, 2])",
    "cidrsubnet(\"10.0.0.0/30\", 4, 0)",
    "format(\"%d\", 1.5)",
    "element([], 0)",
    "regex(\"x\", \"y\")",
];

fn terraform_json(expr: &str, dir: &std::path::Path) -> Result<String, String> {
    let mut child = Command::new("terraform")
        .args(["console", "-no-color"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| error.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    writeln!(stdin, "jsonencode({expr})").map_err(|error| error.to_string())?;
    drop(stdin);
    let output = child
        .wait_with_output()
        .map_err(|error| error.to_string())?;
    let printed = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() || printed.is_empty() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    // Terraform prints the JSON text as an HCL string literal; decode it with our evaluator.
    match evaluate_str(&printed, &EvalScope::new(".")) {
        Ok(Value::String(json)) => Ok(json),
        other => Err(format!("unexpected console output {printed}: {other:?}")),
    }
}

/// Numbers compare by value, so `1` and `1.0` agree.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x
            .as_f64()
            .zip(y.as_f64())
            .is_some_and(|(x, y)| (x - y).abs() <= 1e-9 * y.abs().max(1.0)),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| same(value, other)))
        }
        _ => a == b,
    }
}

#[test]
fn functions_match_terraform_console() {
    if Command::new("terraform").arg("version").output().is_err() {
        eprintln!("note: terraform is not on PATH; skipping the terraform console comparison");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let scope = EvalScope::new(dir.path());
    let mut mismatches = Vec::new();
    for expr in EXPRESSIONS {
        let ours = evaluate_str(expr, &scope)
            .map_err(|error| error.to_string())
            .and_then(|value| value.to_json().ok_or_else(|| "unknown".to_string()));
        let theirs = terraform_json(expr, dir.path()).and_then(|json| {
            serde_json::from_str::<serde_json::Value>(&json).map_err(|error| error.to_string())
        });
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) if same(&ours, &theirs) => {}
            (Err(_), Err(_)) => {}
            (ours, theirs) => mismatches.push(format!(
                "{expr}\n  ours:      {ours:?}\n  terraform: {theirs:?}"
            )),
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ:\n{}",
        mismatches.len(),
        EXPRESSIONS.len(),
        mismatches.join("\n")
    );
}
