//! Copies of fixture projects for the harness's scratch directories.

use std::path::{Path, PathBuf};

/// Copies the project at `from` into `to` (created when missing), following symbolic links
/// to the files and directories they name (a link back into a directory being copied is left
/// out) and leaving out `.git`, `.retrace` and the providers of `.terraform`.
pub fn copy_project(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_tree(from, to, &mut vec![from.canonicalize()?])
}

/// Copies `from` into `to`; `open` holds the directories being copied, to stop at a loop.
fn copy_tree(from: &Path, to: &Path, open: &mut Vec<PathBuf>) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git"
            || name == ".retrace"
            || name == "providers" && from.ends_with(".terraform")
        {
            continue;
        }
        let Ok(real) = entry.path().canonicalize() else {
            continue; // a dangling link
        };
        if real.is_dir() {
            if open.iter().any(|o| o.starts_with(&real)) {
                continue;
            }
            open.push(real);
            copy_tree(&entry.path(), &to.join(&name), open)?;
            open.pop();
        } else if real.is_file() {
            std::fs::copy(&real, to.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_modules_and_links_are_copied_and_loops_and_tool_folders_are_not() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let from = temp.path().join("project");
        std::fs::create_dir_all(from.join("modules/bucket")).expect("dirs");
        std::fs::create_dir_all(from.join(".git")).expect("dirs");
        std::fs::create_dir_all(from.join(".terraform/providers/x")).expect("dirs");
        std::fs::create_dir_all(from.join(".terraform/modules")).expect("dirs");
        std::fs::write(from.join("main.tf"), "# main").expect("write");
        std::fs::write(from.join("modules/bucket/main.tf"), "# bucket").expect("write");
        std::fs::write(from.join(".git/HEAD"), "ref").expect("write");
        std::fs::write(from.join(".terraform/modules/modules.json"), "{}").expect("write");
        let shared = temp.path().join("shared");
        std::fs::create_dir_all(&shared).expect("dirs");
        std::fs::write(shared.join("vars.tf"), "# shared").expect("write");
        std::os::unix::fs::symlink(&shared, from.join("modules/shared")).expect("link");
        std::os::unix::fs::symlink(&from, from.join("modules/loop")).expect("link");

        let to = temp.path().join("copy");
        copy_project(&from, &to).expect("copied");

        let read = |p: &str| std::fs::read_to_string(to.join(p)).ok();
        assert_eq!(read("main.tf").as_deref(), Some("# main"));
        assert_eq!(read("modules/bucket/main.tf").as_deref(), Some("# bucket"));
        assert_eq!(read("modules/shared/vars.tf").as_deref(), Some("# shared"));
        assert_eq!(
            read(".terraform/modules/modules.json").as_deref(),
            Some("{}")
        );
        assert!(!to.join("modules/loop").exists());
        assert!(!to.join(".git").exists());
        assert!(!to.join(".terraform/providers").exists());
    }
}
