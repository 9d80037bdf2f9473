//! Filesystem functions: `file`, `fileexists`, `templatefile`, `filebase64`, and the path
//! functions `basename`, `dirname`, `abspath`.
//!
//! Relative paths are resolved against the scope's module directory (`path.module`), which
//! for the root module is where Terraform resolves them too.

use std::path::PathBuf;

use base64::Engine;

use super::eval::render_template;
use super::{Builtin, Call, EvalError, Value};

/// The filesystem functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("abspath", 1, abspath),
    Builtin::fixed("basename", 1, basename),
    Builtin::fixed("dirname", 1, dirname),
    Builtin::fixed("file", 1, file),
    Builtin::fixed("filebase64", 1, filebase64),
    Builtin::fixed("fileexists", 1, fileexists),
    Builtin::fixed("templatefile", 2, templatefile),
];

fn resolve(call: &Call) -> Result<PathBuf, EvalError> {
    Ok(call.scope.module_dir().join(call.string(0)?))
}

fn read_bytes(call: &Call) -> Result<(PathBuf, Vec<u8>), EvalError> {
    let path = resolve(call)?;
    match std::fs::read(&path) {
        Ok(bytes) => Ok((path, bytes)),
        Err(source) => Err(EvalError::File { path, source }),
    }
}

/// The file's text; an error names the file when it is missing or not UTF-8.
fn read_text(call: &Call) -> Result<(PathBuf, String), EvalError> {
    let (path, bytes) = read_bytes(call)?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok((path, text)),
        Err(_) => Err(call.error(format!(
            "{} is not valid UTF-8; use filebase64 for binary files",
            path.display()
        ))),
    }
}

fn file(call: &Call) -> Result<Value, EvalError> {
    read_text(call).map(|(_, text)| Value::String(text))
}

fn filebase64(call: &Call) -> Result<Value, EvalError> {
    read_bytes(call)
        .map(|(_, bytes)| Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)))
}

/// Whether a regular file exists; a directory at the path is an error, as in Terraform.
fn fileexists(call: &Call) -> Result<Value, EvalError> {
    let path = resolve(call)?;
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            Err(call.error(format!("{} is a directory, not a file", path.display())))
        }
        Ok(_) => Ok(Value::Bool(true)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Value::Bool(false)),
        Err(source) => Err(EvalError::File { path, source }),
    }
}

/// Renders the file as a template whose only names are the keys of the second argument.
fn templatefile(call: &Call) -> Result<Value, EvalError> {
    let (path, text) = read_text(call)?;
    let template: hcl::Template = text.parse().map_err(|error: hcl::Error| EvalError::Parse {
        what: path.display().to_string(),
        message: error.to_string(),
    })?;
    let scope = call.scope.template_scope(call.object(1)?.clone());
    render_template(&template, &scope)
}

/// The last element of a slash-separated path, trailing slashes ignored.
fn basename(call: &Call) -> Result<Value, EvalError> {
    let path = call.string(0)?;
    let trimmed = path.trim_end_matches('/');
    let base = match (path.is_empty(), trimmed.is_empty()) {
        (true, _) => ".",
        (false, true) => "/",
        (false, false) => trimmed.rsplit('/').next().unwrap_or(trimmed),
    };
    Ok(Value::String(base.to_string()))
}

/// Everything but the last element of a path, cleaned; `.` when there is no directory.
fn dirname(call: &Call) -> Result<Value, EvalError> {
    let path = call.string(0)?;
    let dir = match path.rfind('/') {
        None => ".".to_string(),
        Some(0) => "/".to_string(),
        Some(at) => clean(&path[..at]),
    };
    Ok(Value::String(dir))
}

fn abspath(call: &Call) -> Result<Value, EvalError> {
    let path = call.string(0)?;
    let absolute = std::path::absolute(&path).map_err(|source| EvalError::File {
        path: PathBuf::from(&path),
        source,
    })?;
    Ok(Value::String(clean(&absolute.to_string_lossy())))
}

/// Removes empty and `.` elements and resolves `..` lexically.
fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            ".." if rooted => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}
