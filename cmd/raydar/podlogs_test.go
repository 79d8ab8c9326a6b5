package main

import (
	"context"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/raydar/raydar/tui"
)

// TestPodLogStreamsAskWhatThePageAsks: the log page's container and
// previous instance reach the API server's pods/log request as
// PodLogOptions (kubectl logs -c C --previous), and the answer is what the
// server sends for them.
func TestPodLogStreamsAskWhatThePageAsks(t *testing.T) {
	cs := fake.NewClientset()
	var got []corev1.PodLogOptions
	cs.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "log" {
			return false, nil, nil
		}
		o := *a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		got = append(got, o)
		body := "current " + o.Container
		if o.Previous {
			body = "previous " + o.Container
		}
		return true, &runtime.Unknown{Raw: []byte(body)}, nil
	})
	src := podLogStreams(cs)
	for _, tc := range []struct {
		o    tui.LogOptions
		want string
	}{
		{tui.LogOptions{Container: "ray-head", Follow: true}, "current ray-head"},
		{tui.LogOptions{Container: "ray-head", Previous: true}, "previous ray-head"},
		{tui.LogOptions{Container: "log-shipper", Follow: true}, "current log-shipper"},
	} {
		rc, err := src.PodLogs(context.Background(), "ml", "multi-head-abcde", tc.o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil || string(b) != tc.want {
			t.Fatalf("%+v: %q, %v; want %q", tc.o, b, err, tc.want)
		}
		o := got[len(got)-1]
		if o.Container != tc.o.Container || o.Previous != tc.o.Previous || o.Follow != tc.o.Follow ||
			o.TailLines == nil || *o.TailLines != podLogTailLines {
			t.Fatalf("%+v asked %+v", tc.o, o)
		}
	}
}
