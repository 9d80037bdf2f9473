//! Splits a byte stream of CloudTrail records into one slice per record, without reading the
//! whole stream into memory and without parsing the records.
//!
//! Accepted layouts, detected from the content rather than the file name:
//! - the S3-delivered envelope `{"Records": [ {...}, {...} ]}` (several envelopes may follow
//!   one another, as `cat` of two log files gives);
//! - a bare JSON array of records `[ {...}, {...} ]`;
//! - NDJSON, one record per line, as CloudTrail Lake and Athena exports give; a malformed line
//!   costs only that line;
//! - records written one after another, pretty-printed or not.
//!
//! The scanner tracks only nesting depth and string state, jumping through string contents
//! (with `memchr`, or eight bytes at a time inside records), so it runs far faster than a JSON
//! parse. Each record slice is then parsed on its own, which is what lets a malformed record
//! be reported and skipped while the rest go on.

use std::io::Read;

/// Bytes read from the underlying reader at a time.
const CHUNK: usize = 1 << 20;

/// One record's bytes and where they start in the stream.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Zero-based index of the record in the stream.
    pub index: u64,
    /// Byte offset of the record's first byte in the (decompressed) stream.
    pub offset: u64,
    /// The record's bytes, or why they cannot form a record.
    pub body: FrameBody<'a>,
}

/// The content of a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameBody<'a> {
    /// Bytes that should hold one JSON record.
    Record(&'a [u8]),
    /// The stream ended inside a value: a record is cut off, or a malformed record (an
    /// unclosed bracket or string) swallowed the records after it. The bytes from its start to
    /// the end of the stream; [`resync`] finds where the next good record begins.
    Truncated(&'a [u8]),
    /// Bytes at the top level that are not a record, up to the end of their line.
    Garbage,
}

/// An I/O failure of the underlying reader (e.g. a truncated gzip stream).
#[derive(Debug, thiserror::Error)]
#[error("read failed at byte {offset}: {source}")]
pub struct FramingError {
    /// Bytes successfully read before the failure.
    pub offset: u64,
    /// The reader's error.
    #[source]
    pub source: std::io::Error,
}

/// Which layout the scanner is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Between top-level values; the next one decides the layout.
    Top,
    /// Inside an array of records whose elements sit at this depth.
    Container(u32),
    /// One record per line.
    Lines,
}

/// The streaming splitter. Call [`Splitter::next_frame`] until it returns `None`.
pub struct Splitter<R> {
    reader: R,
    buf: Buffer,
    /// Scan position in `buf`.
    pos: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    eof: bool,
    mode: Mode,
    index: u64,
    depth: u32,
    in_string: bool,
    /// Start of the value being framed, if any.
    start: Option<usize>,
    /// Depth at which the value being framed began.
    start_depth: u32,
    /// Start of the last string opened at depth 1 of a top-level object (envelope key check).
    key_start: usize,
    /// Whether the last depth-1 string of a top-level object was `"Records"`.
    key_is_records: bool,
    /// Whether the scanner is skipping the rest of a line of garbage.
    skipping_line: bool,
}

impl<R: Read> Splitter<R> {
    /// A splitter over `reader`. Wrap files in nothing: it buffers by itself.
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            buf: Buffer::default(),
            pos: 0,
            base: 0,
            eof: false,
            mode: Mode::Top,
            index: 0,
            depth: 0,
            in_string: false,
            start: None,
            start_depth: 0,
            key_start: 0,
            key_is_records: false,
            skipping_line: false,
        }
    }

    /// The next record frame, `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, FramingError> {
        loop {
            if let Some((from, to, body)) = self.scan() {
                return Ok(Some(self.frame(from, to, body)));
            }
            if self.eof {
                return Ok(self.finish());
            }
            self.refill()?;
        }
    }

    fn frame(&mut self, from: usize, to: usize, kind: Kind) -> Frame<'_> {
        let index = self.index;
        self.index += 1;
        let body = match kind {
            Kind::Record => FrameBody::Record(&self.buf[from..to]),
            Kind::Garbage => FrameBody::Garbage,
        };
        Frame {
            index,
            offset: self.base + from as u64,
            body,
        }
    }

    /// At the end of the stream: a value still open is a truncated record.
    fn finish(&mut self) -> Option<Frame<'_>> {
        let start = self.start.take()?;
        if self.mode == Mode::Lines {
            let line = trim_ascii(&self.buf[start..]);
            if line.is_empty() {
                return None;
            }
            let (from, to) = (start, self.buf.len());
            return Some(self.frame(from, to, Kind::Record));
        }
        let index = self.index;
        self.index += 1;
        Some(Frame {
            index,
            offset: self.base + start as u64,
            body: FrameBody::Truncated(&self.buf[start..]),
        })
    }

    /// Drops consumed bytes and reads the next chunk.
    fn refill(&mut self) -> Result<(), FramingError> {
        // Keep the value being framed and an unfinished string (its text may be a key).
        let mut keep_from = self.start.unwrap_or(self.pos).min(self.pos);
        if self.in_string {
            keep_from = keep_from.min(self.key_start.saturating_sub(1));
        }
        self.buf.consume(keep_from);
        self.base += keep_from as u64;
        self.pos -= keep_from;
        if let Some(start) = self.start.as_mut() {
            *start -= keep_from;
        }
        self.key_start = self.key_start.saturating_sub(keep_from);
        let read = loop {
            match self.buf.read_from(&mut self.reader) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(FramingError {
                        offset: self.base + self.buf.len() as u64,
                        source,
                    });
                }
            }
        };
        if read == 0 {
            self.eof = true;
        }
        Ok(())
    }

    /// Scans from `pos` until a frame completes (returned) or more input is needed (`None`).
    fn scan(&mut self) -> Option<(usize, usize, Kind)> {
        match self.mode {
            Mode::Lines => self.scan_line(),
            _ => self.scan_json(),
        }
    }

    fn scan_line(&mut self) -> Option<(usize, usize, Kind)> {
        loop {
            let start = *self.start.get_or_insert(self.pos);
            let Some(nl) = memchr::memchr(b'\n', &self.buf[self.pos..]) else {
                self.pos = self.buf.len();
                return None;
            };
            let end = self.pos + nl;
            self.pos = end + 1;
            self.start = None;
            let line = &self.buf[start..end];
            let trimmed = trim_ascii(line);
            if !trimmed.is_empty() {
                let lead = line.len() - line.trim_ascii_start().len();
                return Some((start + lead, start + lead + trimmed.len(), Kind::Record));
            }
        }
    }

    fn scan_json(&mut self) -> Option<(usize, usize, Kind)> {
        while self.pos < self.buf.len() {
            if self.inside_container_record() {
                return self.scan_record_body();
            }
            if self.skipping_line {
                self.skip_line();
                continue;
            }
            if self.in_string {
                self.skip_string()?;
                continue;
            }
            let at = self.pos;
            let byte = self.buf[at];
            self.pos += 1;
            if let Some(done) = self.structural(at, byte) {
                return Some(done);
            }
        }
        None
    }

    /// Whether the scanner is inside an object or array element of a records container (the
    /// common case), where only strings and brackets can change the state.
    fn inside_container_record(&self) -> bool {
        self.start.is_some()
            && self.mode == Mode::Container(self.start_depth)
            && self.depth > self.start_depth
    }

    /// Scans a container element to its closing bracket (returned as a frame), or to the end
    /// of the buffer (`None`). Records are mostly short strings: their contents are passed
    /// over eight bytes at a time, the few bytes between them one at a time.
    fn scan_record_body(&mut self) -> Option<(usize, usize, Kind)> {
        let start = self.start?;
        let bytes = &self.buf;
        let mut depth = self.depth;
        let mut in_string = self.in_string;
        let mut at = self.pos;
        while at < bytes.len() {
            if in_string {
                at = quote_or_escape(bytes, at);
                match bytes.get(at..).unwrap_or_default() {
                    [] => break,
                    // A key and its value, or a value and the next key: `":"`, `","`.
                    [b'"', b':' | b',', b'"', ..] => {
                        at += 2;
                        self.key_start = at + 1;
                    }
                    [b'"', ..] => in_string = false,
                    // The escaped byte is in the next chunk; resume at the backslash.
                    [_] => break,
                    _ => at += 1,
                }
            } else {
                match bytes[at] {
                    b'"' => {
                        in_string = true;
                        self.key_start = at + 1;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == self.start_depth {
                            self.depth = depth;
                            self.in_string = false;
                            self.pos = at + 1;
                            self.start = None;
                            return Some((start, at + 1, Kind::Record));
                        }
                    }
                    _ => {}
                }
            }
            at += 1;
        }
        self.depth = depth;
        self.in_string = in_string;
        self.pos = at;
        None
    }

    /// Moves through string contents to the closing quote; `None` when the buffer ends first.
    fn skip_string(&mut self) -> Option<()> {
        loop {
            let rest = &self.buf[self.pos..];
            let Some(hit) = memchr::memchr2(b'"', b'\\', rest) else {
                self.pos = self.buf.len();
                return None;
            };
            let at = self.pos + hit;
            if self.buf[at] == b'\\' {
                if at + 1 >= self.buf.len() {
                    // The escaped byte is in the next chunk; resume at the backslash.
                    self.pos = at;
                    return None;
                }
                self.pos = at + 2;
                continue;
            }
            self.pos = at + 1;
            self.in_string = false;
            self.close_string(at);
            return Some(());
        }
    }

    /// Tracks top-level object keys so `{"Records": [` is recognised as an envelope.
    fn close_string(&mut self, quote: usize) {
        if self.mode == Mode::Top && self.depth == 1 {
            self.key_is_records = &self.buf[self.key_start..quote] == b"Records";
        }
    }

    fn structural(&mut self, at: usize, byte: u8) -> Option<(usize, usize, Kind)> {
        let at_top = self.mode == Mode::Top && self.depth == 0;
        match byte {
            b'"' | b'}' | b']' if at_top => return Some(self.garbage_line(at)),
            b'"' => {
                self.in_string = true;
                self.key_start = at + 1;
                self.begin_scalar(at);
            }
            b'{' | b'[' => self.open(at, byte),
            b'}' | b']' => return self.close(at),
            b',' => return self.separator(at),
            b' ' | b'\t' | b'\r' | b'\n' => return self.end_scalar(at),
            0xEF | 0xBB | 0xBF if at_top => {} // UTF-8 byte order mark
            _ if at_top => return Some(self.garbage_line(at)),
            _ => self.begin_scalar(at),
        }
        None
    }

    /// A scalar element directly inside the records container starts a (bad) record.
    fn begin_scalar(&mut self, at: usize) {
        if self.start.is_none() && self.mode == Mode::Container(self.depth) {
            self.start = Some(at);
            self.start_depth = self.depth;
        }
    }

    /// A scalar element ends at whitespace, a comma or the container's end.
    fn end_scalar(&mut self, at: usize) -> Option<(usize, usize, Kind)> {
        let start = self.start?;
        (self.mode == Mode::Container(self.depth) && self.start_depth == self.depth).then(|| {
            self.start = None;
            (start, at, Kind::Record)
        })
    }

    fn separator(&mut self, at: usize) -> Option<(usize, usize, Kind)> {
        self.end_scalar(at)
    }

    fn open(&mut self, at: usize, byte: u8) {
        let opening_envelope =
            self.mode == Mode::Top && self.depth == 1 && byte == b'[' && self.key_is_records;
        if opening_envelope {
            // The top-level object is an envelope, not a record: frame its elements instead.
            self.start = None;
            self.mode = Mode::Container(2);
        } else if self.mode == Mode::Top && self.depth == 0 {
            if byte == b'[' {
                self.mode = Mode::Container(1);
            } else {
                self.start = Some(at);
                self.start_depth = 0;
                self.key_is_records = false;
            }
        } else if self.start.is_none() && self.mode == Mode::Container(self.depth) {
            self.start = Some(at);
            self.start_depth = self.depth;
        }
        self.depth += 1;
    }

    fn close(&mut self, at: usize) -> Option<(usize, usize, Kind)> {
        let scalar = self.end_scalar(at);
        if scalar.is_some() {
            self.pos = at; // re-read the closer after returning the scalar
            return scalar;
        }
        self.depth = self.depth.saturating_sub(1);
        if let Mode::Container(d) = self.mode
            && self.depth < d
        {
            // The records container closed; an envelope's outer object closes at depth 0.
            self.mode = Mode::Top;
            return None;
        }
        let start = self.start?;
        if self.depth != self.start_depth {
            return None;
        }
        self.start = None;
        if self.mode == Mode::Top && !self.buf[start..=at].contains(&b'\n') {
            // A single-line record at the top level: the rest is NDJSON.
            self.mode = Mode::Lines;
        }
        Some((start, at + 1, Kind::Record))
    }

    /// Non-JSON bytes at the top level: report them, then skip to the end of the line.
    fn garbage_line(&mut self, at: usize) -> (usize, usize, Kind) {
        self.skipping_line = true;
        (at, at, Kind::Garbage)
    }

    fn skip_line(&mut self) {
        match memchr::memchr(b'\n', &self.buf[self.pos..]) {
            Some(nl) => {
                self.pos += nl + 1;
                self.skipping_line = false;
            }
            None => self.pos = self.buf.len(),
        }
    }
}

/// The position of the first `"` or `\` in `bytes` at or after `from`, or the length of
/// `bytes`. Eight bytes are tested at a time with word arithmetic, which suits the short
/// strings of records better than a vectorised search's setup.
fn quote_or_escape(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of the result is set where `word` has `byte` (the lowest
    // such bit is exact; higher ones may be false positives, so only the lowest is used).
    let matches = |word: u64, byte: u8| {
        let diff = word ^ (ONES * u64::from(byte));
        diff.wrapping_sub(ONES) & !diff & HIGHS
    };
    let mut at = from;
    while let Some(chunk) = bytes.get(at..).and_then(|rest| rest.first_chunk::<8>()) {
        let word = u64::from_le_bytes(*chunk);
        let hits = matches(word, b'"') | matches(word, b'\\');
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let rest = bytes.get(at..).unwrap_or_default();
    at + rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\')
        .unwrap_or(rest.len())
}

/// The bytes read and not yet consumed. Dereferences to them; the room behind them stays
/// allocated and initialised, so a read needs no clearing of memory first.
#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    len: usize,
}

impl std::ops::Deref for Buffer {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl Buffer {
    /// Drops the first `n` bytes.
    fn consume(&mut self, n: usize) {
        self.bytes.copy_within(n..self.len, 0);
        self.len -= n;
    }

    /// Appends up to [`CHUNK`] bytes with one read; returns how many were read.
    fn read_from(&mut self, reader: &mut impl Read) -> std::io::Result<usize> {
        let room = self.len + CHUNK;
        if self.bytes.len() < room {
            self.bytes.resize(room, 0);
        }
        let read = reader.read(&mut self.bytes[self.len..room])?;
        self.len += read;
        Ok(read)
    }
}

/// Where the records after a malformed one begin, in the bytes of a frame that holds more
/// than one record or of a value the stream ended inside (see [`FrameBody::Truncated`]): the
/// first `{` that is not a value inside the record (not after `:` or `[`) and starts a whole
/// JSON object with CloudTrail record fields. Returns the end of the malformed record (before that
/// separator) and the start of the next record, or `None` when no later record can be told
/// apart (a record genuinely cut off at the end of the stream).
///
/// This recovers from an unclosed bracket in one record in every layout (envelope, array,
/// concatenated; NDJSON needs none, each line standing alone). An unclosed string inverts
/// what the scanner takes for strings until the next record boundary it can see; a record
/// lost that way is reported with the malformed one.
pub fn resync(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut from = 1;
    while let Some(hit) = memchr::memchr(b'{', bytes.get(from..)?) {
        let open = from + hit;
        from = open + 1;
        let before = bytes[..open].trim_ascii_end();
        let separated = before.strip_suffix(b",").map(<[u8]>::trim_ascii_end);
        // After `:` or `[` a `{` is a value inside the record; after anything else (a comma,
        // or a value ending where the record's `}` went missing) it may start the next one.
        let end = match (separated, before.last()) {
            (Some(rest), _) => rest.len(),
            (None, Some(b':' | b'[')) | (None, None) => continue,
            (None, Some(_)) => before.len(),
        };
        if end > 0 && starts_with_record(&bytes[open..]) {
            return Some((end, open));
        }
    }
    None
}

/// Whether `bytes` begin with one whole JSON object that has a CloudTrail record's fields.
fn starts_with_record(bytes: &[u8]) -> bool {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<serde_json::Value>();
    match stream.next() {
        Some(Ok(serde_json::Value::Object(map))) => {
            ["eventVersion", "eventID", "eventTime", "eventName"]
                .iter()
                .filter(|k| map.contains_key(**k))
                .count()
                >= 2
        }
        _ => false,
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Record,
    Garbage,
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames `input` read through a reader that returns `step` bytes at a time.
    fn frames(input: &[u8], step: usize) -> Vec<(u64, String)> {
        struct Dribble<'a>(&'a [u8], usize);
        impl Read for Dribble<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.min(self.0.len()).min(out.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut splitter = Splitter::new(Dribble(input, step));
        let mut out = Vec::new();
        while let Some(frame) = splitter.next_frame().expect("no io error") {
            let text = match frame.body {
                FrameBody::Record(b) => String::from_utf8_lossy(b).into_owned(),
                FrameBody::Truncated(_) => "<truncated>".to_owned(),
                FrameBody::Garbage => "<garbage>".to_owned(),
            };
            out.push((frame.offset, text));
        }
        out
    }

    fn texts(input: &str) -> Vec<String> {
        let whole = frames(input.as_bytes(), usize::MAX);
        for step in [1, 2, 3, 7] {
            assert_eq!(frames(input.as_bytes(), step), whole, "step {step} differs");
        }
        whole.into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn envelope() {
        let input = r#"{"Records":[{"a":"x}"},{"b":[1,{"c":"\"{"}]}]}"#;
        assert_eq!(texts(input), [r#"{"a":"x}"}"#, r#"{"b":[1,{"c":"\"{"}]}"#]);
    }

    #[test]
    fn envelope_with_other_keys_and_spacing() {
        let input = "\u{feff}{ \"Other\": {\"Records\": [1]},\n \"Records\" : [\n  {\"a\":1} ,\n  {\"b\":2}\n ] }\n";
        assert_eq!(texts(input), [r#"{"a":1}"#, r#"{"b":2}"#]);
    }

    #[test]
    fn concatenated_envelopes_and_empty_ones() {
        let input = r#"{"Records":[{"a":1}]}{"Records":[]}{"Records":[{"b":2}]}"#;
        assert_eq!(texts(input), [r#"{"a":1}"#, r#"{"b":2}"#]);
    }

    #[test]
    fn bare_array_with_a_bad_element() {
        let input = r#"[{"a":1}, 42, "text", {"b":2}]"#;
        assert_eq!(
            texts(input),
            [r#"{"a":1}"#, "42", r#""text""#, r#"{"b":2}"#]
        );
    }

    #[test]
    fn ndjson_with_a_broken_line() {
        let input = "{\"a\":1}\n{\"b\":\n\n{\"c\":3}\r\n";
        assert_eq!(texts(input), [r#"{"a":1}"#, r#"{"b":"#, r#"{"c":3}"#]);
    }

    #[test]
    fn pretty_printed_records_one_after_another() {
        let input = "{\n \"a\": 1\n}\n{\n \"b\": 2\n}\n";
        assert_eq!(texts(input), ["{\n \"a\": 1\n}", "{\n \"b\": 2\n}"]);
    }

    #[test]
    fn truncated_envelope() {
        let input = r#"{"Records":[{"a":1},{"b":"#;
        assert_eq!(texts(input), [r#"{"a":1}"#, "<truncated>"]);
    }

    #[test]
    fn garbage_at_the_top() {
        let input = "not json\n{\"a\":1}\n";
        assert_eq!(texts(input), ["<garbage>", r#"{"a":1}"#]);
    }

    #[test]
    fn offsets_point_at_records() {
        let input = b"{\"Records\":[{\"a\":1},\n {\"b\":2}]}";
        let got = frames(input, 4);
        assert_eq!(got[0].0, 12);
        assert_eq!(got[1].0, 22);
        assert_eq!(&input[22..23], b"{");
    }

    #[test]
    fn empty_input() {
        assert!(texts("").is_empty());
        assert!(texts("  \n").is_empty());
        assert!(texts("[]").is_empty());
    }

    #[test]
    fn io_errors_name_the_offset() {
        struct Broken(usize);
        impl Read for Broken {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "cut",
                    ));
                }
                out[0] = b'[';
                self.0 -= 1;
                Ok(1)
            }
        }
        let mut splitter = Splitter::new(Broken(1));
        let err = splitter.next_frame().expect_err("io error surfaces");
        assert_eq!(err.offset, 1);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300), step in 1usize..9) {
            let _ = frames(&bytes, step);
        }

        #[test]
        fn chunking_never_changes_frames(n in 0usize..20, step in 1usize..17) {
            let records: Vec<String> = (0..n).map(|i| format!(r#"{{"i":{i},"s":"a\"b}}{{[","n":[{{}}]}}"#)).collect();
            let input = format!(r#"{{"Records":[{}]}}"#, records.join(","));
            let got: Vec<String> = frames(input.as_bytes(), step).into_iter().map(|(_, t)| t).collect();
            proptest::prop_assert_eq!(got, records);
        }
    }
}

#[cfg(test)]
mod resync_tests {
    use super::resync;

    #[test]
    fn the_next_record_is_found_after_the_bad_one_and_not_inside_it() {
        let bad = r#"{"eventVersion":"1.09","eventID":"a","resources":[{"ARN":"x"},{"ARN":"y"}],"p":{"q":1}"#;
        let good = r#"{"eventVersion":"1.09","eventID":"b","eventTime":"t"}"#;
        for sep in [",", ", \n  ", "\n", ""] {
            let text = format!("{bad}{sep}{good}]");
            assert_eq!(
                resync(text.as_bytes()),
                Some((bad.len(), bad.len() + sep.len())),
                "separator {sep:?}"
            );
        }
        // A nested object after a comma is no record; nothing later is one either.
        assert_eq!(resync(bad.as_bytes()), None);
    }
}
