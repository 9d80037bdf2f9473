//! The agent's part of the reconcile report, in words: per task, how it ended and the tokens
//! it took, then the run's total.

use crate::agent::{AgentReport, TaskResult};

/// One line per task and a total line.
pub fn lines(report: &AgentReport) -> Vec<String> {
    let mut out: Vec<String> = report
        .tasks
        .iter()
        .map(|task| {
            let what = match &task.result {
                TaskResult::Validated if task.placement => {
                    "its edits placed the change and passed the check".to_owned()
                }
                TaskResult::Validated => "a rule validated and is learned".to_owned(),
                TaskResult::GaveUp => "no rule that validates was found".to_owned(),
                TaskResult::OverBudget(bound) => format!("stopped: {bound}"),
                TaskResult::Failed(reason) => format!("failed: {reason}"),
                TaskResult::DryRun(path) => format!("dry run: prompt written to {path}"),
            };
            format!(
                "{} ({}), {} call(s): {what}; {} prompt + {} completion tokens in {} turn(s)",
                task.api,
                task.event_source,
                task.event_ids.len(),
                task.usage.prompt_tokens,
                task.usage.completion_tokens,
                task.turns
            )
        })
        .collect();
    out.push(format!(
        "model {}: {} prompt + {} completion tokens in this run",
        report.model, report.usage.prompt_tokens, report.usage.completion_tokens
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TaskReport;
    use crate::agent::client::Usage;

    #[test]
    fn a_task_line_says_how_it_ended_and_what_it_cost() {
        let usage = Usage {
            prompt_tokens: 1200,
            completion_tokens: 80,
        };
        let report = AgentReport {
            model: "m".into(),
            tasks: vec![TaskReport {
                event_source: "sqs.amazonaws.com".into(),
                api: "TagQueue".into(),
                event_ids: vec!["e".into()],
                result: TaskResult::OverBudget("used all 8 turns".into()),
                turns: 8,
                attempts: 1,
                usage,
                first_prompt_tokens: 500,
                context_tokens: 250,
                rule: None,
                placement: false,
                placed: None,
            }],
            usage,
        };
        assert_eq!(
            lines(&report),
            [
                "TagQueue (sqs.amazonaws.com), 1 call(s): stopped: used all 8 turns; 1200 prompt + 80 completion tokens in 8 turn(s)",
                "model m: 1200 prompt + 80 completion tokens in this run"
            ]
        );
    }
}
