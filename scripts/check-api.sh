#!/usr/bin/env bash
# `make check-api`: the public API of every library product must not break relative to the
# baseline commit recorded in .api-baseline (issue 35, point 2).
#
# What it checks, in order:
#   1. The baseline is a commit in HEAD's history (CI clones main; a shallow clone is deepened
#      with `git fetch --unshallow`, and the script says so plainly when that is impossible).
#   2. If the last change to .api-baseline moved it from one commit to another (or the working
#      tree moves it), CHANGELOG.md's Unreleased section at that change has an entry that was not
#      in the previous baseline's CHANGELOG.md: a line starting with "Breaking" (bullets and bold
#      allowed: "- **Breaking: ...") or a bullet under a "### Breaking" heading. A moved baseline
#      is how a break is accepted, so it must not happen silently.
#   3. `swift package --enable-all-traits diagnose-api-breaking-changes <baseline>` finds no
#      breaking change in any library product's modules (every library product but the test
#      toolkit, TomorrowlandTestSupport, named with --products).
#
# How a break is accepted: commit it (CI fails on that commit alone), then, in a commit of its
# own, set .api-baseline to the breaking commit and add the "Breaking" entry; the two land on
# main together. A commit cannot name itself, so the baseline always points at an earlier commit.
# The baseline need not move for additions: they do not break.
#
# Why the script builds the baseline itself: SwiftPM 6.3's diagnose-api-breaking-changes builds
# the baseline checkout with the default traits whatever the command line says (it loads the
# baseline's graph with `TraitConfiguration()`), so TomorrowlandNIO, TomorrowlandServiceLifecycle,
# TomorrowlandMetrics and TomorrowlandTracing would be compared with empty baselines and pass
# whatever was removed. So: the baseline's sources (`git archive`) are built here with
# --enable-all-traits, each Swift module under its Sources/ is dumped with swift-api-digester
# -dump-sdk (the arguments SwiftPM passes: -I for the build and module folders, the C targets'
# module maps and include folders), and the JSON files go where the tool looks for them,
# --baseline-dir/<commit>/<Module>.json. The tool regenerates no baseline that exists, so it
# then only builds the current package (all traits) and compares. Checked once with SwiftPM's own
# dumps of Tomorrowland and TomorrowlandLoop at the same commit: identical declarations (only the
# recorded tool arguments differ). A product module that did not exist at the baseline has no
# file; the tool then builds the baseline its own way to find that out, and skips the module.
#
# The dumps are cached by commit in .build/api-baseline/<commit>/, so a second run only builds the
# current package. Needs nothing beyond the toolchain and git; works offline (dependencies resolve
# from the same place as the main build, with the same Package.resolved when there is one).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
SWIFT="${SWIFT:-swift}"
BASELINE_FILE=.api-baseline
WORK="$ROOT/.build/api-baseline"
# SwiftPM 6.3 writes the trait conditions (-DNIO -DMetrics ...) in a Set's order, which changes
# from one process to the next, so every build with several traits recompiles our modules (about a
# minute here). With deterministic hashing the order is the same in every run of this script:
# a second run rebuilds nothing.
export SWIFT_DETERMINISTIC_HASHING=1

say() { echo "check-api: $*"; }
fail() { echo "check-api: $*" >&2; exit 1; }

# The commit a version of .api-baseline names ($1: its contents): the first line that is not a
# comment or blank.
baseline_in() { sed -e 's/#.*//' -e 's/[[:space:]]//g' | grep -m 1 . || true; }

[ -f "$BASELINE_FILE" ] || fail "$BASELINE_FILE is missing"
baseline_ref="$(baseline_in <"$BASELINE_FILE")"
[ -n "$baseline_ref" ] || fail "$BASELINE_FILE names no commit"

# 1. The baseline commit, from history. CI's clone is full today; deepen a shallow one rather
# than fail on a missing object with git's less helpful message.
if ! git cat-file -e "$baseline_ref^{commit}" 2>/dev/null; then
    if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
        say "baseline $baseline_ref is not in this shallow clone: git fetch --unshallow"
        # `git fetch` without a remote succeeds doing nothing: whether the clone is still shallow
        # says if it worked.
        git fetch --quiet --unshallow || true
        [ "$(git rev-parse --is-shallow-repository)" = false ] ||
            fail "could not deepen this shallow clone to reach the baseline $baseline_ref (no remote, or offline?): clone without --depth"
    fi
    git cat-file -e "$baseline_ref^{commit}" 2>/dev/null ||
        fail "baseline $baseline_ref ($BASELINE_FILE) is not a commit of this repository"
fi
baseline="$(git rev-parse "$baseline_ref^{commit}")"
git merge-base --is-ancestor "$baseline" HEAD ||
    fail "baseline $baseline is not in HEAD's history: it must be a commit on main"

# 2. A moved baseline needs its "Breaking" entry. The move is the working tree's when
# .api-baseline is edited and not committed yet (so the check works before committing), else the
# last commit that changed the file.
previous="" changelog_at_move=""
if ! git diff --quiet HEAD -- "$BASELINE_FILE"; then
    previous="$(git show "HEAD:$BASELINE_FILE" 2>/dev/null | baseline_in)"
    changelog_at_move="$(cat CHANGELOG.md)"
    move="the working tree"
else
    mover="$(git log -1 --format=%H -- "$BASELINE_FILE")"
    if git cat-file -e "$mover^:$BASELINE_FILE" 2>/dev/null; then
        previous="$(git show "$mover^:$BASELINE_FILE" | baseline_in)"
        changelog_at_move="$(git show "$mover:CHANGELOG.md")"
        move="commit $(git rev-parse --short "$mover")"
    fi
fi
if [ -n "$previous" ] && [ "$(git rev-parse "$previous^{commit}")" != "$baseline" ]; then
    # The Unreleased section's Breaking entries: lines that start with "Breaking" (after a list
    # marker and bold markers), and bullets under a "### Breaking" heading.
    entries="$(printf '%s\n' "$changelog_at_move" | awk '
        /^## /   { unreleased = ($0 ~ /^## \[?Unreleased/); breaking = 0; next }
        !unreleased { next }
        /^### /  { breaking = ($0 ~ /^### Breaking/); next }
        { line = $0; sub(/^[[:space:]]*[-*][[:space:]]+/, "", line); sub(/^\*\*/, "", line) }
        line ~ /^Breaking/ || (breaking && $0 ~ /^[-*] /) { print }')"
    # Only entries the previous baseline's CHANGELOG.md did not have count.
    new_entries="$(printf '%s\n' "$entries" | grep -vxF -f <(git show "$previous:CHANGELOG.md" 2>/dev/null || true) | grep . || true)"
    if [ -z "$new_entries" ]; then
        fail "$move moves the API baseline from $previous to $baseline without a new \"Breaking\" entry in CHANGELOG.md's Unreleased section (a line starting with \"Breaking\", or a bullet under \"### Breaking\")"
    fi
    say "$move moves the baseline from $(git rev-parse --short "$previous") to $(git rev-parse --short "$baseline"), with:"
    printf '%s\n' "$new_entries" | sed 's/^/    /'
fi

# An API dump with nothing but the implicit imports is a trait module built without its trait:
# comparing with it would pass any removal.
declares_something() { grep -q '"kind": "\(TypeDecl\|Function\|Var\|TypeAlias\|Constructor\)"' "$1"; }

# 3a. The baseline's API, all traits on. The library's Swift modules are the folders of Sources/
# with Swift files (TomorrowlandScheduling too, which is no product: its file is unused).
modules=()
while IFS= read -r dir; do
    if git ls-tree -r --name-only "$baseline" -- "Sources/$dir/" | grep -q '\.swift$'; then modules+=("$dir"); fi
done < <(git ls-tree --name-only "$baseline" Sources/ | sed 's|^Sources/||')
[ "${#modules[@]}" -gt 0 ] || fail "no Swift module under Sources/ at $baseline"

dumps="$WORK/$baseline"
missing=()
for module in "${modules[@]}"; do [ -f "$dumps/$module.json" ] || missing+=("$module"); done
if [ "${#missing[@]}" -eq 0 ]; then
    say "baseline $baseline: API dumps cached in ${dumps#"$ROOT"/}"
else
    say "baseline $baseline: building it with all traits to dump its API"
    checkout="$WORK/checkout"
    rm -rf "$checkout" "$dumps.partial"
    mkdir -p "$checkout" "$dumps.partial"
    git archive "$baseline" | tar -x -C "$checkout"
    # Same dependency versions as the current build, so that only our changes can show.
    if [ -f Package.resolved ]; then cp Package.resolved "$checkout/"; fi
    # Without the progress lines (several hundred); warnings and errors stay.
    "$SWIFT" build --enable-all-traits --package-path "$checkout" 2>&1 | { grep -v '^\[[0-9]*/[0-9]*\] ' || true; }
    bin="$("$SWIFT" build --enable-all-traits --package-path "$checkout" --show-bin-path)"
    # The search paths SwiftPM gives swift-api-digester (BuildPlan.createAPIToolCommonArgs): the
    # build and module folders, every C target's module map folder and include folder (ours and
    # the dependencies'), the system library's module map folder.
    args=(-I "$bin" -I "$bin/Modules")
    for path in "$bin"/*.build/module.modulemap "$checkout"/Sources/*/module.modulemap; do
        [ -f "$path" ] && args+=(-I "$(dirname "$path")")
    done
    for path in "$checkout"/Sources/*/include "$checkout"/.build/checkouts/*/Sources/*/include; do
        [ -d "$path" ] && args+=(-I "$path")
    done
    read -r -a cflags <<<"$(pkg-config --cflags libevent_core 2>/dev/null || true)"
    args+=("${cflags[@]}")
    digester="$(dirname "$(command -v "$SWIFT")")/swift-api-digester"
    [ -x "$digester" ] || digester="$(command -v swift-api-digester)"
    for module in "${modules[@]}"; do
        [ -f "$bin/Modules/$module.swiftmodule" ] || fail "the baseline build has no $module.swiftmodule"
        "$digester" -dump-sdk -compiler-style-diags "${args[@]}" -module "$module" \
            -o "$dumps.partial/$module.json"
        declares_something "$dumps.partial/$module.json" ||
            fail "the baseline's $module declares nothing (built without its trait?)"
    done
    rm -rf "$dumps"
    mv "$dumps.partial" "$dumps"
    # The checkout's build is a full debug build with every dependency: gigabytes, not needed again.
    rm -rf "$checkout"
fi

# 3b. The comparison, by SwiftPM, for every library product: it builds the current package with
# all traits (the .build a `swift build --enable-all-traits` left is reused) and diffs each module
# with its baseline file.
# Every library product but the test toolkit, which is a product only so that the Examples
# package can use it and promises no stability (CHANGELOG.md, "Versioning").
products=()
while IFS= read -r product; do
    [ "$product" = TomorrowlandTestSupport ] || products+=("$product")
done < <(grep -o '\.library(name: "[^"]*"' Package.swift | sed 's/.*"\(.*\)"/\1/')
[ "${#products[@]}" -gt 0 ] || fail "Package.swift declares no library product"
say "comparing the API of ${products[*]} with $baseline"
log="$WORK/diagnose.log"
status=0
"$SWIFT" package --enable-all-traits diagnose-api-breaking-changes "$baseline" --baseline-dir "$WORK" \
    --products "${products[@]}" >"$log" 2>&1 || status=$?
# The tool's report without the build's progress lines.
grep -v '^\[[0-9]*/[0-9]*\] ' "$log" || true
# Had the tool found a baseline file missing, it would have rewritten it from its own build of the
# baseline, without traits (seen once, not reproduced): a trait module's comparison would then
# have been with nothing. Fail rather than pass on that.
for module in "${modules[@]}"; do
    [ ! -f "$dumps/$module.json" ] || declares_something "$dumps/$module.json" ||
        fail "SwiftPM replaced the baseline dump of $module with an empty one (no traits): remove $dumps and run again"
done
if [ "$status" -ne 0 ] && ! grep -q 'API breakage' "$log"; then
    fail "swift package diagnose-api-breaking-changes failed without reporting a breakage (see above)"
fi
if [ "$status" -ne 0 ]; then
    echo >&2
    echo "check-api: the public API broke relative to the baseline $baseline ($BASELINE_FILE); see above." >&2
    echo "check-api: if the break is intended: commit it, then in a second commit set $BASELINE_FILE to" >&2
    echo "check-api: that commit and add a \"Breaking\" entry to CHANGELOG.md's Unreleased section." >&2
    exit 1
fi
say "no breaking change in any library product since $(git rev-parse --short "$baseline")"
