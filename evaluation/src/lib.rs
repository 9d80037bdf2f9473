//! retrace evaluation: a simulated AWS account ([`sim`]) that executes write calls in the
//! shapes CloudTrail records them, changes a Terraform-shaped model of the account's resources
//! and writes the CloudTrail record each call would leave.

#![forbid(unsafe_code)]

pub mod contender;
pub mod dataset;
pub mod evaluate;
pub mod family;
pub mod files;
pub mod generate;
pub mod scenario;
pub mod score;
pub mod sim;
