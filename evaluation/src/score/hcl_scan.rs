//! What the scorer reads from the patched HCL itself: whether a file parses, the `import` and
//! `moved` blocks (read as the reconciler reads them), and a resource block's
//! `lifecycle { ignore_changes }` list.

use hcl::{Body, Expression};

pub use reconciler::terraform::config::{Import, Move, imports, project_imports, project_moves};

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
