package headsim

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/rayapi/dashboard"
	"github.com/raydar/raydar/rayapi/scheme"
)

// TestAddressBookFile: another process, reading only the file, reaches the
// head that this Sim runs, and stops reaching it when the head goes.
func TestAddressBookFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), addrbook.FileName)
	cs := k8sfake.NewClientset()
	sim, err := Start(ctx, Options{
		Clientset: cs, Client: crfake.NewClientBuilder().WithScheme(scheme.New()).Build(),
		PollInterval: 20 * time.Millisecond, Logf: t.Logf, AddressBook: path,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	book := addrbook.Open(path)
	if _, ok := book.DashboardURL(ns, "rc"); ok {
		t.Fatal("an address before any head")
	}
	if err := book.Err(); err != nil {
		t.Fatalf("Start writes an empty book: %v", err)
	}

	pods := cs.CoreV1().Pods(ns)
	p := headPod("rc-head-x", "rc", "uid-1", true)
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var url string
	eventually(t, "the head in the book", func() bool { u, ok := book.DashboardURL(ns, "rc"); url = u; return ok })
	if want, _ := sim.DashboardURL(ns, "rc"); url != want {
		t.Fatalf("book says %s, the Sim %s", url, want)
	}
	dc, _ := dashboard.New(url)
	if _, err := dc.SubmitJob(ctx, dashboard.SubmitJobRequest{Entrypoint: "true", SubmissionID: "j1"}); err != nil {
		t.Fatalf("submitting through the book's address: %v", err)
	}
	if n := sim.Calls(ns, "rc", "POST", "/api/jobs/"); n != 1 {
		t.Fatalf("the book's address is the counting front: %d calls counted (%v)", n, sim.AllCalls(ns, "rc"))
	}
	proxy, ok := book.ServeProxyURL(ns, "rc")
	if want, _ := sim.ServeProxyURL(ns, "rc"); !ok || proxy != want {
		t.Fatalf("serve proxy in the book %q, the Sim's %q", proxy, want)
	}

	if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the head to leave the book", func() bool { _, ok := book.DashboardURL(ns, "rc"); return !ok })

	if _, err := pods.Create(ctx, headPod("rc-head-y", "rc", "uid-2", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new head in the book", func() bool { u, ok := book.DashboardURL(ns, "rc"); return ok && u != url })
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := book.DashboardURL(ns, "rc"); ok {
		t.Fatal("Close leaves the head in the book")
	}
}
