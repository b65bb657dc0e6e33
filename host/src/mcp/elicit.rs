//! Asking an MCP client's user for a grant a refused call needs, through
//! `elicitation/create` (MCP 2025-06-18): a form with one choice (allow
//! once, for this session, no), for a client that declared the
//! capability. A client without it, or on the 2026-07-28 protocol (which
//! has no server-to-client requests), is asked nothing: it reads the
//! refusal as before.

use std::path::PathBuf;

use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema,
    PrimitiveSchemaDefinition,
};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};

use crate::agent::{Answer, Answering, Approver};
use crate::sandbox::Permit;

/// How long the user has to answer: past it, no.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(600);

/// The choices, as the form's values and the answers they mean.
const CHOICES: [(&str, &str, Answer); 3] = [
    ("once", "Allow once", Answer::Once),
    ("session", "Allow for this session", Answer::Session),
    ("deny", "Deny", Answer::Deny),
];

/// Asks one client's user.
pub(super) struct Elicitation {
    peer: Peer<RoleServer>,
    workspace: PathBuf,
}

impl Elicitation {
    /// An approver for `peer`, when it can be asked: it declared form
    /// elicitation at `initialize`.
    pub(super) fn of(peer: &Peer<RoleServer>, workspace: PathBuf) -> Option<Elicitation> {
        peer.supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
            .then(|| Elicitation {
                peer: peer.clone(),
                workspace,
            })
    }

    fn params(&self, permit: &Permit, why: Option<&str>) -> Option<ElicitRequestParams> {
        let values = CHOICES
            .iter()
            .map(|(value, ..)| value.to_string())
            .collect();
        let titles = CHOICES
            .iter()
            .map(|(_, title, _)| title.to_string())
            .collect();
        let choice = EnumSchema::builder(values)
            .enum_titles(titles)
            .ok()?
            .with_default("once")
            .ok()?
            .title("Answer")
            .build();
        let schema = ElicitationSchema::builder()
            .required_property("answer", PrimitiveSchemaDefinition::Enum(choice))
            .build()
            .ok()?;
        Some(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message(permit, why, &self.workspace),
            requested_schema: schema,
        })
    }
}

/// What the user reads: the tool, what it asks (for a lift, why what it
/// opens is protected), and the flag that gives the same from the start.
pub(super) fn message(permit: &Permit, why: Option<&str>, workspace: &std::path::Path) -> String {
    let why = why
        .map(|why| format!(" It is protected because {why}."))
        .unwrap_or_default();
    format!(
        "toolhost: `{}` asks to {}, which its grants do not allow ({} grants it from the \
         start).{why} Allow it?",
        permit.tool,
        permit.what(workspace),
        permit.flag(workspace)
    )
}

impl Approver for Elicitation {
    fn ask<'a>(&'a self, permit: &'a Permit, why: Option<&'a str>) -> Answering<'a> {
        Box::pin(async move {
            let Some(params) = self.params(permit, why) else {
                return Answer::Deny;
            };
            let asked = self
                .peer
                .create_elicitation_with_timeout(params, Some(ANSWER_WITHIN))
                .await;
            let Ok(result) = asked else {
                return Answer::Deny;
            };
            if result.action != ElicitationAction::Accept {
                return Answer::Deny;
            }
            let chosen = result
                .content
                .as_ref()
                .and_then(|content| content.get("answer"))
                .and_then(|answer| answer.as_str());
            CHOICES
                .iter()
                .find(|(value, ..)| Some(*value) == chosen)
                .map_or(Answer::Deny, |(.., answer)| *answer)
        })
    }
}
