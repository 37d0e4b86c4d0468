package release

import (
	"errors"
	"fmt"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/release/internal/helm"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ai-stack-operator/ai-stack-operator/charts"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/guard"
	"github.com/ai-stack-operator/ai-stack-operator/pkg/status"
)

// Values the chart's schema refuses are an invalid spec, found before Helm runs.
func TestValuesTheChartRefusesAreAnInvalidSpec(t *testing.T) {
	c, err := charts.Load("llama-stack-distribution")
	require.NoError(t, err)
	r := &Reconciler{chart: c}
	good := map[string]any{"replicas": 1, "image": "x", "container": map[string]any{"name": "llama-stack", "port": 8321}, "storage": map[string]any{"enabled": false, "mountPath": "/x"}, "userConfig": map[string]any{}}
	assert.Nil(t, r.checkValues(good))
	bad := map[string]any{"replicas": 1, "image": "x", "container": map[string]any{"name": strings.Repeat("a", 64), "port": 8321}, "storage": map[string]any{"enabled": false, "mountPath": "/x"}, "userConfig": map[string]any{}}
	f := r.checkValues(bad)
	require.NotNil(t, f)
	assert.Equal(t, "InvalidSpec", f.Reason)
	assert.Contains(t, f.Message, "/container/name")
}

// Errors the user fixes are found through Helm's wrapping; others are not.
func TestUserErrorsAreFoundThroughWrapping(t *testing.T) {
	violation := &guard.Violation{Document: 2, Object: guard.Object{Kind: "NetworkPolicy", Namespace: "b", Name: "x"}, Rule: "is outside"}
	conflict := &guard.Conflict{Object: "ConfigMap a/x-config", Why: "it lacks the label"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "x", field.ErrorList{field.Invalid(field.NewPath("spec"), "v", "bad")})
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{fmt.Errorf("error while running post render on files: %w", violation), "InvalidSpec"},
		{fmt.Errorf("post render: %w", conflict), "NameConflict"},
		{fmt.Errorf("release x failed: %w", errors.Join(errors.New("one"), invalid)), "InvalidSpec"},
		{fmt.Errorf("gather: %w", &status.Failure{Reason: "InvalidOperatorSettings", Message: "m"}), "InvalidOperatorSettings"},
	} {
		f := helm.AsUserError(tc.err)
		require.NotNil(t, f, "%v", tc.err)
		assert.Equal(t, tc.reason, f.Reason)
	}
	assert.Nil(t, helm.AsUserError(fmt.Errorf("connection refused")), "transient errors are retried, not reported as the user's")
	assert.Nil(t, helm.AsUserError(apierrors.NewServiceUnavailable("later")))
}

// A refused spec is remembered by the digest of its values and chart.
func TestRefusalsAreRememberedByValues(t *testing.T) {
	c, err := charts.Load("llama-stack-distribution")
	require.NoError(t, err)
	r := &Reconciler{chart: c}
	obj := newTestCR()
	a, b := r.valuesDigest(map[string]any{"replicas": 1}), r.valuesDigest(map[string]any{"replicas": 2})
	assert.NotEqual(t, a, b)
	r.refusals.remember(obj.GetUID(), a, &status.Failure{Reason: "InvalidSpec", Message: "refused"})
	assert.NotNil(t, r.refusals.refused(obj.GetUID(), a))
	assert.Nil(t, r.refusals.refused(obj.GetUID(), b), "other values are sent")
	r.refusals.remember(obj.GetUID(), a, nil)
	assert.Nil(t, r.refusals.refused(obj.GetUID(), a), "a success forgets the refusal")
	r.refusals.remember(obj.GetUID(), a, &status.Failure{Reason: status.ReasonUpgradeFailed})
	assert.Nil(t, r.refusals.refused(obj.GetUID(), a), "only refusals of the spec are remembered")
}

func newTestCR() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x", UID: "uid-1"}}
}

// The schema compiled once refuses exactly what Helm refuses (values with
// the chart's defaults coalesced in), in Helm's words.
func TestTheCompiledSchemaAgreesWithHelm(t *testing.T) {
	for _, name := range []string{"llama-stack-distribution", "trustyai-service"} {
		c, err := charts.Load(name)
		require.NoError(t, err)
		s, err := helm.CompileValuesSchema(c.Chart)
		require.NoError(t, err)
		require.NotNil(t, s, "%s has a schema and no subcharts", name)
		for i, vals := range []map[string]any{
			{},
			{"replicas": "two"},
			{"notAValue": true},
			{"container": map[string]any{"name": strings.Repeat("a", 64)}},
			{"image": 7, "replicas": -1},
		} {
			coalesced, err := chartutil.CoalesceValues(c.Chart, vals)
			require.NoError(t, err)
			helm := chartutil.ValidateAgainstSchema(c.Chart, coalesced)
			ours := s.Validate(vals)
			if helm == nil {
				assert.NoError(t, ours, "%s values %d", name, i)
				continue
			}
			if assert.Error(t, ours, "%s values %d: Helm refuses them: %v", name, i, helm) {
				assert.ElementsMatch(t, strings.Split(strings.TrimSpace(helm.Error()), "\n"), strings.Split(ours.Error(), "\n"), "%s values %d", name, i)
				again := s.Validate(vals)
				assert.Equal(t, ours.Error(), again.Error(), "the same words every time")
			}
		}
	}
}
