package watch

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/randfill"

	"github.com/raydar/raydar/controller/raycluster"
	"github.com/raydar/raydar/rayapi/podview"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// randomPods are pods with every field of the API filled at random (each
// field a 1-in-5 chance of nil): whatever SlimPod keeps today or is taught
// to keep tomorrow is set in some of them.
func randomPods(seed int64, n int) []*corev1.Pod {
	f := randfill.NewWithSeed(seed).NilChance(0.2).NumElements(1, 2).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), resource.DecimalSI)
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(8))
			}
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			c.FillNoCustom(m)
			m.Name, m.Namespace = fmt.Sprintf("pod-%d", c.Intn(1<<20)), "ns"
		},
	)
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		p := &corev1.Pod{}
		f.Fill(p)
		p.TypeMeta = metav1.TypeMeta{}
		// ready or not as SlimPod judges it (it keeps the containers'
		// resources only while a pod is not): a third Running and Ready,
		// a third Running with Ready False behind another condition, the
		// rest at random
		switch i % 3 {
		case 0:
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = append([]corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}, p.Status.Conditions...)
		case 1:
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse},
				corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		}
		pods[i] = p
	}
	return pods
}

// podEncoder encodes an object in protobuf, as kube-apiserver does.
func podEncoder(t testing.TB) func(runtime.Object) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	return func(o runtime.Object) []byte {
		var b bytes.Buffer
		if err := enc.Encode(o, &b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
}

// watchStream is a protobuf WATCH body of one ADDED event per pod, framed
// as kube-apiserver frames them.
func watchStream(t testing.TB, pods []*corev1.Pod) []byte {
	t.Helper()
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	encode := podEncoder(t)
	var out bytes.Buffer
	s := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&out), protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme))
	for _, p := range pods {
		if err := s.Encode(&metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: encode(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// podAPI serves the pods of namespace ns in protobuf: a LIST, and a WATCH
// of one ADDED event per pod, as kube-apiserver frames them.
func podAPI(t *testing.T, pods []*corev1.Pod) *httptest.Server {
	t.Helper()
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}
	for _, p := range pods {
		list.Items = append(list.Items, *p)
	}
	listBody := podEncoder(t)(list)
	stream := watchStream(t, pods)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/ns/pods" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("watch") != "true" {
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
			_, _ = w.Write(listBody)
			return
		}
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
		_, _ = w.Write(stream)
	}))
}

// podClient is a clientset of srv in protobuf, through SlimPodWire or not.
func podClient(t *testing.T, srv *httptest.Server, slim bool) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf}}
	if slim {
		cfg.Wrap(SlimPodWire)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// What reaches the cache is the same with the wire filter as without: every
// pod, listed or watched, trimmed by SlimPod after decoding, equals the same
// pod decoded whole and trimmed, and the filter did drop bytes.
func TestSlimPodWireKeepsWhatSlimPodKeeps(t *testing.T) {
	pods := randomPods(27, 40)
	srv := podAPI(t, pods)
	defer srv.Close()
	ctx := context.Background()
	slimmed := func(p *corev1.Pod) *podview.Pod {
		out, err := SlimPod(p.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		return out.(*podview.Pod)
	}
	whole, err := podClient(t, srv, false).CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	thin, err := podClient(t, srv, true).CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Items) != len(pods) || len(thin.Items) != len(pods) || thin.ResourceVersion != "7" {
		t.Fatalf("listed %d and %d pods (resourceVersion %q); want %d and 7", len(whole.Items), len(thin.Items), thin.ResourceVersion, len(pods))
	}
	var wholeSize, thinSize int
	for i := range pods {
		w, th := &whole.Items[i], &thin.Items[i]
		wholeSize += w.Size()
		thinSize += th.Size()
		if !equality.Semantic.DeepEqual(slimmed(w), slimmed(th)) {
			t.Fatalf("listed pod %d: trimmed after the wire filter differs from trimmed whole", i)
		}
	}
	if thinSize*2 > wholeSize {
		t.Errorf("the wire filter kept %d of %d bytes; want less than half (it drops most of a random spec)", thinSize, wholeSize)
	}

	watched := func(slim bool) []*corev1.Pod {
		w, err := podClient(t, srv, slim).CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var out []*corev1.Pod
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				t.Fatalf("watch event %s of %T", ev.Type, ev.Object)
			}
			out = append(out, p)
		}
		return out
	}
	ww, wt := watched(false), watched(true)
	if len(ww) != len(pods) || len(wt) != len(pods) {
		t.Fatalf("watched %d and %d pods; want %d", len(ww), len(wt), len(pods))
	}
	for i := range pods {
		if !equality.Semantic.DeepEqual(slimmed(ww[i]), slimmed(wt[i])) {
			t.Fatalf("watched pod %d: trimmed after the wire filter differs from trimmed whole", i)
		}
		if wt[i].ManagedFields != nil || len(wt[i].Spec.Volumes) != 0 {
			t.Fatalf("watched pod %d kept its managedFields or volumes through the wire filter", i)
		}
	}
}

// What the filter does not recognise passes as it came: another path, a
// JSON body, a protobuf body that is not a pod list.
func TestSlimPodWirePassesTheRest(t *testing.T) {
	for _, tc := range []struct {
		path, contentType string
		body              []byte
	}{
		{"/api/v1/namespaces/ns/pods/p1", runtime.ContentTypeProtobuf, append([]byte("k8s\x00"), 1, 2, 3)},
		{"/api/v1/namespaces/ns/pods", runtime.ContentTypeJSON, []byte(`{"kind":"PodList"}`)},
		{"/api/v1/namespaces/ns/pods", runtime.ContentTypeProtobuf, append([]byte("k8s\x00"), 0xff, 0xff)},
		{"/api/v1/namespaces/ns/services", runtime.ContentTypeProtobuf, []byte("k8s\x00abc")},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.contentType)
			_, _ = w.Write(tc.body)
		}))
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		resp, err := SlimPodWire(http.DefaultTransport).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		_, _ = got.ReadFrom(resp.Body)
		resp.Body.Close()
		srv.Close()
		if !bytes.Equal(got.Bytes(), tc.body) {
			t.Errorf("%s (%s): body %q; want it unchanged, %q", tc.path, tc.contentType, got.Bytes(), tc.body)
		}
	}
	for path, want := range map[string]bool{
		"/api/v1/pods": true, "/api/v1/namespaces/a/pods": true, "/k8s/clusters/c-1/api/v1/namespaces/a/pods": true,
		"/api/v1/namespaces/a/pods/b": false, "/apis/x/v1/namespaces/a/pods": false, "/api/v1/namespaces/a/b/pods": false,
	} {
		if got := isPodCollection(path); got != want {
			t.Errorf("isPodCollection(%q) = %v; want %v", path, got, want)
		}
	}
}

// BenchmarkPodDecode: a LIST of 1,000 pods as raydar's operator builds them
// for a RayCluster (a head and workers: env, the ray start script, probes,
// volumes), Running and Ready, decoded in protobuf and trimmed by SlimPod, as the TUI's cache
// does at launch, with and without the wire filter: CPU and bytes
// allocated per pod. kubelet-status/ is the same pods with the status a
// kubelet of 1.33 or later writes (kubeletStatus: container and image IDs,
// allocated resources, volume mounts, users), where kwok writes less.
func BenchmarkPodDecode(b *testing.B) {
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	ctr := func(name string) []corev1.Container {
		return []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0", Resources: res}}
	}
	nine := int32(9)
	rc := &rayv1.RayCluster{ // the e2e data set's (test/internal/testobj.Cluster)
		ObjectMeta: metav1.ObjectMeta{Name: "c-00001", Namespace: "bench"},
		Spec: rayv1.RayClusterSpec{
			RayVersion:    "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{}, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-head")}}},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "small", Replicas: &nine, RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: ctr("ray-worker")}}}},
		},
	}
	cfg := raycluster.DefaultBuildConfig()
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	kubelet := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range 1000 {
		pb := raycluster.PodBuild{Name: fmt.Sprintf("c-00001-%d", i), Head: i%10 == 0}
		if !pb.Head {
			pb.Group = &rc.Spec.WorkerGroupSpecs[0]
		}
		p := raycluster.BuildPod(rc, pb, "bench", cfg)
		now := metav1.Now()
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3", StartTime: &now} // Running and Ready, as the data set's
		for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
		}
		p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "raydar", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: bytes.Repeat([]byte(`{"f:spec":{}}`), 40)}}}
		list.Items = append(list.Items, *p)
		// The same pod as a kubelet of 1.33 or later reports it.
		k := p.DeepCopy()
		k.Status = kubeletStatus(corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, corev1.ContainerState{})
		k.Status.InitContainerStatuses = nil
		k.Status.Conditions = p.Status.Conditions
		k.Status.ContainerStatuses[0].Name = p.Spec.Containers[0].Name
		kubelet.Items = append(kubelet.Items, *k)
	}
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	encode := func(l *corev1.PodList) *bytes.Buffer {
		var body bytes.Buffer
		if err := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(l, &body); err != nil {
			b.Fatal(err)
		}
		return &body
	}
	for _, c := range []struct {
		name string
		body *bytes.Buffer
	}{{"", encode(list)}, {"kubelet-status/", encode(kubelet)}} {
		benchmarkPodDecode(b, c.name, c.body)
	}
}

// heapKept is how many bytes of heap what build returns holds once the
// garbage of making it is collected. What build reads (what its closure
// refers to: the pods a Store is built from, a LIST body) is held until
// the second reading: a caller often uses it no more after the call, and
// the collector would free it in between, counting it against what build
// made (BenchmarkStoreAdd read -667 B/pod, its 10,000 input pods freed).
func heapKept(build func() any) int64 {
	var m0, m1 goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&m0)
	kept := build()
	goruntime.GC()
	goruntime.ReadMemStats(&m1)
	goruntime.KeepAlive(kept)
	goruntime.KeepAlive(build)
	return int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
}

// TestHeapKeptHoldsWhatBuildReads: a build that copies 1 MiB out of a
// 4 MiB input no one else refers to keeps 1 MiB, not 1 MiB less the input.
func TestHeapKeptHoldsWhatBuildReads(t *testing.T) {
	in := make([]byte, 4<<20)
	got := heapKept(func() any { return bytes.Clone(in[:1<<20]) })
	if got < 1<<20-1<<18 || got > 1<<20+1<<19 {
		t.Fatalf("heapKept = %d B, want about %d (the copy)", got, 1<<20)
	}
}

// benchmarkPodDecode decodes and trims the LIST body, with and without the
// wire filter, as sub-benchmarks named prefix+"wire-filter=…".
func benchmarkPodDecode(b *testing.B, prefix string, body *bytes.Buffer) {
	dec := scheme.Codecs.UniversalDeserializer()
	// decode returns what a cache keeps: SlimPod's records (the decoded
	// list is garbage once they are made).
	decode := func(b *testing.B, wire bool) []any {
		in := body.Bytes()
		if wire {
			in = slimList(in)
		}
		obj, _, err := dec.Decode(in, nil, &corev1.PodList{})
		if err != nil {
			b.Fatal(err)
		}
		items := obj.(*corev1.PodList).Items
		out := make([]any, len(items))
		for i := range items {
			if out[i], err = SlimPod(&items[i]); err != nil {
				b.Fatal(err)
			}
		}
		return out
	}
	for _, wire := range []bool{false, true} {
		b.Run(fmt.Sprintf("%swire-filter=%v", prefix, wire), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decode(b, wire)
			}
			// what a list's pods keep on the heap once trimmed and shared
			// with the pods decoded before them (a cache's steady state)
			var kept []any
			b.ReportMetric(float64(heapKept(func() any { kept = decode(b, wire); return kept }))/float64(len(kept)), "kept-B/pod")
			b.ReportMetric(float64(body.Len())/1000, "wire-B/pod")
		})
	}
}

// countingBody is a response body that counts the reads taken from it.
type countingBody struct {
	io.Reader
	reads int
}

func (c *countingBody) Read(p []byte) (int, error) { c.reads++; return c.Reader.Read(p) }
func (c *countingBody) Close() error               { return nil }

// A WATCH stream that has arrived is taken in a few large reads, not two
// per pod: over HTTP/2 each read of 4 KB or more is a WINDOW_UPDATE written
// back to the API server. What comes out is every event, rewritten.
func TestSlimWatchBodyReadsInBulk(t *testing.T) {
	pods := randomPods(5, 300)
	stream := watchStream(t, pods)
	src := &countingBody{Reader: bytes.NewReader(stream)}
	body := newSlimWatchBody(src)
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	dec := streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(body), protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme))
	events := 0
	for {
		var ev metav1.WatchEvent
		if _, _, err := dec.Decode(nil, &ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("event %d: %v", events, err)
		}
		events++
	}
	if events != len(pods) {
		t.Fatalf("decoded %d events; want %d", events, len(pods))
	}
	if most := len(stream)/watchReadSize + 2; src.reads > most {
		t.Errorf("%d reads of a %d-byte stream that had all arrived; want at most %d (not two per pod)", src.reads, len(stream), most)
	}
}

// The buffer never holds an event back: one that has arrived is read at
// once though the stream goes on and the buffer is far from full.
func TestSlimWatchBodyDoesNotHoldAnEvent(t *testing.T) {
	stream := watchStream(t, randomPods(6, 1))
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write(stream) }() // one event; the stream stays open
	got := make(chan error, 1)
	go func() {
		var hdr [4]byte
		body := newSlimWatchBody(pr)
		if _, err := io.ReadFull(body, hdr[:]); err != nil {
			got <- err
			return
		}
		_, err := io.ReadFull(body, make([]byte, binary.BigEndian.Uint32(hdr[:])))
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the one event that arrived was not read within 30 s: held in the buffer")
	}
}
