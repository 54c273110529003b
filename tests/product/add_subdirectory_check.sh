#!/bin/sh
# add_subdirectory_check.sh SOURCE_DIR WORK_DIR [CC]
# Configures the consumer project (tests/product/consumer) with flatrt's source tree added by
# add_subdirectory and compiles its source file: flatrt::flatrt must exist (CMake refuses an
# unknown name with ::) and give include/ without src/ (consumer.c fails to compile when a private
# header is reachable). Linking is left out: it would build the whole library a second time; the
# same libraries are linked against an installed copy by install_check.sh.
set -eu
CMAKE=${CMAKE:-cmake} CFLAGS=${CFLAGS:-}   # CFLAGS: e.g. the sanitizer flags of the build
src=$1 work=$2 cc=${3:-cc}
rm -rf "$work"
mkdir -p "$work"
for static in OFF ON; do
  b=$work/static-$static
  "$CMAKE" -S "$src/tests/product/consumer" -B "$b" -DFLATRT_SOURCE_DIR="$src" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$CFLAGS" \
        -Dflatrt_USE_STATIC_LIBS=$static -DFRT_BUILD_TESTS=OFF > "$b.log" 2>&1 \
    || { cat "$b.log"; echo "add_subdirectory_check: configure failed" >&2; exit 1; }
  grep -q -- "-I$src/src\b" "$b/CMakeFiles/consumer.dir/flags.make" \
    && { cat "$b/CMakeFiles/consumer.dir/flags.make"; echo "add_subdirectory_check: src/ on the include path" >&2; exit 1; }
  (cd "$b" && make consumer.c.o) || { echo "add_subdirectory_check: consumer.c does not compile" >&2; exit 1; }
  echo "static=$static: flatrt::flatrt ok, include path: $(grep C_INCLUDES "$b/CMakeFiles/consumer.dir/flags.make")"
done
echo "add_subdirectory_check: ok"
