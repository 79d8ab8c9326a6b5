package headsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Running a submitter container's command line. kwok runs no containers,
// so the stand-in runs the container's command itself: a shell (bash or sh
// with -c, as KubeRay's and raydar's submitters are) is interpreted by
// mvdan.cc/sh's interpreter, which does what bash does with the words,
// quotes, expansions, redirections, `if`, `until`, `;`, `&&` and -e; the
// commands it runs are the stand-in's, never the host's:
//
//   - ray job submit|status|logs|stop|delete|list: Ray's CLI (raycmd.go),
//     talking to the simulated heads the address leads to (address.go);
//   - python -c "<urllib GCS health check>" (the wait loop KubeRay's
//     submitters start with): succeeds when the URL's dashboard answers
//     success on /api/gcs_healthz;
//   - sleep N: waits, at most the Sim's poll interval (time the stand-in
//     would only spend waiting is compressed);
//   - the shell's builtins (echo, true, exit, export, test, …).
//
// Anything else (another program, a file on the pod's disk) is refused by
// name: the run stops with an unsupported error, the pod ends Failed and
// the log says what the stand-in could not do.

// errUnsupported is what the stand-in cannot do as a real container would.
type errUnsupported struct{ what string }

func (e errUnsupported) Error() string {
	return "raydar sandbox: the stand-in submitter cannot " + e.what
}

func unsupportedf(format string, args ...any) error {
	return errUnsupported{what: fmt.Sprintf(format, args...)}
}

// podLog is a submitter container's output, bounded to its last maxPodLog
// bytes.
type podLog struct {
	mu  sync.Mutex
	buf []byte
}

const maxPodLog = 256 << 10

func (l *podLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - maxPodLog; over > 0 {
		l.buf = append([]byte(nil), l.buf[over:]...)
	}
	return len(p), nil
}

func (l *podLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

// tail is the log's last n lines.
func (l *podLog) tail(n int) string {
	lines := strings.Split(strings.TrimRight(l.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// run is one submitter container's run.
type run struct {
	s     *Sim
	where place
	out   *podLog
	logf  func(format string, args ...any) // one line to the Sim's log
	once  sync.Map                         // one-time notes
}

// noteOnce logs a line the first time key is seen.
func (r *run) noteOnce(key, format string, args ...any) {
	if _, seen := r.once.LoadOrStore(key, true); !seen {
		r.logf(format, args...)
	}
}

// exec runs argv (the container's command and args) with env and returns
// its exit status; err is set when the stand-in could not run it
// (errUnsupported) or the run was cancelled.
func (r *run) exec(ctx context.Context, argv []string, env []string) (int, error) {
	if len(argv) == 0 {
		return 0, unsupportedf("run a container without a command (its image's entrypoint is unknown here)")
	}
	switch path.Base(argv[0]) {
	case "bash", "sh":
		return r.shell(ctx, argv, env)
	case "ray":
		err := r.ray(interpFreeCtx(ctx, env, r.out), argv)
		return exitOf(err)
	}
	return 0, unsupportedf("run %q (it runs bash or sh -c, and ray)", argv[0])
}

// interpFreeCtx gives a handler called outside the interpreter (a container
// whose command is `ray …` itself) the HandlerContext it reads.
func interpFreeCtx(ctx context.Context, env []string, out io.Writer) context.Context {
	return context.WithValue(ctx, directCallKey{}, directCall{env: expand.ListEnviron(env...), out: out})
}

type directCallKey struct{}

type directCall struct {
	env expand.Environ
	out io.Writer
}

// stdio returns a handler's environment and output, from the interpreter
// or from a direct call.
func stdio(ctx context.Context) (env expand.Environ, stdout, stderr io.Writer) {
	if d, ok := ctx.Value(directCallKey{}).(directCall); ok {
		return d.env, d.out, d.out
	}
	hc := interp.HandlerCtx(ctx)
	return hc.Env, hc.Stdout, hc.Stderr
}

// exitOf splits a handler's or the interpreter's result into an exit
// status and a stand-in error.
func exitOf(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	if st, ok := interp.IsExitStatus(err); ok {
		return int(st), nil
	}
	return 0, err
}

// shell runs `bash|sh [-options] -c SCRIPT [NAME [ARGS…]]`.
func (r *run) shell(ctx context.Context, argv []string, env []string) (int, error) {
	var (
		params []string
		haveC  bool
		rest   []string
	)
	args := argv[1:]
	for len(args) > 0 {
		a := args[0]
		if a == "--" || a == "-" {
			args = args[1:]
			break
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") || len(a) < 2 {
			break
		}
		args = args[1:]
		for _, ch := range a[1:] {
			switch ch {
			case 'c':
				haveC = true
			case 'l':
				// A login shell reads the image's profile: nothing here.
			case 'e', 'u', 'x', 'f', 'n', 'a':
				params = append(params, a[:1]+string(ch))
			case 'o':
				if len(args) == 0 {
					return 2, nil
				}
				params = append(params, a[:1]+"o", args[0])
				args = args[1:]
			default:
				return 0, unsupportedf("run %s with option -%c", argv[0], ch)
			}
		}
	}
	rest = args
	if !haveC || len(rest) == 0 {
		return 0, unsupportedf("run %s without -c SCRIPT (a script file on the pod's disk)", argv[0])
	}
	script := rest[0]
	lang := syntax.LangBash
	if path.Base(argv[0]) == "sh" {
		lang = syntax.LangPOSIX
	}
	file, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(script), "")
	if err != nil {
		fmt.Fprintf(r.out, "%s: -c: %v\n", argv[0], err)
		return 2, nil // bash's status for a syntax error
	}
	if len(rest) > 1 {
		params = append(params, "--")
		params = append(params, rest[2:]...) // rest[1] is $0
	}
	runner, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		interp.StdIO(nil, r.out, r.out),
		interp.Params(params...),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return r.command }),
		interp.OpenHandler(openNothing),
		interp.StatHandler(func(context.Context, string, bool) (fs.FileInfo, error) { return nil, fs.ErrNotExist }),
		interp.ReadDirHandler2(func(context.Context, string) ([]fs.DirEntry, error) { return nil, nil }),
	)
	if err != nil {
		return 0, err
	}
	err = runner.Run(ctx, file)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return exitOf(err)
}

// openNothing is the pod's disk as the stand-in has it: /dev/null only.
func openNothing(_ context.Context, name string, _ int, _ os.FileMode) (io.ReadWriteCloser, error) {
	if name == os.DevNull {
		return devNull{}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("the sandbox's stand-in submitter has no files")}
}

type devNull struct{}

func (devNull) Read([]byte) (int, error)    { return 0, io.EOF }
func (devNull) Write(p []byte) (int, error) { return len(p), nil }
func (devNull) Close() error                { return nil }

// command runs one simple command the shell does not implement itself.
func (r *run) command(ctx context.Context, args []string) error {
	switch path.Base(args[0]) {
	case "ray":
		return r.ray(ctx, args)
	case "python", "python3":
		return r.python(ctx, args)
	case "sleep":
		return r.sleep(ctx, args)
	}
	return unsupportedf("run %q (it runs ray job, python's GCS health check and sleep)", args[0])
}

func (r *run) sleep(ctx context.Context, args []string) error {
	_, _, stderr := stdio(ctx)
	if len(args) != 2 {
		fmt.Fprintln(stderr, "sleep: missing operand")
		return interp.NewExitStatus(1)
	}
	secs, err := strconv.ParseFloat(strings.TrimSuffix(args[1], "s"), 64)
	if err != nil || secs < 0 {
		fmt.Fprintf(stderr, "sleep: invalid time interval '%s'\n", args[1])
		return interp.NewExitStatus(1)
	}
	d := min(time.Duration(secs*float64(time.Second)), r.s.opts.PollInterval)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// urlopenRE finds the URL of BasePythonHealthCommand's urllib call.
var urlopenRE = regexp.MustCompile(`urlopen\(\s*'([^']+)'`)

// python runs KubeRay's GCS health check (utils/constant.go
// BasePythonHealthCommand: urlopen(URL), exit 0 if b'success' is in the
// body): it GETs the URL from where the submitter runs.
func (r *run) python(ctx context.Context, args []string) error {
	_, _, stderr := stdio(ctx)
	if len(args) != 3 || args[1] != "-c" || !strings.Contains(args[2], "success") {
		return unsupportedf("run %s (only KubeRay's python -c GCS health check)", strings.Join(args, " "))
	}
	m := urlopenRE.FindStringSubmatch(args[2])
	if m == nil {
		return unsupportedf("run python -c %q (only KubeRay's GCS health check)", args[2])
	}
	host, port, p, err := splitURL(m[1])
	if err != nil {
		fmt.Fprintf(stderr, "urllib.error.URLError: <urlopen error %v>\n", err)
		return interp.NewExitStatus(1)
	}
	ep, err := r.s.resolve(ctx, r.where, host, port)
	if err == nil {
		var body string
		body, err = get(ctx, ep.url+p)
		if err == nil && !strings.Contains(body, "success") {
			return interp.NewExitStatus(1)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintln(stderr, "urllib.error.URLError: <urlopen error [Errno 111] Connection refused>")
		return interp.NewExitStatus(1)
	}
	return nil
}
