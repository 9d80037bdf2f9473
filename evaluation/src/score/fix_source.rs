//! Where a scenario's fix came from: the shipped rules, a rule learned earlier in the run (a
//! knowledge store the samples share), the drift learner, or the model. retrace's run traces
//! each of its fixes to one ([`crate::contender`]); another system's fixes have none.

use serde::{Deserialize, Serialize};

/// Who knew the rule a fix used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixSource {
    /// A rule shipped with retrace (less those the run withheld).
    Shipped,
    /// A rule an earlier scenario of the run learned into the shared knowledge store.
    Earlier,
    /// A rule the drift learner found in this run, without the model.
    Learner,
    /// A rule the model proposed in this run.
    Model,
}

impl FixSource {
    /// Every source, in the order reports list them.
    pub const ALL: [FixSource; 4] = [
        FixSource::Shipped,
        FixSource::Earlier,
        FixSource::Learner,
        FixSource::Model,
    ];

    /// The source in words.
    pub fn words(self) -> &'static str {
        match self {
            FixSource::Shipped => "the shipped rules",
            FixSource::Earlier => "rules learned earlier in the run",
            FixSource::Learner => "the drift learner",
            FixSource::Model => "the model",
        }
    }
}
