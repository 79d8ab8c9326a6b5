package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// Diff is one difference between what KubeRay and raydar made for one
// manifest: the object, the path inside it ("" for an object only one side
// has) and each side's value ("<absent>" where it has none).
type Diff struct {
	Manifest string
	Object   string
	Path     string
	KubeRay  string
	Raydar   string
}

const absent = "<absent>"

// Key is the line that names d in reports and that intended entries match.
func (d Diff) Key() string {
	if d.Path == "" {
		return d.Manifest + ": " + d.Object
	}
	return d.Manifest + ": " + d.Object + " " + d.Path
}

func (d Diff) String() string {
	return fmt.Sprintf("%s\n      kuberay: %s\n      raydar:  %s", d.Key(), d.KubeRay, d.Raydar)
}

// Compare diffs the normalised objects of both sides.
func Compare(manifest string, kuberay, raydar []Object) []Diff {
	kr := map[string]Object{}
	for _, o := range kuberay {
		kr[o.ID] = o
	}
	rd := map[string]Object{}
	for _, o := range raydar {
		rd[o.ID] = o
	}
	ids := map[string]bool{}
	for id := range kr {
		ids[id] = true
	}
	for id := range rd {
		ids[id] = true
	}
	var out []Diff
	for _, id := range sortedKeys(ids) {
		a, inA := kr[id]
		b, inB := rd[id]
		switch {
		case !inA:
			out = append(out, Diff{Manifest: manifest, Object: id, KubeRay: absent, Raydar: presentAs(b)})
		case !inB:
			out = append(out, Diff{Manifest: manifest, Object: id, KubeRay: presentAs(a), Raydar: absent})
		default:
			r := &reporter{}
			cmp.Equal(a.Content, b.Content, cmp.Reporter(r))
			for _, d := range r.diffs {
				d.Manifest, d.Object = manifest, id
				out = append(out, d)
			}
		}
	}
	return out
}

// presentAs shows an object only one side has: "present", and what it is
// when that is short (a Warning Event's reasons).
func presentAs(o Object) string {
	c := canonical(o.Content)
	if len(c) > 300 {
		c = c[:300] + "…"
	}
	return "present " + c
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reporter collects go-cmp's differences with a JSON-path-like name.
type reporter struct {
	path  cmp.Path
	diffs []Diff
}

func (r *reporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *reporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *reporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	d := Diff{Path: pathString(r.path), KubeRay: absent, Raydar: absent}
	if vx.IsValid() {
		d.KubeRay = valueString(vx.Interface())
	}
	if vy.IsValid() {
		d.Raydar = valueString(vy.Interface())
	}
	r.diffs = append(r.diffs, d)
}

// pathString renders map keys as .key (or [key] when the key has dots or
// slashes, as label keys do) and list indexes as [i].
func pathString(p cmp.Path) string {
	var b strings.Builder
	for _, s := range p {
		switch t := s.(type) {
		case cmp.MapIndex:
			k := fmt.Sprint(t.Key().Interface())
			if strings.ContainsAny(k, "./ ") {
				b.WriteString("[" + k + "]")
			} else {
				b.WriteString("." + k)
			}
		case cmp.SliceIndex:
			kx, ky := t.SplitKeys()
			switch {
			case kx == ky:
				fmt.Fprintf(&b, "[%d]", kx)
			case kx == -1:
				fmt.Fprintf(&b, "[+%d]", ky)
			default:
				fmt.Fprintf(&b, "[%d-]", kx)
			}
		}
	}
	return b.String()
}

func valueString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Intended is one listed difference: globs ("*" matches anything, "?" one
// character) on the manifest, the object and the path, and the reason a
// KubeRay user would accept it.
type Intended struct {
	Manifest string `json:"manifest"`
	// Manifests, instead of Manifest, names each manifest the entry is
	// for (exact names): an excuse that is about a few manifests says which.
	Manifests []string `json:"manifests,omitempty"`
	Object    string   `json:"object"`
	Path      string   `json:"path"`
	// KubeRay and Raydar, when set, are globs each side's value must match
	// (so an entry does not excuse any value at that path).
	KubeRay string `json:"kuberay,omitempty"`
	Raydar  string `json:"raydar,omitempty"`
	// Tie, when set, derives raydar's value from KubeRay's (instead of
	// Raydar): the same but for one change. An entry over a command line
	// (commandLinePaths) needs one, or raydar's value in full: two free
	// globs there would excuse a raydar that lost the user's own command.
	Tie *Tie `json:"tie,omitempty"`
	// Sometimes marks a difference that KubeRay's own nondeterminism makes
	// in some runs only (a race in its cache): it may be absent from a run.
	// Every other entry must occur. A Warning raydar gives is never
	// sometimes: raydar's own nondeterminism is not excused.
	Sometimes bool `json:"sometimes,omitempty"`
	// Pending marks a difference that is raydar's to fix and not fixed yet:
	// not a behaviour a KubeRay user would accept. It is counted apart in
	// the summary line ("known, not yet fixed"), listed in
	// docs/kuberay-compatibility.md's "Not yet fixed" table, and may stop
	// occurring (the fix removes the entry).
	Pending bool   `json:"pending,omitempty"`
	Why     string `json:"why"`

	manifest, object, path, kuberay, raydar, tiePrefix *regexp.Regexp
}

// Tie says how raydar's value follows from KubeRay's at the same path: it
// is KubeRay's, verbatim, but for one change, either
//   - Replace/With: KubeRay's value holds Replace exactly once and raydar's
//     has With in its place (both verbatim: "the same as KubeRay's but for
//     the ulimit"), or
//   - Prefix: raydar's value is KubeRay's behind a prefix matching this
//     glob (a command v1.7.0 starts with a step v1.6.2 does not have).
//
// Either way, a side without a value (<absent>) never matches.
type Tie struct {
	Replace string  `json:"replace,omitempty"`
	With    *string `json:"with,omitempty"`
	Prefix  string  `json:"prefix,omitempty"`
}

// commandLinePaths are globs on the paths that name a command line: a
// container's command and args (the lists or one element: the Ray
// container's, a submitter's, an exec probe's or hook's), and the env
// entries KubeRay stores generated command lines in (KUBERAY_GEN_*_CMD).
// Command lines are all in specs (a pod's, a Job's or a Ray object's pod
// templates).
var commandLinePaths = []string{
	".spec*.command", ".spec*.command[*]",
	".spec*.args", ".spec*.args[*]",
	".spec*.env.*_CMD", ".spec*.env.*_CMD.value",
}

// wholeManifestPending reports whether e marks its manifests pending as a
// whole (pendingManifest): not compared in the suite at all.
func (e *Intended) wholeManifestPending() bool {
	return e.Pending && e.Object == "*" && e.Path == "*" && e.KubeRay == "" && e.Raydar == "" && e.Tie == nil
}

// LoadIntended reads the list of intended differences.
func LoadIntended(file string) ([]*Intended, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var list []*Intended
	if err := yaml.UnmarshalStrict(b, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for i, e := range list {
		if err := e.compile(); err != nil {
			return nil, fmt.Errorf("%s: entry %d (%s %s): %w", file, i+1, e.Object, e.Path, err)
		}
	}
	return list, nil
}

// compile checks e and builds its matchers.
func (e *Intended) compile() error {
	if e.Why == "" {
		return fmt.Errorf("no reason (why)")
	}
	if len(e.Manifests) > 0 {
		if e.Manifest != "" {
			return fmt.Errorf("manifest and manifests both set")
		}
		quoted := make([]string, len(e.Manifests))
		for j, m := range e.Manifests {
			quoted[j] = regexp.QuoteMeta(m)
		}
		e.manifest = regexp.MustCompile("^(" + strings.Join(quoted, "|") + ")$")
	} else if e.Manifest == "" {
		e.Manifest = "*"
	}
	if e.Object == "" {
		e.Object = "*"
	}
	if e.manifest == nil {
		e.manifest = glob(e.Manifest)
	}
	e.object, e.path = glob(e.Object), glob(e.Path)
	if e.KubeRay != "" {
		e.kuberay = glob(e.KubeRay)
	}
	if e.Raydar != "" {
		e.raydar = glob(e.Raydar)
	}
	if t := e.Tie; t != nil {
		switch {
		case e.Raydar != "":
			return fmt.Errorf("raydar and tie both set: tie derives raydar's value from KubeRay's")
		case t.Prefix != "" && (t.Replace != "" || t.With != nil):
			return fmt.Errorf("tie: prefix and replace/with both set")
		case t.Prefix != "":
			e.tiePrefix = glob(t.Prefix)
		case t.Replace == "" || t.With == nil:
			return fmt.Errorf("tie: needs replace and with, or prefix")
		case t.Replace == *t.With:
			return fmt.Errorf("tie: replace and with are the same (%q): no difference", t.Replace)
		}
	}
	if e.overCommandLine() && e.Tie == nil && !e.wholeManifestPending() && !isLiteral(e.Raydar) {
		return fmt.Errorf("path %q can name a command line (a command, args or KUBERAY_GEN_*_CMD) and raydar's value is a free glob (%q): "+
			"tie it to KubeRay's (tie: replace/with or prefix) or write raydar's value in full", e.Path, e.Raydar)
	}
	if e.Sometimes && e.Raydar != absent && globsMeet(e.Object, "Warning *") {
		return fmt.Errorf("sometimes on a Warning raydar gives (raydar %q): sometimes is for KubeRay's races; "+
			"a Warning raydar gives in some runs only is raydar's own timing, not excused (narrow raydar to %q)", e.Raydar, absent)
	}
	return nil
}

// overCommandLine reports whether e's path can name a command line.
func (e *Intended) overCommandLine() bool {
	for _, c := range commandLinePaths {
		if globsMeet(e.Path, c) {
			return true
		}
	}
	return false
}

// isLiteral reports whether g is a glob that matches one value only.
func isLiteral(g string) bool {
	return g != "" && !strings.ContainsAny(g, "*?")
}

// globsMeet reports whether some string matches both globs a and b: a walk
// over pairs of positions, a star either matching nothing (move past it) or
// one more character (stay).
func globsMeet(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	type pos struct{ i, j int }
	seen := map[pos]bool{}
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		if seen[pos{i, j}] {
			return false
		}
		seen[pos{i, j}] = true
		if i == len(ra) && j == len(rb) {
			return true
		}
		if i < len(ra) && ra[i] == '*' && walk(i+1, j) {
			return true
		}
		if j < len(rb) && rb[j] == '*' && walk(i, j+1) {
			return true
		}
		if i == len(ra) || j == len(rb) {
			return false
		}
		ca, cb := ra[i], rb[j]
		wa, wb := ca == '*' || ca == '?', cb == '*' || cb == '?'
		if !wa && !wb && ca != cb {
			return false
		}
		ni, nj := i+1, j+1
		if ca == '*' {
			ni = i
		}
		if cb == '*' {
			nj = j
		}
		return walk(ni, nj)
	}
	return walk(0, 0)
}

// Matches reports whether d is this intended difference.
func (e *Intended) Matches(d Diff) bool {
	if !e.manifest.MatchString(d.Manifest) || !e.object.MatchString(d.Object) || !e.path.MatchString(d.Path) ||
		(e.kuberay != nil && !e.kuberay.MatchString(d.KubeRay)) || (e.raydar != nil && !e.raydar.MatchString(d.Raydar)) {
		return false
	}
	if e.Tie != nil {
		return e.Tie.holds(d.KubeRay, d.Raydar, e.tiePrefix)
	}
	return true
}

// holds reports whether raydar's value rd follows from KubeRay's kr as t
// says (prefix: t.Prefix's glob).
func (t *Tie) holds(kr, rd string, prefix *regexp.Regexp) bool {
	if kr == absent || rd == absent {
		return false
	}
	if prefix != nil {
		p, ok := strings.CutSuffix(rd, kr)
		return ok && prefix.MatchString(p)
	}
	return strings.Count(kr, t.Replace) == 1 && rd == strings.Replace(kr, t.Replace, *t.With, 1)
}

func (e *Intended) String() string {
	m := e.Manifest
	if len(e.Manifests) > 0 {
		m = strings.Join(e.Manifests, ",")
	}
	return fmt.Sprintf("%s: %s %s (%s)", m, e.Object, e.Path, e.Why)
}

func glob(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)^") // values can span lines (an entrypoint)
	for _, r := range g {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Classify splits diffs into intended and unexplained, and records on each
// entry of list that it matched.
func Classify(diffs []Diff, list []*Intended, used map[*Intended]int) (intended, unexplained []Diff) {
	for _, d := range diffs {
		var hit *Intended
		for _, e := range list {
			if e.Matches(d) {
				hit = e
				break
			}
		}
		if hit == nil {
			unexplained = append(unexplained, d)
			continue
		}
		if used != nil {
			used[hit]++
		}
		intended = append(intended, d)
	}
	return intended, unexplained
}
