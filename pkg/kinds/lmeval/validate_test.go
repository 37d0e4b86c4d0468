package lmeval

import (
	"strings"
	"testing"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

func TestValidate(t *testing.T) {
	str := func(s string) *string { return &s }
	recipe := func(r lmv1alpha1.TaskRecipe, c *lmv1alpha1.CustomArtifacts) lmv1alpha1.LMEvalJobSpec {
		return lmv1alpha1.LMEvalJobSpec{Model: "hf", TaskList: lmv1alpha1.TaskList{TaskRecipes: []lmv1alpha1.TaskRecipe{r}, CustomArtifacts: c}}
	}
	git := func(branch, commit *string) lmv1alpha1.LMEvalJobSpec {
		return lmv1alpha1.LMEvalJobSpec{Model: "hf", TaskList: lmv1alpha1.TaskList{TaskNames: []string{"t"},
			CustomTasks: &lmv1alpha1.CustomTasks{Source: lmv1alpha1.CustomTaskSource{GitSource: lmv1alpha1.GitSource{URL: "https://github.com/o/r", Branch: branch, Commit: commit}}}}}
	}
	good := &lmv1alpha1.CustomArtifacts{
		Templates: []lmv1alpha1.CustomArtifact{{Name: "tp", Value: `{"input_format":"{x}","output_format":"{y}"}`}},
		Metrics:   []lmv1alpha1.CustomArtifact{{Name: "m", Value: `{"__type__":"llm_as_judge"}`}},
		Tasks:     []lmv1alpha1.CustomArtifact{{Name: "tk", Value: `{"__type__":"task","input_fields":{}}`}},
	}
	for want, spec := range map[string]lmv1alpha1.LMEvalJobSpec{
		"": recipe(lmv1alpha1.TaskRecipe{Card: lmv1alpha1.Card{Custom: `{"loader":{}}`}, Template: &lmv1alpha1.Template{Ref: "tp"}, Metrics: []lmv1alpha1.Metric{{Ref: "m"}}, Task: &lmv1alpha1.Task{Ref: "tk"}}, good),
		"spec.taskList.taskRecipes[0].card.custom: failed to parse the custom card: missing loader definition": recipe(lmv1alpha1.TaskRecipe{Card: lmv1alpha1.Card{Custom: `{}`}}, nil),
		"spec.taskList.taskRecipes[0].template.ref: the custom template \"nope\"":                              recipe(lmv1alpha1.TaskRecipe{Template: &lmv1alpha1.Template{Ref: "nope"}}, nil),
		"spec.taskList.taskRecipes[0].metrics[0].ref":                                                          recipe(lmv1alpha1.TaskRecipe{Metrics: []lmv1alpha1.Metric{{Ref: "x"}}}, good),
		"spec.taskList.custom.templates[0] (t): failed to parse the custom template: missing output_format":    recipe(lmv1alpha1.TaskRecipe{}, &lmv1alpha1.CustomArtifacts{Templates: []lmv1alpha1.CustomArtifact{{Name: "t", Value: `{"input_format":""}`}}}),
		"spec.taskList.custom.tasks[0] (t): the custom task's __type__ must be \"task\"":                       recipe(lmv1alpha1.TaskRecipe{}, &lmv1alpha1.CustomArtifacts{Tasks: []lmv1alpha1.CustomArtifact{{Name: "t", Value: `{"__type__":"x","input_fields":1}`}}}),
		"spec.taskList.customTasks.source.git.branch \"--upload-pack=x\"":                                      git(str("--upload-pack=x"), nil),
		"spec.taskList.customTasks.source.git.commit \"main\"":                                                 git(nil, str("main")),
		"spec.outputs.pvcManaged.size must be a storage size":                                                  {Model: "hf", Outputs: &lmv1alpha1.Outputs{PersistentVolumeClaimManaged: &lmv1alpha1.PersistentVolumeClaimManaged{}}},
	} {
		got := Validate(&spec)
		if (want == "") != (got == "") || !strings.HasPrefix(got, want) {
			t.Errorf("got %q, want prefix %q", got, want)
		}
	}
	if got := Validate(&lmv1alpha1.LMEvalJobSpec{TaskList: git(str("feature/x-1"), str("abc1234")).TaskList}); got != "" {
		t.Errorf("a valid branch and commit: %q", got)
	}
}
