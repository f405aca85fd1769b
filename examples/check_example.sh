#!/usr/bin/env bash
# Runs one example and checks the numbers it prints against what examples/README.md
# says to check; CTest runs it for each example (examples/CMakeLists.txt).
# Usage: check_example.sh so3_exp_gradient BINARY
#        check_example.sh fit_rotation BINARY GROUP [--plain-may-lag]
#        check_example.sh tutorial BINARY NAME1,NAME2,... [ARGS...]
#   tutorial (examples/tutorial/CMakeLists.txt): BINARY ARGS exits 0 (77 = skipped, passed
#     on), every line `check: NAME KIND=VALUE tol=TOL STATUS` has STATUS ok and a finite VALUE <= TOL
#     (VALUE is printed rounded),
#     every listed NAME printed such a line, and the program said "all checks passed".
#   so3_exp_gradient: exit 0; each coordinate's tape/finite-difference relative error
#     < 1e-6 and the overall ||tape - fd|| / ||tape|| < 1e-8.
#   fit_rotation: exit 0; three runs (plain algebra, rebased, manifold), each ending
#     (step 200) with loss < 1e-10 and every printed defect < 1e-13; the rebased and
#     manifold runs end with ||R - R_true|| < 1e-12. --plain-may-lag: the plain algebra
#     run only has to lower its loss (SO(8): slow without a rebase, as the README says).
set -uo pipefail
name=$1 bin=$2
shift 2
if [ "$name" = tutorial ]; then
  if [ ! -x "$bin" ]; then echo "skipped: $bin is missing"; exit 77; fi
  names=$1
  shift
  out=$("$bin" "$@" 2>&1)
  status=$?
  printf '%s\n' "$out"
  [ "$status" -eq 77 ] && { echo "check_example: $(basename "$bin") skipped"; exit 77; }
  [ "$status" -eq 0 ] || { echo "check_example: $(basename "$bin") exited $status"; exit 1; }
  printf '%s\n' "$out" | awk -v names="$names" '
    BEGIN { n = split(names, want, ",") }
    /^check: / {
      split($3, kv, "="); split($4, tl, "=")
      # <=: VALUE is printed rounded to 3 digits, TOL has one, so VALUE < TOL prints <= TOL.
      if (tl[1] != "tol" || kv[2] !~ /^[0-9.]+e[-+][0-9]+$/ || !(kv[2] + 0 <= tl[2] + 0) || $5 != "ok") { print "check_example: failed: " $0; bad = 1 }
      seen[$2] = 1 }
    /^all checks passed$/ { done = 1 }
    END {
      for (i = 1; i <= n; ++i) if (!(want[i] in seen)) { print "check_example: no check named " want[i]; bad = 1 }
      if (!done) { print "check_example: the program did not report \"all checks passed\""; bad = 1 }
      if (!bad) print "check_example: " n " named checks present and passing"
      exit bad }'
  exit $?
fi
out=$("$bin" "${@:1:1}" 2>&1)
status=$?
printf '%s\n' "$out"
[ "$status" -eq 0 ] || { echo "check_example: $name exited $status"; exit 1; }
case "$name" in
  so3_exp_gradient)
    printf '%s\n' "$out" | awk '
      /^  [0-9]   / { rows++; if (!($NF < 1e-6)) { print "check_example: coordinate " $1 " rel. error " $NF " >= 1e-6"; bad = 1 } }
      /finite differences\|\| \/ \|\|tape\|\| =/ { seen = 1; v = $8; if (!(v < 1e-8)) { print "check_example: overall rel. error " v " >= 1e-8"; bad = 1 } }
      END { if (rows != 3 || !seen) { print "check_example: expected 3 coordinate rows and the overall error"; bad = 1 }
            if (!bad) print "check_example: so3_exp_gradient numbers as expected"; exit bad }' ;;
  fit_rotation)
    lag=0
    [ "${2:-}" = "--plain-may-lag" ] && lag=1
    printf '%s\n' "$out" | awk -v lag="$lag" '
      /, lr / { run++; first[run] = "" }
      /^  step / { if (first[run] == "") first[run] = $4; last[run] = $4; step[run] = $2
                   if (!($6 < 1e-13)) { print "check_example: run " run " defect " $6 " >= 1e-13"; bad = 1 } }
      /\|\|R - R_true\|\| =/ { dist[run] = $5 }
      END {
        if (run != 3) { print "check_example: expected 3 runs, got " run; exit 1 }
        for (r = 1; r <= 3; ++r) {
          if (step[r] != 200) { print "check_example: run " r " ended at step " step[r]; bad = 1 }
          if (r == 1 && lag) { if (!(last[r] < first[r])) { print "check_example: run 1 loss did not fall"; bad = 1 } }
          else if (!(last[r] < 1e-10)) { print "check_example: run " r " final loss " last[r] " >= 1e-10"; bad = 1 }
          if (r > 1 && !(dist[r] < 1e-12)) { print "check_example: run " r " ||R - R_true|| " dist[r] " >= 1e-12"; bad = 1 }
        }
        if (!bad) print "check_example: fit_rotation numbers as expected"
        exit bad }' ;;
  *) echo "check_example: no checks for example '$name'"; exit 1 ;;
esac
