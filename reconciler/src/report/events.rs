//! Output of `retrace events`: each call with time, actor, client, API, resources and
//! verdict, then a summary of counts by verdict and of skipped records.
//!
//! Calls are written as they are read from the ordered stream, so output of any size needs
//! no more memory than one call.

use crate::text::escaped;
use std::io::{self, Write};

use serde::Serialize;

use crate::attribute::{Attribution, Verdict};
use crate::ingest::Call;
use crate::ingest::order::Counts;
use crate::pipeline::Findings;

use super::Format;

/// The JSON shape of one call.
#[derive(Serialize)]
struct CallView<'a> {
    time: String,
    event_id: &'a str,
    account: Option<&'a str>,
    region: &'a str,
    service: &'a str,
    api: &'a str,
    event_name: &'a str,
    actor: String,
    identity: &'a crate::ingest::identity::UserIdentity,
    client: &'a crate::ingest::client::ClientKind,
    user_agent: Option<&'a str>,
    read_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_code: Option<&'a str>,
    resources: Vec<String>,
    verdict: Verdict,
    reason: &'a str,
    origin: &'a crate::ingest::Origin,
    #[serde(skip_serializing_if = "Option::is_none")]
    record: Option<Box<serde_json::value::RawValue>>,
}

impl<'a> CallView<'a> {
    fn new(call: &'a Call, attribution: &'a Attribution, with_record: bool) -> Self {
        Self {
            time: call
                .event_time
                .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            event_id: &call.event_id,
            account: call.account_id(),
            region: &call.aws_region,
            service: call.service(),
            api: call.api_name(),
            event_name: &call.event_name,
            actor: call.identity.actor(),
            identity: &call.identity,
            client: &call.client,
            user_agent: call.user_agent.as_deref(),
            read_only: call.read_only,
            error_code: call.error_code.as_deref(),
            resources: call.resource_hints(),
            verdict: attribution.verdict,
            reason: &attribution.reason,
            origin: &call.origin,
            record: with_record.then(|| call.raw_json()).flatten(),
        }
    }
}

/// The summary of a run.
#[derive(Debug, Serialize)]
pub struct Summary<'a> {
    /// Distinct calls per verdict, and duplicates dropped.
    pub counts: &'a Counts,
    /// Distinct calls in all.
    pub total: u64,
    /// Calls outside the window, accounts or regions.
    pub filtered_out: u64,
    /// Malformed records skipped.
    pub bad_record_count: u64,
    /// The first skipped records, with where and why.
    pub bad_records: &'a [crate::ingest::BadRecord],
    /// Inputs that failed as a whole.
    pub errors: Vec<String>,
    /// Whether sources left out read-only, failed and Terraform calls server-side.
    pub pushed_down: bool,
}

impl<'a> Summary<'a> {
    /// A summary of the counts and findings.
    pub fn new(counts: &'a Counts, findings: &'a Findings, pushed_down: bool) -> Self {
        Self {
            counts,
            total: counts.total(),
            filtered_out: findings.filtered_out,
            bad_record_count: findings.bad_record_count,
            bad_records: &findings.bad_records,
            errors: findings.errors.iter().map(ToString::to_string).collect(),
            pushed_down,
        }
    }
}

/// Writes calls in one format, then the summary.
pub struct EventsWriter<W: Write> {
    out: W,
    format: Format,
    with_record: bool,
    written: u64,
}

/// Width of the text columns before the resources and reason.
const WIDTHS: [usize; 5] = [19, 34, 28, 40, 13];

impl<W: Write> EventsWriter<W> {
    /// A writer; `with_record` adds each raw record to JSON output.
    pub fn new(out: W, format: Format, with_record: bool) -> Self {
        Self {
            out,
            format,
            with_record,
            written: 0,
        }
    }

    /// Writes one call.
    pub fn call(&mut self, call: &Call, attribution: &Attribution) -> io::Result<()> {
        let first = self.written == 0;
        self.written += 1;
        match self.format {
            Format::Text => {
                if first {
                    self.text_header()?;
                }
                self.text_row(call, attribution)
            }
            Format::Json => {
                self.out
                    .write_all(if first { b"{\"calls\":[\n" } else { b",\n" })?;
                serde_json::to_writer(
                    &mut self.out,
                    &CallView::new(call, attribution, self.with_record),
                )?;
                Ok(())
            }
            Format::Ndjson => {
                serde_json::to_writer(
                    &mut self.out,
                    &CallView::new(call, attribution, self.with_record),
                )?;
                self.out.write_all(b"\n")
            }
        }
    }

    /// Writes the summary and flushes. NDJSON's summary goes to `side` (standard error).
    pub fn finish(mut self, summary: &Summary, side: &mut dyn Write) -> io::Result<()> {
        match self.format {
            Format::Text => {
                if self.written > 0 {
                    writeln!(self.out)?;
                }
                write_summary_text(&mut self.out, summary)?;
            }
            Format::Json => {
                self.out.write_all(if self.written == 0 {
                    b"{\"calls\":["
                } else {
                    b"\n"
                })?;
                self.out.write_all(b"],\"summary\":")?;
                serde_json::to_writer(&mut self.out, summary)?;
                self.out.write_all(b"}\n")?;
            }
            Format::Ndjson => write_summary_text(side, summary)?,
        }
        self.out.flush()
    }

    fn text_header(&mut self) -> io::Result<()> {
        let titles = ["TIME", "ACTOR", "CLIENT", "API", "VERDICT"];
        for (title, width) in titles.iter().zip(WIDTHS) {
            write!(self.out, "{title:<width$}  ")?;
        }
        writeln!(self.out, "RESOURCES")
    }

    fn text_row(&mut self, call: &Call, attribution: &Attribution) -> io::Result<()> {
        let cells = [
            call.event_time.format("%Y-%m-%d %H:%M:%S").to_string(),
            call.identity.actor(),
            call.client.label(),
            format!("{}:{}", call.service(), call.api_name()),
            attribution.verdict.name().to_owned(),
        ];
        for (cell, width) in cells.iter().zip(WIDTHS) {
            write!(self.out, "{:<width$}  ", fit(&escaped(cell), width))?;
        }
        let resources = call.resource_hints();
        let resources = if resources.is_empty() {
            "-".into()
        } else {
            resources.join(", ")
        };
        writeln!(self.out, "{}", escaped(&resources))
    }
}

/// Cuts a cell to its column width, marking the cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width - 1).collect();
    format!("{kept}…")
}

/// Bad records listed in the text summary; the JSON summary has up to the pipeline's cap.
const TEXT_BAD_RECORDS: usize = 20;

fn write_summary_text(out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
    writeln!(out, "{} distinct calls", summary.total)?;
    for verdict in Verdict::ALL {
        let count = summary
            .counts
            .by_verdict
            .get(&verdict)
            .copied()
            .unwrap_or(0);
        writeln!(out, "  {:<14}{count:>10}", verdict.name())?;
    }
    writeln!(
        out,
        "  {:<14}{:>10}",
        "(duplicates)", summary.counts.duplicates
    )?;
    if summary.filtered_out > 0 {
        writeln!(
            out,
            "{} calls outside the window, accounts or regions",
            summary.filtered_out
        )?;
    }
    if summary.pushed_down {
        writeln!(
            out,
            "counts of read-only, failed and Terraform calls are partial: an API source filtered them out"
        )?;
    }
    if summary.bad_record_count > 0 {
        writeln!(
            out,
            "{} malformed records skipped:",
            summary.bad_record_count
        )?;
        for bad in summary.bad_records.iter().take(TEXT_BAD_RECORDS) {
            writeln!(out, "  {}", escaped(&bad.to_string()))?;
        }
        let more = summary
            .bad_record_count
            .saturating_sub(TEXT_BAD_RECORDS as u64);
        if more > 0 {
            writeln!(out, "  ... and {more} more (see --format json)")?;
        }
    }
    for error in &summary.errors {
        writeln!(out, "error: {}", escaped(error))?;
    }
    Ok(())
}
