package release

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Phases of a reconcile, for the phase histogram.
const (
	// PhaseGather reads the CR's inputs and translates them into values.
	PhaseGather = "gather"
	// PhasePrepare writes what the kind writes outside Helm (CA bundles, bindings, model-server wiring).
	PhasePrepare = "prepare"
	// PhaseApply renders the chart and installs, upgrades or repairs the release.
	PhaseApply = "apply"
	// PhaseStatus reads the objects back, computes the status and writes it.
	PhaseStatus = "status"
)

// phaseSeconds is the time a reconcile spends per phase, by kind: `make
// bench` prints its split, and a profile says where within a phase.
var phaseSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "ai_stack_operator_reconcile_phase_seconds",
	Help:    "Time a reconcile spends in each phase (gather, prepare, apply, status), by kind.",
	Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
}, []string{"kind", "phase"})

func init() { metrics.Registry.MustRegister(phaseSeconds) }

// timePhase observes the time since start for the kind's phase.
func timePhase(kind, phase string, start time.Time) {
	phaseSeconds.WithLabelValues(kind, phase).Observe(time.Since(start).Seconds())
}
