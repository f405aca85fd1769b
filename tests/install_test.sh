#!/usr/bin/env bash
# The installed package end to end (CTest: install_and_external_example):
#   1. `cmake --install BUILD --prefix P` into a temporary prefix;
#   2. the layout: headers, libraries, tool, CMake package, pkg-config file, docs;
#      no build-tree or source-tree path in any installed header, CMake or .pc file;
#   3. a program compiled with `pkg-config --cflags --libs liegrad` runs;
#   4. examples/external (find_package(liegrad CONFIG REQUIRED)) builds against P and
#      runs: gradient check, a few training steps, a checkpoint;
#   5. P/bin/liegrad eval --plugin reads that checkpoint and gets the example's BPC;
#      without the plugin it fails with a message, not a crash; sample runs;
#   6. the prefix, moved elsewhere, still runs (RPATHs are $ORIGIN-relative).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR [EXTRA_CXX_FLAGS]
# EXTRA_CXX_FLAGS (e.g. -fsanitize=address,undefined) are used for every program built
# here: the sanitizer build's libraries need the sanitizer runtime in the program.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) flags=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/liegrad-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() {
  echo "install test FAILED: $*" >&2
  exit 1
}
step() { echo "== $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install failed"; }

step "layout"
for f in bin/liegrad include/liegrad/groups/group.hpp include/liegrad/core/version.hpp \
  include/liegrad/models/plugin.hpp include/liegrad/train/checkpoint.hpp \
  lib/cmake/liegrad/liegradConfig.cmake lib/cmake/liegrad/liegradConfigVersion.cmake \
  lib/cmake/liegrad/liegradTargets.cmake lib/pkgconfig/liegrad.pc \
  share/doc/liegrad/README.md share/doc/liegrad/docs/training.md share/doc/liegrad/examples/external/CMakeLists.txt; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
for lib in core autograd groups optim data models train; do
  ls "$prefix"/lib/libliegrad_"$lib".so.* >/dev/null 2>&1 || fail "lib/libliegrad_$lib.so is not installed"
done
if leaks=$(grep -rlF -e "$build" -e "$src" "$prefix/include" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"); then
  fail "installed files name the build or source tree: $leaks"
fi
runpath=$(readelf -d "$prefix/bin/liegrad" | grep -E 'RUNPATH|RPATH' || true)
case "$runpath" in *'$ORIGIN'*) ;; *) fail "bin/liegrad has no \$ORIGIN-relative RUNPATH: $runpath" ;; esac
case "$runpath" in *"$build"*) fail "bin/liegrad's RUNPATH names the build tree: $runpath" ;; esac
env -u LD_LIBRARY_PATH "$prefix/bin/liegrad" --version | grep -q '^liegrad ' || fail "the installed tool does not run"

step "pkg-config"
cat >"$tmp/pc.cpp" <<'CPP'
// Built with `pkg-config --cflags --libs liegrad`; both include spellings work.
#include "groups/group.hpp"
#include "liegrad/core/version.hpp"
int main() {
  auto g = liegrad::groups::make_group("SU(2)");
  const auto I = g->identity<double>();
  return g->dim() == 3 && g->defect(I) < 1e-12 && LIEGRAD_VERSION_MAJOR >= 0 ? 0 : 1;
}
CPP
pc_flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs liegrad) || fail "pkg-config liegrad failed"
# shellcheck disable=SC2086
g++ $flags "$tmp/pc.cpp" -o "$tmp/pc" $pc_flags || fail "a program does not build with: pkg-config --cflags --libs liegrad ($pc_flags)"
"$tmp/pc" || fail "the pkg-config program failed"

step "examples/external against the installed package"
cmake -S "$src/examples/external" -B "$tmp/ext" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
  >"$tmp/ext-config.log" 2>&1 || { cat "$tmp/ext-config.log"; fail "examples/external does not configure"; }
cmake --build "$tmp/ext" -j 2 >"$tmp/ext-build.log" 2>&1 || { cat "$tmp/ext-build.log"; fail "examples/external does not build"; }
text=$src/docs/training.md
"$tmp/ext/train_so3u1" "$text" "$tmp/run" 60 || fail "train_so3u1 failed"
ckpt=$tmp/run/so3u1.json
plugin=$tmp/ext/libso3u1_model.so

step "liegrad eval --plugin on the example's checkpoint"
want=$(sed -E 's/.*"test_bpc":([-0-9.eE+]+).*/\1/' "$tmp/run/result.json")
got=$("$prefix/bin/liegrad" eval --plugin "$plugin" --checkpoint "$ckpt" --json) || fail "liegrad eval --plugin failed"
echo "$got"
got=$(echo "$got" | sed -E 's/.*"bpc": ?([-0-9.eE+]+).*/\1/')
awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 2e-6) }' ||
  fail "liegrad eval gives BPC $got, the example computed $want"
"$prefix/bin/liegrad" sample --plugin "$plugin" --checkpoint "$ckpt" --prompt "The " --length 40 --seed 1 >"$tmp/sample.txt" ||
  fail "liegrad sample --plugin failed"
grep -q '^The ' "$tmp/sample.txt" || fail "the sample does not start with its prompt"

step "clear failures"
set +e
"$prefix/bin/liegrad" eval --checkpoint "$ckpt" >/dev/null 2>"$tmp/err1.txt"
rc1=$?
"$prefix/bin/liegrad" eval --plugin "$tmp/no-such-plugin.so" --checkpoint "$ckpt" >/dev/null 2>"$tmp/err2.txt"
rc2=$?
"$prefix/bin/liegrad" eval --plugin "$ckpt" --checkpoint "$ckpt" >/dev/null 2>"$tmp/err3.txt"
rc3=$?
set -e
[ "$rc1" = 1 ] && grep -q "so3u1_rnn" "$tmp/err1.txt" && grep -q -- "--plugin" "$tmp/err1.txt" ||
  fail "without --plugin, eval should fail (exit 1) naming the model type and --plugin; got $rc1: $(cat "$tmp/err1.txt")"
[ "$rc2" = 1 ] && grep -q "no-such-plugin.so" "$tmp/err2.txt" ||
  fail "a missing plugin should fail (exit 1) naming it; got $rc2: $(cat "$tmp/err2.txt")"
[ "$rc3" = 1 ] && grep -q "cannot load plugin" "$tmp/err3.txt" ||
  fail "a file that is not a library should fail (exit 1); got $rc3: $(cat "$tmp/err3.txt")"

step "examples/external against the build tree, without installing"
cmake -S "$src/examples/external" -B "$tmp/ext-tree" -Dliegrad_DIR="$build/build-tree" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
  >"$tmp/ext-tree-config.log" 2>&1 || { cat "$tmp/ext-tree-config.log"; fail "examples/external does not configure against the build tree"; }
cmake --build "$tmp/ext-tree" -j 2 >"$tmp/ext-tree-build.log" 2>&1 ||
  { cat "$tmp/ext-tree-build.log"; fail "examples/external does not build against the build tree"; }
"$tmp/ext-tree/train_so3u1" "$text" "$tmp/run-tree" 20 >/dev/null || fail "train_so3u1 built against the build tree failed"

step "a moved prefix still runs"
mv "$prefix" "$tmp/moved"
env -u LD_LIBRARY_PATH "$tmp/moved/bin/liegrad" --version >/dev/null || fail "the tool does not run from a moved prefix"
echo "install test passed"
