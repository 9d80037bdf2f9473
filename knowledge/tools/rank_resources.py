#!/usr/bin/env python3
"""Rank the AWS resource types Terraform code uses most, from public Terraform code.

Run from the workspace root (Python 3.11, standard library only, plus `git` for module mirrors):

    python3 knowledge/tools/rank_resources.py \
        --corpus ../shared/terraform-corpus \
        --modules /work/.mirror/terraform-aws-modules+terraform-aws-*/repo

Sources (knowledge/data/RANKING.md explains the method and its limits):

* corpus: every `.tf` and `.tf.json` file under the corpus directory (its projects and their
  vendored modules);
* modules: the module code (the root module and `modules/*`, not `examples/`, `test(s)/` or
  `wrappers/`) of the registry's terraform-aws-modules repositories, read from git directories
  (a bare mirror or a checkout) at their HEAD commit, or from plain directories;
* examples: the `examples/` directories of the same repositories.

Each source counts a distinct file content once (a module vendored under several keys counts
once). A type's score is the number of distinct files declaring it in the three sources, plus
the number of calls (`source = "terraform-aws-modules/NAME/aws[//modules/SUB]"`, in any file
read) of a module that declares it, directly or through the modules it calls. Ties are broken
by declaring files, then by name. Output: knowledge/data/resource-ranking.json, counts only (no
code is copied).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import posixpath
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parent / "data" / "resource-ranking.json"
SKIPPED_DIRS = {"examples", "example", "test", "tests", "wrappers", "docs", ".terraform", ".git"}
RESOURCE = re.compile(r'^\s*resource\s+"?(aws_[a-z0-9_]+)"?\s+"?[A-Za-z0-9_-]+"?\s*\{', re.M)
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


class RankError(Exception):
    """A problem with an input; the message names it."""


def declared_types(path: str, text: str) -> list[str]:
    """The `aws_*` resource types a configuration file declares, once per `resource` block."""
    if path.endswith(".tf.json"):
        return json_declared_types(path, text)
    return RESOURCE.findall(BLOCK_COMMENT.sub("", text))


def json_declared_types(path: str, text: str) -> list[str]:
    """`resource` blocks of a file in Terraform's JSON syntax."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise RankError(f"{path}: not JSON: {error}") from error
    found: list[str] = []
    for resources in as_list(document.get("resource") if isinstance(document, dict) else None):
        for name, blocks in (resources or {}).items():
            if name.startswith("aws_"):
                found += [name] * sum(len(b) for b in as_list(blocks) if isinstance(b, dict))
    return found


def as_list(value) -> list:
    """A JSON-syntax block body may be an object or an array of objects."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def is_configuration(path: str) -> bool:
    """A Terraform configuration file."""
    return path.endswith(".tf") or path.endswith(".tf.json")


def is_module_code(path: str) -> bool:
    """A module repository's own code: not its examples, tests or wrappers."""
    return is_configuration(path) and not SKIPPED_DIRS.intersection(Path(path).parts[:-1])


def is_example(path: str) -> bool:
    """A configuration file of a module repository's `examples/` (how its users call it)."""
    parts = Path(path).parts
    return is_configuration(path) and parts[0] == "examples" and not (
        SKIPPED_DIRS - {"examples"}).intersection(parts[1:-1])


def scan_corpus(corpus: Path, census: "Census") -> list[str]:
    """Reads the corpus, each distinct file once; returns the project names."""
    projects = sorted(p.name for p in corpus.iterdir() if p.is_dir())
    for project in projects:
        for path in sorted((corpus / project).rglob("*")):
            if path.is_file() and is_configuration(path.name):
                census.read("corpus", str(path), path.read_text(encoding="utf-8", errors="replace"))
    return projects


def unseen(text: str, seen: set[str]) -> bool:
    """True the first time a file content is met."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest in seen:
        return False
    seen.add(digest)
    return True


def git(repo: Path, *args: str) -> str:
    """A git command's output in a git directory."""
    done = subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise RankError(f"{repo}: git {' '.join(args)}: {done.stderr.decode().strip()}")
    return done.stdout.decode("utf-8", errors="replace")


def module_files(repo: Path) -> tuple[str, list[tuple[str, str]]]:
    """The commit (or "working tree") and the configuration files of a repository."""
    git_dir = repo if (repo / "HEAD").is_file() else repo / ".git"
    if (git_dir / "HEAD").is_file():
        commit = git(git_dir, "rev-parse", "HEAD").strip()
        paths = [p for p in git(git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
                 if is_module_code(p) or is_example(p)]
        return commit, [(p, git(git_dir, "show", f"HEAD:{p}")) for p in paths]
    paths = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file())
    return "working tree", [(p, (repo / p).read_text(encoding="utf-8", errors="replace"))
                            for p in paths if is_module_code(p) or is_example(p)]


def module_name(repo: Path) -> str:
    """`terraform-aws-modules/terraform-aws-vpc` from a mirror path or a checkout's name."""
    for part in reversed(repo.resolve().parts):
        if "+" in part:
            return part.replace("+", "/")
        if part.startswith("terraform-aws-"):
            return f"terraform-aws-modules/{part}"
    raise RankError(f"{repo}: cannot tell which repository this is")


def scan_modules(repos: list[Path], census: "Census") -> list[dict]:
    """Reads the module repositories' code and examples; returns each repository's address,
    commit and file counts."""
    described = []
    for repo in repos:
        name = module_name(repo)
        commit, files = module_files(repo)
        for path, text in files:
            kind = "modules" if is_module_code(path) else "examples"
            census.read(kind, f"{name}/{path}", text)
            if kind == "modules":
                census.module_dirs.setdefault((name, parent(path)), []).append(text)
        described.append({"repository": f"https://github.com/{name}", "commit": commit,
                          "code_files": sum(is_module_code(p) for p, _ in files),
                          "example_files": sum(not is_module_code(p) for p, _ in files)})
    return sorted(described, key=lambda d: d["repository"])


def parent(path: str) -> str:
    """The directory of a path inside a repository ("" for the root)."""
    return posixpath.dirname(path)


@dataclass
class Census:
    """What the sources declare and call.

    `files[source][type]`: distinct files of the source declaring the type; `calls`: the
    registry addresses of terraform-aws-modules modules called, one entry per call in a
    distinct file; `module_dirs`: the module code files of each (repository, directory)."""
    files: dict[str, dict[str, int]] = field(
        default_factory=lambda: {source: {} for source in SOURCES})
    calls: list[tuple[str, str]] = field(default_factory=list)
    module_dirs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    seen: dict[str, set[str]] = field(default_factory=lambda: {source: set() for source in SOURCES})

    def read(self, source: str, path: str, text: str) -> None:
        """Counts one file of a source, unless the source already had the same content."""
        if not unseen(text, self.seen[source]):
            return
        for name in set(declared_types(path, text)):
            self.files[source][name] = self.files[source].get(name, 0) + 1
        self.calls += registry_calls(text)


SOURCES = ("corpus", "modules", "examples")
REGISTRY_CALL = re.compile(
    r'"?source"?\s*[=:]\s*"(?:registry\.terraform\.io/)?terraform-aws-modules/([a-z0-9-]+)/aws'
    r'(?://([^"?]+))?')
LOCAL_CALL = re.compile(r'"?source"?\s*[=:]\s*"(\.\.?/[^"?]*)"')


def registry_calls(text: str) -> list[tuple[str, str]]:
    """(repository, directory) of each terraform-aws-modules module a file calls."""
    return [(f"terraform-aws-modules/terraform-aws-{name}", (sub or "").strip("/"))
            for name, sub in REGISTRY_CALL.findall(BLOCK_COMMENT.sub("", text))]


def module_types(census: Census, module: tuple[str, str], busy: frozenset = frozenset(),
                 memo: dict | None = None) -> set[str] | None:
    """The types a module directory declares, with those of the modules it calls (local and
    registry ones), or None when no repository read holds the directory."""
    memo = {} if memo is None else memo
    if module in memo:
        return memo[module]
    texts = census.module_dirs.get(module)
    if texts is None:
        return None
    found: set[str] = set()
    for text in texts:
        found.update(RESOURCE.findall(BLOCK_COMMENT.sub("", text)))
        called = registry_calls(text) + [
            (module[0], posixpath.normpath(posixpath.join(module[1], local)).lstrip("./"))
            for local in LOCAL_CALL.findall(text)]
        for callee in called:
            if callee not in busy and callee != module:
                found |= module_types(census, callee, busy | {module}, memo) or set()
    memo[module] = found
    return found


def ranking(census: Census, top: int) -> tuple[list[dict], list[str]]:
    """The types ordered by score (declaring files plus module calls reaching them), then
    declaring files, then name, the first `top` kept; and the module calls no repository read
    resolves."""
    reached: dict[str, int] = {}
    unresolved = set()
    memo: dict = {}
    for call in census.calls:
        types = module_types(census, call, memo=memo)
        if types is None:
            unresolved.add(f"{call[0]}//{call[1]}" if call[1] else call[0])
        for name in types or ():
            reached[name] = reached.get(name, 0) + 1
    types = set(reached).union(*(census.files[s] for s in SOURCES))

    def entry(name: str) -> dict:
        files = {source: census.files[source].get(name, 0) for source in SOURCES}
        return {"type": name, "score": sum(files.values()) + reached.get(name, 0),
                "declaring_files": files, "module_calls": reached.get(name, 0)}

    entries = sorted((entry(t) for t in types),
                     key=lambda e: (-e["score"], -sum(e["declaring_files"].values()), e["type"]))
    return [dict(rank=i + 1, **e) for i, e in enumerate(entries[:top])], sorted(unresolved)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="the Terraform corpus directory")
    parser.add_argument("--modules", type=Path, nargs="+", required=True,
                        help="terraform-aws-modules repositories (git directories or checkouts)")
    parser.add_argument("--top", type=int, default=150, help="how many types to keep")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    census = Census()
    try:
        projects = scan_corpus(args.corpus, census)
        repositories = scan_modules(sorted(args.modules), census)
    except (RankError, OSError) as error:
        print(f"rank_resources: {error}", file=sys.stderr)
        return 1
    ranked, unresolved = ranking(census, args.top)
    document = {
        "format": "retrace-resource-ranking/1",
        "generator": "knowledge/tools/rank_resources.py (method: knowledge/data/RANKING.md)",
        "score": "distinct files declaring the type (corpus, module code, module examples) plus "
                 "calls of terraform-aws-modules modules that declare it (directly or through "
                 "the modules they call); ties by declaring files, then name",
        "sources": {
            "corpus": {"about": "real public Terraform projects with vendored modules "
                                "(../shared/terraform-corpus, see its README)",
                       "projects": projects},
            "modules": {"about": "module code of the Terraform registry's terraform-aws-modules "
                                 "repositories at the commit named: the root module and "
                                 "modules/*, not examples, tests or wrappers",
                        "repositories": repositories},
            "examples": {"about": "the examples/ directories of the same repositories: what "
                                  "their users declare beside the module, and the modules "
                                  "they call"},
        },
        "files_read": {source: len(census.seen[source]) for source in SOURCES},
        "module_calls": len(census.calls),
        "unresolved_module_calls": unresolved,
        "types_seen": len(set().union(*(census.files[s] for s in SOURCES))),
        "ranking": ranked,
    }
    args.output.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
