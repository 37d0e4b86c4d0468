package chaos

import (
	"bufio"
	"encoding/json"
	"os"
	"time"
)

// Write is one write request from the API server's audit log.
type Write struct {
	User, Verb, Resource, Namespace, Name string
	At                                    time.Time
}

type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// Writes reads the writes of an audit log written with localcluster's
// policy (writes at Metadata level, leases aside), those of user only when
// user is not "".
func Writes(path, user string) ([]Write, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Write
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a line being written
		}
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			continue
		}
		if user != "" && e.User.Username != user {
			continue
		}
		w := Write{User: e.User.Username, Verb: e.Verb, At: e.RequestReceived}
		if e.ObjectRef != nil {
			w.Resource, w.Namespace, w.Name = e.ObjectRef.Resource, e.ObjectRef.Namespace, e.ObjectRef.Name
		}
		out = append(out, w)
	}
	return out, sc.Err()
}
