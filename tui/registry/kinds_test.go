package registry

import (
	"testing"

	"github.com/raydar/raydar/kube/watch"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/tui/host"
)

// pageOf is a page that says what it was opened for.
type pageOf struct {
	host.Base
	name string
}

func (p *pageOf) Title() string       { return p.name }
func (p *pageOf) Crumb() string       { return p.name }
func (p *pageOf) View() string        { return p.name }
func (p *pageOf) Target() host.Target { return host.Target{} }

// A page opens another kind's page through the registry (host.Kinds.Open):
// it is that kind's drill-down, in the Env given, for an object of the
// kind; nothing for a kind without an entry or one that opens nothing.
func TestKindsOpen(t *testing.T) {
	clusters := Entry{List: "clusters", Watch: watch.RayCluster, Typed: DefOf[*rayv1.RayCluster](func() Def[*rayv1.RayCluster] {
		return Def[*rayv1.RayCluster]{Open: func(e *host.Env, rc *rayv1.RayCluster) host.Page {
			return &pageOf{Base: host.Base{E: e}, name: rc.Name}
		}}
	})}
	services := Entry{List: "services", Watch: watch.RayService, Typed: DefOf[*rayv1.RayService](func() Def[*rayv1.RayService] {
		return Def[*rayv1.RayService]{}
	})}
	var r host.Kinds = &Kinds{Entries: []Entry{clusters, services}}
	e := &host.Env{}
	p, ok := r.Open(e, &rayv1.RayCluster{ObjectMeta: om("ml", "train-a", nil)}).(*pageOf)
	if !ok || p.name != "train-a" || p.E != e {
		t.Fatalf("a RayCluster opened %+v, want its page in the Env given", p)
	}
	if p := r.Open(e, &rayv1.RayService{ObjectMeta: om("serve", "fruit", nil)}); p != nil {
		t.Fatalf("a kind that opens nothing opened %T", p)
	}
	if p := r.Open(e, &rayv1.RayJob{ObjectMeta: om("ml", "nightly", nil)}); p != nil {
		t.Fatalf("a kind without an entry opened %T", p)
	}
}
