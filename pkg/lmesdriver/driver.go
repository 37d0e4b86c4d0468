// Package lmesdriver is the driver of an LMEvalJob's pod (cmd/lmes-driver):
// it prepares the task recipes, custom artifacts and custom tasks, runs
// lm-eval as a child process, follows its progress bars and reports the
// job's status, without the operator ever exec'ing into the pod. Reports go
// to every Reporter given: the job's own status (through a ServiceAccount
// that may patch only that job's status), the container's termination
// message, and a local status server for `driver --get-status`.
package lmesdriver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// The messages of the job's life, as upstream's driver words them.
const (
	MessageInitializing = "initializing the evaluation job"
	MessageCompleted    = "job completed"
	// MaxProgressBars is how many bars the status keeps (the newest).
	MaxProgressBars = 10
)

// Status is what the driver reports: upstream's driver status fields.
type Status struct {
	State        lmv1alpha1.JobState      `json:"state,omitempty"`
	Reason       lmv1alpha1.Reason        `json:"reason,omitempty"`
	Message      string                   `json:"message,omitempty"`
	ProgressBars []lmv1alpha1.ProgressBar `json:"progressBars,omitempty"`
	Results      string                   `json:"results,omitempty"`
}

// Final says whether the status is the job's last.
func (s Status) Final() bool { return s.State == lmv1alpha1.JobStateComplete }

// Reporter receives each new status; the last one is Final. An error is
// logged and does not stop the job.
type Reporter interface {
	Report(ctx context.Context, s Status) error
}

// Artifact is a custom Unitxt artifact: --custom-artifact type|name|value.
type Artifact struct{ Type, Name, Value string }

// ParseArtifact reads type|name|value (the value may hold '|').
func ParseArtifact(s string) (Artifact, error) {
	parts := strings.SplitN(s, "|", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return Artifact{}, fmt.Errorf("custom artifact %q is not type|name|value", s)
	}
	return Artifact{Type: parts[0], Name: parts[1], Value: parts[2]}, nil
}

// artifactFolders are the catalog folders of the artifact types.
var artifactFolders = map[string]string{
	"card": "cards", "template": "templates", "metric": "metrics", "task": "tasks", "system_prompt": "system_prompts",
}

// Options are the driver's flags and paths.
type Options struct {
	OutputPath                            string
	DetectDevice                          bool
	DownloadAssetsS3                      bool
	UploadToOCI                           bool
	AllowOnline                           bool
	GitURL, GitBranch, GitCommit, GitPath string
	TaskRecipes                           []string
	Artifacts                             []Artifact
	TaskNames                             []string
	// Args is the program to run (lm-eval's command line).
	Args []string
	// TaskRecipesPath and CatalogPath are the job image's folders.
	TaskRecipesPath, CatalogPath string
	// ScriptsPath holds the job image's s3_downloader.py and oci.py.
	ScriptsPath string
	// GitClonePath is where custom tasks are cloned.
	GitClonePath string
	// Python runs the device probe and the scripts.
	Python string
	// Log is the pod's log (the driver's stdout).
	Log io.Writer
	// Reporters receive every status.
	Reporters []Reporter
	// MinReportInterval spaces progress reports (the first and the last
	// are never held back).
	MinReportInterval time.Duration
}

// Defaults fills the job image's paths where unset.
func (o *Options) Defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&o.OutputPath, "/opt/app-root/src/output")
	def(&o.TaskRecipesPath, "/opt/app-root/src/my_tasks")
	def(&o.CatalogPath, "/opt/app-root/src/my_catalogs")
	def(&o.ScriptsPath, "/opt/app-root/src/scripts")
	def(&o.GitClonePath, "/tmp/custom_tasks")
	def(&o.Python, "python")
	if o.Log == nil {
		o.Log = os.Stdout
	}
	if o.MinReportInterval == 0 {
		o.MinReportInterval = 2 * time.Second
	}
}

// Driver runs one job.
type Driver struct {
	opts Options

	mu         sync.Mutex
	status     Status
	lastReport time.Time
	pending    bool
}

// New returns a driver of the options (Defaults applied).
func New(opts Options) *Driver {
	opts.Defaults()
	return &Driver{opts: opts}
}

// Status returns the current status.
func (d *Driver) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.status
	s.ProgressBars = append([]lmv1alpha1.ProgressBar(nil), s.ProgressBars...)
	return s
}

// ErrTerminated is Run's error when ctx ended (the pod is being deleted):
// nothing final is reported, since the operator decides what a deleted pod
// means (cancelled, suspended).
var ErrTerminated = errors.New("terminated")

// Run runs the job to its end and reports its final status; the error is
// the job's failure (nil when it succeeded).
func (d *Driver) Run(ctx context.Context) error {
	if len(d.opts.Args) == 0 {
		return errors.New("no program to run: give lm-eval's command line after --")
	}
	d.set(ctx, Status{State: lmv1alpha1.JobStateRunning, Reason: lmv1alpha1.ReasonNone, Message: MessageInitializing}, true)
	err := d.prepare(ctx)
	if err == nil {
		err = d.execute(ctx)
	}
	if ctx.Err() != nil {
		return ErrTerminated
	}
	final := d.Status()
	final.State, final.Reason, final.Message = lmv1alpha1.JobStateComplete, lmv1alpha1.ReasonSucceeded, MessageCompleted
	if err == nil {
		final.Results, err = d.results()
	}
	if err == nil && d.opts.UploadToOCI {
		err = d.uploadToOCI(ctx)
	}
	if err != nil {
		final.Reason, final.Message = lmv1alpha1.ReasonFailed, err.Error()
	}
	d.set(ctx, final, true)
	return err
}

// prepare writes what lm-eval reads: recipes, catalogs, custom tasks, S3
// assets, artifacts, and picks the device.
func (d *Driver) prepare(ctx context.Context) error {
	if err := d.writeRecipes(); err != nil {
		return fmt.Errorf("failed to create task recipes: %w", err)
	}
	for _, dir := range []string{"cards", "templates", "system_prompts"} {
		if err := os.MkdirAll(filepath.Join(d.opts.CatalogPath, dir), 0o770); err != nil {
			return fmt.Errorf("failed to create the directories for custom artifacts: %w", err)
		}
	}
	if err := d.fetchCustomTasks(ctx); err != nil {
		return fmt.Errorf("failed to set up custom tasks: %w", err)
	}
	if d.opts.DownloadAssetsS3 {
		fmt.Fprintln(d.opts.Log, "Downloading assets from S3")
		out, err := exec.CommandContext(ctx, d.opts.Python, filepath.Join(d.opts.ScriptsPath, "s3_downloader.py")).Output()
		_, _ = d.opts.Log.Write(out) // the log is best effort
		if err != nil {
			return fmt.Errorf("failed to download assets from S3: %w", err)
		}
	}
	if err := d.writeArtifacts(); err != nil {
		return fmt.Errorf("failed to create custom artifact: %w", err)
	}
	if d.opts.DetectDevice {
		cuda, err := d.detectCUDA(ctx)
		if err != nil {
			return fmt.Errorf("failed to detect available device(s): %w", err)
		}
		d.opts.Args = WithDevice(d.opts.Args, cuda)
	}
	return nil
}

// writeRecipes writes tr_<i>.yaml per recipe, lm-eval's Unitxt task.
func (d *Driver) writeRecipes() error {
	for i, r := range d.opts.TaskRecipes {
		name := fmt.Sprintf("tr_%d", i)
		body := fmt.Sprintf("task: %s\ninclude: unitxt\nrecipe: %s", name, r)
		if err := os.WriteFile(filepath.Join(d.opts.TaskRecipesPath, name+".yaml"), []byte(body), 0o666); err != nil {
			return err
		}
	}
	return nil
}

// writeArtifacts writes each artifact under its type's folder, a dotted
// name as folders (metrics.a.b -> metrics/a/b.json); a system prompt is
// wrapped as Unitxt's textual system prompt.
func (d *Driver) writeArtifacts() error {
	for _, a := range d.opts.Artifacts {
		folder, ok := artifactFolders[a.Type]
		if !ok {
			return fmt.Errorf("invalid custom artifact type:%s", a.Type)
		}
		parts := strings.Split(a.Name, ".")
		for _, p := range parts {
			if p == "" || p == ".." || strings.ContainsAny(p, `/\`) {
				return fmt.Errorf("invalid custom artifact name %q", a.Name)
			}
		}
		dir := filepath.Join(append([]string{d.opts.CatalogPath, folder}, parts[:len(parts)-1]...)...)
		if err := os.MkdirAll(dir, 0o770); err != nil {
			return err
		}
		value := a.Value
		if a.Type == "system_prompt" {
			text, _ := jsonString(a.Value)
			value = `{ "__type__": "textual_system_prompt", "text": ` + text + ` }`
		}
		if err := os.WriteFile(filepath.Join(dir, parts[len(parts)-1]+".json"), []byte(value), 0o666); err != nil {
			return err
		}
	}
	return nil
}

// fetchCustomTasks clones the custom tasks' repository and copies its
// tasks folder into the recipes' folder (lm-eval's --include_path).
func (d *Driver) fetchCustomTasks(ctx context.Context) error {
	o := d.opts
	if o.GitURL == "" {
		return nil
	}
	if !o.AllowOnline {
		return errors.New("fetching external git tasks is not allowed when allowOnline is false")
	}
	git := func(args ...string) error {
		out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := os.RemoveAll(o.GitClonePath); err != nil {
		return err
	}
	if err := git("clone", "--", o.GitURL, o.GitClonePath); err != nil {
		return err
	}
	in := []string{"-C", o.GitClonePath, "checkout"}
	if o.GitBranch != "" {
		if err := git(append(in, o.GitBranch, "--")...); err != nil {
			return err
		}
	}
	if o.GitCommit != "" {
		if err := git(append(in, o.GitCommit, "--")...); err != nil {
			return err
		}
	}
	src := o.GitClonePath
	if o.GitPath != "" {
		src = filepath.Join(o.GitClonePath, filepath.Clean("/"+o.GitPath))
	}
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		return fmt.Errorf("specified path '%s' does not exist in the repository", o.GitPath)
	}
	return copyTree(src, o.TaskRecipesPath)
}

// copyTree copies the regular files and folders of src into dst (not .git).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if e.IsDir() {
			if e.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o770)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o666)
	})
}

var probeRE = regexp.MustCompile(`(?m)^==(True|False):(\d+)==$`)

// detectCUDA asks torch whether CUDA is there.
func (d *Driver) detectCUDA(ctx context.Context) (bool, error) {
	out, err := exec.CommandContext(ctx, d.opts.Python, "-c",
		"import torch; print('=={}:{}=='.format(torch.cuda.is_available(), torch.cuda.device_count()))").Output()
	if err != nil {
		return false, err
	}
	m := probeRE.FindSubmatch(out)
	if m == nil {
		return false, errors.New("failed to find the matched output")
	}
	return string(m[1]) == "True", nil
}

// WithDevice appends --device cuda|cpu unless args name a device already.
func WithDevice(args []string, cuda bool) []string {
	for _, a := range args {
		if a == "--device" || strings.HasPrefix(a, "--device=") {
			return args
		}
	}
	dev := "cpu"
	if cuda {
		dev = "cuda"
	}
	return append(append([]string(nil), args...), "--device", dev)
}

// execute runs the program: stdout to stdout.log, stderr to stderr.log and
// the pod's log, its progress bars into the status. A terminated ctx sends
// SIGTERM to the program, then SIGKILL after 10 s.
func (d *Driver) execute(ctx context.Context) error {
	if err := os.MkdirAll(d.opts.OutputPath, 0o770); err != nil {
		return err
	}
	stdout, err := os.Create(filepath.Join(d.opts.OutputPath, "stdout.log"))
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(d.opts.OutputPath, "stderr.log"))
	if err != nil {
		return err
	}
	defer stderr.Close()
	cmd := exec.Command(d.opts.Args[0], d.opts.Args[1:]...)
	cmd.Stdout = stdout
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(stderr, d.opts.Log, pw)
	// lm-eval asks before it runs remote code; it is answered yes only
	// where the operator permitted remote code (the pod's environment).
	if os.Getenv("TRUST_REMOTE_CODE") == "1" {
		cmd.Stdin = strings.NewReader("y\n")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.follow(ctx, pr)
	}()
	if err := cmd.Start(); err != nil {
		pw.Close()
		<-done
		return err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case werr = <-waited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			werr = <-waited
		}
	}
	pw.Close()
	<-done
	fmt.Fprintln(d.opts.Log, "lm-eval's output (stdout.log):")
	if b, err := os.ReadFile(stdout.Name()); err == nil {
		_, _ = d.opts.Log.Write(b) // the log is best effort
	}
	return werr
}

// follow reads the program's stderr and reports its progress bars.
func (d *Driver) follow(ctx context.Context, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	sc.Split(scanLinesOrCR)
	for sc.Scan() {
		if bar, ok := ParseProgress(sc.Text()); ok {
			d.progress(ctx, bar)
		}
	}
	// A line over the buffer: keep draining so the program never blocks.
	_, _ = io.Copy(io.Discard, r)
}

// scanLinesOrCR splits at \n or \r (tqdm redraws a bar after \r).
func scanLinesOrCR(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		if b == '\n' || b == '\r' {
			return i + 1, data[:i], nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// progressRE matches a tqdm bar: "<title>: 42%|###| 42/100 [00:10<00:14, 2.9it/s]"
// (rates in it/s or s/it; unknown times as ?).
var progressRE = regexp.MustCompile(`^(.*?): *(\d+%)[^\d]*?(\d+/\d+) +\[([\d:]+|\?)<([\d:]+|\?)(?:, *[^\]]*)?\]`)

// ParseProgress reads one progress bar from a line of lm-eval's stderr.
func ParseProgress(line string) (lmv1alpha1.ProgressBar, bool) {
	line = strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' {
			return -1
		}
		return r
	}, line)
	m := progressRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return lmv1alpha1.ProgressBar{}, false
	}
	return lmv1alpha1.ProgressBar{
		Message: strings.TrimSpace(m[1]), Percent: m[2], Count: m[3],
		ElapsedTime: clock(m[4]), RemainingTimeEstimate: clock(m[5]),
	}, true
}

// clock writes mm:ss as 0:mm:ss, as upstream shows times.
func clock(t string) string {
	if strings.Count(t, ":") == 1 {
		return "0:" + t
	}
	return t
}

// progress records a bar: the same title replaces the last bar, a new one
// is appended (the newest MaxProgressBars kept).
func (d *Driver) progress(ctx context.Context, bar lmv1alpha1.ProgressBar) {
	s := d.Status()
	n := len(s.ProgressBars)
	if n > 0 && s.ProgressBars[n-1].Message == bar.Message {
		last := s.ProgressBars[n-1]
		if last.Percent == bar.Percent && last.Count == bar.Count {
			return
		}
		s.ProgressBars[n-1] = bar
	} else {
		s.ProgressBars = append(s.ProgressBars, bar)
		if len(s.ProgressBars) > MaxProgressBars {
			s.ProgressBars = s.ProgressBars[len(s.ProgressBars)-MaxProgressBars:]
		}
	}
	s.State, s.Reason, s.Message = lmv1alpha1.JobStateRunning, lmv1alpha1.ReasonNone, bar.Message
	d.set(ctx, s, false)
}

// set stores the status and reports it: always when force (the first and
// the last), else at most once per MinReportInterval (a held-back status
// goes with the next report).
func (d *Driver) set(ctx context.Context, s Status, force bool) {
	d.mu.Lock()
	d.status = s
	now := time.Now()
	if !force && now.Sub(d.lastReport) < d.opts.MinReportInterval {
		if !d.pending {
			d.pending = true
			wait := d.opts.MinReportInterval - now.Sub(d.lastReport)
			go func() {
				time.Sleep(wait)
				d.mu.Lock()
				if !d.pending {
					d.mu.Unlock()
					return
				}
				d.pending = false
				d.lastReport = time.Now()
				cur := d.status
				d.mu.Unlock()
				if !cur.Final() {
					d.report(ctx, cur)
				}
			}()
		}
		d.mu.Unlock()
		return
	}
	d.pending = false
	d.lastReport = now
	d.mu.Unlock()
	d.report(ctx, s)
}

func (d *Driver) report(ctx context.Context, s Status) {
	for _, r := range d.opts.Reporters {
		if err := r.Report(context.WithoutCancel(ctx), s); err != nil {
			fmt.Fprintf(d.opts.Log, "driver: reporting the status: %v\n", err)
		}
	}
}

// results is the text of lm-eval's results file: the last *result*.json
// under the output path, in walk order ("" when there is none).
func (d *Driver) results() (string, error) {
	var last string
	err := filepath.WalkDir(d.opts.OutputPath, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if e != nil && e.IsDir() && p != d.opts.OutputPath {
				return filepath.SkipDir // an unreadable folder (lost+found) is not lm-eval's
			}
			return err
		}
		if ok, _ := filepath.Match("*result*.json", e.Name()); ok && e.Type().IsRegular() {
			last = p
		}
		return nil
	})
	if err != nil || last == "" {
		return "", err
	}
	b, err := os.ReadFile(last)
	return string(b), err
}

// uploadToOCI pushes the outputs with the job image's oci.py.
func (d *Driver) uploadToOCI(ctx context.Context) error {
	registry := os.Getenv("OCI_REGISTRY")
	if registry == "" {
		return errors.New("OCI_REGISTRY environment variable not set")
	}
	fmt.Fprintln(d.opts.Log, "Uploading results to OCI registry")
	cmd := exec.CommandContext(ctx, d.opts.Python, filepath.Join(d.opts.ScriptsPath, "oci.py"), registry, d.opts.OutputPath)
	cmd.Stdout, cmd.Stderr = d.opts.Log, d.opts.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("failed to upload results to OCI: %w", err)
	}
	return nil
}
