package trust

import (
	"fmt"
	"strconv"
)

// SourceError is a problem in a strict Source. Merge returns it for the first
// problem found and returns no bundle.
type SourceError struct {
	// Source is Source.Name.
	Source string
	// Key is the key the problem is in; empty for a problem with the source
	// as a whole or with an entry of Source.DER.
	Key string
	// Block is the 1-based index of the PEM block in the key (of the entry
	// in Source.DER when Key is empty); 0 when the problem is not about one
	// block.
	Block int
	// Message says what is wrong. It never contains the content of a block.
	Message string
}

// Error returns, for example,
// "ConfigMap team-a/cas, key ca.crt, block 2: not a certificate: x509: ...".
func (e *SourceError) Error() string {
	return location(e.Source, e.Key, e.Block) + ": " + e.Message
}

// TooLargeError means the merged bundle is larger than Options.MaxBytes.
type TooLargeError struct {
	// Bytes is the size of the merged PEM.
	Bytes int
	// Limit is the limit it went over.
	Limit int
}

// Error says the size, the limit and how to get under it.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the merged CA bundle is %d bytes, over the limit of %d bytes; "+
		"use fewer CA sources or keys, or turn off the public roots", e.Bytes, e.Limit)
}

// Warning is a problem in a lenient Source that Merge skipped, or a note
// about a certificate that was kept (expired or not yet valid).
type Warning struct {
	// Source is Source.Name.
	Source string
	// Key is the key the warning is about; empty for the source as a whole
	// or for an entry of Source.DER.
	Key string
	// Block is the 1-based index of the PEM block in the key (of the entry
	// in Source.DER when Key is empty); 0 when the warning is not about one
	// block.
	Block int
	// Message says what happened. It never contains the content of a
	// non-certificate block.
	Message string
}

// String formats the warning like SourceError.Error.
func (w Warning) String() string {
	return location(w.Source, w.Key, w.Block) + ": " + w.Message
}

// location formats where a problem is: "name, key k, block n",
// "name, DER certificate n", "name, key k" or "name".
func location(source, key string, block int) string {
	s := source
	switch {
	case key != "" && block > 0:
		s += ", key " + key + ", block " + strconv.Itoa(block)
	case key != "":
		s += ", key " + key
	case block > 0:
		s += ", DER certificate " + strconv.Itoa(block)
	}
	return s
}
