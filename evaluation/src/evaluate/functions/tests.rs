//! Helpers for the functions' tests (expressions written as in Terraform's documentation) and
//! the tests of the library's declaration and unknown values.

use super::{contains_unknown, declare, is_unknown, unknown};
use hcl::eval::{Context, Evaluate};
use hcl::{Expression, Value};

/// Evaluates an HCL expression with the library declared and `u` an unknown value.
pub(super) fn eval(expression: &str) -> Result<Value, String> {
    let mut ctx = Context::new();
    declare(&mut ctx);
    ctx.declare_var("u", unknown());
    let parsed: Expression = expression
        .parse()
        .map_err(|err| format!("{expression}: {err}"))?;
    parsed.evaluate(&ctx).map_err(|err| err.to_string())
}

/// Asserts that `expression` evaluates to the value of the literal `expected`.
#[track_caller]
pub(super) fn check(expression: &str, expected: &str) {
    let want = eval(expected).unwrap_or_else(|err| panic!("expected {expected}: {err}"));
    match eval(expression) {
        Ok(got) => assert_eq!(got, want, "{expression}"),
        Err(err) => panic!("{expression} failed: {err}"),
    }
}

/// Asserts that `expression` evaluates to the string `expected`.
#[track_caller]
pub(super) fn check_text(expression: &str, expected: &str) {
    match eval(expression) {
        Ok(got) => assert_eq!(got, Value::from(expected), "{expression}"),
        Err(err) => panic!("{expression} failed: {err}"),
    }
}

/// Asserts that `expression` fails with a message containing `fragment`.
#[track_caller]
pub(super) fn fails(expression: &str, fragment: &str) {
    match eval(expression) {
        Ok(got) => panic!("{expression} gave {got:?}, expected an error"),
        Err(err) => assert!(err.contains(fragment), "{expression}: {err}"),
    }
}

/// Asserts that `expression` evaluates to an unknown value.
#[track_caller]
pub(super) fn check_unknown(expression: &str) {
    match eval(expression) {
        Ok(got) => assert!(is_unknown(&got), "{expression} gave {got:?}"),
        Err(err) => panic!("{expression} failed: {err}"),
    }
}

#[test]
fn unknown_is_detected_inside_strings_lists_and_objects() {
    assert!(is_unknown(&unknown()));
    assert!(!is_unknown(&Value::from("(known after apply)")));
    check_unknown(r#""arn:${u}/x""#);
    assert!(contains_unknown(
        &eval("[1, {a = [u]}]").unwrap_or_default()
    ));
    assert!(contains_unknown(&eval("{(u) = 1}").unwrap_or_default()));
    assert!(!contains_unknown(
        &eval(r#"[1, {a = ["x"]}]"#).unwrap_or_default()
    ));
}

#[test]
fn an_unknown_argument_makes_the_result_unknown() {
    check_unknown(r#"upper(u)"#);
    check_unknown(r#"join(",", ["a", u])"#);
    check_unknown(r#"jsonencode({a = [u]})"#);
}

#[test]
fn the_arity_is_checked() {
    fails(
        r#"upper("a", "b")"#,
        "expected 1 positional arguments, got 2",
    );
    fails(
        r#"lookup({}, "a", 1, 2)"#,
        "expected at most 3 arguments, got 4",
    );
}

#[test]
fn every_function_the_projects_use_is_declared() {
    let names = "abs alltrue anytrue base64decode base64encode base64sha256 basename ceil \
        chunklist cidrhost cidrsubnet coalesce coalescelist compact concat contains dirname \
        distinct element endswith file filebase64 filebase64sha256 filemd5 filesha256 flatten \
        floor format formatdate formatlist index join jsondecode jsonencode keys length lookup \
        lower matchkeys max md5 merge min nonsensitive one range regex regexall replace \
        reverse sensitive setintersection setproduct setsubtract setunion sha256 slice sort \
        split startswith strrev substr sum timestamp title tobool tolist tomap tonumber toset \
        tostring transpose trim trimprefix trimspace trimsuffix upper urlencode uuid values \
        yamlencode zipmap";
    for name in names.split_whitespace() {
        if let Err(err) = eval(&format!("{name}()")) {
            assert!(!err.contains("undefined function"), "{name}: {err}");
        }
    }
    fails("nosuchfunction()", "undefined function");
}
