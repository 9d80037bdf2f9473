//! One module instance evaluated: its variables, and on demand (each once) its locals, module
//! calls, outputs and the resources its expressions reference, read from the state.

use super::blocks;
use super::expr::{EvalError, Evaluator, Resolved, Scope, entries, string_of};
use super::files::{Module, ResourceDecl, Sources, VariableDecl};
use super::functions::{contains_unknown, is_unknown, unknown};
use super::types::convert;
use super::{Instance, Place};
use hcl::eval::Context;
use hcl::expr::TraversalOperator;
use hcl::{Body, Expression, Map, Value};
use reconciler::terraform::state::{IndexKey, Instance as StateInstance, Mode};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::{Rc, Weak};

/// What every module instance of one load shares.
pub(super) struct World<'a> {
    /// The configuration.
    pub sources: &'a Sources,
    /// The state's current instances, by address.
    pub state: BTreeMap<&'a str, &'a StateInstance>,
    /// The function library.
    pub functions: Context<'a>,
    /// The names found to depend on themselves.
    pub cycles: RefCell<BTreeSet<String>>,
}

/// How a block (resource or module call) expands by `count` or `for_each`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Keys {
    /// Neither: one instance without a key.
    Single,
    /// `count`: instances 0..n.
    Count(usize),
    /// `for_each`: one instance per key, with its value.
    ForEach(Vec<(String, Value)>),
    /// The expansion is not known.
    Unknown,
}

/// An instance's key and the name (`count` or `each`) bound to its value there.
type Keyed = (Option<IndexKey>, Option<(&'static str, Value)>);

impl Keys {
    /// The instance keys with the `each` or `count` binding of each.
    fn instances(&self) -> Vec<Keyed> {
        match self {
            Keys::Single | Keys::Unknown => vec![(None, None)],
            Keys::Count(n) => (0..*n)
                .map(|i| {
                    let count = object([("index", Value::from(i))]);
                    (Some(IndexKey::Int(i as i64)), Some(("count", count)))
                })
                .collect(),
            Keys::ForEach(pairs) => pairs
                .iter()
                .map(|(k, v)| {
                    let each = object([("key", Value::String(k.clone())), ("value", v.clone())]);
                    (Some(IndexKey::Str(k.clone())), Some(("each", each)))
                })
                .collect(),
        }
    }

    /// The values of the instances, in the shape a reference to the block sees: one value,
    /// a list (`count`) or a map (`for_each`).
    fn collect(&self, values: Vec<Value>) -> Value {
        match self {
            Keys::Unknown => unknown(),
            Keys::Single => values.into_iter().next().unwrap_or(Value::Null),
            Keys::Count(_) => Value::Array(values),
            Keys::ForEach(pairs) => {
                Value::Object(pairs.iter().map(|(k, _)| k.clone()).zip(values).collect())
            }
        }
    }
}

/// An object of named values.
pub(super) fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// `[0]` or `["a"]`, as an address writes a key.
pub(super) fn key_suffix(key: &Option<IndexKey>) -> String {
    match key {
        None => String::new(),
        Some(IndexKey::Int(n)) => format!("[{n}]"),
        Some(IndexKey::Str(s)) => format!("[{}]", serde_json::Value::String(s.clone())),
    }
}

/// The module calls' instances of one call, each a frame.
type Children<'w> = (Keys, Vec<Rc<Frame<'w>>>);

/// Where a module instance's variables come from.
enum Inputs<'w> {
    /// The root module's: the variable files and defaults, evaluated up front.
    Root,
    /// A module call's arguments, each evaluated in the calling module instance when first
    /// read (so that an argument may read another output of the same module).
    Call {
        /// The calling module instance.
        caller: Weak<Frame<'w>>,
        /// The module block.
        body: &'w Body,
        /// The `count` or `for_each` binding of this instance.
        binding: Option<(&'static str, Value)>,
    },
}

/// One module instance.
pub(super) struct Frame<'w> {
    world: &'w World<'w>,
    module: &'w Module,
    place: Place,
    inputs: Inputs<'w>,
    /// This frame, for the module instances it calls.
    me: Weak<Frame<'w>>,
    busy: RefCell<BTreeSet<String>>,
    vars: RefCell<Map<String, Value>>,
    locals: RefCell<BTreeMap<String, Value>>,
    outputs: RefCell<BTreeMap<String, Value>>,
    calls: RefCell<BTreeMap<String, Rc<Children<'w>>>>,
}

impl<'w> Frame<'w> {
    /// The root module's instance, its variables from the variable files and defaults.
    pub fn root(world: &'w World<'w>) -> Result<Rc<Self>, EvalError> {
        let module = world
            .sources
            .modules
            .get("")
            .ok_or_else(|| EvalError::Undefined("the root module".to_owned()))?;
        let literal = Literal;
        let ev = Evaluator::new(&literal, &world.functions);
        let vars = module
            .variables
            .iter()
            .map(|(name, decl)| {
                let given = world.sources.assigned.get(name).map(|e| ev.eval(e));
                (name.clone(), given_or_default(given, decl, &ev))
            })
            .collect();
        Ok(Self::new(
            world,
            module,
            Place::default(),
            Inputs::Root,
            vars,
        ))
    }

    fn new(
        world: &'w World<'w>,
        module: &'w Module,
        place: Place,
        inputs: Inputs<'w>,
        vars: Map<String, Value>,
    ) -> Rc<Self> {
        Rc::new_cyclic(|me| Self {
            world,
            module,
            place,
            inputs,
            me: me.clone(),
            busy: RefCell::default(),
            vars: RefCell::new(vars),
            locals: RefCell::default(),
            outputs: RefCell::default(),
            calls: RefCell::default(),
        })
    }

    fn evaluator(&self) -> Evaluator<'_> {
        Evaluator::new(self, &self.world.functions)
    }

    /// Runs `f` unless `name` is already being evaluated (a cycle).
    fn guarded<T>(&self, name: &str, f: impl FnOnce() -> T) -> Result<T, EvalError> {
        if !self.busy.borrow_mut().insert(name.to_owned()) {
            let at = format!("{}{name}", self.prefix());
            self.world.cycles.borrow_mut().insert(at.clone());
            return Err(EvalError::Cycle(at));
        }
        let out = f();
        self.busy.borrow_mut().remove(name);
        Ok(out)
    }

    fn local(&self, name: &str) -> Result<Value, EvalError> {
        if let Some(v) = self.locals.borrow().get(name) {
            return Ok(v.clone());
        }
        let expr = self
            .module
            .locals
            .get(name)
            .ok_or_else(|| EvalError::Undefined(format!("local.{name}")))?;
        let value = self.guarded(&format!("local.{name}"), || self.evaluator().eval(expr))??;
        self.locals
            .borrow_mut()
            .insert(name.to_owned(), value.clone());
        Ok(value)
    }

    /// A variable's value: for a module call's instance, the call's argument evaluated in
    /// the caller (or the default), converted to the variable's type.
    fn var(&self, name: &str) -> Result<Value, EvalError> {
        if let Some(v) = self.vars.borrow().get(name) {
            return Ok(v.clone());
        }
        let undefined = || EvalError::Undefined(format!("var.{name}"));
        let decl = self.module.variables.get(name).ok_or_else(undefined)?;
        let Inputs::Call {
            caller,
            body,
            binding,
        } = &self.inputs
        else {
            return Err(undefined());
        };
        let caller = caller.upgrade().ok_or_else(undefined)?;
        let given = match super::files::attribute(body, name) {
            Some(argument) => Some(self.guarded(&format!("var.{name}"), || {
                let mut ev = caller.evaluator();
                if let Some((n, v)) = binding {
                    ev = ev.with(n, v.clone());
                }
                ev.eval(&argument)
            })?),
            None => None,
        };
        let literal = Evaluator::new(&Literal, &self.world.functions);
        let value = given_or_default(given, decl, &literal);
        self.vars
            .borrow_mut()
            .insert(name.to_owned(), value.clone());
        Ok(value)
    }

    /// How a block expands, from its `count` or `for_each`.
    pub fn keys(&self, body: &Body) -> Keys {
        let ev = self.evaluator();
        let get = |key| super::files::attribute(body, key).map(|e| ev.eval(&e));
        if let Some(count) = get("count") {
            return match count.map(super::expr::as_number) {
                Ok(Value::Number(n)) => n
                    .as_u64()
                    .map_or(Keys::Unknown, |n| Keys::Count(n as usize)),
                _ => Keys::Unknown,
            };
        }
        match get("for_each") {
            None => Keys::Single,
            Some(Ok(v)) if !contains_unknown(&v) => for_each_keys(&v).unwrap_or(Keys::Unknown),
            Some(_) => Keys::Unknown,
        }
    }

    /// The address prefix of this module instance's resources (`module.app.`).
    fn prefix(&self) -> String {
        self.place
            .module
            .as_deref()
            .map_or(String::new(), |m| format!("{m}."))
    }

    fn resource_address(&self, decl: &ResourceDecl, key: &Option<IndexKey>) -> String {
        let data = if decl.data { "data." } else { "" };
        format!(
            "{}{data}{}.{}{}",
            self.prefix(),
            decl.resource_type,
            decl.name,
            key_suffix(key)
        )
    }

    /// A resource's value as references see it, from the state. An instance the state lacks
    /// is planned: the arguments its configuration sets are known, the rest unknown.
    fn resource(&self, data: bool, resource_type: &str, name: &str) -> Result<Value, EvalError> {
        let decl = self
            .module
            .resource(data, resource_type, name)
            .ok_or_else(|| EvalError::Undefined(format!("{resource_type}.{name}")))?;
        self.guarded(&format!("{resource_type}.{name}"), || {
            let keys = self.keys(&decl.body);
            let values = keys
                .instances()
                .into_iter()
                .map(|(key, binding)| {
                    let address = self.resource_address(decl, &key);
                    match self.world.state.get(address.as_str()) {
                        Some(instance) => from_json(&instance.attributes),
                        None => self.planned(decl, binding),
                    }
                })
                .collect();
            keys.collect(values)
        })
    }

    /// The configured arguments of an instance (all that is known of one not in the state
    /// yet).
    fn planned(&self, decl: &ResourceDecl, binding: Option<(&str, Value)>) -> Value {
        let mut ev = self.evaluator();
        if let Some((n, v)) = binding {
            ev = ev.with(n, v);
        }
        blocks::attributes(&ev, &decl.body, true)
    }

    /// The instances of a module call.
    fn children(&self, name: &str) -> Result<Rc<Children<'w>>, EvalError> {
        if let Some(c) = self.calls.borrow().get(name) {
            return Ok(c.clone());
        }
        let call = self
            .module
            .calls
            .get(name)
            .ok_or_else(|| EvalError::Undefined(format!("module.{name}")))?;
        let module = self
            .world
            .sources
            .modules
            .get(&call.dir)
            .ok_or_else(|| EvalError::Undefined(call.dir.clone()))?;
        let children = self.guarded(&format!("module.{name}"), || {
            let keys = self.keys(&call.body);
            let frames = match keys {
                Keys::Unknown => Vec::new(),
                _ => keys
                    .instances()
                    .into_iter()
                    .map(|(key, binding)| {
                        let inputs = Inputs::Call {
                            caller: self.me.clone(),
                            body: &call.body,
                            binding,
                        };
                        let place = self.place.child(name, &call.dir, &key);
                        Frame::new(self.world, module, place, inputs, Map::new())
                    })
                    .collect(),
            };
            Rc::new((keys, frames))
        })?;
        self.calls
            .borrow_mut()
            .insert(name.to_owned(), children.clone());
        Ok(children)
    }

    /// The value `module.NAME` refers to: the outputs of each instance.
    fn call_value(&self, name: &str) -> Result<Value, EvalError> {
        let children = self.children(name)?;
        let (keys, frames) = &*children;
        Ok(keys.collect(frames.iter().map(|f| f.outputs()).collect()))
    }

    /// Every output of this module instance.
    fn outputs(&self) -> Value {
        Value::Object(
            self.module
                .outputs
                .keys()
                .map(|name| {
                    (
                        name.clone(),
                        self.output(name).unwrap_or_else(|_| unknown()),
                    )
                })
                .collect(),
        )
    }

    /// One output's value.
    fn output(&self, name: &str) -> Result<Value, EvalError> {
        if let Some(v) = self.outputs.borrow().get(name) {
            return Ok(v.clone());
        }
        let expr = self
            .module
            .outputs
            .get(name)
            .ok_or_else(|| EvalError::Undefined(format!("output {name}")))?;
        let value = self.guarded(&format!("output.{name}"), || self.evaluator().eval(expr))??;
        self.outputs
            .borrow_mut()
            .insert(name.to_owned(), value.clone());
        Ok(value)
    }

    /// `module.NAME.OUTPUT` of a call without `count` or `for_each`: that output alone.
    fn single_output(&self, name: &str, output: &str) -> Option<Result<Value, EvalError>> {
        let children = match self.children(name) {
            Ok(children) => children,
            Err(e) => return Some(Err(e)),
        };
        match &*children {
            (Keys::Single, frames) => frames.first().map(|f| f.output(output)),
            _ => None,
        }
    }

    /// Every resource instance of this module instance and its descendants.
    pub fn instances(&self) -> Vec<Instance> {
        let mut out = Vec::new();
        for decl in &self.module.resources {
            let keys = self.keys(&decl.body);
            if keys == Keys::Unknown {
                continue;
            }
            for (key, binding) in keys.instances() {
                out.push(Instance {
                    address: self.resource_address(decl, &key),
                    module: self.place.module.clone(),
                    mode: if decl.data { Mode::Data } else { Mode::Managed },
                    resource_type: decl.resource_type.clone(),
                    name: decl.name.clone(),
                    index: key,
                    attributes: self.planned(decl, binding),
                    file: decl.file.clone(),
                    span: decl.span.clone(),
                    place: self.place.clone(),
                });
            }
        }
        for name in self.module.calls.keys() {
            if let Ok(children) = self.children(name) {
                out.extend(children.1.iter().flat_map(|f| f.instances()));
            }
        }
        out
    }
}

impl Scope for Frame<'_> {
    fn resolve(&self, root: &str, ops: &[TraversalOperator]) -> Result<Resolved, EvalError> {
        let first = match ops.first() {
            Some(TraversalOperator::GetAttr(name)) => Some(name.as_str()),
            _ => None,
        };
        let known = |value, used| Resolved {
            value,
            used,
            lenient: false,
        };
        match (root, first) {
            ("var", Some(name)) => Ok(known(self.var(name)?, 1)),
            ("local", Some(name)) => Ok(known(self.local(name)?, 1)),
            ("module", Some(name)) => match ops.get(1) {
                Some(TraversalOperator::GetAttr(output)) => {
                    match self.single_output(name, output.as_str()) {
                        Some(value) => Ok(known(value?, 2)),
                        None => Ok(known(self.call_value(name)?, 1)),
                    }
                }
                _ => Ok(known(self.call_value(name)?, 1)),
            },
            ("path", _) => Ok(known(self.path_object(), 0)),
            ("terraform", _) => Ok(known(object([("workspace", "default".into())]), 0)),
            ("data", Some(kind)) => match ops.get(1) {
                Some(TraversalOperator::GetAttr(name)) => Ok(Resolved {
                    value: self.resource(true, kind, name.as_str())?,
                    used: 2,
                    lenient: true,
                }),
                _ => Err(EvalError::Undefined(format!("data.{kind}"))),
            },
            (kind, Some(name)) if self.module.resource(false, kind, name).is_some() => {
                Ok(Resolved {
                    value: self.resource(false, kind, name)?,
                    used: 1,
                    lenient: true,
                })
            }
            _ => Err(EvalError::Undefined(root.to_owned())),
        }
    }

    fn names_a_set(&self, root: &str, name: &str, depth: usize) -> bool {
        match root {
            "local" => self
                .module
                .locals
                .get(name)
                .is_some_and(|e| self.evaluator().is_set(e, depth)),
            "var" => self
                .module
                .variables
                .get(name)
                .and_then(|v| v.constraint.as_ref())
                .is_some_and(
                    |c| matches!(c, Expression::FuncCall(f) if f.name.name.as_str() == "set"),
                ),
            _ => false,
        }
    }
}

impl Frame<'_> {
    /// `path`: the module's directory relative to the root (`.` for the root).
    fn path_object(&self) -> Value {
        let dir = match self.place.dir.as_str() {
            "" => ".".to_owned(),
            dir => dir.to_owned(),
        };
        object([
            ("module", dir.into()),
            ("root", ".".into()),
            ("cwd", ".".into()),
        ])
    }
}

/// A scope with no names: variable files and defaults are literals.
struct Literal;

impl Scope for Literal {
    fn resolve(&self, root: &str, _: &[TraversalOperator]) -> Result<Resolved, EvalError> {
        Err(EvalError::Undefined(root.to_owned()))
    }

    fn names_a_set(&self, _: &str, _: &str, _: usize) -> bool {
        false
    }
}

/// A variable's value from what is given, if anything: the default when nothing is, or when
/// null is given for a variable that is not nullable; unknown when there is neither; converted
/// to the variable's type.
fn given_or_default(
    given: Option<Result<Value, EvalError>>,
    decl: &VariableDecl,
    literal: &Evaluator,
) -> Value {
    let value = match (given, &decl.default) {
        (Some(Ok(Value::Null)), Some(default)) if decl.not_null => literal.eval(default),
        (Some(given), _) => given,
        (None, Some(default)) => literal.eval(default),
        (None, None) => Ok(unknown()),
    };
    typed(value, decl.constraint.as_ref())
}

/// A value converted to a variable's type; unknown when it cannot be evaluated.
fn typed(value: Result<Value, EvalError>, constraint: Option<&Expression>) -> Value {
    match (value, constraint) {
        (Ok(v), Some(c)) => convert(v.clone(), c).unwrap_or(v),
        (Ok(v), None) => v,
        (Err(_), _) => unknown(),
    }
}

/// The keys of a known `for_each` value: a map's keys, or a set of strings' elements.
fn for_each_keys(value: &Value) -> Option<Keys> {
    let pairs = match value {
        Value::Object(_) => entries(value, false)
            .ok()?
            .into_iter()
            .map(|(k, v)| Some((string_of(&k).ok()?, v)))
            .collect::<Option<Vec<_>>>()?,
        Value::Array(items) => {
            let mut keys: Vec<String> = items
                .iter()
                .map(|v| string_of(v).ok())
                .collect::<Option<_>>()?;
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .map(|k| (k.clone(), Value::String(k)))
                .collect()
        }
        _ => return None,
    };
    Some(Keys::ForEach(pairs))
}

/// A state attribute value: JSON as an HCL value, whole floats as integers.
pub(super) fn from_json(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::from(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(from_json).collect()),
        serde_json::Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

/// A value as JSON; `None` when it holds an unknown.
pub(super) fn to_json(value: &Value) -> Option<serde_json::Value> {
    Some(match value {
        v if is_unknown(v) => return None,
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) => {
                serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, Into::into)
            }
            _ => serde_json::Value::Null,
        },
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Array(items) => items.iter().map(to_json).collect::<Option<_>>()?,
        Value::Object(map) => serde_json::Value::Object(
            map.iter()
                .map(|(k, v)| Some((k.clone(), to_json(v)?)))
                .collect::<Option<_>>()?,
        ),
    })
}
