//! Where a value is written and how a deleted instance leaves the code: `model` names the
//! places, `instances` says how an instance's block is shared, `input` makes a new module
//! input for one instance of a call, `entry` places a value in a `for_each` collection's
//! entry, `site` finds the place of an attribute's value from its provenance, `removal` the
//! edit that removes one instance alone, `addition` the list a created one joins, and `write` turns a place into its edit-tool call.

mod addition;
mod entry;
mod input;
mod instances;
mod model;
mod removal;
mod site;
mod write;

pub use addition::{Joining, joining};
pub use entry::for_each_entry;
pub use input::new_input;
pub use instances::resource_block;
pub(super) use instances::{in_one_module, same_block, shared_by_instances};
pub use model::{CallArgument, NewInput, Place};
pub use removal::{Removal, removal_of};
pub use site::{attribute_steps, place_of, split_blocks};
pub use write::{Edit, Written, entry_path, set_attribute, thread_input};
