//! String functions: `format`, `join`, `split`, `replace`, `regex`, `substr`, `title`, ...

use std::collections::BTreeMap;

use regex::Regex;

use super::collection::strings_of;
use super::encoding::json_text;
use super::eval::render_template;
use super::value::format_number;
use super::{Builtin, Call, EvalError, Value};

/// The string functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("chomp", 1, chomp),
    Builtin::fixed("endswith", 2, endswith),
    Builtin::between("format", 1, None, format),
    Builtin::between("formatlist", 1, None, formatlist),
    Builtin::fixed("indent", 2, indent),
    Builtin::between("join", 2, None, join),
    Builtin::fixed("lower", 1, lower),
    Builtin::fixed("regex", 2, regex),
    Builtin::fixed("regexall", 2, regexall),
    Builtin::fixed("replace", 3, replace),
    Builtin::fixed("split", 2, split),
    Builtin::fixed("startswith", 2, startswith),
    Builtin::fixed("strcontains", 2, strcontains),
    Builtin::fixed("strrev", 1, strrev),
    Builtin::fixed("substr", 3, substr),
    Builtin::fixed("templatestring", 2, templatestring),
    Builtin::fixed("title", 1, title),
    Builtin::fixed("trim", 2, trim),
    Builtin::fixed("trimprefix", 2, trimprefix),
    Builtin::fixed("trimspace", 1, trimspace),
    Builtin::fixed("trimsuffix", 2, trimsuffix),
    Builtin::fixed("upper", 1, upper),
];

/// Renders argument 0 as a template whose only names are the keys of argument 1. The
/// evaluator has already checked that argument 0 is a direct reference, as Terraform requires.
fn templatestring(call: &Call) -> Result<Value, EvalError> {
    let text = call.string(0)?;
    let template: hcl::Template = text.parse().map_err(|error: hcl::Error| EvalError::Parse {
        what: "templatestring template".to_string(),
        message: error.to_string(),
    })?;
    let scope = call.scope.template_scope(call.object(1)?.clone());
    render_template(&template, &scope)
}

fn lower(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::String(call.string(0)?.to_lowercase()))
}

fn upper(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::String(call.string(0)?.to_uppercase()))
}

fn trimspace(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::String(call.string(0)?.trim().to_string()))
}

fn strrev(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::String(call.string(0)?.chars().rev().collect()))
}

fn chomp(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::String(
        call.string(0)?.trim_end_matches(['\n', '\r']).to_string(),
    ))
}

fn trim(call: &Call) -> Result<Value, EvalError> {
    let cutset: Vec<char> = call.string(1)?.chars().collect();
    Ok(Value::String(
        call.string(0)?.trim_matches(cutset.as_slice()).to_string(),
    ))
}

fn trimprefix(call: &Call) -> Result<Value, EvalError> {
    let (text, prefix) = (call.string(0)?, call.string(1)?);
    Ok(Value::String(
        text.strip_prefix(&prefix).unwrap_or(&text).to_string(),
    ))
}

fn trimsuffix(call: &Call) -> Result<Value, EvalError> {
    let (text, suffix) = (call.string(0)?, call.string(1)?);
    Ok(Value::String(
        text.strip_suffix(&suffix).unwrap_or(&text).to_string(),
    ))
}

fn startswith(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Bool(call.string(0)?.starts_with(&call.string(1)?)))
}

fn endswith(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Bool(call.string(0)?.ends_with(&call.string(1)?)))
}

fn strcontains(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Bool(call.string(0)?.contains(&call.string(1)?)))
}

fn indent(call: &Call) -> Result<Value, EvalError> {
    let spaces =
        " ".repeat(usize::try_from(call.integer(0)?).map_err(|_| call.error("negative indent"))?);
    Ok(Value::String(
        call.string(1)?.replace('\n', &format!("\n{spaces}")),
    ))
}

/// Upper-cases the first letter of each word, words being separated by anything that is not
/// a letter, digit or underscore.
fn title(call: &Call) -> Result<Value, EvalError> {
    let mut after_separator = true;
    let mut out = String::new();
    for ch in call.string(0)?.chars() {
        if after_separator {
            out.extend(ch.to_uppercase());
        } else {
            out.push(ch);
        }
        after_separator = !(ch.is_alphanumeric() || ch == '_');
    }
    Ok(Value::String(out))
}

fn join(call: &Call) -> Result<Value, EvalError> {
    let separator = call.string(0)?;
    let mut parts = Vec::new();
    for list in call.lists_from(1)? {
        parts.extend(strings_of(call, list)?);
    }
    Ok(Value::String(parts.join(&separator)))
}

fn split(call: &Call) -> Result<Value, EvalError> {
    let (separator, text) = (call.string(0)?, call.string(1)?);
    Ok(Value::from(
        text.split(separator.as_str())
            .map(str::to_string)
            .collect::<Vec<_>>(),
    ))
}

/// `substr` counts characters; a negative offset counts from the end and a length of -1 (or
/// past the end) runs to the end.
fn substr(call: &Call) -> Result<Value, EvalError> {
    let chars: Vec<char> = call.string(0)?.chars().collect();
    let (offset, length) = (call.integer(1)?, call.integer(2)?);
    let total = chars.len() as i64;
    let start = if offset < 0 { total + offset } else { offset };
    if start < 0 || start > total {
        return Err(call.error(format!(
            "offset {offset} is outside a string of {total} characters"
        )));
    }
    let end = if length < 0 {
        total
    } else {
        (start + length).min(total)
    };
    Ok(Value::String(
        chars[start as usize..end.max(start) as usize]
            .iter()
            .collect(),
    ))
}

fn replace(call: &Call) -> Result<Value, EvalError> {
    let (text, search, replacement) = (call.string(0)?, call.string(1)?, call.string(2)?);
    let pattern = search
        .strip_prefix('/')
        .and_then(|rest| rest.strip_suffix('/'));
    Ok(Value::String(match pattern {
        Some(pattern) => compile(call, pattern)?
            .replace_all(&text, replacement.as_str())
            .into_owned(),
        None => text.replace(&search, &replacement),
    }))
}

fn regex(call: &Call) -> Result<Value, EvalError> {
    let (pattern, text) = (compile(call, &call.string(0)?)?, call.string(1)?);
    let captures = pattern
        .captures(&text)
        .ok_or_else(|| call.error("pattern did not match any part of the given string"))?;
    match_value(call, &pattern, &captures)
}

fn regexall(call: &Call) -> Result<Value, EvalError> {
    let (pattern, text) = (compile(call, &call.string(0)?)?, call.string(1)?);
    let matches = pattern
        .captures_iter(&text)
        .map(|captures| match_value(call, &pattern, &captures));
    matches.collect::<Result<_, _>>().map(Value::List)
}

fn compile(call: &Call, pattern: &str) -> Result<Regex, EvalError> {
    Regex::new(pattern).map_err(|error| call.error(format!("invalid regular expression: {error}")))
}

/// One match the way `regex` returns it: the whole match without capture groups, a list of
/// the groups when they are unnamed, a map when they are named (a group that did not take
/// part in the match is null).
fn match_value(
    call: &Call,
    pattern: &Regex,
    captures: &regex::Captures<'_>,
) -> Result<Value, EvalError> {
    let group = |index: usize| {
        captures.get(index).map_or(Value::Null, |found| {
            Value::String(found.as_str().to_string())
        })
    };
    let names: Vec<Option<&str>> = pattern.capture_names().skip(1).collect();
    if names.is_empty() {
        return Ok(group(0));
    }
    match (
        names.iter().all(Option::is_some),
        names.iter().all(Option::is_none),
    ) {
        (_, true) => Ok(Value::List((1..=names.len()).map(group).collect())),
        (true, _) => {
            let named = names
                .iter()
                .enumerate()
                .filter_map(|(index, name)| Some(((*name)?.to_string(), group(index + 1))));
            Ok(Value::Object(named.collect::<BTreeMap<_, _>>()))
        }
        _ => Err(call.error("a pattern cannot mix named and unnamed capture groups")),
    }
}

fn format(call: &Call) -> Result<Value, EvalError> {
    format_with(call, &call.string(0)?, &call.args[1..]).map(Value::String)
}

/// `formatlist`: list arguments (all the same length) are iterated together, others repeat.
fn formatlist(call: &Call) -> Result<Value, EvalError> {
    let spec = call.string(0)?;
    let args = &call.args[1..];
    let lengths: Vec<usize> = args
        .iter()
        .filter_map(|arg| arg.elements().map(<[Value]>::len))
        .collect();
    let count = lengths.first().copied().unwrap_or(1);
    if lengths.iter().any(|&len| len != count) {
        return Err(call.error("all list arguments must have the same length"));
    }
    let row = |index: usize| -> Vec<Value> {
        args.iter()
            .map(|arg| arg.elements().map_or(arg, |items| &items[index]).clone())
            .collect()
    };
    (0..count)
        .map(|index| format_with(call, &spec, &row(index)).map(Value::String))
        .collect::<Result<_, _>>()
        .map(Value::List)
}

/// One `%` verb of a format specification, after its flags, width and precision.
#[derive(Default)]
struct Verb {
    flags: String,
    width: usize,
    precision: Option<usize>,
}

/// Formats `args` by the printf-like `spec`, as Terraform's `format` does.
fn format_with(call: &Call, spec: &str, args: &[Value]) -> Result<String, EvalError> {
    let mut out = String::new();
    let mut chars = spec.chars().peekable();
    let mut next_arg = 0;
    let mut used = 0;
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut verb = Verb::default();
        while let Some(flag) = chars.next_if(|c| "+- #0".contains(*c)) {
            verb.flags.push(flag);
        }
        verb.width = read_digits(&mut chars).unwrap_or(0);
        if chars.next_if_eq(&'.').is_some() {
            verb.precision = Some(read_digits(&mut chars).unwrap_or(0));
        }
        if chars.next_if_eq(&'[').is_some() {
            let position = read_digits(&mut chars)
                .filter(|n| *n > 0)
                .ok_or_else(|| call.error("invalid argument index"))?;
            chars
                .next_if_eq(&']')
                .ok_or_else(|| call.error("unclosed argument index"))?;
            next_arg = position - 1;
        }
        let letter = chars
            .next()
            .ok_or_else(|| call.error("format string ends in the middle of a verb"))?;
        let arg = args
            .get(next_arg)
            .ok_or_else(|| call.error(format!("not enough arguments for %{letter}")))?;
        next_arg += 1;
        used = used.max(next_arg);
        out.push_str(&format_verb(call, letter, &verb, arg)?);
    }
    if used < args.len() {
        return Err(call.error(format!(
            "too many arguments; only {used} used by the format string"
        )));
    }
    Ok(out)
}

fn read_digits(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<usize> {
    let mut digits = String::new();
    while let Some(digit) = chars.next_if(char::is_ascii_digit) {
        digits.push(digit);
    }
    digits.parse().ok()
}

fn format_verb(call: &Call, letter: char, verb: &Verb, arg: &Value) -> Result<String, EvalError> {
    let text = |value: &Value| {
        value.to_text().ok_or_else(|| {
            call.error(format!(
                "%{letter} needs a string, not {}",
                value.type_name()
            ))
        })
    };
    let number = || {
        super::convert::to_number(arg)
            .ok_or_else(|| call.error(format!("%{letter} needs a number, not {}", arg.type_name())))
    };
    let integer = || {
        let value = number()?;
        if value.fract() == 0.0 {
            Ok(value as i64)
        } else {
            Err(call.error(format!("%{letter} needs a whole number, not {value}")))
        }
    };
    let body = match letter {
        'v' if verb.flags.contains('#') => {
            json_text(arg).ok_or_else(|| call.error("cannot encode an unknown value"))?
        }
        'v' => arg
            .to_text()
            .or_else(|| json_text(arg))
            .ok_or_else(|| call.error("cannot format an unknown value"))?,
        's' => {
            let value = text(arg)?;
            verb.precision
                .map_or(value.clone(), |keep| value.chars().take(keep).collect())
        }
        'q' => json_text(&Value::String(text(arg)?)).unwrap_or_default(),
        't' => match super::convert::to_bool(arg) {
            Some(flag) => flag.to_string(),
            None => return Err(call.error(format!("%t needs a bool, not {}", arg.type_name()))),
        },
        'd' | 'b' | 'o' | 'x' | 'X' => {
            let value = integer()?;
            signed(verb, radix_text(letter, value.unsigned_abs()), value < 0)
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            let value = number()?;
            signed(
                verb,
                float_text(letter, value.abs(), verb.precision),
                value < 0.0,
            )
        }
        other => return Err(call.error(format!("unsupported format verb %{other}"))),
    };
    Ok(pad(verb, body, letter))
}

/// Prefixes the sign that the number and the `+` and space flags call for.
fn signed(verb: &Verb, digits: String, negative: bool) -> String {
    let sign = match (negative, verb.flags.contains('+'), verb.flags.contains(' ')) {
        (true, _, _) => "-",
        (false, true, _) => "+",
        (false, false, true) => " ",
        _ => "",
    };
    format!("{sign}{digits}")
}

fn radix_text(letter: char, value: u64) -> String {
    match letter {
        'b' => format!("{value:b}"),
        'o' => format!("{value:o}"),
        'x' => format!("{value:x}"),
        'X' => format!("{value:X}"),
        _ => value.to_string(),
    }
}

fn float_text(letter: char, value: f64, precision: Option<usize>) -> String {
    let text = match letter.to_ascii_lowercase() {
        'e' => exponent_text(value, precision.unwrap_or(6)),
        'f' => format!("{value:.*}", precision.unwrap_or(6)),
        _ => match precision {
            Some(digits) => format!("{:.*}", digits.saturating_sub(1), value)
                .parse::<f64>()
                .map_or_else(|_| value.to_string(), format_number),
            None => format_number(value),
        },
    };
    if letter.is_ascii_uppercase() {
        text.to_uppercase()
    } else {
        text
    }
}

/// `1.500000e+00` style: a two-digit exponent with its sign, as C and Go print it.
fn exponent_text(value: f64, precision: usize) -> String {
    let text = format!("{value:.precision$e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

/// Pads to the verb's width: on the right with `-`, with zeros after the sign with `0` (for
/// numbers), otherwise with spaces on the left.
fn pad(verb: &Verb, body: String, letter: char) -> String {
    let len = body.chars().count();
    if len >= verb.width {
        return body;
    }
    let fill = verb.width - len;
    if verb.flags.contains('-') {
        format!("{body}{}", " ".repeat(fill))
    } else if verb.flags.contains('0') && "dboxXeEfFgG".contains(letter) {
        let split = usize::from(body.starts_with(['-', '+', ' ']));
        format!("{}{}{}", &body[..split], "0".repeat(fill), &body[split..])
    } else {
        format!("{}{body}", " ".repeat(fill))
    }
}
