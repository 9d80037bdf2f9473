//! The evaluator around the functions: references, lazy `try`/`can`, unknown values,
//! templates, `for` expressions and the file functions.

use std::collections::BTreeMap;

use reconciler::terraform::functions::{EvalError, EvalScope, Value, evaluate_str};

fn object(entries: &[(&str, Value)]) -> Value {
    Value::Object(
        entries
            .iter()
            .map(|(key, value)| (key.to_string(), value.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn scope() -> EvalScope {
    EvalScope::new("/work/infra")
        .in_module("modules/net")
        .with_variable("name", "web")
        .with_variable("tags", object(&[("env", "prod".into())]))
        .with_variable("ports", Value::from(vec![80.0, 443.0]))
        .with_local("cidr", "10.0.0.0/16")
        .with_resource(
            "aws_vpc.main",
            object(&[
                ("id", "vpc-123".into()),
                ("cidr_block", "10.0.0.0/16".into()),
            ]),
        )
        .with_resource("data.aws_ami.ubuntu", object(&[("id", "ami-1".into())]))
}

fn eval(expr: &str) -> Value {
    evaluate_str(expr, &scope()).unwrap_or_else(|error| panic!("{expr}: {error}"))
}

#[test]
fn functions_references() {
    assert_eq!(eval("var.name"), Value::from("web"));
    assert_eq!(eval("var.tags.env"), Value::from("prod"));
    assert_eq!(eval("var.tags[\"env\"]"), Value::from("prod"));
    assert_eq!(eval("var.ports[1]"), Value::Number(443.0));
    assert_eq!(
        eval("cidrsubnet(local.cidr, 8, 2)"),
        Value::from("10.0.2.0/24")
    );
    assert_eq!(eval("aws_vpc.main.id"), Value::from("vpc-123"));
    assert_eq!(eval("data.aws_ami.ubuntu.id"), Value::from("ami-1"));
    // Terraform's values: relative to the working directory, `path.cwd` absolute.
    assert_eq!(eval("path.module"), Value::from("modules/net"));
    assert_eq!(eval("path.root"), Value::from("."));
    assert_eq!(eval("path.cwd"), Value::from("/work/infra"));
    assert_eq!(
        eval("\"${var.name}-${length(var.ports)}\""),
        Value::from("web-2")
    );
    assert_eq!(
        eval("var.ports[0] > 10 ? \"big\" : \"small\""),
        Value::from("big")
    );
    assert_eq!(
        eval("[for p in var.ports : p * 2]"),
        Value::from(vec![160.0, 886.0])
    );
    assert_eq!(
        eval("{for k, v in var.tags : upper(k) => v}"),
        object(&[("ENV", "prod".into())])
    );
    assert_eq!(
        eval("[for p in var.ports : p if p > 100]"),
        Value::from(vec![443.0])
    );
    assert_eq!(
        eval("{for s in [\"a\", \"ab\", \"b\"] : substr(s, 0, 1) => s...}"),
        object(&[
            ("a", Value::from(vec!["a", "ab"])),
            ("b", Value::from(vec!["b"]))
        ])
    );
    assert_eq!(eval("[{a = 1}, {a = 2}][*].a"), Value::from(vec![1.0, 2.0]));
    assert_eq!(
        eval("\"%{ for p in var.ports ~}${p},%{ endfor ~}\""),
        Value::from("80,443,")
    );
    assert_eq!(
        eval("\"%{ if var.name == \"web\" }yes%{ else }no%{ endif }\""),
        Value::from("yes")
    );
}

#[test]
fn functions_reference_errors() {
    for expr in [
        "var.missing",
        "local.missing",
        "lcoal.x",
        "nosuchfunc(1)",
        "var.tags.missing",
        "var.ports[5]",
        "1 / 0",
    ] {
        assert!(evaluate_str(expr, &scope()).is_err(), "{expr} should fail");
    }
    assert!(
        matches!(evaluate_str("nosuchfunc(1)", &scope()), Err(EvalError::UnknownFunction(name)) if name == "nosuchfunc")
    );
}

#[test]
fn functions_try_and_can_are_lazy() {
    assert_eq!(
        eval("try(var.tags.missing, \"fallback\")"),
        Value::from("fallback")
    );
    assert_eq!(eval("try(var.tags.env, \"fallback\")"), Value::from("prod"));
    assert_eq!(
        eval("try(tonumber(\"x\"), jsondecode(\"{\"), 3)"),
        Value::Number(3.0)
    );
    // The second argument would fail, but is never evaluated once the first succeeds.
    assert_eq!(
        eval("try(\"first\", file(\"no-such-file\"))"),
        Value::from("first")
    );
    assert_eq!(
        eval("can(regex(\"^ami-\", \"ami-123\"))"),
        Value::Bool(true)
    );
    assert_eq!(
        eval("can(regex(\"^ami-\", \"img-123\"))"),
        Value::Bool(false)
    );
    assert_eq!(eval("can(var.missing)"), Value::Bool(false));
    assert_eq!(
        eval("[for p in var.ports : p if can(p > 100)]"),
        Value::from(vec![80.0, 443.0])
    );
    assert!(evaluate_str("try(var.missing, local.missing)", &scope()).is_err());
    assert!(evaluate_str("can(1, 2)", &scope()).is_err());
}

#[test]
fn functions_unknown_propagation() {
    // Not in state at all, or an attribute the state lacks: known only after apply.
    assert_eq!(eval("aws_instance.web.id"), Value::Unknown);
    assert_eq!(eval("aws_vpc.main.arn"), Value::Unknown);
    assert_eq!(eval("aws_instance.web[0].id"), Value::Unknown);
    assert_eq!(eval("timestamp()"), Value::Unknown);
    assert_eq!(eval("uuid()"), Value::Unknown);
    // Functions, operators, templates and conditionals over an unknown are unknown.
    assert_eq!(eval("upper(aws_instance.web.id)"), Value::Unknown);
    assert_eq!(
        eval("cidrsubnet(aws_vpc.main.cidr_block, 8, aws_instance.web.count)"),
        Value::Unknown
    );
    assert_eq!(eval("\"arn:${aws_instance.web.arn}\""), Value::Unknown);
    assert_eq!(eval("aws_instance.web.count + 1"), Value::Unknown);
    assert_eq!(eval("aws_instance.web.on ? 1 : 2"), Value::Unknown);
    assert_eq!(
        eval("join(\",\", [\"a\", aws_instance.web.id])"),
        Value::Unknown
    );
    assert_eq!(eval("[for x in aws_instance.web.ids : x]"), Value::Unknown);
    // Structural functions keep what is known.
    assert_eq!(
        eval("length([aws_instance.web.id, \"b\"])"),
        Value::Number(2.0)
    );
    assert_eq!(
        eval("merge(var.tags, {Name = aws_instance.web.id})"),
        object(&[("Name", Value::Unknown), ("env", "prod".into())])
    );
    assert_eq!(
        eval("concat([aws_instance.web.id], [\"x\"])"),
        Value::List(vec![Value::Unknown, "x".into()])
    );
    assert_eq!(eval("length(aws_instance.web.ids)"), Value::Unknown);
    // flatten keeps an object with an unknown attribute; an unknown element might be a list.
    assert_eq!(
        eval("flatten([[{k = aws_instance.web.id}], []])"),
        Value::List(vec![object(&[("k", Value::Unknown)])])
    );
    assert_eq!(
        eval("flatten([[\"a\"], aws_instance.web.ids])"),
        Value::Unknown
    );
    // try returns an unknown first argument; can of an unknown is unknown.
    assert_eq!(eval("try(aws_instance.web.id, \"x\")"), Value::Unknown);
    assert_eq!(eval("can(aws_instance.web.id)"), Value::Unknown);
    assert!(Value::List(vec![Value::Unknown]).contains_unknown());
}

#[test]
fn functions_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("hello.txt"), "Hello World").expect("write");
    std::fs::write(
        dir.path().join("backends.tftpl"),
        "%{ for addr in ip_addrs ~}\nbackend ${addr}:${port}\n%{ endfor ~}\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("binary.bin"), [0xff, 0xfe]).expect("write");
    let scope = EvalScope::new(dir.path());
    let eval = |expr: &str| evaluate_str(expr, &scope);
    assert_eq!(
        eval("file(\"hello.txt\")").expect("file"),
        Value::from("Hello World")
    );
    assert_eq!(
        eval("file(\"${path.module}/hello.txt\")").expect("file"),
        Value::from("Hello World")
    );
    assert_eq!(
        eval("filebase64(\"hello.txt\")").expect("filebase64"),
        Value::from("SGVsbG8gV29ybGQ=")
    );
    assert_eq!(
        eval("fileexists(\"hello.txt\")").expect("fileexists"),
        Value::Bool(true)
    );
    assert_eq!(
        eval("fileexists(\"nope.txt\")").expect("fileexists"),
        Value::Bool(false)
    );
    // templatefile: the example from its documentation page.
    assert_eq!(
        eval("templatefile(\"backends.tftpl\", { port = 8080, ip_addrs = [\"10.0.0.1\", \"10.0.0.2\"] })").expect("templatefile"),
        Value::from("backend 10.0.0.1:8080\nbackend 10.0.0.2:8080\n")
    );
    assert_eq!(eval("templatefile(\"backends.tftpl\", { port = 8080, ip_addrs = aws_instance.web.*.private_ip })").expect("unknown"), Value::Unknown);
    let missing = eval("file(\"missing.txt\")")
        .expect_err("missing file")
        .to_string();
    assert!(missing.contains("missing.txt"), "{missing}");
    let binary = eval("file(\"binary.bin\")")
        .expect_err("binary file")
        .to_string();
    assert!(binary.contains("binary.bin"), "{binary}");
    assert!(eval("fileexists(\".\")").is_err());
}
