//! Table tests of Terraform's built-in functions. Each expected value was written by hand from
//! the examples on the function's page of Terraform's documentation (the function name is the
//! first word of each case); cases marked `ours` are extra checks of edge cases.

use reconciler::terraform::functions::{EvalScope, Value, evaluate_str};

/// Evaluates `expr` and `expected` (a literal) and compares them.
fn check(cases: &[(&str, &str)]) {
    let scope = EvalScope::new(".");
    let mut failures = Vec::new();
    for (expr, expected) in cases {
        let want = evaluate_str(expected, &scope).expect("expected value parses");
        match evaluate_str(expr, &scope) {
            Ok(got) if same(&got, &want) => {}
            Ok(got) => failures.push(format!("{expr}: got {got}, want {want}")),
            Err(error) => failures.push(format!("{expr}: error {error}, want {want}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Equality with a tolerance for floating point noise in numbers.
fn same(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => got == want,
    }
}

fn fails(exprs: &[&str]) {
    let scope = EvalScope::new(".");
    for expr in exprs {
        assert!(evaluate_str(expr, &scope).is_err(), "{expr} should fail");
    }
}

#[test]
fn functions_numeric() {
    check(&[
        ("abs(23)", "23"),
        ("abs(0)", "0"),
        ("abs(-12.4)", "12.4"),
        ("ceil(5)", "5"),
        ("ceil(5.1)", "6"),
        ("floor(5)", "5"),
        ("floor(4.9)", "4"),
        ("log(50, 10)", "1.6989700043360185"),
        ("log(16, 2)", "4"),
        ("max(12, 54, 3)", "54"),
        ("max([12, 54, 3]...)", "54"),
        ("min(12, 54, 3)", "3"),
        ("min([12, 54, 3]...)", "3"),
        ("parseint(\"100\", 10)", "100"),
        ("parseint(\"FF\", 16)", "255"),
        ("parseint(\"-10\", 16)", "-16"),
        ("parseint(\"1011111011101111\", 2)", "48879"),
        ("pow(3, 2)", "9"),
        ("pow(4, 0)", "1"),
        ("signum(-13)", "-1"),
        ("signum(0)", "0"),
        ("signum(344)", "1"),
        ("sum([10, 13, 6, 2])", "31"),
        ("sum([10.2, 13, 6, 2])", "31.2"),
    ]);
    fails(&["sum([])", "parseint(\"12\", 2)", "min()"]);
}

#[test]
fn functions_string() {
    check(&[
        ("chomp(\"hello\\n\")", "\"hello\""),
        ("chomp(\"hello\\r\\n\")", "\"hello\""),
        ("chomp(\"hello\\n\\n\")", "\"hello\""),
        ("endswith(\"hello world\", \"world\")", "true"),
        ("endswith(\"hello world\", \"hello\")", "false"),
        ("format(\"Hello, %s!\", \"Ander\")", "\"Hello, Ander!\""),
        (
            "format(\"There are %d lights\", 4)",
            "\"There are 4 lights\"",
        ),
        ("format(\"%#v\", \"hello\")", "\"\\\"hello\\\"\""),
        ("format(\"%#v\", true)", "\"true\""),
        ("format(\"%#v\", 1)", "\"1\""),
        ("format(\"%#v\", {a = 1})", "\"{\\\"a\\\":1}\""),
        ("format(\"%#v\", [true])", "\"[true]\""),
        ("format(\"%#v\", null)", "\"null\""),
        (
            "format(\"%03d|%-4s|%.2f|%x|%q|%5.1f|%+d|%%\", 7, \"ab\", 3.14159, 255, \"q\", 2.25, 3)",
            "\"007|ab  |3.14|ff|\\\"q\\\"|  2.2|+3|%\"",
        ), // ours
        ("format(\"%[2]s %[1]s\", \"a\", \"b\")", "\"b a\""), // ours
        ("format(\"%e\", 1234.5678)", "\"1.234568e+03\""),    // ours
        (
            "formatlist(\"Hello, %s!\", [\"Valentina\", \"Ander\", \"Olivia\", \"Sam\"])",
            "[\"Hello, Valentina!\", \"Hello, Ander!\", \"Hello, Olivia!\", \"Hello, Sam!\"]",
        ),
        (
            "formatlist(\"%s, %s!\", \"Salutations\", [\"Valentina\", \"Ander\", \"Olivia\", \"Sam\"])",
            "[\"Salutations, Valentina!\", \"Salutations, Ander!\", \"Salutations, Olivia!\", \"Salutations, Sam!\"]",
        ),
        (
            "indent(2, \"[\\n  foo,\\n  bar,\\n]\\n\")",
            "\"[\\n    foo,\\n    bar,\\n  ]\\n  \"",
        ),
        (
            "join(\"-\", [\"foo\", \"bar\", \"baz\"])",
            "\"foo-bar-baz\"",
        ),
        (
            "join(\", \", [\"foo\", \"bar\", \"baz\"])",
            "\"foo, bar, baz\"",
        ),
        ("join(\", \", [\"foo\"])", "\"foo\""),
        ("lower(\"HELLO\")", "\"hello\""),
        ("lower(\"АЛЛО!\")", "\"алло!\""),
        ("upper(\"hello\")", "\"HELLO\""),
        ("upper(\"алло!\")", "\"АЛЛО!\""),
        (
            "regex(\"[a-z]+\", \"53453453.345345aaabbbccc23454\")",
            "\"aaabbbccc\"",
        ),
        (
            "regex(\"(\\\\d\\\\d\\\\d\\\\d)-(\\\\d\\\\d)-(\\\\d\\\\d)\", \"2019-02-01\")",
            "[\"2019\", \"02\", \"01\"]",
        ),
        (
            "regex(\"^(?:(?P<scheme>[^:/?#]+):)?(?://(?P<authority>[^/?#]*))?\", \"https://terraform.io/docs/\")",
            "{authority = \"terraform.io\", scheme = \"https\"}",
        ),
        (
            "regexall(\"[a-z]+\", \"1234abcd5678efgh9\")",
            "[\"abcd\", \"efgh\"]",
        ),
        ("length(regexall(\"[a-z]+\", \"1234abcd5678efgh9\"))", "2"),
        ("length(regexall(\"[a-z]+\", \"123456789\")) > 0", "false"),
        ("replace(\"1 + 2 + 3\", \"+\", \"-\")", "\"1 - 2 - 3\""),
        (
            "replace(\"hello world\", \"/w.*d/\", \"everybody\")",
            "\"hello everybody\"",
        ),
        (
            "replace(\"hello world\", \"/(h)(e)/\", \"$2$1\")",
            "\"ehllo world\"",
        ), // ours
        ("split(\",\", \"foo\")", "[\"foo\"]"),
        (
            "split(\",\", \"foo,bar,baz\")",
            "[\"foo\", \"bar\", \"baz\"]",
        ),
        ("split(\",\", \"\")", "[\"\"]"),
        ("startswith(\"hello world\", \"hello\")", "true"),
        ("startswith(\"hello world\", \"world\")", "false"),
        ("strcontains(\"hello world\", \"wor\")", "true"),
        ("strcontains(\"hello world\", \"wod\")", "false"),
        ("strrev(\"hello\")", "\"olleh\""),
        ("strrev(\"a ☃\")", "\"☃ a\""),
        ("substr(\"hello world\", 1, 4)", "\"ello\""),
        ("substr(\"🤔🤷\", 0, 1)", "\"🤔\""),
        ("substr(\"hello world\", -5, -1)", "\"world\""),
        ("substr(\"hello world\", 6, 10)", "\"world\""),
        ("title(\"hello world\")", "\"Hello World\""),
        ("trim(\"?!hello?!\", \"!?\")", "\"hello\""),
        ("trim(\"foobar\", \"far\")", "\"oob\""),
        ("trim(\"   hello! world.!  \", \"! \")", "\"hello! world.\""),
        ("trimprefix(\"helloworld\", \"hello\")", "\"world\""),
        ("trimprefix(\"helloworld\", \"cat\")", "\"helloworld\""),
        ("trimsuffix(\"helloworld\", \"world\")", "\"hello\""),
        ("trimspace(\"  hello\\n\\n\")", "\"hello\""),
    ]);
    fails(&[
        "regex(\"[a-z]+\", \"123\")",
        "format(\"%d\", 1.5)",
        "format(\"%s %s\", \"a\")",
        "format(\"%s\", \"a\", \"b\")",
    ]);
}

#[test]
fn functions_collection() {
    check(&[
        ("alltrue([\"true\", true])", "true"),
        ("alltrue([true, false])", "false"),
        ("anytrue([\"true\"])", "true"),
        ("anytrue([true, false])", "true"),
        ("anytrue([])", "false"),
        (
            "chunklist([\"a\", \"b\", \"c\", \"d\", \"e\"], 2)",
            "[[\"a\", \"b\"], [\"c\", \"d\"], [\"e\"]]",
        ),
        (
            "chunklist([\"a\", \"b\", \"c\", \"d\", \"e\"], 1)",
            "[[\"a\"], [\"b\"], [\"c\"], [\"d\"], [\"e\"]]",
        ),
        ("coalesce(\"a\", \"b\")", "\"a\""),
        ("coalesce(\"\", \"b\")", "\"b\""),
        ("coalesce(1, 2)", "1"),
        ("coalesce([\"\", \"b\"]...)", "\"b\""),
        (
            "coalescelist([\"a\", \"b\"], [\"c\", \"d\"])",
            "[\"a\", \"b\"]",
        ),
        ("coalescelist([], [\"c\", \"d\"])", "[\"c\", \"d\"]"),
        (
            "compact([\"a\", \"\", \"b\", null, \"c\"])",
            "[\"a\", \"b\", \"c\"]",
        ),
        (
            "concat([\"a\", \"\"], [\"b\", \"c\"])",
            "[\"a\", \"\", \"b\", \"c\"]",
        ),
        ("contains([\"a\", \"b\", \"c\"], \"a\")", "true"),
        ("contains([\"a\", \"b\", \"c\"], \"d\")", "false"),
        (
            "distinct([\"a\", \"b\", \"a\", \"c\", \"d\", \"b\"])",
            "[\"a\", \"b\", \"c\", \"d\"]",
        ),
        ("element([\"a\", \"b\", \"c\"], 1)", "\"b\""),
        ("element([\"a\", \"b\", \"c\"], 3)", "\"a\""),
        (
            "flatten([[\"a\", \"b\"], [], [\"c\"]])",
            "[\"a\", \"b\", \"c\"]",
        ),
        (
            "flatten([[[\"a\", \"b\"], []], [\"c\"]])",
            "[\"a\", \"b\", \"c\"]",
        ),
        ("index([\"a\", \"b\", \"c\"], \"b\")", "1"),
        ("keys({a = 1, c = 2, d = 3})", "[\"a\", \"c\", \"d\"]"),
        ("length([])", "0"),
        ("length([\"a\", \"b\"])", "2"),
        ("length({\"a\" = \"b\"})", "1"),
        ("length(\"hello\")", "5"),
        (
            "lookup({a = \"ay\", b = \"bee\"}, \"a\", \"what?\")",
            "\"ay\"",
        ),
        (
            "lookup({a = \"ay\", b = \"bee\"}, \"c\", \"what?\")",
            "\"what?\"",
        ),
        (
            "merge({a = \"b\", c = \"d\"}, {e = \"f\", c = \"z\"})",
            "{a = \"b\", c = \"z\", e = \"f\"}",
        ),
        (
            "merge({a = \"b\"}, {a = [1, 2], c = \"z\"}, {d = 3})",
            "{a = [1, 2], c = \"z\", d = 3}",
        ),
        ("one([])", "null"),
        ("one([\"hello\"])", "\"hello\""),
        ("range(3)", "[0, 1, 2]"),
        ("range(1, 4)", "[1, 2, 3]"),
        ("range(1, 8, 2)", "[1, 3, 5, 7]"),
        ("range(1, 4, 0.5)", "[1, 1.5, 2, 2.5, 3, 3.5]"),
        ("range(4, 1)", "[4, 3, 2]"),
        ("range(10, 5, -2)", "[10, 8, 6]"),
        ("reverse([1, 2, 3])", "[3, 2, 1]"),
        (
            "setintersection([\"a\", \"b\"], [\"b\", \"c\"], [\"b\", \"d\"])",
            "[\"b\"]",
        ),
        (
            "setproduct([\"development\", \"staging\", \"production\"], [\"app1\", \"app2\"])",
            "[[\"development\", \"app1\"], [\"development\", \"app2\"], [\"staging\", \"app1\"], [\"staging\", \"app2\"], [\"production\", \"app1\"], [\"production\", \"app2\"]]",
        ),
        (
            "setsubtract([\"a\", \"b\", \"c\"], [\"a\", \"c\"])",
            "[\"b\"]",
        ),
        (
            "setunion([\"a\", \"b\"], [\"b\", \"c\"], [\"d\"])",
            "[\"a\", \"b\", \"c\", \"d\"]",
        ),
        (
            "slice([\"a\", \"b\", \"c\", \"d\"], 1, 3)",
            "[\"b\", \"c\"]",
        ),
        (
            "sort([\"e\", \"d\", \"a\", \"x\"])",
            "[\"a\", \"d\", \"e\", \"x\"]",
        ),
        (
            "transpose({\"a\" = [\"1\", \"2\"], \"b\" = [\"2\", \"3\"]})",
            "{\"1\" = [\"a\"], \"2\" = [\"a\", \"b\"], \"3\" = [\"b\"]}",
        ),
        ("values({a = 3, c = 2, d = 1})", "[3, 2, 1]"),
        ("zipmap([\"a\", \"b\"], [1, 2])", "{a = 1, b = 2}"),
    ]);
    fails(&[
        "one([1, 2])",
        "index([\"a\"], \"z\")",
        "lookup({a = 1}, \"b\")",
        "slice([1], 0, 2)",
        "zipmap([\"a\"], [])",
    ]);
}

#[test]
fn functions_encoding_and_conversion() {
    check(&[
        ("base64decode(\"SGVsbG8gV29ybGQ=\")", "\"Hello World\""),
        ("base64encode(\"Hello World\")", "\"SGVsbG8gV29ybGQ=\""),
        (
            "base64sha256(\"hello world\")",
            "\"uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=\"",
        ),
        (
            "jsondecode(\"{\\\"hello\\\": \\\"world\\\"}\")",
            "{hello = \"world\"}",
        ),
        ("jsondecode(\"true\")", "true"),
        (
            "jsonencode({\"hello\" = \"world\"})",
            "\"{\\\"hello\\\":\\\"world\\\"}\"",
        ),
        (
            "jsonencode(\"<&>\")",
            "\"\\\"\\\\u003c\\\\u0026\\\\u003e\\\"\"",
        ), // ours: HTML-safe escapes
        (
            "md5(\"hello world\")",
            "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"",
        ),
        (
            "sha1(\"hello world\")",
            "\"2aae6c35c94fcfb415dbe95f408b9ce91ee846ed\"",
        ),
        (
            "sha256(\"hello world\")",
            "\"b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9\"",
        ),
        ("urlencode(\"Hello World!\")", "\"Hello+World%21\""),
        ("urlencode(\"☃\")", "\"%E2%98%83\""),
        ("tobool(true)", "true"),
        ("tobool(\"true\")", "true"),
        ("tobool(null)", "null"),
        ("tonumber(1)", "1"),
        ("tonumber(\"1\")", "1"),
        ("tonumber(null)", "null"),
        ("tostring(\"hello\")", "\"hello\""),
        ("tostring(1)", "\"1\""),
        ("tostring(true)", "\"true\""),
        ("tostring(null)", "null"),
        ("tolist([\"a\", \"b\", \"c\"])", "[\"a\", \"b\", \"c\"]"),
        ("tolist([\"a\", \"b\", 3])", "[\"a\", \"b\", \"3\"]"),
        ("tomap({\"a\" = 1, \"b\" = 2})", "{a = 1, b = 2}"),
        (
            "tomap({\"a\" = \"foo\", \"b\" = true})",
            "{a = \"foo\", b = \"true\"}",
        ),
        ("toset([\"a\", \"b\", \"c\"])", "[\"a\", \"b\", \"c\"]"),
        ("toset([\"a\", \"b\", 3])", "[\"3\", \"a\", \"b\"]"),
        ("toset([\"c\", \"b\", \"b\"])", "[\"b\", \"c\"]"),
    ]);
    fails(&[
        "tobool(\"no\")",
        "tonumber(\"hello\")",
        "tostring([])",
        "base64decode(\"!!\")",
        "jsondecode(\"{\")",
    ]);
}

#[test]
fn functions_network() {
    check(&[
        ("cidrhost(\"10.12.112.0/20\", 16)", "\"10.12.112.16\""),
        ("cidrhost(\"10.12.112.0/20\", 268)", "\"10.12.113.12\""),
        (
            "cidrhost(\"fd00:fd12:3456:7890:00a2::/72\", 34)",
            "\"fd00:fd12:3456:7890::22\"",
        ),
        ("cidrhost(\"10.0.0.0/24\", -1)", "\"10.0.0.255\""), // ours
        ("cidrnetmask(\"172.16.0.0/12\")", "\"255.240.0.0\""),
        ("cidrsubnet(\"172.16.0.0/12\", 4, 2)", "\"172.18.0.0/16\""),
        ("cidrsubnet(\"10.1.2.0/24\", 4, 15)", "\"10.1.2.240/28\""),
        (
            "cidrsubnet(\"fd00:fd12:3456:7890::/56\", 16, 162)",
            "\"fd00:fd12:3456:7800:a200::/72\"",
        ),
        (
            "cidrsubnets(\"10.1.0.0/16\", 4, 4, 8, 4)",
            "[\"10.1.0.0/20\", \"10.1.16.0/20\", \"10.1.32.0/24\", \"10.1.48.0/20\"]",
        ),
        (
            "cidrsubnets(\"fd00:fd12:3456:7890::/56\", 16, 16, 16, 32)",
            "[\"fd00:fd12:3456:7800::/72\", \"fd00:fd12:3456:7800:100::/72\", \"fd00:fd12:3456:7800:200::/72\", \"fd00:fd12:3456:7800:300::/88\"]",
        ),
    ]);
    fails(&[
        "cidrsubnet(\"10.0.0.0/30\", 4, 0)",
        "cidrsubnet(\"10.0.0.0/16\", 2, 4)",
        "cidrhost(\"10.0.0.0/30\", 4)",
        "cidrnetmask(\"::/64\")",
        "cidrhost(\"nonsense\", 1)",
    ]);
}

#[test]
fn functions_paths() {
    check(&[
        ("basename(\"foo/bar/baz.txt\")", "\"baz.txt\""),
        ("dirname(\"foo/bar/baz.txt\")", "\"foo/bar\""),
        ("dirname(\"baz.txt\")", "\".\""),     // ours
        ("basename(\"foo/bar/\")", "\"bar\""), // ours
    ]);
}
