//! Date and time functions: `formatdate`, `timeadd`, `timecmp` (`timestamp` and
//! `plantimestamp` differ on every run and live with the apply-time functions).
//!
//! Timestamps are RFC 3339 strings read as Go's `time.Parse(time.RFC3339, ...)` reads them:
//! an upper-case `T`, optional fractional seconds, and `Z` or a `±hh:mm` offset.

use chrono::{DateTime, Datelike, FixedOffset, TimeDelta, Timelike};

use super::{Builtin, Call, EvalError, Value};

/// The date and time functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("formatdate", 2, formatdate),
    Builtin::fixed("timeadd", 2, timeadd),
    Builtin::fixed("timecmp", 2, timecmp),
];

/// The English month names, January first.
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The English weekday names, Sunday first.
const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Argument `index` as an RFC 3339 timestamp.
fn timestamp(call: &Call, index: usize) -> Result<DateTime<FixedOffset>, EvalError> {
    let text = call.string(index)?;
    parse_rfc3339(&text)
        .map_err(|message| call.error(format!("not a valid RFC3339 timestamp: {message}")))
}

/// Parses the strict RFC 3339 form Go accepts; chrono checks the field ranges.
fn parse_rfc3339(text: &str) -> Result<DateTime<FixedOffset>, String> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let shape = digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10);
    if !shape {
        return Err(format!("cannot parse \"{text}\" as a date"));
    }
    if bytes.get(10) != Some(&b'T') {
        return Err("missing required time introducer 'T'".to_string());
    }
    let time = digits(11..13)
        && bytes.get(13) == Some(&b':')
        && digits(14..16)
        && bytes.get(16) == Some(&b':')
        && digits(17..19);
    let fraction = bytes.get(19) == Some(&b'.');
    let zone_at = 19
        + if fraction {
            1 + bytes[20..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
        } else {
            0
        };
    let zone = &text[zone_at.min(text.len())..];
    let zone_ok = zone == "Z"
        || (zone.len() == 6
            && matches!(zone.as_bytes()[0], b'+' | b'-')
            && zone.as_bytes()[3] == b':'
            && digits(zone_at + 1..zone_at + 3)
            && digits(zone_at + 4..zone_at + 6));
    if !time || (fraction && zone_at == 20) || !zone_ok {
        return Err(format!(
            "cannot parse \"{text}\" as a time with a UTC offset"
        ));
    }
    DateTime::parse_from_rfc3339(text).map_err(|error| error.to_string())
}

/// RFC 3339 without fractional seconds, `Z` for a zero offset, as Go's `time.RFC3339` writes.
fn format_rfc3339(time: &DateTime<FixedOffset>) -> String {
    format!(
        "{}{}",
        time.format("%Y-%m-%dT%H:%M:%S"),
        zone(time, true, true)
    )
}

/// The UTC offset as `±hh:mm` (`colon`) or `±hhmm`; `Z` for zero when `zulu`.
fn zone(time: &DateTime<FixedOffset>, colon: bool, zulu: bool) -> String {
    let seconds = time.offset().local_minus_utc();
    if seconds == 0 && zulu {
        return "Z".to_string();
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let (hours, minutes) = (seconds.abs() / 3600, seconds.abs() % 3600 / 60);
    match colon {
        true => format!("{sign}{hours:02}:{minutes:02}"),
        false => format!("{sign}{hours:02}{minutes:02}"),
    }
}

fn timecmp(call: &Call) -> Result<Value, EvalError> {
    let (a, b) = (timestamp(call, 0)?, timestamp(call, 1)?);
    Ok(Value::Number(match a.cmp(&b) {
        std::cmp::Ordering::Less => -1.0,
        std::cmp::Ordering::Equal => 0.0,
        std::cmp::Ordering::Greater => 1.0,
    }))
}

/// Adds a Go duration (`"1h30m"`, `"-10m"`, `"1.5s"`) to a timestamp, keeping its offset.
fn timeadd(call: &Call) -> Result<Value, EvalError> {
    let time = timestamp(call, 0)?;
    let text = call.string(1)?;
    let nanos = parse_duration(&text).map_err(|message| call.error(format!("time: {message}")))?;
    let sum = i64::try_from(nanos)
        .ok()
        .and_then(|nanos| time.checked_add_signed(TimeDelta::nanoseconds(nanos)))
        .ok_or_else(|| call.error(format!("time: invalid duration \"{text}\"")))?;
    Ok(Value::String(format_rfc3339(&sum)))
}

/// A duration in nanoseconds, read as Go's `time.ParseDuration` reads it.
fn parse_duration(text: &str) -> Result<i128, String> {
    let invalid = || format!("invalid duration \"{text}\"");
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(number_len);
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("missing unit in duration \"{text}\"")),
            other => return Err(format!("unknown unit \"{other}\" in duration \"{text}\"")),
        };
        total += number.parse::<f64>().map_err(|_| invalid())? * scale;
        rest = tail;
    }
    if total >= 9.3e18 {
        return Err(invalid());
    }
    let nanos = total.round() as i128;
    Ok(if negative { -nanos } else { nanos })
}

/// Formats a timestamp by a specification of letter sequences (`YYYY`, `MMM`, `hh`, ...),
/// quoted literals (`'T'`, `''` for a quote) and other characters copied as they are.
fn formatdate(call: &Call) -> Result<Value, EvalError> {
    let spec = call.string(0)?;
    let time = timestamp(call, 1)?;
    let mut out = String::new();
    for token in date_tokens(&spec) {
        match token.chars().next() {
            Some('\'') => out.push_str(&quoted_literal(call, token)?),
            Some(letter) if letter.is_ascii_alphabetic() => {
                out.push_str(&date_verb(call, letter, token.len(), &time)?)
            }
            _ => out.push_str(token),
        }
    }
    Ok(Value::String(out))
}

/// Splits a `formatdate` specification into runs of one repeated letter, quoted literals
/// (an unterminated one runs to the end) and runs of other characters.
fn date_tokens(spec: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut rest = spec;
    while let Some(first) = rest.chars().next() {
        let len = match first {
            '\'' if rest[1..].starts_with('\'') => 2,
            '\'' => quoted_len(rest),
            letter if letter.is_ascii_alphabetic() => {
                rest.find(|c: char| c != letter).unwrap_or(rest.len())
            }
            _ => rest
                .find(|c: char| c == '\'' || c.is_ascii_alphabetic())
                .unwrap_or(rest.len()),
        };
        tokens.push(&rest[..len]);
        rest = &rest[len..];
    }
    tokens
}

/// The length of the quoted literal at the start of `rest`, through its closing quote
/// (doubled quotes inside it are escaped quotes); all of `rest` when it is unterminated.
fn quoted_len(rest: &str) -> usize {
    let bytes = rest.as_bytes();
    let mut at = 1;
    while at < bytes.len() {
        if bytes[at] == b'\'' {
            if bytes.get(at + 1) == Some(&b'\'') {
                at += 2;
                continue;
            }
            return at + 1;
        }
        at += 1;
    }
    bytes.len()
}

/// The text of a quoted literal token: `''` is a quote, `'...'` its content un-doubled.
fn quoted_literal(call: &Call, token: &str) -> Result<String, EvalError> {
    if token == "''" {
        return Ok("'".to_string());
    }
    match token
        .strip_prefix('\'')
        .and_then(|inner| inner.strip_suffix('\''))
    {
        Some(inner) if token.len() > 1 => Ok(inner.replace("''", "'")),
        _ => Err(call.error("unterminated literal '")),
    }
}

/// One formatting sequence: `letter` repeated `len` times.
fn date_verb(
    call: &Call,
    letter: char,
    len: usize,
    time: &DateTime<FixedOffset>,
) -> Result<String, EvalError> {
    let invalid = |rule: &str| {
        let verb: String = std::iter::repeat_n(letter, len).collect();
        call.error(format!("invalid date format verb \"{verb}\"{rule}"))
    };
    let number = |value: u32, rule: &str| match len {
        1 => Ok(value.to_string()),
        2 => Ok(format!("{value:02}")),
        _ => Err(invalid(rule)),
    };
    let hour12 = match time.hour() % 12 {
        0 => 12,
        hour => hour,
    };
    let month = MONTHS[time.month0() as usize];
    let weekday = WEEKDAYS[time.weekday().num_days_from_sunday() as usize];
    let am = time.hour() < 12;
    match (letter, len) {
        ('Y', 2) => Ok(format!("{:02}", time.year().rem_euclid(100))),
        ('Y', 4) => Ok(format!("{:04}", time.year())),
        ('Y', _) => Err(invalid(": year must either be \"YY\" or \"YYYY\"")),
        ('M', 3) => Ok(month[..3].to_string()),
        ('M', 4) => Ok(month.to_string()),
        ('M', _) => number(
            time.month(),
            ": month must be \"M\", \"MM\", \"MMM\", or \"MMMM\"",
        ),
        ('D', _) => number(time.day(), ": day of month must either be \"D\" or \"DD\""),
        ('E', 3) => Ok(weekday[..3].to_string()),
        ('E', 4) => Ok(weekday.to_string()),
        ('E', _) => Err(invalid(": day of week must either be \"EEE\" or \"EEEE\"")),
        ('h', _) => number(time.hour(), ": 24-hour must either be \"h\" or \"hh\""),
        ('H', _) => number(hour12, ": 12-hour must either be \"H\" or \"HH\""),
        ('A', 2) => Ok(if am { "AM" } else { "PM" }.to_string()),
        ('a', 2) => Ok(if am { "am" } else { "pm" }.to_string()),
        ('A' | 'a', _) => Err(invalid(": must be \"AA\" or \"aa\"")),
        ('m', _) => number(time.minute(), ": minute must either be \"m\" or \"mm\""),
        ('s', _) => number(time.second(), ": second must either be \"s\" or \"ss\""),
        ('Z', 1) => Ok(zone(time, true, true)),
        ('Z', 3) if time.offset().local_minus_utc() == 0 => Ok("UTC".to_string()),
        ('Z', 3 | 4) => Ok(zone(time, false, false)),
        ('Z', 5) => Ok(zone(time, true, false)),
        ('Z', _) => Err(invalid(": timezone must be Z, ZZZZ, or ZZZZZ")),
        _ => Err(invalid("")),
    }
}
