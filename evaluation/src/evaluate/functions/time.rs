//! Time functions, and `uuid`: values only known when Terraform applies are unknown here.

use super::{Value, string_arg, unknown};
use chrono::{DateTime, Datelike, FixedOffset, Timelike};

/// `timestamp()`: the time of apply, unknown.
pub(super) fn timestamp(_: &[Value]) -> Result<Value, String> {
    Ok(unknown())
}

/// `uuid()`: a random identifier chosen at apply, unknown.
pub(super) fn uuid(_: &[Value]) -> Result<Value, String> {
    Ok(unknown())
}

/// English month names.
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

/// English weekday names from Monday.
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// `formatdate(spec, timestamp)`: an RFC 3339 timestamp written after `spec`, whose letter
/// sequences (`YYYY`, `MMM`, `DD`, `hh`, `mm`, `ZZZ`, ...) stand for the date's parts and
/// whose text in single quotes (`''` for a quote) is written as it is.
pub(super) fn formatdate(args: &[Value]) -> Result<Value, String> {
    let (spec, timestamp) = (string_arg(args, 0)?, string_arg(args, 1)?);
    let time = DateTime::parse_from_rfc3339(&timestamp)
        .map_err(|err| format!("invalid RFC 3339 timestamp \"{timestamp}\": {err}"))?;
    let mut written = String::new();
    let mut rest = spec.as_str();
    while let Some(c) = rest.chars().next() {
        let run = rest.len() - rest.trim_start_matches(c).len();
        if c == '\'' {
            rest = quoted(rest, &mut written)?;
        } else if c.is_ascii_alphabetic() {
            written.push_str(&part(&time, &rest[..run])?);
            rest = &rest[run..];
        } else {
            written.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(Value::from(written))
}

/// Writes the quoted text that `spec` starts with (after its opening quote; `''` is a quote)
/// and returns the spec after it.
fn quoted<'a>(spec: &'a str, written: &mut String) -> Result<&'a str, String> {
    if let Some(rest) = spec.strip_prefix("''") {
        written.push('\'');
        return Ok(rest);
    }
    let mut rest = &spec[1..];
    loop {
        match rest.find('\'') {
            None => return Err("unterminated quote in the date format".to_owned()),
            Some(at) if rest[at + 1..].starts_with('\'') => {
                written.push_str(&rest[..=at]);
                rest = &rest[at + 2..];
            }
            Some(at) => {
                written.push_str(&rest[..at]);
                return Ok(&rest[at + 1..]);
            }
        }
    }
}

/// The part of `time` a letter sequence of the spec stands for.
fn part(time: &DateTime<FixedOffset>, token: &str) -> Result<String, String> {
    let hour12 = (time.hour() + 11) % 12 + 1;
    let month = MONTHS[time.month0() as usize];
    let weekday = WEEKDAYS[time.weekday().num_days_from_monday() as usize];
    let offset = time.offset().local_minus_utc();
    let (sign, offset) = (if offset < 0 { '-' } else { '+' }, offset.abs() / 60);
    Ok(match token {
        "YYYY" => format!("{:04}", time.year()),
        "YY" => format!("{:02}", time.year() % 100),
        "MMMM" => month.to_owned(),
        "MMM" => month[..3].to_owned(),
        "MM" => format!("{:02}", time.month()),
        "M" => time.month().to_string(),
        "DD" => format!("{:02}", time.day()),
        "D" => time.day().to_string(),
        "EEEE" => weekday.to_owned(),
        "EEE" => weekday[..3].to_owned(),
        "hh" => format!("{:02}", time.hour()),
        "h" => time.hour().to_string(),
        "HH" => format!("{hour12:02}"),
        "H" => hour12.to_string(),
        "AA" => if time.hour() < 12 { "AM" } else { "PM" }.to_owned(),
        "aa" => if time.hour() < 12 { "am" } else { "pm" }.to_owned(),
        "mm" => format!("{:02}", time.minute()),
        "m" => time.minute().to_string(),
        "ss" => format!("{:02}", time.second()),
        "s" => time.second().to_string(),
        "ZZZZZ" => format!("{sign}{:02}:{:02}", offset / 60, offset % 60),
        "ZZZZ" => format!("{sign}{:02}{:02}", offset / 60, offset % 60),
        "ZZZ" if offset == 0 => "UTC".to_owned(),
        "ZZZ" => format!("{sign}{:02}{:02}", offset / 60, offset % 60),
        "Z" if offset == 0 => "Z".to_owned(),
        "Z" => format!("{sign}{:02}:{:02}", offset / 60, offset % 60),
        other => return Err(format!("invalid date format sequence \"{other}\"")),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check_text, check_unknown, fails};

    #[test]
    fn timestamp_and_uuid_are_unknown() {
        check_unknown("timestamp()");
        check_unknown("uuid()");
        check_unknown(r#"formatdate("YYYY", timestamp())"#);
    }

    #[test]
    fn formatdate_writes_the_parts() {
        // Documentation examples of formatdate.
        let at = "2018-01-02T23:12:01Z";
        let west = "2018-01-02T23:12:01-08:00";
        check_text(
            &format!(r#"formatdate("DD MMM YYYY hh:mm ZZZ", "{at}")"#),
            "02 Jan 2018 23:12 UTC",
        );
        check_text(
            &format!(r#"formatdate("EEEE, DD-MMM-YY hh:mm:ss ZZZ", "{at}")"#),
            "Tuesday, 02-Jan-18 23:12:01 UTC",
        );
        check_text(
            &format!(r#"formatdate("EEE, DD MMM YYYY hh:mm:ss ZZZ", "{west}")"#),
            "Tue, 02 Jan 2018 23:12:01 -0800",
        );
        check_text(
            &format!(r#"formatdate("MMM DD, YYYY", "{at}")"#),
            "Jan 02, 2018",
        );
        check_text(&format!(r#"formatdate("HH:mmaa", "{at}")"#), "11:12pm");
        check_text(&format!(r#"formatdate("h'h'mm", "{west}")"#), "23h12");
        check_text(
            &format!(r#"formatdate("H 'o''clock'", "{west}")"#),
            "11 o'clock",
        );
        check_text(
            &format!(r#"formatdate("YYYY-MM-DD'T'Z", "{west}")"#),
            "2018-01-02T-08:00",
        );
        fails(
            &format!(r#"formatdate("Q", "{at}")"#),
            "invalid date format sequence",
        );
        fails(r#"formatdate("YYYY", "yesterday")"#, "invalid RFC 3339");
    }
}
