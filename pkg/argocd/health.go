// Package argocd runs the operator's Argo CD health checks (config/argocd,
// in Argo CD's own layout: <group>/<Kind>/health.lua) the way Argo CD runs
// them, and generates the snippets that deliver them to an Argo CD.
package argocd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The statuses a health script may return (Argo CD's).
var statuses = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// Health is what a script returns.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// timeout is Argo CD's for one script.
const timeout = time.Second

// Evaluate runs a health script on an object as Argo CD does: the object as
// the global obj, within a second. Without openLibs only the libraries Argo
// CD opens for a script from argocd-cm without
// resource.customizations.useOpenLibs.<group>_<Kind> are there: base,
// package and table (Argo CD adds a reduced os, which no script here uses).
func Evaluate(script string, obj map[string]any, openLibs bool) (Health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	defer l.Close()
	if !openLibs {
		for _, lib := range []struct {
			name string
			open lua.LGFunction
		}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
			l.Push(l.NewFunction(lib.open))
			l.Push(lua.LString(lib.name))
			l.Call(1, 0)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decode(l, obj))
	if err := l.DoString(script); err != nil {
		return Health{}, err
	}
	t, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("the script returned %s, not a table", l.Get(-1).Type())
	}
	h := Health{Status: lua.LVAsString(t.RawGetString("status")), Message: lua.LVAsString(t.RawGetString("message"))}
	if !statuses[h.Status] {
		return h, fmt.Errorf("the script returned status %q, which Argo CD does not know", h.Status)
	}
	return h, nil
}

// decode turns a decoded JSON or YAML value into Lua's, as Argo CD does.
func decode(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, decode(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for _, e := range v {
			t.Append(decode(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	}
	return lua.LString(fmt.Sprint(v))
}

// Check is one kind's health script.
type Check struct {
	Group, Kind string
	// Dir holds health.lua, health_test.yaml and testdata/.
	Dir    string
	Script string
}

// Key is the kind's name in argocd-cm keys: <group>_<Kind>.
func (c Check) Key() string { return c.Group + "_" + c.Kind }

// Load reads every <group>/<Kind>/health.lua under root, sorted by group
// and kind.
func Load(root string) ([]Check, error) {
	files, err := filepath.Glob(filepath.Join(root, "*", "*", "health.lua"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var checks []Check
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dir := filepath.Dir(f)
		checks = append(checks, Check{Group: filepath.Base(filepath.Dir(dir)), Kind: filepath.Base(dir), Dir: dir, Script: strings.TrimRight(string(b), "\n") + "\n"})
	}
	if len(checks) == 0 {
		return nil, fmt.Errorf("no <group>/<Kind>/health.lua under %s", root)
	}
	return checks, nil
}
