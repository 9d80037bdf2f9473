//! `format` and `formatlist`: printf-style formatting with Terraform's verbs.
//!
//! A verb is `%`, flags (`-` left-justify, `0` zero-pad, `+` and space for a sign, `#` JSON
//! for `%v`), a width, a precision after `.`, an optional `[n]` argument index, and one of
//! `v t s q d b o x X e E f g G`; `%%` is a percent sign.

use super::{Value, encoding, kind, number_text, string_arg, text};

/// A verb's parsed directives.
#[derive(Default)]
struct Verb {
    flags: String,
    width: Option<usize>,
    precision: Option<usize>,
    index: Option<usize>,
    letter: char,
}

/// `format(spec, values...)`: the spec with each verb replaced by its formatted argument.
pub(super) fn format(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(format_with(&string_arg(args, 0)?, &args[1..])?))
}

/// `formatlist(spec, values...)`: `format` applied element-wise; list arguments (all of one
/// length) give their element at each position, other arguments are repeated.
pub(super) fn formatlist(args: &[Value]) -> Result<Value, String> {
    let spec = string_arg(args, 0)?;
    let mut count = None;
    for (index, item) in args.iter().enumerate().skip(1) {
        if let Value::Array(items) = item {
            if count.is_some_and(|count| count != items.len()) {
                return Err(format!(
                    "argument {} has {} elements, unlike the lists before it",
                    index + 1,
                    items.len()
                ));
            }
            count = Some(items.len());
        }
    }
    let lines = (0..count.unwrap_or(1)).map(|position| {
        let row: Vec<Value> = args[1..]
            .iter()
            .map(|item| match item {
                Value::Array(items) => items[position].clone(),
                other => other.clone(),
            })
            .collect();
        format_with(&spec, &row).map(Value::from)
    });
    Ok(Value::Array(lines.collect::<Result<_, _>>()?))
}

/// `spec` with its verbs replaced by `values`, taken in turn or by explicit index; an
/// argument after the last one used is an error.
fn format_with(spec: &str, values: &[Value]) -> Result<String, String> {
    let mut written = String::new();
    let mut chars = spec.chars().peekable();
    let mut next = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            written.push(c);
            continue;
        }
        if chars.next_if_eq(&'%').is_some() {
            written.push('%');
            continue;
        }
        let verb = parse_verb(&mut chars)?;
        let position = verb.index.unwrap_or(next);
        let value = values
            .get(position)
            .ok_or_else(|| format!("not enough arguments for the verb %{}", verb.letter))?;
        written.push_str(&render(&verb, value)?);
        next = position + 1;
    }
    if next < values.len() {
        return Err(format!(
            "too many arguments: the format uses {next} of {}",
            values.len()
        ));
    }
    Ok(written)
}

/// Reads a verb's directives after its `%`.
fn parse_verb(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<Verb, String> {
    let mut verb = Verb::default();
    while let Some(flag) = chars.next_if(|c| "-0+ #".contains(*c)) {
        verb.flags.push(flag);
    }
    if chars.next_if_eq(&'[').is_some() {
        let index = digits(chars).filter(|&index| index > 0);
        if chars.next_if_eq(&']').is_none() || index.is_none() {
            return Err("invalid argument index in the format".to_owned());
        }
        verb.index = index.map(|index| index - 1);
    }
    verb.width = digits(chars);
    if chars.next_if_eq(&'.').is_some() {
        verb.precision = Some(digits(chars).unwrap_or(0));
    }
    verb.letter = chars
        .next()
        .ok_or("the format ends in the middle of a verb")?;
    Ok(verb)
}

/// The decimal number the next characters spell, if any.
fn digits(chars: &mut std::iter::Peekable<std::str::Chars>) -> Option<usize> {
    let mut number = None;
    while let Some(digit) = chars.next_if(char::is_ascii_digit) {
        let digit = digit.to_digit(10).unwrap_or(0) as usize;
        number = Some(number.unwrap_or(0) * 10 + digit);
    }
    number
}

/// `value` formatted by `verb`, padded to its width.
fn render(verb: &Verb, value: &Value) -> Result<String, String> {
    if matches!(value, Value::Null) {
        return Err(format!(
            "null value cannot be formatted by %{}",
            verb.letter
        ));
    }
    let cannot = || format!("%{} cannot format {}", verb.letter, kind(value));
    let rendered = match verb.letter {
        'v' if verb.flags.contains('#') => encoding::json(value),
        'v' => text(value).unwrap_or_else(|| encoding::json(value)),
        's' => truncated(&text(value).ok_or_else(cannot)?, verb.precision),
        'q' => encoding::quote(&text(value).ok_or_else(cannot)?, false),
        't' => match value {
            Value::Bool(flag) => flag.to_string(),
            _ => return Err(cannot()),
        },
        letter => {
            let number = super::number(value).ok_or_else(cannot)?;
            return pad_number(verb, number, &magnitude(verb, letter, number.abs())?);
        }
    };
    Ok(pad(verb, rendered))
}

/// `text` cut to `precision` characters, if given.
fn truncated(text: &str, precision: Option<usize>) -> String {
    match precision {
        Some(precision) => text.chars().take(precision).collect(),
        None => text.to_owned(),
    }
}

/// The digits of a number's magnitude `abs` for a numeric verb.
fn magnitude(verb: &Verb, letter: char, abs: f64) -> Result<String, String> {
    let whole = || {
        (abs.fract() == 0.0 && abs < 1.8e19)
            .then_some(abs as u64)
            .ok_or_else(|| format!("%{letter} requires a whole number, got {abs}"))
    };
    let precision = verb.precision.unwrap_or(6);
    Ok(match letter {
        'd' => whole()?.to_string(),
        'b' => format!("{:b}", whole()?),
        'o' => format!("{:o}", whole()?),
        'x' => format!("{:x}", whole()?),
        'X' => format!("{:X}", whole()?),
        'f' => format!("{abs:.precision$}"),
        'e' => exponent(&format!("{abs:.precision$e}")),
        'E' => exponent(&format!("{abs:.precision$e}")).to_uppercase(),
        'g' | 'G' => number_text(&hcl::Number::from_f64(abs).ok_or("not a finite number")?),
        other => return Err(format!("unsupported format verb %{other}")),
    })
}

/// Rust's scientific notation (`1.5e3`) in printf's (`1.5e+03`).
fn exponent(rust: &str) -> String {
    match rust.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = exp.strip_prefix('-').map_or(('+', exp), |d| ('-', d));
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => rust.to_owned(),
    }
}

/// A number's digits with its sign, padded to the verb's width (with zeros after the sign
/// under the `0` flag).
fn pad_number(verb: &Verb, number: f64, digits: &str) -> Result<String, String> {
    let sign = if number < 0.0 {
        "-"
    } else if verb.flags.contains('+') {
        "+"
    } else if verb.flags.contains(' ') {
        " "
    } else {
        ""
    };
    let zeros = verb.flags.contains('0') && !verb.flags.contains('-');
    let width = verb.width.unwrap_or(0);
    if zeros && sign.len() + digits.len() < width {
        let fill = "0".repeat(width - sign.len() - digits.len());
        return Ok(format!("{sign}{fill}{digits}"));
    }
    Ok(pad(verb, format!("{sign}{digits}")))
}

/// `text` padded with spaces to the verb's width, on the right under the `-` flag.
fn pad(verb: &Verb, text: String) -> String {
    let width = verb.width.unwrap_or(0);
    let missing = width.saturating_sub(text.chars().count());
    let fill = " ".repeat(missing);
    if verb.flags.contains('-') {
        text + &fill
    } else {
        fill + &text
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_text, check_unknown, fails};

    #[test]
    fn format_substitutes_verbs() {
        // Documentation: format("Hello, %s!", "Ander") is "Hello, Ander!", format("There are
        // %d lights", 4) is "There are 4 lights"; the verbs as the documentation describes
        // them.
        check_text(r#"format("Hello, %s!", "Ander")"#, "Hello, Ander!");
        check_text(r#"format("There are %d lights", 4)"#, "There are 4 lights");
        check_text(r#"format("%s %v %v", 1, 2.5, true)"#, "1 2.5 true");
        check_text(r#"format("%v", ["a", 1])"#, r#"["a",1]"#);
        check_text(r#"format("%#v", "a")"#, r#""a""#);
        check_text(r#"format("%q", "a\"b")"#, r#""a\"b""#);
        check_text(r#"format("%t", true)"#, "true");
        check_text(r#"format("%5s|%-5s|", "a", "b")"#, "    a|b    |");
        check_text(r#"format("%.2s", "abc")"#, "ab");
        check_text(r#"format("%.2f", 3.14159)"#, "3.14");
        check_text(r#"format("%f", 1)"#, "1.000000");
        check_text(r#"format("%06.2f", -3.14159)"#, "-03.14");
        check_text(r#"format("%+d %d", 5, -5)"#, "+5 -5");
        check_text(r#"format("%03d", 7)"#, "007");
        check_text(r#"format("%b %o %x %X", 5, 8, 255, 255)"#, "101 10 ff FF");
        check_text(r#"format("%e", 1500)"#, "1.500000e+03");
        check_text(r#"format("%g", 0.5)"#, "0.5");
        check_text(r#"format("%[2]s %[1]s %s", "a", "b")"#, "b a b");
        check_text(r#"format("100%%")"#, "100%");
        fails(r#"format("%d", 1.5)"#, "requires a whole number");
        fails(r#"format("%s %s", "a")"#, "not enough arguments");
        fails(r#"format("%s", "a", "b")"#, "too many arguments");
        fails(r#"format("%s", null)"#, "null value cannot be formatted");
        fails(r#"format("%d", "x")"#, "%d cannot format a string");
        fails(r#"format("%s", [1])"#, "%s cannot format a list");
        check_unknown(r#"format("%s-%s", "a", u)"#);
    }

    #[test]
    fn formatlist_formats_each_position() {
        // Documentation: formatlist("Hello, %s!", ["Valentina", "Ander", "Olivia", "Sam"])
        // and formatlist("%s, %s!", "Salutations", [...]) greet each name.
        check(
            r#"formatlist("Hello, %s!", ["Valentina", "Ander", "Olivia", "Sam"])"#,
            r#"["Hello, Valentina!", "Hello, Ander!", "Hello, Olivia!", "Hello, Sam!"]"#,
        );
        check(
            r#"formatlist("%s, %s!", "Salutations", ["Valentina", "Ander"])"#,
            r#"["Salutations, Valentina!", "Salutations, Ander!"]"#,
        );
        check(r#"formatlist("%s:*", [])"#, "[]");
        check(
            r#"formatlist("%s-%s", ["a", "b"], [1, 2])"#,
            r#"["a-1", "b-2"]"#,
        );
        fails(
            r#"formatlist("%s-%s", ["a"], [1, 2])"#,
            "unlike the lists before it",
        );
        check_unknown(r#"formatlist("%s", ["a", u])"#);
    }
}
