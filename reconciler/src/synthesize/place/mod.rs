//! Where a value is written and how a deleted instance leaves the code: `site` finds the
//! place of an attribute's value from its provenance, `removal` the edit that removes one
//! instance alone, and `write` turns a place into its edit-tool call.

mod removal;
mod site;
mod write;

pub use removal::{Removal, removal_of};
pub use site::{
    CallArgument, NewInput, Place, attribute_steps, for_each_entry, new_input, place_of,
    resource_block, split_blocks,
};
pub(super) use site::{in_one_module, shared_by_instances};
pub use write::{Edit, Written, entry_path, set_attribute, thread_input};
