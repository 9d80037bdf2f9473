//! Filesystem functions. Paths are read as given: a relative path is relative to the
//! process's working directory (the evaluator makes `path.module` absolute).

use super::{Value, encoding, string_arg};
use std::path::Path;

/// The bytes of the file named by the first argument.
fn read(args: &[Value]) -> Result<Vec<u8>, String> {
    let path = string_arg(args, 0)?;
    std::fs::read(&path).map_err(|err| format!("cannot read {path}: {err}"))
}

/// `file(path)`: the file's content as UTF-8 text.
pub(super) fn file(args: &[Value]) -> Result<Value, String> {
    String::from_utf8(read(args)?)
        .map(Value::from)
        .map_err(|_| "the file is not valid UTF-8".to_owned())
}

/// `filebase64(path)`: the file's content in base64.
pub(super) fn filebase64(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(encoding::base64(&read(args)?)))
}

/// `filemd5(path)`: the MD5 digest of the file's content, in hexadecimal.
pub(super) fn filemd5(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(encoding::md5_hex(&read(args)?)))
}

/// `filesha256(path)`: the SHA-256 digest of the file's content, in hexadecimal.
pub(super) fn filesha256(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(encoding::sha256_hex(&read(args)?)))
}

/// `filebase64sha256(path)`: the SHA-256 digest of the file's content, in base64.
pub(super) fn filebase64sha256(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(encoding::sha256_base64(&read(args)?)))
}

/// `basename(path)`: the path's last part.
pub(super) fn basename(args: &[Value]) -> Result<Value, String> {
    let path = string_arg(args, 0)?;
    let name = Path::new(&path)
        .file_name()
        .map_or(path.as_str().into(), |name| name.to_string_lossy());
    Ok(Value::from(name.into_owned()))
}

/// `dirname(path)`: the path without its last part ("." when it has a single part).
pub(super) fn dirname(args: &[Value]) -> Result<Value, String> {
    let path = string_arg(args, 0)?;
    let parent = match Path::new(&path).parent() {
        Some(parent) if parent.as_os_str().is_empty() => ".".to_owned(),
        Some(parent) => parent.to_string_lossy().into_owned(),
        None => path,
    };
    Ok(Value::from(parent))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check_text, check_unknown, fails};

    #[test]
    fn file_functions_read_the_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let path = dir.path().join("hello.txt");
        std::fs::write(&path, "hello world").unwrap_or_else(|err| panic!("{err}"));
        let path = path.display();
        check_text(&format!(r#"file("{path}")"#), "hello world");
        check_text(&format!(r#"filebase64("{path}")"#), "aGVsbG8gd29ybGQ=");
        // The digests of "hello world", as the documentation of md5, sha256 and
        // base64sha256 gives them.
        check_text(
            &format!(r#"filemd5("{path}")"#),
            "5eb63bbbe01eeed093cb22bb8f5acdc3",
        );
        check_text(
            &format!(r#"filesha256("{path}")"#),
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
        );
        check_text(
            &format!(r#"filebase64sha256("{path}")"#),
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=",
        );
        fails(&format!(r#"file("{path}.missing")"#), "cannot read");
        check_unknown("file(u)");
    }

    #[test]
    fn basename_and_dirname() {
        // Documentation: basename("foo/bar/baz.txt") is "baz.txt"; dirname("foo/bar/baz.txt")
        // is "foo/bar".
        check_text(r#"basename("foo/bar/baz.txt")"#, "baz.txt");
        check_text(r#"basename("/work/project")"#, "project");
        check_text(r#"dirname("foo/bar/baz.txt")"#, "foo/bar");
        check_text(r#"dirname("baz.txt")"#, ".");
    }
}
