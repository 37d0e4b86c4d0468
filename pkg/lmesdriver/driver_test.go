package lmesdriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// TestMain makes the test binary lm-eval's stand-in when LMES_STUB is set:
// it prints tqdm bars to stderr, a line to stdout, writes a results file
// under --output_path and exits with LMES_STUB_EXIT; with LMES_STUB=sleep
// it sleeps until killed.
func TestMain(m *testing.M) {
	switch os.Getenv("LMES_STUB") {
	case "":
		os.Exit(m.Run())
	case "sleep":
		fmt.Fprintln(os.Stderr, "Requesting API:   0%|          | 0/10 [00:00<?, ?it/s]")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	out := ""
	for i, a := range os.Args {
		if a == "--output_path" && i+1 < len(os.Args) {
			out = os.Args[i+1]
		}
	}
	fmt.Fprintln(os.Stdout, "lm-eval stub args:", strings.Join(os.Args[1:], " "))
	for _, bar := range []string{
		"Requesting API:   0%|          | 1367/1200000 [09:27<134:30:31,  2.48it/s]",
		"Requesting API:  50%|#####     | 600000/1200000 [19:27<19:30,  2.48it/s]",
		"Running loglikelihood requests: 100%|##########| 100/100 [00:10<00:00,  9.90it/s]",
	} {
		fmt.Fprint(os.Stderr, bar+"\r")
		time.Sleep(30 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr)
	if out != "" {
		dir := filepath.Join(out, "model__stub")
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, "results_2026-12-06.json"), []byte(`{"results": {"arc_easy": {"acc,none": 0.5}}}`+"\n"), 0o644)
	}
	code := 0
	_, _ = fmt.Sscan(os.Getenv("LMES_STUB_EXIT"), &code) // unset: exit 0
	os.Exit(code)
}

// recorder keeps every status reported.
type recorder struct {
	mu  sync.Mutex
	all []Status
}

func (r *recorder) Report(_ context.Context, s Status) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, s)
	return nil
}

func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.all {
		if len(out) == 0 || out[len(out)-1] != s.Message {
			out = append(out, s.Message)
		}
	}
	return out
}

func (r *recorder) last() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.all[len(r.all)-1]
}

// stubOptions are options running the stub as lm-eval in temporary folders.
func stubOptions(t *testing.T, exit string, rec *recorder) Options {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LMES_STUB", "run")
	t.Setenv("LMES_STUB_EXIT", exit)
	dir := t.TempDir()
	o := Options{
		OutputPath: filepath.Join(dir, "output"), TaskRecipesPath: filepath.Join(dir, "my_tasks"), CatalogPath: filepath.Join(dir, "my_catalogs"),
		ScriptsPath: filepath.Join(dir, "scripts"), GitClonePath: filepath.Join(dir, "clone"),
		Args:      []string{self, "--output_path", filepath.Join(dir, "output"), "--model", "hf"},
		Log:       io.Discard,
		Reporters: []Reporter{rec, Termination{Path: filepath.Join(dir, "termination-log")}},
		// Every progress report goes out in these tests.
		MinReportInterval: time.Nanosecond,
	}
	if err := os.MkdirAll(o.TaskRecipesPath, 0o755); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestRunReportsProgressResultsAndEnd(t *testing.T) {
	rec := &recorder{}
	o := stubOptions(t, "0", rec)
	o.TaskRecipes = []string{"card=cards.wnli,template=templates.classification.multi_class.relation.default,metrics=[metrics.accuracy]", "card=cards.custom_0"}
	o.Artifacts = []Artifact{
		{Type: "card", Name: "custom_0", Value: `{"__type__": "task_card", "loader": {}}`},
		{Type: "template", Name: "mytemplate.tp_0", Value: `{"input_format": "x"}`},
		{Type: "system_prompt", Name: "sp_0", Value: `say "hi"`},
		{Type: "metric", Name: "llm_as_judge.rating.m", Value: `{"__type__": "m"}`},
		{Type: "task", Name: "generation", Value: `{"__type__": "task"}`},
	}
	if err := New(o).Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{MessageInitializing, "Requesting API", "Running loglikelihood requests", MessageCompleted}
	if got := rec.messages(); !slices.Equal(got, want) {
		t.Fatalf("messages %q, want %q", got, want)
	}
	last := rec.last()
	if last.State != lmv1alpha1.JobStateComplete || last.Reason != lmv1alpha1.ReasonSucceeded {
		t.Fatalf("final %+v", last)
	}
	if last.Results != `{"results": {"arc_easy": {"acc,none": 0.5}}}`+"\n" {
		t.Fatalf("results %q", last.Results)
	}
	wantBars := []lmv1alpha1.ProgressBar{
		{Message: "Requesting API", Percent: "50%", Count: "600000/1200000", ElapsedTime: "0:19:27", RemainingTimeEstimate: "0:19:30"},
		{Message: "Running loglikelihood requests", Percent: "100%", Count: "100/100", ElapsedTime: "0:00:10", RemainingTimeEstimate: "0:00:00"},
	}
	if !slices.Equal(last.ProgressBars, wantBars) {
		t.Fatalf("bars %+v\nwant %+v", last.ProgressBars, wantBars)
	}
	for path, body := range map[string]string{
		filepath.Join(o.TaskRecipesPath, "tr_0.yaml"):                               "task: tr_0\ninclude: unitxt\nrecipe: " + o.TaskRecipes[0],
		filepath.Join(o.TaskRecipesPath, "tr_1.yaml"):                               "task: tr_1\ninclude: unitxt\nrecipe: card=cards.custom_0",
		filepath.Join(o.CatalogPath, "cards", "custom_0.json"):                      `{"__type__": "task_card", "loader": {}}`,
		filepath.Join(o.CatalogPath, "templates", "mytemplate", "tp_0.json"):        `{"input_format": "x"}`,
		filepath.Join(o.CatalogPath, "system_prompts", "sp_0.json"):                 `{ "__type__": "textual_system_prompt", "text": "say \"hi\"" }`,
		filepath.Join(o.CatalogPath, "metrics", "llm_as_judge", "rating", "m.json"): `{"__type__": "m"}`,
		filepath.Join(o.CatalogPath, "tasks", "generation.json"):                    `{"__type__": "task"}`,
	} {
		b, err := os.ReadFile(path)
		if err != nil || string(b) != body {
			t.Errorf("%s: %q %v, want %q", path, b, err, body)
		}
	}
	out, _ := os.ReadFile(filepath.Join(o.OutputPath, "stdout.log"))
	if !strings.Contains(string(out), "lm-eval stub args: --output_path") {
		t.Fatalf("stdout.log: %q", out)
	}
	errLog, _ := os.ReadFile(filepath.Join(o.OutputPath, "stderr.log"))
	if !strings.Contains(string(errLog), "Running loglikelihood requests: 100%") {
		t.Fatalf("stderr.log: %q", errLog)
	}
	term, _ := os.ReadFile(filepath.Join(filepath.Dir(o.OutputPath), "termination-log"))
	if string(term) != `{"state":"Complete","reason":"Succeeded","message":"job completed"}` {
		t.Fatalf("termination message %s", term)
	}
}

func TestRunReportsTheProgramsFailure(t *testing.T) {
	rec := &recorder{}
	o := stubOptions(t, "3", rec)
	err := New(o).Run(context.Background())
	if err == nil || err.Error() != "exit status 3" {
		t.Fatalf("Run: %v", err)
	}
	last := rec.last()
	if last.State != lmv1alpha1.JobStateComplete || last.Reason != lmv1alpha1.ReasonFailed || last.Message != "exit status 3" || last.Results != "" {
		t.Fatalf("final %+v", last)
	}
	term, _ := os.ReadFile(filepath.Join(filepath.Dir(o.OutputPath), "termination-log"))
	if string(term) != `{"state":"Complete","reason":"Failed","message":"exit status 3"}` {
		t.Fatalf("termination message %s", term)
	}
}

func TestPreparationFailuresAreReportedBeforeTheProgramRuns(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(*Options)
		want string
	}{
		"git without online":   {func(o *Options) { o.GitURL = "https://github.com/org/tasks" }, "failed to set up custom tasks: fetching external git tasks is not allowed when allowOnline is false"},
		"S3 script missing":    {func(o *Options) { o.DownloadAssetsS3 = true; o.Python = "false" }, "failed to download assets from S3: exit status 1"},
		"bad artifact type":    {func(o *Options) { o.Artifacts = []Artifact{{Type: "dataset", Name: "x", Value: "{}"}} }, "failed to create custom artifact: invalid custom artifact type:dataset"},
		"artifact path climb":  {func(o *Options) { o.Artifacts = []Artifact{{Type: "card", Name: "a..b", Value: "{}"}} }, `failed to create custom artifact: invalid custom artifact name "a..b"`},
		"device probe fails":   {func(o *Options) { o.DetectDevice = true; o.Python = "false" }, "failed to detect available device(s): exit status 1"},
		"OCI without registry": {func(o *Options) { o.UploadToOCI = true }, "OCI_REGISTRY environment variable not set"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			o := stubOptions(t, "0", rec)
			t.Setenv("OCI_REGISTRY", "")
			c.edit(&o)
			if err := New(o).Run(context.Background()); err == nil || err.Error() != c.want {
				t.Fatalf("Run: %v, want %q", err, c.want)
			}
			if last := rec.last(); last.Reason != lmv1alpha1.ReasonFailed || last.Message != c.want {
				t.Fatalf("final %+v", last)
			}
		})
	}
}

func TestCustomTasksFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (the driver runs it in the job image):", err)
	}
	repo := t.TempDir()
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	gitIn("init", "-q", "-b", "main")
	if err := os.MkdirAll(filepath.Join(repo, "tasks", "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "tasks", "mine", "my_task.yaml"), []byte("task: my_task\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("add", ".")
	gitIn("commit", "-q", "-m", "tasks")
	gitIn("checkout", "-q", "-b", "dev")
	if err := os.WriteFile(filepath.Join(repo, "tasks", "mine", "my_task.yaml"), []byte("task: my_task_dev\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("commit", "-q", "-am", "dev")

	rec := &recorder{}
	o := stubOptions(t, "0", rec)
	o.GitURL, o.GitBranch, o.GitPath, o.AllowOnline = repo, "dev", "tasks", true
	if err := New(o).Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(o.TaskRecipesPath, "mine", "my_task.yaml"))
	if err != nil || string(b) != "task: my_task_dev\n" {
		t.Fatalf("custom task: %q %v", b, err)
	}
	o.GitPath = "nowhere"
	err = New(o).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "specified path 'nowhere' does not exist in the repository") {
		t.Fatalf("missing path: %v", err)
	}
}

func TestTerminationStopsTheProgramAndReportsNothingFinal(t *testing.T) {
	rec := &recorder{}
	o := stubOptions(t, "0", rec)
	t.Setenv("LMES_STUB", "sleep")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(rec.messages()) < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	err := New(o).Run(ctx)
	if !errors.Is(err, ErrTerminated) {
		t.Fatalf("Run: %v", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("the program was not stopped by SIGTERM (%v)", d)
	}
	if last := rec.last(); last.Final() {
		t.Fatalf("a final status was reported: %+v", last)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(o.OutputPath), "termination-log")); !os.IsNotExist(err) {
		t.Fatalf("termination message written: %v", err)
	}
}

func TestProgressReportsAreSpaced(t *testing.T) {
	rec := &recorder{}
	d := New(Options{Reporters: []Reporter{rec}, MinReportInterval: 200 * time.Millisecond, Log: io.Discard})
	ctx := context.Background()
	d.set(ctx, Status{State: lmv1alpha1.JobStateRunning, Message: MessageInitializing}, true)
	for i := range 50 {
		d.progress(ctx, lmv1alpha1.ProgressBar{Message: "bar", Percent: fmt.Sprintf("%d%%", i), Count: fmt.Sprintf("%d/50", i)})
	}
	time.Sleep(400 * time.Millisecond)
	rec.mu.Lock()
	n := len(rec.all)
	last := rec.all[n-1]
	rec.mu.Unlock()
	if n > 3 {
		t.Fatalf("%d reports for 50 bars within the interval", n)
	}
	if last.ProgressBars[0].Percent != "49%" {
		t.Fatalf("the held-back bar was not reported: %+v", last)
	}
}

func TestParseProgress(t *testing.T) {
	for line, want := range map[string]*lmv1alpha1.ProgressBar{
		"Requesting API:   0%|▏      | 1367/1200000 [09:27<134:30:31,  2.48it/s]": {Message: "Requesting API", Percent: "0%", Count: "1367/1200000", ElapsedTime: "0:09:27", RemainingTimeEstimate: "134:30:31"},
		"Evaluating responses: 1%|  | 1000/100000 [09:28<30:31, 2.48it/s]":        {Message: "Evaluating responses", Percent: "1%", Count: "1000/100000", ElapsedTime: "0:09:28", RemainingTimeEstimate: "0:30:31"},
		"Slow: 10%|#  | 1/10 [00:05<00:45,  5.00s/it]":                            {Message: "Slow", Percent: "10%", Count: "1/10", ElapsedTime: "0:00:05", RemainingTimeEstimate: "0:00:45"},
		"Start:   0%|          | 0/10 [00:00<?, ?it/s]":                           {Message: "Start", Percent: "0%", Count: "0/10", ElapsedTime: "0:00:00", RemainingTimeEstimate: "?"},
		"2026-12-06 INFO loading model":                                           nil,
		"":                                                                        nil,
	} {
		got, ok := ParseProgress(line)
		if (want == nil) == ok || (want != nil && got != *want) {
			t.Errorf("%q: got %+v %v, want %+v", line, got, ok, want)
		}
	}
}

func TestWithDevice(t *testing.T) {
	if got := WithDevice([]string{"python", "-m", "lm_eval"}, true); !slices.Equal(got, []string{"python", "-m", "lm_eval", "--device", "cuda"}) {
		t.Fatal(got)
	}
	if got := WithDevice([]string{"lm_eval"}, false); !slices.Equal(got, []string{"lm_eval", "--device", "cpu"}) {
		t.Fatal(got)
	}
	in := []string{"lm_eval", "--device", "mps"}
	if got := WithDevice(in, true); !slices.Equal(got, in) {
		t.Fatal(got)
	}
}

func TestTerminationMessageFitsTheKubeletsLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t")
	if err := (Termination{Path: path}).Report(context.Background(), Status{State: lmv1alpha1.JobStateComplete, Reason: lmv1alpha1.ReasonFailed, Message: strings.Repeat("é", 5000)}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var s Status
	if len(b) > MaxTerminationMessage || json.Unmarshal(b, &s) != nil || s.Reason != lmv1alpha1.ReasonFailed {
		t.Fatalf("%d bytes: %.80s", len(b), b)
	}
}

// TestJobStatusPatchesOnlyTheStatusOfItsJob checks the request the reporter
// makes (the ServiceAccount's Role and a real API server are the
// integration tests' part).
func TestJobStatusPatchesOnlyTheStatusOfItsJob(t *testing.T) {
	var got struct {
		method, path, ctype string
		body                map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.ctype = r.Method, r.URL.Path, r.Header.Get("Content-Type")
		_ = json.NewDecoder(r.Body).Decode(&got.body) // a body that does not decode fails the assertions on it
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	js, err := NewJobStatus(&rest.Config{Host: srv.URL}, "team-a", "eval-1")
	if err != nil {
		t.Fatal(err)
	}
	err = js.Report(context.Background(), Status{State: lmv1alpha1.JobStateComplete, Reason: lmv1alpha1.ReasonSucceeded, Message: MessageCompleted, Results: `{"r":1}`})
	if err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPatch || got.path != "/apis/trustyai.opendatahub.io/v1alpha1/namespaces/team-a/lmevaljobs/eval-1/status" || got.ctype != "application/merge-patch+json" {
		t.Fatalf("request %s %s %s", got.method, got.path, got.ctype)
	}
	st := got.body["status"].(map[string]any)
	// The end is the kubelet's to publish (the termination message): the
	// final report keeps the state Running, with the results.
	if st["state"] != "Running" || st["reason"] != "NoReason" || st["message"] != MessageCompleted || st["results"] != `{"r":1}` || st["progressBars"] != nil {
		t.Fatalf("patch %v", got.body)
	}
	for _, k := range []string{"completeTime", "podName", "lastScheduleTime", "conditions", "observedGeneration"} {
		if _, ok := st[k]; ok {
			t.Fatalf("the patch writes %s, which is the operator's: %v", k, got.body)
		}
	}
	if len(got.body) != 1 {
		t.Fatalf("the patch touches more than status: %v", got.body)
	}
}

func TestStatusServerAnswersUpstreamsPaths(t *testing.T) {
	s := &Server{}
	ln := freePort(t)
	if err := s.Listen(ln); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Report(context.Background(), Status{State: lmv1alpha1.JobStateRunning, Message: "bar"}); err != nil {
		t.Fatal(err)
	}
	st, err := GetStatus(context.Background(), ln)
	if err != nil || st.Message != "bar" {
		t.Fatalf("GetStatus: %+v %v", st, err)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d//GetStatus", ln))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("//GetStatus: %v %v", resp, err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var port int
	if _, err := fmt.Sscanf(srv.URL[strings.LastIndex(srv.URL, ":")+1:], "%d", &port); err != nil {
		t.Fatal(err)
	}
	return port
}
