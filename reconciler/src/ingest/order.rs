//! Puts calls in event-time order and drops duplicates (same `eventID`), in bounded memory.
//!
//! Log files are not ordered and the same event can arrive twice (overlapping exports, a
//! global event looked up in several regions). Each call leaves a 24-byte key (time, hash of
//! its event id, where the call is held); the calls the caller keeps are written to a spool
//! file, or held as parsed when the caller holds every call afterwards anyway
//! ([`Holding`]). Keys are sorted in memory up to a limit and spilled to sorted run files beyond
//! it, then merged; runs are merged in groups as they pile up, so memory and open files stay
//! bounded whatever the input size. Two events with equal time and equal 64-bit id hash are
//! taken as the same event; for distinct ids within the same millisecond a collision has a
//! probability of about 2^-64.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::hash_map::DefaultHasher;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::Arc;

use super::verdict::{Attribution, Verdict};

use super::record::{Call, Origin};
use super::source::CountedRecord;

/// Keys held in memory before a sorted run is spilled to disk (24 MiB of keys).
pub const DEFAULT_RUN_KEYS: usize = 1024 * 1024;

/// Sorted runs of one size merged into one run of the next size once this many have piled
/// up: a run count that grows with the logarithm of the input keeps open files and merge
/// buffers few.
const MERGE_FAN_IN: usize = 16;

/// The sort key of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    /// Event time in milliseconds since the epoch.
    time: i64,
    /// Hash of the event id.
    id: u64,
    /// Verdict code in the top byte; below it, where a kept call is held + 1, or 0.
    tag: u64,
}

const TAG_SHIFT: u32 = 56;
const SPOOL_MASK: u64 = (1 << TAG_SHIFT) - 1;

impl Key {
    fn verdict(self) -> Option<Verdict> {
        Verdict::from_code((self.tag >> TAG_SHIFT) as u8)
    }

    /// Where a kept call is held (spool offset or index in memory); `None` for a call only
    /// counted.
    fn held_at(self) -> Option<u64> {
        let slot = self.tag & SPOOL_MASK;
        (slot != 0).then(|| slot - 1)
    }

    fn same_event(self, other: Self) -> bool {
        self.time == other.time && self.id == other.id
    }

    fn write(self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.time.to_le_bytes())?;
        out.write_all(&self.id.to_le_bytes())?;
        out.write_all(&self.tag.to_le_bytes())
    }

    fn read(input: &mut impl Read) -> io::Result<Option<Self>> {
        let mut bytes = [0u8; 24];
        match input.read_exact(&mut bytes) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            w
        };
        Ok(Some(Self {
            time: i64::from_le_bytes(word(0)),
            id: u64::from_le_bytes(word(1)),
            tag: u64::from_le_bytes(word(2)),
        }))
    }
}

/// Counts of what went into the collector.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Distinct calls per verdict.
    pub by_verdict: std::collections::BTreeMap<Verdict, u64>,
    /// Calls dropped because an earlier record had the same event id.
    pub duplicates: u64,
}

impl Counts {
    /// Distinct calls in all.
    pub fn total(&self) -> u64 {
        self.by_verdict.values().sum()
    }
}

/// Where a collector holds the calls it keeps until they are read back in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holding {
    /// In a temporary file, as their records' text, parsed again when read back: memory
    /// stays flat whatever the number of calls (a caller that streams them out).
    Spool,
    /// As parsed calls, for a caller that holds every call afterwards anyway (a
    /// reconciliation): nothing is written or parsed twice. `records` says whether the
    /// calls keep their record's text, which is most of a call's memory.
    Memory {
        /// Whether each call keeps its record's text.
        records: bool,
    },
}

/// The kept calls while input goes on.
enum Held {
    Spool { writer: BufWriter<File>, len: u64 },
    Memory { calls: HeldCalls, records: bool },
}

/// Kept calls held in memory, in the order they came, each with the reason of its verdict;
/// a call is `None` once read back.
#[derive(Default)]
struct HeldCalls {
    calls: Vec<Option<Call>>,
    reasons: Vec<String>,
}

/// Gathers attributed calls, then yields the kept ones in time order without duplicates.
pub struct Collector {
    keys: Vec<Key>,
    run_keys: usize,
    runs: Vec<Run>,
    held: Held,
    /// Calls held, duplicates included.
    kept: usize,
    keep: Box<dyn Fn(Verdict) -> bool + Send>,
}

impl Collector {
    /// A collector that keeps the calls whose verdict `keep` accepts (the others are only
    /// counted) where `holding` says, holding at most `run_keys` keys in memory.
    pub fn new(
        keep: impl Fn(Verdict) -> bool + Send + 'static,
        holding: Holding,
        run_keys: usize,
    ) -> io::Result<Self> {
        let held = match holding {
            Holding::Spool => Held::Spool {
                writer: BufWriter::with_capacity(1 << 16, tempfile::tempfile()?),
                len: 0,
            },
            Holding::Memory { records } => Held::Memory {
                calls: HeldCalls::default(),
                records,
            },
        };
        Ok(Self {
            keys: Vec::new(),
            run_keys: run_keys.max(1),
            runs: Vec::new(),
            held,
            kept: 0,
            keep: Box::new(keep),
        })
    }

    /// Adds one attributed call.
    pub fn push(&mut self, call: Call, attribution: Attribution) -> io::Result<()> {
        let mut tag = u64::from(attribution.verdict.code()) << TAG_SHIFT;
        let key = (
            call.event_time.timestamp_millis(),
            event_id_hash(&call.event_id),
        );
        if (self.keep)(attribution.verdict) {
            tag |= self.hold(call, attribution)? + 1;
        }
        self.add_key(Key {
            time: key.0,
            id: key.1,
            tag,
        })
    }

    /// Holds a kept call; returns where (its spool offset, or its index in memory).
    fn hold(&mut self, mut call: Call, attribution: Attribution) -> io::Result<u64> {
        self.kept += 1;
        match &mut self.held {
            Held::Spool { writer, len } => spool_call(writer, len, &call, &attribution),
            Held::Memory { calls, records } => {
                if !*records {
                    call.forget_record();
                }
                calls.calls.push(Some(call));
                calls.reasons.push(attribution.reason);
                Ok(calls.calls.len() as u64 - 1)
            }
        }
    }

    /// Adds a call a source settled: counted and de-duplicated, never kept.
    pub fn count(&mut self, settled: &CountedRecord) -> io::Result<()> {
        self.add_key(Key {
            time: settled.event_time.timestamp_millis(),
            id: settled.event_id_hash,
            tag: u64::from(settled.verdict.code()) << TAG_SHIFT,
        })
    }

    fn add_key(&mut self, key: Key) -> io::Result<()> {
        self.keys.push(key);
        if self.keys.len() >= self.run_keys {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        self.keys.sort_unstable();
        let keys = self.keys.drain(..).map(Ok);
        let file = write_run(keys)?;
        self.runs.push(Run { level: 0, file });
        self.merge_full_levels()
    }

    /// Merges the newest runs into one while the last [`MERGE_FAN_IN`] share a level.
    fn merge_full_levels(&mut self) -> io::Result<()> {
        while let Some(first) = self.runs.len().checked_sub(MERGE_FAN_IN) {
            let level = self.runs[first].level;
            if self.runs[first..].iter().any(|run| run.level != level) {
                break;
            }
            let group = self.runs.split_off(first);
            let mut merge = Merge::new(group.into_iter().map(Run::reader).collect())?;
            let file = write_run(std::iter::from_fn(|| merge.next().transpose()))?;
            self.runs.push(Run {
                level: level + 1,
                file,
            });
        }
        Ok(())
    }

    /// Ends input: returns the ordered kept calls and the counts.
    pub fn finish(mut self) -> io::Result<Ordered> {
        self.keys.sort_unstable();
        let mut sources = vec![RunReader::Memory(
            std::mem::take(&mut self.keys).into_iter(),
        )];
        sources.extend(self.runs.drain(..).map(Run::reader));
        let held = match self.held {
            Held::Spool { writer, .. } => ReadBack::Spool(BufReader::new(
                writer
                    .into_inner()
                    .map_err(io::IntoInnerError::into_error)?,
            )),
            Held::Memory { calls, .. } => ReadBack::Memory(calls),
        };
        Ok(Ordered {
            merge: Merge::new(sources)?,
            held,
            kept: self.kept,
            last: None,
            counts: Counts::default(),
            sources_by_name: Vec::new(),
        })
    }
}

/// Writes a kept call to the spool as length-prefixed fields; returns its offset.
fn spool_call(
    spool: &mut BufWriter<File>,
    spool_len: &mut u64,
    call: &Call,
    attribution: &Attribution,
) -> io::Result<u64> {
    let offset = *spool_len;
    let index = call.origin.index.to_le_bytes();
    let byte_offset = call.origin.offset.map_or(u64::MAX, |o| o).to_le_bytes();
    let raw = call.raw().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "a call without its record cannot be spooled",
        )
    })?;
    let fields: [&[u8]; 5] = [
        call.origin.source.as_bytes(),
        &index,
        &byte_offset,
        attribution.reason.as_bytes(),
        raw.as_bytes(),
    ];
    for field in fields {
        let len = u32::try_from(field.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "record over 4 GiB"))?;
        spool.write_all(&len.to_le_bytes())?;
        spool.write_all(field)?;
        *spool_len += 4 + u64::from(len);
    }
    if *spool_len > SPOOL_MASK {
        return Err(io::Error::other("spool over 64 PiB"));
    }
    Ok(offset)
}

/// The hash of an event id that duplicates are recognised by (with the event time).
pub fn event_id_hash(id: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    id.hash(&mut hasher);
    hasher.finish()
}

/// A sorted run of keys on disk; a run of level `n` holds the keys of
/// [`MERGE_FAN_IN`]`^n` spills.
struct Run {
    level: u32,
    file: File,
}

impl Run {
    fn reader(self) -> RunReader {
        RunReader::Disk(BufReader::new(self.file))
    }
}

/// Writes sorted keys to a new temporary file, rewound for reading.
fn write_run(keys: impl Iterator<Item = io::Result<Key>>) -> io::Result<File> {
    let mut run = BufWriter::new(tempfile::tempfile()?);
    for key in keys {
        key?.write(&mut run)?;
    }
    let mut file = run.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

enum RunReader {
    Memory(std::vec::IntoIter<Key>),
    Disk(BufReader<File>),
}

impl RunReader {
    fn next_key(&mut self) -> io::Result<Option<Key>> {
        match self {
            Self::Memory(keys) => Ok(keys.next()),
            Self::Disk(reader) => Key::read(reader),
        }
    }
}

/// The keys of sorted runs, merged into one sorted sequence.
struct Merge {
    sources: Vec<RunReader>,
    /// The next key of each source that has one, smallest first.
    heap: BinaryHeap<Reverse<(Key, usize)>>,
}

impl Merge {
    fn new(mut sources: Vec<RunReader>) -> io::Result<Self> {
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (i, source) in sources.iter_mut().enumerate() {
            if let Some(key) = source.next_key()? {
                heap.push(Reverse((key, i)));
            }
        }
        Ok(Self { sources, heap })
    }

    /// The smallest key left, `None` when all runs are exhausted.
    fn next(&mut self) -> io::Result<Option<Key>> {
        let Some(Reverse((key, source))) = self.heap.pop() else {
            return Ok(None);
        };
        if let Some(next) = self.sources[source].next_key()? {
            self.heap.push(Reverse((next, source)));
        }
        Ok(Some(key))
    }
}

/// Where the kept calls are read back from.
enum ReadBack {
    Spool(BufReader<File>),
    Memory(HeldCalls),
}

/// The kept calls in time order, read back from where they were held; counts fill in as it
/// advances and are complete once it is exhausted.
pub struct Ordered {
    merge: Merge,
    held: ReadBack,
    kept: usize,
    last: Option<Key>,
    counts: Counts,
    /// Interned source names, so calls from one file share one allocation.
    sources_by_name: Vec<Arc<str>>,
}

impl Ordered {
    /// The next kept call, skipping and counting the rest.
    pub fn next_call(&mut self) -> io::Result<Option<(Call, Attribution)>> {
        while let Some(key) = self.next_distinct()? {
            if let Some(slot) = key.held_at() {
                let verdict = key.verdict().unwrap_or(Verdict::OutOfBand);
                return self.read_back(slot, verdict).map(Some);
            }
        }
        Ok(None)
    }

    /// Reads everything left and returns the counts.
    pub fn drain_counts(mut self) -> io::Result<Counts> {
        while self.next_distinct()?.is_some() {}
        Ok(self.counts)
    }

    /// Every kept call left, in time order without duplicates, and the counts. Calls held in
    /// memory are put in order where they are, so no call is copied to a second list.
    pub fn into_calls(mut self) -> io::Result<(Vec<Call>, Counts)> {
        if !matches!(self.held, ReadBack::Memory(_)) {
            let mut calls = Vec::with_capacity(self.kept);
            while let Some((call, _)) = self.next_call()? {
                calls.push(call);
            }
            return Ok((calls, self.counts));
        }
        let mut order = Vec::with_capacity(self.kept);
        while let Some(key) = self.next_distinct()? {
            order.extend(key.held_at().and_then(|slot| usize::try_from(slot).ok()));
        }
        let ReadBack::Memory(held) = self.held else {
            unreachable!("checked above")
        };
        let mut calls = held.calls;
        let kept = order.len();
        permute(&mut calls, order)?;
        calls.truncate(kept);
        // Collected in place: the list keeps its allocation.
        let calls: Vec<Call> = calls.into_iter().flatten().collect();
        if calls.len() != kept {
            return Err(io::Error::other("a held call was read back twice"));
        }
        Ok((calls, self.counts))
    }

    /// At most how many calls [`Ordered::next_call`] yields (the kept ones, duplicates
    /// included).
    pub fn most_calls(&self) -> usize {
        self.kept
    }

    /// The counts so far (complete after [`Ordered::next_call`] returned `None`).
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    fn next_distinct(&mut self) -> io::Result<Option<Key>> {
        while let Some(key) = self.merge.next()? {
            if self.last.is_some_and(|last| last.same_event(key)) {
                self.counts.duplicates += 1;
                continue;
            }
            self.last = Some(key);
            if let Some(verdict) = key.verdict() {
                *self.counts.by_verdict.entry(verdict).or_default() += 1;
            }
            return Ok(Some(key));
        }
        Ok(None)
    }

    fn read_back(&mut self, slot: u64, verdict: Verdict) -> io::Result<(Call, Attribution)> {
        let (call, reason) = match &mut self.held {
            ReadBack::Spool(spool) => read_spooled(spool, slot, &mut self.sources_by_name)?,
            ReadBack::Memory(held) => usize::try_from(slot)
                .ok()
                .and_then(|slot| {
                    let call = held.calls.get_mut(slot)?.take()?;
                    Some((call, std::mem::take(&mut held.reasons[slot])))
                })
                .ok_or_else(|| io::Error::other("a held call was read back twice"))?,
        };
        Ok((call, Attribution { verdict, reason }))
    }
}

/// Puts `items` in `order` where they are: afterwards item `i` is the one that was at
/// `order[i]`, and the items `order` leaves out follow. `order` must name each position at
/// most once.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) -> io::Result<()> {
    let mut named = vec![false; items.len()];
    for &slot in &order {
        match named.get_mut(slot) {
            Some(seen) if !*seen => *seen = true,
            _ => return Err(io::Error::other("a held call is named twice or not at all")),
        }
    }
    order.extend((0..items.len()).filter(|&slot| !named[slot]));
    for start in 0..items.len() {
        let mut at = start;
        // Follow the cycle through `start`, marking each position done by pointing it at
        // itself.
        while order[at] != start && order[at] != at {
            let from = order[at];
            items.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
    Ok(())
}

/// Reads the call spooled at `offset`, and the reason of its verdict.
fn read_spooled(
    spool: &mut BufReader<File>,
    offset: u64,
    sources_by_name: &mut Vec<Arc<str>>,
) -> io::Result<(Call, String)> {
    spool.seek(SeekFrom::Start(offset))?;
    let source = read_field(spool)?;
    let index = u64::from_le_bytes(fixed(&read_field(spool)?)?);
    let byte_offset = u64::from_le_bytes(fixed(&read_field(spool)?)?);
    let reason = String::from_utf8_lossy(&read_field(spool)?).into_owned();
    let raw = read_field(spool)?;
    let origin = Origin {
        source: intern(sources_by_name, &source),
        index,
        offset: (byte_offset != u64::MAX).then_some(byte_offset),
    };
    let call = Call::parse(&raw, origin)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    Ok((call, reason))
}

fn read_field(spool: &mut BufReader<File>) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    spool.read_exact(&mut len)?;
    let mut field = vec![0u8; u32::from_le_bytes(len) as usize];
    spool.read_exact(&mut field)?;
    Ok(field)
}

/// The one shared copy of a source's name.
fn intern(sources_by_name: &mut Vec<Arc<str>>, name: &[u8]) -> Arc<str> {
    let name = String::from_utf8_lossy(name);
    if let Some(known) = sources_by_name.iter().find(|s| ***s == *name) {
        return known.clone();
    }
    let interned: Arc<str> = Arc::from(name.as_ref());
    sources_by_name.push(interned.clone());
    interned
}

fn fixed(bytes: &[u8]) -> io::Result<[u8; 8]> {
    bytes
        .try_into()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "corrupt spool field"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, time: &str) -> Call {
        let text = format!(
            r#"{{"eventID":"{id}","eventTime":"{time}","eventSource":"s3.amazonaws.com","eventName":"PutBucketTagging"}}"#
        );
        Call::parse(
            text.as_bytes(),
            Origin {
                source: Arc::from("f.json"),
                index: 3,
                offset: Some(9),
            },
        )
        .expect("parses")
    }

    /// Both ways of holding kept calls.
    const HOLDINGS: [Holding; 2] = [Holding::Spool, Holding::Memory { records: true }];

    /// The ids of the kept calls read back one by one, the same from both holdings and
    /// when read back all at once.
    fn collect(run_keys: usize, calls: &[(&str, &str, Verdict)]) -> (Vec<String>, Counts) {
        let [spooled, held] = HOLDINGS.map(|holding| {
            let ordered = collected(holding, run_keys, calls);
            let (all, counts) = ordered.into_calls().expect("read back");
            let all = (all.into_iter().map(|c| c.event_id).collect(), counts);
            let one_by_one = read_one_by_one(collected(holding, run_keys, calls));
            assert_eq!(all, one_by_one, "{holding:?}: all at once as one by one");
            one_by_one
        });
        assert_eq!(spooled, held, "held in memory as spooled");
        spooled
    }

    fn collected(holding: Holding, run_keys: usize, calls: &[(&str, &str, Verdict)]) -> Ordered {
        let mut collector =
            Collector::new(|v| v == Verdict::OutOfBand, holding, run_keys).expect("temp files");
        for (id, time, verdict) in calls {
            let attribution = Attribution {
                verdict: *verdict,
                reason: format!("r-{id}"),
            };
            collector.push(call(id, time), attribution).expect("push");
        }
        collector.finish().expect("finish")
    }

    fn read_one_by_one(mut ordered: Ordered) -> (Vec<String>, Counts) {
        let mut ids = Vec::new();
        while let Some((call, attribution)) = ordered.next_call().expect("read") {
            assert_eq!(attribution.reason, format!("r-{}", call.event_id));
            assert_eq!(call.origin.index, 3);
            assert_eq!(call.origin.offset, Some(9));
            ids.push(call.event_id);
        }
        (ids, ordered.counts().clone())
    }

    const INPUT: [(&str, &str, Verdict); 6] = [
        ("c", "2024-01-01T00:00:03Z", Verdict::OutOfBand),
        ("a", "2024-01-01T00:00:01Z", Verdict::OutOfBand),
        ("r", "2024-01-01T00:00:02Z", Verdict::ReadOnly),
        ("c", "2024-01-01T00:00:03Z", Verdict::OutOfBand),
        ("b", "2024-01-01T00:00:02.500Z", Verdict::OutOfBand),
        ("a", "2024-01-01T00:00:01Z", Verdict::OutOfBand),
    ];

    #[test]
    fn orders_and_deduplicates_in_memory() {
        let (ids, counts) = collect(DEFAULT_RUN_KEYS, &INPUT);
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(counts.duplicates, 2);
        assert_eq!(counts.by_verdict[&Verdict::OutOfBand], 3);
        assert_eq!(counts.by_verdict[&Verdict::ReadOnly], 1);
        assert_eq!(counts.total(), 4);
    }

    #[test]
    fn a_permutation_puts_each_item_where_the_order_says_and_the_rest_after() {
        let items: Vec<usize> = (0..10).collect();
        for order in [
            vec![],
            vec![0, 1, 2],
            vec![9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
            vec![3, 0, 7, 1],
            vec![1, 2, 0, 4, 5, 3, 9],
        ] {
            let mut permuted = items.clone();
            permute(&mut permuted, order.clone()).expect("a valid order");
            assert_eq!(permuted[..order.len()], order[..], "{order:?}");
            let mut rest: Vec<usize> = permuted[order.len()..].to_vec();
            rest.sort_unstable();
            let left_out: Vec<usize> = items
                .iter()
                .copied()
                .filter(|i| !order.contains(i))
                .collect();
            assert_eq!(rest, left_out, "{order:?}");
        }
        let mut items = items;
        assert!(permute(&mut items, vec![1, 1]).is_err());
        assert!(permute(&mut items, vec![10]).is_err());
    }

    #[test]
    fn spilled_runs_give_the_same_result() {
        for run_keys in [1, 2, 4] {
            assert_eq!(
                collect(run_keys, &INPUT),
                collect(DEFAULT_RUN_KEYS, &INPUT),
                "{run_keys}"
            );
        }
    }

    #[test]
    fn runs_are_merged_as_they_pile_up() {
        // 700 records of 650 events: spilled one key per run, merged twice over.
        let owned: Vec<(String, String, Verdict)> = (0..700)
            .map(|i| {
                let n = i % 650;
                let second = n * 37 % 3600;
                let time = format!("2024-01-01T00:{:02}:{:02}Z", second / 60, second % 60);
                let verdict = if n % 3 == 0 {
                    Verdict::ReadOnly
                } else {
                    Verdict::OutOfBand
                };
                (format!("e{n}"), time, verdict)
            })
            .collect();
        let input: Vec<(&str, &str, Verdict)> = owned
            .iter()
            .map(|(id, time, verdict)| (id.as_str(), time.as_str(), *verdict))
            .collect();
        let (ids, counts) = collect(1, &input);
        assert_eq!((ids, counts.clone()), collect(DEFAULT_RUN_KEYS, &input));
        assert_eq!(counts.total(), 650);
        assert_eq!(counts.duplicates, 50);

        let mut collector = Collector::new(|_| false, Holding::Spool, 1).expect("temp files");
        let attribution = Attribution {
            verdict: Verdict::ReadOnly,
            reason: String::new(),
        };
        for (id, time, _) in &input {
            collector
                .push(call(id, time), attribution.clone())
                .expect("push");
            assert!(collector.runs.len() < 3 * MERGE_FAN_IN, "runs pile up");
        }
    }

    #[test]
    fn counts_without_reading_calls() {
        let mut collector = Collector::new(|_| false, Holding::Spool, 2).expect("temp files");
        for (id, time, verdict) in INPUT {
            let attribution = Attribution {
                verdict,
                reason: String::new(),
            };
            collector.push(call(id, time), attribution).expect("push");
        }
        let counts = collector
            .finish()
            .expect("finish")
            .drain_counts()
            .expect("read");
        assert_eq!(counts.total(), 4);
        assert_eq!(counts.duplicates, 2);
    }
}
