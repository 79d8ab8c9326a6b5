package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/raydar/raydar/kube/watch"
	"github.com/raydar/raydar/rayapi/podview"
)

// BenchmarkFleetApplyBatch: the data set split between two contexts (half
// the clusters and their pods each; issue 25 asks the same figures of 2
// contexts as of one), one batch of 1,000 pod updates of one context
// applied to its store and the merged pods list, and the frame after it.
// Compare with BenchmarkApplyBatch/in-place.
func BenchmarkFleetApplyBatch(b *testing.B) {
	ds := benchDeltas()
	stores := [2]*watch.Store{watch.NewStore(), watch.NewStore()}
	var halves [2][]watch.Delta
	for _, d := range ds {
		ns := d.Object.GetNamespace()   // team-0 … team-9
		i := int(ns[len(ns)-1]-'0') % 2 // the odd teams are the second context's
		halves[i] = append(halves[i], d)
	}
	for i := range stores {
		stores[i].Apply(halves[i])
	}
	a, err := New(Options{Now: clock, StartView: PodsView, Fleet: []FleetMember{
		{Session: Session{Context: "prod-us"}, Store: stores[0]},
		{Session: Session{Context: "prod-eu"}, Store: stores[1]},
	}})
	if err != nil {
		b.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
	var pods []*corev1.Pod
	for _, o := range stores[1].List(watch.Pod) {
		pods = append(pods, o.(*podview.Pod).Corev1())
	}
	batches := make([][]watch.Delta, 8)
	for r := range batches {
		batches[r] = podUpdates(pods, 1000, r, false)
	}
	e := a.fleet[1]
	b.ReportAllocs()
	r := 0
	for b.Loop() {
		a.Update(batchMsg{gen: a.gen, env: e, deltas: batches[r%len(batches)]})
		r++
		_ = a.View()
	}
}
