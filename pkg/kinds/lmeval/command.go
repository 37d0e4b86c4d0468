package lmeval

import (
	"fmt"
	"strconv"
	"strings"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// The paths of the job image that upstream's pod layout uses.
const (
	// DriverPath is the driver inside the driver image; the init container
	// copies it to DestDriverPath, on a volume the main container shares.
	DriverPath     = "/bin/driver"
	DestDriverPath = "/opt/app-root/src/bin/driver"
	OutputPath     = "/opt/app-root/src/output"
	// TaskRecipesPath is where the driver writes Unitxt recipes as tasks
	// (lm-eval's --include_path); CatalogPath holds custom artifacts.
	TaskRecipesPath = "/opt/app-root/src/my_tasks"
	CatalogPath     = "/opt/app-root/src/my_catalogs"
	// TaskRecipePrefix names the recipe tasks tr_0, tr_1, ...; custom
	// cards are custom_0, custom_1, ...
	TaskRecipePrefix = "tr"
	CustomCardPrefix = "custom"
)

// Permits are what the job may do: each is true only where both the job
// asks and the administrator allows.
type Permits struct {
	Online, CodeExecution bool
	// RemoteCode: a trust_remote_code argument in modelArgs or genArgs
	// reaches lm-eval (the administrator allows code execution); without
	// it such an argument is dropped and named in Refused.
	RemoteCode bool
	// Refused lists the job's fields that asked for what the administrator
	// denies ("spec.allowOnline", "spec.allowCodeExecution").
	Refused []string
	// From names the setting that decided (Settings.PermitsFrom).
	From string
}

// PermitsFor returns the job's effective permits under the settings.
func PermitsFor(spec *lmv1alpha1.LMEvalJobSpec, s Settings) Permits {
	p := Permits{From: s.PermitsFrom}
	if isTrue(spec.AllowOnline) {
		if s.AllowOnline {
			p.Online = true
		} else {
			p.Refused = append(p.Refused, "spec.allowOnline")
		}
	}
	if isTrue(spec.AllowCodeExecution) {
		if s.AllowCodeExecution {
			p.CodeExecution = true
		} else {
			p.Refused = append(p.Refused, "spec.allowCodeExecution")
		}
	}
	// trust_remote_code=True runs the model repository's code: code
	// execution, whatever spec.allowCodeExecution says (the environment
	// variables the permit sets do not reach this argument).
	p.RemoteCode = s.AllowCodeExecution
	if !p.RemoteCode {
		for _, f := range []struct {
			field string
			args  []lmv1alpha1.Arg
		}{{"spec.modelArgs", spec.ModelArgs}, {"spec.genArgs", spec.GenArgs}} {
			for i, a := range f.args {
				if remoteCode(a) {
					p.Refused = append(p.Refused, fmt.Sprintf("%s[%d] (%s=%s)", f.field, i, a.Name, a.Value))
				}
			}
		}
	}
	return p
}

// remoteCode says whether an argument asks lm-eval (and the libraries it
// hands model_args to) to run a repository's code: trust_remote_code with
// a value Python reads as true (lm-eval turns "false" into False and
// numbers into numbers; any other non-empty string is true).
func remoteCode(a lmv1alpha1.Arg) bool {
	if !strings.EqualFold(strings.TrimSpace(a.Name), "trust_remote_code") {
		return false
	}
	v := strings.TrimSpace(a.Value)
	if v == "" || strings.EqualFold(v, "false") {
		return false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
		return false
	}
	return true
}

// permittedArgs are the arguments lm-eval gets: a trust_remote_code
// argument only where the administrator allows code execution.
func permittedArgs(args []lmv1alpha1.Arg, p Permits) []lmv1alpha1.Arg {
	if p.RemoteCode {
		return args
	}
	out := make([]lmv1alpha1.Arg, 0, len(args))
	for _, a := range args {
		if !remoteCode(a) {
			out = append(out, a)
		}
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }

// CheckBatchSize says whether v is a batch size lm-eval takes within max:
// "auto", "auto:N" (N > 0) or N from 1 to max.
func CheckBatchSize(v string, limit int) error {
	if v == "auto" {
		return nil
	}
	if n, ok := strings.CutPrefix(v, "auto:"); ok {
		if i, err := strconv.Atoi(n); err == nil && i > 0 {
			return nil
		}
		return fmt.Errorf("auto:N needs a whole number N of 1 or more, got %q", v)
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 1 {
		return fmt.Errorf("must be auto, auto:N or a whole number of 1 or more, got %q", v)
	}
	if i > limit {
		return fmt.Errorf("must be at most %d (%s), got %q", limit, KeyMaxBatchSize, v)
	}
	return nil
}

// BatchSize is the batch size the job runs with, as upstream settles it: the
// default when the job sets none; "auto" and a valid "auto:N" as given; an
// invalid "auto:N" becomes auto:<max>; a number above the maximum becomes the
// maximum; anything else the default. note says what was changed ("" when
// the job's value is used).
func BatchSize(spec *lmv1alpha1.LMEvalJobSpec, s Settings) (value, note string) {
	if spec.BatchSize == nil {
		return s.DefaultBatchSize, ""
	}
	v := *spec.BatchSize
	maxBatch := strconv.Itoa(s.MaxBatchSize)
	if v == "auto" {
		return v, ""
	}
	if n, ok := strings.CutPrefix(v, "auto:"); ok {
		if i, err := strconv.Atoi(n); err == nil && i > 0 {
			return v, ""
		}
		return "auto:" + maxBatch, fmt.Sprintf("spec.batchSize %q is not auto:N with N of 1 or more: auto:%s is used", v, maxBatch)
	}
	if i, err := strconv.Atoi(v); err == nil && i > 0 {
		if i > s.MaxBatchSize {
			return maxBatch, fmt.Sprintf("spec.batchSize %d is over the operator's %s: %s is used", i, KeyMaxBatchSize, maxBatch)
		}
		return strconv.Itoa(i), ""
	}
	return s.DefaultBatchSize, fmt.Sprintf("spec.batchSize %q is not auto, auto:N or a whole number: the default %s is used", v, s.DefaultBatchSize)
}

// Tasks are the names lm-eval runs: the job's task names, then one tr_<i>
// per recipe.
func Tasks(tl *lmv1alpha1.TaskList) []string {
	out := append([]string(nil), tl.TaskNames...)
	for i := range tl.TaskRecipes {
		out = append(out, fmt.Sprintf("%s_%d", TaskRecipePrefix, i))
	}
	return out
}

// Args is lm-eval's command line (the main container's args), in upstream's
// order.
func Args(spec *lmv1alpha1.LMEvalJobSpec, s Settings, p Permits) []string {
	out := []string{"python", "-m", "lm_eval", "--output_path", OutputPath, "--model", spec.Model}
	if spec.ModelArgs != nil {
		out = append(out, "--model_args", joinArgs(permittedArgs(spec.ModelArgs, p)))
	}
	out = append(out, "--tasks", strings.Join(Tasks(&spec.TaskList), ","), "--include_path", TaskRecipesPath)
	if spec.NumFewShot != nil {
		out = append(out, "--num_fewshot", strconv.Itoa(*spec.NumFewShot))
	}
	if spec.Limit != "" {
		out = append(out, "--limit", spec.Limit)
	}
	if spec.GenArgs != nil {
		out = append(out, "--gen_kwargs", joinArgs(permittedArgs(spec.GenArgs, p)))
	}
	if isTrue(spec.LogSamples) {
		out = append(out, "--log_samples")
	}
	batch, _ := BatchSize(spec, s)
	out = append(out, "--batch_size", batch)
	if spec.SystemInstruction != "" {
		out = append(out, "--system_instruction", spec.SystemInstruction)
	}
	if ct := spec.ChatTemplate; ct != nil && ct.Enabled {
		out = append(out, "--apply_chat_template")
		if ct.Name != "" {
			out = append(out, ct.Name)
		}
	}
	// Upstream passes this whenever the job asks; here only when the
	// administrator allows it too.
	if p.CodeExecution {
		out = append(out, "--confirm_run_unsafe_code")
	}
	return out
}

func joinArgs(args []lmv1alpha1.Arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Name + "=" + a.Value
	}
	return strings.Join(parts, ",")
}

// Command is the driver's command line (the main container's command),
// ending in "--" before lm-eval's, in upstream's order of flags.
func Command(spec *lmv1alpha1.LMEvalJobSpec, s Settings, p Permits) []string {
	out := []string{DestDriverPath, "--output-path", OutputPath}
	if spec.Offline != nil && spec.Offline.StorageSpec.S3Spec != nil {
		out = append(out, "--download-assets-s3")
	}
	if spec.Outputs != nil && spec.Outputs.OCISpec != nil {
		out = append(out, "--upload-to-oci")
	}
	if s.DetectDevice {
		out = append(out, "--detect-device")
	}
	if p.Online {
		out = append(out, "--allow-online")
	}
	// This operator's flag: lmes-pod-checking-interval spaces the driver's
	// progress reports (upstream's operator polled the driver that often).
	if s.PodCheckingInterval > 0 {
		out = append(out, "--report-interval", s.PodCheckingInterval.String())
	}
	tl := &spec.TaskList
	if tl.CustomTasks != nil && tl.CustomTasks.Source.GitSource.URL != "" && len(tl.TaskNames) > 0 {
		g := tl.CustomTasks.Source.GitSource
		out = append(out, "--custom-task-git-url", g.URL)
		if g.Branch != nil {
			out = append(out, "--custom-task-git-branch", *g.Branch)
		}
		if g.Commit != nil {
			out = append(out, "--custom-task-git-commit", *g.Commit)
		}
		if g.Path != "" {
			out = append(out, "--custom-task-git-path", g.Path)
		}
		for _, n := range tl.TaskNames {
			out = append(out, "--task-name", n)
		}
	}
	cards := 0
	for _, r := range tl.TaskRecipes {
		card := r.Card.Name
		if r.Card.Custom != "" {
			name := fmt.Sprintf("%s_%d", CustomCardPrefix, cards)
			out = append(out, "--custom-artifact", "card|"+name+"|"+r.Card.Custom)
			card = "cards." + name
			cards++
		}
		out = append(out, "--task-recipe", Recipe(&r, card))
	}
	if c := tl.CustomArtifacts; c != nil {
		for _, g := range []struct {
			kind string
			list []lmv1alpha1.CustomArtifact
		}{{"template", c.Templates}, {"system_prompt", c.SystemPrompts}, {"metric", c.Metrics}, {"task", c.Tasks}} {
			for _, a := range g.list {
				out = append(out, "--custom-artifact", g.kind+"|"+a.Name+"|"+a.Value)
			}
		}
	}
	return append(out, "--")
}

// Recipe is a task recipe as Unitxt's recipe string, with card as the card.
func Recipe(r *lmv1alpha1.TaskRecipe, card string) string {
	var b strings.Builder
	b.WriteString("card=" + card)
	if r.Template != nil {
		b.WriteString(",template=" + ref(r.Template.Name, r.Template.Ref, "templates"))
	}
	if r.SystemPrompt != nil {
		b.WriteString(",system_prompt=" + ref(r.SystemPrompt.Name, r.SystemPrompt.Ref, "system_prompts"))
	}
	if r.Task != nil {
		b.WriteString(",task=" + ref(r.Task.Name, r.Task.Ref, "tasks"))
	}
	if len(r.Metrics) > 0 {
		ms := make([]string, len(r.Metrics))
		for i, m := range r.Metrics {
			ms[i] = ref(m.Name, m.Ref, "metrics")
		}
		b.WriteString(",metrics=[" + strings.Join(ms, ",") + "]")
	}
	if r.Format != nil {
		b.WriteString(",format=" + *r.Format)
	}
	for _, n := range []struct {
		key string
		v   *int
	}{{"loader_limit", r.LoaderLimit}, {"num_demos", r.NumDemos}, {"demos_pool_size", r.DemosPoolSize}} {
		if n.v != nil {
			b.WriteString("," + n.key + "=" + strconv.Itoa(*n.v))
		}
	}
	return b.String()
}

// ref is a catalog name, or a custom artifact's reference under its folder.
func ref(name, custom, folder string) string {
	if name != "" {
		return name
	}
	if custom != "" {
		return folder + "." + custom
	}
	return ""
}
