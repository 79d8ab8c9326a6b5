package kit_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/raydar/raydar/controller/internal/fixture"
	"github.com/raydar/raydar/controller/kit"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/rayapi/scheme"
)

func TestCreateKeepsOnlyWhatMayHaveHappened(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name    string
		err     error
		pending bool
	}{
		{"created", nil, true},
		{"refused", apierrors.NewForbidden(gr, "p", errors.New("quota")), false},
		{"exists", apierrors.NewAlreadyExists(gr, "p"), false},
		{"timeout", apierrors.NewTimeoutError("slow", 1), true},
		{"connection reset", errors.New("connection reset by peer"), true},
		// The API server unreachable: the request never left.
		{"connection refused", &url.Error{Op: "Post", URL: "https://127.0.0.1:6443/api/v1/namespaces/ns/pods",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, false},
		// Cut after the request was sent: it may have happened.
		{"read reset", &url.Error{Op: "Post", URL: "https://127.0.0.1:6443/api/v1/namespaces/ns/pods",
			Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if tc.err != nil {
						return tc.err
					}
					return cl.Create(ctx, obj, opts...)
				},
			}).Build()
			exp := kit.NewExpectations(0, func() time.Time { return fixture.T0 })
			p := pod("p", "")
			p.ResourceVersion = ""
			err := kit.Create(context.Background(), c, exp, "owner", p)
			if !errors.Is(err, tc.err) && err != tc.err {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if got := kit.Overlay(exp, "owner", []*corev1.Pod(nil)); (len(got) == 1) != tc.pending {
				t.Fatalf("expected after %s: %d pods, want pending=%v", tc.name, len(got), tc.pending)
			}
			if tc.err == nil {
				if got := kit.Overlay(exp, "owner", []*corev1.Pod(nil)); got[0].UID == "" && got[0].ResourceVersion == "" {
					t.Error("the server's answer was not recorded")
				}
			}
		})
	}
}
