//! Terraform's built-in functions for the judges' evaluator, written from Terraform's function
//! documentation (developer.hashicorp.com/terraform/language/functions), independently of the
//! product's implementation.
//!
//! Values are [`hcl::Value`]s. Terraform's lists, tuples and sets are arrays (a set is an array
//! kept deduplicated and in Terraform's order: strings lexically, numbers by value, false
//! before true); its maps and objects are objects, which the functions that build maps return
//! with their keys sorted, as Terraform orders them.
//!
//! **Unknown values.** A value not known until apply is a string that contains
//! [`UNKNOWN_MARKER`], a text bracketed by NUL characters that no configuration writes. Being a
//! string, it survives template interpolation: `"arn:${unknown()}"` is itself unknown, as in
//! Terraform. Every function returns [`unknown()`] when an argument contains an unknown value
//! anywhere inside it, except the functions that only rearrange or count their arguments'
//! elements (`length`, `element`, `concat`, `keys`, `values`, `lookup`, `merge`, `slice`,
//! `reverse`, `one`, `tolist`, `tomap`, `sensitive`, `nonsensitive`): those return unknown only
//! when an argument itself is unknown, so `length([unknown()])` is 1.
//!
//! Not here: `can` and `try` (they must evaluate their arguments lazily) and `templatefile`
//! belong to the evaluator. The file functions (`file`, `filemd5`, ...) read the path they are
//! given, relative to the process's working directory: the evaluator makes `path.module` and
//! `path.root` absolute.
//!
//! Approximations: numbers are `f64`s (Terraform's are arbitrary-precision, so `0.1 + 0.2`
//! differs in its last digits); a string's characters are counted as user-perceived
//! characters by a simple rule (combining marks, variation selectors, emoji modifiers and
//! zero-width joins extend a character), not the full Unicode segmentation; a set of lists or
//! objects keeps its elements' first-appearance order (Terraform's is unspecified).

mod collections;
mod conversion;
mod encoding;
mod files;
mod format;
mod network;
mod numbers;
mod regexes;
mod sets;
mod strings;
mod time;
mod yaml;

use hcl::eval::{Context, FuncArgs, FuncDef, ParamType};
use hcl::{Map, Number, Value};

/// The text an unknown value's string contains.
pub const UNKNOWN_MARKER: &str = "\u{0}(known after apply)\u{0}";

/// A value not known until apply.
pub fn unknown() -> Value {
    Value::String(UNKNOWN_MARKER.to_owned())
}

/// Whether `value` is unknown: a string containing [`UNKNOWN_MARKER`].
pub fn is_unknown(value: &Value) -> bool {
    matches!(value, Value::String(text) if text.contains(UNKNOWN_MARKER))
}

/// Whether `value` is unknown or holds an unknown value (or key) at any depth.
pub fn contains_unknown(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(contains_unknown),
        Value::Object(map) => map
            .iter()
            .any(|(key, item)| key.contains(UNKNOWN_MARKER) || contains_unknown(item)),
        _ => is_unknown(value),
    }
}

/// A function's body: its arguments, known, in; its result or error message out.
type Body = fn(&[Value]) -> Result<Value, String>;

/// Which unknown arguments make a function's result unknown.
#[derive(Clone, Copy)]
enum Guard {
    /// An unknown value anywhere in an argument.
    Deep,
    /// An argument that is itself unknown.
    Shallow,
}

/// No upper bound on a function's number of arguments.
const MANY: usize = usize::MAX;

/// Checks the arguments' count and unknowns, then runs `body`.
fn run(args: FuncArgs, max: usize, guard: Guard, body: Body) -> Result<Value, String> {
    if args.len() > max {
        return Err(format!(
            "expected at most {max} arguments, got {}",
            args.len()
        ));
    }
    let unknown_argument = match guard {
        Guard::Deep => args.iter().any(contains_unknown),
        Guard::Shallow => args.iter().any(is_unknown),
    };
    if unknown_argument {
        return Ok(unknown());
    }
    body(&args)
}

/// A definition taking `min` to `max` arguments of any type (the bodies check their types, so
/// that an unknown argument never fails hcl's type check).
fn definition(min: usize, max: usize, func: fn(FuncArgs) -> Result<Value, String>) -> FuncDef {
    let builder = FuncDef::builder().params(std::iter::repeat_n(ParamType::Any, min));
    if max > min {
        builder.variadic_param(ParamType::Any).build(func)
    } else {
        builder.build(func)
    }
}

/// Declares each function under its name with its arity (`min ..= max`) and [`Guard`].
macro_rules! library {
    ($ctx:ident: $($name:literal $min:literal ..= $max:expr, $guard:ident => $body:path;)*) => {
        $($ctx.declare_func(
            $name,
            definition($min, $max, |args| run(args, $max, Guard::$guard, $body)),
        );)*
    };
}

/// Declares every function of this library in `ctx` under its Terraform name.
pub fn declare(ctx: &mut Context) {
    library! { ctx:
        "abs" 1..=1, Deep => numbers::abs;
        "alltrue" 1..=1, Deep => collections::alltrue;
        "anytrue" 1..=1, Deep => collections::anytrue;
        "base64decode" 1..=1, Deep => encoding::base64decode;
        "base64encode" 1..=1, Deep => encoding::base64encode;
        "base64sha256" 1..=1, Deep => encoding::base64sha256;
        "basename" 1..=1, Deep => files::basename;
        "ceil" 1..=1, Deep => numbers::ceil;
        "chunklist" 2..=2, Deep => collections::chunklist;
        "cidrhost" 2..=2, Deep => network::cidrhost;
        "cidrsubnet" 3..=3, Deep => network::cidrsubnet;
        "coalesce" 1..=MANY, Deep => collections::coalesce;
        "coalescelist" 1..=MANY, Deep => collections::coalescelist;
        "compact" 1..=1, Deep => collections::compact;
        "concat" 1..=MANY, Shallow => collections::concat;
        "contains" 2..=2, Deep => collections::contains;
        "dirname" 1..=1, Deep => files::dirname;
        "distinct" 1..=1, Deep => collections::distinct;
        "element" 2..=2, Shallow => collections::element;
        "endswith" 2..=2, Deep => strings::endswith;
        "file" 1..=1, Deep => files::file;
        "filebase64" 1..=1, Deep => files::filebase64;
        "filebase64sha256" 1..=1, Deep => files::filebase64sha256;
        "filemd5" 1..=1, Deep => files::filemd5;
        "filesha256" 1..=1, Deep => files::filesha256;
        "flatten" 1..=1, Deep => collections::flatten;
        "floor" 1..=1, Deep => numbers::floor;
        "format" 1..=MANY, Deep => format::format;
        "formatdate" 2..=2, Deep => time::formatdate;
        "formatlist" 1..=MANY, Deep => format::formatlist;
        "index" 2..=2, Deep => collections::index;
        "join" 2..=MANY, Deep => strings::join;
        "jsondecode" 1..=1, Deep => encoding::jsondecode;
        "jsonencode" 1..=1, Deep => encoding::jsonencode;
        "keys" 1..=1, Shallow => collections::keys;
        "length" 1..=1, Shallow => collections::length;
        "lookup" 2..=3, Shallow => collections::lookup;
        "lower" 1..=1, Deep => strings::lower;
        "matchkeys" 3..=3, Deep => collections::matchkeys;
        "max" 1..=MANY, Deep => numbers::max;
        "md5" 1..=1, Deep => encoding::md5;
        "merge" 0..=MANY, Shallow => collections::merge;
        "min" 1..=MANY, Deep => numbers::min;
        "nonsensitive" 1..=1, Shallow => conversion::identity;
        "one" 1..=1, Shallow => collections::one;
        "range" 1..=3, Deep => numbers::range;
        "regex" 2..=2, Deep => regexes::regex;
        "regexall" 2..=2, Deep => regexes::regexall;
        "replace" 3..=3, Deep => strings::replace;
        "reverse" 1..=1, Shallow => collections::reverse;
        "sensitive" 1..=1, Shallow => conversion::identity;
        "setintersection" 1..=MANY, Deep => sets::setintersection;
        "setproduct" 1..=MANY, Deep => collections::setproduct;
        "setsubtract" 2..=2, Deep => sets::setsubtract;
        "setunion" 1..=MANY, Deep => sets::setunion;
        "sha256" 1..=1, Deep => encoding::sha256;
        "slice" 3..=3, Shallow => collections::slice;
        "sort" 1..=1, Deep => collections::sort;
        "split" 2..=2, Deep => strings::split;
        "startswith" 2..=2, Deep => strings::startswith;
        "strrev" 1..=1, Deep => strings::strrev;
        "substr" 3..=3, Deep => strings::substr;
        "sum" 1..=1, Deep => numbers::sum;
        "timestamp" 0..=0, Deep => time::timestamp;
        "title" 1..=1, Deep => strings::title;
        "tobool" 1..=1, Deep => conversion::tobool;
        "tolist" 1..=1, Shallow => conversion::tolist;
        "tomap" 1..=1, Shallow => conversion::tomap;
        "tonumber" 1..=1, Deep => conversion::tonumber;
        "toset" 1..=1, Deep => conversion::toset;
        "tostring" 1..=1, Deep => conversion::tostring;
        "transpose" 1..=1, Deep => collections::transpose;
        "trim" 2..=2, Deep => strings::trim;
        "trimprefix" 2..=2, Deep => strings::trimprefix;
        "trimspace" 1..=1, Deep => strings::trimspace;
        "trimsuffix" 2..=2, Deep => strings::trimsuffix;
        "upper" 1..=1, Deep => strings::upper;
        "urlencode" 1..=1, Deep => encoding::urlencode;
        "uuid" 0..=0, Deep => time::uuid;
        "values" 1..=1, Shallow => collections::values;
        "yamlencode" 1..=1, Deep => yaml::yamlencode;
        "zipmap" 2..=2, Deep => collections::zipmap;
    }
}

/// A primitive value as Terraform converts it to a string: numbers without a fraction have
/// no ".0", bools are "true"/"false". `None` for null and collections.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number_text(number)),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// A number in Terraform's notation: whole numbers as integers, others in decimal notation
/// (never with an exponent).
fn number_text(number: &Number) -> String {
    match number.as_f64() {
        Some(float) if number.is_f64() => float.to_string(),
        _ => number.to_string(),
    }
}

/// A number or a string holding one, as Terraform converts it to a number.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse().ok().filter(|f: &f64| f.is_finite()),
        _ => None,
    }
}

/// A number value from a finite float.
fn number_value(float: f64) -> Result<Value, String> {
    Number::from_f64(float)
        .map(Value::Number)
        .ok_or_else(|| format!("{float} is not a finite number"))
}

/// A short description of a value's type for error messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The argument at `index`, or null when it is not given.
fn arg(args: &[Value], index: usize) -> &Value {
    args.get(index).unwrap_or(&Value::Null)
}

/// The error for the argument at `index` not being `wanted`.
fn mismatch(args: &[Value], index: usize, wanted: &str) -> String {
    format!(
        "argument {} must be {wanted}, got {}",
        index + 1,
        kind(arg(args, index))
    )
}

/// The argument at `index` as a string (numbers and bools converted).
fn string_arg(args: &[Value], index: usize) -> Result<String, String> {
    text(arg(args, index)).ok_or_else(|| mismatch(args, index, "a string"))
}

/// The argument at `index` as a number (numeric strings converted).
fn number_arg(args: &[Value], index: usize) -> Result<f64, String> {
    number(arg(args, index)).ok_or_else(|| mismatch(args, index, "a number"))
}

/// The argument at `index` as a whole number.
fn integer_arg(args: &[Value], index: usize) -> Result<i64, String> {
    let float = number_arg(args, index)?;
    if float.fract() != 0.0 || float.abs() >= 9.0e15 {
        return Err(mismatch(args, index, "a whole number"));
    }
    Ok(float as i64)
}

/// A bool or a string "true"/"false", as Terraform converts it to a bool.
fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(flag) => Some(*flag),
        Value::String(text) if text == "true" => Some(true),
        Value::String(text) if text == "false" => Some(false),
        _ => None,
    }
}

/// The argument at `index` as a list, set or tuple.
fn list_arg(args: &[Value], index: usize) -> Result<&[Value], String> {
    match arg(args, index) {
        Value::Array(items) => Ok(items),
        _ => Err(mismatch(args, index, "a list")),
    }
}

/// The argument at `index` as a map or object.
fn map_arg(args: &[Value], index: usize) -> Result<&Map<String, Value>, String> {
    match arg(args, index) {
        Value::Object(map) => Ok(map),
        _ => Err(mismatch(args, index, "a map")),
    }
}

/// A map value with its keys sorted, as Terraform orders a map's keys.
fn sorted_map(entries: impl IntoIterator<Item = (String, Value)>) -> Value {
    let mut entries: Vec<(String, Value)> = entries.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Object(entries.into_iter().collect())
}

/// A list of strings.
fn string_list(items: impl IntoIterator<Item = String>) -> Value {
    Value::Array(items.into_iter().map(Value::String).collect())
}

#[cfg(test)]
mod tests;
