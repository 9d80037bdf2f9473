//! CloudTrail log files: single files in any accepted layout (see [`super::framing`]), plain
//! or gzipped, and directory trees in S3's delivery layout
//! `AWSLogs/[o-ORG/]ACCOUNT/CloudTrail/REGION/YYYY/MM/DD/`, pruned by the filter.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{Days, NaiveDate};
use flate2::read::MultiGzDecoder;
use futures::StreamExt;
use indicatif::ProgressBar;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::athena;
use super::filter::{Filter, Pushdown};
use super::framing::{FrameBody, Splitter, resync};
use super::record::{Origin, Record, RecordError};
use super::source::{
    BadRecord, CallStream, CountedRecord, Source, SourceError, SourceItem, SourceResult,
};
use super::verdict::settled_verdict;

/// Records sent to the consumer at a time, to keep channel overhead off the hot path.
const BATCH: usize = 256;
/// Record bytes beyond which a batch is sent early, so batches of large records stay small.
const BATCH_BYTES: usize = BATCH * 4096;
/// Read buffer for files; large reads keep system-call overhead low.
const READ_BUFFER: usize = 256 * 1024;
/// Chunks of parsed records a worker may hold ahead of the file being passed on: 32,768
/// records, more than a busy account's delivery file holds, so a worker does not wait idle
/// while the files before its own are passed on; a few MB per worker.
const WORKER_CHUNKS: usize = 128;

/// Log files and directories of log files.
#[derive(Debug, Clone, Default)]
pub struct FileSource {
    paths: Vec<PathBuf>,
    progress: Option<ProgressBar>,
}

impl FileSource {
    /// A source over these files and directories.
    pub fn new(paths: Vec<PathBuf>) -> Self {
        Self {
            paths,
            progress: None,
        }
    }

    /// Reports bytes read (compressed bytes for gzip files) to a progress bar.
    pub fn with_progress(mut self, bar: ProgressBar) -> Self {
        self.progress = Some(bar);
        self
    }
}

impl Source for FileSource {
    fn describe(&self) -> String {
        let names: Vec<String> = self.paths.iter().map(|p| p.display().to_string()).collect();
        format!("files: {}", names.join(", "))
    }

    /// A thread reads and frames the files; the records are parsed as the stream is polled,
    /// so each call is allocated and freed on the consumer's thread, where the allocator's
    /// per-thread caches serve both. Several files on a machine with several cores are read,
    /// framed and parsed by one worker per core instead (see [`read_in_parallel`]), in the
    /// files' order. With `writes_only`, records the first attribution checks settle are
    /// counted without being made into calls.
    fn calls(&self, pushdown: &Pushdown) -> CallStream {
        let (tx, rx) = mpsc::channel::<Batch>(8);
        let paths = self.paths.clone();
        let pushdown = Arc::new(pushdown.clone());
        let progress = self.progress.clone();
        let reading = pushdown.clone();
        std::thread::spawn(move || {
            let mut sender = BatchSender {
                tx,
                batch: Batch::new(),
            };
            let (files, errors) = discover(&paths, &reading.filter);
            for error in errors {
                sender.send(Framed::Done(Err(error)));
            }
            if let Some(bar) = &progress {
                bar.set_length(files.iter().map(|f| file_size(f)).sum());
            }
            let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
            if files.len() > 1 && workers > 1 {
                sender.flush();
                read_in_parallel(files, workers, &reading, progress.as_ref(), &sender.tx);
                return;
            }
            for file in files {
                if !read_frames(&file, progress.as_ref(), &mut |item| sender.send(item)) {
                    return;
                }
            }
            sender.flush();
        });
        ReceiverStream::new(rx)
            .flat_map(move |batch| futures::stream::iter(batch.into_results(pushdown.clone())))
            .boxed()
    }
}

/// Parsed results of one file, sent by a worker: a file's last chunk says so.
struct Chunk {
    results: Vec<SourceResult>,
    last: bool,
}

/// Reads, frames and parses `files` on `workers` threads (file `i` on worker `i % workers`)
/// and passes the results on to `tx` in the files' order, so the output is the same as one
/// thread's. Each worker runs at most [`WORKER_CHUNKS`] chunks ahead of the file being passed
/// on, which keeps memory flat whatever the number of files.
fn read_in_parallel(
    files: Vec<PathBuf>,
    workers: usize,
    pushdown: &Arc<Pushdown>,
    progress: Option<&ProgressBar>,
    tx: &mpsc::Sender<Batch>,
) {
    let workers = workers.min(files.len());
    let files = Arc::new(files);
    let mut receivers = Vec::with_capacity(workers);
    for worker in 0..workers {
        let (chunks, received) = std::sync::mpsc::sync_channel::<Chunk>(WORKER_CHUNKS);
        receivers.push(received);
        let (files, pushdown, progress) = (files.clone(), pushdown.clone(), progress.cloned());
        std::thread::spawn(move || {
            for file in files.iter().skip(worker).step_by(workers) {
                if !parse_file(file, &pushdown, progress.as_ref(), &chunks) {
                    return;
                }
            }
        });
    }
    for n in 0..files.len() {
        // A worker that stopped (the consumer went away) ends its files early.
        while let Ok(chunk) = receivers[n % workers].recv() {
            if !chunk.results.is_empty() && tx.blocking_send(Batch::parsed(chunk.results)).is_err()
            {
                return;
            }
            if chunk.last {
                break;
            }
        }
    }
}

/// Reads one file, parsing each frame, and sends its results in chunks, the last one marked;
/// `false` once the merging thread has gone away.
fn parse_file(
    path: &Path,
    pushdown: &Pushdown,
    progress: Option<&ProgressBar>,
    chunks: &std::sync::mpsc::SyncSender<Chunk>,
) -> bool {
    let mut results = Vec::with_capacity(BATCH);
    let mut open = true;
    read_frames(path, progress, &mut |item| {
        results.push(item.into_result(pushdown));
        if results.len() >= BATCH {
            let full = std::mem::replace(&mut results, Vec::with_capacity(BATCH));
            open = chunks
                .send(Chunk {
                    results: full,
                    last: false,
                })
                .is_ok();
        }
        open
    });
    open && chunks
        .send(Chunk {
            results,
            last: true,
        })
        .is_ok()
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// One frame of a file, before parsing.
enum Framed<'a> {
    /// A record's bytes and where they were read.
    Record(&'a [u8], Origin),
    /// A frame that is no record, or a file-level error: nothing left to parse.
    Done(SourceResult),
}

impl Framed<'_> {
    /// The frame's record parsed with `pushdown`, or what the frame already was.
    fn into_result(self, pushdown: &Pushdown) -> SourceResult {
        match self {
            Self::Record(bytes, origin) => Ok(parse(bytes, origin, pushdown)),
            Self::Done(result) => result,
        }
    }
}

/// Parses one record; a record that does not parse is skipped with the reason. A row of an
/// Athena export (lower-case column names) is rebuilt into the record it came from. When the
/// pushdown wants writes only, a record the first attribution checks settle is only counted.
fn parse(bytes: &[u8], origin: Origin, pushdown: &Pushdown) -> SourceItem {
    let error = match Record::parse(bytes) {
        Ok(record) => return settle(record, origin, pushdown),
        Err(error) => error,
    };
    let rebuilt = match error {
        RecordError::Missing("eventTime") => athena::record_of_export(bytes),
        _ => None,
    };
    let error = match rebuilt.as_deref().map(Record::parse) {
        Some(Ok(record)) => return settle(record, origin, pushdown),
        Some(Err(error)) => error,
        None => error,
    };
    SourceItem::Skipped(BadRecord {
        origin,
        reason: error.to_string(),
    })
}

/// The item of a parsed record: only counted when the pushdown wants writes only and the
/// first attribution checks, or else the whole attribution, find the pipeline drops it.
fn settle(record: Record<'_>, origin: Origin, pushdown: &Pushdown) -> SourceItem {
    let first = pushdown
        .writes_only
        .then(|| settled_verdict(&record.basics()))
        .flatten();
    if let Some(verdict) = first {
        return SourceItem::Settled(CountedRecord::new(
            verdict,
            record.event_time(),
            record.event_id(),
            (record.account_id(), record.aws_region()),
            &pushdown.filter,
        ));
    }
    let call = record.into_call(origin, !pushdown.drop_records);
    match pushdown.dropped_verdict(&call) {
        Some(verdict) => SourceItem::Settled(CountedRecord::new(
            verdict,
            call.event_time,
            &call.event_id,
            (call.account_id(), &call.aws_region),
            &pushdown.filter,
        )),
        None => SourceItem::Call(Box::new(call)),
    }
}

/// Frames on their way from the reading thread to the consumer: the records' bytes one
/// after another, and each item with where its bytes end; or records a worker has already
/// parsed.
struct Batch {
    bytes: Vec<u8>,
    items: Vec<Pending>,
    parsed: Vec<SourceResult>,
}

/// An item of a [`Batch`].
enum Pending {
    /// A record whose bytes end at `end` in the batch, after the previous record's.
    Record { end: usize, origin: Origin },
    /// An item needing no parse.
    Done(SourceResult),
}

impl Batch {
    fn new() -> Self {
        Self {
            bytes: Vec::with_capacity(BATCH_BYTES / 2),
            items: Vec::with_capacity(BATCH),
            parsed: Vec::new(),
        }
    }

    /// A batch of records parsed already.
    fn parsed(parsed: Vec<SourceResult>) -> Self {
        Self {
            bytes: Vec::new(),
            items: Vec::new(),
            parsed,
        }
    }

    fn push(&mut self, item: Framed<'_>) {
        self.items.push(match item {
            Framed::Record(bytes, origin) => {
                self.bytes.extend_from_slice(bytes);
                Pending::Record {
                    end: self.bytes.len(),
                    origin,
                }
            }
            Framed::Done(result) => Pending::Done(result),
        });
    }

    fn is_full(&self) -> bool {
        self.items.len() >= BATCH || self.bytes.len() >= BATCH_BYTES
    }

    /// The items, each record parsed when the iterator reaches it.
    fn into_results(self, pushdown: Arc<Pushdown>) -> impl Iterator<Item = SourceResult> + Send {
        let bytes = self.bytes;
        let mut start = 0;
        let framed = self.items.into_iter().map(move |item| match item {
            Pending::Record { end, origin } => {
                let record = &bytes[start..end];
                start = end;
                Ok(parse(record, origin, &pushdown))
            }
            Pending::Done(result) => result,
        });
        self.parsed.into_iter().chain(framed)
    }
}

/// Collects frames into batches for the channel.
struct BatchSender {
    tx: mpsc::Sender<Batch>,
    batch: Batch,
}

impl BatchSender {
    /// Queues a frame; `false` once the consumer has gone away.
    fn send(&mut self, item: Framed<'_>) -> bool {
        self.batch.push(item);
        !self.batch.is_full() || self.flush()
    }

    fn flush(&mut self) -> bool {
        let batch = std::mem::replace(&mut self.batch, Batch::new());
        batch.items.is_empty() || self.tx.blocking_send(batch).is_ok()
    }
}

/// Reads one file, passing each call or bad record to `emit`, then a file-level error if
/// the file could not be opened or stopped being readable. Returns `false` when `emit` asks
/// to stop.
pub fn read_file(
    path: &Path,
    progress: Option<&ProgressBar>,
    emit: &mut dyn FnMut(SourceResult) -> bool,
) -> bool {
    let pushdown = Pushdown::default();
    read_frames(path, progress, &mut |item| {
        emit(item.into_result(&pushdown))
    })
}

/// Reads a log file's bytes fetched from elsewhere (an S3 object, named `name`) as a file is
/// read: gzipped or plain, in any layout, each record parsed with `pushdown` and passed to
/// `emit` with `name`, its index and its offset in the decompressed bytes, then an error if
/// the bytes are cut off. Returns `false` when `emit` asks to stop.
#[cfg(feature = "aws")]
pub(crate) fn read_bytes(
    bytes: &[u8],
    name: &str,
    pushdown: &Pushdown,
    emit: &mut dyn FnMut(SourceResult) -> bool,
) -> bool {
    let reader: Box<dyn Read> = if bytes.starts_with(&GZIP_MAGIC) {
        Box::new(MultiGzDecoder::new(bytes))
    } else {
        Box::new(bytes)
    };
    let source: Arc<str> = Arc::from(name);
    frame_stream(reader, Path::new(name), &source, 0, 0, &mut |item| {
        emit(item.into_result(pushdown))
    })
}

/// [`read_file`] without the parsing: passes each frame to `emit`.
fn read_frames(
    path: &Path,
    progress: Option<&ProgressBar>,
    emit: &mut dyn FnMut(Framed<'_>) -> bool,
) -> bool {
    let reader = match open(path, progress) {
        Ok(reader) => reader,
        Err(source) => {
            return emit(Framed::Done(Err(SourceError::Io {
                path: path.to_owned(),
                source,
            })));
        }
    };
    let name: Arc<str> = Arc::from(path.display().to_string());
    frame_stream(reader, path, &name, 0, 0, emit)
}

/// Frames a stream (a file, or the rest of one after a malformed record) whose first byte is
/// at `offset` in the file and whose first record has number `first_index`, passing each
/// frame to `emit`. A value the stream ends inside is split by [`resync`]: the malformed
/// record is skipped with the parser's reason, and the records after it are framed again.
/// Returns `false` when `emit` asks to stop.
fn frame_stream(
    reader: impl Read,
    path: &Path,
    name: &Arc<str>,
    offset: u64,
    first_index: u64,
    emit: &mut dyn FnMut(Framed<'_>) -> bool,
) -> bool {
    let mut splitter = Splitter::new(reader);
    loop {
        let frame = match splitter.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return true,
            Err(e) => {
                let error = SourceError::Truncated {
                    path: path.to_owned(),
                    offset: e.offset,
                    source: e.source,
                };
                return emit(Framed::Done(Err(error)));
            }
        };
        let at = offset + frame.offset;
        let origin = Origin {
            source: name.clone(),
            index: first_index + frame.index,
            offset: Some(at),
        };
        let index = first_index + frame.index;
        let item = match frame.body {
            FrameBody::Record(bytes) if holds_several_records(bytes) => {
                let Some((bad_end, next)) = resync(bytes) else {
                    if !emit(Framed::Record(bytes, origin)) {
                        return false;
                    }
                    continue;
                };
                if !reframe(bytes, bad_end, next, origin, path, index, emit) {
                    return false;
                }
                continue;
            }
            FrameBody::Record(bytes) => Framed::Record(bytes, origin),
            FrameBody::Truncated(bytes) => {
                let Some((bad_end, next)) = resync(bytes) else {
                    return emit(skipped(
                        origin,
                        "the file ends inside this record (truncated)",
                    ));
                };
                // The stream ended inside the bad record's value: what follows it is all
                // that is left.
                return reframe(bytes, bad_end, next, origin, path, index, emit);
            }
            FrameBody::Garbage => skipped(
                origin,
                "text that is not JSON, skipped to the end of its line",
            ),
        };
        if !emit(item) {
            return false;
        }
    }
}

/// Skips the malformed record at the start of `bytes` (up to `bad_end`) with the parser's
/// reason, then frames the records from `next` on inside the container they were in.
fn reframe(
    bytes: &[u8],
    bad_end: usize,
    next: usize,
    origin: Origin,
    path: &Path,
    index: u64,
    emit: &mut dyn FnMut(Framed<'_>) -> bool,
) -> bool {
    let at = origin.offset.unwrap_or_default();
    let name = origin.source.clone();
    if !emit(skipped(origin, &malformed(&bytes[..bad_end]))) {
        return false;
    }
    let tail = &bytes[next..];
    let opening = reopening(tail);
    let rest = std::io::Cursor::new(opening.as_bytes()).chain(tail);
    let start = at + next as u64 - opening.len() as u64;
    frame_stream(rest, path, &name, start, index + 1, emit)
}

/// Whether a frame's bytes hold more than one record's `"eventTime"` key (the field every
/// event version has; `eventID` came with 1.01): a malformed record (an unclosed bracket) that
/// swallowed the records after it. A record holds the key once; inside a string it would be
/// escaped.
fn holds_several_records(bytes: &[u8]) -> bool {
    memchr::memmem::find_iter(bytes, b"\"eventTime\"")
        .nth(1)
        .is_some()
}

/// What reopens the container the records after a malformed one were in, judged by how the
/// stream ends: a record then an envelope's `]}`, a record then an array's `]`, or nothing
/// for records one after another.
fn reopening(tail: &[u8]) -> &'static str {
    let closers: Vec<u8> = tail
        .iter()
        .rev()
        .filter(|b| !b.is_ascii_whitespace())
        .take(3)
        .copied()
        .collect();
    match closers.as_slice() {
        [b'}', b']', b'}'] => "{\"Records\":[",
        [b']', b'}', ..] => "[",
        _ => "",
    }
}

/// Why a malformed record does not parse, in the parser's words.
fn malformed(bytes: &[u8]) -> String {
    match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        Err(e) => format!("not valid JSON: {e}"),
        Ok(_) => "not a CloudTrail record".to_owned(),
    }
}

fn skipped(origin: Origin, reason: &str) -> Framed<'static> {
    Framed::Done(Ok(SourceItem::Skipped(BadRecord {
        origin,
        reason: reason.into(),
    })))
}

/// The first two bytes of a gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens a file, decompressing it when it starts with the gzip magic bytes.
fn open(path: &Path, progress: Option<&ProgressBar>) -> std::io::Result<Box<dyn Read + Send>> {
    let mut file = File::open(path)?;
    let mut magic = [0u8; 2];
    let gzipped = file.read(&mut magic)? == 2 && magic == GZIP_MAGIC;
    file.seek(SeekFrom::Start(0))?;
    let file = Counted {
        inner: file,
        progress: progress.cloned(),
    };
    let buffered = BufReader::with_capacity(READ_BUFFER, file);
    Ok(if gzipped {
        Box::new(MultiGzDecoder::new(buffered))
    } else {
        Box::new(buffered)
    })
}

/// A reader that advances a progress bar by the bytes it reads.
struct Counted<R> {
    inner: R,
    progress: Option<ProgressBar>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.progress {
            bar.inc(n as u64);
        }
        Ok(n)
    }
}

/// Expands the given paths into the files to read, in a stable order. Explicit files are
/// taken whatever their name; directories are walked for log files, skipping digest files
/// and delivery-layout folders outside the filter.
pub fn discover(paths: &[PathBuf], filter: &Filter) -> (Vec<PathBuf>, Vec<SourceError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                walk(path, &mut Vec::new(), filter, &mut files, &mut errors)
            }
            Ok(_) => files.push(path.clone()),
            Err(source) => errors.push(SourceError::Io {
                path: path.clone(),
                source,
            }),
        }
    }
    (files, errors)
}

fn walk(
    dir: &Path,
    trail: &mut Vec<String>,
    filter: &Filter,
    files: &mut Vec<PathBuf>,
    errors: &mut Vec<SourceError>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) => {
            return errors.push(SourceError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            trail.push(name);
            if layout_allows(trail, filter) {
                walk(&path, trail, filter, files, errors);
            }
            trail.pop();
        } else if is_log_file(&name) {
            files.push(path);
        }
    }
}

/// Whether a file name looks like a CloudTrail log or export.
fn is_log_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        ".json",
        ".json.gz",
        ".gz",
        ".jsonl",
        ".ndjson",
        ".jsonl.gz",
        ".ndjson.gz",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext))
}

/// Whether a directory, given the folder names from the walk's root down to it, can hold
/// records the filter wants, judged by the delivery layout
/// `AWSLogs/[o-ORG/]ACCOUNT/CloudTrail/REGION/YYYY/MM/DD`.
fn layout_allows(trail: &[String], filter: &Filter) -> bool {
    let Some(last) = trail.last() else {
        return true;
    };
    if last == "CloudTrail-Digest" {
        return false;
    }
    let Some(ct) = trail.iter().rposition(|p| p == "CloudTrail") else {
        return account_allowed(trail, filter);
    };
    if ct > 0 && !filter.has_account(&trail[ct - 1]) && is_account_id(&trail[ct - 1]) {
        return false;
    }
    let below = &trail[ct + 1..];
    if let Some(region) = below.first()
        && !filter.has_region(region)
    {
        return false;
    }
    date_allowed(&below[1.min(below.len())..], filter)
}

/// Under `AWSLogs/`, a twelve-digit folder is an account.
fn account_allowed(trail: &[String], filter: &Filter) -> bool {
    match trail.last() {
        Some(name) if is_account_id(name) && trail.iter().any(|p| p == "AWSLogs") => {
            filter.has_account(name)
        }
        _ => true,
    }
}

/// Whether a folder name is an account id: twelve digits.
pub(super) fn is_account_id(name: &str) -> bool {
    name.len() == 12 && name.bytes().all(|b| b.is_ascii_digit())
}

/// Prunes `YYYY`, `YYYY/MM` and `YYYY/MM/DD` folders wholly outside the window, with a day
/// of slack on each side: a file sits under the day it was delivered, which can be after the
/// day of its last events.
fn date_allowed(parts: &[String], filter: &Filter) -> bool {
    let numbers: Option<Vec<u32>> = parts.iter().take(3).map(|p| p.parse().ok()).collect();
    let Some(numbers) = numbers else { return true };
    let (first, last) = match numbers.as_slice() {
        [] => return true,
        [y] => (ymd(*y, 1, 1), ymd(*y + 1, 1, 1).and_then(|d| d.pred_opt())),
        [y, m] => (ymd(*y, *m, 1), month_end(*y, *m)),
        [y, m, d, ..] => (ymd(*y, *m, *d), ymd(*y, *m, *d)),
    };
    let (Some(first), Some(last)) = (first, last) else {
        return true;
    };
    let slack = Days::new(1);
    let starts_after_window = filter.until.is_some_and(|u| {
        first
            .checked_sub_days(slack)
            .is_some_and(|f| f > u.date_naive())
    });
    let ends_before_window = filter.since.is_some_and(|s| {
        last.checked_add_days(slack)
            .is_some_and(|l| l < s.date_naive())
    });
    !(starts_after_window || ends_before_window)
}

fn ymd(y: u32, m: u32, d: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, d)
}

fn month_end(y: u32, m: u32) -> Option<NaiveDate> {
    let next = if m == 12 {
        ymd(y + 1, 1, 1)
    } else {
        ymd(y, m + 1, 1)
    };
    next?.pred_opt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn trail(path: &str) -> Vec<String> {
        path.split('/').map(str::to_owned).collect()
    }

    fn window(from: (i32, u32, u32), to: (i32, u32, u32)) -> Filter {
        Filter {
            since: Utc
                .with_ymd_and_hms(from.0, from.1, from.2, 0, 0, 0)
                .single(),
            until: Utc.with_ymd_and_hms(to.0, to.1, to.2, 0, 0, 0).single(),
            ..Filter::default()
        }
    }

    #[test]
    fn delivery_layout_is_pruned_by_window() {
        let f = window((2024, 7, 10), (2024, 7, 12));
        assert!(layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2024/07/11"),
            &f
        ));
        assert!(layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2024/07/12"),
            &f
        ));
        assert!(layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2024/07/09"),
            &f
        ));
        assert!(!layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2024/07/14"),
            &f
        ));
        assert!(!layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2024/07/01"),
            &f
        ));
        assert!(!layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2024/06"),
            &f
        ));
        assert!(!layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2023"),
            &f
        ));
        assert!(layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1/2024"),
            &f
        ));
    }

    #[test]
    fn delivery_layout_is_pruned_by_account_and_region() {
        let f = Filter {
            accounts: vec!["111122223333".into()],
            regions: vec!["eu-west-1".into()],
            ..Filter::default()
        };
        assert!(layout_allows(&trail("AWSLogs/o-abc123/111122223333"), &f));
        assert!(!layout_allows(&trail("AWSLogs/o-abc123/444455556666"), &f));
        assert!(!layout_allows(
            &trail("AWSLogs/444455556666/CloudTrail"),
            &f
        ));
        assert!(!layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/us-east-1"),
            &f
        ));
        assert!(layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail/eu-west-1/2024"),
            &f
        ));
        assert!(!layout_allows(
            &trail("AWSLogs/111122223333/CloudTrail-Digest"),
            &f
        ));
        assert!(layout_allows(&trail("exports"), &f));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod recovery_tests {
    use super::*;

    /// Eleven small records, as a JSON value each.
    fn records() -> Vec<String> {
        (0..11)
            .map(|i| {
                serde_json::json!({"eventVersion": "1.09", "eventID": format!("id-{i}"),
                    "eventTime": format!("2026-11-20T10:{i:02}:00Z"),
                    "eventSource": "sqs.amazonaws.com", "eventName": "SetQueueAttributes",
                    "awsRegion": "us-east-1", "recipientAccountId": "111122223333",
                    "userIdentity": {"type": "IAMUser", "userName": "bob"},
                    "requestParameters": {"queueUrl": "https://sqs/q",
                        "attributes": {"Policy": "{\"a\":[1,{\"b\":2}]}"}},
                    "resources": [{"ARN": "arn:aws:sqs:us-east-1:111122223333:q"}]})
                .to_string()
            })
            .collect()
    }

    /// The file in each layout, with record 3's closing brace lost.
    fn layouts() -> Vec<(&'static str, String)> {
        let mut parts = records();
        parts[3].pop();
        vec![
            ("envelope", format!("{{\"Records\":[{}]}}", parts.join(","))),
            ("array", format!("[\n  {}\n]\n", parts.join(",\n  "))),
            ("concatenated", parts.join("\n")),
            ("ndjson", parts.join("\n") + "\n"),
        ]
    }

    /// A skipped record: index, offset, reason.
    type Skip = (u64, Option<u64>, String);

    /// The event ids read and the records skipped from a file.
    fn read(text: &str) -> (Vec<String>, Vec<Skip>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trail.json");
        std::fs::write(&path, text).unwrap();
        let (mut ids, mut bad) = (Vec::new(), Vec::new());
        read_file(&path, None, &mut |item| {
            match item.unwrap() {
                SourceItem::Call(call) => ids.push(call.event_id.clone()),
                SourceItem::Skipped(b) => bad.push((b.origin.index, b.origin.offset, b.reason)),
                SourceItem::Settled(_) => unreachable!("read_file settles nothing"),
            }
            true
        });
        (ids, bad)
    }

    /// A successful security-group change in us-east-1 by a session of `role` in account
    /// 111122223333, as CloudTrail records one made from the CLI.
    fn write_by_role(id: &str, role: &str) -> String {
        serde_json::json!({"eventVersion": "1.09", "eventID": id,
            "eventTime": "2024-07-11T10:00:00Z", "eventSource": "ec2.amazonaws.com",
            "eventName": "AuthorizeSecurityGroupIngress", "awsRegion": "us-east-1",
            "readOnly": false, "recipientAccountId": "111122223333",
            "userAgent": "aws-cli/2.15.0",
            "userIdentity": {"type": "AssumedRole",
                "arn": format!("arn:aws:sts::111122223333:assumed-role/{role}/s1"),
                "accountId": "111122223333",
                "sessionContext": {"sessionIssuer": {"type": "Role",
                    "arn": format!("arn:aws:iam::111122223333:role/{role}")}}},
            "requestParameters": {"groupId": "sg-1"}, "responseElements": null})
        .to_string()
    }

    #[test]
    fn with_writes_only_the_attribution_settles_the_writes_it_drops_where_they_are_parsed() {
        let config = crate::attribute::AttributionConfig {
            iac_role_arns: vec!["arn:aws:iam::*:role/terraform-ci".into()],
            ..Default::default()
        };
        let attributor = Arc::new(crate::attribute::Attributor::new(&config).unwrap());
        let writes_only = Pushdown {
            filter: Filter {
                regions: vec!["eu-west-1".into()],
                ..Filter::default()
            },
            writes_only: true,
            drop_terraform: true,
            attribution: Some(attributor),
            drop_records: false,
        };
        let origin = Origin {
            source: Arc::from("t.json"),
            index: 0,
            offset: None,
        };
        let item = |id: &str, role: &str, pushdown: &Pushdown| {
            parse(write_by_role(id, role).as_bytes(), origin.clone(), pushdown)
        };
        let SourceItem::Settled(settled) = item("p", "terraform-ci", &writes_only) else {
            panic!("the pipeline's write is not settled");
        };
        assert_eq!(settled.verdict, crate::attribute::Verdict::IacPrincipal);
        assert_eq!(
            settled.event_id_hash,
            crate::ingest::order::event_id_hash("p")
        );
        assert_eq!(settled.event_time.to_rfc3339(), "2024-07-11T10:00:00+00:00");
        // Outside the filter's region: counted as outside, as the call would be.
        assert!(!settled.in_filter);
        let text = write_by_role("a", "alice");
        assert!(matches!(
            item("a", "alice", &writes_only),
            SourceItem::Call(call) if call.event_id == "a" && call.raw() == Some(text.as_str())
        ));
        // A reconciliation never prints a record: its text is not copied into the call.
        let without_records = Pushdown {
            drop_records: true,
            ..writes_only.clone()
        };
        assert!(matches!(
            item("a", "alice", &without_records),
            SourceItem::Call(call) if call.event_id == "a" && call.raw().is_none()
        ));
        // When more than out-of-band writes are kept, the pipeline attributes every call.
        let everything = Pushdown {
            writes_only: false,
            ..writes_only.clone()
        };
        assert!(matches!(
            item("p", "terraform-ci", &everything),
            SourceItem::Call(_)
        ));
    }

    #[test]
    fn a_record_with_an_unclosed_bracket_costs_only_itself_in_every_layout() {
        for (layout, text) in layouts() {
            let (ids, bad) = read(&text);
            let expected: Vec<String> = (0..11)
                .filter(|i| *i != 3)
                .map(|i| format!("id-{i}"))
                .collect();
            assert_eq!(ids, expected, "{layout}");
            assert_eq!(bad.len(), 1, "{layout}: {bad:?}");
            let (index, offset, reason) = &bad[0];
            assert_eq!(*index, 3, "{layout}");
            let start = text
                .find("{\"eventVersion\":\"1.09\",\"eventID\":\"id-3\"")
                .unwrap();
            assert_eq!(*offset, Some(start as u64), "{layout}");
            assert!(
                reason.contains("EOF while parsing")
                    || reason.contains("expected `,` or `}`")
                    || reason.contains("key must be a string"),
                "{layout}: {reason}"
            );
        }
    }

    #[test]
    fn a_bad_record_among_records_without_event_ids_costs_only_itself() {
        for (layout, text) in layouts() {
            let text = (0..11).fold(text, |text, i| {
                text.replace(&format!("\"eventID\":\"id-{i}\","), "")
            });
            let (ids, bad) = read(&text);
            assert_eq!(ids.len(), 10, "{layout}: {ids:?}");
            assert!(ids.iter().all(|id| id.starts_with("record-")), "{ids:?}");
            assert_eq!(
                ids.iter().collect::<std::collections::BTreeSet<_>>().len(),
                10,
                "{layout}"
            );
            assert_eq!(bad.len(), 1, "{layout}: {bad:?}");
            assert_eq!(bad[0].0, 3, "{layout}");
        }
    }

    #[test]
    fn records_after_the_bad_one_keep_their_numbers_and_offsets() {
        let (_, text) = layouts().remove(1);
        let (ids, _) = read(&text);
        assert_eq!(ids.len(), 10);
        // A record after the bad one parses from its own offset.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, &text).unwrap();
        let mut origins = Vec::new();
        read_file(&path, None, &mut |item| {
            if let Ok(SourceItem::Call(call)) = item {
                origins.push((call.event_id.clone(), call.origin.index, call.origin.offset));
            }
            true
        });
        let (id, index, offset) = &origins[3];
        assert_eq!(id, "id-4");
        assert_eq!(*index, 4);
        let at = text
            .find("{\"eventVersion\":\"1.09\",\"eventID\":\"id-4\"")
            .unwrap();
        assert_eq!(*offset, Some(at as u64));
    }

    #[test]
    fn a_record_cut_off_at_the_end_is_reported_truncated() {
        let parts = records();
        let text = format!("[{},{}", parts[0], &parts[1][..40]);
        let (ids, bad) = read(&text);
        assert_eq!(ids, ["id-0"]);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].2.contains("truncated"), "{bad:?}");
    }

    /// What a reading yields, in words: an event id, a skipped record with its file and
    /// index, or an error.
    fn words(result: SourceResult) -> String {
        match result {
            Ok(SourceItem::Call(call)) => call.event_id.clone(),
            Ok(SourceItem::Skipped(b)) => {
                format!("skipped {} #{}", b.origin.source, b.origin.index)
            }
            Ok(SourceItem::Settled(s)) => format!("settled {}", s.event_id_hash),
            Err(error) => format!("error {error}"),
        }
    }

    #[test]
    fn files_read_in_parallel_come_out_as_one_thread_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (n, (_, text)) in layouts().into_iter().enumerate() {
            let text = text.replace("id-", &format!("f{n}-id-"));
            let path = dir.path().join(format!("{n}.json.gz"));
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
            std::fs::write(&path, gz.finish().unwrap()).unwrap();
            files.push(path);
        }
        // A file that cannot be read is an error in its place.
        files.insert(2, dir.path().join("missing.json"));
        let mut one_thread = Vec::new();
        for file in &files {
            read_file(file, None, &mut |item| {
                one_thread.push(words(item));
                true
            });
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for workers in [2, 3, 7] {
            let (tx, mut rx) = mpsc::channel::<Batch>(2);
            let (files, pushdown) = (files.clone(), Arc::new(Pushdown::default()));
            let reader = std::thread::spawn(move || {
                read_in_parallel(files, workers, &pushdown, None, &tx);
            });
            let mut parallel = Vec::new();
            runtime.block_on(async {
                while let Some(batch) = rx.recv().await {
                    let results = batch.into_results(Arc::new(Pushdown::default()));
                    parallel.extend(results.map(words));
                }
            });
            reader.join().unwrap();
            assert_eq!(parallel, one_thread, "{workers} workers");
        }
        assert_eq!(
            one_thread
                .iter()
                .filter(|w| w.starts_with("skipped"))
                .count(),
            4
        );
        assert!(one_thread.iter().any(|w| w.starts_with("error")));
    }

    #[test]
    fn athena_export_rows_with_lower_case_columns_are_read() {
        // Two rows as an Athena UNLOAD to JSON writes the standard CloudTrail table: lower-case
        // columns, structs as objects, the request as JSON text, readonly as text, an empty
        // error code; the second row with the struct as JSON text.
        let rows = [
            serde_json::json!({"eventversion": "1.08", "eventtime": "2026-11-20T10:45:00Z",
                "eventsource": "s3.amazonaws.com", "eventname": "PutBucketVersioning",
                "awsregion": "eu-west-1", "sourceipaddress": "203.0.113.7",
                "useragent": "aws-cli/2.15.0", "errorcode": "", "errormessage": null,
                "useridentity": {"type": "IAMUser", "principalid": "AIDAEXAMPLE",
                    "arn": "arn:aws:iam::111122223333:user/alice", "accountid": "111122223333",
                    "username": "alice", "invokedby": null},
                "requestparameters": "{\"bucketName\":\"logs\",\"VersioningConfiguration\":{\"Status\":\"Enabled\"}}",
                "responseelements": null, "requestid": "R1", "eventid": "athena-1",
                "resources": [{"arn": "arn:aws:s3:::logs", "accountid": "111122223333", "type": "AWS::S3::Bucket"}],
                "eventtype": "AwsApiCall", "readonly": "false",
                "recipientaccountid": "111122223333"}),
            serde_json::json!({"eventtime": "2026-11-20T10:50:00Z", "eventsource": "s3.amazonaws.com",
                "eventname": "GetBucketVersioning", "eventid": "athena-2", "readonly": "true",
                "useridentity": "{\"type\":\"IAMUser\",\"username\":\"alice\"}"}),
        ];
        let text = rows.map(|r| r.to_string()).join("\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("athena.json");
        std::fs::write(&path, text).unwrap();
        let mut calls = Vec::new();
        read_file(&path, None, &mut |item| {
            match item.unwrap() {
                SourceItem::Call(call) => calls.push(call),
                other => panic!("not a call: {}", matches!(other, SourceItem::Skipped(_))),
            }
            true
        });
        assert_eq!(calls.len(), 2);
        let put = &calls[0];
        assert_eq!(put.event_id, "athena-1");
        assert_eq!(put.event_name, "PutBucketVersioning");
        assert_eq!(put.error_code, None);
        assert!(!put.read_only && !put.read_only_derived);
        assert_eq!(put.identity.user_name.as_deref(), Some("alice"));
        assert_eq!(put.identity.account_id.as_deref(), Some("111122223333"));
        assert_eq!(put.recipient_account_id.as_deref(), Some("111122223333"));
        assert_eq!(put.resources[0].arn.as_deref(), Some("arn:aws:s3:::logs"));
        let request = put.request_parameters.json().unwrap();
        assert_eq!(request["VersioningConfiguration"]["Status"], "Enabled");
        assert!(calls[1].read_only);
        assert_eq!(calls[1].identity.user_name.as_deref(), Some("alice"));
    }
}
