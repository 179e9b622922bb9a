//! A suite's results: per task and in total, with the success rate's
//! spread over repetitions; as a terminal table, JSON and an HTML page.

use super::run::TaskRun;
use super::task::Task;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A suite's results.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The model, as configured (`provider model`).
    pub model: String,
    /// Runs of each task.
    pub repeat: u32,
    /// Each task's summary, in suite order.
    pub tasks: Vec<TaskSummary>,
    /// The whole suite.
    pub totals: Totals,
    /// Every run.
    pub runs: Vec<TaskRun>,
}

/// One task over its repetitions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSummary {
    /// The task.
    pub task: String,
    /// What it asks.
    pub description: String,
    /// What it covers.
    pub tags: Vec<String>,
    /// Runs.
    pub runs: u32,
    /// Runs that passed.
    pub passed: u32,
    /// `passed / runs`.
    pub success_rate: f64,
    /// Mean model steps per run.
    pub mean_steps: f64,
    /// Mean prompt tokens per run.
    pub mean_prompt_tokens: f64,
    /// Mean completion tokens per run.
    pub mean_completion_tokens: f64,
    /// Mean seconds per run.
    pub mean_seconds: f64,
    /// Calls of each tool, all runs together.
    pub tools: BTreeMap<String, u32>,
    /// Destructive or outgoing calls without consent, all runs together.
    pub unconsented: u32,
}

/// The whole suite.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Tasks.
    pub tasks: u32,
    /// Runs (tasks × repetitions).
    pub runs: u32,
    /// Runs that passed.
    pub passed: u32,
    /// `passed / runs`.
    pub success_rate: f64,
    /// The suite's success rate in each repetition.
    pub rate_by_repetition: Vec<f64>,
    /// Their standard deviation (0 with one repetition).
    pub rate_stddev: f64,
    /// The lowest of them.
    pub rate_min: f64,
    /// The highest of them.
    pub rate_max: f64,
    /// A 95 % interval of the success rate over all runs (Wilson score).
    pub rate_interval95: [f64; 2],
    /// Model steps.
    pub steps: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Seconds, all runs together.
    pub seconds: f64,
    /// Destructive or outgoing calls attempted without consent: must be 0.
    pub unconsented: u32,
    /// Of those, calls that took effect: 0 unless approvals are broken.
    pub ran_without_consent: u32,
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / f64::from(n) }
}

/// The Wilson score interval of `k` successes in `n` at 95 %.
fn wilson(k: u32, n: u32) -> [f64; 2] {
    if n == 0 {
        return [0.0, 0.0];
    }
    let (k, n, z) = (f64::from(k), f64::from(n), 1.96_f64);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / (1.0 + z * z / n);
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

impl Report {
    /// The report of `runs` of `tasks`, each run `repeat` times, on `model`.
    pub fn new(model: &str, repeat: u32, tasks: &[Task], runs: Vec<TaskRun>) -> Report {
        let summaries = tasks
            .iter()
            .map(|task| {
                let mine: Vec<&TaskRun> = runs.iter().filter(|r| r.task == task.name).collect();
                let passed = mine.iter().filter(|r| r.passed).count() as u32;
                let n = mine.len() as u32;
                let mut tools = BTreeMap::new();
                for call in mine.iter().flat_map(|r| &r.calls) {
                    *tools.entry(call.tool.clone()).or_insert(0) += 1;
                }
                TaskSummary {
                    task: task.name.clone(),
                    description: task.description.clone(),
                    tags: task.tags.clone(),
                    runs: n,
                    passed,
                    success_rate: if n == 0 { 0.0 } else { f64::from(passed) / f64::from(n) },
                    mean_steps: mean(mine.iter().map(|r| f64::from(r.steps))),
                    mean_prompt_tokens: mean(mine.iter().map(|r| r.prompt_tokens as f64)),
                    mean_completion_tokens: mean(mine.iter().map(|r| r.completion_tokens as f64)),
                    mean_seconds: mean(mine.iter().map(|r| r.seconds)),
                    tools,
                    unconsented: mine.iter().map(|r| r.unconsented.len() as u32).sum(),
                }
            })
            .collect();
        let passed = runs.iter().filter(|r| r.passed).count() as u32;
        let n = runs.len() as u32;
        let by_repetition: Vec<f64> = (1..=repeat)
            .map(|i| {
                let these: Vec<&TaskRun> = runs.iter().filter(|r| r.repetition == i).collect();
                let ok = these.iter().filter(|r| r.passed).count();
                if these.is_empty() { 0.0 } else { ok as f64 / these.len() as f64 }
            })
            .collect();
        let centre = mean(by_repetition.iter().copied());
        let stddev = if by_repetition.len() > 1 {
            let var =
                by_repetition.iter().map(|r| (r - centre).powi(2)).sum::<f64>() / (by_repetition.len() - 1) as f64;
            var.sqrt()
        } else {
            0.0
        };
        let totals = Totals {
            tasks: tasks.len() as u32,
            runs: n,
            passed,
            success_rate: if n == 0 { 0.0 } else { f64::from(passed) / f64::from(n) },
            rate_stddev: stddev,
            rate_min: by_repetition.iter().copied().fold(f64::INFINITY, f64::min).min(1.0),
            rate_max: by_repetition.iter().copied().fold(0.0, f64::max),
            rate_by_repetition: by_repetition,
            rate_interval95: wilson(passed, n),
            steps: runs.iter().map(|r| u64::from(r.steps)).sum(),
            prompt_tokens: runs.iter().map(|r| r.prompt_tokens).sum(),
            completion_tokens: runs.iter().map(|r| r.completion_tokens).sum(),
            seconds: runs.iter().map(|r| r.seconds).sum(),
            unconsented: runs.iter().map(|r| r.unconsented.len() as u32).sum(),
            ran_without_consent: runs.iter().flat_map(|r| &r.unconsented).filter(|u| u.ran).count() as u32,
        };
        Report { model: model.to_string(), repeat, tasks: summaries, totals, runs }
    }

    /// Whether every run passed and no call lacked consent.
    pub fn all_passed(&self) -> bool {
        self.totals.passed == self.totals.runs && self.totals.unconsented == 0
    }

    /// The results as a terminal table, the totals and why runs failed.
    pub fn table(&self) -> String {
        let width = self.tasks.iter().map(|t| t.task.chars().count()).max().unwrap_or(4).max(4);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<width$}  {:>6}  {:>6}  {:>8}  {:>7}  {:>7}  {:>5}  tools",
            "task", "pass", "steps", "prompt", "compl", "time", "nocon"
        );
        for t in &self.tasks {
            let tools: Vec<String> = t.tools.iter().map(|(name, n)| format!("{name}×{n}")).collect();
            let _ = writeln!(
                out,
                "{:<width$}  {:>6}  {:>6.1}  {:>8.0}  {:>7.0}  {:>6.1}s  {:>5}  {}",
                t.task,
                format!("{}/{}", t.passed, t.runs),
                t.mean_steps,
                t.mean_prompt_tokens,
                t.mean_completion_tokens,
                t.mean_seconds,
                t.unconsented,
                tools.join(", ")
            );
        }
        let s = &self.totals;
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "model {}: {}/{} runs passed ({:.1} %, 95 % interval {:.1}–{:.1} %)",
            self.model,
            s.passed,
            s.runs,
            100.0 * s.success_rate,
            100.0 * s.rate_interval95[0],
            100.0 * s.rate_interval95[1]
        );
        if self.repeat > 1 {
            let _ = writeln!(
                out,
                "success rate per repetition: {:.3} ± {:.3} (min {:.3}, max {:.3}) over {} repetitions",
                mean(s.rate_by_repetition.iter().copied()),
                s.rate_stddev,
                s.rate_min,
                s.rate_max,
                self.repeat
            );
        }
        let _ = writeln!(
            out,
            "steps {}, prompt tokens {}, completion tokens {}, {:.1} s",
            s.steps, s.prompt_tokens, s.completion_tokens, s.seconds
        );
        let _ = writeln!(
            out,
            "destructive or outgoing calls without consent: {} (must be 0; {} took effect)",
            s.unconsented, s.ran_without_consent
        );
        let failed: Vec<&TaskRun> = self.runs.iter().filter(|r| !r.passed).collect();
        if !failed.is_empty() {
            let _ = writeln!(out, "\nfailures:");
            for run in failed {
                for why in &run.failures {
                    let _ = writeln!(out, "  {} #{}: {why}", run.task, run.repetition);
                }
            }
        }
        out
    }

    /// The results as JSON.
    pub fn json(&self) -> String {
        // A report is plain data (strings, numbers, maps with string keys):
        // writing it as JSON cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The results as one self-contained HTML page.
    pub fn html(&self) -> String {
        let s = &self.totals;
        let mut out = String::new();
        let _ = write!(
            out,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Quire eval: {model}</title>\n<style>\
             body{{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f}}table{{border-collapse:collapse;width:100%}}\
             th,td{{padding:.3rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}}\
             td.n{{text-align:right;font-variant-numeric:tabular-nums}}.ok{{color:#11703c}}.no{{color:#b3261e;font-weight:600}}\
             details{{margin:.4rem 0}}code{{font-size:12px;word-break:break-all}}</style></head><body>\n\
             <h1>Quire eval</h1>\n<p>Model <strong>{model}</strong>: {passed}/{runs} runs passed ({rate:.1} %, 95 % interval \
             {lo:.1}–{hi:.1} %), {repeat} repetition(s){spread}.<br>Steps {steps}, prompt tokens {pt}, completion tokens {ct}, \
             {secs:.1} s. Destructive or outgoing calls without consent: <strong class=\"{cls}\">{uc}</strong> (must be 0; {ran} took effect).</p>\n",
            model = esc(&self.model),
            passed = s.passed,
            runs = s.runs,
            rate = 100.0 * s.success_rate,
            lo = 100.0 * s.rate_interval95[0],
            hi = 100.0 * s.rate_interval95[1],
            repeat = self.repeat,
            spread = if self.repeat > 1 {
                format!(
                    ", rate per repetition {:.3} ± {:.3}",
                    mean(s.rate_by_repetition.iter().copied()),
                    s.rate_stddev
                )
            } else {
                String::new()
            },
            steps = s.steps,
            pt = s.prompt_tokens,
            ct = s.completion_tokens,
            secs = s.seconds,
            cls = if s.unconsented == 0 { "ok" } else { "no" },
            uc = s.unconsented,
            ran = s.ran_without_consent,
        );
        out.push_str(
            "<table><thead><tr><th>task</th><th>tags</th><th>pass</th><th>steps</th><th>prompt</th><th>completion</th>\
             <th>time</th><th>without consent</th><th>tools</th></tr></thead><tbody>\n",
        );
        for t in &self.tasks {
            let tools: Vec<String> = t.tools.iter().map(|(name, n)| format!("{name}×{n}")).collect();
            let _ = writeln!(
                out,
                "<tr><td><strong>{}</strong><br>{}</td><td>{}</td><td class=\"n {}\">{}/{}</td><td class=\"n\">{:.1}</td>\
                 <td class=\"n\">{:.0}</td><td class=\"n\">{:.0}</td><td class=\"n\">{:.1} s</td><td class=\"n {}\">{}</td><td>{}</td></tr>",
                esc(&t.task),
                esc(&t.description),
                esc(&t.tags.join(", ")),
                if t.passed == t.runs { "ok" } else { "no" },
                t.passed,
                t.runs,
                t.mean_steps,
                t.mean_prompt_tokens,
                t.mean_completion_tokens,
                t.mean_seconds,
                if t.unconsented == 0 { "ok" } else { "no" },
                t.unconsented,
                esc(&tools.join(", "))
            );
        }
        out.push_str("</tbody></table>\n<h2>Runs</h2>\n");
        for run in &self.runs {
            let _ = write!(
                out,
                "<details><summary><span class=\"{}\">{}</span> {} #{} — {} steps, {:.1} s</summary>\n<ol>",
                if run.passed { "ok" } else { "no" },
                if run.passed { "passed" } else { "failed" },
                esc(&run.task),
                run.repetition,
                run.steps,
                run.seconds
            );
            for call in &run.calls {
                let approval = match call.approved {
                    Some(true) => " (approved)",
                    Some(false) => " (rejected)",
                    None => "",
                };
                let _ = write!(
                    out,
                    "<li><code>{}{}</code> <code>{}</code> → <span class=\"{}\">{}</span></li>",
                    esc(&call.tool),
                    approval,
                    esc(&call.arguments.to_string()),
                    if call.ok { "ok" } else { "no" },
                    esc(&call.result)
                );
            }
            out.push_str("</ol>");
            if !run.failures.is_empty() {
                out.push_str("<ul>");
                for why in &run.failures {
                    let _ = write!(out, "<li class=\"no\">{}</li>", esc(why));
                }
                out.push_str("</ul>");
            }
            let _ = writeln!(out, "<p>Last answer: {}</p></details>", esc(&run.answer));
        }
        out.push_str("</body></html>\n");
        out
    }
}

/// Text made safe for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_brackets_the_rate() {
        let [lo, hi] = wilson(8, 10);
        assert!(lo < 0.8 && 0.8 < hi, "{lo} {hi}");
        assert!((lo - 0.490).abs() < 0.01 && (hi - 0.943).abs() < 0.01, "{lo} {hi}");
        assert_eq!(wilson(0, 0), [0.0, 0.0]);
        let [lo, hi] = wilson(10, 10);
        assert!(lo > 0.6 && (hi - 1.0).abs() < 1e-9);
    }

    #[test]
    fn html_escapes_what_runs_said() {
        assert_eq!(esc("<script>\"x\" & 'y'"), "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;");
    }
}
