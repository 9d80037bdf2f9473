#!/usr/bin/env bash
# Seeds each fuzz target's corpus (fuzz/corpus/<target>/, not committed; or DIR/<target>/ when
# a directory is given) from the repository's own fixtures. Run from anywhere; safe to run
# again. The integration tests replay the same seeds through `reconciler::fuzzing`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
corpus="${1:-$here/corpus}"
mkdir -p "$corpus"/{framing,state,hcl_edit,expression}
find "$root/fixtures" -name '*.json' -size -200k -path '*trail*' -exec cp {} "$corpus/framing/" \;
find "$root/fixtures" \( -name '*.ndjson' -o -name '*.json' \) -path '*cloudtrail*' -exec cp {} "$corpus/framing/" \;
find "$root/fixtures/example" -name '*.json' -exec cp {} "$corpus/framing/" \;
find "$root/fixtures" -name '*.tfstate' -size -200k -exec sh -c 'cp "$1" "$2/$(echo "$1" | md5sum | cut -c1-12).tfstate"' _ {} "$corpus/state" \;
cp "$root/fixtures/state/show.json" "$corpus/state/"
find "$root/fixtures" -name '*.tf' -size -100k -exec sh -c 'cp "$1" "$2/$(echo "$1" | md5sum | cut -c1-12).tf"' _ {} "$corpus/hcl_edit" \;
i=0
while IFS= read -r expression; do
  printf '%s' "$expression" > "$corpus/expression/seed-$i"
  i=$((i + 1))
done <<'EXPRESSIONS'
merge({ a = 1 }, { b = [for k, v in { x = "y" } : upper(v) if k != "z"] })
lookup({ web = "t3.large" }, "web", null)
cidrsubnet("10.0.0.0/16", 8, 2)
jsonencode({ Statement = [{ Effect = "Allow", Action = ["s3:*"], Resource = "*" }] })
try(tonumber("x"), length(split(",", "a,b,c")), 0)
"${format("%s-%03d", "web", 7)}%{ for s in ["a", "b"] }${s}%{ endfor }"
flatten([[1, 2], [3]])[1] + coalesce(null, 5) * 2
can(regex("^[a-z]+$", "abc")) ? toset(["b", "a"]) : setsubtract(["a"], ["a"])
base64encode(sha256("retrace"))
templatestring("x", {})
EXPRESSIONS
echo "seeded $(find "$corpus" -type f | wc -l) inputs under $corpus"
