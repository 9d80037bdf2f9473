//! The agent for the long tail: calls no rule explains, handed to a language model that must
//! stay bounded, private and validated. So far: the model client ([`client`]) and the
//! redaction of secrets before anything leaves the machine ([`redact`]).

pub mod client;
pub mod redact;
