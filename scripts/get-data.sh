#!/usr/bin/env bash
# Downloads the character-level benchmarks liegrad trains on, into the layout the
# loaders expect (data/datasets.hpp), and checks every file's SHA-256:
#   DIR/tinyshakespeare/input.txt
#   DIR/ptb-char/ptb.char.{train,valid,test}.txt
#   DIR/ptb-word/ptb.{train,valid,test}.txt
# Sources (see shared/data/README.md for provenance):
#   - Tiny Shakespeare: GitHub karpathy/char-rnn, data/tinyshakespeare/input.txt
#   - PTB: GitHub townie/PTB-dataset-from-Tomas-Mikolov-s-webpage, data/ (an
#     unmodified copy of Mikolov's simple-examples), commit 06529ac9...
# Files already present with the right checksum are not downloaded again.
#
# Usage: scripts/get-data.sh [DIR]        (default DIR: ./data-cache)
# Then:  liegrad ... --data-dir DIR        or  export LIEGRAD_DATA=DIR
set -euo pipefail

DEST="${1:-./data-cache}"
[ "$DEST" = "/" ] || DEST="${DEST%/}"

CHARRNN="https://raw.githubusercontent.com/karpathy/char-rnn/6f9487a6fe5b420b7ca9afb0d7c078e37c1d1b4e/data"
PTB="https://raw.githubusercontent.com/townie/PTB-dataset-from-Tomas-Mikolov-s-webpage/06529ac968955ffc29a4668d68b93dadcfe55f2e/data"

# local path -> URL
declare -A URLS=(
  ["tinyshakespeare/input.txt"]="$CHARRNN/tinyshakespeare/input.txt"
  ["ptb-char/ptb.char.train.txt"]="$PTB/ptb.char.train.txt"
  ["ptb-char/ptb.char.valid.txt"]="$PTB/ptb.char.valid.txt"
  ["ptb-char/ptb.char.test.txt"]="$PTB/ptb.char.test.txt"
  ["ptb-word/ptb.train.txt"]="$PTB/ptb.train.txt"
  ["ptb-word/ptb.valid.txt"]="$PTB/ptb.valid.txt"
  ["ptb-word/ptb.test.txt"]="$PTB/ptb.test.txt"
)

# SHA-256 of each file (shared/data/SHA256SUMS).
SUMS=$(cat <<'SHA'
86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed  tinyshakespeare/input.txt
e313d91425e06c4f0a8fb6e881dcce0c291f2a0e9f4dda54833069b122f91da9  ptb-char/ptb.char.train.txt
21661f63ec355085879458b6524644d4add5573541b4be14fb52ab2e2e995eb8  ptb-char/ptb.char.valid.txt
1ef5607ac3c463b16e38bfe7900dd3bfc91de5a96e0f21e7eab5188b465b8ebe  ptb-char/ptb.char.test.txt
fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf  ptb-word/ptb.train.txt
c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2  ptb-word/ptb.valid.txt
dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0  ptb-word/ptb.test.txt
SHA
)

die() {
  echo "get-data.sh: $*" >&2
  exit 1
}

if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  die "neither sha256sum nor shasum is installed; cannot verify the downloads"
fi

# fetch URL OUT: downloads to OUT with curl or wget, whichever exists.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 --connect-timeout 20 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q --tries=3 --timeout=20 -O "$2" "$1"
  else
    die "neither curl nor wget is installed; install one, or copy the files into $DEST by hand"
  fi
}

mkdir -p "$DEST"
failed=0
while read -r want rel; do
  [ -n "$rel" ] || continue
  out="$DEST/$rel"
  if [ -f "$out" ]; then
    have="$(sha256 "$out")"
    if [ "$have" = "$want" ]; then
      echo "ok (already present)  $out"
      continue
    fi
    echo "get-data.sh: $out is present but its checksum differs (expected $want, got $have); downloading it again" >&2
  fi
  url="${URLS[$rel]}"
  mkdir -p "$(dirname "$out")"
  echo "downloading           $url"
  if ! fetch "$url" "$out.part"; then
    rm -f "$out.part"
    echo "get-data.sh: download failed: $url" >&2
    failed=1
    continue
  fi
  got="$(sha256 "$out.part")"
  if [ "$got" != "$want" ]; then
    rm -f "$out.part"
    echo "get-data.sh: checksum mismatch for $rel: expected $want, got $got (file removed)" >&2
    failed=1
    continue
  fi
  mv -f "$out.part" "$out"
  echo "ok                    $out"
done <<<"$SUMS"

if [ "$failed" -ne 0 ]; then
  die "some files in $DEST are missing or do not match their SHA-256 (see above); downloads that failed the check were deleted"
fi
echo "All files verified in $DEST. Use it with --data-dir $DEST or export LIEGRAD_DATA=$DEST"
