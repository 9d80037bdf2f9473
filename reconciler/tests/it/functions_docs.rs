//! Table tests of Terraform's built-in functions. Each expected value was written by hand from
//! the examples on the function's page of Terraform's documentation (the function name is the
//! first word of each case); cases marked `ours` are extra checks of edge cases.

use reconciler::terraform::functions::{
    EVALUATOR_FUNCTIONS, EvalScope, FunctionTable, Value, evaluate_str,
};

/// Every built-in function of Terraform 1.11, as its documentation's function index lists
/// them (numeric, string, collection, encoding, filesystem, date and time, hash and crypto, IP
/// network, type conversion), including those added from 1.5 on: `plantimestamp` (1.5),
/// `strcontains` (1.5), `issensitive` (1.8), `templatestring` (1.9), `ephemeralasnull` (1.10).
/// `terraform metadata functions -json` of 1.11 lists the same names, plus `core::` aliases
/// (but not the built-in provider's functions, at the end).
const TERRAFORM_FUNCTIONS: &[&str] = &[
    // Numeric
    "abs",
    "ceil",
    "floor",
    "log",
    "max",
    "min",
    "parseint",
    "pow",
    "signum",
    // String
    "chomp",
    "endswith",
    "format",
    "formatlist",
    "indent",
    "join",
    "lower",
    "regex",
    "regexall",
    "replace",
    "split",
    "startswith",
    "strcontains",
    "strrev",
    "substr",
    "templatestring",
    "title",
    "trim",
    "trimprefix",
    "trimspace",
    "trimsuffix",
    "upper",
    // Collection
    "alltrue",
    "anytrue",
    "chunklist",
    "coalesce",
    "coalescelist",
    "compact",
    "concat",
    "contains",
    "distinct",
    "element",
    "flatten",
    "index",
    "keys",
    "length",
    "lookup",
    "matchkeys",
    "merge",
    "one",
    "range",
    "reverse",
    "setintersection",
    "setproduct",
    "setsubtract",
    "setunion",
    "slice",
    "sort",
    "sum",
    "transpose",
    "values",
    "zipmap",
    // Encoding
    "base64decode",
    "base64encode",
    "base64gzip",
    "csvdecode",
    "jsondecode",
    "jsonencode",
    "textdecodebase64",
    "textencodebase64",
    "urlencode",
    "yamldecode",
    "yamlencode",
    // Filesystem
    "abspath",
    "basename",
    "dirname",
    "file",
    "filebase64",
    "fileexists",
    "fileset",
    "pathexpand",
    "templatefile",
    // Date and time
    "formatdate",
    "plantimestamp",
    "timeadd",
    "timecmp",
    "timestamp",
    // Hash and crypto
    "base64sha256",
    "base64sha512",
    "bcrypt",
    "filebase64sha256",
    "filebase64sha512",
    "filemd5",
    "filesha1",
    "filesha256",
    "filesha512",
    "md5",
    "rsadecrypt",
    "sha1",
    "sha256",
    "sha512",
    "uuid",
    "uuidv5",
    // IP network
    "cidrhost",
    "cidrnetmask",
    "cidrsubnet",
    "cidrsubnets",
    // Type conversion
    "can",
    "ephemeralasnull",
    "issensitive",
    "nonsensitive",
    "sensitive",
    "tobool",
    "tolist",
    "tomap",
    "tonumber",
    "toset",
    "tostring",
    "try",
    "type",
    // The built-in provider `terraform.io/builtin/terraform` (1.8), listed with the built-in
    // functions, called as `provider::terraform::NAME` once the module declares it.
    "provider::terraform::decode_tfvars",
    "provider::terraform::encode_expr",
    "provider::terraform::encode_tfvars",
];

/// Documented functions this evaluator does not implement, with the reason.
const NOT_IMPLEMENTED: &[(&str, &str)] = &[(
    "type",
    "works only in `terraform console`, to show a value's type; not usable in configuration",
)];

#[test]
fn functions_every_terraform_builtin_is_implemented() {
    let table = FunctionTable::builtin();
    let names: Vec<&str> = table.names().collect();
    let exceptions: Vec<&str> = NOT_IMPLEMENTED.iter().map(|(name, _)| *name).collect();
    let missing: Vec<&&str> = TERRAFORM_FUNCTIONS
        .iter()
        .filter(|name| !names.contains(name) && !EVALUATOR_FUNCTIONS.contains(name))
        .filter(|name| !exceptions.contains(name))
        .collect();
    assert!(missing.is_empty(), "not implemented: {missing:?}");
    let extra: Vec<&&str> = names
        .iter()
        .chain(EVALUATOR_FUNCTIONS)
        .filter(|name| !TERRAFORM_FUNCTIONS.contains(name))
        .collect();
    assert!(extra.is_empty(), "not Terraform built-ins: {extra:?}");
    for name in exceptions {
        assert!(
            !names.contains(&name),
            "{name} is implemented; drop its exception"
        );
    }
}

/// Evaluates `expr` and `expected` (a literal) and compares them.
fn check(cases: &[(&str, &str)]) {
    check_in(&EvalScope::new("."), cases);
}

/// [`check`] in the given scope.
fn check_in(scope: &EvalScope, cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (expr, expected) in cases {
        let want = evaluate_str(expected, scope).expect("expected value parses");
        match evaluate_str(expr, scope) {
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

/// Equality with a tolerance for floating point noise in numbers; a set is compared, element
/// by element in its order, with the list the documentation prints for it.
fn same(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        (Value::List(a) | Value::Set(a), Value::List(b)) => {
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

/// Asserts that each expression evaluates to unknown (known only after apply).
fn unknown(scope: &EvalScope, exprs: &[&str]) {
    for expr in exprs {
        let value = evaluate_str(expr, scope).unwrap_or_else(|error| panic!("{expr}: {error}"));
        assert_eq!(value, Value::Unknown, "{expr}");
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
        (
            "matchkeys([\"i-123\", \"i-abc\", \"i-def\"], [\"us-west\", \"us-east\", \"us-east\"], [\"us-east\"])",
            "[\"i-abc\", \"i-def\"]",
        ),
        (
            "matchkeys([\"a\", \"b\", \"c\"], [1, 2, 3], [\"2\", 3])",
            "[\"b\", \"c\"]",
        ), // ours
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
        "matchkeys([\"a\", \"b\"], [1], [1])",
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

#[test]
fn functions_encoding_text_csv_yaml() {
    check(&[
        (
            "csvdecode(\"a,b,c\\n1,2,3\\n4,5,6\")",
            "[{a = \"1\", b = \"2\", c = \"3\"}, {a = \"4\", b = \"5\", c = \"6\"}]",
        ),
        (
            "csvdecode(\"a,b\\r\\n1,\\\"x\\r\\n\\\"\\\"y\\\"\\\"\\\"\\n\\n3,4\")",
            "[{a = \"1\", b = \"x\\n\\\"y\\\"\"}, {a = \"3\", b = \"4\"}]",
        ), // ours: quoted fields, CRLF, empty lines
        ("csvdecode(\"a,b\")", "[]"), // ours
        (
            "textencodebase64(\"Hello World\", \"UTF-16LE\")",
            "\"SABlAGwAbABvACAAVwBvAHIAbABkAA==\"",
        ),
        (
            "textdecodebase64(\"SABlAGwAbABvACAAVwBvAHIAbABkAA==\", \"UTF-16LE\")",
            "\"Hello World\"",
        ),
        (
            "textencodebase64(\"Hello World\", \"UTF-8\")",
            "\"SGVsbG8gV29ybGQ=\"",
        ),
        ("textencodebase64(\"Hé\", \"UTF-16\")", "\"/v8ASADp\""), // ours
        ("textencodebase64(\"Hé\", \"ISO-8859-1\")", "\"SOk=\""), // ours
        ("textencodebase64(\"Hé\", \"windows-1252\")", "\"SOk=\""), // ours
        ("textdecodebase64(\"//5IAOkA\", \"UTF-16\")", "\"Hé\""), // ours
        ("yamldecode(\"hello: world\")", "{hello = \"world\"}"),
        ("yamldecode(\"true\")", "true"),
        (
            "yamldecode(\"{a: &foo [1, 2, 3], b: *foo}\")",
            "{a = [1, 2, 3], b = [1, 2, 3]}",
        ),
        (
            "yamldecode(\"a: 'true'\\nb: yes\\nc: 0x1F\\nd: 1_000\\ne: 2001-12-14\\nf: ~\\ng: 1.5e3\")",
            "{a = \"true\", b = true, c = 31, d = \"1_000\", e = \"2001-12-14T00:00:00Z\", f = null, g = 1500}",
        ), // ours
        ("yamldecode(\"<<: {a: 1}\\nb: 2\")", "{a = 1, b = 2}"), // ours: merge key
        (
            "yamlencode({\"a\":\"b\", \"c\":\"d\"})",
            "\"\\\"a\\\": \\\"b\\\"\\n\\\"c\\\": \\\"d\\\"\\n\"",
        ),
        (
            "yamlencode({\"foo\":[1, 2, 3], \"bar\": \"baz\"})",
            "\"\\\"bar\\\": \\\"baz\\\"\\n\\\"foo\\\":\\n- 1\\n- 2\\n- 3\\n\"",
        ),
        (
            "yamlencode({\"foo\":[1, {\"a\":\"b\",\"c\":\"d\"}, 3], \"bar\": \"baz\"})",
            "\"\\\"bar\\\": \\\"baz\\\"\\n\\\"foo\\\":\\n- 1\\n- \\\"a\\\": \\\"b\\\"\\n  \\\"c\\\": \\\"d\\\"\\n- 3\\n\"",
        ),
        ("yamlencode(1.5)", "\"1.5\\n...\\n\""), // ours
        ("yamlencode([])", "\"[]\\n\""),         // ours
        (
            "yamlencode({a = \"x\\ny\", b = \"t\\tab\\nx\"})",
            "\"\\\"a\\\": |-\\n  x\\n  y\\n\\\"b\\\": \\\"t\\\\tab\\\\nx\\\"\\n\"",
        ), // ours: literal block unless a tab forbids it
        (
            "base64gzip(\"hello world\")",
            "\"H4sIAAAAAAAA/8pIzcnJVyjPL8pJAQAAAP//AQAA//+FEUoNCwAAAA==\"",
        ), // ours: what terraform console gives
    ]);
    fails(&[
        "yamldecode(\"{a: &foo [1, *foo, 3]}\")",
        "yamldecode(\"{a: !not-supported foo}\")",
        "yamldecode(\"---\\na\\n---\\nb\")",
        "csvdecode(\"\")",
        "csvdecode(\"a,b\\n1,2,3\")",
        "csvdecode(\"a,b\\n1\\\"2,3\")",
        "csvdecode(\"a,a\\n1,2\")",
        "textencodebase64(\"€\", \"ISO-8859-1\")",
        "textencodebase64(\"x\", \"bogus\")",
    ]);
}

#[test]
fn functions_date_and_time() {
    check(&[
        (
            "formatdate(\"DD MMM YYYY hh:mm ZZZ\", \"2018-01-02T23:12:01Z\")",
            "\"02 Jan 2018 23:12 UTC\"",
        ),
        (
            "formatdate(\"EEEE, DD-MMM-YY hh:mm:ss ZZZ\", \"2018-01-02T23:12:01Z\")",
            "\"Tuesday, 02-Jan-18 23:12:01 UTC\"",
        ),
        (
            "formatdate(\"EEE, DD MMM YYYY hh:mm:ss ZZZ\", \"2018-01-02T23:12:01-08:00\")",
            "\"Tue, 02 Jan 2018 23:12:01 -0800\"",
        ),
        (
            "formatdate(\"MMM DD, YYYY\", \"2018-01-02T23:12:01Z\")",
            "\"Jan 02, 2018\"",
        ),
        (
            "formatdate(\"HH:mmaa\", \"2018-01-02T23:12:01Z\")",
            "\"11:12pm\"",
        ),
        (
            "formatdate(\"h'h'mm\", \"2018-01-02T23:12:01-08:00\")",
            "\"23h12\"",
        ),
        (
            "formatdate(\"H 'o''clock'\", \"2018-01-02T23:12:01-08:00\")",
            "\"11 o'clock\"",
        ),
        (
            "formatdate(\"YYYY-MM-DD'T'hh:mm:ssZ\", \"2018-01-02T03:04:05+05:30\")",
            "\"2018-01-02T03:04:05+05:30\"",
        ), // ours
        (
            "timeadd(\"2017-11-22T00:00:00Z\", \"10m\")",
            "\"2017-11-22T00:10:00Z\"",
        ),
        (
            "timeadd(\"2024-08-16T12:45:05Z\", \"-10m\")",
            "\"2024-08-16T12:35:05Z\"",
        ),
        (
            "timeadd(\"2017-11-22T00:00:00+01:00\", \"1h30m0.5s\")",
            "\"2017-11-22T01:30:00+01:00\"",
        ), // ours
        (
            "timecmp(\"2017-11-22T00:00:00Z\", \"2017-11-22T00:00:00Z\")",
            "0",
        ),
        (
            "timecmp(\"2017-11-22T00:00:00Z\", \"2017-11-22T01:00:00Z\")",
            "-1",
        ),
        (
            "timecmp(\"2017-11-22T01:00:00Z\", \"2017-11-22T00:00:00Z\")",
            "1",
        ),
        (
            "timecmp(\"2017-11-22T01:00:00Z\", \"2017-11-22T00:00:00-01:00\")",
            "0",
        ),
    ]);
    fails(&[
        "formatdate(\"Y\", \"2018-01-02T03:04:05Z\")",
        "formatdate(\"'abc\", \"2018-01-02T03:04:05Z\")",
        "timeadd(\"2017-11-22t00:00:00Z\", \"1s\")",
        "timeadd(\"2017-11-22T00:00:00Z\", \"1\")",
        "timecmp(\"2017-11-22\", \"2017-11-22T00:00:00Z\")",
    ]);
    unknown(&EvalScope::new("."), &["plantimestamp()", "timestamp()"]);
}

#[test]
fn functions_crypto() {
    check(&[
        (
            "uuidv5(\"dns\", \"www.terraform.io\")",
            "\"a5008fae-b28c-5ba5-96cd-82b4c53552d6\"",
        ),
        (
            "uuidv5(\"url\", \"https://www.terraform.io/\")",
            "\"9db6f67c-dd95-5ea0-aa5b-e70e5c5f7cf5\"",
        ),
        (
            "uuidv5(\"oid\", \"1.3.6.1.4\")",
            "\"af9d40a5-7a36-5c07-b23a-851cd99fbfa5\"",
        ),
        (
            "uuidv5(\"x500\", \"CN=Example,C=GB\")",
            "\"84e09961-4aa4-57f8-95b7-03edb1073253\"",
        ),
        (
            "uuidv5(\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\", \"www.terraform.io\")",
            "\"a5008fae-b28c-5ba5-96cd-82b4c53552d6\"",
        ),
        (
            "uuidv5(\"743ac3c0-3bf7-4a5b-9e6c-59360447c757\", \"LIBS:diskfont.library\")",
            "\"ede1a974-df7e-5f17-84b9-76208818b2c8\"",
        ),
        (
            "uuidv5(\"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}\", \"a\")",
            "\"4f3f2898-69e3-5a0d-820a-c4e87987dbce\"",
        ), // ours
    ]);
    fails(&[
        "uuidv5(\"bogus\", \"a\")",
        "bcrypt(\"a\", 32)",
        "rsadecrypt(\"!!\", \"x\")",
    ]);
    unknown(
        &EvalScope::new("."),
        &["bcrypt(\"hello world\")", "bcrypt(\"a\", 4)"],
    );
}

/// A 1024-bit RSA key (PKCS #1 PEM) made for these tests, and "Hello, world!" encrypted to it
/// with PKCS #1 v1.5 padding.
const TEST_RSA_KEY: &str = include_str!("fixtures/rsa_test_key.pem");
/// See [`TEST_RSA_KEY`].
const TEST_RSA_CIPHERTEXT: &str = "maXAXxk1VTkS/algwvMfHJ9/RWq9sDsgABauL9g/anZIeWSH/S8xvqJzeV7JndkHuNOos2bCg0y+rT+lUhEi74Evgvlt9BL8v0NHtaDvWDe70fSbcK6VtjeK5heWNqyjs3O5obr07e7Ky5XUPq0TIybHOmLyCbGWoW/jFDfOOq0=";

#[test]
fn functions_filesystem_and_file_hashes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("files/hello.txt", "hello world");
    write("files/world.txt", "world");
    write("files/subdirectory/anotherfile.txt", "x");
    write("privatekey.pem", TEST_RSA_KEY);
    let ciphertext = base64_decode(TEST_RSA_CIPHERTEXT);
    std::fs::write(dir.path().join("ciphertext"), ciphertext).expect("write");
    let scope = EvalScope::new(dir.path());
    check_in(
        &scope,
        &[
            (
                "fileset(path.module, \"files/*.txt\")",
                "[\"files/hello.txt\", \"files/world.txt\"]",
            ),
            (
                "fileset(path.module, \"files/{hello,world}.txt\")",
                "[\"files/hello.txt\", \"files/world.txt\"]",
            ),
            (
                "fileset(\"${path.module}/files\", \"*\")",
                "[\"hello.txt\", \"world.txt\"]",
            ),
            (
                "fileset(\"${path.module}/files\", \"**\")",
                "[\"hello.txt\", \"subdirectory/anotherfile.txt\", \"world.txt\"]",
            ),
            ("fileset(\"files\", \"[^h]*\")", "[\"world.txt\"]"), // ours: relative path
            ("fileset(\"nowhere\", \"*\")", "[]"),                // ours
            (
                "rsadecrypt(filebase64(\"${path.module}/ciphertext\"), file(\"privatekey.pem\"))",
                "\"Hello, world!\"",
            ),
            // The file hashes equal the string hashes' documented values for "hello world".
            (
                "filemd5(\"files/hello.txt\")",
                "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"",
            ),
            (
                "filesha1(\"files/hello.txt\")",
                "\"2aae6c35c94fcfb415dbe95f408b9ce91ee846ed\"",
            ),
            (
                "filesha256(\"files/hello.txt\")",
                "\"b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9\"",
            ),
            (
                "filesha512(\"files/hello.txt\")",
                "\"309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f989dd35bc5ff499670da34255b45b0cfd830e81f605dcf7dc5542e93ae9cd76f\"",
            ),
            (
                "filebase64sha256(\"files/hello.txt\")",
                "\"uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=\"",
            ),
            (
                "filebase64sha512(\"files/hello.txt\")",
                "\"MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw==\"",
            ),
            ("pathexpand(\"/etc/resolv.conf\")", "\"/etc/resolv.conf\""),
        ],
    );
    let home = std::env::home_dir().expect("home directory");
    let expanded = evaluate_str("pathexpand(\"~/.ssh/id_rsa\")", &scope).expect("pathexpand");
    assert_eq!(
        expanded,
        Value::String(format!("{}/.ssh/id_rsa", home.display()))
    );
    assert!(evaluate_str("pathexpand(\"~steve/x\")", &scope).is_err());
    assert!(evaluate_str("filemd5(\"missing.txt\")", &scope).is_err());
}

fn base64_decode(text: &str) -> Vec<u8> {
    let scope = EvalScope::new(".");
    // No base64 crate in the tests: decode through textdecodebase64's ISO-8859-1 bytes.
    let expr = format!("textdecodebase64(\"{text}\", \"ISO-8859-1\")");
    match evaluate_str(&expr, &scope) {
        Ok(Value::String(latin1)) => latin1.chars().map(|ch| ch as u8).collect(),
        other => panic!("cannot decode base64: {other:?}"),
    }
}

#[test]
fn functions_sensitivity_ephemerality_and_templatestring() {
    let scope = EvalScope::new(".")
        .with_local("template", "Hello, ${name}!")
        .with_variable("secret", "s3cr3t");
    check_in(
        &scope,
        &[
            ("issensitive(sensitive(\"secret\"))", "true"),
            ("issensitive(\"hello\")", "false"),
            ("issensitive(1)", "false"),
            ("issensitive(nonsensitive(sensitive(1)))", "false"), // ours
            ("ephemeralasnull(\"Hello World\")", "\"Hello World\""),
            ("ephemeralasnull([4, {a = 1}])", "[4, {a = 1}]"), // ours
            (
                "templatestring(local.template, {name = \"Ander\"})",
                "\"Hello, Ander!\"",
            ),
            ("core::upper(\"a\")", "\"A\""), // ours: the core:: namespace
        ],
    );
    // Whether a variable is sensitive is not known here.
    unknown(&scope, &["issensitive(var.secret)"]);
    for expr in [
        "templatestring(\"Hello, $${name}\", {name = \"x\"})",
        "templatestring(lower(local.template), {name = \"x\"})",
        "templatestring(local.template, {})",
        "other::upper(\"a\")",
    ] {
        assert!(evaluate_str(expr, &scope).is_err(), "{expr} should fail");
    }
}

#[test]
fn functions_builtin_provider() {
    check(&[
        (
            "provider::terraform::encode_tfvars({example = \"Hello!\"})",
            "\"example = \\\"Hello!\\\"\\n\"",
        ),
        (
            "provider::terraform::decode_tfvars(\"example = \\\"Hello!\\\"\\n\")",
            "{example = \"Hello!\"}",
        ),
        // ours: the documentation's tfe_variable values.
        (
            "provider::terraform::encode_expr(\"Hello\")",
            "\"\\\"Hello\\\"\"",
        ),
        (
            "provider::terraform::encode_expr([\"A\", \"B\"])",
            "\"[\\\"A\\\", \\\"B\\\"]\"",
        ),
        // ours: sorted names, `=` aligned in runs of one-line attributes, one indent per line
        // that leaves brackets open, template sequences escaped.
        (
            "provider::terraform::encode_tfvars({region = \"us-east-1\", ports = [80, 443], tags = {Name = \"x\", \"a b\" = 1.5}, s = \"$${x}\"})",
            "\"ports  = [80, 443]\\nregion = \\\"us-east-1\\\"\\ns      = \\\"$$${x}\\\"\\ntags = {\\n  Name  = \\\"x\\\"\\n  \\\"a b\\\" = 1.5\\n}\\n\"",
        ),
        (
            "provider::terraform::encode_expr([{a = 1}, {bb = [true]}])",
            "\"[{\\n  a = 1\\n  }, {\\n  bb = [true]\\n}]\"",
        ),
        (
            "provider::terraform::decode_tfvars(\"a = 1 + 2\\nb = [\\\"x\\\", true]\")",
            "{a = 3, b = [\"x\", true]}",
        ),
    ]);
    fails(&[
        "provider::terraform::encode_tfvars({\"a b\" = 1})",
        "provider::terraform::encode_tfvars([1])",
        "provider::terraform::encode_expr(null)",
        "provider::terraform::decode_tfvars(\"a = upper(\\\"x\\\")\")",
        "provider::terraform::decode_tfvars(\"b {}\")",
        "provider::other::encode_expr(1)",
        "encode_expr(1)",
    ]);
}
