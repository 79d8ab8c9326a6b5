package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
)

// raydar get of several contexts at once (--context a,b, --all-contexts:
// kube.Flags.ContextNames says which, in the order given). Each context is
// listed on its own, all at once, each within getContextTimeout, so that a
// slow or unreachable one delays the answer by at most that and hides no
// other's rows. As kubectl does with partial results (`kubectl get` of
// several resources where one fails: it prints what it got on stdout, each
// error on stderr, and exits 1), the rows of the contexts that answered are
// printed, each failure is a "context NAME: <error>" line on stderr, and
// the command fails.

// getContextTimeout bounds the listing of one context.
const getContextTimeout = 30 * time.Second

// contextResult is what get found in one context.
type contextResult struct {
	context string
	g       *getter // nil when the context could not be reached at all
	objs    []client.Object
	err     error
}

// fetchContexts runs fetch for each of the contexts at once, each under its
// own timeout, and returns their results in the contexts' order. A fetch
// that outlives its timeout is reported as such, naming it.
func fetchContexts(ctx context.Context, contexts []string, timeout time.Duration,
	fetch func(ctx context.Context, i int) (*getter, []client.Object, error)) []contextResult {
	out := make([]contextResult, len(contexts))
	var wg sync.WaitGroup
	for i, name := range contexts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			g, objs, err := fetch(cctx, i)
			if err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				err = fmt.Errorf("no answer within %s: %w", timeout, err)
			}
			out[i] = contextResult{context: name, g: g, objs: objs, err: err}
		}()
	}
	wg.Wait()
	return out
}

// runFleetGet is raydar get over several contexts.
func runFleetGet(cmd *cobra.Command, targets []*kube.Target, res, name, output string) error {
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.ContextName
	}
	now := time.Now()
	results := fetchContexts(cmd.Context(), names, getContextTimeout, func(ctx context.Context, i int) (*getter, []client.Object, error) {
		gt, err := newGetter(targets[i], name, now)
		if err != nil {
			return nil, nil, err
		}
		objs, err := gt.fetch(ctx, res)
		return gt, objs, err
	})
	var err error
	if output == outputTable {
		err = writeFleetTable(cmd.OutOrStdout(), cmd.ErrOrStderr(), res, results)
	} else {
		err = writeFleetObjects(cmd.OutOrStdout(), output, results)
	}
	if err != nil {
		return err
	}
	return fleetErrors(cmd.ErrOrStderr(), results)
}

// fleetErrors prints each context's failure as "context NAME: <error>" and
// returns an error naming them, or nil when every context answered.
func fleetErrors(w io.Writer, results []contextResult) error {
	var failed []string
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(w, "context %s: %v\n", r.context, r.err)
			failed = append(failed, r.context)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d contexts could not be listed: %s", len(failed), len(results), strings.Join(failed, ", "))
}

// writeFleetTable prints one table of every context's rows, CONTEXT first,
// contexts in their order and each context's rows in get's order; with no
// row at all it says, on stderr, where nothing was found.
func writeFleetTable(out, errOut io.Writer, res string, results []contextResult) error {
	var (
		header []string
		rows   [][]string
		empty  []string
	)
	for _, r := range results {
		if r.err != nil {
			continue
		}
		h, rs := r.g.tableOf(res, r.objs)
		header = h
		for _, row := range rs {
			rows = append(rows, append([]string{r.context}, row...))
		}
		empty = append(empty, fmt.Sprintf("%s of context %s", r.g.where(), r.context))
	}
	if header == nil {
		return nil // no context answered: fleetErrors says why
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintf(errOut, "No %s found in %s.\n", res, strings.Join(empty, ", "))
		return err
	}
	t := newTable(out, append([]string{"CONTEXT"}, header...)...)
	for _, r := range rows {
		t.row(r...)
	}
	return t.flush()
}

// contextItem is one object of -o json|yaml over several contexts: the
// object as a single-context get prints it, and the context it is in.
type contextItem struct {
	Context string `json:"context"`
	Object  any    `json:"object"` // the object as get prints it (getter.typed)
}

// writeFleetObjects prints every context's objects as {"items": [{context,
// object}, …]}, in the table's order. The objects are not marked with
// their context (an
// annotation or field naming the context would be applied back by a
// `kubectl apply` of the output), and the list is not a v1 List, whose
// items are objects.
func writeFleetObjects(w io.Writer, format string, results []contextResult) error {
	items := []contextItem{}
	for _, r := range results {
		if r.err != nil {
			continue
		}
		objs, err := r.g.typed(r.objs)
		if err != nil {
			return err
		}
		for _, o := range objs {
			items = append(items, contextItem{Context: r.context, Object: o})
		}
	}
	return writeData(w, format, struct {
		Items []contextItem `json:"items"`
	}{items})
}
