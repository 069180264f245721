//! Outgoing webhooks by the Standard Webhooks convention (<https://www.standardwebhooks.com>):
//! signing secrets (`whsec_...`), the signature headers of a message, and one delivery attempt to
//! a receiver on a public address, bounded in time and in what is read back.
//!
//! Which messages exist, when each is tried again and what the receiver answered is kept by the
//! caller (the service's database); this crate only signs and sends.

mod secret;
mod sender;

pub use secret::{signature_header, InvalidSecret, SigningSecret};
pub use sender::{Attempt, Message, Sender, SenderSettings, SetupError};
