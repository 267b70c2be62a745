# run.sh, sourced by bench-fixed.sh and bench-collectives.sh: run one
# benchmark launch and collect its summary lines.
#
# bench_run LABEL SELECT STRIP CMD...: prints LABEL with the load average,
# runs CMD and prints its output; the output lines matching SELECT (a grep
# pattern) go to the file $summary with STRIP (a sed pattern) replaced by
# "[LABEL] ". A failing CMD prints what it wrote and a FAILED line (also
# into the summary), and the script goes on.
bench_run() {
	local label="$1" select="$2" strip="$3" out
	shift 3
	echo "=== $label; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	out="$("$@")" || { echo "$out"; echo "[$label] FAILED" | tee -a "$summary"; return 0; }
	echo "$out"
	grep "$select" <<<"$out" | sed "s|$strip|[$label] |" >>"$summary" || true
}

# bench_summary prints the collected summary lines.
bench_summary() {
	echo
	echo "=== summary (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
	cat "$summary"
}
