package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
)

func TestWriteWhy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		causes []why.Cause
		want   string
	}{
		{"healthy", nil, "RayCluster ns/x: nothing is wrong that raydar can see\n"},
		{"two causes, most decisive first", sortedCauses([]why.Cause{
			{Code: "WaitingForGCS", Subject: "group cpu", Summary: "2 workers wait for the head's GCS", Rank: 5},
			{Code: "Unschedulable", Subject: "group gpu", Summary: "1 gpu worker Pending: it asks 4 nvidia.com/gpu, the most any node offers is 0",
				Evidence: []string{"0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}, Fix: "add a GPU node or lower the group's request", Rank: 1},
		}), "" +
			"RayCluster ns/x: 2 causes, most decisive first\n" +
			"Unschedulable  group gpu: 1 gpu worker Pending: it asks 4 nvidia.com/gpu, the most any node offers is 0\n" +
			"               0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n" +
			"               fix: add a GPU node or lower the group's request\n" +
			"WaitingForGCS  group cpu: 2 workers wait for the head's GCS\n"},
		{"no subject", []why.Cause{{Code: "Suspended", Summary: "spec.suspend is true"}},
			"RayCluster ns/x: 1 cause\nSuspended  spec.suspend is true\n"},
		{"evidence of several lines stays indented", []why.Cause{{Code: "AppDeployFailed", Summary: "app broken DEPLOY_FAILED",
			Evidence: []string{"Traceback (most recent call last):\n  File \"app.py\"\nModuleNotFoundError: No module named 'fail'\n"}}},
			"RayCluster ns/x: 1 cause\n" +
				"AppDeployFailed  app broken DEPLOY_FAILED\n" +
				"                 Traceback (most recent call last):\n" +
				"                   File \"app.py\"\n" +
				"                 ModuleNotFoundError: No module named 'fail'\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeWhy(&b, "RayCluster", "ns", "x", tc.causes, nil); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

// TestWriteWhySecurity: the security line follows the causes, verdict
// first, then the four words and each reason the cluster is open.
func TestWriteWhySecurity(t *testing.T) {
	var b bytes.Buffer
	sec := why.SecurityOf(&rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{ServiceType: corev1.ServiceTypeLoadBalancer}})
	if err := writeWhy(&b, "RayCluster", "ns", "x", []why.Cause{{Code: "Suspended", Summary: "spec.suspend is true"}}, &sec); err != nil {
		t.Fatal(err)
	}
	want := "RayCluster ns/x: 1 cause\nSuspended  spec.suspend is true\n" +
		"security: open (no auth, reachable from outside; unencrypted from outside)\n" +
		"          auth none · mTLS off · network policy none · exposure LoadBalancer\n" +
		"          no authentication and the head is reachable from outside the Kubernetes cluster (LoadBalancer): anyone who reaches it can run code\n" +
		"          traffic to the head from outside the Kubernetes cluster is not encrypted by Ray (mTLS off)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWhyJSONShape: scripts read kind, namespace, name and causes (an
// empty list, not null, when healthy) with why.Cause's own keys.
func TestWhyJSONShape(t *testing.T) {
	var b bytes.Buffer
	if err := writeData(&b, outputJSON, whyJSON{Kind: "RayJob", Namespace: "ns", Name: "j", Causes: sortedCauses(nil)}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["kind"] != "RayJob" || got["namespace"] != "ns" || got["name"] != "j" {
		t.Errorf("identity keys: %s", b.String())
	}
	if cs, ok := got["causes"].([]any); !ok || len(cs) != 0 {
		t.Errorf("causes of a healthy object = %#v; want []", got["causes"])
	}
	b.Reset()
	if err := writeData(&b, outputJSON, whyJSON{Causes: []why.Cause{{Code: "CrashLoop", Subject: "pod p", Summary: "s", Evidence: []string{"e"}, Fix: "f", Rank: 3}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"code": "CrashLoop"`, `"subject": "pod p"`, `"summary": "s"`, `"evidence": [`, `"fix": "f"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("-o json lacks %s:\n%s", want, b.String())
		}
	}
}

// TestWhyBadInput: malformed input is refused before any cluster is asked.
func TestWhyBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"why", "cluster"}, "why needs a KIND and a NAME (got 1 arguments)"},
		{[]string{"why", "workers", "x"}, `why cannot diagnose "workers": use cluster, job or service`},
		{[]string{"why", "pods", "x"}, `why cannot diagnose "pods"`},
		{[]string{"why", "rc", "x", "-o", "wide"}, `unknown output format "wide"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := newRootCmd()
			cmd.SetArgs(append([]string{"--kubeconfig", "/nonexistent"}, tc.args...))
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// TestWhyJSONStatusContradiction: `raydar why rayjob X -o json` names a
// RayJob whose statuses contradict each other (kuberay#2314) with the code
// StatusContradiction and both fields and values, for scripts.
func TestWhyJSONStatusContradiction(t *testing.T) {
	now := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	j := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", Generation: 1}}
	j.Status = rayv1.RayJobStatus{ObservedGeneration: 1, JobId: "j-1", RayClusterName: "j-rc", JobStatus: rayv1.JobStatusRunning,
		JobDeploymentStatus: rayv1.JobDeploymentStatusFailed, Reason: rayv1.DeadlineExceeded,
		EndTime: &metav1.Time{Time: now.Add(-42 * time.Second)}}
	causes := sortedCauses(why.Job(why.JobInput{Job: j, Now: now}))
	var b bytes.Buffer
	if err := writeData(&b, outputJSON, whyJSON{Kind: "RayJob", Namespace: "ns", Name: "j", Causes: causes}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Causes []why.Cause `json:"causes"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var c *why.Cause
	for i := range got.Causes {
		if got.Causes[i].Code == why.CodeStatusContradiction {
			c = &got.Causes[i]
		}
	}
	if c == nil {
		t.Fatalf("no StatusContradiction in\n%s", b.String())
	}
	want := why.Cause{Code: "StatusContradiction", Subject: "RayJob ns/j",
		Summary: "status contradicts itself: jobStatus RUNNING while jobDeploymentStatus Failed",
		Evidence: []string{"jobStatus: RUNNING", "jobDeploymentStatus: Failed",
			"the deployment ended, so the operator no longer reads the Ray job: jobStatus is the last it read before, not what the Ray job does now",
			"since 13:59:18Z (42s ago)"}}
	if c.Code != want.Code || c.Subject != want.Subject || c.Summary != want.Summary || strings.Join(c.Evidence, "\n") != strings.Join(want.Evidence, "\n") ||
		!strings.Contains(c.Fix, "kuberay#2314") {
		t.Errorf("got\n%+v\nwant\n%+v", *c, want)
	}
}
