package seed

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/controller/rayservice"
	"github.com/raydar/raydar/rayapi/scheme"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

func TestObjectsAreValid(t *testing.T) {
	seen := map[string]bool{}
	sch := scheme.New()
	for _, obj := range Objects("ns") {
		key := kindOf(sch, obj) + "/" + obj.GetName()
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
		if obj.GetNamespace() != "ns" || obj.GetLabels()[PartOfLabelKey] != PartOfValue || obj.GetAnnotations()[ScenarioAnnotationKey] == "" {
			t.Errorf("%s: namespace %q, labels %v, annotations %v", key, obj.GetNamespace(), obj.GetLabels(), obj.GetAnnotations())
		}
		var errs []string
		switch o := obj.(type) {
		case *rayv1.RayCluster:
			for _, e := range rayv1.ValidateRayCluster(o) {
				errs = append(errs, e.Error())
			}
		case *rayv1.RayJob:
			for _, e := range rayv1.ValidateRayJob(o) {
				errs = append(errs, e.Error())
			}
		case *rayv1.RayService:
			for _, e := range rayv1.ValidateRayService(o) {
				errs = append(errs, e.Error())
			}
		case *rayv1.RayCronJob:
			for _, e := range rayv1.ValidateRayCronJob(o) {
				errs = append(errs, e.Error())
			}
		default:
			t.Errorf("unexpected %T", obj)
		}
		if len(errs) > 0 {
			t.Errorf("%s is invalid: %s", key, strings.Join(errs, "; "))
		}
	}
	if len(seen) != 14 {
		t.Errorf("%d objects, want 14", len(seen))
	}
}

// TestIncrementalServiceIsValid checks the demo's RayService as the demo
// seeds it on a sandbox with a Gateway API: valid, not refused by
// raydar's reconciler, and upgrading incrementally through that class.
func TestIncrementalServiceIsValid(t *testing.T) {
	for _, obj := range Objects("ns") {
		rs, ok := obj.(*rayv1.RayService)
		if !ok {
			continue
		}
		IncrementalUpgrade(rs, "cls")
		if errs := rayv1.ValidateRayService(rs); len(errs) > 0 {
			t.Errorf("invalid: %v", errs)
		}
		if errs := rayservice.Unsupported(rs); len(errs) > 0 {
			t.Errorf("refused: %v", errs)
		}
		if rs.Spec.EffectiveUpgradeType() != rayv1.NewClusterWithIncrementalUpgrade || rs.Spec.UpgradeStrategy.ClusterUpgradeOptions.GatewayClassName != "cls" {
			t.Errorf("upgradeStrategy %+v", rs.Spec.UpgradeStrategy)
		}
		if !strings.Contains(rs.Annotations[ScenarioAnnotationKey], "incrementally") {
			t.Errorf("scenario %q", rs.Annotations[ScenarioAnnotationKey])
		}
		return
	}
	t.Fatal("no RayService seeded")
}

// TestOnlyTheGPUClusterDoesNotFit checks the capacity story of
// SandboxOptions: every pod the seeded objects ask for fits on some node,
// except ClusterGPU's workers, which fit on none.
func TestOnlyTheGPUClusterDoesNotFit(t *testing.T) {
	type node struct{ cpu, mem, gpu resource.Quantity }
	var nodes []node
	for _, p := range SandboxOptions().Nodes {
		for range p.Count {
			nodes = append(nodes, node{resource.MustParse(p.CPU), resource.MustParse(p.Memory), *resource.NewQuantity(int64(p.GPU), resource.DecimalSI)})
		}
	}
	fits := func(req corev1.ResourceList) bool {
		for _, n := range nodes {
			if req.Cpu().Cmp(n.cpu) <= 0 && req.Memory().Cmp(n.mem) <= 0 {
				g := req[GPUResource]
				if g.Cmp(n.gpu) <= 0 {
					return true
				}
			}
		}
		return false
	}
	check := func(what string, spec *rayv1.RayClusterSpec, wantUnfit string) {
		if !fits(spec.HeadGroupSpec.Template.Spec.Containers[0].Resources.Requests) {
			t.Errorf("%s: head does not fit", what)
		}
		for _, g := range spec.WorkerGroupSpecs {
			ok := fits(g.Template.Spec.Containers[0].Resources.Requests)
			if want := g.GroupName != wantUnfit; ok != want {
				t.Errorf("%s group %s: fits=%v, want %v", what, g.GroupName, ok, want)
			}
		}
	}
	for _, obj := range Objects("ns") {
		switch o := obj.(type) {
		case *rayv1.RayCluster:
			unfit := ""
			if o.Name == ClusterGPU {
				unfit = GPUGroup
			}
			check(o.Name, &o.Spec, unfit)
		case *rayv1.RayJob:
			if o.Spec.RayClusterSpec != nil {
				check(o.Name, o.Spec.RayClusterSpec, "")
			}
		case *rayv1.RayService:
			check(o.Name, &o.Spec.RayClusterSpec, "")
		case *rayv1.RayCronJob:
			check(o.Name, o.Spec.JobTemplate.RayClusterSpec, "")
		}
	}
}

func TestSeedIsIdempotent(t *testing.T) {
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "default"}}
	c := crfake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(sa).Build()
	var logs []string
	opts := Options{Namespace: "demo", Logf: func(f string, a ...any) { logs = append(logs, f) }}
	if err := Seed(ctx, c, opts); err != nil {
		t.Fatal(err)
	}
	created := len(logs)
	if created != 15 { // the namespace and fourteen objects
		t.Fatalf("first Seed logged %d creations, want 15: %v", created, logs)
	}
	// A changed object is left alone on the second run.
	rc := &rayv1.RayCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: ClusterShared}, rc); err != nil {
		t.Fatal(err)
	}
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr(int32(5))
	if err := c.Update(ctx, rc); err != nil {
		t.Fatal(err)
	}
	if err := Seed(ctx, c, opts); err != nil {
		t.Fatal(err)
	}
	if len(logs) != created {
		t.Fatalf("second Seed created more: %v", logs[created:])
	}
	counts := map[string]int{}
	for kind, l := range map[string]client.ObjectList{
		"RayCluster": &rayv1.RayClusterList{}, "RayJob": &rayv1.RayJobList{}, "RayService": &rayv1.RayServiceList{},
		"RayCronJob": &rayv1.RayCronJobList{},
	} {
		if err := c.List(ctx, l, client.InNamespace("demo")); err != nil {
			t.Fatal(err)
		}
		counts[kind] = apimeta.LenList(l)
	}
	if counts["RayCluster"] != 5 || counts["RayJob"] != 7 || counts["RayService"] != 1 || counts["RayCronJob"] != 1 {
		t.Fatalf("counts %v", counts)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: ClusterShared}, rc); err != nil {
		t.Fatal(err)
	}
	if *rc.Spec.WorkerGroupSpecs[0].Replicas != 5 {
		t.Fatal("second Seed overwrote a changed object")
	}
}

func TestNextImage(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io/raydar-demo/summarizer:v1":  "ghcr.io/raydar-demo/summarizer:v2",
		"ghcr.io/raydar-demo/summarizer:v41": "ghcr.io/raydar-demo/summarizer:v42",
		"localhost:5000/app:v9":              "localhost:5000/app:v10",
		"localhost:5000/app":                 "localhost:5000/app:v2",
		"rayproject/ray:2.52.0":              "rayproject/ray:v2",
		"app":                                "app:v2",
	} {
		if got := NextImage(in); got != want {
			t.Errorf("NextImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSettled(t *testing.T) {
	ready := func() *rayv1.RayService {
		rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		rs.Status.ObservedGeneration = 2
		rs.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionTrue}}
		rs.Status.ActiveServiceStatus.RayClusterName = "a"
		return rs
	}
	if !Settled(ready()) {
		t.Fatal("ready service not settled")
	}
	for what, mod := range map[string]func(*rayv1.RayService){
		"pending cluster":   func(rs *rayv1.RayService) { rs.Status.PendingServiceStatus.RayClusterName = "b" },
		"no active cluster": func(rs *rayv1.RayService) { rs.Status.ActiveServiceStatus.RayClusterName = "" },
		"not ready":         func(rs *rayv1.RayService) { rs.Status.Conditions[0].Status = metav1.ConditionFalse },
		"spec not observed": func(rs *rayv1.RayService) { rs.Generation = 3 },
		"suspended":         func(rs *rayv1.RayService) { rs.Spec.Suspend = true },
		"upgrade in progess": func(rs *rayv1.RayService) {
			rs.Status.Conditions = append(rs.Status.Conditions, metav1.Condition{Type: string(rayv1.UpgradeInProgress), Status: metav1.ConditionTrue})
		},
	} {
		rs := ready()
		mod(rs)
		if Settled(rs) {
			t.Errorf("%s: settled", what)
		}
	}
}

// innerScript returns the script of an `sh -c '…'` entrypoint.
func innerScript(t *testing.T, entrypoint string) string {
	t.Helper()
	s, ok := strings.CutPrefix(entrypoint, "sh -c '")
	if !ok || !strings.HasSuffix(s, "'") || strings.Count(s, "'") != 1 {
		t.Fatalf("entrypoint is not sh -c '<script without quotes>': %s", entrypoint)
	}
	return strings.TrimSuffix(s, "'")
}

// runEntrypoint runs an entrypoint as the simulated head does (/bin/sh -c),
// for at most d.
func runEntrypoint(t *testing.T, entrypoint string, d time.Duration) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", entrypoint)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	return o.String(), e.String(), err
}

func TestEntrypoints(t *testing.T) {
	for name, ep := range map[string]string{
		"logs": LogsEntrypoint, "succeeded": SucceededEntrypoint, "failed": FailedEntrypoint,
		"waiting": WaitingEntrypoint, "selector": SelectorEntrypoint,
	} {
		out, err := exec.Command("/bin/sh", "-n", "-c", innerScript(t, ep)).CombinedOutput()
		if err != nil {
			t.Errorf("%s: syntax: %v %s", name, err, out)
		}
	}
	t.Run("succeeded", func(t *testing.T) {
		t.Parallel()
		out, _, err := runEntrypoint(t, SucceededEntrypoint, 20*time.Second)
		if err != nil || !strings.Contains(out, "shard 3/3 done") || !strings.HasSuffix(out, "total: 4242 words\n") {
			t.Fatalf("err %v, output %q", err, out)
		}
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		_, errOut, err := runEntrypoint(t, FailedEntrypoint, 20*time.Second)
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || strings.TrimSpace(errOut) != FailedMessage {
			t.Fatalf("err %v, stderr %q", err, errOut)
		}
	})
	t.Run("logs", func(t *testing.T) {
		t.Parallel()
		out, _, _ := runEntrypoint(t, LogsEntrypoint, 2500*time.Millisecond)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < 3 || lines[1] != "step 1/600 loss=2.200 throughput=1187 img/s" || !strings.HasPrefix(lines[2], "step 2/600 loss=2.000 ") {
			t.Fatalf("output %q", out)
		}
	})
}
