//! A run's results: per scenario the samples' verdicts, and pass@k overall, per category and
//! per project, written as JSON, a Markdown report and an SVG chart.

use super::fix_source::FixSource;
use super::passk::{PassAtKError, pass_at_k, wilson};
use super::{Phases, Sample};
use crate::scenario::{Category, Scenario};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One scenario's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// The scenario id.
    pub id: String,
    /// Its project.
    pub project: String,
    /// Its category.
    pub category: Category,
    /// Its one-line description.
    pub description: String,
    /// The service families it touches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub families: Vec<String>,
    /// CloudTrail records the reconciler read (the trail and its background day).
    #[serde(default)]
    pub records: usize,
    /// Samples run.
    pub n: usize,
    /// Samples that passed.
    pub c: usize,
    /// pass@1 of this scenario (c / n).
    pub pass_at_1: f64,
    /// pass@k of this scenario.
    pub pass_at_k: f64,
    /// Whether every sample passed (what the baseline records).
    pub passed: bool,
    /// The reasons of the first failing sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// Lines added, averaged over the samples.
    pub lines_added: f64,
    /// Lines removed, averaged over the samples.
    pub lines_removed: f64,
    /// Edits at the value's source, averaged over the samples.
    pub at_source: f64,
    /// Use-site overrides, averaged over the samples.
    pub overrides: f64,
    /// Language-model tokens, summed over the samples.
    pub tokens: u64,
    /// Of those, prompt tokens.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// The agent's task contexts, estimated in tokens, summed over the samples.
    #[serde(default)]
    pub context_tokens: u64,
    /// Where the rules behind its fixes came from, over the samples.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub fixed_by: BTreeSet<FixSource>,
    /// Wall time of all samples, in milliseconds.
    pub wall_ms: f64,
    /// When Terraform judged: whether the built-in checks passed every sample too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin_passed: Option<bool>,
}

impl ScenarioResult {
    /// Summarises the samples of one scenario.
    pub fn new(scenario: &Scenario, samples: &[Sample], k: usize) -> Result<Self, PassAtKError> {
        let n = samples.len();
        let c = samples.iter().filter(|s| s.passed).count();
        let mean = |f: &dyn Fn(&Sample) -> usize| {
            samples.iter().map(|s| f(s) as f64).sum::<f64>() / n.max(1) as f64
        };
        Ok(Self {
            id: scenario.id.clone(),
            project: scenario.project.clone(),
            category: scenario.category,
            description: scenario.description.clone(),
            families: families(scenario),
            records: samples.first().map_or(0, |s| s.records),
            n,
            c,
            pass_at_1: pass_at_k(n, c, 1)?,
            pass_at_k: pass_at_k(n, c, k)?,
            passed: c == n,
            reasons: samples
                .iter()
                .find(|s| !s.passed || !s.builtin_passed)
                .map(Sample::reasons)
                .unwrap_or_default(),
            lines_added: mean(&|s| s.lines_added),
            lines_removed: mean(&|s| s.lines_removed),
            at_source: mean(&|s| s.at_source),
            overrides: mean(&|s| s.overrides),
            tokens: samples.iter().map(|s| s.tokens).sum(),
            prompt_tokens: samples.iter().map(|s| s.prompt_tokens).sum(),
            context_tokens: samples.iter().map(|s| s.context_tokens).sum(),
            fixed_by: samples.iter().flat_map(|s| s.fixed_by.clone()).collect(),
            wall_ms: samples.iter().map(|s| s.wall_ms).sum(),
            builtin_passed: samples
                .iter()
                .any(|s| s.terraform.is_some())
                .then(|| samples.iter().all(|s| s.builtin_passed)),
        })
    }

    /// A result for a scenario the harness could not run: it counts as failed.
    pub fn error(scenario: &Scenario, n: usize, error: &str) -> Self {
        Self {
            id: scenario.id.clone(),
            project: scenario.project.clone(),
            category: scenario.category,
            description: scenario.description.clone(),
            families: families(scenario),
            records: 0,
            n,
            c: 0,
            pass_at_1: 0.0,
            pass_at_k: 0.0,
            passed: false,
            reasons: vec![format!("error: {error}")],
            lines_added: 0.0,
            lines_removed: 0.0,
            at_source: 0.0,
            overrides: 0.0,
            tokens: 0,
            prompt_tokens: 0,
            context_tokens: 0,
            fixed_by: BTreeSet::new(),
            wall_ms: 0.0,
            builtin_passed: None,
        }
    }
}

fn families(scenario: &Scenario) -> Vec<String> {
    crate::family::all(&scenario.touches)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// pass@1 and pass@k over a group of scenarios.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Scenarios in the group.
    pub scenarios: usize,
    /// Scenarios whose every sample passed.
    pub passed: usize,
    /// Mean pass@1.
    pub pass_at_1: f64,
    /// Mean pass@k.
    pub pass_at_k: f64,
    /// CloudTrail records read over the group's scenarios (once per scenario).
    #[serde(default)]
    pub records: usize,
    /// The 95% Wilson interval of the share of scenarios passed, low end.
    #[serde(default)]
    pub ci_low: f64,
    /// The same interval's high end.
    #[serde(default)]
    pub ci_high: f64,
}

impl Group {
    fn of<'a>(results: impl Iterator<Item = &'a ScenarioResult>) -> Group {
        let mut g = Group::default();
        for r in results {
            g.scenarios += 1;
            g.passed += usize::from(r.passed);
            g.pass_at_1 += r.pass_at_1;
            g.pass_at_k += r.pass_at_k;
            g.records += r.records;
        }
        if g.scenarios > 0 {
            g.pass_at_1 /= g.scenarios as f64;
            g.pass_at_k /= g.scenarios as f64;
        }
        (g.ci_low, g.ci_high) = wilson(g.passed, g.scenarios);
        g
    }
}

/// The noise-only scenarios, reported apart from the headline: any patch or finding the
/// judge rejects there is a false positive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FalsePositives {
    /// Noise-only scenarios run.
    pub scenarios: usize,
    /// Those that failed (the system changed code or misreported where nothing changed).
    pub failed: usize,
    /// failed / scenarios.
    pub rate: f64,
    /// The 95% Wilson interval of the rate, low end.
    pub ci_low: f64,
    /// Its high end.
    pub ci_high: f64,
}

impl FalsePositives {
    fn of<'a>(results: impl Iterator<Item = &'a ScenarioResult>) -> Option<FalsePositives> {
        let g = Group::of(results.filter(|r| r.category == Category::NoiseOnly));
        if g.scenarios == 0 {
            return None;
        }
        let failed = g.scenarios - g.passed;
        let (ci_low, ci_high) = wilson(failed, g.scenarios);
        Some(FalsePositives {
            scenarios: g.scenarios,
            failed,
            rate: failed as f64 / g.scenarios as f64,
            ci_low,
            ci_high,
        })
    }
}

/// Patch figures summed over scenarios (each scenario's per-sample mean).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PatchFigures {
    /// Lines added.
    pub lines_added: f64,
    /// Lines removed.
    pub lines_removed: f64,
    /// Edits at the value's source.
    pub at_source: f64,
    /// Use-site overrides.
    pub overrides: f64,
}

/// The whole run: what `results.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Samples per scenario.
    pub n: usize,
    /// The k of pass@k.
    pub k: usize,
    /// The planner scored.
    pub planner: String,
    /// Every scenario.
    pub overall: Group,
    /// The headline: the scenarios with something to do (every category but noise-only).
    #[serde(default)]
    pub headline: Group,
    /// The noise-only scenarios, as a false-positive rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_only: Option<FalsePositives>,
    /// Per category, by name.
    pub by_category: BTreeMap<String, Group>,
    /// Per project.
    pub by_project: BTreeMap<String, Group>,
    /// Per service family (a scenario touching several counts in each).
    #[serde(default)]
    pub by_family: BTreeMap<String, Group>,
    /// Patch size and where edits were made.
    pub patch: PatchFigures,
    /// Language-model tokens in all.
    pub tokens: u64,
    /// Of those, prompt tokens.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// The agent's task contexts, estimated in tokens.
    #[serde(default)]
    pub context_tokens: u64,
    /// Wall time of the whole run, in seconds.
    pub wall_seconds: f64,
    /// Wall time per scenario (all samples), mean, in milliseconds.
    pub mean_scenario_ms: f64,
    /// Scenarios the harness could not run.
    pub errors: usize,
    /// Who judged: `built-in` or `terraform`.
    #[serde(default = "builtin_oracle")]
    pub oracle: String,
    /// When Terraform judged: how its verdicts and the built-in checks' agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
    /// The released dataset scored; `None` for the scenarios under `scenarios/`, whose
    /// background days this build regenerated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<crate::dataset::DatasetRef>,
    /// Seconds per phase of scoring, summed over the worker threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// Each scenario.
    pub scenarios: Vec<ScenarioResult>,
}

fn builtin_oracle() -> String {
    "built-in".into()
}

/// The agreement matrix of Terraform's verdicts and the built-in checks', per scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Both passed.
    pub both_pass: usize,
    /// Both failed.
    pub both_fail: usize,
    /// Terraform passed, the built-in checks failed.
    pub terraform_only: usize,
    /// The built-in checks passed, Terraform failed.
    pub builtin_only: usize,
    /// The share of scenarios where they agree.
    pub rate: f64,
}

impl Agreement {
    /// The matrix over the scenarios both judged; `None` when Terraform judged none (a
    /// scenario the harness could not run has no built-in verdict and is left out).
    fn of(scenarios: &[ScenarioResult]) -> Option<Agreement> {
        let mut a = Agreement::default();
        for r in scenarios {
            let Some(builtin) = r.builtin_passed else {
                continue;
            };
            match (r.passed, builtin) {
                (true, true) => a.both_pass += 1,
                (false, false) => a.both_fail += 1,
                (true, false) => a.terraform_only += 1,
                (false, true) => a.builtin_only += 1,
            }
        }
        let total = a.both_pass + a.both_fail + a.terraform_only + a.builtin_only;
        if total == 0 {
            return None;
        }
        a.rate = (a.both_pass + a.both_fail) as f64 / total as f64;
        Some(a)
    }
}

impl Results {
    /// Aggregates scenario results.
    pub fn new(n: usize, k: usize, scenarios: Vec<ScenarioResult>, wall_seconds: f64) -> Results {
        let mut by_category = BTreeMap::new();
        for category in Category::ALL {
            let group = Group::of(scenarios.iter().filter(|r| r.category == category));
            if group.scenarios > 0 {
                by_category.insert(category.name().to_owned(), group);
            }
        }
        let mut by_project = BTreeMap::new();
        for r in &scenarios {
            by_project.entry(r.project.clone()).or_insert(());
        }
        let by_project = by_project
            .into_keys()
            .map(|p| {
                let g = Group::of(scenarios.iter().filter(|r| r.project == p));
                (p, g)
            })
            .collect();
        let mut names: Vec<&String> = scenarios.iter().flat_map(|r| &r.families).collect();
        names.sort();
        names.dedup();
        let by_family = names
            .into_iter()
            .map(|f| {
                let g = Group::of(scenarios.iter().filter(|r| r.families.contains(f)));
                (f.clone(), g)
            })
            .collect();
        let mut patch = PatchFigures::default();
        for r in &scenarios {
            patch.lines_added += r.lines_added;
            patch.lines_removed += r.lines_removed;
            patch.at_source += r.at_source;
            patch.overrides += r.overrides;
        }
        let total_ms: f64 = scenarios.iter().map(|r| r.wall_ms).sum();
        let agreement = Agreement::of(&scenarios);
        Results {
            n,
            k,
            planner: "deterministic".into(),
            overall: Group::of(scenarios.iter()),
            headline: Group::of(
                scenarios
                    .iter()
                    .filter(|r| r.category != Category::NoiseOnly),
            ),
            noise_only: FalsePositives::of(scenarios.iter()),
            by_category,
            by_project,
            by_family,
            patch,
            tokens: scenarios.iter().map(|r| r.tokens).sum(),
            prompt_tokens: scenarios.iter().map(|r| r.prompt_tokens).sum(),
            context_tokens: scenarios.iter().map(|r| r.context_tokens).sum(),
            wall_seconds,
            mean_scenario_ms: total_ms / scenarios.len().max(1) as f64,
            errors: scenarios
                .iter()
                .filter(|r| r.reasons.first().is_some_and(|s| s.starts_with("error: ")))
                .count(),
            oracle: if agreement.is_some() {
                "terraform".into()
            } else {
                builtin_oracle()
            },
            agreement,
            phases: None,
            dataset: None,
            scenarios,
        }
    }

    /// The same results marked as measured on a released dataset.
    pub fn with_dataset(mut self, dataset: Option<crate::dataset::DatasetRef>) -> Results {
        self.dataset = dataset;
        self
    }

    /// Which inputs were scored, in one line.
    pub fn dataset_line(&self) -> String {
        match &self.dataset {
            Some(d) => format!(
                "dataset {} {} (manifest SHA-256 {})",
                d.name, d.version, d.manifest_sha256
            ),
            None => format!(
                "the scenarios as stored, background days regenerated by this build (unreleased; dataset {} {} when exported)",
                crate::dataset::NAME,
                crate::dataset::VERSION
            ),
        }
    }

    /// The same results with the time spent per phase.
    pub fn with_phases(mut self, phases: Phases) -> Results {
        self.phases = Some(phases);
        self
    }

    /// One line of seconds per phase, summed over threads (empty when not measured).
    pub fn phase_line(&self) -> String {
        let Some(phases) = &self.phases else {
            return String::new();
        };
        let parts: Vec<String> = phases
            .named()
            .iter()
            .map(|(name, s)| format!("{name} {s:.1} s"))
            .collect();
        format!("time per phase (summed over threads): {}", parts.join(", "))
    }

    /// The same results under another planner's name.
    pub fn with_planner(mut self, planner: &str) -> Results {
        planner.clone_into(&mut self.planner);
        self
    }

    /// The failing scenarios.
    pub fn failing(&self) -> impl Iterator<Item = &ScenarioResult> {
        self.scenarios.iter().filter(|r| !r.passed)
    }

    /// A short summary for the terminal.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.headline_text());
        out.push('\n');
        let _ = writeln!(
            out,
            "{} scenarios, n = {}: pass@1 {:.3}, pass@{} {:.3} ({} passed, {} failed) in {:.1} s",
            self.overall.scenarios,
            self.n,
            self.overall.pass_at_1,
            self.k,
            self.overall.pass_at_k,
            self.overall.passed,
            self.overall.scenarios - self.overall.passed,
            self.wall_seconds
        );
        let _ = writeln!(
            out,
            "{} CloudTrail records read ({:.0} per scenario)",
            self.overall.records,
            self.overall.records as f64 / self.overall.scenarios.max(1) as f64
        );
        for (title, groups) in [
            ("by category", &self.by_category),
            ("by service family", &self.by_family),
        ] {
            let _ = writeln!(out, "{title}:");
            for (name, g) in groups {
                let _ = writeln!(
                    out,
                    "  {name:<15} {:>4} scenarios  pass@1 {:.3}  pass@{} {:.3}",
                    g.scenarios, g.pass_at_1, self.k, g.pass_at_k
                );
            }
        }
        if self.tokens > 0 {
            let _ = writeln!(
                out,
                "language-model tokens: {} ({} prompt, {} completion), {:.0} per scenario",
                self.tokens,
                self.prompt_tokens,
                self.tokens - self.prompt_tokens,
                self.tokens as f64 / self.overall.scenarios.max(1) as f64
            );
        }
        if let Some(line) = self.fixed_by_line() {
            let _ = writeln!(out, "{line}");
        }
        if let Some(a) = &self.agreement {
            let _ = writeln!(
                out,
                "judged by terraform plan; agreement with the built-in checks {:.3} \
                 (both pass {}, both fail {}, only terraform passes {}, only built-in passes {})",
                a.rate, a.both_pass, a.both_fail, a.terraform_only, a.builtin_only
            );
        }
        out
    }

    /// Scenarios passed, per source of the rules behind their fixes (one can count under
    /// several): `None` when every fix used the shipped rules only.
    pub fn fixed_by(&self) -> Option<BTreeMap<FixSource, usize>> {
        let learned = |r: &ScenarioResult| r.fixed_by.iter().any(|s| *s != FixSource::Shipped);
        if !self.scenarios.iter().any(learned) {
            return None;
        }
        let passed = || self.scenarios.iter().filter(|r| r.passed);
        Some(
            FixSource::ALL
                .into_iter()
                .map(|source| {
                    (
                        source,
                        passed().filter(|r| r.fixed_by.contains(&source)).count(),
                    )
                })
                .collect(),
        )
    }

    /// [`Results::fixed_by`] in words.
    fn fixed_by_line(&self) -> Option<String> {
        let counts = self.fixed_by()?;
        let parts: Vec<String> = counts
            .iter()
            .map(|(source, n)| format!("{} in {n}", source.words()))
            .collect();
        let passed_without_tokens = self
            .scenarios
            .iter()
            .filter(|r| r.passed && r.tokens == 0)
            .count();
        Some(format!(
            "passed scenarios fixed by {} (one can count under several); {} of {} passed with no \
             language-model tokens",
            parts.join(", "),
            passed_without_tokens,
            self.overall.passed
        ))
    }

    /// Per scenario, where its fixes came from, when any came from elsewhere than the shipped
    /// rules.
    fn fixed_by_section(&self, out: &mut String) {
        let Some(line) = self.fixed_by_line() else {
            return;
        };
        let _ = writeln!(
            out,
            "## Where the fixes came from\n\n{line}.\n\n| scenario | passed | fixed by | tokens |\n|---|---|---|---:|"
        );
        for r in &self.scenarios {
            let sources: Vec<&str> = r.fixed_by.iter().map(|s| s.words()).collect();
            let _ = writeln!(
                out,
                "| {} | {} of {} | {} | {} |",
                r.id,
                r.c,
                r.n,
                if sources.is_empty() {
                    "nothing absorbed".to_owned()
                } else {
                    sources.join(", ")
                },
                r.tokens
            );
        }
        out.push('\n');
    }

    /// Who judged, in words: `terraform plan` or `the built-in checks`.
    pub fn judge(&self) -> &'static str {
        if self.oracle == "terraform" {
            "terraform plan"
        } else {
            "built-in checks"
        }
    }

    /// The headline and the false-positive rate, in two lines.
    pub fn headline_text(&self) -> String {
        let h = &self.headline;
        let mut out = format!(
            "headline: pass@1 {:.3} (judged by {}; 95% CI {:.3}-{:.3}) over {} scenarios with something to do, {} passed",
            h.pass_at_1,
            self.judge(),
            h.ci_low,
            h.ci_high,
            h.scenarios,
            h.passed
        );
        if let Some(fp) = &self.noise_only {
            let _ = write!(
                out,
                "\nnoise-only: false-positive rate {:.3} (judged by {}; 95% CI {:.3}-{:.3}), {} of {} scenarios",
                fp.rate,
                self.judge(),
                fp.ci_low,
                fp.ci_high,
                fp.failed,
                fp.scenarios
            );
        }
        out
    }

    /// The scenarios where Terraform and the built-in checks disagree.
    pub fn disagreements(&self) -> impl Iterator<Item = &ScenarioResult> {
        self.scenarios
            .iter()
            .filter(|r| r.builtin_passed.is_some_and(|b| b != r.passed))
    }

    /// The agreement section of the Markdown report (nothing when Terraform did not judge).
    fn agreement_section(&self, out: &mut String) {
        let Some(a) = &self.agreement else {
            return;
        };
        let _ = writeln!(
            out,
            "## Terraform and the built-in checks\n\nEach scenario's patched project was planned by \
             `terraform plan -refresh=false` against the post-drift state; pass means no change on \
             any resource outside the expected flags. Agreement with the built-in checks: {:.3}.\n\n\
             | | built-in passes | built-in fails |\n|---|---:|---:|\n\
             | **terraform passes** | {} | {} |\n| **terraform fails** | {} | {} |\n",
            a.rate, a.both_pass, a.terraform_only, a.builtin_only, a.both_fail
        );
        let mut any = false;
        for r in self.disagreements() {
            any = true;
            let who = if r.passed {
                "terraform passes, built-in fails"
            } else {
                "built-in passes, terraform fails"
            };
            let _ = writeln!(out, "- **{}** ({who}): {}", r.id, escape(&r.description));
            for reason in &r.reasons {
                let _ = writeln!(out, "  - {}", escape(reason));
            }
        }
        if any {
            out.push('\n');
        }
    }

    /// The Markdown report: tables per category and project, the patch figures, and the
    /// failing scenarios with their reasons.
    pub fn markdown(&self) -> String {
        let mut out = String::from("# retrace evaluation\n\n");
        for line in self.headline_text().lines() {
            let _ = writeln!(out, "- {line}");
        }
        let _ = writeln!(out, "- inputs: {}", self.dataset_line());
        out.push('\n');
        let _ = writeln!(
            out,
            "Planner: {}; judged by the {} checks; n = {} samples per scenario; k = {}; {} scenarios \
             in {:.1} s (mean {:.1} ms per scenario); {} CloudTrail records read; {} language-model tokens.\n",
            self.planner,
            self.oracle,
            self.n,
            self.k,
            self.overall.scenarios,
            self.wall_seconds,
            self.mean_scenario_ms,
            self.overall.records,
            self.tokens
        );
        self.table(&mut out, "Category", &self.by_category);
        self.table(&mut out, "Service family", &self.by_family);
        self.table(&mut out, "Project", &self.by_project);
        self.agreement_section(&mut out);
        self.fixed_by_section(&mut out);
        let p = &self.patch;
        let _ = writeln!(
            out,
            "## Patches\n\n| lines added | lines removed | edits at the source | use-site overrides |\n|---:|---:|---:|---:|\n| {:.0} | {:.0} | {:.0} | {:.0} |\n",
            p.lines_added, p.lines_removed, p.at_source, p.overrides
        );
        out.push_str("## Failing scenarios\n\n");
        let mut any = false;
        for r in self.failing() {
            any = true;
            let _ = writeln!(
                out,
                "- **{}** ({}, {}, {} of {} samples passed): {}",
                r.id,
                r.project,
                r.category,
                r.c,
                r.n,
                escape(&r.description)
            );
            for reason in &r.reasons {
                let _ = writeln!(out, "  - {}", escape(reason));
            }
        }
        if !any {
            out.push_str("None.\n");
        }
        out
    }

    fn table(&self, out: &mut String, title: &str, groups: &BTreeMap<String, Group>) {
        let _ = writeln!(
            out,
            "## By {}\n\n| {title} | scenarios | passed ({judge}) | pass@1 ({judge}) | 95% CI ({judge}) | pass@{} ({judge}) | records |\n|---|---:|---:|---:|---:|---:|---:|",
            title.to_lowercase(),
            self.k,
            judge = self.judge()
        );
        let all = ("**all**".to_owned(), &self.overall);
        for (name, g) in groups.iter().map(|(n, g)| (n.clone(), g)).chain([all]) {
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {:.3} | {:.3}-{:.3} | {:.3} | {} |",
                g.scenarios, g.passed, g.pass_at_1, g.ci_low, g.ci_high, g.pass_at_k, g.records
            );
        }
        out.push('\n');
    }

    /// A bar chart of pass@1 per category, as a standalone SVG document.
    pub fn chart(&self) -> String {
        self.bars("category", &self.by_category)
    }

    /// A bar chart of pass@1 per group (bars) with the 95% Wilson interval of the share of
    /// scenarios passed (whiskers), the judge named in the title.
    fn bars(&self, what: &str, groups: &BTreeMap<String, Group>) -> String {
        let (bar, gap, left, top, height) = (40.0, 16.0, 60.0, 40.0, 240.0);
        let count = groups.len().max(1) as f64;
        let width = (left + count * (bar + gap) + gap).max(420.0);
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#,
            w = width,
            h = top + height + 110.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{left}" y="20" font-size="14">pass@1 per {what}, judged by {} (n = {}; whiskers: 95% Wilson interval)</text>"#,
            self.judge(),
            self.n
        );
        for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let y = top + height * (1.0 - tick);
            let _ = writeln!(
                svg,
                "<line x1=\"{left}\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\" stroke=\"#ddd\"/>\n<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{tick:.2}</text>",
                left - 6.0,
                y + 4.0
            );
        }
        let level = |v: f64| top + height * (1.0 - v.clamp(0.0, 1.0));
        for (i, (name, g)) in groups.iter().enumerate() {
            let x = left + gap + i as f64 * (bar + gap);
            let y = level(g.pass_at_1);
            let mid = x + bar / 2.0;
            let colour = if g.pass_at_1 >= 0.9 {
                "#2e7d32"
            } else {
                "#c62828"
            };
            let _ = writeln!(
                svg,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{bar}\" height=\"{}\" fill=\"{colour}\"><title>{}: {:.3} ({} scenarios; 95% CI {:.3}-{:.3})</title></rect>\n\
                 <line x1=\"{mid}\" y1=\"{}\" x2=\"{mid}\" y2=\"{}\" stroke=\"#000\"/>\n\
                 <text x=\"{mid}\" y=\"{}\" text-anchor=\"middle\">{:.2}</text>\n\
                 <text x=\"{mid}\" y=\"{}\" text-anchor=\"end\" transform=\"rotate(-35 {mid} {})\">{}</text>",
                top + height - y,
                xml(name),
                g.pass_at_1,
                g.scenarios,
                g.ci_low,
                g.ci_high,
                level(g.ci_low),
                level(g.ci_high),
                level(g.ci_high) - 4.0,
                g.pass_at_1,
                top + height + 14.0,
                top + height + 14.0,
                xml(name)
            );
        }
        svg.push_str("</svg>\n");
        svg
    }

    /// A static HTML page: the headline, the false-positive rate, a chart and a table per
    /// category, service family and project, and the failing scenarios.
    pub fn html(&self) -> String {
        let mut out = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>retrace evaluation</title>\n\
             <style>body{font-family:sans-serif;max-width:72em;margin:2em auto}table{border-collapse:collapse}\
             td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}</style>\n\
             </head>\n<body>\n<h1>retrace evaluation</h1>\n",
        );
        for line in self.headline_text().lines() {
            let _ = writeln!(out, "<p><strong>{}</strong></p>", xml(line));
        }
        let _ = writeln!(out, "<p>Inputs: {}.</p>", xml(&self.dataset_line()));
        let _ = writeln!(
            out,
            "<p>Planner: {}; n = {} samples per scenario; {} scenarios in {:.1} s; {} CloudTrail records read.</p>",
            xml(&self.planner),
            self.n,
            self.overall.scenarios,
            self.wall_seconds,
            self.overall.records
        );
        for (title, groups) in [
            ("category", &self.by_category),
            ("service family", &self.by_family),
            ("project", &self.by_project),
        ] {
            let _ = writeln!(out, "<h2>By {title}</h2>\n{}", self.bars(title, groups));
            let _ = writeln!(
                out,
                "<table>\n<tr><th>{title}</th><th>scenarios</th><th>passed ({j})</th><th>pass@1 ({j})</th><th>95% CI ({j})</th></tr>",
                j = self.judge()
            );
            for (name, g) in groups {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}-{:.3}</td></tr>",
                    xml(name),
                    g.scenarios,
                    g.passed,
                    g.pass_at_1,
                    g.ci_low,
                    g.ci_high
                );
            }
            out.push_str("</table>\n");
        }
        out.push_str("<h2>Failing scenarios</h2>\n<ul>\n");
        for r in self.failing() {
            let _ = writeln!(
                out,
                "<li><strong>{}</strong> ({}, {}): {}</li>",
                xml(&r.id),
                xml(&r.project),
                r.category,
                xml(&r.description)
            );
        }
        out.push_str("</ul>\n</body>\n</html>\n");
        out
    }
}

/// Escapes Markdown table and emphasis characters in free text.
/// `text` with the characters Markdown tables and emphasis read escaped.
pub(super) fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('*', "\\*")
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::scenario::Expect;

    fn scenario(id: &str, project: &str, category: Category) -> Scenario {
        Scenario {
            id: id.into(),
            project: project.into(),
            category,
            family: String::new(),
            description: "d".into(),
            generator: "g".into(),
            seed: 0,
            base_state_sha256: String::new(),
            expect: Expect::default(),
            touches: vec!["aws_sqs_queue".into()],
            background: None,
            withhold: Vec::new(),
        }
    }

    fn sample(passed: bool) -> Sample {
        Sample {
            passed,
            checks: Vec::new(),
            lines_added: 2,
            lines_removed: 1,
            at_source: 1,
            overrides: 0,
            tokens: 0,
            prompt_tokens: 0,
            context_tokens: 0,
            fixed_by: Default::default(),
            wall_ms: 1.0,
            records: 10,
            builtin_passed: passed,
            terraform: None,
        }
    }

    #[test]
    fn groups_average_per_scenario_estimates() {
        let a = ScenarioResult::new(
            &scenario("a", "p", Category::Runbook),
            &[sample(true), sample(false), sample(false)],
            2,
        )
        .unwrap();
        // n=3, c=1, k=2: 1 − C(2,2)/C(3,2) = 2/3.
        assert!((a.pass_at_k - 2.0 / 3.0).abs() < 1e-12);
        assert!((a.pass_at_1 - 1.0 / 3.0).abs() < 1e-12);
        let b = ScenarioResult::new(
            &scenario("b", "q", Category::Console),
            &[sample(true), sample(true), sample(true)],
            2,
        )
        .unwrap();
        let results = Results::new(3, 2, vec![a, b], 1.0);
        assert!((results.overall.pass_at_k - (2.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(results.by_category["runbook"].passed, 0);
        assert_eq!(results.by_project["q"].pass_at_1, 1.0);
        assert_eq!(results.failing().count(), 1);
        assert!(
            results
                .markdown()
                .contains("| runbook | 1 | 0 | 0.333 | 0.000-0.793 | 0.667 |")
        );
        let svg = results.chart();
        assert!(svg.starts_with("<svg") && svg.contains("runbook") && svg.ends_with("</svg>\n"));
        assert!(
            results.agreement.is_none(),
            "no terraform verdicts, no matrix"
        );
    }

    fn judged(terraform: bool, builtin: bool) -> Sample {
        Sample {
            passed: terraform,
            builtin_passed: builtin,
            terraform: Some(super::super::terraform::TerraformVerdict {
                passed: terraform,
                changes: if terraform {
                    vec![]
                } else {
                    vec!["aws_lb.web idle_timeout: code 60, cloud 120".into()]
                },
                error: None,
            }),
            ..sample(terraform)
        }
    }

    #[test]
    fn terraform_verdicts_give_the_agreement_matrix_and_list_disagreements() {
        let result = |id: &str, t: bool, b: bool| {
            ScenarioResult::new(&scenario(id, "p", Category::Console), &[judged(t, b)], 1).unwrap()
        };
        let results = Results::new(
            1,
            1,
            vec![
                result("a", true, true),
                result("b", true, false),
                result("c", false, true),
                result("d", false, false),
            ],
            1.0,
        );
        let a = results.agreement.as_ref().expect("a matrix");
        assert_eq!(
            (a.both_pass, a.terraform_only, a.builtin_only, a.both_fail),
            (1, 1, 1, 1)
        );
        assert!((a.rate - 0.5).abs() < 1e-12);
        assert_eq!(results.oracle, "terraform");
        let ids: Vec<&str> = results.disagreements().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["b", "c"]);
        let report = results.markdown();
        assert!(
            report.contains("| **terraform passes** | 1 | 1 |"),
            "{report}"
        );
        assert!(
            report.contains("- **c** (built-in passes, terraform fails)"),
            "{report}"
        );
        assert!(
            report.contains("terraform plan: aws_lb.web idle_timeout: code 60, cloud 120"),
            "{report}"
        );
    }
}
