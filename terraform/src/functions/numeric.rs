//! Numeric functions: `abs`, `ceil`, `floor`, `min`, `max`, `sum`, `pow`, `parseint`, ...

use super::{Builtin, Call, EvalError, Value};

/// The numeric functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("abs", 1, abs),
    Builtin::fixed("ceil", 1, ceil),
    Builtin::fixed("floor", 1, floor),
    Builtin::fixed("log", 2, log),
    Builtin::between("max", 1, None, max),
    Builtin::between("min", 1, None, min),
    Builtin::fixed("parseint", 2, parseint),
    Builtin::fixed("pow", 2, pow),
    Builtin::fixed("signum", 1, signum),
    Builtin::fixed("sum", 1, sum),
];

fn abs(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(call.number(0)?.abs()))
}

fn ceil(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(call.number(0)?.ceil()))
}

fn floor(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(call.number(0)?.floor()))
}

fn signum(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(call.integer(0)?.signum() as f64))
}

fn pow(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(call.number(0)?.powf(call.number(1)?)))
}

fn log(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(call.number(0)?.log(call.number(1)?)))
}

fn max(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(
        call.numbers_from(0)?
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max),
    ))
}

fn min(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Number(
        call.numbers_from(0)?
            .into_iter()
            .fold(f64::INFINITY, f64::min),
    ))
}

fn sum(call: &Call) -> Result<Value, EvalError> {
    let items = call.list(0)?;
    if items.is_empty() {
        return Err(call.error("cannot sum an empty list"));
    }
    let numbers = items.iter().map(|item| {
        super::convert::to_number(item).ok_or_else(|| call.error("elements must be numbers"))
    });
    numbers.sum::<Result<f64, _>>().map(Value::Number)
}

/// `parseint(string, base)` for bases 2 to 36.
fn parseint(call: &Call) -> Result<Value, EvalError> {
    let (text, base) = (call.string(0)?, call.integer(1)?);
    let base = u32::try_from(base)
        .ok()
        .filter(|base| (2..=36).contains(base))
        .ok_or_else(|| call.error("the base must be between 2 and 36"))?;
    let parsed = i64::from_str_radix(&text, base)
        .map_err(|_| call.error(format!("cannot parse \"{text}\" as a base {base} integer")))?;
    Ok(Value::Number(parsed as f64))
}
