//! Numeric functions.

use super::{Value, list_arg, number, number_arg, number_value};

/// `abs(number)`: the number without its sign.
pub(super) fn abs(args: &[Value]) -> Result<Value, String> {
    number_value(number_arg(args, 0)?.abs())
}

/// `ceil(number)`: the closest whole number not less than the number.
pub(super) fn ceil(args: &[Value]) -> Result<Value, String> {
    number_value(number_arg(args, 0)?.ceil())
}

/// `floor(number)`: the closest whole number not greater than the number.
pub(super) fn floor(args: &[Value]) -> Result<Value, String> {
    number_value(number_arg(args, 0)?.floor())
}

/// All the arguments as numbers.
fn numbers(args: &[Value]) -> Result<Vec<f64>, String> {
    (0..args.len())
        .map(|index| number_arg(args, index))
        .collect()
}

/// `min(numbers...)`: the smallest number.
pub(super) fn min(args: &[Value]) -> Result<Value, String> {
    number_value(numbers(args)?.into_iter().fold(f64::INFINITY, f64::min))
}

/// `max(numbers...)`: the greatest number.
pub(super) fn max(args: &[Value]) -> Result<Value, String> {
    number_value(numbers(args)?.into_iter().fold(f64::NEG_INFINITY, f64::max))
}

/// `sum(list)`: the sum of a non-empty list of numbers.
pub(super) fn sum(args: &[Value]) -> Result<Value, String> {
    let items = list_arg(args, 0)?;
    if items.is_empty() {
        return Err("cannot sum an empty list".to_owned());
    }
    let total = items
        .iter()
        .map(|item| number(item).ok_or("sum takes a list of numbers"))
        .sum::<Result<f64, _>>()?;
    number_value(total)
}

/// The most elements `range` makes, as Terraform limits it.
const RANGE_LIMIT: usize = 1024;

/// `range(limit)`, `range(start, limit)`, `range(start, limit, step)`: the numbers from
/// `start` (default 0) towards `limit`, excluded, by `step` (default 1, or -1 when `start` is
/// greater than `limit`).
pub(super) fn range(args: &[Value]) -> Result<Value, String> {
    let bounds = numbers(args)?;
    let (start, limit) = match bounds[..] {
        [limit] => (0.0, limit),
        [start, limit, ..] => (start, limit),
        [] => return Err("range takes 1 to 3 arguments".to_owned()),
    };
    let default_step = if start > limit { -1.0 } else { 1.0 };
    let step = bounds.get(2).copied().unwrap_or(default_step);
    if step == 0.0 || (step > 0.0) != (start <= limit) {
        return Err(format!("the step {step} cannot go from {start} to {limit}"));
    }
    let mut items = Vec::new();
    let mut current = start;
    while (step > 0.0 && current < limit) || (step < 0.0 && current > limit) {
        if items.len() == RANGE_LIMIT {
            return Err(format!("range cannot make more than {RANGE_LIMIT} numbers"));
        }
        items.push(number_value(current)?);
        current = start + step * items.len() as f64;
    }
    Ok(Value::Array(items))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_unknown, fails};

    #[test]
    fn abs_ceil_and_floor() {
        // Documentation: abs(23) is 23, abs(0) is 0, abs(-12.4) is 12.4; ceil(5) is 5,
        // ceil(5.1) is 6; floor(5) is 5, floor(4.9) is 4.
        check("abs(23)", "23");
        check("abs(0)", "0");
        check("abs(-12.4)", "12.4");
        check("ceil(5)", "5");
        check("ceil(5.1)", "6");
        check("floor(5)", "5");
        check("floor(4.9)", "4");
        check(r#"floor("4.9")"#, "4");
        fails(r#"abs("x")"#, "argument 1 must be a number");
        check_unknown("ceil(u)");
    }

    #[test]
    fn min_max_and_sum() {
        // Documentation: max(12, 54, 3) is 54, max([12, 54, 3]...) is 54, min(12, 54, 3) is
        // 3; sum([10, 13, 6, 4.5]) is 33.5.
        check("max(12, 54, 3)", "54");
        check("max([12, 54, 3]...)", "54");
        check("min(12, 54, 3)", "3");
        check("min(1.5, -2)", "-2");
        check("sum([10, 13, 6, 4.5])", "33.5");
        fails("sum([])", "empty list");
        check_unknown("max(1, u)");
        check_unknown("sum([1, u])");
    }

    #[test]
    fn range_counts_towards_the_limit() {
        // Documentation examples of range.
        check("range(3)", "[0, 1, 2]");
        check("range(1, 4)", "[1, 2, 3]");
        check("range(1, 8, 2)", "[1, 3, 5, 7]");
        check("range(1, 4, 0.5)", "[1, 1.5, 2, 2.5, 3, 3.5]");
        check("range(4, 1)", "[4, 3, 2]");
        check("range(10, 5, -2)", "[10, 8, 6]");
        check("range(0)", "[]");
        fails("range(1, 4, -1)", "cannot go");
        fails("range(2000)", "more than 1024");
        check_unknown("range(u)");
    }
}
