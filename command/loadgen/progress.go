package loadgen

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressWidth is the number of cells of the bar.
const progressWidth = 30

// logInterval is how often progress is written to something that is not
// a terminal.
const logInterval = 5 * time.Second

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressLine renders one state of the run on one line:
//
//	[=========>          ] 3,000/10,000 committed  2,950 running  1,502/s  4s
func progressLine(committed, running, total int, elapsed time.Duration) string {
	filled := 0
	if total > 0 {
		filled = min(committed*progressWidth/total, progressWidth)
	}
	bar := strings.Repeat("=", filled)
	if filled < progressWidth {
		bar += ">" + strings.Repeat(" ", progressWidth-filled-1)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(committed) / elapsed.Seconds()
	}
	return fmt.Sprintf("[%s] %s/%s committed  %s running  %s/s  %s",
		bar, thousands(committed), thousands(total), thousands(running), thousands(int(rate)), elapsed.Truncate(time.Second))
}

// progress redraws the line on w every interval until stop closes, then
// ends the line. On a writer that is not a terminal (a log file) it
// writes a new line every logInterval instead of redrawing one.
func progress(w io.Writer, t *tracker, total int, start time.Time, interval time.Duration, stop <-chan struct{}) {
	prefix := "\r"
	if !isTerminal(w) {
		prefix, interval = "", max(interval, logInterval)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	draw := func() {
		committed, running := t.progress()
		fmt.Fprint(w, prefix+progressLine(committed, running, total, time.Since(start)))
		if prefix == "" {
			fmt.Fprintln(w)
		}
	}
	for {
		select {
		case <-stop:
			draw()
			if prefix != "" {
				fmt.Fprintln(w)
			}
			return
		case <-tick.C:
			draw()
		}
	}
}

// thousands renders n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
