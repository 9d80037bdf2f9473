//! What the scorer reads from the patched HCL itself, with its own parser and without the
//! product's code: whether a file parses, the `import` and `moved` blocks, and a resource
//! block's `lifecycle { ignore_changes }` list. Terraform reads `import` blocks in the root
//! module only and `moved` blocks in every module. JSON configuration (`.tf.json`) is not
//! read: no fixture project has any.

use hcl::{Body, Expression};
use std::collections::BTreeMap;

/// An `import` block of the root module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The address imported into, as written without spaces (`aws_sqs_queue.jobs`).
    pub to: String,
    /// The import id, when it is a literal string.
    pub id: Option<String>,
}

/// A `moved` block: in module directory `dir` (empty for the root), the object at local
/// address `from` is now at `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The module directory, relative to the root.
    pub dir: String,
    /// The old local address.
    pub from: String,
    /// The new local address.
    pub to: String,
}

/// The `import` blocks of a parsed file.
pub fn imports(body: &Body) -> Vec<Import> {
    body.blocks()
        .filter(|b| b.identifier() == "import")
        .filter_map(|b| {
            let id = b
                .body()
                .attributes()
                .find(|a| a.key() == "id")
                .and_then(|a| match a.expr() {
                    Expression::String(s) => Some(s.clone()),
                    _ => None,
                });
            Some(Import {
                to: written(b.body(), "to")?,
                id,
            })
        })
        .collect()
}

/// The `import` blocks of the root module's files (`path → text`; files that do not parse
/// are skipped: the `parses` check reports them).
pub fn project_imports(files: &BTreeMap<String, String>) -> Vec<Import> {
    files
        .iter()
        .filter(|(path, _)| is_hcl_configuration(path) && !path.contains('/'))
        .filter_map(|(_, text)| hcl::parse(text).ok())
        .flat_map(|body| imports(&body))
        .collect()
}

/// Every `moved` block of the project's files, with its module directory.
pub fn project_moves(files: &BTreeMap<String, String>) -> Vec<Move> {
    let mut moves = Vec::new();
    for (path, text) in files.iter().filter(|(path, _)| is_hcl_configuration(path)) {
        let Ok(body) = hcl::parse(text) else { continue };
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for block in body.blocks().filter(|b| b.identifier() == "moved") {
            let get = |key: &str| written(block.body(), key);
            if let (Some(from), Some(to)) = (get("from"), get("to")) {
                moves.push(Move {
                    dir: dir.to_owned(),
                    from,
                    to,
                });
            }
        }
    }
    moves
}

/// Whether Terraform (or OpenTofu) reads the file as native-syntax configuration.
fn is_hcl_configuration(path: &str) -> bool {
    path.ends_with(".tf") || path.ends_with(".tofu")
}

/// An attribute's expression as written, without spaces (`aws_s3_bucket.logs["a"]`).
fn written(body: &Body, key: &str) -> Option<String> {
    body.attributes()
        .find(|a| a.key() == key)
        .map(|a| a.expr().to_string().replace(' ', ""))
}

/// Parses a `.tf` or `.tfvars` text; the parser's message when it does not parse.
pub fn parse(text: &str) -> Result<Body, String> {
    hcl::parse(text).map_err(|e| e.to_string())
}

/// The names in the `ignore_changes` list of the resource block `text` (the block's own
/// source, as a configuration instance's span gives it): the first step of each entry, or
/// `all`. Empty when the block has no such list.
pub fn ignore_changes(text: &str) -> Vec<String> {
    let Ok(body) = hcl::parse(text) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for resource in body.blocks() {
        for lifecycle in resource
            .body()
            .blocks()
            .filter(|b| b.identifier() == "lifecycle")
        {
            for attribute in lifecycle.body().attributes() {
                if attribute.key() != "ignore_changes" {
                    continue;
                }
                match attribute.expr() {
                    Expression::Array(items) => names.extend(items.iter().map(first_step)),
                    other => names.push(first_step(other)),
                }
            }
        }
    }
    names
}

/// `delay_seconds` of `delay_seconds`, `tags` of `tags["Team"]` or `tags.Team`.
fn first_step(expr: &Expression) -> String {
    let text = expr.to_string();
    let end = text.find(['.', '[']).unwrap_or(text.len());
    text[..end].trim().trim_matches('"').to_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn import_blocks_are_read() {
        let body = parse(
            "import {\n  to = aws_sqs_queue.extra\n  id = \"https://sqs/q\"\n}\nresource \"aws_sqs_queue\" \"extra\" {}\n",
        )
        .unwrap();
        assert_eq!(
            imports(&body),
            vec![Import {
                to: "aws_sqs_queue.extra".into(),
                id: Some("https://sqs/q".into())
            }]
        );
    }

    #[test]
    fn imports_are_read_in_the_root_module_and_moves_everywhere() {
        let files = BTreeMap::from([
            (
                "main.tf".to_owned(),
                "import {\n  to = aws_s3_bucket.logs[\"a\"]\n  id = \"logs-a\"\n}\nmoved {\n  from = aws_sqs_queue.a\n  to   = aws_sqs_queue.b\n}\n".to_owned(),
            ),
            (
                "modules/q/main.tf".to_owned(),
                "import {\n  to = aws_sqs_queue.x\n  id = \"x\"\n}\nmoved {\n  from = aws_sqs_queue.c\n  to   = aws_sqs_queue.d\n}\n".to_owned(),
            ),
            ("broken.tf".to_owned(), "import {".to_owned()),
        ]);
        assert_eq!(
            project_imports(&files),
            vec![Import {
                to: "aws_s3_bucket.logs[\"a\"]".into(),
                id: Some("logs-a".into())
            }]
        );
        let moves = project_moves(&files);
        let dirs: Vec<(&str, &str, &str)> = moves
            .iter()
            .map(|m| (m.dir.as_str(), m.from.as_str(), m.to.as_str()))
            .collect();
        assert_eq!(
            dirs,
            [
                ("", "aws_sqs_queue.a", "aws_sqs_queue.b"),
                ("modules/q", "aws_sqs_queue.c", "aws_sqs_queue.d")
            ]
        );
    }

    #[test]
    fn ignore_changes_names_the_first_step() {
        let block = "resource \"aws_sqs_queue\" \"q\" {\n  name = \"q\"\n  lifecycle {\n    ignore_changes = [delay_seconds, tags[\"Team\"]]\n  }\n}\n";
        assert_eq!(ignore_changes(block), vec!["delay_seconds", "tags"]);
        assert!(ignore_changes("resource \"a\" \"b\" {}\n").is_empty());
    }

    #[test]
    fn broken_text_does_not_parse() {
        assert!(parse("resource \"a\" \"b\" {\n").is_err());
    }
}
