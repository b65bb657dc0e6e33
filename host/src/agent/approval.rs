//! A call refused for a grant the user could give: who is asked (an
//! [`Approver`]: the chat's prompt, an MCP client's elicitation), what
//! they answer ([`Answer`]), and the grants given for the session
//! ([`SessionGrants`]), which every later call runs with and the system
//! prompt names. `toolhost run` has no approver: it asks nobody, and the
//! model reads the refusal, which names the flag.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, Answer, Events};
use super::{ToolResult, ToolRunner};
use crate::sandbox::{Ask, CallReport, Permit, ProgressSink};

/// A future an approver answers with.
pub type Answering<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

/// Who is asked when a call is refused for a grant the user could give.
pub trait Approver: Send + Sync {
    /// Asks about `permit` (for a lift, `why` what it opens is
    /// protected); a front end that cannot ask answers [`Answer::Deny`].
    /// Dropped unanswered when the run is cancelled.
    fn ask<'a>(&'a self, permit: &'a Permit, why: Option<&'a str>) -> Answering<'a>;
}

/// The grants given in one session, shared by the loop (each call runs
/// with them) and its front end (`/allow`, `/grants`, the session file).
#[derive(Clone)]
pub struct SessionGrants {
    workspace: PathBuf,
    given: Arc<Mutex<Vec<Permit>>>,
    /// Grants allowed once for a call that had started and was not run
    /// again: its tool's next call takes them.
    next_call: Arc<Mutex<Vec<Permit>>>,
}

impl SessionGrants {
    /// None yet, for a session in `workspace` (what grants are shown
    /// relative to).
    pub fn new(workspace: &Path) -> Self {
        SessionGrants {
            workspace: workspace.to_path_buf(),
            given: Arc::default(),
            next_call: Arc::default(),
        }
    }

    /// The workspace grants are shown relative to.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Adds `permit`; false when the session already holds it.
    pub fn add(&self, permit: Permit) -> bool {
        let mut given = self.given.lock().unwrap_or_else(PoisonError::into_inner);
        if given.contains(&permit) {
            return false;
        }
        given.push(permit);
        true
    }

    /// Adds the grants a resumed session recorded that `check` (the
    /// sandbox, as the same flag would be checked now) still gives exactly
    /// as recorded; a note for each, applied or not: the user sees every
    /// grant a resume gives.
    pub fn restore(
        &self,
        recorded: Vec<Permit>,
        check: impl Fn(&Permit) -> Result<Vec<Permit>, String>,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for permit in recorded {
            let what = format!(
                "`{}` may {} ({})",
                permit.tool,
                permit.what(&self.workspace),
                permit.flag(&self.workspace)
            );
            match check(&permit) {
                Ok(again) if again.contains(&permit) => {
                    notes.push(format!(
                        "a grant of the resumed session applies again: {what}"
                    ));
                    self.add(permit);
                }
                Ok(_) => notes.push(format!(
                    "a grant of the resumed session no longer applies: {what}"
                )),
                Err(why) => notes.push(format!(
                    "a grant of the resumed session no longer applies: {what}: {why}"
                )),
            }
        }
        notes
    }

    /// Forgets every grant (a chat's `/clear` starts a new session).
    pub fn clear(&self) {
        self.given
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Holds `permit` for its tool's next call only.
    fn give_next_call(&self, permit: Permit) {
        self.next_call
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(permit);
    }

    /// The grants allowed once for `tool`'s next call, taken.
    fn take_next_call(&self, tool: &str) -> Vec<Permit> {
        let mut next = self
            .next_call
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (mine, others) = next.drain(..).partition(|permit| permit.tool == tool);
        *next = others;
        mine
    }

    /// What a call runs with now.
    pub fn snapshot(&self) -> Arc<[Permit]> {
        self.given
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_slice()
            .into()
    }

    /// The grants as the system prompt's last lines, after `system`: the
    /// model reads what it may reach now. `system` itself when none.
    pub fn system_prompt<'a>(&self, system: &'a str) -> std::borrow::Cow<'a, str> {
        let given = self.snapshot();
        if given.is_empty() {
            return system.into();
        }
        let mut text = system.to_string();
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("The user granted in this session:\n");
        for permit in given.iter() {
            // A directory's name comes from the workspace: one line, its
            // controls escaped, so no name writes system text.
            text.push_str(&format!(
                "- `{}` may {}\n",
                permit.tool,
                crate::terminal::one_line(&permit.what(&self.workspace))
            ));
        }
        text.into()
    }
}

/// What a loop asks with: the session's grants, and who to ask (none: the
/// refusal stands).
#[derive(Clone)]
pub struct Granting {
    pub grants: SessionGrants,
    pub approver: Option<Arc<dyn Approver>>,
}

impl Granting {
    /// Grants for a session in `workspace`, no one asked.
    pub fn none(workspace: &Path) -> Self {
        Granting {
            grants: SessionGrants::new(workspace),
            approver: None,
        }
    }
}

/// How many grants one call may ask for, one after another (a directory,
/// then a protected path in it): past it the model reads the refusal.
const ASKS_PER_CALL: usize = 3;

/// One call of a run with a session's grants: run, and while it is
/// refused for a grant the user could give, ask, and run it again as
/// answered.
pub(super) struct Asking<'a> {
    pub granting: &'a Granting,
    pub events: &'a Events,
    pub call_id: &'a str,
}

impl Asking<'_> {
    /// The call's result: the last run's, or the refusal when the user
    /// said no (or nobody could be asked, or the run was cancelled).
    pub(super) async fn call<T: ToolRunner>(
        &self,
        runner: &T,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> ToolResult {
        let call_id = self.call_id;
        run_asking(
            (self.granting, name),
            |permits| runner.call(name, arguments, cancel, progress.clone(), permits),
            |ask: &Ask, answer| {
                let (call_id, permit) = (call_id.to_string(), ask.permit.clone());
                self.events.emit(match answer {
                    None => AgentEvent::GrantAsked {
                        call_id,
                        permit,
                        why: ask.why.clone(),
                    },
                    Some(answer) => AgentEvent::GrantAnswered {
                        call_id,
                        permit,
                        answer,
                    },
                });
            },
            cancel,
        )
        .await
    }
}

/// A call's result as asking reads it: the grant it asks for, and a line
/// added for the model.
pub trait AskedFor {
    /// The grant it asks for, taken.
    fn take_ask(&mut self) -> Option<Ask>;
    /// Adds `note` after what the model reads.
    fn add_note(&mut self, note: String);
}

impl AskedFor for ToolResult {
    fn take_ask(&mut self) -> Option<Ask> {
        self.ask.take()
    }

    fn add_note(&mut self, note: String) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str(&note);
    }
}

impl AskedFor for CallReport {
    fn take_ask(&mut self) -> Option<Ask> {
        self.ask.take()
    }

    fn add_note(&mut self, note: String) {
        self.notes.push(note);
    }
}

/// Runs a call of `tool` with the session's grants (`run`, given the
/// grants a run carries); while its result asks for a grant and someone
/// can be asked, asks, tells `told` the question (`None`) and the answer,
/// and acts on it: once, for the session (kept in `granting`), or not (the
/// refusal stands). A call refused before any of its code ran runs again
/// with the grant; one that had started is not run again (its work would
/// be done twice): the grant is for its next call, or the session, and
/// the model reads that it may call it again. At most [`ASKS_PER_CALL`]
/// questions; a cancelled call's question is answered no. The loop's calls
/// and an MCP server's go through here alike.
pub async fn run_asking<R: AskedFor, Fut>(
    (granting, tool): (&Granting, &str),
    mut run: impl FnMut(Arc<[Permit]>) -> Fut,
    mut told: impl FnMut(&Ask, Option<Answer>),
    cancel: &CancellationToken,
) -> R
where
    Fut: Future<Output = R>,
{
    let grants = &granting.grants;
    let mut once: Vec<Permit> = grants.take_next_call(tool);
    let with = |once: &[Permit]| -> Arc<[Permit]> {
        grants.snapshot().iter().chain(once).cloned().collect()
    };
    let mut result = run(with(&once)).await;
    for _ in 0..ASKS_PER_CALL {
        let (Some(approver), Some(ask)) = (&granting.approver, result.take_ask()) else {
            break;
        };
        told(&ask, None);
        let answer = tokio::select! {
            answer = approver.ask(&ask.permit, ask.why.as_deref()) => answer,
            () = cancel.cancelled() => Answer::Deny,
        };
        told(&ask, Some(answer));
        let Ask { permit, rerun, .. } = ask;
        if !rerun && answer != Answer::Deny {
            result.add_note(not_run_again(&permit, answer, &grants.workspace));
        }
        match answer {
            Answer::Deny => break,
            Answer::Once if !rerun => {
                grants.give_next_call(permit);
                break;
            }
            Answer::Once => once.push(permit),
            Answer::Session => {
                grants.add(permit);
                if !rerun {
                    break;
                }
            }
        }
        result = run(with(&once)).await;
    }
    result
}

/// What the model reads after a call that had started when the user gave
/// `permit`: it was not run again, and may be.
fn not_run_again(permit: &Permit, answer: Answer, workspace: &Path) -> String {
    let scope = match answer {
        Answer::Session => "for this session",
        _ => "for its next call",
    };
    format!(
        "--- toolhost ---\nThe user allowed `{}` to {} {scope}. This call was not run again, \
         since it had started and running it twice would do its work twice: call it again.",
        permit.tool,
        permit.what(workspace)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::PermitKind;

    fn permit(tool: &str, kind: PermitKind, target: &str) -> Permit {
        Permit {
            tool: tool.into(),
            kind,
            target: target.into(),
        }
    }

    /// Refuses each call until it runs with a grant of `needs`, asking
    /// for the next one it lacks; refused before it ran (`rerun`) or not.
    /// Counts its runs.
    struct Needs(Vec<Permit>, bool, std::sync::atomic::AtomicUsize);

    impl ToolRunner for Needs {
        fn specs(&self) -> Vec<crate::agent::ToolSpecForModel> {
            Vec::new()
        }

        async fn call(
            &self,
            _name: &str,
            _arguments: &Value,
            _cancel: &CancellationToken,
            _progress: Option<ProgressSink>,
            permits: Arc<[Permit]>,
        ) -> ToolResult {
            self.2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            match self.0.iter().find(|needed| !permits.contains(needed)) {
                Some(missing) => ToolResult {
                    ask: Some(Ask {
                        permit: missing.clone(),
                        rerun: self.1,
                        why: None,
                    }),
                    ..ToolResult::new("refused", true)
                },
                None => ToolResult::new("ran", false),
            }
        }
    }

    /// Answers from a list, and counts the questions.
    struct Says(Mutex<Vec<Answer>>);

    impl Approver for Says {
        fn ask<'a>(&'a self, _permit: &'a Permit, _why: Option<&'a str>) -> Answering<'a> {
            let answer = self.0.lock().expect("answers").remove(0);
            Box::pin(async move { answer })
        }
    }

    async fn call(needs: &[Permit], answers: &[Answer], grants: &SessionGrants) -> ToolResult {
        call_runs(needs, true, answers, grants).await.0
    }

    /// The result, and how many times the call ran.
    async fn call_runs(
        needs: &[Permit],
        rerun: bool,
        answers: &[Answer],
        grants: &SessionGrants,
    ) -> (ToolResult, usize) {
        let granting = Granting {
            grants: grants.clone(),
            approver: Some(Arc::new(Says(Mutex::new(answers.to_vec())))),
        };
        let events = Events::default();
        let asking = Asking {
            granting: &granting,
            events: &events,
            call_id: "c1",
        };
        let runner = Needs(needs.to_vec(), rerun, Default::default());
        let cancel = CancellationToken::new();
        let result = asking.call(&runner, "t", &Value::Null, &cancel, None).await;
        (result, runner.2.into_inner())
    }

    #[tokio::test]
    async fn a_call_that_had_started_is_not_run_again_and_its_next_call_has_the_grant() {
        let gcc = permit("t", PermitKind::Exec, "gcc");
        let grants = SessionGrants::new(Path::new("/ws"));
        let (first, runs) =
            call_runs(std::slice::from_ref(&gcc), false, &[Answer::Once], &grants).await;
        assert_eq!(runs, 1);
        assert_eq!(
            first.text,
            "refused\n--- toolhost ---\nThe user allowed `t` to run the program `gcc` natively for \
             its next call. This call was not run again, since it had started and running it \
             twice would do its work twice: call it again."
        );
        assert!(grants.snapshot().is_empty());
        // The next call runs with it, asking nothing (no answers left).
        let (next, runs) = call_runs(std::slice::from_ref(&gcc), false, &[], &grants).await;
        assert_eq!((next.text.as_str(), runs), ("ran", 1));
        // Only once.
        let (after, _) =
            call_runs(std::slice::from_ref(&gcc), false, &[Answer::Deny], &grants).await;
        assert_eq!(after.text, "refused");
    }

    #[tokio::test]
    async fn each_answer_runs_the_call_again_keeps_the_grant_or_leaves_the_refusal() {
        let src = permit("t", PermitKind::Write, "/ws/src");
        let git = permit("t", PermitKind::Lift, "/ws/.git");
        let grants = SessionGrants::new(Path::new("/ws"));
        // Once: ran, and nothing kept.
        let once = call(std::slice::from_ref(&src), &[Answer::Once], &grants).await;
        assert_eq!((once.text.as_str(), once.is_error), ("ran", false));
        assert!(grants.snapshot().is_empty());
        // No: the refusal.
        let no = call(std::slice::from_ref(&src), &[Answer::Deny], &grants).await;
        assert_eq!((no.text.as_str(), no.is_error), ("refused", true));
        // Two grants one after the other, the first for the session.
        let both = [src.clone(), git.clone()];
        let ran = call(&both, &[Answer::Session, Answer::Once], &grants).await;
        assert_eq!(ran.text, "ran");
        assert_eq!(&*grants.snapshot(), std::slice::from_ref(&src));
        // The session's grant is not asked for again.
        let again = call(&both, &[Answer::Once], &grants).await;
        assert_eq!(again.text, "ran");
    }

    #[tokio::test]
    async fn a_call_asks_at_most_a_few_times() {
        let grants = SessionGrants::new(Path::new("/ws"));
        let needs: Vec<Permit> = (0..ASKS_PER_CALL + 2)
            .map(|n| permit("t", PermitKind::Read, &format!("/ws/d{n}")))
            .collect();
        let answers = vec![Answer::Once; ASKS_PER_CALL];
        let result = call(&needs, &answers, &grants).await;
        assert_eq!(result.text, "refused");
    }

    #[test]
    fn the_system_prompt_names_each_grant_once() {
        let grants = SessionGrants::new(Path::new("/ws"));
        assert_eq!(grants.system_prompt("Be brief."), "Be brief.");
        assert!(grants.add(permit("bash", PermitKind::Write, "/ws/src")));
        assert!(!grants.add(permit("bash", PermitKind::Write, "/ws/src")));
        assert!(grants.add(permit("fetch", PermitKind::Net, "https://docs.rs")));
        assert_eq!(
            grants.system_prompt("Be brief."),
            "Be brief.\n\nThe user granted in this session:\n- `bash` may write in `src`\n- \
             `fetch` may reach `https://docs.rs`\n"
        );
        grants.clear();
        assert!(grants.snapshot().is_empty());
    }
}
