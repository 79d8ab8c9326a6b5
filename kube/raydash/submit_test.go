package raydash

import (
	"reflect"
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestSubmitRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec rayv1.RayJobSpec
		want dashboard.SubmitJobRequest
		err  string
	}{
		{name: "entrypoint only", spec: rayv1.RayJobSpec{Entrypoint: "python x.py"},
			want: dashboard.SubmitJobRequest{Entrypoint: "python x.py", SubmissionID: "id"}},
		{name: "everything", spec: rayv1.RayJobSpec{
			Entrypoint:          "python x.py",
			RuntimeEnvYAML:      "env_vars:\n  A: \"1\"\npip: [requests]\n",
			Metadata:            map[string]string{"owner": "me"},
			EntrypointNumCpus:   0.1,
			EntrypointNumGpus:   1,
			EntrypointResources: `{"TPU": 4}`,
		}, want: dashboard.SubmitJobRequest{
			Entrypoint: "python x.py", SubmissionID: "id",
			RuntimeEnv: map[string]any{"env_vars": map[string]any{"A": "1"}, "pip": []any{"requests"}},
			Metadata:   map[string]string{"owner": "me"},
			EntrypointReservation: dashboard.EntrypointReservation{
				EntrypointNumCPUs:   0.1,
				EntrypointNumGPUs:   1,
				EntrypointResources: map[string]float64{"TPU": 4},
			},
		}},
		{name: "runtime env not a mapping", spec: rayv1.RayJobSpec{Entrypoint: "x", RuntimeEnvYAML: "- a\n- b\n"}, err: "must be a YAML mapping"},
		{name: "bad resources", spec: rayv1.RayJobSpec{Entrypoint: "x", EntrypointResources: "{"}, err: "entrypointResources"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SubmitRequest(&rayv1.RayJob{Spec: tc.spec}, "id")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}
