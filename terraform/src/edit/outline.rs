//! The top-level structures of each file, found by one parse and kept in step with later edits
//! by parsing again only the structures an edit touched.
//!
//! A run makes many edits to the same files. Parsing a whole file for every edit (to find its
//! block, then to check the result) costs time in the product of the edits and the file's size;
//! with an outline, finding a block is a lookup, an edit to one block is made on that block's
//! text alone, and the check after an edit parses the changed structures with one neighbour on
//! each side, so every file is parsed in full once per run.

use crate::syntax::parse_body;
use hcl::edit::Span;
use hcl::edit::structure::Structure;
use std::collections::HashMap;
use std::ops::Range;

/// A block's type and labels.
type Header = (String, Vec<String>);

/// One top-level structure: where it stands and, for a block, its type and labels.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    span: Range<usize>,
    header: Option<Header>,
}

/// The top-level structures of one text, in order, with the blocks by header.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    items: Vec<Item>,
    by_header: HashMap<Header, Vec<usize>>,
}

impl Outline {
    /// Parses `text` in full; the error is the parser's message.
    pub fn of(text: &str) -> Result<Outline, String> {
        let mut outline = Outline {
            items: items(text, 0..text.len())?,
            by_header: HashMap::new(),
        };
        outline.index_from(0);
        Ok(outline)
    }

    /// Moves this outline to `text`, made from its old text by replacing the range `old` with
    /// `new_len` bytes: only the structures the change touched, with one unchanged neighbour
    /// on each side, are parsed. An error means the text does not parse; the outline is then
    /// left as it was.
    pub fn edit(&mut self, text: &str, old: Range<usize>, new_len: usize) -> Result<(), String> {
        let delta = new_len as isize - old.len() as isize;
        let moved = |at: usize| (at as isize + delta) as usize;
        // Items wholly before the change, and the first wholly after it.
        let before = self
            .items
            .iter()
            .take_while(|i| i.span.end < old.start)
            .count();
        let after = self.items[before..]
            .iter()
            .position(|i| i.span.start > old.end)
            .map_or(self.items.len(), |at| before + at);
        let first = before.saturating_sub(1);
        let start = match before {
            0 => 0,
            _ => self.items[first].span.start,
        };
        let (end, last) = match self.items.get(after) {
            Some(item) => (moved(item.span.end), after + 1),
            None => (text.len(), self.items.len()),
        };
        let parsed = items(text, start..end)?;
        for item in &mut self.items[last..] {
            item.span = moved(item.span.start)..moved(item.span.end);
        }
        let same_headers = parsed.len() == last - first
            && parsed
                .iter()
                .zip(&self.items[first..last])
                .all(|(a, b)| a.header == b.header);
        let tail = last == self.items.len();
        let removed: Vec<Item> = self.items.splice(first..last, parsed).collect();
        if same_headers {
            return Ok(());
        }
        if tail {
            for (at, item) in removed.iter().enumerate() {
                if let Some(header) = &item.header {
                    self.unindex(header, first + at);
                }
            }
            self.index_from(first);
        } else {
            self.by_header.clear();
            self.index_from(0);
        }
        Ok(())
    }

    /// The spans of the top-level blocks of type `kind` with exactly `labels`.
    pub fn blocks(&self, kind: &str, labels: &[String]) -> Vec<Range<usize>> {
        let header = (kind.to_owned(), labels.to_vec());
        self.by_header
            .get(&header)
            .into_iter()
            .flatten()
            .map(|&at| self.items[at].span.clone())
            .collect()
    }

    /// Adds the blocks from position `from` on to the index.
    fn index_from(&mut self, from: usize) {
        for (at, item) in self.items.iter().enumerate().skip(from) {
            if let Some(header) = &item.header {
                self.by_header.entry(header.clone()).or_default().push(at);
            }
        }
    }

    /// Takes position `at` out of the index of `header`.
    fn unindex(&mut self, header: &Header, at: usize) {
        if let Some(positions) = self.by_header.get_mut(header) {
            positions.retain(|&p| p != at);
            if positions.is_empty() {
                self.by_header.remove(header);
            }
        }
    }
}

/// The lengths of the longest common prefix and suffix of two texts, on character boundaries
/// and not overlapping in the shorter one.
pub fn common_ends(old: &str, new: &str) -> (usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = common_run(
        a.len().min(b.len()),
        |n| a[n],
        |n| b[n],
        |at, len| a[at..at + len] == b[at..at + len],
    );
    while !old.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let room = a.len().min(b.len()) - prefix;
    let (la, lb) = (a.len(), b.len());
    let mut suffix = common_run(
        room,
        |n| a[la - 1 - n],
        |n| b[lb - 1 - n],
        |at, len| a[la - at - len..la - at] == b[lb - at - len..lb - at],
    );
    while !old.is_char_boundary(old.len() - suffix) {
        suffix -= 1;
    }
    (prefix, suffix)
}

/// How many of the first `limit` positions agree, comparing whole chunks at once (`same`)
/// before single bytes (`x`, `y`).
fn common_run(
    limit: usize,
    x: impl Fn(usize) -> u8,
    y: impl Fn(usize) -> u8,
    same: impl Fn(usize, usize) -> bool,
) -> usize {
    const CHUNK: usize = 256;
    let mut n = 0;
    while n + CHUNK <= limit && same(n, CHUNK) {
        n += CHUNK;
    }
    while n < limit && x(n) == y(n) {
        n += 1;
    }
    n
}

/// The top-level structures of `text[range]`, with spans in `text`.
fn items(text: &str, range: Range<usize>) -> Result<Vec<Item>, String> {
    let offset = range.start;
    let body = parse_body(&text[range]).map_err(|e| e.to_string())?;
    Ok(body
        .iter()
        .filter_map(|structure| {
            let span = structure.span()?;
            let header = match structure {
                Structure::Block(block) => Some((
                    block.ident.as_str().to_owned(),
                    block.labels.iter().map(|l| l.as_str().to_owned()).collect(),
                )),
                Structure::Attribute(_) => None,
            };
            Some(Item {
                span: span.start + offset..span.end + offset,
                header,
            })
        })
        .collect())
}

/// The outlines of the files a workspace edits, by path; each describes its file's current
/// text, since the workspace tells every change it makes.
#[derive(Debug, Default)]
pub struct Outlines {
    files: HashMap<String, Outline>,
}

impl Outlines {
    /// The outline of `text`, the current text of `path`: the kept one, else one from a full
    /// parse.
    pub fn of(&mut self, path: &str, text: &str) -> Result<&Outline, String> {
        if !self.files.contains_key(path) {
            self.files.insert(path.to_owned(), Outline::of(text)?);
        }
        Ok(&self.files[path])
    }

    /// Checks that `text`, the new text of `path` after the range `old` of its old text was
    /// replaced by `new_len` bytes, parses, and keeps its outline.
    pub fn edited(
        &mut self,
        path: &str,
        text: &str,
        old: Range<usize>,
        new_len: usize,
    ) -> Result<(), String> {
        if let Some(outline) = self.files.get_mut(path)
            && outline.edit(text, old, new_len).is_ok()
        {
            return Ok(());
        }
        // No outline yet, or the part parsed alone fails: a full parse decides, and its message
        // names the line in the file.
        let outline = Outline::of(text)?;
        self.files.insert(path.to_owned(), outline);
        Ok(())
    }

    /// Drops the outline of `path`, whose text changed behind it.
    pub fn forget(&mut self, path: &str) {
        self.files.remove(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# top\nlocals {\n  a = 1\n}\n\nresource \"aws_sqs_queue\" \"a\" {\n  name = \"a\"\n}\n\nregion = \"x\"\n\nresource \"aws_sqs_queue\" \"b\" {\n  name = \"b\"\n}\n";

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    fn block_text<'a>(outline: &Outline, text: &'a str, name: &str) -> &'a str {
        let labels = labels(&["aws_sqs_queue", name]);
        let spans = outline.blocks("resource", &labels);
        let [span] = spans.as_slice() else {
            panic!("one block {name}");
        };
        &text[span.clone()]
    }

    /// `outline` (of `old`) moved to `new`, told only the range that changed.
    fn edited(outline: &Outline, old: &str, new: &str) -> Result<Outline, String> {
        let (prefix, suffix) = common_ends(old, new);
        let mut edited = outline.clone();
        edited.edit(new, prefix..old.len() - suffix, new.len() - suffix - prefix)?;
        Ok(edited)
    }

    #[test]
    fn blocks_are_found_by_type_and_labels() {
        let outline = Outline::of(TEXT).expect("parses");
        assert_eq!(
            block_text(&outline, TEXT, "b"),
            "resource \"aws_sqs_queue\" \"b\" {\n  name = \"b\"\n}"
        );
        assert_eq!(outline.items.len(), 4);
        assert!(
            outline
                .blocks("resource", &labels(&["aws_sqs_queue"]))
                .is_empty()
        );
    }

    /// Every way of editing gives the outline a full parse of the new text would give.
    #[test]
    fn an_edit_gives_the_outline_of_a_full_parse() {
        let outline = Outline::of(TEXT).expect("parses");
        let edits = [
            TEXT.replace("name = \"a\"", "name = \"a-longer\"\n  delay = 5"),
            TEXT.replace("name = \"b\"", "name = \"\""),
            format!("{TEXT}\nresource \"aws_sqs_queue\" \"c\" {{\n  name = \"c\"\n}}\n"),
            TEXT.replace("region = \"x\"\n\n", ""),
            TEXT.replace("# top\n", "# top é\nvariable \"v\" {}\n"),
            TEXT.replace("}\n\nregion", "}\n\n# note\nregion"),
            TEXT.replace("\"b\" {", "\"c\" {"),
            TEXT.replace(
                "resource \"aws_sqs_queue\" \"a\"",
                "data \"aws_sqs_queue\" \"b\"",
            ),
            String::new(),
        ];
        for new in edits {
            assert_eq!(
                edited(&outline, TEXT, &new).expect("parses"),
                Outline::of(&new).expect("parses"),
                "after editing to:\n{new}"
            );
        }
    }

    /// Long texts are compared a chunk at a time; an edit in the middle is still found.
    #[test]
    fn an_edit_in_the_middle_of_a_long_file_is_found() {
        let block = |n: usize, value: &str| {
            format!("resource \"aws_sqs_queue\" \"q{n}\" {{\n  name = \"{value}\"\n}}\n\n")
        };
        let text: String = (0..60).map(|n| block(n, "x")).collect();
        let new: String = (0..60)
            .map(|n| block(n, if n == 30 { "changed" } else { "x" }))
            .collect();
        let at = text.find("\"q30\"").expect("q30");
        let value = at + text[at..].find("name = \"").expect("name") + "name = \"".len();
        assert_eq!(common_ends(&text, &new), (value, text.len() - value - 1));
        let outline = edited(&Outline::of(&text).expect("parses"), &text, &new).expect("parses");
        assert_eq!(outline, Outline::of(&new).expect("parses"));
        assert_eq!(
            block_text(&outline, &new, "q30"),
            block(30, "changed").trim_end()
        );
    }

    #[test]
    fn an_edit_that_breaks_the_text_is_refused() {
        let outline = Outline::of(TEXT).expect("parses");
        for broken in [
            TEXT.replace("name = \"a\"\n}", "name = \"a\"\n"),
            TEXT.replace("}\n\nregion", "}region"),
            format!("{TEXT}resource {{"),
        ] {
            let (prefix, suffix) = common_ends(TEXT, &broken);
            let mut kept = outline.clone();
            let range = prefix..TEXT.len() - suffix;
            assert!(
                kept.edit(&broken, range, broken.len() - suffix - prefix)
                    .is_err(),
                "{broken}"
            );
            assert_eq!(kept, outline);
        }
    }

    #[test]
    fn a_forgotten_outline_is_made_again() {
        let mut outlines = Outlines::default();
        outlines.of("main.tf", TEXT).expect("parses");
        outlines.forget("main.tf");
        let other = "resource \"aws_sqs_queue\" \"z\" {}\n";
        let outline = outlines.of("main.tf", other).expect("parses").clone();
        assert_eq!(block_text(&outline, other, "z"), other.trim_end());
    }
}
