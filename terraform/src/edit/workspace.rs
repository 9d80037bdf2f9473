//! The files a run edits, changed in place one step at a time.
//!
//! A step (one tool call) opens files or parts of them as [`Doc`]s and saves them back. A save
//! replaces only the bytes that changed and records what they were, so a step the reconciler
//! refuses afterwards is undone exactly; each file's [`Outline`](super::outline::Outline) is kept
//! in step, so a block is found without parsing its file again and the check after an edit
//! parses only what the edit touched.

use super::locate::Target;
use super::ops::Doc;
use super::outline::{Outlines, common_ends};
use super::text::whole_lines;
use super::{EditError, Files};
use std::collections::BTreeSet;
use std::ops::Range;

/// One change of the current step: the file, the range of its new text, and the text that
/// range replaced.
#[derive(Debug)]
struct Undo {
    path: String,
    range: Range<usize>,
    replaced: String,
}

/// The files being edited, with the changes of the current step.
#[derive(Debug)]
pub struct Workspace {
    files: Files,
    outlines: Outlines,
    undo: Vec<Undo>,
}

impl Workspace {
    /// A workspace over `files`.
    pub fn new(files: Files) -> Workspace {
        Workspace {
            files,
            outlines: Outlines::default(),
            undo: Vec::new(),
        }
    }

    /// The current text of `path`.
    pub fn text(&self, path: &str) -> Result<&str, EditError> {
        self.files
            .get(path)
            .map(String::as_str)
            .ok_or_else(|| EditError::NoFile {
                file: path.to_owned(),
            })
    }

    /// The paths of the files, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The files as they are now.
    pub fn into_files(self) -> Files {
        self.files
    }

    /// Starts a step: the changes made so far are kept.
    pub fn begin(&mut self) {
        self.undo.clear();
    }

    /// The files the current step changed.
    pub fn step_changes(&self) -> BTreeSet<&str> {
        self.undo.iter().map(|u| u.path.as_str()).collect()
    }

    /// Undoes the current step's changes.
    pub fn rollback(&mut self) {
        for undo in self.undo.drain(..).rev() {
            if let Some(text) = self.files.get_mut(&undo.path) {
                text.replace_range(undo.range, &undo.replaced);
            }
            self.outlines.forget(&undo.path);
        }
    }

    /// Opens `path` whole.
    pub fn open(&self, path: &str) -> Result<Doc, EditError> {
        Ok(Doc::new(path, self.text(path)?))
    }

    /// Opens the end of `path` alone (its trailing blank space), for appending blocks.
    pub fn open_end(&self, path: &str) -> Result<Doc, EditError> {
        let text = self.text(path)?;
        let kept = text.trim_end_matches([' ', '\t', '\r', '\n']).len();
        Ok(Doc::part(path, text, kept..text.len()))
    }

    /// Opens the file holding `target`: the one it names, or the only `.tf` file with the block.
    pub fn open_for(&mut self, target: &Target) -> Result<Doc, EditError> {
        let file = self.file_for(target)?;
        self.open(&file)
    }

    /// Opens the one top-level block `target` names alone, for an edit inside it; the whole
    /// file when the block is missing or repeated, so the edit reports that as usual.
    pub fn open_block(&mut self, target: &Target) -> Result<Doc, EditError> {
        let file = self.file_for(target)?;
        let spans = self.spans(&file, &target.block_type, &target.labels)?;
        let text = self.text(&file)?;
        Ok(match spans.as_slice() {
            [span] => Doc::part(&file, text, whole_lines(text, span, false)),
            _ => Doc::new(&file, text),
        })
    }

    /// Whether `path` has a top-level block `kind` with exactly `labels`.
    pub fn has_block(
        &mut self,
        path: &str,
        kind: &str,
        labels: &[String],
    ) -> Result<bool, EditError> {
        Ok(!self.spans(path, kind, labels)?.is_empty())
    }

    /// The spans of the top-level blocks `kind` with exactly `labels` in `path`.
    fn spans(
        &mut self,
        path: &str,
        kind: &str,
        labels: &[String],
    ) -> Result<Vec<Range<usize>>, EditError> {
        let text = self.files.get(path).ok_or_else(|| EditError::NoFile {
            file: path.to_owned(),
        })?;
        let outline = self
            .outlines
            .of(path, text)
            .map_err(|message| EditError::Parse {
                file: path.to_owned(),
                message,
            })?;
        Ok(outline.blocks(kind, labels))
    }

    /// The file holding `target`: the one it names, or the only `.tf` file with the block.
    fn file_for(&mut self, target: &Target) -> Result<String, EditError> {
        if let Some(file) = &target.file {
            return Ok(file.clone());
        }
        let paths: Vec<String> = self
            .paths()
            .filter(|p| p.ends_with(".tf"))
            .map(str::to_owned)
            .collect();
        let mut holders = Vec::new();
        for path in paths {
            if self.has_block(&path, &target.block_type, &target.labels)? {
                holders.push(path);
            }
        }
        match holders.len() {
            1 => Ok(holders.remove(0)),
            0 => Err(EditError::NotFound {
                file: "*.tf".to_owned(),
                address: target.address(),
                path: String::new(),
            }),
            count => Err(EditError::Ambiguous {
                file: holders.join(", "),
                address: target.address(),
                path: String::new(),
                count,
            }),
        }
    }

    /// Writes `doc` back after checking that its file still parses: only the bytes that
    /// changed are replaced, and only the structures around them are parsed again once the
    /// file has an outline.
    pub fn save(&mut self, doc: Doc) -> Result<(), EditError> {
        let Doc {
            path, text, window, ..
        } = doc;
        let file = self
            .files
            .get_mut(&path)
            .ok_or_else(|| EditError::NoFile { file: path.clone() })?;
        let window = window.unwrap_or(0..file.len());
        let (prefix, suffix) = common_ends(&file[window.clone()], &text);
        if prefix == text.len() && prefix == window.len() {
            return Ok(());
        }
        let old = window.start + prefix..window.end - suffix;
        let piece = &text[prefix..text.len() - suffix];
        let replaced = file[old.clone()].to_owned();
        file.replace_range(old.clone(), piece);
        let new = old.start..old.start + piece.len();
        if let Err(message) = self.outlines.edited(&path, file, old, piece.len()) {
            file.replace_range(new, &replaced);
            return Err(EditError::Internal {
                file: path,
                message: format!("the edited text does not parse: {message}"),
            });
        }
        self.undo.push(Undo {
            path,
            range: new,
            replaced,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "resource \"aws_sqs_queue\" \"a\" {\n  name = \"a\"\n}\n\nresource \"aws_sqs_queue\" \"b\" {\n  name = \"b\"\n}\n";

    fn target(name: &str) -> Target {
        Target {
            file: Some("main.tf".to_owned()),
            block_type: "resource".to_owned(),
            labels: vec!["aws_sqs_queue".to_owned(), name.to_owned()],
            path: Vec::new(),
        }
    }

    fn workspace() -> Workspace {
        Workspace::new(Files::from([("main.tf".to_owned(), MAIN.to_owned())]))
    }

    #[test]
    fn a_block_opened_alone_is_written_back_in_place() {
        let mut ws = workspace();
        ws.begin();
        let mut doc = ws.open_block(&target("b")).expect("opens");
        assert_eq!(
            doc.text,
            "resource \"aws_sqs_queue\" \"b\" {\n  name = \"b\"\n}\n"
        );
        doc.text = doc.text.replace("\"b\"\n", "\"b2\"\n");
        ws.save(doc).expect("saves");
        assert_eq!(
            ws.text("main.tf").expect("file"),
            MAIN.replace("\"b\"\n", "\"b2\"\n")
        );
        assert_eq!(ws.step_changes(), BTreeSet::from(["main.tf"]));
    }

    #[test]
    fn a_rolled_back_step_leaves_the_text_and_its_blocks_as_they_were() {
        let mut ws = workspace();
        ws.begin();
        let mut doc = ws.open_end("main.tf").expect("opens");
        doc.text = "\n\nresource \"aws_sqs_queue\" \"c\" {}\n".to_owned();
        ws.save(doc).expect("saves");
        let mut doc = ws.open_block(&target("a")).expect("opens");
        doc.text = doc.text.replace("name", "# renamed\n  name");
        ws.save(doc).expect("saves");
        assert!(
            ws.has_block("main.tf", "resource", &target("c").labels)
                .expect("outline")
        );
        ws.rollback();
        assert_eq!(ws.text("main.tf").expect("file"), MAIN);
        assert!(
            !ws.has_block("main.tf", "resource", &target("c").labels)
                .expect("outline")
        );
        let doc = ws.open_block(&target("b")).expect("opens");
        assert!(doc.text.starts_with("resource \"aws_sqs_queue\" \"b\""));
    }

    #[test]
    fn an_edit_that_does_not_parse_is_refused_and_changes_nothing() {
        let mut ws = workspace();
        ws.begin();
        let mut doc = ws.open_block(&target("a")).expect("opens");
        doc.text = doc.text.replace('}', "");
        let error = ws.save(doc).expect_err("refused").to_string();
        assert!(
            error.contains("main.tf") && error.contains("does not parse"),
            "{error}"
        );
        assert_eq!(ws.text("main.tf").expect("file"), MAIN);
        assert!(ws.step_changes().is_empty());
    }
}
