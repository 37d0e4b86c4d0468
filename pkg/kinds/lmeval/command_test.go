package lmeval

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

func ptr[T any](v T) *T { return &v }

func defaults(t *testing.T) Settings {
	t.Helper()
	s, err := ParseSettings(nil, nil, nil, nil, "driver:v1")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestArgsInUpstreamOrder(t *testing.T) {
	spec := lmv1alpha1.LMEvalJobSpec{
		Model:      "hf",
		ModelArgs:  []lmv1alpha1.Arg{{Name: "pretrained", Value: "google/flan-t5-base"}, {Name: "dtype", Value: "float16"}},
		TaskList:   lmv1alpha1.TaskList{TaskNames: []string{"arc_easy"}, TaskRecipes: []lmv1alpha1.TaskRecipe{{Card: lmv1alpha1.Card{Name: "cards.wnli"}}}},
		NumFewShot: ptr(3), Limit: "0.5",
		GenArgs:            []lmv1alpha1.Arg{{Name: "temperature", Value: "0"}},
		LogSamples:         ptr(true),
		BatchSize:          ptr("4"),
		SystemInstruction:  "be brief",
		ChatTemplate:       &lmv1alpha1.ChatTemplate{Enabled: true, Name: "tmpl"},
		AllowCodeExecution: ptr(true),
	}
	s := defaults(t)
	s.AllowOnline, s.AllowCodeExecution = true, true
	got := Args(&spec, s, PermitsFor(&spec, s))
	want := []string{"python", "-m", "lm_eval", "--output_path", "/opt/app-root/src/output", "--model", "hf",
		"--model_args", "pretrained=google/flan-t5-base,dtype=float16",
		"--tasks", "arc_easy,tr_0", "--include_path", "/opt/app-root/src/my_tasks",
		"--num_fewshot", "3", "--limit", "0.5", "--gen_kwargs", "temperature=0", "--log_samples",
		"--batch_size", "4", "--system_instruction", "be brief", "--apply_chat_template", "tmpl", "--confirm_run_unsafe_code"}
	if !slices.Equal(got, want) {
		t.Fatalf("args\n got %q\nwant %q", got, want)
	}
	// The administrator's denial drops the flag and names the field.
	s.AllowCodeExecution = false
	p := PermitsFor(&spec, s)
	if got := Args(&spec, s, p); slices.Contains(got, "--confirm_run_unsafe_code") {
		t.Fatalf("denied code execution still passed: %q", got)
	}
	if !slices.Equal(p.Refused, []string{"spec.allowCodeExecution"}) {
		t.Fatalf("refused = %q", p.Refused)
	}
}

func TestMinimalArgsUseDefaultBatchAndNoChatTemplateWhenDisabled(t *testing.T) {
	spec := lmv1alpha1.LMEvalJobSpec{Model: "hf", TaskList: lmv1alpha1.TaskList{TaskNames: []string{"a", "b"}}, ChatTemplate: &lmv1alpha1.ChatTemplate{Enabled: false, Name: "x"}}
	s := defaults(t)
	got := strings.Join(Args(&spec, s, PermitsFor(&spec, s)), " ")
	want := "python -m lm_eval --output_path /opt/app-root/src/output --model hf --tasks a,b --include_path /opt/app-root/src/my_tasks --batch_size 8"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestCommandCarriesRecipesArtifactsGitAndPermits(t *testing.T) {
	spec := lmv1alpha1.LMEvalJobSpec{
		Model: "hf",
		TaskList: lmv1alpha1.TaskList{
			TaskNames: []string{"my_task"},
			TaskRecipes: []lmv1alpha1.TaskRecipe{
				{Card: lmv1alpha1.Card{Name: "cards.wnli"}, Template: &lmv1alpha1.Template{Ref: "tp_0"}, Metrics: []lmv1alpha1.Metric{{Name: "metrics.accuracy"}, {Ref: "m0"}}, LoaderLimit: ptr(10), NumDemos: ptr(2), DemosPoolSize: ptr(5), Format: ptr("formats.chat_api")},
				{Card: lmv1alpha1.Card{Custom: `{"a":1}`}, SystemPrompt: &lmv1alpha1.SystemPrompt{Ref: "sp_0"}, Task: &lmv1alpha1.Task{Name: "tasks.qa"}},
			},
			CustomArtifacts: &lmv1alpha1.CustomArtifacts{
				Templates:     []lmv1alpha1.CustomArtifact{{Name: "tp_0", Value: "{}"}},
				SystemPrompts: []lmv1alpha1.CustomArtifact{{Name: "sp_0", Value: "be kind"}},
				Metrics:       []lmv1alpha1.CustomArtifact{{Name: "m0", Value: "{}"}},
				Tasks:         []lmv1alpha1.CustomArtifact{{Name: "t0", Value: "{}"}},
			},
			CustomTasks: &lmv1alpha1.CustomTasks{Source: lmv1alpha1.CustomTaskSource{GitSource: lmv1alpha1.GitSource{URL: "https://github.com/org/tasks.git", Branch: ptr("dev"), Commit: ptr("abc"), Path: "tasks"}}},
		},
		Offline:     &lmv1alpha1.OfflineSpec{StorageSpec: lmv1alpha1.OfflineStorageSpec{S3Spec: &lmv1alpha1.OfflineS3Spec{}}},
		Outputs:     &lmv1alpha1.Outputs{OCISpec: &lmv1alpha1.OCISpec{}},
		AllowOnline: ptr(true),
	}
	s := defaults(t)
	s.AllowOnline = true
	got := Command(&spec, s, PermitsFor(&spec, s))
	want := []string{"/opt/app-root/src/bin/driver", "--output-path", "/opt/app-root/src/output",
		"--download-assets-s3", "--upload-to-oci", "--detect-device", "--allow-online", "--report-interval", "10s",
		"--custom-task-git-url", "https://github.com/org/tasks.git", "--custom-task-git-branch", "dev", "--custom-task-git-commit", "abc", "--custom-task-git-path", "tasks", "--task-name", "my_task",
		"--task-recipe", "card=cards.wnli,template=templates.tp_0,metrics=[metrics.accuracy,metrics.m0],format=formats.chat_api,loader_limit=10,num_demos=2,demos_pool_size=5",
		"--custom-artifact", `card|custom_0|{"a":1}`,
		"--task-recipe", "card=cards.custom_0,system_prompt=system_prompts.sp_0,task=tasks.qa",
		"--custom-artifact", "template|tp_0|{}", "--custom-artifact", "system_prompt|sp_0|be kind", "--custom-artifact", "metric|m0|{}", "--custom-artifact", "task|t0|{}",
		"--"}
	if !slices.Equal(got, want) {
		t.Fatalf("command\n got %q\nwant %q", got, want)
	}
	// Denied online access: no flag, the field named.
	s.AllowOnline, s.DetectDevice = false, false
	p := PermitsFor(&spec, s)
	got = Command(&spec, s, p)
	if slices.Contains(got, "--allow-online") || slices.Contains(got, "--detect-device") {
		t.Fatalf("denied flags passed: %q", got)
	}
	if !slices.Equal(p.Refused, []string{"spec.allowOnline"}) {
		t.Fatalf("refused = %q", p.Refused)
	}
}

func TestBatchSizeAsUpstreamSettlesIt(t *testing.T) {
	s := defaults(t)
	for in, want := range map[string]string{
		"auto": "auto", "auto:3": "auto:3", "auto:0": "auto:24", "auto:x": "auto:24",
		"5": "5", "24": "24", "25": "24", "0": "8", "-1": "8", "big": "8", "07": "7",
	} {
		got, note := BatchSize(&lmv1alpha1.LMEvalJobSpec{BatchSize: ptr(in)}, s)
		if got != want {
			t.Errorf("batchSize %q: got %q, want %q", in, got, want)
		}
		if (note == "") != (got == in) && in != "07" {
			t.Errorf("batchSize %q: note %q for result %q", in, note, got)
		}
	}
	if got, _ := BatchSize(&lmv1alpha1.LMEvalJobSpec{}, s); got != "8" {
		t.Fatalf("unset batch size: %q", got)
	}
}

// trust_remote_code in modelArgs or genArgs runs the model repository's
// code: with lmes-allow-code-execution false it never reaches lm-eval
// (the environment variables the permit sets do not stop that argument),
// and Permitted names it; a false value, and the administrator's permit,
// leave it as written. (The second security review's finding.)
func TestTrustRemoteCodeArgumentNeedsTheCodePermit(t *testing.T) {
	spec := lmv1alpha1.LMEvalJobSpec{
		Model: "hf",
		ModelArgs: []lmv1alpha1.Arg{{Name: "pretrained", Value: "org/model"}, {Name: "trust_remote_code", Value: "True"},
			{Name: "Trust_Remote_Code", Value: "yes"}, {Name: "trust_remote_code", Value: "False"}},
		GenArgs:  []lmv1alpha1.Arg{{Name: "trust_remote_code", Value: "1"}, {Name: "temperature", Value: "0"}},
		TaskList: lmv1alpha1.TaskList{TaskNames: []string{"arc_easy"}},
	}
	s := defaults(t) // code execution denied, the operator's default
	p := PermitsFor(&spec, s)
	args := Args(&spec, s, p)
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "--model_args pretrained=org/model,trust_remote_code=False ") || !strings.Contains(joined, "--gen_kwargs temperature=0 ") {
		t.Fatalf("args %q", args)
	}
	want := []string{"spec.modelArgs[1] (trust_remote_code=True)", "spec.modelArgs[2] (Trust_Remote_Code=yes)", "spec.genArgs[0] (trust_remote_code=1)"}
	if !slices.Equal(p.Refused, want) {
		t.Fatalf("refused %q, want %q", p.Refused, want)
	}
	plan := Decide(Input{Job: &lmv1alpha1.LMEvalJob{Spec: spec}, Permits: p, Now: t0})
	if c := meta.FindStatusCondition(plan.Status.Conditions, TypePermitted); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.modelArgs[1] (trust_remote_code=True)") {
		t.Fatalf("Permitted %+v", c)
	}

	s.AllowCodeExecution = true
	p = PermitsFor(&spec, s)
	if got := strings.Join(Args(&spec, s, p), " "); !strings.Contains(got, "trust_remote_code=True,Trust_Remote_Code=yes,trust_remote_code=False") || len(p.Refused) != 0 {
		t.Fatalf("with the permit: %q, refused %q", got, p.Refused)
	}
}
