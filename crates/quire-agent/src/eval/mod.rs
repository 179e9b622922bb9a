//! `quire eval`: how well a model does the job, measured on a suite of
//! tasks. A task ([`Task`], one TOML file) says what the site starts with,
//! what the person says and answers to approvals, and what must be true at
//! the end (records, fields, archive, notes, what the delivery API shows)
//! and on the way (tools that must or must not be called, at most so many
//! steps). [`run_task`] drives the agent through the application's own use
//! cases ([`UseCases`]: the chat, the approvals, delivery), so consent,
//! approvals and undo are the real ones; [`Report`] gathers the runs per
//! task and in total (success and its spread over repetitions, steps,
//! tokens, time, tools, and every destructive or outgoing call attempted
//! without consent, which must be none).
//!
//! Nothing here knows the command line or the data directory: the binary
//! makes a fresh site per run and implements [`UseCases`] over quire-app.

mod check;
mod report;
mod run;
mod task;
mod web;

pub use check::{Check, Delivery, Path};
pub use report::{Report, TaskSummary, Totals};
pub use run::{Call, CheckResult, TaskRun, Unconsented, UseCases, run_task};
pub use task::{
    ApprovalAnswer, Setup, Start, Task, TaskError, Trajectory, Turn, Verdict, WebPage, load_suite, task_files,
};
pub use web::Web;
