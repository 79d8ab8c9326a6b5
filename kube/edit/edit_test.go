package edit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/raydar/raydar/kube/actions"
	"github.com/raydar/raydar/kube/edit"
	"github.com/raydar/raydar/rayapi/kinds"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// These tests run the edit flow with a real editor process: a shell
// script standing in for $KUBE_EDITOR, which rewrites the file as a
// person would, on controller-runtime's fake client (which answers a
// stale resourceVersion with 409, as the API server does).

func testCluster() *rayv1.RayCluster {
	tmpl := func(name string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0"}}}}
	}
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: types.UID("c-uid")},
		Spec: rayv1.RayClusterSpec{
			RayVersion:    "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{Template: tmpl("ray-head")},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: "small", MinReplicas: ptr.To[int32](0), Replicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](4),
				NumOfHosts: 1, Template: tmpl("ray-worker"),
			}},
		},
		Status: rayv1.RayClusterStatus{ReadyWorkerReplicas: 1},
	}
}

type harness struct {
	c      client.WithWatch
	a      *actions.Actions
	audit  string
	writes atomic.Int32
	env    map[string]string
}

// newHarness is Actions on a fake client holding a RayCluster; funcs may
// intercept writes (every Patch is counted in writes).
func newHarness(t *testing.T, opts actions.Options, patch func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error) *harness {
	t.Helper()
	h := &harness{c: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(testCluster()).WithStatusSubresource(&rayv1.RayCluster{}).Build()}
	h.audit = filepath.Join(t.TempDir(), "audit.log")
	opts.Actor, opts.Context, opts.AuditLogPath = "alice", "dev", h.audit
	opts.Recorder = nopRecorder{}
	funcs := interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
		h.writes.Add(1)
		if patch != nil {
			return patch(ctx, c, obj, p, o...)
		}
		return c.Patch(ctx, obj, p, o...)
	}}
	a, err := actions.New(interceptor.NewClient(h.c, funcs), opts)
	if err != nil {
		t.Fatal(err)
	}
	h.a = a
	return h
}

type nopRecorder struct{}

func (nopRecorder) Record(context.Context, client.Object, string, string, string, string) error {
	return nil
}

// editor installs a shell script as KUBE_EDITOR; it is run with the file as $1.
func (h *harness) editor(t *testing.T, script string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nset -e\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.env = map[string]string{"KUBE_EDITOR": "sh " + p, "EDITOR": "false"}
}

// runEditor runs the session's editor command to its end.
func (h *harness) runEditor(t *testing.T, s *edit.Session) {
	t.Helper()
	cmd := s.Command(func(k string) string { return h.env[k] })
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("editor %v: %v\n%s", cmd.Args, err, out)
	}
}

func (h *harness) cluster(t *testing.T) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "c"}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

func start(t *testing.T, h *harness) *edit.Session {
	t.Helper()
	s, err := edit.Start(context.Background(), h.a, kinds.RayCluster, "ns", "c", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scaleTo3 sets the worker group's replicas (not minReplicas) to 3.
const scaleTo3 = `sed -i 's/^\( *\)replicas: 1$/\1replicas: 3/' "$1"`

func TestEditScalesAWorkerGroup(t *testing.T) {
	h := newHarness(t, actions.Options{}, nil)
	h.editor(t, scaleTo3)
	s := start(t, h)
	file := readFile(t, s.Path)
	if !strings.HasPrefix(file, edit.Header) || strings.Contains(file, "managedFields") || strings.Contains(file, "status:") ||
		!strings.Contains(file, "kind: RayCluster") {
		t.Fatalf("the file to edit is not the object as kubectl edit shows it:\n%s", file)
	}
	h.runEditor(t, s)
	st := s.Review()
	if st.Kind != edit.Confirm {
		t.Fatalf("review: %+v, want a plan to confirm", st)
	}
	if d := cmp.Diff([]string{"spec.workerGroupSpecs[0].replicas"}, st.Plan.Paths(actions.EffectApplied)); d != "" {
		t.Errorf("planned changes (-want +got):\n%s", d)
	}
	if len(st.Plan.Warnings) != 0 {
		t.Errorf("scaling warns %q, want nothing", st.Plan.Warnings)
	}
	if h.writes.Load() != 0 {
		t.Fatal("written before the confirmation")
	}
	st = s.Apply(context.Background())
	if st.Kind != edit.Applied {
		t.Fatalf("apply: %+v (%v), want applied", st, st.Err)
	}
	rc := h.cluster(t)
	if got := *rc.Spec.WorkerGroupSpecs[0].Replicas; got != 3 {
		t.Errorf("replicas %d after the edit, want 3", got)
	}
	if rc.Status.ReadyWorkerReplicas != 1 {
		t.Errorf("the edit changed the status: %+v", rc.Status)
	}
	if _, err := os.Stat(s.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file of an applied edit is left behind: %v", err)
	}
	if a := readFile(t, h.audit); !strings.Contains(a, `"action":"edit"`) || !strings.Contains(a, `"outcome":"applied"`) {
		t.Errorf("audit log %s, want an applied edit", a)
	}
}

func TestEditNothingChangedOrEmpty(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"untouched", "true", "Edit cancelled, no changes made."},
		{"reformatted only", `printf '# a comment of mine\n' >> "$1"`, "Edit cancelled, no changes made."},
		{"emptied", `: > "$1"`, "Edit cancelled, saved file was empty."},
		{"comments only", `printf '# nothing\n' > "$1"`, "Edit cancelled, saved file was empty."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, actions.Options{}, nil)
			h.editor(t, tc.script)
			s := start(t, h)
			h.runEditor(t, s)
			st := s.Review()
			if st.Kind != edit.Cancelled || st.Message != tc.want {
				t.Errorf("review: %+v, want cancelled with %q", st, tc.want)
			}
			if h.writes.Load() != 0 {
				t.Errorf("%d writes, want none", h.writes.Load())
			}
		})
	}
}

func TestEditThatBreaksValidationIsRefusedAndReopened(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"a spec rule", `sed -i 's/^\( *\)minReplicas: 0$/\1minReplicas: 9/' "$1"`,
			"# * spec.workerGroupSpecs[0].minReplicas: Invalid value: 9: must be <= maxReplicas (4)"},
		{"an unknown field", `sed -i 's/^\( *\)rayVersion:/\1rayVersionn:/' "$1"`,
			`# * unknown field "spec.rayVersionn"`},
		{"a renamed object", `sed -i 's/^\( *\)name: c$/\1name: d/' "$1"`,
			`# * metadata.name: Invalid value: "d": cannot be changed`},
		{"bad YAML", `printf 'spec: [\n' >> "$1"`, "# * YAML: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, actions.Options{}, nil)
			h.editor(t, tc.script)
			s := start(t, h)
			before := h.cluster(t)
			h.runEditor(t, s)
			st := s.Review()
			if st.Kind != edit.Reopen {
				t.Fatalf("review: %+v, want the file reopened", st)
			}
			file := readFile(t, s.Path)
			if !strings.HasPrefix(file, edit.Header+`# rayclusters "c" was not valid:`+"\n") || !strings.Contains(file, tc.want) {
				t.Errorf("reopened file lacks the error on top (%q):\n%s", tc.want, file)
			}
			// Saved again as it is: the edit ends, the file kept.
			h.editor(t, "true")
			h.runEditor(t, s)
			st = s.Review()
			if st.Kind != edit.Cancelled || !strings.Contains(st.Message, "no valid changes were saved; your edit is kept in "+s.Path) {
				t.Errorf("review of the unchanged reopened file: %+v", st)
			}
			if _, err := os.Stat(s.Path); err != nil {
				t.Errorf("the person's file is gone: %v", err)
			}
			if h.writes.Load() != 0 || h.cluster(t).ResourceVersion != before.ResourceVersion {
				t.Errorf("%d writes, the object changed: want nothing written", h.writes.Load())
			}
		})
	}
}

func TestEditRefusedByTheAPIServerIsReopenedNamingTheField(t *testing.T) {
	invalid := func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
		return apierrors.NewInvalid(schema.GroupKind{Group: "ray.io", Kind: "RayCluster"}, "c", field.ErrorList{
			field.Invalid(field.NewPath("spec", "workerGroupSpecs").Index(0).Child("replicas"), 3, "must be less than or equal to 2"),
		})
	}
	h := newHarness(t, actions.Options{}, invalid)
	h.editor(t, scaleTo3)
	s := start(t, h)
	h.runEditor(t, s)
	if st := s.Review(); st.Kind != edit.Confirm {
		t.Fatalf("review: %+v", st)
	}
	st := s.Apply(context.Background())
	if st.Kind != edit.Reopen {
		t.Fatalf("apply: %+v, want reopened", st)
	}
	file := readFile(t, s.Path)
	for _, want := range []string{`# rayclusters "c" was not valid (the API server refused it):`, "# * spec.workerGroupSpecs[0].replicas: Invalid value: 3: must be less than or equal to 2", "replicas: 3"} {
		if !strings.Contains(file, want) {
			t.Errorf("reopened file lacks %q:\n%s", want, file)
		}
	}
	if got := *h.cluster(t).Spec.WorkerGroupSpecs[0].Replicas; got != 1 {
		t.Errorf("replicas %d, want 1: nothing changed", got)
	}
}

func TestEditRacingAnotherWriterReopensWithTheConflictOnTop(t *testing.T) {
	h := newHarness(t, actions.Options{}, nil)
	h.editor(t, scaleTo3)
	s := start(t, h)
	h.runEditor(t, s)
	if st := s.Review(); st.Kind != edit.Confirm {
		t.Fatalf("review: %+v", st)
	}
	// Another writer, while the person looked at the plan: a label, and
	// maxReplicas of the same group.
	rc := h.cluster(t)
	rc.Labels = map[string]string{"team": "ml"}
	rc.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To[int32](8)
	if err := h.c.Update(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	st := s.Apply(context.Background())
	if st.Kind != edit.Reopen {
		t.Fatalf("apply: %+v (%v), want the file reopened on the conflict", st, st.Err)
	}
	file := readFile(t, s.Path)
	for _, want := range []string{
		edit.Header + `# rayclusters "c" could not be saved: Operation cannot be fulfilled on rayclusters.ray.io "c": `,
		"# * the object changed while you edited it (resourceVersion ",
		"# * the other writer changed what your edit writes over (a list is written whole), check them: spec.workerGroupSpecs[0].maxReplicas\n",
		"team: ml",       // the other writer's change is there…
		"replicas: 3",    // …with the person's laid over it
		"maxReplicas: 4", // a merge patch replaces a list whole: said above, to check
	} {
		if !strings.Contains(file, want) {
			t.Errorf("reopened file lacks %q:\n%s", want, file)
		}
	}
	if got := *h.cluster(t).Spec.WorkerGroupSpecs[0].Replicas; got != 1 {
		t.Fatalf("replicas %d after the conflict, want 1: nothing written", got)
	}
	// The person checks, keeps maxReplicas 8 and saves.
	h.editor(t, `sed -i 's/^\( *\)maxReplicas: 4$/\1maxReplicas: 8/' "$1"`)
	h.runEditor(t, s)
	if st = s.Review(); st.Kind != edit.Confirm {
		t.Fatalf("review after the conflict: %+v", st)
	}
	if st = s.Apply(context.Background()); st.Kind != edit.Applied {
		t.Fatalf("apply after the conflict: %+v (%v)", st, st.Err)
	}
	rc = h.cluster(t)
	if *rc.Spec.WorkerGroupSpecs[0].Replicas != 3 || *rc.Spec.WorkerGroupSpecs[0].MaxReplicas != 8 || rc.Labels["team"] != "ml" {
		t.Errorf("after the edit: replicas %d maxReplicas %d labels %v; want 3, 8 and the other writer's label",
			*rc.Spec.WorkerGroupSpecs[0].Replicas, *rc.Spec.WorkerGroupSpecs[0].MaxReplicas, rc.Labels)
	}
}

func TestEditRebasedFileSavedAsItIsApplies(t *testing.T) {
	h := newHarness(t, actions.Options{}, nil)
	h.editor(t, scaleTo3)
	s := start(t, h)
	h.runEditor(t, s)
	s.Review()
	rc := h.cluster(t)
	rc.Annotations = map[string]string{"note": "x"}
	if err := h.c.Update(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	if st := s.Apply(context.Background()); st.Kind != edit.Reopen {
		t.Fatalf("apply: %+v", st)
	}
	h.editor(t, "true") // :wq with nothing changed
	h.runEditor(t, s)
	st := s.Review()
	if st.Kind != edit.Confirm {
		t.Fatalf("review: %+v, want the rebased edit to confirm", st)
	}
	if st = s.Apply(context.Background()); st.Kind != edit.Applied {
		t.Fatalf("apply: %+v", st)
	}
	if rc = h.cluster(t); *rc.Spec.WorkerGroupSpecs[0].Replicas != 3 || rc.Annotations["note"] != "x" {
		t.Errorf("replicas %d annotations %v, want 3 and the other writer's", *rc.Spec.WorkerGroupSpecs[0].Replicas, rc.Annotations)
	}
}

func TestEditReadOnlySendsNoRequest(t *testing.T) {
	var gets atomic.Int32
	h := newHarness(t, actions.Options{ReadOnly: true}, nil)
	a, err := actions.New(interceptor.NewClient(h.c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			gets.Add(1)
			return c.Get(ctx, k, o, opts...)
		},
	}), actions.Options{ReadOnly: true, AuditLogPath: h.audit, Recorder: nopRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = edit.Start(context.Background(), a, kinds.RayCluster, "ns", "c", t.TempDir())
	if !errors.Is(err, actions.ErrReadOnly) || gets.Load() != 0 {
		t.Errorf("Start in read-only mode: %v after %d reads, want a read-only refusal and no request", err, gets.Load())
	}
}

func TestEditProtectedContextWantsTheName(t *testing.T) {
	h := newHarness(t, actions.Options{Protected: true}, nil)
	h.editor(t, scaleTo3)
	s := start(t, h)
	h.runEditor(t, s)
	s.Review()
	st := s.Apply(context.Background())
	if st.Kind != edit.Failed || !errors.Is(st.Err, actions.ErrProtected) || !strings.Contains(st.Message, s.Path) {
		t.Errorf("apply without the name: %+v, want refused with the file kept", st)
	}
	if st = s.Apply(actions.WithConfirmation(context.Background(), "c")); st.Kind != edit.Applied {
		t.Errorf("apply with the name: %+v (%v)", st, st.Err)
	}
}

func TestEditorArgsAsKubectl(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{}, []string{"vi", "/f.yaml"}},
		{map[string]string{"EDITOR": "nano"}, []string{"nano", "/f.yaml"}},
		{map[string]string{"EDITOR": "nano", "KUBE_EDITOR": "code --wait"}, []string{"code", "--wait", "/f.yaml"}},
		{map[string]string{"KUBE_EDITOR": `emacs -nw "--eval=(x)"`, "SHELL": "/bin/zsh"}, []string{"/bin/zsh", "-c", `emacs -nw "--eval=(x)" "/f.yaml"`}},
		{map[string]string{"EDITOR": `vim '+set ft=yaml'`}, []string{"sh", "-c", `vim '+set ft=yaml' "/f.yaml"`}},
	} {
		got := edit.EditorArgs(func(k string) string { return tc.env[k] }, "/f.yaml")
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%v (-want +got):\n%s", tc.env, d)
		}
	}
}
