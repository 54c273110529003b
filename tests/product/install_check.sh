#!/bin/sh
# install_check.sh BUILD_DIR SOURCE_DIR WORK_DIR [CC]
# Installs BUILD_DIR into WORK_DIR/prefix (cmake --install) and checks the installed copy as a
# user would: the files are there, the CLI runs, and the consumer project (tests/product/consumer)
# builds and runs four ways against it: CMake find_package with flatrt::flatrt (libflatrt.so) and
# with flatrt_USE_STATIC_LIBS (libflatrt.a), and a C program with pkg-config --libs (shared) and
# --static (static); the Python package, when built, imports and runs. Then the prefix is
# moved and the pkg-config and find_package builds are repeated from there.
set -eu
CMAKE=${CMAKE:-cmake} CFLAGS=${CFLAGS:-}   # CFLAGS: e.g. the sanitizer flags of the build
build=$1 src=$2 work=$3 cc=${4:-cc}
model=$src/examples/digits/digits.onnx
fail() { echo "install_check: $*" >&2; exit 1; }
step() { echo "== $*"; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
step "cmake --install $build --prefix $prefix"
"$CMAKE" --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "install failed"; }
libdir=$(cd "$prefix" && ls -d lib lib64 lib/* 2>/dev/null | while read d; do [ -e "$prefix/$d/libflatrt.a" ] && echo "$d"; done | head -n 1)
[ -n "$libdir" ] || fail "no libflatrt.a under $prefix"
for f in include/flatrt.h "$libdir/libflatrt.a" "$libdir/libflatrt.so" "$libdir/libflatrt.so.0" \
         "$libdir/libflatrt.so.0.1.0" bin/flatrt "$libdir/cmake/flatrt/flatrtConfig.cmake" \
         "$libdir/cmake/flatrt/flatrtConfigVersion.cmake" "$libdir/pkgconfig/flatrt.pc"; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done
[ "$(readlink "$prefix/$libdir/libflatrt.so")" = libflatrt.so.0 ] || fail "libflatrt.so does not point to libflatrt.so.0"
readelf -d "$prefix/$libdir/libflatrt.so.0.1.0" | grep -q 'SONAME.*\[libflatrt\.so\.0\]' || fail "SONAME is not libflatrt.so.0"
[ ! -e "$prefix/include/ops" ] && [ ! -e "$prefix/include/runtime" ] || fail "private headers installed"
step "installed CLI"
"$prefix/bin/flatrt" info "$model" > "$work/cli.log" 2>&1 || { cat "$work/cli.log"; fail "installed flatrt info failed"; }

needs_so() { readelf -d "$1" | grep -q 'NEEDED.*\[libflatrt\.so\.0\]'; }

for kind in shared static; do
  step "find_package(flatrt), flatrt::flatrt ($kind)"
  b=$work/cmake-$kind
  static=OFF; [ $kind = static ] && static=ON
  "$CMAKE" -S "$src/tests/product/consumer" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$CFLAGS" \
        -Dflatrt_USE_STATIC_LIBS=$static > "$b.log" 2>&1 || { cat "$b.log"; fail "configure ($kind) failed"; }
  "$CMAKE" --build "$b" >> "$b.log" 2>&1 || { cat "$b.log"; fail "build ($kind) failed"; }
  "$b/consumer" "$model" || fail "consumer ($kind) failed"
  if [ $kind = shared ]; then needs_so "$b/consumer" || fail "shared consumer does not need libflatrt.so.0"
  else ! needs_so "$b/consumer" || fail "static consumer needs libflatrt.so.0"; fi
done

pc_build() { # pc_build PREFIX OUT
  export PKG_CONFIG_PATH="$1/$libdir/pkgconfig"
  step "pkg-config --cflags --libs flatrt ($1)"
  pkg-config --exists flatrt || fail "pkg-config does not find flatrt in $PKG_CONFIG_PATH"
  [ "$(pkg-config --modversion flatrt)" = 0.1.0 ] || fail "pkg-config --modversion: $(pkg-config --modversion flatrt)"
  # shellcheck disable=SC2046
  "$cc" $CFLAGS -Wall -Werror -o "$2-shared" "$src/tests/product/consumer/consumer.c" \
        $(pkg-config --cflags --libs flatrt) -Wl,-rpath,"$1/$libdir" || fail "pkg-config shared build failed"
  needs_so "$2-shared" || fail "pkg-config consumer does not need libflatrt.so.0"
  "$2-shared" "$model" || fail "pkg-config shared consumer failed"
  step "pkg-config --static --libs flatrt: $(pkg-config --static --libs flatrt)"
  # -l:libflatrt.a: the archive even though libflatrt.so sits next to it
  # shellcheck disable=SC2046
  "$cc" $CFLAGS -Wall -Werror -o "$2-static" "$src/tests/product/consumer/consumer.c" \
        $(pkg-config --cflags flatrt) \
        $(pkg-config --static --libs flatrt | sed 's/-lflatrt\b/-l:libflatrt.a/') \
        || fail "pkg-config static build failed"
  ! needs_so "$2-static" || fail "static pkg-config consumer needs libflatrt.so.0"
  "$2-static" "$model" || fail "pkg-config static consumer failed"
}
pc_build "$prefix" "$work/pc"
if [ -d "$build/python/flatrt" ]; then # built with the Python binding: installed too
  step "installed Python package"
  ext=$(find "$prefix" -name '_flatrt*.so' | head -n 1)
  [ -n "$ext" ] && [ -f "$(dirname "$ext")/__init__.py" ] || fail "the flatrt Python package was not installed"
  # PYTHON_PRELOAD: the sanitizer runtimes when the build is instrumented
  (cd "$work" && env ${PYTHON_PRELOAD:+LD_PRELOAD="$PYTHON_PRELOAD" ASAN_OPTIONS=detect_leaks=0} \
     PYTHONPATH="$(dirname "$(dirname "$ext")")" /usr/bin/python3 -c '
import sys, numpy as np, flatrt
m = flatrt.Model(sys.argv[1])
out = m.run({"image": np.zeros((2, 1, 8, 8), np.float32)})["logits"]
assert out.shape == (2, 10), out.shape
assert flatrt.__file__.startswith(sys.argv[2]), flatrt.__file__
print("ok python", flatrt.__version__, flatrt.__file__)' "$model" "$prefix") || fail "installed Python package failed"
fi
mv "$prefix" "$work/moved"
pc_build "$work/moved" "$work/pc-moved"
step "moved prefix: find_package"
"$CMAKE" -S "$src/tests/product/consumer" -B "$work/cmake-moved" -DCMAKE_PREFIX_PATH="$work/moved" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$CFLAGS" > "$work/cmake-moved.log" 2>&1 && "$CMAKE" --build "$work/cmake-moved" >> "$work/cmake-moved.log" 2>&1 \
  || { cat "$work/cmake-moved.log"; fail "find_package from a moved prefix failed"; }
"$work/cmake-moved/consumer" "$model" || fail "consumer from a moved prefix failed"
echo "install_check: ok"
