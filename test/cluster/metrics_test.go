package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ai-stack-operator/ai-stack-operator/pkg/operator"
	"github.com/ai-stack-operator/ai-stack-operator/test/framework"
)

// token returns a token of a new ServiceAccount, bound to the ClusterRole if
// one is given.
func token(t *testing.T, ctx context.Context, name string, role *rbacv1.ClusterRole) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(config)
	const ns = "ai-stack-operator-system"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if role != nil {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Status.Token
}

// Metrics are served over HTTPS to authenticated and authorized clients only:
// no token 401, a token without the metrics-reader role 403, with it 200.
// The operator runs with exactly its own permissions (TokenReview and
// SubjectAccessReview are in config/rbac).
func TestMetricsNeedAuthorization(t *testing.T) {
	ctx := context.Background()
	reader := clusterRole(t, "metrics_reader_role.yaml")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	stop := framework.RunManager(t, operatorConfig(t, ctx), func(o *operator.ManagerOptions) { o.MetricsAddr = addr })
	defer stop()

	// The certificate is self-signed: this checks authorization, not TLS.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
	get := func(tok string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	env.Eventually(t, "the metrics endpoint", func() error { _, err := get(""); return err })
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _ := get(token(t, ctx, "metrics-nobody", nil)); code != http.StatusForbidden {
		t.Errorf("a token without the metrics-reader role: %d, want 403", code)
	}
	scraper := token(t, ctx, "metrics-scraper", reader)
	env.Eventually(t, "200 with the metrics-reader role", func() error {
		if code, err := get(scraper); err != nil || code != http.StatusOK {
			return fmt.Errorf("status %d (%v)", code, err) //nolint:errorlint // err may be nil: a figure of the wait, not its cause
		}
		return nil
	})
}
