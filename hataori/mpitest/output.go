package mpitest

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stampedBuffer collects a job's output and when each piece arrived.
type stampedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ends  []int       // offset just past each write
	times []time.Time // arrival of each write
	watch *lineWatch  // nil: none
}

func (b *stampedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	b.ends = append(b.ends, b.buf.Len())
	b.times = append(b.times, time.Now())
	if b.watch != nil {
		b.watch.scan(b.buf.Bytes())
	}
	return n, err
}

// unmarked lists the ranks whose line the watch has not seen.
func (b *stampedBuffer) unmarked() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var rs []int
	for r, ok := range b.watch.seen {
		if !ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// lineWatch notes which ranks printed a line containing after; fired is
// closed once all of them have.
type lineWatch struct {
	after   string
	seen    []bool
	missing int
	scanned int // the output before this offset is scanned (whole lines)
	joined  joiner
	fired   chan struct{}
}

func newLineWatch(after string, ranks int) *lineWatch {
	return &lineWatch{after: after, seen: make([]bool, ranks), missing: ranks, fired: make(chan struct{})}
}

// scan looks at the whole lines of data not scanned yet (data is all the
// output so far), put back together by the watch's joiner.
func (w *lineWatch) scan(data []byte) {
	for w.missing > 0 {
		j := bytes.IndexByte(data[w.scanned:], '\n')
		if j < 0 {
			return
		}
		physical := string(data[w.scanned : w.scanned+j])
		w.scanned += j + 1
		for _, line := range w.joined.line(physical) {
			if r, body, ok := splitRankPrefix(line); ok && r < len(w.seen) && !w.seen[r] && strings.Contains(body, w.after) {
				w.seen[r] = true
				if w.missing--; w.missing == 0 {
					close(w.fired)
				}
			}
		}
	}
}

// String returns the output so far, its lines put back together (see
// joiner).
func (b *stampedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var j joiner
	var out strings.Builder
	for _, physical := range physicalLines(b.buf.String()) {
		for _, line := range j.line(physical.text) {
			out.WriteString(line + "\n")
		}
	}
	for _, line := range j.rest() {
		out.WriteString(line + "\n")
	}
	return out.String()
}

// arrival returns when the first line containing s (put back together,
// see joiner) had arrived whole: up to the newline of its last piece, or
// to the end of the output.
func (b *stampedBuffer) arrival(s string) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s == "" || b.buf.Len() == 0 {
		return time.Time{}, false
	}
	var j joiner
	lineEnd := -1
	for _, physical := range physicalLines(b.buf.String()) {
		if slices.ContainsFunc(j.line(physical.text), func(l string) bool { return strings.Contains(l, s) }) {
			lineEnd = physical.end
			break
		}
	}
	if lineEnd < 0 {
		if !slices.ContainsFunc(j.rest(), func(l string) bool { return strings.Contains(l, s) }) {
			return time.Time{}, false
		}
		lineEnd = b.buf.Len()
	}
	for k, e := range b.ends {
		if e >= lineEnd {
			return b.times[k], true
		}
	}
	return b.times[len(b.times)-1], true
}

// splitRankPrefix splits a line of a job's output into the rank of its
// prefix and the rest: "[1,R]<stdout>:" or "[1,R]<stderr>:" (Open MPI
// --tag-output: job, rank) or "[R] " (mpiexec.mpich -l). ok is false for a
// line without such a prefix, for example the launcher's own
// "[mpiexec@host] ..." messages.
func splitRankPrefix(line string) (rank int, body string, ok bool) {
	if !strings.HasPrefix(line, "[") {
		return 0, line, false
	}
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return 0, line, false
	}
	tag, rest := line[1:end], line[end+1:]
	if job, r, two := strings.Cut(tag, ","); two {
		if !digits(job) {
			return 0, line, false
		}
		tag = r
		var std bool
		for _, s := range []string{"<stdout>:", "<stderr>:"} {
			if strings.HasPrefix(rest, s) {
				rest, std = rest[len(s):], true
			}
		}
		if !std {
			return 0, line, false
		}
	} else {
		var sp bool
		if rest, sp = strings.CutPrefix(rest, " "); !sp && rest != "" {
			return 0, line, false
		}
	}
	if !digits(tag) {
		return 0, line, false
	}
	rank, err := strconv.Atoi(tag)
	if err != nil {
		return 0, line, false
	}
	return rank, rest, true
}

// digits reports whether s is a non-empty run of ASCII digits.
func digits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// splitOutput splits a job's output by rank (see Output).
func splitOutput(output string, ranks int, launcher string) Output {
	o := Output{Launcher: launcher, Ranks: make([][]string, ranks)}
	for _, line := range strings.Split(strings.TrimSuffix(output, "\n"), "\n") {
		if r, body, ok := splitRankPrefix(line); ok && r < ranks {
			o.Ranks[r] = append(o.Ranks[r], body)
		} else if line != "" {
			o.Other = append(o.Other, line)
		}
	}
	return o
}

// stripRankPrefix removes the rank prefix a launcher puts before each
// output line: "[1,0]<stdout>:" (Open MPI --tag-output) or "[0] "
// (mpiexec.mpich -l).
func stripRankPrefix(line string) string {
	if !strings.HasPrefix(line, "[") {
		return line
	}
	end := strings.Index(line, "]")
	if end < 0 {
		return line
	}
	rest := line[end+1:]
	for _, tag := range []string{"<stdout>:", "<stderr>:"} {
		if strings.HasPrefix(rest, tag) {
			return rest[len(tag):]
		}
	}
	return strings.TrimPrefix(rest, " ")
}

// joiner puts back together the lines that the launchers' rank labels
// split. Open MPI's --tag-output and mpiexec.mpich -l both label each piece
// of output they forward rather than each line: a line that reached the
// launcher in two reads comes out with a second label in its middle
// ("[1,0]<stderr>:... the coor[1,0]<stderr>:dinator of ...", "[0] abc[0]
// def"), and a piece of another rank's output may sit between its halves,
// ending the physical line. The zero joiner is ready; it keeps the begun,
// unended line of each label until that label's next piece ends it. Open
// MPI's labels are found anywhere in a line; MPICH's "[R] ", which ordinary
// text can contain too, only in a line that begins with one. Lines without
// a label (the launcher's own) pass unchanged.
type joiner struct {
	open map[string]string // tag → the line begun under it, not yet ended
	tags []string          // the tags in open, in the order their lines began
}

// openMPITag is one label of Open MPI's --tag-output, [job,rank]<stream>:,
// and mpichTag one of mpiexec.mpich -l, "[rank] ".
var (
	openMPITag = regexp.MustCompile(`\[\d+,\d+\]<std(?:out|err)>:`)
	mpichTag   = regexp.MustCompile(`\[\d+\] `)
)

// line takes one physical line of output (without its newline) and returns
// the whole lines it ends, each with one tag.
func (j *joiner) line(s string) []string {
	locs := openMPITag.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		if locs = mpichTag.FindAllStringIndex(s, -1); len(locs) == 0 || locs[0][0] != 0 {
			return []string{s}
		}
	}
	var whole []string
	if locs[0][0] > 0 {
		whole = append(whole, s[:locs[0][0]])
	}
	for i, loc := range locs {
		tag, end := s[loc[0]:loc[1]], len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		begun, ok := j.open[tag]
		if i+1 < len(locs) {
			if j.open == nil {
				j.open = map[string]string{}
			}
			if !ok {
				j.tags = append(j.tags, tag)
			}
			j.open[tag] = begun + s[loc[1]:end]
			continue
		}
		if ok {
			delete(j.open, tag)
			j.tags = slices.DeleteFunc(j.tags, func(t string) bool { return t == tag })
		}
		whole = append(whole, tag+begun+s[loc[1]:end])
	}
	return whole
}

// rest returns the lines begun and never ended (the output ended first),
// emptying the joiner.
func (j *joiner) rest() []string {
	var lines []string
	for _, tag := range j.tags {
		lines = append(lines, tag+j.open[tag])
	}
	j.open, j.tags = nil, nil
	return lines
}

// physicalLine is one line of raw output and the offset just past it (past
// its newline, if it has one).
type physicalLine struct {
	text string
	end  int
}

// physicalLines splits raw output at its newlines; a last line without a
// newline is a line too.
func physicalLines(s string) []physicalLine {
	var lines []physicalLine
	for off := 0; off < len(s); {
		n := strings.IndexByte(s[off:], '\n')
		if n < 0 {
			lines = append(lines, physicalLine{s[off:], len(s)})
			break
		}
		lines = append(lines, physicalLine{s[off : off+n], off + n + 1})
		off += n + 1
	}
	return lines
}
