// Package edit owns the editing of one RayCluster, RayJob, RayService or
// RayCronJob in the person's editor, for the TUI's e and `raydar edit`,
// as kubectl edit does it: the object's YAML (without managedFields and
// status) in a temporary file, the editor of $KUBE_EDITOR, else $EDITOR,
// else vi (Command), and on save:
//
//   - a file as written, or that says the same object: "Edit cancelled, no
//     changes made"; an empty file (comments only): "Edit cancelled, saved
//     file was empty";
//   - YAML that does not parse, an unknown or duplicated field, a changed
//     kind, name or namespace, a rule of rayapi/v1 validation broken, or a
//     422 from the API server: the file reopens with the errors, naming the
//     fields, as comments on top (saved again unchanged: the edit ends and
//     the file is kept, its path said);
//   - a conflict (the object changed since the editor opened): the file
//     reopens on the new version with the person's changes laid over it
//     (a JSON merge patch), the error and the fields both changed on top;
//   - otherwise a plan (kube/actions.PlanEdit: what changes, and what will
//     not take effect on running pods) to confirm, then ONE write through
//     kube/actions.Edit, the choke point (read-only, protected contexts,
//     the audit log, an Event).
//
// Nothing is half-applied: the write is one merge patch, all or nothing.
// Whenever an edit ends without being applied after the person changed
// something, the file stays and its path is said. A Session is a state
// machine driven by its caller (the TUI between tea.ExecProcess runs, the
// CLI in a loop): Start, run Command, Review, Apply on confirmation.
package edit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube/actions"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Header is the comment on top of the file, kubectl edit's words.
const Header = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

// StepKind is what the caller does next.
type StepKind int

// The steps.
const (
	// Cancelled: nothing is applied; Message says why (and where the file
	// is kept, if it is).
	Cancelled StepKind = iota
	// Reopen: the file was rewritten with the errors on top; run the
	// editor again (Message says why, for a status line).
	Reopen
	// Confirm: Plan is what the edit does; Apply on confirmation, Abandon
	// otherwise.
	Confirm
	// Applied: written; Result is the choke point's.
	Applied
	// Failed: Err; the file is kept (Message says where).
	Failed
)

// Step is the outcome of Review or Apply.
type Step struct {
	Kind    StepKind
	Message string
	// Kept is the file's path when it is left on disk with the person's
	// changes (a Cancelled or Failed edit that was not applied).
	Kept   string
	Plan   *actions.EditPlan
	Result *actions.Result
	Err    error
}

// Session is one edit of one object. Not safe for concurrent use: its
// caller drives it one step at a time.
type Session struct {
	Kind      actions.Kind
	Namespace string
	Name      string
	// Path is the file being edited.
	Path string

	a *actions.Actions
	// base is the object as read, the edit's base (its resourceVersion is
	// the write's precondition).
	base client.Object
	// wrote is the file as last written; errored: it was reopened with
	// errors; rebased: it was reopened on a new version after a conflict,
	// so that saving it as it is applies it.
	wrote   []byte
	errored bool
	rebased bool
	// edited is the object last reviewed, from editedBody (the file as the
	// person saved it, without the header).
	edited     client.Object
	editedBody []byte
}

// Start reads the object and writes the file to edit into dir ("" the
// system's temporary directory). Read-only mode refuses here, before any
// request (the choke point would refuse the write; the person should not
// edit for nothing).
func Start(ctx context.Context, a *actions.Actions, kind actions.Kind, ns, name, dir string) (*Session, error) {
	ref := actions.ObjectRef{Kind: kind, Namespace: ns, Name: name}
	if kind == nil || !kind.IsRay() {
		return nil, fmt.Errorf("edit: %s is not a RayCluster, RayJob, RayService or RayCronJob", ref)
	}
	if a.ReadOnly() {
		return nil, &actions.ReadOnlyError{Action: actions.ActionEdit, Object: ref, Reason: a.ReadOnlyReason()}
	}
	s := &Session{Kind: kind, Namespace: ns, Name: name, a: a}
	obj, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	s.base = obj
	body, err := Render(obj)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("raydar-edit-%s-%s-*.yaml", strings.ToLower(kind.Kind), name))
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	s.Path = f.Name()
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	if err := s.write(append([]byte(Header), body...)); err != nil {
		_ = os.Remove(s.Path)
		return nil, err
	}
	return s, nil
}

func (s *Session) get(ctx context.Context) (client.Object, error) {
	obj := s.Kind.New()
	if err := s.a.Client().Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, obj); err != nil {
		return nil, &actions.APIError{Verb: "get", Resource: s.Kind.Resource.Resource, Namespace: s.Namespace, Name: s.Name, User: s.a.Actor(), Err: err}
	}
	obj.GetObjectKind().SetGroupVersionKind(rayv1.GroupVersion.WithKind(s.Kind.Kind))
	return obj, nil
}

func (s *Session) write(b []byte) error {
	if err := os.WriteFile(s.Path, b, 0o600); err != nil {
		return fmt.Errorf("edit: %w", err)
	}
	s.wrote = b
	return nil
}

// Render is obj's YAML as the editor shows it: without managedFields and
// status (kubectl edit's default).
func Render(obj client.Object) ([]byte, error) {
	j, err := json.Marshal(actions.StripForEdit(obj))
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	delete(m, "status")
	return yaml.Marshal(m)
}

// Command is the editor command for the file, as kubectl picks it:
// $KUBE_EDITOR, else $EDITOR, else vi (getenv reads them); a value with
// spaces is split on them, one with quotes or backslashes runs through
// $SHELL -c (sh without SHELL) (k8s.io/kubectl/pkg/cmd/util/editor
// editor.go: defaultEnvEditor, Launch). Its standard streams are the
// caller's to set.
func (s *Session) Command(getenv func(string) string) *exec.Cmd {
	args := EditorArgs(getenv, s.Path)
	return exec.Command(args[0], args[1:]...)
}

// EditorArgs is the argv that edits path (Command's).
func EditorArgs(getenv func(string) string, path string) []string {
	editor := ""
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		if editor = getenv(env); editor != "" {
			break
		}
	}
	if editor == "" {
		editor = "vi"
		if runtime.GOOS == "windows" {
			editor = "notepad"
		}
	}
	switch {
	case !strings.Contains(editor, " "):
		return []string{editor, path}
	case !strings.ContainsAny(editor, "\"'\\"):
		return append(strings.Split(editor, " "), path)
	}
	shell := getenv("SHELL")
	if shell == "" {
		shell = "sh"
	}
	return []string{shell, "-c", fmt.Sprintf("%s %q", editor, path)}
}

// kept is the words saying the file stays.
func (s *Session) kept() string { return "your edit is kept in " + s.Path }

// Abandon ends an edit the person did not confirm; the file stays.
func (s *Session) Abandon() Step {
	return Step{Kind: Cancelled, Message: "Edit cancelled, nothing was changed; " + s.kept(), Kept: s.Path}
}

// done removes the file of an edit that needs it no more.
func (s *Session) done() { _ = os.Remove(s.Path) }

// Review reads the file after the editor exited and says what is next.
func (s *Session) Review() Step {
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return Step{Kind: Failed, Err: fmt.Errorf("edit: reading the edited file: %w", err)}
	}
	if bytes.Equal(data, s.wrote) && !s.rebased {
		if s.errored {
			return Step{Kind: Cancelled, Message: "Edit cancelled, no valid changes were saved; " + s.kept(), Kept: s.Path}
		}
		s.done()
		return Step{Kind: Cancelled, Message: "Edit cancelled, no changes made."}
	}
	body := stripHeader(data)
	edited, empty, perrs := s.parse(body)
	if empty {
		s.done()
		return Step{Kind: Cancelled, Message: "Edit cancelled, saved file was empty."}
	}
	if len(perrs) > 0 {
		return s.reopen(body, fmt.Sprintf("%s %q was not valid:", s.Kind.Resource.Resource, s.Name), perrs)
	}
	plan, err := s.a.PreviewEdit(s.base, edited)
	var inv *actions.InvalidError
	switch {
	case errors.As(err, &inv):
		return s.reopen(body, fmt.Sprintf("%s %q was not valid:", s.Kind.Resource.Resource, s.Name), fieldLines(inv))
	case err != nil:
		return Step{Kind: Failed, Err: err, Message: s.kept(), Kept: s.Path}
	case plan.Unchanged:
		s.done()
		return Step{Kind: Cancelled, Message: "Edit cancelled, no changes made."}
	}
	s.edited, s.editedBody = edited, body
	return Step{Kind: Confirm, Plan: plan}
}

// Apply writes the reviewed edit through the choke point. ctx carries the
// confirmation of a protected context (actions.WithConfirmation).
func (s *Session) Apply(ctx context.Context) Step {
	if s.edited == nil {
		return Step{Kind: Failed, Err: errors.New("edit: nothing reviewed to apply")}
	}
	res, err := s.a.Edit(ctx, s.base, s.edited)
	switch {
	case err == nil:
		s.done()
		return Step{Kind: Applied, Result: res, Plan: planOf(res)}
	case apierrors.IsConflict(err):
		return s.rebase(ctx, err)
	case apierrors.IsInvalid(err):
		return s.reopen(s.editedBody, fmt.Sprintf("%s %q was not valid (the API server refused it):", s.Kind.Resource.Resource, s.Name), causes(err))
	case errors.Is(err, actions.ErrInvalid):
		var inv *actions.InvalidError
		errors.As(err, &inv)
		return s.reopen(s.editedBody, fmt.Sprintf("%s %q was not valid:", s.Kind.Resource.Resource, s.Name), fieldLines(inv))
	}
	return Step{Kind: Failed, Err: err, Result: res, Message: s.kept(), Kept: s.Path}
}

func planOf(r *actions.Result) *actions.EditPlan {
	if r == nil {
		return nil
	}
	p, _ := r.Plan.(*actions.EditPlan)
	return p
}

// reopen rewrites the file: the header, the errors as comments, body.
func (s *Session) reopen(body []byte, head string, lines []string) Step {
	var b bytes.Buffer
	b.WriteString(Header)
	b.WriteString("# " + head + "\n")
	for _, l := range lines {
		b.WriteString("# * " + oneLine(l) + "\n")
	}
	b.WriteString("#\n")
	b.Write(body)
	if err := s.write(b.Bytes()); err != nil {
		return Step{Kind: Failed, Err: err, Message: s.kept(), Kept: s.Path}
	}
	s.errored, s.rebased = true, false
	return Step{Kind: Reopen, Message: head + " " + strings.Join(lines, "; ")}
}

// rebase answers a conflict: the object is read again and the person's
// changes (the merge patch from the base to the edit) laid over it; the
// file reopens on that, saying what happened and which fields the other
// writer changed too.
func (s *Session) rebase(ctx context.Context, cerr error) Step {
	fresh, err := s.get(ctx)
	if err != nil {
		return Step{Kind: Failed, Err: fmt.Errorf("%w; reading it again: %w", cerr, err), Message: s.kept(), Kept: s.Path}
	}
	mine, err := client.MergeFrom(actions.StripForEdit(s.base)).Data(actions.StripForEdit(s.edited))
	if err != nil {
		return Step{Kind: Failed, Err: err, Message: s.kept(), Kept: s.Path}
	}
	freshJSON, err := json.Marshal(actions.StripForEdit(fresh))
	if err != nil {
		return Step{Kind: Failed, Err: err, Message: s.kept(), Kept: s.Path}
	}
	merged, err := jsonpatch.MergePatch(freshJSON, mine)
	if err != nil {
		return Step{Kind: Failed, Err: fmt.Errorf("edit: laying your changes over the new version: %w", err), Message: s.kept(), Kept: s.Path}
	}
	rebased := s.Kind.New()
	if err := json.Unmarshal(merged, rebased); err != nil {
		return Step{Kind: Failed, Err: fmt.Errorf("edit: laying your changes over the new version: %w", err), Message: s.kept(), Kept: s.Path}
	}
	body, err := Render(rebased)
	if err != nil {
		return Step{Kind: Failed, Err: err, Message: s.kept(), Kept: s.Path}
	}
	lines := []string{fmt.Sprintf("the object changed while you edited it (resourceVersion %s, now %s): your changes are laid over the new version below; nothing was saved yet, save to apply",
		s.base.GetResourceVersion(), fresh.GetResourceVersion())}
	if both := overwritten(s.base, s.edited, fresh); len(both) > 0 {
		lines = append(lines, "the other writer changed what your edit writes over (a list is written whole), check them: "+strings.Join(both, ", "))
	}
	s.base = fresh
	s.edited = nil
	st := s.reopen(body, fmt.Sprintf("%s %q could not be saved: %s", s.Kind.Resource.Resource, s.Name, causes(cerr)[0]), lines)
	s.rebased = st.Kind == Reopen
	return st
}

// overwritten lists the fields the other writer changed from base (to
// fresh) that the edit's merge patch writes over: those the edit changed
// too, and those in a list the edit changed (a merge patch writes a list
// whole).
func overwritten(base, edited, fresh client.Object) []string {
	mine, err1 := actions.ClassifyEdit(base, edited)
	theirs, err2 := actions.ClassifyEdit(base, fresh)
	if err1 != nil || err2 != nil {
		return nil
	}
	var out []string
	for _, t := range theirs {
		if t.Path == "metadata.resourceVersion" || t.Path == "metadata.generation" {
			continue
		}
		for _, m := range mine {
			if unit := listUnit(m.Path); within(t.Path, unit) || within(unit, t.Path) {
				out = append(out, t.Path)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// listIndex is a list item in a field path ("[0]"; map keys are not
// numbers there).
var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// listUnit is what a merge patch writes for a change at path: the
// outermost list path is in, else path itself.
func listUnit(path string) string {
	if loc := listIndex.FindStringIndex(path); loc != nil {
		return path[:loc[0]]
	}
	return path
}

func within(p, q string) bool {
	return p == q || strings.HasPrefix(p, q+".") || strings.HasPrefix(p, q+"[")
}

// parse decodes the edited YAML into the kind's type, strictly: unknown
// and duplicated fields are errors naming them (kubectl edit's default
// --validate=strict). empty: the file holds nothing but comments.
func (s *Session) parse(body []byte) (obj client.Object, empty bool, errs []string) {
	j, err := yaml.YAMLToJSONStrict(body)
	if err != nil {
		return nil, false, []string{"YAML: " + err.Error()}
	}
	if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, true, nil
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, false, []string{"the file is not one object: " + err.Error()}
	}
	if tm.APIVersion != rayv1.GroupVersion.String() || tm.Kind != s.Kind.Kind {
		return nil, false, []string{fmt.Sprintf("apiVersion and kind cannot be changed: want %s %s, got %q %q", rayv1.GroupVersion, s.Kind.Kind, tm.APIVersion, tm.Kind)}
	}
	obj = s.Kind.New()
	strict, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return nil, false, []string{err.Error()}
	}
	for _, e := range strict {
		errs = append(errs, e.Error())
	}
	return obj, false, errs
}

// stripHeader drops the leading comment lines (the header and the errors
// of a reopened file); comments further down are the YAML's own.
func stripHeader(b []byte) []byte {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		if !bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("#")) {
			break
		}
		b = b[len(line):]
	}
	return b
}

// fieldLines are an InvalidError's reason-less lines: one field each.
func fieldLines(inv *actions.InvalidError) []string {
	if inv == nil {
		return nil
	}
	if len(inv.Fields) == 0 {
		return []string{inv.Reason}
	}
	out := make([]string, 0, len(inv.Fields))
	for _, f := range inv.Fields {
		out = append(out, f.Error())
	}
	return out
}

// causes are a 422's causes, "field: message" each (kubectl edit's
// editResults.addError).
func causes(err error) []string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if d := st.Status().Details; d != nil && len(d.Causes) > 0 {
			out := make([]string, 0, len(d.Causes))
			for _, c := range d.Causes {
				out = append(out, fmt.Sprintf("%s: %s", c.Field, c.Message))
			}
			return out
		}
		return []string{st.Status().Message}
	}
	return []string{err.Error()}
}

// oneLine keeps a comment on one line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
