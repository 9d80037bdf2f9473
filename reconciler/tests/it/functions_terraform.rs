//! Compares our evaluation with `terraform console` for expressions that need no providers
//! but the built-in one, which works offline once declared.
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
    "coalescelist(tolist(null), [], [\"a\"])",
    "coalescelist(tolist(null), tolist(null))",
    "jsonencode({b = [1, 2.5, \"<x>&\"], a = null})",
    "jsondecode(\"{\\\"b\\\": [1, 2.5], \\\"a\\\": {\\\"c\\\": true}}\")",
    "tolist([\"a\", 1, true])",
    "tolist(null)",
    "toset(null)",
    "tomap(null)",
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
    "matchkeys([\"i-123\", \"i-abc\", \"i-def\"], [\"us-west\", \"us-east\", \"us-east\"], [\"us-east\"])",
    "matchkeys([\"a\", \"b\", \"c\"], [1, 2, 3], [\"2\", 3])",
    "base64gzip(\"hello world\")",
    "base64gzip(\"\")",
    "base64gzip(\"test\")",
    "csvdecode(\"a,b,c\\n1,2,3\\n4,5,6\")",
    "csvdecode(\"a,b\\r\\n1,\\\"x\\r\\n\\\"\\\"y\\\"\\\"\\\"\\n\\n3,4\")",
    "csvdecode(\" a , b \\n 1 , 2 \")",
    "textencodebase64(\"Hello World\", \"UTF-16LE\")",
    "textencodebase64(\"Hé\", \"UTF-16\")",
    "textencodebase64(\"Hé\", \"UTF-16BE\")",
    "textencodebase64(\"Hé\", \"ISO-8859-1\")",
    "textencodebase64(\"Hé\", \"windows-1252\")",
    "textencodebase64(\"e\", \"US-ASCII\")",
    "textdecodebase64(\"SABlAGwAbABvACAAVwBvAHIAbABkAA==\", \"UTF-16LE\")",
    "textdecodebase64(\"//5IAOkA\", \"UTF-16\")",
    "textdecodebase64(\"SADpAA==\", \"UTF-16\")",
    "textdecodebase64(\"gA==\", \"ISO-8859-1\")",
    "yamldecode(\"hello: world\")",
    "yamldecode(\"{a: &foo [1, 2, 3], b: *foo}\")",
    "yamldecode(\"a: 'true'\\nb: yes\\nc: 0x1F\\nd: 1_000\\ne: 2001-12-14\\nf: ~\\ng: 1.5e3\\nh: 017\\ni: 0o17\\nj: \\\"on\\\"\")",
    "yamldecode(\"- 2001-12-14t21:59:43.10-05:00\\n- 2001-12-14 21:59:43.10\\n- !!int 0b101\\n- !!str 12\\n- !!binary aGk=\\n- 1.50\\n- +3\")",
    "yamldecode(\"<<: {a: 1, b: 1}\\nb: 2\")",
    "yamldecode(\"<<: [{a: 1}, {c: 3}]\\nb: 2\")",
    "yamldecode(\"a:\\n  - x: |\\n      line one\\n      line two\\n    y: >\\n      folded\\n      text\\n\")",
    "yamlencode({a = \"b\", c = \"d\"})",
    "yamlencode({foo = [1, {a = \"b\", c = \"d\"}, 3], bar = \"baz\"})",
    "yamlencode([[1, 2], [[]], {a = [1]}, {}])",
    "yamlencode({a = {b = {c = 1}}, l = [{x = 1, y = [2]}]})",
    "yamlencode({k = \"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen\"})",
    "yamlencode(\"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen\")",
    "yamlencode({\"x\\ny\" = \"a\\n\", b = \"  lead\\nx\", c = \"trail \\nx\", d = \"t\\tab\\nx\", e = \"a\\n\\n\", f = \"\\nlead\", g = \"é😀\\u0085\\u00a0\\u2028\\\"\\\\\"})",
    "yamlencode([{a = \"x\\ny\\n\\nz\"}])",
    "yamlencode({a = {b = [\"one two three four five six seven eight nine ten eleven twelve thirteen  fourteen fifteen sixteen\"]}})",
    "yamlencode({kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk = 1, b = \"x\"})",
    "yamlencode([\"a\\n\", {b = [\"c\"]}, [\"d\\ne\"]])",
    "yamlencode(1.5)",
    "yamlencode(null)",
    "yamlencode(\"a\\n\\n\")",
    "yamlencode({a = 1e20, b = 0.1, c = -3, d = true, e = null})",
    "formatdate(\"DD MMM YYYY hh:mm ZZZ\", \"2018-01-02T23:12:01Z\")",
    "formatdate(\"EEE, DD MMM YYYY hh:mm:ss ZZZ\", \"2018-01-02T23:12:01-08:00\")",
    "formatdate(\"EEEE MMMM D M YY h H:m:s AA aa Z ZZZZ ZZZZZ\", \"2018-03-04T05:06:07+05:30\")",
    "formatdate(\"H 'o''clock' ''\", \"2018-01-02T00:12:01Z\")",
    "timeadd(\"2017-11-22T00:00:00Z\", \"10m\")",
    "timeadd(\"2017-11-22T00:00:00.5Z\", \"1s\")",
    "timeadd(\"2017-11-22T00:00:00+00:00\", \"1h1.5m\")",
    "timeadd(\"2017-11-22T00:00:00+01:00\", \"-1µs\")",
    "timeadd(\"2017-11-22T00:00:00Z\", \"-2h5m3ms4us5ns\")",
    "timecmp(\"2017-11-22T01:00:00Z\", \"2017-11-22T00:00:00-01:00\")",
    "timecmp(\"2017-11-22T01:00:00.1Z\", \"2017-11-22T01:00:00Z\")",
    "uuidv5(\"dns\", \"www.terraform.io\")",
    "uuidv5(\"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8\", \"a\")",
    "uuidv5(\"6ba7b8109dad11d180b400c04fd430c8\", \"a\")",
    "pathexpand(\"/etc/resolv.conf\")",
    "pathexpand(\"~/a/../b\")",
    "fileset(\".\", \"nothing/*\")",
    "issensitive(sensitive(\"a\"))",
    "issensitive(\"a\")",
    "ephemeralasnull([4, {a = 1}])",
    "core::upper(\"a\")",
    "provider::terraform::encode_tfvars({b = {c = [1, {d = \"x\"}], ee = \"y\"}, a = 0.5, a_long = [], z = {}})",
    "provider::terraform::encode_expr({a = [{b = 1}, {c = null}], cc = \"\\té\\u00a0\"})",
    "provider::terraform::decode_tfvars(\"a = {b = [1, 2 * 3]}\\nc = \\\"x\\\"\")",
    // Both sides must fail on these.
    "matchkeys([\"a\", \"b\"], [1], [1])",
    "csvdecode(\"\")",
    "csvdecode(\"a,b\\n1,2,3\")",
    "csvdecode(\"a,b\\n1\\\"2,3\")",
    "csvdecode(\"a,a\\n1,2\")",
    "yamldecode(\"{a: &foo [1, *foo, 3]}\")",
    "yamldecode(\"{a: !not-supported foo}\")",
    "yamldecode(\"---\\na\\n---\\nb\")",
    "yamldecode(\"\")",
    "yamldecode(\"{null: c}\")",
    "textencodebase64(\"€\", \"ISO-8859-1\")",
    "textencodebase64(\"é\", \"US-ASCII\")",
    "textencodebase64(\"x\", \"bogus\")",
    "formatdate(\"Y\", \"2018-01-02T03:04:05Z\")",
    "formatdate(\"'abc\", \"2018-01-02T03:04:05Z\")",
    "timeadd(\"2017-11-22t00:00:00Z\", \"1s\")",
    "timeadd(\"2017-11-22T00:00:00Z\", \"1\")",
    "uuidv5(\"bogus\", \"a\")",
    "pathexpand(\"~foo\")",
    "bcrypt(\"a\", 32)",
    "templatestring(\"Hello $${name}\", {name = \"x\"})",
    "signum(-0.5)",
    "one([1, 2])",
    "cidrsubnet(\"10.0.0.0/30\", 4, 0)",
    "format(\"%d\", 1.5)",
    "element([], 0)",
    "regex(\"x\", \"y\")",
    "provider::terraform::encode_tfvars({\"1a\" = 1})",
    "provider::terraform::decode_tfvars(\"a = var.x\")",
];

/// The configuration the console runs in: it declares the built-in provider, whose functions
/// Terraform offers only to a module that does.
const BUILTIN_PROVIDER: &str = "terraform {\n  required_providers {\n    terraform = {\n      source = \"terraform.io/builtin/terraform\"\n    }\n  }\n}\n";

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
    // It does not double `${` and `%{` there, so a value holding them cannot be compared.
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
    std::fs::write(dir.path().join("main.tf"), BUILTIN_PROVIDER).expect("write main.tf");
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
