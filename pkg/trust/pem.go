package trust

import (
	"bytes"
	"encoding/pem"
	"strconv"
	"unicode/utf8"
)

// certificateType is the only PEM block type Merge copies.
const certificateType = "CERTIFICATE"

// beginMarker starts a PEM block; encoding/pem requires it at the start of
// a line.
var beginMarker = []byte("-----BEGIN ")

// pemBlock is one PEM block of a value, in the order of the value.
type pemBlock struct {
	// index is the 1-based index of the block in the value.
	index int
	// typ is the block's type; for a malformed block, the type its BEGIN
	// line declares.
	typ string
	// der is the decoded content; nil when the block is malformed.
	der []byte
	// ok is false when encoding/pem could not decode the block: no END
	// line, a wrong END line or bad base64.
	ok bool
}

// splitPEM returns every PEM block of data: one per BEGIN line at the start
// of a line. Text outside blocks is dropped.
//
// pem.Decode alone would silently skip a malformed block and return the
// next good one, so the value is first cut at every BEGIN line and each
// piece is decoded on its own; a piece that does not decode is reported as
// a malformed block instead of disappearing.
func splitPEM(data []byte) []pemBlock {
	starts := blockStarts(data)
	blocks := make([]pemBlock, 0, len(starts))
	for i, start := range starts {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		piece := data[start:end]
		b := pemBlock{index: i + 1}
		if p, _ := pem.Decode(piece); p != nil {
			b.typ, b.der, b.ok = p.Type, p.Bytes, true
		} else {
			b.typ = declaredType(piece)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// blockStarts returns the offsets of the BEGIN lines of data.
func blockStarts(data []byte) []int {
	var starts []int
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], beginMarker)
		if i < 0 {
			break
		}
		pos := off + i
		if pos == 0 || data[pos-1] == '\n' {
			starts = append(starts, pos)
		}
		off = pos + len(beginMarker)
	}
	return starts
}

// declaredType returns the type on the BEGIN line that piece starts with.
func declaredType(piece []byte) string {
	line := bytes.TrimPrefix(piece, beginMarker)
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t\r")
	return string(bytes.TrimSuffix(line, []byte("-----")))
}

// maxTypeLength bounds the type quoted in messages.
const maxTypeLength = 40

// quoteType quotes a block type for a message, cut to maxTypeLength runes.
// The type is metadata, not content: quoting it never leaks a key.
func quoteType(typ string) string {
	if utf8.RuneCountInString(typ) > maxTypeLength {
		typ = string([]rune(typ)[:maxTypeLength]) + "..."
	}
	return strconv.Quote(typ)
}

// indentedBegin returns the 1-based number of the first line that holds a
// BEGIN marker after leading spaces or tabs, or 0.
func indentedBegin(data []byte) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) < len(line) && bytes.HasPrefix(trimmed, beginMarker) {
			return i + 1
		}
	}
	return 0
}
