//! `yamldecode` and `yamlencode`, as Terraform's go-cty-yaml does them.
//!
//! Decoding reads one YAML document with the YAML 1.2 core schema plus the YAML 1.1 booleans
//! (`yes`, `on`, ...), timestamps (as RFC 3339 strings), `!!binary` (kept as base64), anchors
//! and merge keys (`<<` with a mapping). Encoding writes block style the way libyaml's emitter does: keys and
//! strings double-quoted (folded past column 80), strings with newlines as literal blocks,
//! empty collections as `[]` and `{}`.

use std::collections::{BTreeMap, HashMap};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::TScalarStyle;

use super::{Builtin, Call, EvalError, Value};

/// The YAML functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("yamldecode", 1, yamldecode),
    Builtin::fixed("yamlencode", 1, yamlencode),
];

/// The prefix of the standard tags (`!!str` is `tag:yaml.org,2002:str`).
const STANDARD_TAG: &str = "tag:yaml.org,2002:";

/// libyaml's preferred line width, past which double-quoted strings are folded.
const BEST_WIDTH: usize = 80;

/// Keys longer than this (in bytes) are written as complex keys (`? key`).
const SIMPLE_KEY_LIMIT: usize = 128;

fn yamldecode(call: &Call) -> Result<Value, EvalError> {
    let text = call.string(0)?;
    Decoder::new(&text)
        .document()
        .map_err(|message| call.error(message))
}

fn yamlencode(call: &Call) -> Result<Value, EvalError> {
    let mut emitter = Emitter::default();
    emitter.root(call.arg(0)?);
    Ok(Value::String(emitter.out))
}

/// An anchor's value, or `None` while its own node is still being read.
type Anchors = HashMap<usize, Option<Value>>;

/// Builds values from the parser's events.
struct Decoder<'a> {
    parser: Parser<std::str::Chars<'a>>,
    anchors: Anchors,
}

impl<'a> Decoder<'a> {
    fn new(text: &'a str) -> Self {
        Decoder {
            parser: Parser::new_from_str(text),
            anchors: HashMap::new(),
        }
    }

    fn next(&mut self) -> Result<Event, String> {
        match self.parser.next_token() {
            Ok((event, _)) => Ok(event),
            Err(error) => Err(error.to_string()),
        }
    }

    /// The value of the stream's one document.
    fn document(&mut self) -> Result<Value, String> {
        if self.next()? != Event::StreamStart {
            return Err("missing stream start token".to_string());
        }
        if self.next()? != Event::DocumentStart {
            return Err("missing start of document".to_string());
        }
        let event = self.next()?;
        let value = self.node(event)?;
        let mut event = self.next()?;
        if event == Event::DocumentEnd {
            event = self.next()?;
        }
        match event {
            Event::StreamEnd => Ok(value),
            Event::DocumentStart => Err("only a single document is allowed".to_string()),
            _ => Err("unexpected extra content after value".to_string()),
        }
    }

    fn node(&mut self, event: Event) -> Result<Value, String> {
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.begin(anchor);
                let value = resolve_scalar(tag_name(tag.as_ref()).as_deref(), &text, style)?;
                Ok(self.complete(anchor, value))
            }
            Event::Alias(anchor) => match self.anchors.get(&anchor) {
                Some(Some(value)) => Ok(value.clone()),
                Some(None) => {
                    Err("cannot refer to an anchor from inside its own definition".into())
                }
                None => Err("reference to an undefined anchor".to_string()),
            },
            Event::SequenceStart(anchor, tag) => {
                expect_tag(tag.as_ref(), "seq", "sequence")?;
                self.begin(anchor);
                let value = self.sequence()?;
                Ok(self.complete(anchor, value))
            }
            Event::MappingStart(anchor, tag) => {
                expect_tag(tag.as_ref(), "map", "mapping")?;
                self.begin(anchor);
                let value = self.mapping()?;
                Ok(self.complete(anchor, value))
            }
            Event::DocumentStart => Err("only a single document is allowed".to_string()),
            Event::StreamEnd => Err("expecting value but found end of stream".to_string()),
            _ => Err("the YAML document has a structure Terraform does not read".to_string()),
        }
    }

    fn begin(&mut self, anchor: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, None);
        }
    }

    fn complete(&mut self, anchor: usize, value: Value) -> Value {
        if anchor != 0 {
            self.anchors.insert(anchor, Some(value.clone()));
        }
        value
    }

    fn sequence(&mut self) -> Result<Value, String> {
        let mut items = Vec::new();
        loop {
            match self.next()? {
                Event::SequenceEnd => return Ok(Value::List(items)),
                event => items.push(self.node(event)?),
            }
        }
    }

    fn mapping(&mut self) -> Result<Value, String> {
        let mut map = BTreeMap::new();
        loop {
            let (text, style, tag) = match self.next()? {
                Event::MappingEnd => return Ok(Value::Object(map)),
                Event::Scalar(text, style, _, tag) => (text, style, tag_name(tag.as_ref())),
                _ => return Err("only strings are allowed as mapping keys".to_string()),
            };
            let event = self.next()?;
            let value = self.node(event)?;
            let merge = (tag.is_none() && text == "<<")
                || tag.as_deref() == Some(&format!("{STANDARD_TAG}merge"));
            if merge {
                merge_into(&mut map, value)?;
                continue;
            }
            let key = match resolve_scalar(tag.as_deref(), &text, style)? {
                Value::Null => return Err("mapping key cannot be null".to_string()),
                key => key
                    .to_text()
                    .ok_or("only strings are allowed as mapping keys")?,
            };
            map.insert(key, value);
        }
    }
}

/// A merge key's value, which must be a mapping, merged into `map` (Terraform 1.11's
/// go-cty-yaml does not take a sequence of mappings).
fn merge_into(map: &mut BTreeMap<String, Value>, value: Value) -> Result<(), String> {
    match value {
        Value::Object(entries) => {
            map.extend(entries);
            Ok(())
        }
        Value::List(_) => Err("cannot merge tuple into mapping".to_string()),
        other => Err(format!("cannot merge {} into mapping", other.type_name())),
    }
}

/// A tag's full name (`!!str` resolved to `tag:yaml.org,2002:str`).
fn tag_name(tag: Option<&Tag>) -> Option<String> {
    tag.map(|tag| format!("{}{}", tag.handle, tag.suffix))
}

/// The short form of a tag for messages (`!!str`).
fn short_tag(tag: &str) -> String {
    tag.strip_prefix(STANDARD_TAG)
        .map_or_else(|| tag.to_string(), |rest| format!("!!{rest}"))
}

fn expect_tag(tag: Option<&Tag>, wanted: &str, kind: &str) -> Result<(), String> {
    match tag_name(tag) {
        Some(name) if name != format!("{STANDARD_TAG}{wanted}") => {
            Err(format!("can't interpret {kind} as {}", short_tag(&name)))
        }
        _ => Ok(()),
    }
}

/// The value of a scalar: by its tag, else (plain scalars only) by its form.
fn resolve_scalar(tag: Option<&str>, text: &str, style: TScalarStyle) -> Result<Value, String> {
    let kind = tag.and_then(|tag| tag.strip_prefix(STANDARD_TAG));
    let kind = match (tag, kind) {
        (None, _) => "",
        (
            Some(_),
            Some(kind @ ("str" | "bool" | "int" | "float" | "null" | "timestamp" | "binary")),
        ) => kind,
        (Some(tag), _) => return Err(format!("unsupported tag \"{}\"", short_tag(tag))),
    };
    let quoted = matches!(
        style,
        TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted
    );
    let hinted =
        text.is_empty() || text.starts_with(|c: char| "+-0123456789yYnNtTfFoO~.".contains(c));
    let mut kind = kind;
    if hinted && kind != "str" && kind != "binary" {
        if quoted {
            return Ok(Value::String(text.to_string()));
        }
        if let Some(value) = special_scalar(text) {
            return Ok(value);
        }
        if kind.is_empty() && matches!(text, ".nan" | ".NaN" | ".NAN") {
            return Err("floating point NaN is not supported".to_string());
        }
        if text.starts_with('.') && is_float_literal(text) {
            return decimal(text).ok_or_else(|| format!("cannot parse \"{text}\""));
        }
        if text.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-') {
            if matches!(kind, "" | "timestamp")
                && let Some(time) = yaml_timestamp(text)
            {
                return Ok(Value::String(time));
            }
            if is_int_literal(text) {
                kind = "int";
            } else if is_float_literal(text) {
                kind = "float";
            }
        }
    }
    let invalid = || format!("cannot parse \"{text}\" as !!{kind}");
    match kind {
        "str" => Ok(Value::String(text.to_string())),
        "binary" => match STANDARD.decode(text) {
            Ok(_) => Ok(Value::String(text.to_string())),
            Err(_) => Err(format!(
                "cannot parse \"{text}\" as !!binary: not valid base64"
            )),
        },
        "bool" => match special_scalar(text) {
            Some(flag @ Value::Bool(_)) => Ok(flag),
            _ => Err(invalid()),
        },
        "int" | "float" => {
            let plain = text.replace('_', "");
            decimal(&plain)
                .or_else(|| go_integer(&plain))
                .ok_or_else(invalid)
        }
        "timestamp" => yaml_timestamp(text).map(Value::String).ok_or_else(invalid),
        "null" => Ok(Value::Null),
        _ => Ok(Value::String(text.to_string())),
    }
}

/// The booleans, nulls and infinities YAML spells with words.
fn special_scalar(text: &str) -> Option<Value> {
    Some(match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Value::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Value::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Value::Number(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Value::Number(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// YAML 1.2 integers: decimal with an optional sign, `0o` octal, `0x` hexadecimal.
fn is_int_literal(text: &str) -> bool {
    let all =
        |digits: &str, radix: u32| !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    all(unsigned, 10)
        || text.strip_prefix("0o").is_some_and(|digits| all(digits, 8))
        || text
            .strip_prefix("0x")
            .is_some_and(|digits| all(digits, 16))
}

/// YAML 1.2 floats: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_float_literal(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let digits = |part: &str| part.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => !fraction.is_empty() && digits(fraction),
        Some((whole, fraction)) => !whole.is_empty() && digits(whole) && digits(fraction),
        None => !mantissa.is_empty() && digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|exp| {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        !exp.is_empty() && digits(exp)
    });
    mantissa_ok && exponent_ok
}

/// A decimal number (with optional sign, fraction and exponent).
fn decimal(text: &str) -> Option<Value> {
    if !is_float_literal(text) {
        return None;
    }
    text.parse::<f64>().ok().map(Value::Number)
}

/// An integer with Go's base prefixes (`0x`, `0o`, `0b`, or a leading `0` for octal).
fn go_integer(text: &str) -> Option<Value> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let lower = unsigned.to_ascii_lowercase();
    let (radix, digits) = if let Some(hex) = lower.strip_prefix("0x") {
        (16, hex)
    } else if let Some(octal) = lower.strip_prefix("0o") {
        (8, octal)
    } else if let Some(binary) = lower.strip_prefix("0b") {
        (2, binary)
    } else {
        (8, lower.strip_prefix('0')?)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()? as f64;
    Some(Value::Number(if negative { -magnitude } else { magnitude }))
}

/// A YAML timestamp (`2001-12-14`, `2001-12-14 21:59:43.10`, `2001-12-14t21:59:43.10-05:00`)
/// as an RFC 3339 string without fractional seconds.
fn yaml_timestamp(text: &str) -> Option<String> {
    let date_end = text.find(['T', 't', ' ']).unwrap_or(text.len());
    let (date, rest) = text.split_at(date_end);
    let mut parts = date.split('-');
    let year = parts.next().filter(|year| year.len() == 4)?;
    let month = parts.next().filter(|part| (1..=2).contains(&part.len()))?;
    let day = parts.next().filter(|part| (1..=2).contains(&part.len()))?;
    if parts.next().is_some()
        || ![year, month, day]
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, day.parse().ok()?)?;
    if rest.is_empty() {
        return Some(format!("{}T00:00:00Z", date.format("%Y-%m-%d")));
    }
    let spaced = rest.starts_with(' ');
    let rest = &rest[1..];
    let zone_at = if spaced {
        rest.len()
    } else {
        rest.find(['Z', '+', '-']).unwrap_or(rest.len())
    };
    let (clock, zone) = rest.split_at(zone_at);
    let time = yaml_clock(clock)?;
    let offset = match zone {
        "" if spaced => "Z".to_string(),
        "Z" => "Z".to_string(),
        zone if zone.len() == 6 && zone.as_bytes()[3] == b':' => {
            if &zone[1..] == "00:00" {
                "Z".to_string()
            } else {
                zone.to_string()
            }
        }
        _ => return None,
    };
    let stamp = NaiveDateTime::new(date, time);
    Some(format!("{}{offset}", stamp.format("%Y-%m-%dT%H:%M:%S")))
}

/// `h:m:s` with one- or two-digit fields and optional fractional seconds.
fn yaml_clock(clock: &str) -> Option<NaiveTime> {
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.is_empty() {
        return None;
    }
    let fields: Vec<&str> = clock.split(':').collect();
    let [hour, minute, second] = fields[..] else {
        return None;
    };
    let number = |part: &str| {
        ((1..=2).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse::<u32>().ok())
            .flatten()
    };
    NaiveTime::from_hms_opt(number(hour)?, number(minute)?, number(second)?)
}

/// A block-style YAML writer that tracks what libyaml's emitter tracks.
struct Emitter {
    out: String,
    column: usize,
    /// The last character written was whitespace (or nothing has been written on the line).
    whitespace: bool,
    /// Only indentation has been written on the current line.
    indention: bool,
    /// The document would need a `...` end marker.
    open_ended: bool,
}

impl Default for Emitter {
    fn default() -> Self {
        Emitter {
            out: String::new(),
            column: 0,
            whitespace: true,
            indention: true,
            open_ended: false,
        }
    }
}

impl Emitter {
    fn put(&mut self, ch: char) {
        self.out.push(ch);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn indicator(
        &mut self,
        text: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        text.chars().for_each(|ch| self.put(ch));
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    fn root(&mut self, value: &Value) {
        self.node(value, None, false);
        self.write_indent(0);
        if self.open_ended {
            self.indicator("...", true, false, false);
            self.write_indent(0);
        }
    }

    /// Writes a value whose container is at `indent` (`None` at the root); `mapping_value`
    /// when it follows a mapping key's `:`.
    fn node(&mut self, value: &Value, indent: Option<usize>, mapping_value: bool) {
        let inner = indent.map_or(0, |indent| indent + 2);
        match value {
            Value::List(items) | Value::Set(items) if items.is_empty() => self.flow_empty("[", "]"),
            Value::Object(map) if map.is_empty() => self.flow_empty("{", "}"),
            Value::List(items) | Value::Set(items) => {
                let indentless = mapping_value && !self.indention;
                let own = match indent {
                    Some(indent) if indentless => indent,
                    _ => inner,
                };
                self.sequence(items, if indent.is_none() { 0 } else { own });
            }
            Value::Object(map) => self.mapping(map, if indent.is_none() { 0 } else { inner }),
            scalar => self.scalar(
                scalar,
                indent.map_or(2, |indent| indent + 2),
                indent.is_none(),
            ),
        }
    }

    fn flow_empty(&mut self, open: &str, close: &str) {
        self.indicator(open, true, true, false);
        self.indicator(close, false, false, false);
    }

    fn sequence(&mut self, items: &[Value], indent: usize) {
        for item in items {
            self.write_indent(indent);
            self.indicator("-", true, false, true);
            self.node(item, Some(indent), false);
        }
    }

    fn mapping(&mut self, map: &BTreeMap<String, Value>, indent: usize) {
        for (key, value) in map {
            self.write_indent(indent);
            if key.len() <= SIMPLE_KEY_LIMIT && !key.contains(is_break) {
                self.double_quoted(key, indent + 2, false);
                self.indicator(":", false, false, false);
            } else {
                self.indicator("?", true, false, true);
                self.string(key, indent + 2);
                self.write_indent(indent);
                self.indicator(":", true, false, true);
            }
            self.node(value, Some(indent), true);
        }
    }

    /// A null, bool, number or string whose continuation lines are indented by `indent`.
    fn scalar(&mut self, value: &Value, indent: usize, root: bool) {
        let plain = match value {
            Value::String(text) => return self.string(text, indent),
            Value::Number(number) => number_text(*number),
            Value::Bool(flag) => flag.to_string(),
            _ => "null".to_string(),
        };
        if !self.whitespace {
            self.put(' ');
        }
        plain.chars().for_each(|ch| self.put(ch));
        self.whitespace = false;
        self.indention = false;
        if root {
            self.open_ended = true;
        }
    }

    /// A string: a literal block when it has a newline and a block can hold it, else quoted.
    fn string(&mut self, text: &str, indent: usize) {
        if text.contains('\n') && block_allowed(text) {
            self.literal(text, indent);
        } else {
            self.double_quoted(text, indent, true);
        }
    }

    fn double_quoted(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        self.indicator("\"", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        let mut at = 0;
        while at < chars.len() {
            let ch = chars[at];
            if !is_printable(ch) || is_break(ch) || ch == '"' || ch == '\\' {
                escape(ch).chars().for_each(|out| self.put(out));
                spaces = false;
            } else if ch == ' ' {
                let fold = allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && at != 0
                    && at != chars.len() - 1;
                if fold {
                    self.write_indent(indent);
                    if chars.get(at + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(ch);
                }
                spaces = true;
            } else {
                self.put(ch);
                spaces = false;
            }
            at += 1;
        }
        self.indicator("\"", false, false, false);
    }

    fn literal(&mut self, text: &str, indent: usize) {
        self.indicator("|", true, false, false);
        if text.starts_with([' ', '\n']) {
            self.indicator("2", false, false, false);
        }
        let body = text.strip_suffix('\n');
        let chomp = match body {
            None => "-",
            Some(rest) if rest.is_empty() || rest.ends_with('\n') => "+",
            Some(_) => "",
        };
        if !chomp.is_empty() {
            self.indicator(chomp, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for ch in text.chars() {
            if ch == '\n' {
                self.put_break();
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(ch);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// A number as go-cty writes one: whole numbers without a fraction, never an exponent.
fn number_text(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}

fn is_break(ch: char) -> bool {
    matches!(ch, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's printable characters (it escapes everything else in double quotes).
fn is_printable(ch: char) -> bool {
    matches!(u32::from(ch), 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD)
        && ch != '\u{feff}'
}

/// Whether libyaml would write the string as a block scalar: no unprintable characters, no
/// space before a line break, no trailing space.
fn block_allowed(text: &str) -> bool {
    text.chars().all(is_printable) && !text.contains(" \n") && !text.ends_with(' ')
}

/// A character's escape in a double-quoted scalar.
fn escape(ch: char) -> String {
    let short = match ch {
        '\0' => '0',
        '\u{7}' => 'a',
        '\u{8}' => 'b',
        '\t' => 't',
        '\n' => 'n',
        '\u{b}' => 'v',
        '\u{c}' => 'f',
        '\r' => 'r',
        '\u{1b}' => 'e',
        '"' => '"',
        '\\' => '\\',
        '\u{85}' => 'N',
        '\u{a0}' => '_',
        '\u{2028}' => 'L',
        '\u{2029}' => 'P',
        other => {
            let code = u32::from(other);
            return match code {
                0..=0xFF => format!("\\x{code:02X}"),
                0x100..=0xFFFF => format!("\\u{code:04X}"),
                _ => format!("\\U{code:08X}"),
            };
        }
    };
    format!("\\{short}")
}
