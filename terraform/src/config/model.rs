//! The configuration's model: what loading is given and answers (options, errors,
//! diagnostics, resource instances, variables, locals, outputs, module calls).

use std::io;
use std::ops::Range;
use std::path::PathBuf;

use crate::functions::Value;
use crate::state::{IndexKey, Mode, State};

/// What to load besides the directory's own files.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions<'a> {
    /// `-var-file` arguments, in command-line order (relative to the root directory or
    /// absolute).
    pub var_files: Vec<PathBuf>,
    /// `-var` arguments as written on the command line, `NAME=VALUE`, in order.
    pub vars: Vec<String>,
    /// State to resolve references to resources from.
    pub state: Option<&'a State>,
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file or directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file is not valid HCL.
    #[error("{file}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A file is readable but not a valid configuration (a duplicate declaration, a
    /// malformed `modules.json` or tfvars JSON file).
    #[error("{file}:{line}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Locals or module calls that depend on each other in a circle.
    #[error("{file}:{line}: cycle: {}", names.join(" -> "))]
    Cycle {
        /// The file declaring the first member.
        file: String,
        /// Its line.
        line: usize,
        /// The members, `local.a -> local.b -> local.a`.
        names: Vec<String>,
    },
    /// A `-var` argument without `=`.
    #[error("-var \"{text}\": expected NAME=VALUE")]
    CliVar {
        /// The argument.
        text: String,
    },
}

/// Something that could not be evaluated or resolved; the load goes on without it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Diagnostic {
    /// The file.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// What it concerns: `aws_instance.web[0].tags`, `local.name`, `module.net`.
    pub subject: String,
    /// What went wrong.
    pub message: String,
}

/// One resource or data source instance of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInstance {
    /// The full address, `module.net.aws_subnet.private["a"]`.
    pub address: String,
    /// The module path (`module.app.module.dns`), or `None` in the root module.
    pub module: Option<String>,
    /// Managed resource or data source.
    pub mode: Mode,
    /// The resource type.
    pub resource_type: String,
    /// The resource name.
    pub name: String,
    /// The `count` or `for_each` key.
    pub index: Option<IndexKey>,
    /// The evaluated arguments and nested blocks (lists of objects), an object; meta-arguments
    /// (`count`, `for_each`, `provider`, `depends_on`, `lifecycle`, provisioners) left out.
    pub attributes: Value,
    /// The file declaring the block.
    pub file: String,
    /// The span of the block.
    pub span: Range<usize>,
}

/// Where a variable's value came from.
#[derive(Debug, Clone, PartialEq)]
pub enum VariableSource {
    /// The declaration's `default`.
    Default {
        /// The file.
        file: String,
        /// The default's expression.
        span: Range<usize>,
    },
    /// `terraform.tfvars`, `terraform.tfvars.json` or an `*.auto.tfvars` file.
    Tfvars {
        /// The file.
        file: String,
        /// The line of the assignment, from 1.
        line: usize,
        /// The value's expression.
        span: Range<usize>,
    },
    /// A `-var-file`.
    VarFile {
        /// The file, as given (relative to the root when inside it).
        file: String,
        /// The line of the assignment, from 1.
        line: usize,
        /// The value's expression.
        span: Range<usize>,
    },
    /// A `-var` argument.
    Cli,
    /// A child module's variable set by the module call's argument.
    ModuleArgument {
        /// The file of the module call.
        file: String,
        /// The argument's expression.
        span: Range<usize>,
    },
    /// No value anywhere (Terraform would ask for one); the value is unknown.
    Unset,
}

impl VariableSource {
    /// The file the value is written in: the declaration's, a variable file, or the module
    /// call's; none for a `-var` argument or no value.
    pub fn file(&self) -> Option<&str> {
        match self {
            VariableSource::Default { file, .. }
            | VariableSource::Tfvars { file, .. }
            | VariableSource::VarFile { file, .. }
            | VariableSource::ModuleArgument { file, .. } => Some(file),
            VariableSource::Cli | VariableSource::Unset => None,
        }
    }
}

/// A variable of one module instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// The module path, or `None` in the root module.
    pub module: Option<String>,
    /// The variable's name.
    pub name: String,
    /// The value after type conversion.
    pub value: Value,
    /// Where the value came from.
    pub source: VariableSource,
    /// How many resource instance arguments depend on it, directly or through locals, module
    /// arguments, `count`, `for_each` and `dynamic` blocks; see [`Project::variables`].
    pub uses: usize,
}

/// A local value of one module instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Local {
    /// The module path, or `None` in the root module.
    pub module: Option<String>,
    /// The local's name.
    pub name: String,
    /// The evaluated value.
    pub value: Value,
    /// The file declaring it.
    pub file: String,
    /// The span of its expression.
    pub span: Range<usize>,
    /// How many resource instance arguments depend on it (as for [`Variable::uses`]).
    pub uses: usize,
}

/// An output value of one module instance.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputValue {
    /// The module path, or `None` in the root module.
    pub module: Option<String>,
    /// The output's name.
    pub name: String,
    /// The evaluated value.
    pub value: Value,
}

/// A block that refers to another (see [`Project::referring_to`](super::Project::referring_to)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Referrer {
    /// The block: `aws_x.y`, `data.aws_x.y`, `module.m`, `output.o` or `local.l`.
    pub block: String,
    /// The file it is written in, relative to the root.
    pub file: String,
}

/// The `module` block behind a module instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleCall {
    /// The file holding the block.
    pub file: String,
    /// The block's label.
    pub name: String,
    /// The module instance the block is written in (`None`: the root).
    pub parent: Option<String>,
    /// Whether the block has `count` or `for_each`.
    pub repeated: bool,
    /// The block's byte range in its file.
    pub span: std::ops::Range<usize>,
}

/// The line (from 1) of byte offset `at` in `text`.
pub(super) fn line_of(text: &str, at: usize) -> usize {
    text.get(..at)
        .map_or(1, |head| head.matches('\n').count() + 1)
}
