package trustyai

import (
	"encoding/json"
	"fmt"
	"strings"
)

// MM_PAYLOAD_PROCESSORS is a list of URLs separated by spaces, which ModelMesh
// sends every payload to. Where another manager set the variable (kubectl,
// ModelMesh's own controller, upstream's operator), the wiring appends its URL
// to that list and keeps the rest exactly as it was; on delete it takes its
// URL out again, and nothing else. These functions work on the text alone:
// every other byte of the value stays as the other manager wrote it.

// AppendManager is the field manager of the wiring's edits of a
// MM_PAYLOAD_PROCESSORS that another manager set: JSON patches on the value
// alone, each with the value it was computed from as a precondition (a
// server-side apply would either conflict, or when forced take the variable
// over, and its later give-back would remove the other manager's value).
const AppendManager = FieldManager + "-append"

// hasToken says whether the list holds the URL as one of its entries.
func hasToken(list, url string) bool {
	for _, t := range strings.Fields(list) {
		if t == url {
			return true
		}
	}
	return false
}

// appendToken is the list with the URL after its entries, separated by one
// space; the list itself unchanged (its spacing included) when it holds the
// URL already, and the URL alone when the list is blank.
func appendToken(list, url string) string {
	switch {
	case hasToken(list, url):
		return list
	case strings.TrimSpace(list) == "":
		return url
	case strings.HasSuffix(list, " "):
		return list + url
	}
	return list + " " + url
}

// withoutTokens is the list without the given URLs, each taken out with the
// one space that joined it to the list (the space before it, or after it at
// the start): what appendToken added comes out, and every other byte stays.
func withoutTokens(list string, urls ...string) string {
	for _, url := range urls {
		for {
			i := tokenIndex(list, url)
			if i < 0 {
				break
			}
			start, end := i, i+len(url)
			switch {
			case start > 0 && list[start-1] == ' ':
				start--
			case end < len(list) && list[end] == ' ':
				end++
			}
			list = list[:start] + list[end:]
		}
	}
	return list
}

// tokenIndex is where the URL stands as a whole entry of the list; -1 when
// it does not.
func tokenIndex(list, url string) int {
	if url == "" {
		return -1
	}
	for from := 0; from < len(list); {
		i := strings.Index(list[from:], url)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(url)
		if (i == 0 || isSpace(list[i-1])) && (end == len(list) || isSpace(list[end])) {
			return i
		}
		from = i + 1
	}
	return -1
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// valueEdit is a change of the value of the mm container's
// MM_PAYLOAD_PROCESSORS, from Old (what was read) to New.
type valueEdit struct {
	// Container and Env index the mm container and the variable as read.
	Container, Env int
	Old, New       string
}

// jsonPatch is the edit as a JSON patch (RFC 6902) whose tests make it
// apply only to the object that was read (its UID), where the container and
// the variable are still at the indexes read and the value is still Old;
// otherwise the API server refuses it and nothing changes. It replaces the
// value alone.
func (e valueEdit) jsonPatch(uid string) ([]byte, error) {
	c := fmt.Sprintf("/spec/template/spec/containers/%d", e.Container)
	v := fmt.Sprintf("%s/env/%d", c, e.Env)
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value string `json:"value"`
	}
	ops := []op{
		{"test", "/metadata/uid", uid},
		{"test", c + "/name", modelMeshContainer},
		{"test", v + "/name", envPayloadProcessors},
		// An empty Old fails this test (the API leaves an empty value out of
		// the object): the wiring edits only values another manager set.
		{"test", v + "/value", e.Old},
		{"replace", v + "/value", e.New},
	}
	return json.Marshal(ops)
}
