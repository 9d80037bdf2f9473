//! Keys dropped from a block's `for_each` without touching the collection it iterates, which
//! other blocks may share: `for_each = { for k, v in EXPR : k => v if k != "api" }`, or
//! `setsubtract(toset(...), ["api"])` for a set built with `toset`; a `for` expression of the
//! block's own (`{ for d in X : d.name => ... }`) gets `d.name != "api"` in its condition. A
//! filter written before gets the new key added, so repeated deletions keep one condition.

use super::EditError;
use super::instance::is_call;
use super::locate::{Place, literal, span_of};
use super::ops::{self, Doc};
use super::render;
use super::tags::without_text;
use super::value::Value;
use hcl::edit::expr::{BinaryOperator, Expression, ForExpr, UnaryOperator};

/// Drops `keys` from the `for_each` expression `expr`; false when every key is dropped already.
pub fn drop_keys(
    doc: &mut Doc,
    expr: &Expression,
    place: &Place,
    keys: &[String],
) -> Result<bool, EditError> {
    if let Expression::ForExpr(filter) = expr
        && let Some(dropped) = dropped_keys(filter)
    {
        let mut all = dropped.clone();
        all.extend(keys.iter().filter(|k| !dropped.contains(k)).cloned());
        if all.len() == dropped.len() {
            return Ok(false);
        }
        let inner = span_of(&filter.intro.collection_expr, place)?;
        let text = without_text(&doc.text[inner], &all);
        doc.splice(span_of(expr, place)?, &text);
        return Ok(true);
    }
    if let Expression::ForExpr(f) = expr
        && let Some(key_expr) = &f.key_expr
        && !f.grouping
    {
        return narrow_for(doc, f, key_expr, place, keys);
    }
    if let Expression::FuncCall(call) = expr
        && is_call(call, "setsubtract")
        && let Some(Expression::Array(list)) = call.args.iter().nth(1)
    {
        let quoted: Vec<String> = keys.iter().map(|k| render::quoted(k)).collect();
        return ops::append_to_list(doc, list, place, &quoted);
    }
    let span = span_of(expr, place)?;
    let original = doc.text[span.clone()].to_owned();
    let text = match expr {
        Expression::FuncCall(call) if is_call(call, "toset") => {
            let quoted: Vec<String> = keys.iter().map(|k| render::quoted(k)).collect();
            format!("setsubtract({original}, [{}])", quoted.join(", "))
        }
        _ => without_text(&original, keys),
    };
    doc.splice(span, &text);
    Ok(true)
}

/// A `{ for x in EXPR : KEY => ... }` of the block's own gets `KEY != "a"` in its condition.
fn narrow_for(
    doc: &mut Doc,
    f: &ForExpr,
    key_expr: &Expression,
    place: &Place,
    keys: &[String],
) -> Result<bool, EditError> {
    let key = doc.text[span_of(key_expr, place)?].to_owned();
    let current = match &f.cond {
        Some(cond) => doc.text[span_of(&cond.expr, place)?].to_owned(),
        None => String::new(),
    };
    let tests: Vec<String> = keys
        .iter()
        .map(|k| format!("{key} != {}", render::quoted(k)))
        .filter(|test| !current.contains(test.as_str()))
        .collect();
    if tests.is_empty() {
        return Ok(false);
    }
    let tests = tests.join(" && ");
    match &f.cond {
        None => {
            let end = span_of(&f.value_expr, place)?.end;
            doc.splice(end..end, &format!(" if {tests}"));
        }
        Some(cond) => {
            let old = match &cond.expr {
                Expression::BinaryOp(op) if *op.operator.value() == BinaryOperator::Or => {
                    format!("({current})")
                }
                _ => current,
            };
            doc.splice(span_of(&cond.expr, place)?, &format!("{old} && {tests}"));
        }
    }
    Ok(true)
}

/// The keys a `{ for k, v in EXPR : k => v if k != "a" }` (or `!contains([...], k)`) filter
/// drops; None when the expression is any other `for`.
fn dropped_keys(f: &ForExpr) -> Option<Vec<String>> {
    let is_var =
        |e: &Expression, name: &str| matches!(e, Expression::Variable(v) if v.as_str() == name);
    let shape = f.intro.key_var.as_ref().is_some_and(|k| k.as_str() == "k")
        && f.intro.value_var.as_str() == "v"
        && f.key_expr.as_ref().is_some_and(|e| is_var(e, "k"))
        && is_var(&f.value_expr, "v")
        && !f.grouping;
    if !shape {
        return None;
    }
    let strings = |e: &Expression| match literal(e)? {
        Value::String(s) => Some(vec![s]),
        Value::List(items) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => None,
    };
    match &f.cond.as_ref()?.expr {
        Expression::BinaryOp(op)
            if *op.operator.value() == BinaryOperator::NotEq && is_var(&op.lhs_expr, "k") =>
        {
            strings(&op.rhs_expr)
        }
        Expression::UnaryOp(op) if *op.operator.value() == UnaryOperator::Not => {
            let Expression::FuncCall(call) = &op.expr else {
                return None;
            };
            let args: Vec<&Expression> = call.args.iter().collect();
            match args.as_slice() {
                [list @ Expression::Array(_), k] if is_call(call, "contains") && is_var(k, "k") => {
                    strings(list)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn for_expr(text: &str) -> Box<ForExpr> {
        match hcl::edit::parser::parse_expr(text).expect("parses") {
            Expression::ForExpr(f) => f,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn filters_written_before_are_recognised_with_their_keys() {
        assert_eq!(
            dropped_keys(&for_expr(r#"{ for k, v in var.x : k => v if k != "a" }"#)),
            Some(vec!["a".to_owned()])
        );
        assert_eq!(
            dropped_keys(&for_expr(
                r#"{ for k, v in var.x : k => v if !contains(["a", "b"], k) }"#
            )),
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
        // Other for expressions are wrapped, never rewritten.
        for other in [
            r#"{ for k, v in var.x : k => v if v.enabled }"#,
            r#"{ for k, v in var.x : upper(k) => v if k != "a" }"#,
            r#"{ for name, v in var.x : name => v if name != "a" }"#,
        ] {
            assert_eq!(dropped_keys(&for_expr(other)), None, "{other}");
        }
    }
}
