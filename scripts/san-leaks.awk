# san-leaks.awk -- reads the output of the test suite under LeakSanitizer and prints one line
# per leak report whose stack has a frame in the project's own code (a source path under
# core/ theory/ solvers/ montecarlo/ models/ validate/ studies/ cli/ tests/); the exit status
# is 1 when there is one, else 0. A report whose frames are all in the Criterion runner
# (libcriterion, which leaks a few bytes per parallel job) and the sanitizer is counted on
# stderr only. Criterion does not fail a test whose worker leaks, so this is what makes a
# leak of amsgd fail make san-test.
/^(Direct|Indirect) leak of / { flush(); head = $0; own = 0; inleak = 1; next }
inleak && /^ *#[0-9]+ / {
    if ($0 ~ / (core|theory|solvers|montecarlo|models|validate|studies|cli|tests)\/[A-Za-z0-9_]+\.[ch]:[0-9]+/) {
        own = 1
        if (where == "") where = $0
    }
    next
}
inleak { flush() }
function flush() {
    if (!inleak) return
    if (own) { nown++; printf "san-leaks: %s\n  %s\n", head, where }
    else runner++
    inleak = 0; own = 0; where = ""
}
END {
    flush()
    if (runner) printf "san-leaks: %d leak report(s) of the Criterion runner alone (ignored)\n", runner > "/dev/stderr"
    exit nown ? 1 : 0
}
