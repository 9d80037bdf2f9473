//! Filesystem functions: `file`, `fileexists`, `fileset`, `templatefile`, `filebase64`, the
//! file hashes (`filesha256`, ...), and the path functions `basename`, `dirname`, `abspath`,
//! `pathexpand`.
//!
//! Relative paths are resolved against the scope's module directory (`path.module`), which
//! for the root module is where Terraform resolves them too.

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

use super::convert::into_set;
use super::encoding::hex;
use super::eval::render_template;
use super::{Builtin, Call, EvalError, Value};

/// The filesystem functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("abspath", 1, abspath),
    Builtin::fixed("basename", 1, basename),
    Builtin::fixed("dirname", 1, dirname),
    Builtin::fixed("file", 1, file),
    Builtin::fixed("filebase64", 1, filebase64),
    Builtin::fixed("filebase64sha256", 1, filebase64sha256),
    Builtin::fixed("filebase64sha512", 1, filebase64sha512),
    Builtin::fixed("fileexists", 1, fileexists),
    Builtin::fixed("filemd5", 1, filemd5),
    Builtin::fixed("fileset", 2, fileset),
    Builtin::fixed("filesha1", 1, filesha1),
    Builtin::fixed("filesha256", 1, filesha256),
    Builtin::fixed("filesha512", 1, filesha512),
    Builtin::fixed("pathexpand", 1, pathexpand),
    Builtin::fixed("templatefile", 2, templatefile),
];

fn resolve(call: &Call) -> Result<PathBuf, EvalError> {
    Ok(call.scope.root().join(call.string(0)?))
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
    read_bytes(call).map(|(_, bytes)| Value::String(STANDARD.encode(bytes)))
}

/// The digest of the file's raw bytes.
fn file_digest<D: Digest>(call: &Call) -> Result<Vec<u8>, EvalError> {
    read_bytes(call).map(|(_, bytes)| D::digest(bytes).to_vec())
}

fn filemd5(call: &Call) -> Result<Value, EvalError> {
    file_digest::<md5::Md5>(call).map(|digest| hex(&digest))
}

fn filesha1(call: &Call) -> Result<Value, EvalError> {
    file_digest::<sha1::Sha1>(call).map(|digest| hex(&digest))
}

fn filesha256(call: &Call) -> Result<Value, EvalError> {
    file_digest::<sha2::Sha256>(call).map(|digest| hex(&digest))
}

fn filesha512(call: &Call) -> Result<Value, EvalError> {
    file_digest::<sha2::Sha512>(call).map(|digest| hex(&digest))
}

fn filebase64sha256(call: &Call) -> Result<Value, EvalError> {
    file_digest::<sha2::Sha256>(call).map(|digest| Value::String(STANDARD.encode(digest)))
}

fn filebase64sha512(call: &Call) -> Result<Value, EvalError> {
    file_digest::<sha2::Sha512>(call).map(|digest| Value::String(STANDARD.encode(digest)))
}

/// The regular files under the directory (argument 1) whose slash-separated paths relative to
/// it match the pattern: `*` and `?` stay within one path element, `**` crosses elements, and
/// `{a,b}` and `[...]`/`[^...]` work as in Terraform's doublestar globs.
fn fileset(call: &Call) -> Result<Value, EvalError> {
    let base = resolve(call)?;
    let pattern = clean(&call.string(1)?);
    let matcher = globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|error| call.error(format!("failed to glob pattern ({pattern}): {error}")))?
        .compile_matcher();
    let mut files = Vec::new();
    walk_files(&base, "", &mut files).map_err(|source| EvalError::File {
        path: base.clone(),
        source,
    })?;
    let matches = files
        .into_iter()
        .filter(|file| matcher.is_match(file.as_str()));
    Ok(into_set(matches.map(Value::String).collect()))
}

/// Appends the slash-separated paths, below `prefix`, of the regular files under `dir`
/// (symbolic links followed to files, not into directories). A missing `dir` has none.
fn walk_files(dir: &Path, prefix: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = format!("{prefix}{name}");
        if entry.file_type()?.is_dir() {
            walk_files(&entry.path(), &format!("{relative}/"), out)?;
        } else if std::fs::metadata(entry.path()).is_ok_and(|meta| meta.is_file()) {
            out.push(relative);
        }
    }
    Ok(())
}

/// Replaces a leading `~` path element with the home directory; other paths are unchanged.
fn pathexpand(call: &Call) -> Result<Value, EvalError> {
    let path = call.string(0)?;
    let Some(rest) = path.strip_prefix('~') else {
        return Ok(Value::String(path));
    };
    if !(rest.is_empty() || rest.starts_with('/') || rest.starts_with('\\')) {
        return Err(call.error("cannot expand user-specific home dir"));
    }
    let home = std::env::home_dir().ok_or_else(|| call.error("cannot find the home directory"))?;
    Ok(Value::String(clean(&format!("{}{rest}", home.display()))))
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
