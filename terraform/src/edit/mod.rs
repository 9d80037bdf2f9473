//! Format-preserving HCL edit tools, each callable by name with JSON input (for a language
//! model) or directly.
//!
//! How edits keep formatting: files are parsed with `hcl::edit` only to find things — blocks,
//! attributes, object items and their byte spans. An edit then replaces exactly one span of the
//! original text with newly written text ([`render`]), so every byte outside that span stays as it
//! was, comments included. New text uses the file's line ends (CRLF files stay CRLF) and two
//! spaces of indent per level; afterwards [`align`] re-aligns the `=` signs and trailing comments
//! of only the runs of lines the edit touched, by the same rules `terraform fmt` uses. Each result
//! is parsed again before it is returned. Edits that would need a guess — a block that is missing
//! or matched twice, tags that are an expression rather than a literal object — are refused with
//! an [`EditError`] naming file, block and path.

mod align;
mod error;
mod filter;
mod instance;
mod locate;
mod ops;
mod outline;
mod render;
mod tags;
mod text;
mod tools;
mod value;
mod workspace;

pub use error::{EditError, Files};
pub use instance::{Instance, selector_text};
pub use locate::{Step, Target};
pub use tools::{
    AddBlock, AddCollectionEntry, AddImport, AddResource, Container, EntryStep, FilterForEach,
    IgnoreChanges, ImportResource, NewBlock, RemoveAttribute, RemoveBlock, RemoveCollectionEntry,
    RemoveResource, ReplaceBlock, SetAttribute, SetCollectionEntry, SetModuleArgument, SetTags,
    SetTfvar, SetVariableDefault, SwitchOff, TagMode, ThreadModuleInput, Tool, ToolCall,
    ToolResult, ToolSpec, UpdateBlock, run_tool, tool, tool_names, tools,
};
pub use value::{Ordered, Value};
pub use workspace::Workspace;
