//! The configuration's `import`, `moved` and `removed` blocks, read from the text: what the
//! project has already adopted (an imported id is managed even before `terraform apply`), where
//! objects moved, and what it lets go of.

use std::collections::BTreeMap;

use hcl::{Body, Expression};

/// An `import { to = ..., id = ... }` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The address imported into, as written (`aws_sqs_queue.jobs`).
    pub to: String,
    /// The import id, when it is a literal string.
    pub id: Option<String>,
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

/// The `import` blocks of the root module's `.tf` files (Terraform reads them there only;
/// files that do not parse are skipped).
pub fn project_imports(files: &BTreeMap<String, String>) -> Vec<Import> {
    root_bodies(files).flat_map(|body| imports(&body)).collect()
}

/// The addresses the root module's `removed` blocks let go of.
pub fn project_removed(files: &BTreeMap<String, String>) -> Vec<String> {
    root_bodies(files)
        .flat_map(|body| {
            body.blocks()
                .filter(|b| b.identifier() == "removed")
                .filter_map(|b| attribute_text(b.body(), "from"))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every `moved` block of a project's `.tf` files.
pub fn project_moves(files: &BTreeMap<String, String>) -> Vec<Move> {
    let mut moves = Vec::new();
    for (path, text) in files
        .iter()
        .filter(|(path, _)| super::json::is_configuration(path))
    {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let Ok(body) = hcl::parse(text) else { continue };
        for block in body.blocks().filter(|b| b.identifier() == "moved") {
            let get = |key: &str| attribute_text(block.body(), key);
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

/// The parsed root-module `.tf` files.
fn root_bodies(files: &BTreeMap<String, String>) -> impl Iterator<Item = Body> + '_ {
    files
        .iter()
        .filter(|(path, _)| super::json::is_configuration(path) && !path.contains('/'))
        .filter_map(|(_, text)| hcl::parse(text).ok())
}

/// An attribute's expression as written, without spaces (`aws_s3_bucket.logs["a"]`).
fn attribute_text(body: &Body, key: &str) -> Option<String> {
    body.attributes()
        .find(|a| a.key() == key)
        .map(|a| a.expr().to_string().replace(' ', ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(text: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("main.tf".to_owned(), text.to_owned()),
            (
                "modules/x/main.tf".to_owned(),
                "import {\n  to = aws_sqs_queue.inner\n  id = \"q\"\n}\n".to_owned(),
            ),
        ])
    }

    #[test]
    fn root_import_and_removed_blocks_are_read() {
        let text = "import {\n  to = aws_sqs_queue.jobs\n  id = \"https://q/jobs\"\n}\n\
                    import {\n  to = aws_s3_bucket.b\n  id = var.bucket\n}\n\
                    removed {\n  from = aws_instance.old\n  lifecycle {\n    destroy = false\n  }\n}\n";
        let imports = project_imports(&files(text));
        assert_eq!(
            imports,
            [
                Import {
                    to: "aws_sqs_queue.jobs".into(),
                    id: Some("https://q/jobs".into())
                },
                Import {
                    to: "aws_s3_bucket.b".into(),
                    id: None
                }
            ]
        );
        assert_eq!(project_removed(&files(text)), ["aws_instance.old"]);
    }

    #[test]
    fn moved_blocks_carry_their_directory() {
        let mut all = files("moved {\n  from = aws_s3_bucket.a\n  to = aws_s3_bucket.b[0]\n}\n");
        all.insert(
            "modules/x/moves.tf".into(),
            "moved {\n  from = aws_sqs_queue.q\n  to = aws_sqs_queue.q[0]\n}\n".into(),
        );
        let moves = project_moves(&all);
        assert_eq!(moves.len(), 2);
        assert_eq!(moves[0].dir, "");
        assert_eq!(moves[0].to, "aws_s3_bucket.b[0]");
        assert_eq!(moves[1].dir, "modules/x");
    }
}
