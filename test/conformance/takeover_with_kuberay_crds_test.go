package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// onKubeRayCRDs is the namespace of the test that runs on KubeRay's own
// CRDs, which it installs in place of raydar's once the other tests are done
// (it runs last: go test runs tests in the order of the files' names, and
// this file's sorts last).
const onKubeRayCRDs = "tk-kuberay-crds"

// TestOnKubeRayCRDs: on clusters that have KubeRay's CRDs the README tells
// users to keep them. With KubeRay v1.6.2's CRDs installed (read from its
// module in the cache), a takeover from the real KubeRay keeps every pod and
// Service, and a stop requested through raydar is sent exactly once across
// a restart of raydar: nothing raydar needs lives in a field those CRDs
// prune.
func TestOnKubeRayCRDs(t *testing.T) {
	if env == nil {
		t.Skip("needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	ctx := context.Background()
	installKubeRayCRDs(t)
	if _, err := env.kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: onKubeRayCRDs}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := onKubeRayCRDs

	// Takeover from KubeRay, as in TestTakeoverFromKubeRay, on its CRDs.
	kr, err := env.startKubeRay([]string{ns})
	if err != nil {
		t.Fatal(err)
	}
	env.applyTakeoverObjects(t, ns)
	env.waitSettled(t, ns)
	before := env.record(t, ns)
	stopKubeRay(kr)
	stopRaydar, err := env.startRaydar([]string{ns}, true)
	if err != nil {
		t.Fatal(err)
	}
	env.checkCarriesOn(t, ns, before)

	// Exactly-once stop across a restart of raydar.
	job := []byte(`{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"stopme"},"spec":{"entrypoint":"sleep 600",
"rayClusterSpec":{"rayVersion":"2.52.0","headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"rayproject/ray:2.52.0"}]}}}}}}`)
	obj, err := decodeAll(job)
	if err != nil {
		t.Fatal(err)
	}
	obj[0].SetNamespace(ns)
	if _, err := env.dyn.Resource(rayJobs).Namespace(ns).Create(ctx, &obj[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.waitFor(t, "RayJob stopme RUNNING", func(ctx context.Context) (bool, error) {
		return env.field(ctx, rayJobs, ns, "stopme", "status", "jobStatus") == "RUNNING", nil
	})
	cluster := env.field(ctx, rayJobs, ns, "stopme", "status", "rayClusterName")
	jobID := env.field(ctx, rayJobs, ns, "stopme", "status", "jobId")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, rayv1.StopRequestedAnnotationKey, "conformance@"+time.Now().UTC().Format(time.RFC3339))
	if _, err := env.dyn.Resource(rayJobs).Namespace(ns).Patch(ctx, "stopme", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	stopPath := "/api/jobs/" + jobID + "/stop"
	env.waitFor(t, "the stop recorded on the RayJob", func(ctx context.Context) (bool, error) {
		u, err := env.dyn.Resource(rayJobs).Namespace(ns).Get(ctx, "stopme", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, ok := u.GetAnnotations()[rayv1.JobStopRecordAnnotationKey]
		return ok && env.sim.Calls(ns, cluster, "POST", stopPath) >= 1, nil
	})
	stopRaydar()
	if _, err := env.startRaydar([]string{ns}, true); err != nil {
		t.Fatal(err)
	}
	env.waitFor(t, "RayJob stopme STOPPED", func(ctx context.Context) (bool, error) {
		return env.field(ctx, rayJobs, ns, "stopme", "status", "jobStatus") == "STOPPED", nil
	})
	// Deleting the RayJob makes the restarted raydar act on it (it holds the
	// finalizer): had the record been lost with a pruned field, this is
	// where a second stop would go out.
	if err := env.dyn.Resource(rayJobs).Namespace(ns).Delete(ctx, "stopme", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.waitFor(t, "RayJob stopme deleted by the restarted raydar", func(ctx context.Context) (bool, error) {
		_, err := env.dyn.Resource(rayJobs).Namespace(ns).Get(ctx, "stopme", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if n := env.sim.Calls(ns, cluster, "POST", stopPath); n != 1 {
		t.Fatalf("the stop reached the head %d times, want exactly once (calls: %v)", n, env.sim.AllCalls(ns, cluster))
	}
}

// onKubeRayCRDsManifests are the manifests of the corpus compared a second
// time on KubeRay's CRDs (TestConformanceOnKubeRayCRDs): one of each kind
// and submission path, token auth, and raydar's own HTTPMode job, a subset
// because a second pass over the whole corpus would double the suite's
// 15-25 minutes on a loaded 2-core machine. KubeRay's CRDs default and
// prune differently from raydar's (RayJob status has no conditions,
// RayCronJob status none either, no ingressOptions, …): this pass proves the
// objects a KubeRay user gets from these manifests do not depend on raydar's
// CRDs.
var onKubeRayCRDsManifests = []string{
	"samples/ray-cluster.autoscaler-v2.yaml",
	"samples/ray-cluster.auth.yaml",
	"samples/ray-job.sample.yaml",
	"samples/ray-service.sample.yaml",
	"samples/ray-cronjob.sample.yaml",
	"raydar/rayjob-httpmode.yaml",
}

// TestConformanceOnKubeRayCRDs is TestConformance's comparison for
// onKubeRayCRDsManifests with KubeRay's own CRDs installed, each manifest
// in kr-crd-NN (a KubeRay process of its own) and rd-crd-NN (a raydar loop
// of its own).
func TestConformanceOnKubeRayCRDs(t *testing.T) {
	if env == nil {
		t.Skip("needs the sandbox and KubeRay's operator (skipped with -short)")
	}
	subset := env.manifestsNamed(onKubeRayCRDsManifests)
	if len(subset) == 0 {
		t.Skipf("%s=%q leaves none of %v: nothing to compare on KubeRay's CRDs", manifestsEnv, os.Getenv(manifestsEnv), onKubeRayCRDsManifests)
	}
	installKubeRayCRDs(t)
	krNS, rdNS, krs, rds := env.passNamespaces(t, "crd-", len(subset))
	if _, err := env.startKubeRay(krs); err != nil {
		t.Fatal(err)
	}
	if _, err := env.startRaydar(rds, true); err != nil {
		t.Fatal(err)
	}
	summary := strings.Replace(runPass(t, subset, krNS, rdNS, false), "conformance:", "conformance on KubeRay's CRDs:", 1)
	t.Log(summary)
	fmt.Fprintln(os.Stderr, summary)
}

var kubeRayCRDsInstalled bool

// installKubeRayCRDs replaces raydar's CRDs with KubeRay's (KubeRayVersion), as a
// cluster that had KubeRay installed has them.
func installKubeRayCRDs(t *testing.T) {
	t.Helper()
	if kubeRayCRDsInstalled {
		return
	}
	dir, err := KubeRayModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := apiextensionsclient.NewForConfig(env.sb.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range []string{"ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml", "ray.io_rayservices.yaml", "ray.io_raycronjobs.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, "config", "crd", "bases", f))
		if err != nil {
			t.Fatal(err)
		}
		var want apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec = want.Spec
			_, err = cs.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("installing KubeRay's %s: %v", f, err)
		}
	}
	// The API server serves the new schema a moment after the update: wait
	// until a field only raydar's CRD has (headGroupSpec.ingressOptions,
	// KubeRay v1.7.0's; v1.6.2 has none) is refused as unknown by a strict
	// dry run.
	probe := []byte(`{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"schema-probe","namespace":"default"},
"spec":{"headGroupSpec":{"ingressOptions":{"host":"ray.example.com"},"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"rayproject/ray:2.52.0"}]}}}}}`)
	objs, err := decodeAll(probe)
	if err != nil {
		t.Fatal(err)
	}
	env.waitFor(t, "KubeRay's RayCluster schema served", func(ctx context.Context) (bool, error) {
		_, err := env.dyn.Resource(rayClusters).Namespace("default").Create(ctx, &objs[0], metav1.CreateOptions{
			DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
		return err != nil && strings.Contains(err.Error(), "unknown field"), nil
	})
	kubeRayCRDsInstalled = true
}
