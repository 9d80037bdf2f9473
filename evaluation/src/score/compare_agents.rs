//! retrace's agent against a naive baseline agent on the same scenarios: pass rates and the
//! tokens each sent, side by side, and how many times smaller retrace's prompts and task
//! contexts were. The context is the task's first message, what the style decides; the
//! prompt tokens add what both send alike (the system text, the tool definitions, the
//! conversation's later turns).

use super::results::Results;
use serde::Serialize;
use std::fmt::Write as _;

/// One agent's figures over the scenarios.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// The planner, with the agent's model and context style.
    pub planner: String,
    /// pass@1 over the scenarios.
    pub pass_at_1: f64,
    /// pass@k over the scenarios.
    pub pass_at_k: f64,
    /// Scenarios every sample of which passed.
    pub passed: usize,
    /// Prompt tokens sent, over every sample.
    pub prompt_tokens: u64,
    /// Completion tokens received.
    pub completion_tokens: u64,
    /// The task contexts (first messages), estimated in tokens.
    pub context_tokens: u64,
    /// Prompt tokens per scenario that used the agent.
    pub prompt_tokens_per_agent_scenario: f64,
    /// Scenarios in which the agent spent tokens.
    pub agent_scenarios: usize,
}

impl Side {
    fn of(results: &Results) -> Side {
        let agent_scenarios = results.scenarios.iter().filter(|s| s.tokens > 0).count();
        Side {
            planner: results.planner.clone(),
            pass_at_1: results.overall.pass_at_1,
            pass_at_k: results.overall.pass_at_k,
            passed: results.overall.passed,
            prompt_tokens: results.prompt_tokens,
            completion_tokens: results.tokens - results.prompt_tokens,
            context_tokens: results.context_tokens,
            prompt_tokens_per_agent_scenario: results.prompt_tokens as f64
                / agent_scenarios.max(1) as f64,
            agent_scenarios,
        }
    }
}

/// retrace's agent and the naive baseline on the same scenarios.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Scenarios run.
    pub scenarios: usize,
    /// Samples per scenario.
    pub n: usize,
    /// The k of pass@k.
    pub k: usize,
    /// retrace's focused context.
    pub retrace: Side,
    /// The naive baseline.
    pub naive: Side,
    /// The baseline's prompt tokens over retrace's (`None` when retrace sent none).
    pub prompt_token_ratio: Option<f64>,
    /// The baseline's task contexts over retrace's.
    pub context_ratio: Option<f64>,
}

impl Comparison {
    /// Compares two runs over the same scenarios.
    pub fn of(retrace: &Results, naive: &Results) -> Comparison {
        let (retrace, naive_side) = (Side::of(retrace), Side::of(naive));
        Comparison {
            scenarios: naive.overall.scenarios,
            n: naive.n,
            k: naive.k,
            prompt_token_ratio: ratio(naive_side.prompt_tokens, retrace.prompt_tokens),
            context_ratio: ratio(naive_side.context_tokens, retrace.context_tokens),
            retrace,
            naive: naive_side,
        }
    }

    /// The comparison as a small table in words.
    pub fn text(&self) -> String {
        let mut out = format!(
            "\nretrace's agent against a naive baseline agent on the same {} scenarios (n = {}):\n",
            self.scenarios, self.n
        );
        let _ = writeln!(out, "  {:<34} {:>14} {:>14}", "", "retrace", "naive");
        let (r, b) = (&self.retrace, &self.naive);
        let rows = [
            (
                "pass@1".to_owned(),
                format!("{:.3}", r.pass_at_1),
                format!("{:.3}", b.pass_at_1),
            ),
            (
                format!("pass@{}", self.k),
                format!("{:.3}", r.pass_at_k),
                format!("{:.3}", b.pass_at_k),
            ),
            (
                "scenarios passed".to_owned(),
                r.passed.to_string(),
                b.passed.to_string(),
            ),
            (
                "prompt tokens".to_owned(),
                r.prompt_tokens.to_string(),
                b.prompt_tokens.to_string(),
            ),
            (
                "completion tokens".to_owned(),
                r.completion_tokens.to_string(),
                b.completion_tokens.to_string(),
            ),
            (
                "task context tokens".to_owned(),
                r.context_tokens.to_string(),
                b.context_tokens.to_string(),
            ),
            (
                "prompt tokens per agent scenario".to_owned(),
                format!("{:.0}", r.prompt_tokens_per_agent_scenario),
                format!("{:.0}", b.prompt_tokens_per_agent_scenario),
            ),
        ];
        for (name, a, b) in rows {
            let _ = writeln!(out, "  {name:<34} {a:>14} {b:>14}");
        }
        match (self.context_ratio, self.prompt_token_ratio) {
            (Some(context), Some(prompt)) => {
                let _ = writeln!(
                    out,
                    "  the naive baseline's task context was {context:.1}x retrace's; its prompts, with what both send alike, {prompt:.1}x"
                );
            }
            _ => out.push_str("  retrace's agent sent nothing\n"),
        }
        out
    }
}

/// `a / b`, or `None` when `b` is zero.
fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}
