#!/usr/bin/env bash
# The library's public API, listed from its rustdoc pages: every public item
# and, per type and trait, every method and trait implementation with its
# signature (tags stripped). docs/public-api.txt holds the listing of the
# current API; CI runs `--check`, so that a change to the public API is
# deliberate: made together with the listing (and a CHANGELOG entry).
#
#   scripts/public-api.sh            print the listing
#   scripts/public-api.sh --bless    rewrite docs/public-api.txt
#   scripts/public-api.sh --check    exit 1 if the API differs from it
#
# Items behind the `unstable` feature are #[doc(hidden)] and not listed.
# The listing records the rustdoc version that made it: under another
# version a difference may be formatting only, so --check then reports it
# without failing.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p concurrent-cuckoo --all-features -q
listing=$(python3 - target/doc/concurrent_cuckoo "$(rustdoc --version)" <<'PY'
import html, os, re, sys
root, version = sys.argv[1], sys.argv[2]
def text(fragment):
    t = re.sub(r"<[^>]+>", "", fragment).replace("ⓘ", "")
    return re.sub(r"\s+", " ", html.unescape(t)).strip()
out = [f"# public API of concurrent-cuckoo, by scripts/public-api.sh ({version})"]
pages = sorted(f for f in os.listdir(root) if re.match(r"(struct|enum|trait|fn|macro|type|constant)\.", f))
for page in pages:
    kind, name = page.split(".")[:2]
    src = open(os.path.join(root, page), encoding="utf-8").read()
    decl = re.search(r'<pre class="rust item-decl"><code>(.*?)</code></pre>', src, re.S)
    head = text(decl.group(1)) if decl else f"{kind} {name}"
    if kind in ("struct", "enum"):
        head = re.sub(r"\{.*", "{ .. }", head) if "{" in head else head
    out.append(f"{kind} {name}: {head}" if kind not in ("fn",) else f"fn {head}")
    if kind == "enum":
        for v in re.findall(r'<section id="variant\.([A-Za-z0-9_]+)"', src):
            out.append(f"  variant {name}::{v}")
    # A type's inherent methods; a trait's required and provided ones.
    if kind == "trait":
        scope = src.split('<h2 id="implementors"')[0]
    else:
        start = src.find('<h2 id="implementations"')
        end = src.find('<h2 id="trait-implementations"')
        scope = src[start:end] if start >= 0 else ""
    for sec in re.finditer(r'<section id="(method|tymethod)\.([A-Za-z0-9_]+)"[^>]*>.*?<h4 class="code-header">(.*?)</h4>', scope, re.S):
        out.append(f"  {name}: {text(sec.group(3))}")
    # Trait implementations (not the auto and blanket ones).
    impls = re.search(r'<h2 id="trait-implementations".*?(?=<h2 id="(synthetic|blanket)-implementations"|$)', src, re.S)
    if impls:
        for h in re.findall(r'<section id="impl-[^"]*" class="impl">.*?<h3 class="code-header">(.*?)</h3>', impls.group(0), re.S):
            out.append(f"  {text(h)}")
print("\n".join(dict.fromkeys(out)))
PY
)
case "$mode" in
    "") echo "$listing" ;;
    --bless) echo "$listing" >docs/public-api.txt; echo "public-api: wrote docs/public-api.txt ($(wc -l <docs/public-api.txt) lines)" ;;
    --check)
        if diff -u docs/public-api.txt <(echo "$listing"); then
            echo "public-api: unchanged ($(wc -l <docs/public-api.txt) lines)"
        elif [[ "$(head -1 docs/public-api.txt)" != "$(head -1 <<<"$listing")" ]]; then
            echo "public-api: the listing was made by another rustdoc; the differences above may be formatting only (not failing)"
        else
            echo "public-api: the public API changed: if deliberate, run scripts/public-api.sh --bless and add a CHANGELOG entry" >&2
            exit 1
        fi ;;
    *) echo "usage: $0 [--bless|--check]" >&2; exit 2 ;;
esac
