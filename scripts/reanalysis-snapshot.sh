#!/usr/bin/env bash
# Re-analyse every recorded profile (the test fixtures and ../shared/reference/machines)
# with a built hwcal, and write every rendering of the result into OUTDIR: the
# analysis text, the re-analysed JSON, The Calibrator's gnuplot files, the SVG
# plots, and the stored run's text, Markdown, CSV and HTML renderings, plus a
# comparison of consecutive profiles. Two snapshots taken before and after a
# refactor must be byte-identical (`diff -r A B`): the proof that it changed no
# behaviour.
#
#   scripts/reanalysis-snapshot.sh target/release/hwcal /tmp/before
set -euo pipefail
bin=$(realpath "$1"); out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"; mkdir -p "$out"
out=$(realpath "$out")
db="$out/.db.sqlite"
export HWCAL_DB="$db"
files=()
for f in "$here"/crates/*/tests/data/*.json "$here"/../shared/reference/machines/*.json; do
  [ -f "$f" ] && files+=("$f")
done
prev=""
for f in "${files[@]}"; do
  name=$(basename "$(dirname "$(dirname "$(dirname "$f")")")")-$(basename "$f" .json)
  case "$f" in */reference/machines/*) name=ref-$(basename "$f" .json);; esac
  d="$out/$name"; mkdir -p "$d/plot"
  "$bin" analyze "$f" --detail --json "$d/analysed.json" --gnuplot "$d/cal" --plot "$d/plot" \
    >"$d/analyze.txt" 2>"$d/analyze.err" || echo "exit $?" >>"$d/analyze.err"
  if "$bin" db import "$d/analysed.json" >"$d/import.txt" 2>&1; then
    id=$(sed -n 's/.* as run \([0-9]*\).*/\1/p' "$d/import.txt" | head -1)
    if [ -n "$id" ]; then
      "$bin" db show "$id" >"$d/show.txt" 2>&1 || true
      "$bin" db export "$id" --json "$d/export.json" >/dev/null 2>&1 || true
      "$bin" db export "$id" --csv >"$d/export.csv" 2>&1 || true
      "$bin" db export "$id" --markdown >"$d/export.md" 2>&1 || true
      "$bin" report "$id" --html "$d/report.html" >/dev/null 2>&1 || true
      if [ -n "$prev" ]; then
        "$bin" db compare "$prev" "$id" >"$d/compare.txt" 2>&1 || true
        "$bin" report "$prev" "$id" --html "$d/compare.html" >/dev/null 2>&1 || true
      fi
      prev=$id
    fi
  fi
done
rm -f "$db"
# Paths of this snapshot's own directory and of the checkout differ between
# snapshots (a worktree, a CI clone).
grep -rlF -e "$out" -e "$here" "$out" 2>/dev/null | xargs -r sed -i -e "s#$out#OUT#g" -e "s#$here#REPO#g"
echo "${#files[@]} profiles re-analysed into $out"
