//! What the scorer reads from the patched HCL itself: whether a file parses, the `import`
//! blocks, and a resource block's `lifecycle { ignore_changes }` list.

use hcl::{Body, Expression};

/// An `import { to = ..., id = ... }` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The address imported into, as written (`aws_sqs_queue.jobs`).
    pub to: String,
    /// The import id, when it is a literal string.
    pub id: Option<String>,
}

/// Parses a `.tf` or `.tfvars` text; the parser's message when it does not parse.
pub fn parse(text: &str) -> Result<Body, String> {
    hcl::parse(text).map_err(|e| e.to_string())
}

/// The `import` blocks of every `.tf` file of a project (files that do not parse are skipped:
/// the parse check reports them).
pub fn project_imports(files: &std::collections::BTreeMap<String, String>) -> Vec<Import> {
    files
        .iter()
        .filter(|(path, _)| path.ends_with(".tf"))
        .filter_map(|(_, text)| parse(text).ok())
        .flat_map(|body| imports(&body))
        .collect()
}

/// A `moved` block: in the module directory `dir` (empty for the root), the object at local
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

/// Every `moved` block of a project's `.tf` files.
pub fn project_moves(files: &std::collections::BTreeMap<String, String>) -> Vec<Move> {
    let mut moves = Vec::new();
    for (path, text) in files.iter().filter(|(path, _)| path.ends_with(".tf")) {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let Ok(body) = parse(text) else { continue };
        for block in body.blocks().filter(|b| b.identifier() == "moved") {
            let get = |key: &str| {
                block
                    .body()
                    .attributes()
                    .find(|a| a.key() == key)
                    .map(|a| a.expr().to_string().replace(' ', ""))
            };
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

/// The `import` blocks of a parsed file.
pub fn imports(body: &Body) -> Vec<Import> {
    body.blocks()
        .filter(|b| b.identifier() == "import")
        .filter_map(|b| {
            let mut to = None;
            let mut id = None;
            for attribute in b.body().attributes() {
                match (attribute.key(), attribute.expr()) {
                    ("to", expr) => to = Some(expr.to_string()),
                    ("id", Expression::String(s)) => id = Some(s.clone()),
                    _ => {}
                }
            }
            Some(Import { to: to?, id })
        })
        .collect()
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
