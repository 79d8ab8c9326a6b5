package privilege

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller"
	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/rayservice"
	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/headsim"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// TestOperatorAsItsServiceAccount runs raydar's operator as config/rbac's
// ServiceAccount (a TokenRequest token; leader election on its Lease in
// raydar-system; all namespaces, as config/default deploys it) through a
// RayCluster's life, an autoscaling cluster, RayJobs in HTTPMode and
// K8sJobMode to SUCCEEDED, a RayCronJob and a RayService to Ready, and the
// deletion of each. Then the audit log: not one of its requests was
// forbidden, and every one falls within config/rbac's rules.
func TestOperatorAsItsServiceAccount(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx, "op")
	token, err := sb.ServiceAccountToken(ctx, operatorNamespace, operatorSA, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := headsim.Start(ctx, headsim.Options{Config: sb.Config, Namespace: ns, SetPodPhase: sb.SetPodPhase, EndContainer: sb.EndContainer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	dash, err := raydash.New(raydash.Options{AddressBook: sim, HeadServiceName: kit.HeadServiceName})
	if err != nil {
		t.Fatal(err)
	}
	op, err := controller.New(sb.TokenConfig(token), controller.Options{
		LeaderElectionNamespace: operatorNamespace,
		LeaseDuration:           15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		StatusCoalesceWindow: 200 * time.Millisecond,
		Dashboards:           dash,
		ServeProxyChecker:    rayservice.ServeProxyCheckerFromAddressBook(sim),
		Logger:               testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	opCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := op.Start(opCtx); err != nil {
			t.Errorf("operator: %v", err)
		}
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)

	// A RayCluster: up, scaled up and down, a worker deleted, workers named
	// for deletion, suspended, resumed, deleted.
	createObj(t, ctx, testobj.Cluster(ns, "life", 2))
	waitReady(t, ctx, ns, "life", 2)
	updateRC(t, ctx, ns, "life", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4) })
	waitReady(t, ctx, ns, "life", 4)
	updateRC(t, ctx, ns, "life", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](1) })
	waitReady(t, ctx, ns, "life", 1)
	w := workers(t, ctx, ns, "life")
	if err := cl.Delete(ctx, &w[0]); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "a new worker in place of "+w[0].Name, func() (bool, string) {
		now := workers(t, ctx, ns, "life")
		return len(now) == 1 && now[0].Name != w[0].Name, fmt.Sprint(podNames(now))
	})
	waitReady(t, ctx, ns, "life", 1)
	updateRC(t, ctx, ns, "life", func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(true) })
	eventually(t, 2*time.Minute, "life suspended with no pods", func() (bool, string) {
		rc := getRC(t, ctx, ns, "life")
		n := len(podsOf(t, ctx, ns, "life"))
		return rc.Status.State == rayv1.Suspended && n == 0, fmt.Sprintf("state %q, %d pods", rc.Status.State, n)
	})
	updateRC(t, ctx, ns, "life", func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(false) })
	waitReady(t, ctx, ns, "life", 1)
	if err := cl.Delete(ctx, getRC(t, ctx, ns, "life")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "life and its pods gone", func() (bool, string) {
		err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "life"}, &rayv1.RayCluster{})
		n := len(podsOf(t, ctx, ns, "life"))
		return apierrors.IsNotFound(err) && n == 0, fmt.Sprintf("get: %v, %d pods", err, n)
	})

	// Autoscaling: the operator makes the autoscaler's ServiceAccount, Role
	// and RoleBinding (RBAC objects it may create only with the rights it
	// grants), and the autoscaler's way of deleting a worker.
	auto := testobj.Cluster(ns, "auto", 2)
	auto.Spec.EnableInTreeAutoscaling = ptr.To(true)
	createObj(t, ctx, auto)
	waitReady(t, ctx, ns, "auto", 2)
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "auto"}, &rbacv1.RoleBinding{}); err != nil {
		t.Fatalf("the autoscaler's RoleBinding: %v", err)
	}
	victim := workers(t, ctx, ns, "auto")[0].Name
	updateRC(t, ctx, ns, "auto", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](1)
		rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{victim}
	})
	eventually(t, 2*time.Minute, victim+" deleted", func() (bool, string) {
		now := podNames(workers(t, ctx, ns, "auto"))
		return len(now) == 1 && !slices.Contains(now, victim), fmt.Sprint(now)
	})

	// A RayJob (HTTPMode, submitted to the simulated head) to SUCCEEDED,
	// its cluster deleted after it.
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job"},
		Spec: rayv1.RayJobSpec{Entrypoint: "echo least privilege", SubmissionMode: rayv1.HTTPMode,
			ShutdownAfterJobFinishes: true, RayClusterSpec: &testobj.Cluster(ns, "unused", 0).Spec}}
	// And one in K8sJobMode: the operator creates the submitter Job.
	k8sJob := job.DeepCopy()
	k8sJob.Name, k8sJob.Spec.SubmissionMode = "k8sjob", rayv1.K8sJobMode
	createObj(t, ctx, job)
	createObj(t, ctx, k8sJob)
	for _, j := range []*rayv1.RayJob{job, k8sJob} {
		eventually(t, 4*time.Minute, j.Name+" SUCCEEDED and Complete", func() (bool, string) {
			got := &rayv1.RayJob{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(j), got); err != nil {
				return false, err.Error()
			}
			st := got.Status
			return st.JobStatus == rayv1.JobStatusSucceeded && st.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete,
				fmt.Sprintf("job %q deployment %q reason %q message %q", st.JobStatus, st.JobDeploymentStatus, st.Reason, st.Message)
		})
	}

	// A RayCronJob in a time zone that does not exist, then fixed (the
	// CRD admits any string there): the operator writes ScheduleValid False
	// (and a Warning Event), then True.
	cron := &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cron"},
		Spec: rayv1.RayCronJobSpec{Schedule: "0 3 * * *", TimeZone: ptr.To("Mars/Olympus_Mons"), JobTemplate: job.Spec}}
	createObj(t, ctx, cron)
	cronValid := func(want metav1.ConditionStatus) {
		t.Helper()
		eventually(t, 2*time.Minute, fmt.Sprintf("cron's ScheduleValid %s", want), func() (bool, string) {
			got := &rayv1.RayCronJob{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(cron), got); err != nil {
				return false, err.Error()
			}
			c := meta.FindStatusCondition(got.Status.Conditions, rayv1.RayCronJobScheduleValid)
			return c != nil && c.Status == want, fmt.Sprint(got.Status.Conditions)
		})
	}
	cronValid(metav1.ConditionFalse)
	for range 20 {
		got := &rayv1.RayCronJob{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(cron), got); err != nil {
			t.Fatal(err)
		}
		got.Spec.TimeZone = ptr.To("Europe/Berlin")
		if err := cl.Update(ctx, got); err == nil {
			break
		} else if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	cronValid(metav1.ConditionTrue)

	// A RayService to Ready.
	svc := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "svc"},
		Spec: rayv1.RayServiceSpec{ServeConfigV2: "applications:\n  - name: fruit\n    import_path: fruit.deployment_graph\n    route_prefix: /fruit\n",
			RayClusterSpec: testobj.Cluster(ns, "unused", 1).Spec}}
	createObj(t, ctx, svc)
	eventually(t, 4*time.Minute, "svc Ready", func() (bool, string) {
		s := &rayv1.RayService{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(svc), s); err != nil {
			return false, err.Error()
		}
		return rayv1.IsConditionTrue(s.Status.Conditions, string(rayv1.RayServiceReady)), fmt.Sprintf("conditions %v", s.Status.Conditions)
	})
	// Deleting the RayService and the RayJob: the operator cleans up.
	if err := cl.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{job, k8sJob, cron} {
		if err := cl.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Minute, "svc, the jobs and cron gone", func() (bool, string) {
		var left []string
		for _, o := range []client.Object{svc, job, k8sJob, cron} {
			if err := cl.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object)); !apierrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%s: %v", o.GetName(), err))
			}
		}
		return len(left) == 0, strings.Join(left, "; ")
	})
	stop()

	evs := auditUntilMarker(t, ctx)
	cluster, inSystem := operatorRules(t)
	var mine, forbidden, outside []string
	for _, e := range evs {
		if e.User.Username != operatorUser {
			continue
		}
		mine = append(mine, e.String())
		if e.Code() == 403 {
			forbidden = append(forbidden, e.String())
		}
		if !allowedBy(e, cluster) && !(e.Namespace() == operatorNamespace && allowedBy(e, inSystem)) && !everyUserMay(e) {
			outside = append(outside, e.String())
		}
	}
	t.Logf("audit log: %d requests of %s, %d forbidden, %d outside config/rbac; %s",
		len(mine), operatorUser, len(forbidden), len(outside), sandbox.Summarize(only(evs, operatorUser)))
	if len(mine) < 50 {
		t.Fatalf("only %d requests of %s in the audit log: did the operator run as its ServiceAccount?\n%s", len(mine), operatorUser, strings.Join(mine, "\n"))
	}
	if len(forbidden) > 0 {
		t.Errorf("forbidden requests of the operator (an RBAC gap: add +kubebuilder:rbac markers in controller/, then make generate):\n%s", strings.Join(forbidden, "\n"))
	}
	if len(outside) > 0 {
		t.Errorf("requests of the operator outside config/rbac's rules:\n%s", strings.Join(outside, "\n"))
	}
}

// only keeps the events of user.
func only(evs []sandbox.AuditEvent, user string) []sandbox.AuditEvent {
	var out []sandbox.AuditEvent
	for _, e := range evs {
		if e.User.Username == user {
			out = append(out, e)
		}
	}
	return out
}

// allowedBy reports whether one of the rules grants the request.
func allowedBy(e sandbox.AuditEvent, rules []rbacv1.PolicyRule) bool {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		return false
	}
	res := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		res += "/" + e.ObjectRef.Subresource
	}
	for _, r := range rules {
		if matches(r.APIGroups, e.ObjectRef.APIGroup) && matches(r.Resources, res) && matches(r.Verbs, e.Verb) &&
			(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, e.ObjectRef.Name)) {
			return true
		}
	}
	return false
}

func matches(list []string, v string) bool {
	return slices.Contains(list, v) || slices.Contains(list, "*")
}

// everyUserMay: what Kubernetes' bootstrap roles grant every authenticated
// user (system:discovery, system:basic-user, system:public-info-viewer).
func everyUserMay(e sandbox.AuditEvent) bool {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		p := e.RequestURI
		if i := strings.IndexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
		for _, ok := range []string{"/api", "/apis", "/version", "/healthz", "/livez", "/readyz", "/openapi"} {
			if p == ok || strings.HasPrefix(p, ok+"/") {
				return true
			}
		}
		return false
	}
	switch e.ObjectRef.Resource {
	case "selfsubjectaccessreviews", "selfsubjectrulesreviews", "selfsubjectreviews":
		return e.Verb == "create"
	}
	return false
}

// auditUntilMarker makes a request of its own (an admin get of a
// ConfigMap that does not exist) and returns the audit log once that
// request is in it: everything sent before is then there too.
func auditUntilMarker(t *testing.T, ctx context.Context) []sandbox.AuditEvent {
	t.Helper()
	marker := "privilege-marker-" + strings.ToLower(fmt.Sprint(time.Now().UnixNano()))
	_, _ = kc.CoreV1().ConfigMaps("default").Get(ctx, marker, metav1.GetOptions{})
	var evs []sandbox.AuditEvent
	eventually(t, time.Minute, "the marker request in the audit log", func() (bool, string) {
		var err error
		if evs, err = sb.AuditEvents(); err != nil {
			return false, err.Error()
		}
		for _, e := range evs {
			if e.ObjectRef != nil && e.ObjectRef.Name == marker {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs))
	})
	return evs
}

func createObj(t *testing.T, ctx context.Context, o client.Object) {
	t.Helper()
	if err := cl.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
}

func getRC(t *testing.T, ctx context.Context, ns, name string) *rayv1.RayCluster {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatal(err)
	}
	return rc
}

// updateRC applies f to a fresh copy and updates it, retrying conflicts.
func updateRC(t *testing.T, ctx context.Context, ns, name string, f func(*rayv1.RayCluster)) {
	t.Helper()
	for range 20 {
		rc := getRC(t, ctx, ns, name)
		f(rc)
		err := cl.Update(ctx, rc)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("too many conflicts updating", name)
}

// waitReady waits until the cluster is ready with n ready workers.
func waitReady(t *testing.T, ctx context.Context, ns, name string, n int32) {
	t.Helper()
	eventually(t, 3*time.Minute, fmt.Sprintf("%s ready with %d workers", name, n), func() (bool, string) {
		s := getRC(t, ctx, ns, name).Status
		return s.State == rayv1.Ready && s.ReadyWorkerReplicas == n && s.DesiredWorkerReplicas == n && len(workers(t, ctx, ns, name)) == int(n),
			fmt.Sprintf("state=%q ready=%d desired=%d conds=%v", s.State, s.ReadyWorkerReplicas, s.DesiredWorkerReplicas, s.Conditions)
	})
}

// podsOf lists a cluster's pods that are not terminating.
func podsOf(t *testing.T, ctx context.Context, ns, name string) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := cl.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{rayv1.RayClusterLabelKey: name}); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func workers(t *testing.T, ctx context.Context, ns, name string) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	for _, p := range podsOf(t, ctx, ns, name) {
		if p.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.WorkerNode) {
			out = append(out, p)
		}
	}
	return out
}

func podNames(ps []corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}
