//! Encoding and hash functions: `jsonencode`, `jsondecode`, `base64*`, `sha*`, `md5`,
//! `csvdecode`, `textencodebase64`, ...

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

use super::{Builtin, Call, EvalError, Value};

/// The encoding and hash functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("base64decode", 1, base64decode),
    Builtin::fixed("base64encode", 1, base64encode),
    Builtin::fixed("base64gzip", 1, base64gzip),
    Builtin::fixed("base64sha256", 1, base64sha256),
    Builtin::fixed("base64sha512", 1, base64sha512),
    Builtin::fixed("csvdecode", 1, csvdecode),
    Builtin::fixed("jsondecode", 1, jsondecode),
    Builtin::fixed("jsonencode", 1, jsonencode),
    Builtin::fixed("md5", 1, md5),
    Builtin::fixed("sha1", 1, sha1),
    Builtin::fixed("sha256", 1, sha256),
    Builtin::fixed("sha512", 1, sha512),
    Builtin::fixed("textdecodebase64", 2, textdecodebase64),
    Builtin::fixed("textencodebase64", 2, textencodebase64),
    Builtin::fixed("urlencode", 1, urlencode),
];

/// A known value's JSON text as `jsonencode` writes it: compact, keys sorted, and `<`, `>`,
/// `&`, U+2028 and U+2029 escaped. `None` for a value containing an unknown.
pub(super) fn json_text(value: &Value) -> Option<String> {
    let text = value.to_json()?.to_string();
    Some(
        text.replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029"),
    )
}

fn jsonencode(call: &Call) -> Result<Value, EvalError> {
    json_text(call.arg(0)?)
        .map(Value::String)
        .ok_or_else(|| call.error("cannot encode an unknown value"))
}

fn jsondecode(call: &Call) -> Result<Value, EvalError> {
    let text = call.string(0)?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| call.error(format!("invalid JSON: {error}")))?;
    Ok(Value::from_json(&json))
}

fn base64encode(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::String(STANDARD.encode(call.string(0)?)))
}

fn base64decode(call: &Call) -> Result<Value, EvalError> {
    let bytes = STANDARD
        .decode(call.string(0)?)
        .map_err(|error| call.error(format!("invalid base64: {error}")))?;
    String::from_utf8(bytes)
        .map(Value::String)
        .map_err(|_| call.error("the decoded bytes are not valid UTF-8"))
}

fn urlencode(call: &Call) -> Result<Value, EvalError> {
    let mut out = String::new();
    for byte in call.string(0)?.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(byte))
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    Ok(Value::String(out))
}

/// The digest of argument 0's UTF-8 bytes.
fn digest<D: Digest>(call: &Call) -> Result<Vec<u8>, EvalError> {
    Ok(D::digest(call.string(0)?.as_bytes()).to_vec())
}

/// Lower-case hexadecimal digits of `bytes`, as the `sha*` and `md5` functions write them.
pub(super) fn hex(bytes: &[u8]) -> Value {
    Value::String(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

fn md5(call: &Call) -> Result<Value, EvalError> {
    digest::<md5::Md5>(call).map(|bytes| hex(&bytes))
}

fn sha1(call: &Call) -> Result<Value, EvalError> {
    digest::<sha1::Sha1>(call).map(|bytes| hex(&bytes))
}

fn sha256(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha256>(call).map(|bytes| hex(&bytes))
}

fn sha512(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha512>(call).map(|bytes| hex(&bytes))
}

fn base64sha256(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha256>(call).map(|bytes| Value::String(STANDARD.encode(bytes)))
}

fn base64sha512(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha512>(call).map(|bytes| Value::String(STANDARD.encode(bytes)))
}

/// gzip framed as Go's `compress/gzip` writes it for Terraform (header with no name or time and
/// OS "unknown", a sync flush, then an empty final stored block), then base64.
fn base64gzip(call: &Call) -> Result<Value, EvalError> {
    let input = call.string(0)?.into_bytes();
    let mut deflate = Vec::with_capacity(input.len() + 64);
    if !input.is_empty() {
        let mut compress = flate2::Compress::new(flate2::Compression::default(), false);
        compress
            .compress_vec(&input, &mut deflate, flate2::FlushCompress::Sync)
            .map_err(|error| call.error(format!("cannot compress: {error}")))?;
    } else {
        deflate.extend_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xff]);
    }
    let mut crc = flate2::Crc::new();
    crc.update(&input);
    let mut out = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend_from_slice(&deflate);
    out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(input.len() as u32).to_le_bytes());
    Ok(Value::String(STANDARD.encode(out)))
}

/// RFC 4180 CSV read as Go's `encoding/csv` does: the first record names the columns, every
/// record must have as many fields, empty lines are skipped, and a quote inside an unquoted
/// field is an error.
fn csvdecode(call: &Call) -> Result<Value, EvalError> {
    let text = call.string(0)?;
    let records = csv_records(&text).map_err(|(line, message)| {
        call.error(format!("CSV parse error on line {line}: {message}"))
    })?;
    let Some((header, rows)) = records.split_first() else {
        return Err(call.error("missing header line"));
    };
    for (index, name) in header.iter().enumerate() {
        if header[..index].contains(name) {
            return Err(call.error(format!("duplicate column name \"{name}\"")));
        }
    }
    let rows = rows.iter().map(|row| {
        let fields = header
            .iter()
            .cloned()
            .zip(row.iter().cloned().map(Value::String));
        Value::Object(fields.collect::<BTreeMap<_, _>>())
    });
    Ok(Value::List(rows.collect()))
}

/// The records of a CSV text; an error carries its 1-based line number and message.
fn csv_records(text: &str) -> Result<Vec<Vec<String>>, (usize, &'static str)> {
    let text = text
        .strip_suffix('\r')
        .unwrap_or(text)
        .replace("\r\n", "\n");
    let mut lines = text.split_inclusive('\n').enumerate().peekable();
    let mut records: Vec<Vec<String>> = Vec::new();
    while let Some((index, line)) = lines.next() {
        if line == "\n" {
            continue;
        }
        let record = csv_record(line, index + 1, &mut lines)?;
        if records
            .first()
            .is_some_and(|first| first.len() != record.len())
        {
            return Err((index + 1, "wrong number of fields"));
        }
        records.push(record);
    }
    Ok(records)
}

/// One record starting at `line`, taking more lines while a quoted field spans them.
fn csv_record<'a>(
    line: &'a str,
    number: usize,
    more: &mut impl Iterator<Item = (usize, &'a str)>,
) -> Result<Vec<String>, (usize, &'static str)> {
    let mut fields = Vec::new();
    let mut rest = line.strip_suffix('\n').unwrap_or(line).to_string();
    loop {
        let Some(quoted) = rest.strip_prefix('"') else {
            let (field, tail) = rest.split_once(',').unwrap_or((&rest, ""));
            if field.contains('"') {
                return Err((number, "bare \" in non-quoted-field"));
            }
            fields.push(field.to_string());
            let done = !rest.contains(',');
            rest = tail.to_string();
            if done {
                return Ok(fields);
            }
            continue;
        };
        let mut quoted = quoted.to_string();
        let mut field = String::new();
        loop {
            match quoted.find('"') {
                None => {
                    field.push_str(&quoted);
                    field.push('\n');
                    let (_, next) = more
                        .next()
                        .ok_or((number, "extraneous or missing \" in quoted-field"))?;
                    quoted = next.strip_suffix('\n').unwrap_or(next).to_string();
                }
                Some(at) => {
                    field.push_str(&quoted[..at]);
                    let after = &quoted[at + 1..];
                    if let Some(escaped) = after.strip_prefix('"') {
                        field.push('"');
                        quoted = escaped.to_string();
                    } else if after.is_empty() {
                        fields.push(field);
                        return Ok(fields);
                    } else if let Some(tail) = after.strip_prefix(',') {
                        fields.push(field);
                        rest = tail.to_string();
                        break;
                    } else {
                        return Err((number, "extraneous or missing \" in quoted-field"));
                    }
                }
            }
        }
    }
}

/// Encodes the string in the named character encoding, then base64.
fn textencodebase64(call: &Call) -> Result<Value, EvalError> {
    let (text, name) = (call.string(0)?, call.string(1)?);
    let bytes = text_encoding(call, &name)?.encode(&text).ok_or_else(|| {
        call.error(format!(
            "the given string contains characters that cannot be represented in {name}"
        ))
    })?;
    Ok(Value::String(STANDARD.encode(bytes)))
}

/// Decodes base64, then reads the bytes in the named character encoding.
fn textdecodebase64(call: &Call) -> Result<Value, EvalError> {
    let (encoded, name) = (call.string(0)?, call.string(1)?);
    let encoding = text_encoding(call, &name)?;
    let bytes = STANDARD
        .decode(encoded)
        .map_err(|error| call.error(format!("invalid base64: {error}")))?;
    encoding.decode(&bytes).map(Value::String).ok_or_else(|| {
        call.error(format!(
            "the given string contains symbols that are not defined for {name}"
        ))
    })
}

/// A character encoding `textencodebase64` and `textdecodebase64` accept.
enum TextEncoding {
    /// UTF-16 of the given byte order; `bom` writes a byte order mark (plain `UTF-16`, which
    /// is big-endian unless a read mark says otherwise).
    Utf16 { big_endian: bool, bom: bool },
    /// A single-byte encoding of the first `limit` code points (ISO-8859-1, US-ASCII).
    Prefix { limit: u32 },
    /// Any other encoding the WHATWG Encoding Standard knows by this label.
    Other(&'static encoding_rs::Encoding),
}

/// The encoding an IANA name or alias stands for, as Terraform looks it up.
fn text_encoding(call: &Call, name: &str) -> Result<TextEncoding, EvalError> {
    const LATIN1: &[&str] = &[
        "iso-8859-1",
        "iso_8859-1",
        "iso_8859-1:1987",
        "iso-ir-100",
        "latin1",
        "l1",
        "ibm819",
        "cp819",
        "csisolatin1",
    ];
    const ASCII: &[&str] = &[
        "us-ascii",
        "iso-ir-6",
        "ansi_x3.4-1968",
        "ansi_x3.4-1986",
        "iso_646.irv:1991",
        "iso646-us",
        "us",
        "ibm367",
        "cp367",
        "csascii",
    ];
    let label = name.trim().to_ascii_lowercase();
    Ok(match label.as_str() {
        "utf-16" | "csutf16" => TextEncoding::Utf16 {
            big_endian: true,
            bom: true,
        },
        "utf-16be" | "csutf16be" => TextEncoding::Utf16 {
            big_endian: true,
            bom: false,
        },
        "utf-16le" | "csutf16le" => TextEncoding::Utf16 {
            big_endian: false,
            bom: false,
        },
        other if LATIN1.contains(&other) => TextEncoding::Prefix { limit: 0x100 },
        other if ASCII.contains(&other) => TextEncoding::Prefix { limit: 0x80 },
        other => encoding_rs::Encoding::for_label_no_replacement(other.as_bytes())
            .map(TextEncoding::Other)
            .ok_or_else(|| {
                call.error(format!(
                    "\"{name}\" is not a supported IANA encoding name or alias"
                ))
            })?,
    })
}

impl TextEncoding {
    /// The text's bytes; `None` when some character has no encoding.
    fn encode(&self, text: &str) -> Option<Vec<u8>> {
        match *self {
            TextEncoding::Utf16 { big_endian, bom } => {
                let units = bom.then_some(0xfeff).into_iter().chain(text.encode_utf16());
                Some(
                    units
                        .flat_map(|unit| unit_bytes(unit, big_endian))
                        .collect(),
                )
            }
            TextEncoding::Prefix { limit } => text
                .chars()
                .map(|ch| {
                    u8::try_from(u32::from(ch))
                        .ok()
                        .filter(|_| u32::from(ch) < limit)
                })
                .collect(),
            TextEncoding::Other(encoding) => {
                let (bytes, _, unmappable) = encoding.encode(text);
                (!unmappable).then(|| bytes.into_owned())
            }
        }
    }

    /// The text the bytes encode; `None` when they are not valid in this encoding.
    fn decode(&self, bytes: &[u8]) -> Option<String> {
        match *self {
            TextEncoding::Utf16 { big_endian, bom } => {
                let (big_endian, body) = match (bom, bytes) {
                    (true, [0xfe, 0xff, rest @ ..]) => (true, rest),
                    (true, [0xff, 0xfe, rest @ ..]) => (false, rest),
                    _ => (big_endian, bytes),
                };
                let units = body.chunks(2).map(|pair| match (pair, big_endian) {
                    ([high, low], true) | ([low, high], false) => {
                        Some(u16::from_be_bytes([*high, *low]))
                    }
                    _ => None,
                });
                String::from_utf16(&units.collect::<Option<Vec<u16>>>()?).ok()
            }
            TextEncoding::Prefix { limit } => bytes
                .iter()
                .map(|byte| (u32::from(*byte) < limit).then_some(char::from(*byte)))
                .collect(),
            TextEncoding::Other(encoding) => encoding
                .decode_without_bom_handling_and_without_replacement(bytes)
                .map(|text| text.into_owned()),
        }
    }
}

fn unit_bytes(unit: u16, big_endian: bool) -> [u8; 2] {
    if big_endian {
        unit.to_be_bytes()
    } else {
        unit.to_le_bytes()
    }
}
