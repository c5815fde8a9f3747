//! The package revision lifecycle and its single transition function (spec §8.2).

use std::fmt;
use std::str::FromStr;

/// Lifecycle of a package revision.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Lifecycle {
    /// Editable; revision 0.
    Draft,
    /// Read-only, awaiting approval; revision 0.
    Proposed,
    /// Immutable; revision ≥1 or -1.
    Published,
    /// Still published, marked for deletion.
    DeletionProposed,
}

impl Lifecycle {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Lifecycle::Draft => "Draft",
            Lifecycle::Proposed => "Proposed",
            Lifecycle::Published => "Published",
            Lifecycle::DeletionProposed => "DeletionProposed",
        }
    }
    /// Published or DeletionProposed.
    pub fn is_published(self) -> bool {
        matches!(self, Lifecycle::Published | Lifecycle::DeletionProposed)
    }
}

impl fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Lifecycle {
    type Err = TransitionError;
    /// Empty means Draft, as on the wire.
    fn from_str(s: &str) -> Result<Self, TransitionError> {
        match s {
            "" | "Draft" => Ok(Lifecycle::Draft),
            "Proposed" => Ok(Lifecycle::Proposed),
            "Published" => Ok(Lifecycle::Published),
            "DeletionProposed" => Ok(Lifecycle::DeletionProposed),
            other => Err(TransitionError::UnknownValue(other.to_owned())),
        }
    }
}

/// Which endpoint asks for the change: they allow different transitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `PUT/PATCH packagerevisions/<name>`.
    Update,
    /// `PUT packagerevisions/<name>/approval`.
    Approval,
}

/// What an allowed transition means for storage (spec §8.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// Same lifecycle: a content/metadata update.
    Unchanged,
    /// Draft → Proposed.
    Propose,
    /// Proposed → Draft.
    Reject,
    /// Proposed → Published: assign a revision number, merge, tag.
    Approve,
    /// Published → DeletionProposed.
    ProposeDelete,
    /// DeletionProposed → Published.
    UndoProposeDelete,
}

/// A transition that is not allowed, with Porch's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    /// Not a lifecycle value.
    #[error(
        "spec.lifecycle: Unsupported value: {0:?}: value can be only updated to Draft,Proposed,Published,DeletionProposed"
    )]
    UnknownValue(String),
    /// Draft/Proposed may only go to Draft/Proposed through the main resource.
    #[error("spec.lifecycle: Invalid value: {0:?}: value can be only updated to Draft,Proposed")]
    OnlyDraftOrProposed(Lifecycle),
    /// Published revisions may only toggle deletion proposal.
    #[error(
        "spec.lifecycle: Invalid value: {0:?}: value can be only updated to Published,DeletionProposed"
    )]
    OnlyPublishedOrDeletionProposed(Lifecycle),
    /// Approval of a Draft.
    #[error(
        "cannot approve package with Draft lifecycle value; only Proposed packages can be approved"
    )]
    ApproveDraft,
    /// Approval endpoint from Published to something else than DeletionProposed.
    #[error("package with Published lifecycle value can only be updated to 'ProposeDeletion'")]
    PublishedOnlyToDeletionProposed,
    /// Approval endpoint with another target.
    #[error("value for approval can be only one of Draft,Published")]
    ApprovalTarget,
}

impl TransitionError {
    /// Always [`crate::ErrorKind::Invalid`] (HTTP 422).
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::Invalid
    }
}

/// The one transition function: is `from → to` allowed through `endpoint`, and what does it mean?
pub fn transition(
    from: Lifecycle,
    to: Lifecycle,
    endpoint: Endpoint,
) -> Result<Transition, TransitionError> {
    use Lifecycle::*;
    if endpoint == Endpoint::Approval {
        return match (from, to) {
            (Draft, _) => Err(TransitionError::ApproveDraft),
            (Proposed, Draft) => Ok(Transition::Reject),
            (Proposed, Published) => Ok(Transition::Approve),
            (Published, DeletionProposed) => Ok(Transition::ProposeDelete),
            (Published, _) => Err(TransitionError::PublishedOnlyToDeletionProposed),
            (DeletionProposed, Published) => Ok(Transition::UndoProposeDelete),
            _ => Err(TransitionError::ApprovalTarget),
        };
    }
    match (from, to) {
        (a, b) if a == b => Ok(Transition::Unchanged),
        (Draft, Proposed) => Ok(Transition::Propose),
        (Proposed, Draft) => Ok(Transition::Reject),
        (Draft | Proposed, _) => Err(TransitionError::OnlyDraftOrProposed(from)),
        (Published, DeletionProposed) => Ok(Transition::ProposeDelete),
        (DeletionProposed, Published) => Ok(Transition::UndoProposeDelete),
        (Published | DeletionProposed, _) => {
            Err(TransitionError::OnlyPublishedOrDeletionProposed(from))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Lifecycle::*;

    const ALL: [Lifecycle; 4] = [Draft, Proposed, Published, DeletionProposed];

    #[test]
    fn update_endpoint_table() {
        // Spec §8.2, main resource table (rows = from, columns = to).
        let allowed = [
            [true, true, false, false],
            [true, true, false, false],
            [false, false, true, true],
            [false, false, true, true],
        ];
        for (i, from) in ALL.iter().enumerate() {
            for (j, to) in ALL.iter().enumerate() {
                assert_eq!(
                    transition(*from, *to, Endpoint::Update).is_ok(),
                    allowed[i][j],
                    "{from}->{to}"
                );
            }
        }
    }

    #[test]
    fn approval_endpoint() {
        assert_eq!(
            transition(Proposed, Published, Endpoint::Approval),
            Ok(Transition::Approve)
        );
        assert_eq!(
            transition(Proposed, Draft, Endpoint::Approval),
            Ok(Transition::Reject)
        );
        assert_eq!(
            transition(Draft, Published, Endpoint::Approval),
            Err(TransitionError::ApproveDraft)
        );
        assert_eq!(
            transition(Published, DeletionProposed, Endpoint::Approval),
            Ok(Transition::ProposeDelete)
        );
        assert_eq!(
            transition(Published, Draft, Endpoint::Approval),
            Err(TransitionError::PublishedOnlyToDeletionProposed)
        );
        assert_eq!(
            transition(DeletionProposed, Published, Endpoint::Approval),
            Ok(Transition::UndoProposeDelete)
        );
        assert_eq!(
            transition(Proposed, DeletionProposed, Endpoint::Approval),
            Err(TransitionError::ApprovalTarget)
        );
        assert_eq!(
            transition(Published, Published, Endpoint::Approval),
            Err(TransitionError::PublishedOnlyToDeletionProposed)
        );
    }

    #[test]
    fn parse_values() {
        assert_eq!("".parse::<Lifecycle>().expect("test value"), Draft);
        assert!("Final".parse::<Lifecycle>().is_err());
    }
}
