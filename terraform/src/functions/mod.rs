//! Evaluation of Terraform expressions with Terraform's built-in functions.
//!
//! [`evaluate`] walks an [`hcl::Expression`] itself instead of handing it to `hcl::eval`, for
//! three reasons that `hcl::eval` cannot serve: its functions are plain `fn` pointers that see
//! only their already-evaluated arguments (so `file` could not know `path.module`), it evaluates
//! every argument before the call (so `try` and `can` could not catch an argument's error), and
//! its values have no "known after apply".
//!
//! - **Unknown values.** [`Value::Unknown`] marks a value known only after apply. A reference to
//!   a resource (`aws_instance.web.id`, `data.aws_ami.x.id`) that the scope lacks, or to an
//!   attribute or instance that the resource's state lacks, is unknown rather than an error, and
//!   so are the functions whose value differs on every run (`timestamp()`, `plantimestamp()`,
//!   `uuid()`, `bcrypt()`). Unknowns spread: an operator, conditional, template or
//!   traversal over an unknown is unknown, and a function given an argument containing an
//!   unknown returns unknown, except the structural functions (`length`, `concat`, `merge`,
//!   `element`, ...) that only look at the shape of their arguments: they return unknown only
//!   when an argument is wholly unknown, so `length([aws_instance.web.id])` is 1. Names that
//!   are not `var`, `local`, `path`, `data`, a resource type (a name with `_`) or a binding
//!   (`each`, `count`, loop and template variables) are errors, so typos are not hidden.
//! - **`try` and `can`** are handled by the evaluator before the function table is consulted:
//!   each argument is evaluated in turn and its error caught, so later arguments are never
//!   evaluated once one succeeds. An argument that evaluates to unknown makes `try` return it
//!   and `can` return unknown, since whether it fails is not known yet. Unlike Terraform, every
//!   error is caught, including references to undeclared names.
//! - **`issensitive` and `templatestring`** need the argument's expression, not only its value:
//!   this evaluator has no sensitive marks, so `issensitive` answers from the argument's form
//!   (see [`EVALUATOR_FUNCTIONS`]), and `templatestring` takes its template only from a direct
//!   reference, as Terraform requires. `core::NAME` calls the built-in `NAME`, and
//!   `provider::terraform::NAME` a function of Terraform's built-in provider, which the table
//!   holds by that namespaced name (Terraform also wants the module to declare the provider).

mod args;
mod collection;
mod conversion;
mod convert;
mod crypto;
mod datetime;
mod encoding;
mod eval;
mod filesystem;
mod network;
mod numeric;
mod provider;
mod string;
mod value;
mod yaml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use args::Call;
pub use convert::convert;
pub use eval::evaluate;
pub use value::Value;

/// The built-in functions the evaluator handles itself rather than through the
/// [`FunctionTable`], because they look at their arguments' expressions.
pub const EVALUATOR_FUNCTIONS: &[&str] = &["can", "issensitive", "try"];

/// An error while evaluating an expression.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A name that is not a variable, local, binding or resource reference.
    #[error("unknown reference `{0}`")]
    UnknownReference(String),
    /// A call to a function that the table does not hold.
    #[error("call to unknown function `{0}`")]
    UnknownFunction(String),
    /// A function rejected its arguments or failed.
    #[error("{function}: {message}")]
    Function {
        /// The function's name.
        function: String,
        /// What went wrong.
        message: String,
    },
    /// An operand or traversed value of the wrong type.
    #[error("expected {expected}, found {found}")]
    Type {
        /// The type needed.
        expected: &'static str,
        /// The type given.
        found: &'static str,
    },
    /// An object or map lacks the key asked for.
    #[error("no key `{0}`")]
    NoSuchKey(String),
    /// A list index past the end or not a whole number.
    #[error("invalid index {index} for a list of {len} elements")]
    Index {
        /// The index asked for.
        index: String,
        /// The list's length.
        len: usize,
    },
    /// An arithmetic or other operator failed.
    #[error("{0}")]
    Operation(String),
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    File {
        /// The file's path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A template or expression could not be parsed.
    #[error("cannot parse {what}: {message}")]
    Parse {
        /// What was being parsed (a file name or "template").
        what: String,
        /// The parser's message.
        message: String,
    },
    /// An expression form this evaluator does not support.
    #[error("unsupported expression: {0}")]
    Unsupported(String),
}

/// How a function treats unknown arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknowns {
    /// Any argument containing an unknown, however deep, makes the result unknown.
    Deep,
    /// Only a wholly unknown argument makes the result unknown; unknown elements pass through.
    Shallow,
}

/// One entry in the function table.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// The name Terraform calls it by.
    pub name: &'static str,
    /// The fewest arguments accepted.
    pub min_args: usize,
    /// The most arguments accepted; `None` for variadic functions.
    pub max_args: Option<usize>,
    /// How unknown arguments are treated.
    pub unknowns: Unknowns,
    /// The implementation, given arguments already checked for count and unknowns.
    pub run: fn(&Call) -> Result<Value, EvalError>,
}

impl Builtin {
    /// A function taking exactly `count` arguments, unknown if any argument contains one.
    pub const fn fixed(
        name: &'static str,
        count: usize,
        run: fn(&Call) -> Result<Value, EvalError>,
    ) -> Self {
        Self::between(name, count, Some(count), run)
    }

    /// A function taking `min..=max` arguments (`None`: no upper bound).
    pub const fn between(
        name: &'static str,
        min_args: usize,
        max_args: Option<usize>,
        run: fn(&Call) -> Result<Value, EvalError>,
    ) -> Self {
        Builtin {
            name,
            min_args,
            max_args,
            unknowns: Unknowns::Deep,
            run,
        }
    }

    /// The same function, passing unknown elements through (see [`Unknowns::Shallow`]).
    pub const fn shallow(self) -> Self {
        Builtin {
            unknowns: Unknowns::Shallow,
            ..self
        }
    }
}

/// The functions an expression may call, by name.
#[derive(Debug, Clone)]
pub struct FunctionTable {
    functions: BTreeMap<&'static str, Builtin>,
}

impl FunctionTable {
    /// Terraform's built-in functions that this module implements.
    pub fn builtin() -> Self {
        let families = [
            collection::FUNCTIONS,
            conversion::FUNCTIONS,
            crypto::FUNCTIONS,
            datetime::FUNCTIONS,
            encoding::FUNCTIONS,
            filesystem::FUNCTIONS,
            network::FUNCTIONS,
            numeric::FUNCTIONS,
            provider::FUNCTIONS,
            string::FUNCTIONS,
            yaml::FUNCTIONS,
        ];
        let functions = families
            .iter()
            .flat_map(|family| family.iter())
            .map(|f| (f.name, *f))
            .collect();
        FunctionTable { functions }
    }

    /// Adds or replaces a function.
    pub fn insert(&mut self, builtin: Builtin) {
        self.functions.insert(builtin.name, builtin);
    }

    /// The function called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Builtin> {
        self.functions.get(name)
    }

    /// The names of all functions, sorted (those in [`EVALUATOR_FUNCTIONS`] are part of the
    /// evaluator).
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.functions.keys().copied()
    }
}

/// What an expression can refer to: variables, locals, resource state, the module directory,
/// other bindings (`each`, `count`, template variables) and the function table.
///
/// The tables are shared and copied on write, so cloning a scope for each resource instance
/// (to bind `each` or `count`) does not copy every resource's state.
#[derive(Debug, Clone)]
pub struct EvalScope {
    variables: Arc<BTreeMap<String, Value>>,
    locals: Arc<BTreeMap<String, Value>>,
    resources: Arc<BTreeMap<String, Value>>,
    /// Resources with instances Terraform will create, as their configuration sets them:
    /// what a reference to one of their arguments reads (see [`EvalScope::with_planned`]).
    planned: Arc<BTreeMap<String, Value>>,
    bindings: Arc<BTreeMap<String, Value>>,
    root: PathBuf,
    module: String,
    functions: Arc<FunctionTable>,
}

impl EvalScope {
    /// An empty scope for the root module in `root`, the directory Terraform runs in, with
    /// the built-in functions.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        EvalScope {
            variables: Arc::default(),
            locals: Arc::default(),
            resources: Arc::default(),
            planned: Arc::default(),
            bindings: Arc::default(),
            root: root.into(),
            module: ".".to_owned(),
            functions: Arc::new(FunctionTable::builtin()),
        }
    }

    /// The scope of the module at `rel` from the root (`modules/app`, `../..`,
    /// `.terraform/modules/vpc`; empty for the root): the value of `path.module`, as
    /// Terraform gives it, relative to the working directory.
    pub fn in_module(mut self, rel: &str) -> Self {
        self.module = match rel {
            "" => ".".to_owned(),
            rel => rel.to_owned(),
        };
        self
    }

    /// Sets `var.<name>`.
    pub fn with_variable(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        Arc::make_mut(&mut self.variables).insert(name.into(), value.into());
        self
    }

    /// Sets `local.<name>`.
    pub fn with_local(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        Arc::make_mut(&mut self.locals).insert(name.into(), value.into());
        self
    }

    /// Sets the state of a resource by its address, `aws_instance.web` or `data.aws_ami.ubuntu`:
    /// an object of attributes, or a list or map of them for `count` and `for_each`.
    pub fn with_resource(mut self, address: impl Into<String>, value: impl Into<Value>) -> Self {
        Arc::make_mut(&mut self.resources).insert(address.into(), value.into());
        self
    }

    /// Sets the states of several resources at once (see [`EvalScope::with_resource`]): the
    /// resource table is copied at most once, however many there are.
    pub fn with_resources(mut self, resources: impl IntoIterator<Item = (String, Value)>) -> Self {
        Arc::make_mut(&mut self.resources).extend(resources);
        self
    }

    /// Sets what a reference to an argument of the resource at `address` reads when some of
    /// its instances are only planned: the same shape as [`EvalScope::with_resource`], each
    /// planned instance an object of the arguments its configuration sets. Terraform knows a
    /// configured argument at plan time; an attribute the configuration leaves out (an `arn`,
    /// an `id`) is still unknown, and a reference to a whole instance still reads the
    /// resource's value from [`EvalScope::with_resource`].
    pub fn with_planned(mut self, address: impl Into<String>, value: impl Into<Value>) -> Self {
        Arc::make_mut(&mut self.planned).insert(address.into(), value.into());
        self
    }

    /// Binds a top-level name such as `each` or `count`.
    pub fn with_binding(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        Arc::make_mut(&mut self.bindings).insert(name.into(), value.into());
        self
    }

    /// Replaces the function table.
    pub fn with_functions(mut self, functions: FunctionTable) -> Self {
        self.functions = Arc::new(functions);
        self
    }

    /// The directory Terraform runs in, which relative paths of the filesystem functions
    /// are read from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path.module`: the module's directory relative to the root (`.` for the root).
    pub fn module_path(&self) -> &str {
        &self.module
    }

    /// A scope with the same module directory and functions but only the given bindings, as
    /// `templatefile` evaluates its template.
    fn template_scope(&self, bindings: BTreeMap<String, Value>) -> Self {
        EvalScope {
            variables: Arc::default(),
            locals: Arc::default(),
            resources: Arc::default(),
            planned: Arc::default(),
            bindings: Arc::new(bindings),
            root: self.root.clone(),
            module: self.module.clone(),
            functions: self.functions.clone(),
        }
    }
}

/// Parses and evaluates an expression's source text.
pub fn evaluate_str(source: &str, scope: &EvalScope) -> Result<Value, EvalError> {
    let expr: hcl::Expression = source
        .parse()
        .map_err(|error: hcl::Error| EvalError::Parse {
            what: "expression".to_string(),
            message: error.to_string(),
        })?;
    evaluate(&expr, scope)
}
