//! The blocks that read a resource or module call: before an instance is removed, every
//! reference to it is followed, so a deletion never leaves a reference dangling or changes
//! another resource unseen.

use std::ops::Range;

use hcl::edit::Span;
use hcl::edit::structure::Body;

/// A top-level block that refers to the removed block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// The block's type: `resource`, `output`, `locals`, `module`, ...
    pub kind: String,
    /// Its labels.
    pub labels: Vec<String>,
    /// The file.
    pub file: String,
    /// The line of the first reference, from 1.
    pub line: usize,
    /// Whether a reference names instance `key` itself (`aws_x.y["key"]`, `module.z["key"]`).
    pub names_key: bool,
}

impl Reader {
    /// The block as written, with where: `resource "aws_x" "y" (main.tf:12)`.
    pub fn describe(&self) -> String {
        let labels: Vec<String> = self.labels.iter().map(|l| format!("\"{l}\"")).collect();
        format!(
            "{} {} ({}:{})",
            self.kind,
            labels.join(" "),
            self.file,
            self.line
        )
        .replace("  (", " (")
    }
}

/// The top-level blocks of the files in `dir` (the module's directory, `""` for the root)
/// that refer to `reference` (`aws_route53_record.validation`, `module.users`), the block at
/// `own` (file and span) left out; `key` is the instance key being removed, if any.
pub fn readers(
    files: &std::collections::BTreeMap<String, String>,
    dir: &str,
    reference: &str,
    own: (&str, &Range<usize>),
    key: Option<&str>,
) -> Vec<Reader> {
    let mut found = Vec::new();
    let in_dir = |path: &str| path.rsplit_once('/').map_or("", |(d, _)| d) == dir;
    for (file, text) in files
        .iter()
        .filter(|(p, _)| in_dir(p) && p.ends_with(".tf"))
    {
        let Ok(body) = hcl::edit::parser::parse_body(text) else {
            continue;
        };
        found.extend(readers_in(&body, file, text, reference, own, key));
    }
    found
}

fn readers_in(
    body: &Body,
    file: &str,
    text: &str,
    reference: &str,
    own: (&str, &Range<usize>),
    key: Option<&str>,
) -> Vec<Reader> {
    let keyed = key.map(|k| format!("{reference}[\"{k}\"]"));
    body.blocks()
        .filter_map(|block| {
            let span = block.span()?;
            if file == own.0 && span.start == own.1.start {
                return None;
            }
            let kind = block.ident.as_str();
            if matches!(kind, "import" | "moved" | "removed") {
                return None;
            }
            let inner = &text[span.clone()];
            let at = references(inner, reference).next()?;
            Some(Reader {
                kind: kind.to_owned(),
                labels: block.labels.iter().map(|l| l.as_str().to_owned()).collect(),
                file: file.to_owned(),
                line: text[..span.start + at].matches('\n').count() + 1,
                names_key: keyed.as_ref().is_some_and(|k| inner.contains(k.as_str())),
            })
        })
        .collect()
}

/// The offsets in `text` where `reference` is written as a reference: not part of a longer
/// name, and followed by an attribute, an index, or the end of an expression.
fn references<'t>(text: &'t str, reference: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(reference).filter_map(move |(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + reference.len()..].chars().next();
        let joined =
            |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
        (!joined(before) && before != Some('"') && !joined(after) && after != Some('"'))
            .then_some(at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_are_the_other_blocks_that_refer_to_it() {
        let text = r#"resource "aws_route53_record" "validation" {
  for_each = { for o in aws_acm_certificate.site.domain_validation_options : o.domain_name => o }
  name     = each.value.resource_record_name
}

resource "aws_acm_certificate_validation" "site" {
  validation_record_fqdns = [for r in aws_route53_record.validation : r.fqdn]
}

output "fqdn" {
  value = aws_route53_record.validation["a.example.com"].fqdn
}

resource "aws_route53_record" "validation_extra" {
  name = "x"
}
"#;
        let files = std::collections::BTreeMap::from([
            ("main.tf".to_owned(), text.to_owned()),
            (
                "modules/x/main.tf".to_owned(),
                "output \"o\" { value = aws_route53_record.validation }\n".to_owned(),
            ),
        ]);
        let own = 0..10;
        let found = readers(
            &files,
            "",
            "aws_route53_record.validation",
            ("main.tf", &own),
            Some("a.example.com"),
        );
        let described: Vec<(String, bool)> =
            found.iter().map(|r| (r.describe(), r.names_key)).collect();
        assert_eq!(
            described,
            [
                (
                    "resource \"aws_acm_certificate_validation\" \"site\" (main.tf:7)".to_owned(),
                    false
                ),
                ("output \"fqdn\" (main.tf:11)".to_owned(), true),
            ]
        );
    }
}
