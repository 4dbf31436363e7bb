package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Limits of the schema-less field dump: how deep into nested messages it
// goes and how many lines it prints in all.
const (
	dumpMaxDepth = 3
	dumpMaxLines = 60
)

// envelopeFieldNames are runtime.Unknown's fields, the envelope around
// every object kube-apiserver stores as protobuf.
var envelopeFieldNames = map[protowire.Number]string{1: "typeMeta", 2: "raw", 3: "contentEncoding", 4: "contentType"}

// typeMetaFieldNames are the fields of the envelope's typeMeta.
var typeMetaFieldNames = map[protowire.Number]string{1: "apiVersion", 2: "kind"}

// printStoredValue shows a stored value as it is: a protobuf envelope
// field by field, read with protowire and no schema (etcd sees only these
// bytes), or JSON as JSON.
func printStoredValue(out io.Writer, v []byte) {
	switch {
	case bytes.HasPrefix(v, protobufPrefix):
		fmt.Fprintf(out, "envelope:        %q, then a runtime.Unknown message, field by field (no schema: numbers, wire types, lengths):\n", protobufPrefix)
		d := &dumper{out: out}
		d.message(v[len(protobufPrefix):], 1, envelopeFieldNames)
		if d.lines >= dumpMaxLines {
			fmt.Fprintln(out, "  ...")
		}
	case json.Valid(v):
		var indented bytes.Buffer
		if err := json.Indent(&indented, v, "", "  "); err == nil {
			fmt.Fprintf(out, "stored JSON:\n%s\n", indented.String())
		}
	}
}

// dumper prints protobuf fields, one per line, indented by depth.
type dumper struct {
	out   io.Writer
	lines int
}

// message prints the fields of b. names labels fields at this level
// (only the envelope has known names); inside raw, field 1 is the
// object's metadata in every Kubernetes type, the rest depends on the kind.
func (d *dumper) message(b []byte, depth int, names map[protowire.Number]string) {
	for len(b) > 0 && d.lines < dumpMaxLines {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			d.line(depth, "(unreadable: %v)", protowire.ParseError(n))
			return
		}
		b = b[n:]
		size := protowire.ConsumeFieldValue(num, typ, b)
		if size < 0 {
			d.line(depth, "field %d: (unreadable: %v)", num, protowire.ParseError(size))
			return
		}
		d.field(num, typ, b[:size], depth, names[num])
		b = b[size:]
	}
}

// field prints one field: a varint as a number, bytes as a quoted string
// when they read as text, as a nested message when they parse as one,
// otherwise as their length.
func (d *dumper) field(num protowire.Number, typ protowire.Type, v []byte, depth int, name string) {
	label := fmt.Sprintf("field %d", num)
	if name != "" {
		label += " " + name
	}
	switch typ {
	case protowire.VarintType:
		x, _ := protowire.ConsumeVarint(v)
		d.line(depth, "%s (varint): %d", label, x)
	case protowire.BytesType:
		val, _ := protowire.ConsumeBytes(v)
		switch {
		case len(val) == 0:
			d.line(depth, "%s (bytes, 0): \"\"", label)
		case isText(val):
			d.line(depth, "%s (bytes, %d): %q", label, len(val), clip(string(val), 60))
		case depth < dumpMaxDepth && isMessage(val):
			note := ""
			if name == "raw" {
				note = ": the object's own protobuf message (field 1 is its metadata)"
			}
			d.line(depth, "%s (message, %d bytes)%s", label, len(val), note)
			var sub map[protowire.Number]string
			if name == "typeMeta" {
				sub = typeMetaFieldNames
			}
			d.message(val, depth+1, sub)
		default:
			d.line(depth, "%s (bytes, %d)", label, len(val))
		}
	default:
		d.line(depth, "%s (wire type %d, %d bytes)", label, typ, len(v))
	}
}

func (d *dumper) line(depth int, format string, args ...any) {
	if d.lines >= dumpMaxLines {
		return
	}
	d.lines++
	fmt.Fprintf(d.out, "%s%s\n", strings.Repeat("  ", depth), fmt.Sprintf(format, args...))
}

// isText reports whether b reads as printable UTF-8 text.
func isText(b []byte) bool {
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}

// isMessage reports whether b parses, to its end, as protobuf fields.
func isMessage(b []byte) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num > 10000 {
			return false
		}
		b = b[n:]
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
