package lmeval

import (
	"encoding/json"
	"fmt"
	"regexp"

	lmv1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/lmes/v1alpha1"
)

// The patterns upstream's controller holds git inputs to (validation.go).
var (
	gitBranchRE = regexp.MustCompile(`^[a-zA-Z0-9._/-]+$`)
	gitCommitRE = regexp.MustCompile(`^[a-fA-F0-9]{7,40}$`)
)

// Validate checks what the CRD's schema cannot and upstream's controller
// checks before it makes a pod (its validateCustomRecipes and git checks);
// the message names the field. A job failing it ends Complete/Failed, as
// upstream's does.
func Validate(spec *lmv1alpha1.LMEvalJobSpec) string {
	if _, msg := ManagedPVCSize(spec); msg != "" {
		return msg
	}
	tl := &spec.TaskList
	if ct := tl.CustomTasks; ct != nil && len(tl.TaskNames) > 0 {
		g := ct.Source.GitSource
		if g.Branch != nil && *g.Branch != "" && (!gitBranchRE.MatchString(*g.Branch) || (*g.Branch)[0] == '-') {
			return fmt.Sprintf("spec.taskList.customTasks.source.git.branch %q: only letters, digits, '.', '_', '/' and '-' (not first) are allowed", *g.Branch)
		}
		if g.Commit != nil && *g.Commit != "" && !gitCommitRE.MatchString(*g.Commit) {
			return fmt.Sprintf("spec.taskList.customTasks.source.git.commit %q must be a hexadecimal commit hash of 7 to 40 characters", *g.Commit)
		}
	}
	if len(tl.TaskRecipes) == 0 {
		return ""
	}
	custom := tl.CustomArtifacts
	if custom == nil {
		custom = &lmv1alpha1.CustomArtifacts{}
	}
	defined := func(list []lmv1alpha1.CustomArtifact, name string) bool {
		for _, a := range list {
			if a.Name == name {
				return true
			}
		}
		return false
	}
	for i, r := range tl.TaskRecipes {
		field := fmt.Sprintf("spec.taskList.taskRecipes[%d]", i)
		if r.Card.Custom != "" {
			if msg := jsonWith(r.Card.Custom, "loader"); msg != "" {
				return fmt.Sprintf("%s.card.custom: failed to parse the custom card: %s", field, msg)
			}
		}
		if r.Template != nil && r.Template.Ref != "" && !defined(custom.Templates, r.Template.Ref) {
			return fmt.Sprintf("%s.template.ref: the custom template %q is not defined in spec.taskList.custom.templates", field, r.Template.Ref)
		}
		if r.SystemPrompt != nil && r.SystemPrompt.Ref != "" && !defined(custom.SystemPrompts, r.SystemPrompt.Ref) {
			return fmt.Sprintf("%s.systemPrompt.ref: the custom system prompt %q is not defined in spec.taskList.custom.systemPrompts", field, r.SystemPrompt.Ref)
		}
		for j, m := range r.Metrics {
			if m.Ref != "" && !defined(custom.Metrics, m.Ref) {
				return fmt.Sprintf("%s.metrics[%d].ref: the custom metric %q is not defined in spec.taskList.custom.metrics", field, j, m.Ref)
			}
		}
		if r.Task != nil && r.Task.Ref != "" && !defined(custom.Tasks, r.Task.Ref) {
			return fmt.Sprintf("%s.task.ref: the custom task %q is not defined in spec.taskList.custom.tasks", field, r.Task.Ref)
		}
	}
	for i, a := range custom.Templates {
		if msg := jsonWith(a.Value, "input_format", "output_format"); msg != "" {
			return fmt.Sprintf("spec.taskList.custom.templates[%d] (%s): failed to parse the custom template: %s", i, a.Name, msg)
		}
	}
	for i, a := range custom.Metrics {
		if msg := jsonWith(a.Value, "__type__"); msg != "" {
			return fmt.Sprintf("spec.taskList.custom.metrics[%d] (%s): failed to parse the custom metric: %s", i, a.Name, msg)
		}
	}
	for i, a := range custom.Tasks {
		if msg := jsonWith(a.Value, "__type__", "input_fields"); msg != "" {
			return fmt.Sprintf("spec.taskList.custom.tasks[%d] (%s): failed to parse the custom task: %s", i, a.Name, msg)
		}
		var v map[string]any
		_ = json.Unmarshal([]byte(a.Value), &v)
		if v["__type__"] != "task" {
			return fmt.Sprintf("spec.taskList.custom.tasks[%d] (%s): the custom task's __type__ must be \"task\"", i, a.Name)
		}
	}
	return ""
}

// jsonWith says what is wrong with a JSON object that must have keys.
func jsonWith(s string, keys ...string) string {
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "not a JSON object: " + err.Error()
	}
	for _, k := range keys {
		if _, ok := v[k]; !ok {
			return "missing " + k + " definition"
		}
	}
	return ""
}
