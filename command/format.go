package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"
)

// Widths of identifiers in output: short by default, full with -verbose.
const (
	shortIDLength = 8
	fullIDLength  = 36
)

// noneValue stands in for an empty value in key/value output.
const noneValue = "<none>"

// limit cuts s to at most n bytes; IDs are ASCII, so this never splits a
// character that matters.
func limit(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// idLength is the ID width for the -verbose setting.
func idLength(verbose bool) int {
	if verbose {
		return fullIDLength
	}
	return shortIDLength
}

// formatKV renders "Key|Value" rows as an aligned block glued with " = ",
// with <none> for an empty value:
//
//	ID     = example
//	Status = <none>
func formatKV(rows []string) string {
	keys := make([]string, len(rows))
	vals := make([]string, len(rows))
	width := 0
	for i, r := range rows {
		k, v, _ := strings.Cut(r, "|")
		keys[i], vals[i] = strings.TrimSpace(k), strings.TrimSpace(v)
		if vals[i] == "" {
			vals[i] = noneValue
		}
		width = max(width, utf8.RuneCountInString(keys[i]))
	}
	var b strings.Builder
	for i := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(pad(keys[i], width))
		b.WriteString(" = ")
		b.WriteString(vals[i])
	}
	return b.String()
}

// formatList renders "a|b|c" rows as columns separated by two spaces. The
// first row is the header. Trailing space is trimmed from each line.
func formatList(rows []string) string {
	cells := make([][]string, len(rows))
	var widths []int
	for i, r := range rows {
		cells[i] = strings.Split(r, "|")
		for j, c := range cells[i] {
			c = strings.TrimSpace(c)
			cells[i][j] = c
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for i, row := range cells {
		if i > 0 {
			b.WriteByte('\n')
		}
		var line strings.Builder
		for j, c := range row {
			if j < len(row)-1 {
				line.WriteString(pad(c, widths[j]))
				line.WriteString("  ")
			} else {
				line.WriteString(c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
	}
	return b.String()
}

func pad(s string, width int) string {
	if n := width - utf8.RuneCountInString(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// timeLayout is how every time is printed: RFC 3339 in the local zone.
const timeLayout = time.RFC3339

// formatTime prints t, or "" for the zero time (shown as <none> in a KV
// block).
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format(timeLayout)
}

// formatUnixNano prints a Unix-nanosecond timestamp as the API carries
// CreateTime, ModifyTime and SubmitTime.
func formatUnixNano(ns int64) string {
	if ns == 0 {
		return ""
	}
	return formatTime(time.Unix(0, ns))
}

// plural returns "1 node", "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// formatMB prints a size given in MB the way people read it.
func formatMB(mb int64) string {
	switch {
	case mb >= 1024*1024:
		return fmt.Sprintf("%.1f TiB", float64(mb)/(1024*1024))
	case mb >= 1024:
		return fmt.Sprintf("%.1f GiB", float64(mb)/1024)
	default:
		return fmt.Sprintf("%d MiB", mb)
	}
}

// dataFormat renders data as indented JSON or through a Go template, for
// the -json and -t flags.
func dataFormat(data any, asJSON bool, tmpl string) (string, error) {
	if asJSON && tmpl != "" {
		return "", fmt.Errorf("both -json and -t are not allowed")
	}
	if tmpl != "" {
		t, err := template.New("output").Parse(tmpl)
		if err != nil {
			return "", fmt.Errorf("invalid template: %w", err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", fmt.Errorf("executing template: %w", err)
		}
		return buf.String(), nil
	}
	out, err := json.MarshalIndent(data, "", "    ")
	if err != nil {
		return "", fmt.Errorf("encoding JSON: %w", err)
	}
	return string(out), nil
}

// formatOutputFlagsUsage documents -json and -t.
const formatOutputFlagsUsage = `
  -json
    Output the result in its JSON format.

  -t=<template>
    Format and display the result using a Go template.`
