// Package sa stands in, at build time only (go build -overlay, see
// hack/tools.sh olmv1_tools), for operator-controller v1.5.1's
// internal/shared/util/sa, whose GetServiceAccount reads the pod's mounted
// token at a fixed path. catalogd and operator-controller run here as
// processes outside any pod, so the ServiceAccount they act as is given by
// OLMV1_SERVICE_ACCOUNT ("namespace/name"); without it, the mounted token's
// subject is read as in a pod.
package sa

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	k8stypes "k8s.io/apimachinery/pkg/types"
)

const mountedToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// GetServiceAccount returns the namespace and name the process acts as.
func GetServiceAccount() (k8stypes.NamespacedName, error) {
	if v := os.Getenv("OLMV1_SERVICE_ACCOUNT"); v != "" {
		ns, name, ok := strings.Cut(v, "/")
		if !ok || ns == "" || name == "" {
			return k8stypes.NamespacedName{}, fmt.Errorf("OLMV1_SERVICE_ACCOUNT=%q: want namespace/name", v)
		}
		return k8stypes.NamespacedName{Namespace: ns, Name: name}, nil
	}
	raw, err := os.ReadFile(mountedToken)
	if err != nil {
		return k8stypes.NamespacedName{}, fmt.Errorf("%w (outside a pod, set OLMV1_SERVICE_ACCOUNT=namespace/name)", err)
	}
	parts := strings.Split(strings.TrimSpace(string(raw)), ".")
	if len(parts) != 3 {
		return k8stypes.NamespacedName{}, fmt.Errorf("%s: not a JWT", mountedToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return k8stypes.NamespacedName{}, fmt.Errorf("%s: %w", mountedToken, err)
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return k8stypes.NamespacedName{}, fmt.Errorf("%s: %w", mountedToken, err)
	}
	// system:serviceaccount:<namespace>:<name>
	f := strings.Split(claims.Sub, ":")
	if len(f) != 4 || f[2] == "" || f[3] == "" {
		return k8stypes.NamespacedName{}, fmt.Errorf("%s: subject %q is no ServiceAccount", mountedToken, claims.Sub)
	}
	return k8stypes.NamespacedName{Namespace: f[2], Name: f[3]}, nil
}
