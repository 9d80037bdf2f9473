//! Terraform's machine-readable UI (`plan -json`, one JSON message a line, as documented in
//! "Machine-readable UI Output Reference"): the diagnostics, which are what `terraform
//! validate -json` reports and more, and the planned changes (address and action); and the
//! spinner shown while a step runs.

use crate::validate::Check;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::io::IsTerminal;
use std::time::Duration;

/// What a `plan -json` run said.
#[derive(Debug, Default, PartialEq)]
pub(super) struct PlanStream {
    /// The error diagnostics, each as `file:line: summary detail`.
    errors: Vec<String>,
    /// The planned changes: (instance address, action).
    changes: Vec<(String, String)>,
}

/// Diagnostics that mean the working directory must be initialised (again).
const NEEDS_INIT: [&str; 7] = [
    "Backend initialization required",
    "Module not installed",
    "Module source has changed",
    "Module version requirements have changed",
    "Required plugins are not installed",
    "Inconsistent dependency lock file",
    "missing or corrupted provider plugins",
];

/// Words of a diagnostic raised because an offline plan had to call AWS (a data source, an
/// API the provider reads during plan).
const NEEDED_THE_CLOUD: [&str; 5] = [
    "no valid credential",
    "reading ",
    "dial tcp",
    "lookup ",
    "operation error",
];

impl PlanStream {
    /// Reads the messages of a run's standard output; lines that are not JSON are skipped.
    pub(super) fn read(stdout: &[u8]) -> PlanStream {
        let mut out = PlanStream::default();
        for line in String::from_utf8_lossy(stdout).lines() {
            let Ok(message) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            match message["type"].as_str() {
                Some("diagnostic") if message["diagnostic"]["severity"] == "error" => {
                    out.errors.push(problem(&message["diagnostic"]));
                }
                Some("planned_change") => {
                    let change = &message["change"];
                    let address = change["resource"]["addr"].as_str().unwrap_or_default();
                    let action = change["action"].as_str().unwrap_or_default();
                    out.changes.push((address.to_owned(), action.to_owned()));
                }
                _ => {}
            }
        }
        out
    }

    /// Whether Terraform asked for `terraform init`.
    pub(super) fn needs_init(&self) -> bool {
        self.errors
            .iter()
            .any(|e| NEEDS_INIT.iter().any(|m| e.contains(m)))
    }

    /// Whether every planned change is a no-op (a read, a move, an import of what the observed
    /// state already holds) or lies on an instance excused whole (flagged or ignored as a whole
    /// on purpose): then no attribute needs reading.
    pub(super) fn only_excused(&self, check: &Check) -> bool {
        self.changes.iter().all(|(address, action)| {
            matches!(action.as_str(), "noop" | "read" | "move" | "import")
                || check
                    .excused
                    .iter()
                    .any(|(a, attribute)| a == address && attribute.is_empty())
        })
    }

    /// A failed run's verdict: `Ok` with the problems in plain words when the configuration is
    /// not valid (the failed check's note), `Err` with the reason when the plan could not judge
    /// (it needed the cloud, or said nothing).
    pub(super) fn invalid(&self, binary: &str) -> Result<String, String> {
        let all = self.errors.join("; ");
        if self.errors.is_empty() {
            return Err(format!("{binary} plan failed without a diagnostic"));
        }
        if NEEDED_THE_CLOUD.iter().any(|m| all.contains(m)) {
            return Err(format!("the plan needed the cloud: {all}"));
        }
        Ok(format!("{binary} plan: {all}"))
    }
}

/// One diagnostic as `file:line: summary detail`, the way the validate step wrote it.
fn problem(diagnostic: &Value) -> String {
    let at = diagnostic["range"]["filename"]
        .as_str()
        .map_or(String::new(), |f| {
            format!("{f}:{}: ", diagnostic["range"]["start"]["line"])
        });
    format!(
        "{at}{} {}",
        diagnostic["summary"].as_str().unwrap_or_default(),
        diagnostic["detail"].as_str().unwrap_or_default()
    )
    .trim()
    .to_owned()
}

/// A spinner on standard error with `message`, when standard error is a terminal.
pub(super) fn spinner(message: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message.to_owned());
    bar.enable_steady_tick(Duration::from_millis(120));
    Some(bar)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::terraform::state::State;
    use crate::validate::Sandbox;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// The messages `terraform plan -json` (1.11.4) printed for the demo project with an
    /// undeclared variable in main.tf and a misspelt argument in extra.tf (shortened to the
    /// fields read), then a planned creation and an update.
    const STREAM: &str = r#"{"@level":"info","@message":"Terraform 1.11.4","terraform":"1.11.4","type":"version","ui":"1.2"}
{"@level":"error","@message":"Error: Reference to undeclared input variable","diagnostic":{"severity":"error","summary":"Reference to undeclared input variable","detail":"An input variable with the name \"instance_typo\" has not been declared. Did you mean \"instance_type\"?","range":{"filename":"main.tf","start":{"line":112,"column":28,"byte":2436},"end":{"line":112,"column":45,"byte":2453}}},"type":"diagnostic"}
{"@level":"warn","@message":"Warning: Deprecated attribute","diagnostic":{"severity":"warning","summary":"Deprecated attribute","detail":"x"},"type":"diagnostic"}
{"@level":"error","@message":"Error: Unsupported argument","diagnostic":{"severity":"error","summary":"Unsupported argument","detail":"An argument named \"nam\" is not expected here. Did you mean \"name\"?","range":{"filename":"extra.tf","start":{"line":1,"column":36,"byte":35},"end":{"line":1,"column":39,"byte":38}}},"type":"diagnostic"}
not json
{"@level":"info","@message":"aws_sqs_queue.extra: Plan to create","change":{"resource":{"addr":"aws_sqs_queue.extra","module":"","resource":"aws_sqs_queue.extra","implied_provider":"aws","resource_type":"aws_sqs_queue","resource_name":"extra","resource_key":null},"action":"create"},"type":"planned_change"}
{"@level":"info","@message":"aws_autoscaling_group.web: Plan to update","change":{"resource":{"addr":"aws_autoscaling_group.web"},"action":"update"},"type":"planned_change"}
"#;

    #[test]
    fn errors_read_as_the_validate_step_wrote_them_and_changes_by_address() {
        let stream = PlanStream::read(STREAM.as_bytes());
        assert_eq!(
            stream.errors,
            [
                "main.tf:112: Reference to undeclared input variable An input variable with the name \"instance_typo\" has not been declared. Did you mean \"instance_type\"?",
                "extra.tf:1: Unsupported argument An argument named \"nam\" is not expected here. Did you mean \"name\"?",
            ]
        );
        assert_eq!(
            stream.changes,
            [
                ("aws_sqs_queue.extra".to_owned(), "create".to_owned()),
                ("aws_autoscaling_group.web".to_owned(), "update".to_owned()),
            ]
        );
        let verdict = stream.invalid("terraform").unwrap();
        assert!(
            verdict.starts_with("terraform plan: main.tf:112: Reference"),
            "{verdict}"
        );
        assert!(
            verdict.contains("; extra.tf:1: Unsupported argument"),
            "{verdict}"
        );
        assert!(!stream.needs_init());
    }

    #[test]
    fn init_requests_and_offline_failures_are_told_apart_from_invalid_code() {
        let diagnostic = |summary: &str, detail: &str| {
            format!(
                "{{\"type\":\"diagnostic\",\"diagnostic\":{{\"severity\":\"error\",\"summary\":{},\"detail\":{}}}}}\n",
                serde_json::json!(summary),
                serde_json::json!(detail)
            )
        };
        let init = diagnostic(
            "Backend initialization required, please run \"terraform init\"",
            "Reason: Initial configuration of the requested backend \"local\"",
        );
        assert!(PlanStream::read(init.as_bytes()).needs_init());
        let cloud = diagnostic(
            "reading EC2 AMIs: operation error EC2: DescribeImages, https response error",
            "",
        );
        let offline = PlanStream::read(cloud.as_bytes()).invalid("terraform");
        assert!(
            offline
                .unwrap_err()
                .starts_with("the plan needed the cloud")
        );
        assert!(PlanStream::default().invalid("tofu").is_err());
    }

    #[test]
    fn only_changes_on_instances_excused_whole_need_no_reading() {
        let state = State::parse(
            br#"{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"x","outputs":{},"resources":[]}"#,
            "test",
        )
        .unwrap();
        let changed = BTreeMap::new();
        let excused = vec![
            ("aws_autoscaling_group.web".to_owned(), String::new()),
            ("aws_sqs_queue.extra".to_owned(), "tags".to_owned()),
        ];
        let sandbox = Sandbox::new(Path::new("/nonexistent"));
        let check = Check {
            root: Path::new("/nonexistent"),
            sandbox: &sandbox,
            outside: &[],
            changed: &changed,
            var_files: &[],
            state: &state,
            observed: &state,
            touched: &[],
            excused: &excused,
            creates: &[],
        };
        let stream = PlanStream::read(STREAM.as_bytes());
        // The queue is excused on one attribute only: its creation must be read.
        assert!(!stream.only_excused(&check));
        let update_only = PlanStream {
            changes: vec![("aws_autoscaling_group.web".into(), "update".into())],
            ..PlanStream::default()
        };
        assert!(update_only.only_excused(&check));
    }
}
