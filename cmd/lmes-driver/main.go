// Command lmes-driver runs in an LMEvalJob's pod. Its init container copies
// it into a volume the evaluation container shares (--copy); the evaluation
// container runs it with the job's flags, then "--" and lm-eval's command
// line. It reports progress and results to the job's status through the
// pod's ServiceAccount (LMES_JOB_NAMESPACE and LMES_JOB_NAME name the job),
// and its end to the termination message: the operator never execs into
// the pod. The flags are those of upstream's driver (cmd/lmes_driver).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/lmesdriver"
)

// repeated is a flag given any number of times, each value kept whole.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		copyTo         = fs.String("copy", "", "copy this binary to the given path and exit (the init container)")
		getStatus      = fs.Bool("get-status", false, "print the status of the driver running in this container and exit")
		shutdown       = fs.Bool("shutdown", false, "accepted for upstream's operator; the driver exits by itself when the job ends")
		o              lmesdriver.Options
		port           = fs.Int("listen-port", 18080, "loopback port of the status server (for --get-status)")
		recipes        repeated
		artifacts      repeated
		taskNames      repeated
		terminationLog = fs.String("termination-log", "/dev/termination-log", "where the final state, reason and message are written")
	)
	fs.StringVar(&o.OutputPath, "output-path", "/opt/app-root/src/output", "lm-eval's output folder")
	fs.BoolVar(&o.DetectDevice, "detect-device", false, "probe CUDA with torch and pass --device cuda or cpu to lm-eval")
	fs.BoolVar(&o.DownloadAssetsS3, "download-assets-s3", false, "run the job image's scripts/s3_downloader.py first")
	fs.BoolVar(&o.UploadToOCI, "upload-to-oci", false, "push the outputs with the job image's scripts/oci.py after a successful run")
	fs.StringVar(&o.GitURL, "custom-task-git-url", "", "git repository of custom tasks (needs --allow-online)")
	fs.StringVar(&o.GitBranch, "custom-task-git-branch", "", "branch of the custom tasks")
	fs.StringVar(&o.GitCommit, "custom-task-git-commit", "", "commit of the custom tasks")
	fs.StringVar(&o.GitPath, "custom-task-git-path", "", "folder of the custom tasks in the repository")
	fs.BoolVar(&o.AllowOnline, "allow-online", false, "the job may reach the network (custom tasks from git)")
	fs.StringVar(&o.TaskRecipesPath, "task-recipes-path", "/opt/app-root/src/my_tasks", "where recipes and custom tasks are written (lm-eval's --include_path)")
	fs.StringVar(&o.CatalogPath, "catalog-path", "/opt/app-root/src/my_catalogs", "where custom artifacts are written (the job image's UNITXT_CATALOGS)")
	fs.DurationVar(&o.MinReportInterval, "report-interval", 2*time.Second, "the least time between two progress reports to the job's status (the first and the last are never held back)")
	fs.Var(&recipes, "task-recipe", "a Unitxt recipe, written as the task tr_<i> (repeatable)")
	fs.Var(&artifacts, "custom-artifact", "type|name|value of a custom Unitxt artifact (repeatable)")
	fs.Var(&taskNames, "task-name", "a custom task's name (repeatable; accepted as upstream's)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case *copyTo != "":
		if err := copySelf(*copyTo); err != nil {
			fmt.Fprintf(stderr, "driver: copy this binary to %s: %v\n", *copyTo, err)
			return 1
		}
		return 0
	case *getStatus:
		st, err := lmesdriver.GetStatus(context.Background(), *port)
		if err != nil {
			fmt.Fprintf(stderr, "driver: %v\n", err)
			return 1
		}
		b, _ := json.Marshal(st)
		stdout.Write(b)
		return 0
	case *shutdown:
		return 0
	}
	o.Args, o.TaskRecipes, o.TaskNames, o.Log = fs.Args(), recipes, taskNames, stdout
	if len(o.Args) == 0 {
		fmt.Fprintln(stderr, "driver: no program to run: give lm-eval's command line after --")
		return 1
	}
	for _, a := range artifacts {
		art, err := lmesdriver.ParseArtifact(a)
		if err != nil {
			fmt.Fprintf(stderr, "driver: %v\n", err)
			return 2
		}
		o.Artifacts = append(o.Artifacts, art)
	}
	server := &lmesdriver.Server{}
	if err := server.Listen(*port); err != nil {
		fmt.Fprintf(stderr, "driver: the status server: %v (going on without it)\n", err)
	}
	defer server.Close()
	o.Reporters = append(o.Reporters, server, lmesdriver.Termination{Path: *terminationLog})
	if ns, name := os.Getenv("LMES_JOB_NAMESPACE"), os.Getenv("LMES_JOB_NAME"); ns != "" && name != "" {
		cfg, err := rest.InClusterConfig()
		if err == nil {
			var js *lmesdriver.JobStatus
			if js, err = lmesdriver.NewJobStatus(cfg, ns, name); err == nil {
				o.Reporters = append(o.Reporters, js)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "driver: the job's status will not be patched: %v\n", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := lmesdriver.New(o).Run(ctx)
	switch {
	case errors.Is(err, lmesdriver.ErrTerminated):
		fmt.Fprintln(stderr, "driver: terminated")
		return 143
	case err != nil:
		fmt.Fprintf(stderr, "driver: the job failed: %v\n", err)
		return 1
	}
	return 0
}

// copySelf copies the running binary to dest, executable by all.
func copySelf(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	tmp := dest + ".tmp"
	if err := os.WriteFile(tmp, b, 0o555); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}
