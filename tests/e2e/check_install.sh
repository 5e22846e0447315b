#!/usr/bin/env bash
# `cmake --install` puts a gpucal that runs from anywhere: installed into one prefix, the prefix
# moved elsewhere (as a copy made on every node would be), and run there with a bare environment:
# `gpucal run --suite smoke` finds the installed benches beside itself and the plot scripts in
# PREFIX/share/gpucal/plots, `gpucal check --expect auto` the expectations in
# PREFIX/share/gpucal/expectations. (Where the source tree is still there, the plots would also be
# found in it: that they came from the install is not told apart here.)
# Usage: check_install.sh BUILD_DIR WORK_DIR
set -euo pipefail
BUILD=$(realpath "$1")
WORK=$(realpath -m "$2")
rm -rf "$WORK" && mkdir -p "$WORK"
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$BUILD" --prefix "$WORK/staged" >"$WORK/install.log" 2>&1 || fail "cmake --install: $(tail -3 "$WORK/install.log")"
mv "$WORK/staged" "$WORK/gpucal"
P=$WORK/gpucal
for f in bin/gpucal bin/bench_gemm bin/bench_memory share/gpucal/expectations/host.json share/gpucal/plots/plot_results.py; do
  [ -e "$P/$f" ] || fail "the install lacks $f"
done
echo "ok   installed and moved: $(ls "$P/bin" | tr '\n' ' ')"
bare=(env -i PATH=/usr/bin:/bin HOME="$WORK" OPENBLAS_NUM_THREADS=1)
set +e
(cd "$WORK" && "${bare[@]}" "$P/bin/gpucal" run --suite smoke --backend host --out "$WORK/results" --allow-suspect >"$WORK/run.out" 2>&1)
rc=$?
set -e
[ $rc -eq 0 ] || fail "gpucal run from the install exited $rc: $(tail -5 "$WORK/run.out")"
grep -q "benches: 5 of 5 ok" "$WORK/run.out" || fail "not every bench ran from the install: $(grep -A3 verdict "$WORK/run.out")"
grep -q "$P/bin/bench_gemm" "$WORK/results/logs/gemm.log" 2>/dev/null || grep -rq "$P/bin/bench_gemm" "$WORK/results/summary.md" ||
  fail "the benches run were not the installed ones"
if "${bare[@]}" python3 -c 'import matplotlib' 2>/dev/null; then
  ls "$WORK"/results/plots/*.png >/dev/null 2>&1 || fail "no plots: $(grep plots "$WORK/run.out")"
  echo "ok   plots made"
fi
echo "ok   gpucal run --suite smoke from the moved install: 5 of 5 benches"
set +e
"${bare[@]}" "$P/bin/gpucal" check "$WORK/results" --expect auto >"$WORK/check.out" 2>&1
rc=$?
set -e
grep -q "$P/share/gpucal/expectations/host.json" "$WORK/check.out" || fail "check --expect auto did not use the installed expectations: $(head -2 "$WORK/check.out")"
[ $rc -le 1 ] || fail "gpucal check exited $rc: $(tail -2 "$WORK/check.out")"
echo "ok   gpucal check --expect auto reads $P/share/gpucal/expectations/host.json"
