package raycli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const submitUsage = "Usage: ray job submit [OPTIONS] ENTRYPOINT...\nTry 'ray job submit --help' for help.\n\n"

// TestParseRefusesAsClickDoes: each output was taken from click 8.4.0
// running a copy of cli.py's option declarations of `ray job submit`,
// `status` and `logs` (click's words and exit status 2).
func TestParseRefusesAsClickDoes(t *testing.T) {
	for _, tc := range []struct {
		args string
		want string
	}{
		{"job submit --entrypoint-num-cpu 1 -- echo", submitUsage +
			"Error: No such option '--entrypoint-num-cpu'. (Did you mean one of: '--entrypoint-memory', '--entrypoint-num-cpus', '--entrypoint-num-gpus'?)\n"},
		{"job submit --entrypoint-num-cpu=1 -- e", submitUsage +
			"Error: No such option '--entrypoint-num-cpu'. (Did you mean one of: '--entrypoint-memory', '--entrypoint-num-cpus', '--entrypoint-num-gpus'?)\n"},
		{"job submit --no-wiat -- x", submitUsage + "Error: No such option '--no-wiat'. Did you mean '--no-wait'?\n"},
		{"job submit --runtime-env-jsn {} -- e", submitUsage +
			"Error: No such option '--runtime-env-jsn'. (Did you mean one of: '--runtime-env', '--runtime-env-json'?)\n"},
		{"job submit --foo -- x", submitUsage + "Error: No such option '--foo'.\n"},
		{"job submit -x -- e", submitUsage + "Error: No such option '-x'.\n"},
		{"job submit -vvx -- e", submitUsage + "Error: No such option '-x'.\n"},
		{"job submit --help --foo", submitUsage + "Error: No such option '--foo'.\n"},
		{"job submit --address", "Error: Option '--address' requires an argument.\n"},
		{"job submit --no-wait=1 -- x", "Error: Option '--no-wait' does not take a value.\n"},
		{"job submit --entrypoint-num-cpus abc -- x", submitUsage + "Error: Invalid value for '--entrypoint-num-cpus': 'abc' is not a valid float.\n"},
		{"job submit --entrypoint-memory 1.5 -- x", submitUsage + "Error: Invalid value for '--entrypoint-memory': '1.5' is not a valid integer.\n"},
		{"job submit --log-style x -- e", submitUsage + "Error: Invalid value for '--log-style': 'x' is not one of 'auto', 'record', 'pretty'.\n"},
		{"job submit --address x", submitUsage + "Error: Missing argument 'ENTRYPOINT...'.\n"},
		{"job status", "Usage: ray job status [OPTIONS] JOB_ID\nTry 'ray job status --help' for help.\n\nError: Missing argument 'JOB_ID'.\n"},
		{"job status a b", "Usage: ray job status [OPTIONS] JOB_ID\nTry 'ray job status --help' for help.\n\nError: Got unexpected extra argument (b)\n"},
		{"job foo", "Usage: ray job [OPTIONS] COMMAND [ARGS]...\nTry 'ray job --help' for help.\n\nError: No such command 'foo'.\n"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			call, err := Parse(strings.Fields(tc.args))
			if err == nil {
				t.Fatalf("parsed %+v, want click's refusal", call)
			}
			if err.Code != 2 || err.Output != tc.want {
				t.Fatalf("exit %d, output\n%s\nwant exit 2, output\n%s", err.Code, err.Output, tc.want)
			}
		})
	}
}

// TestParseReadsAsClickDoes: the values click 8.4.0 gives the same words.
func TestParseReadsAsClickDoes(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		values map[string]any
		words  []string
		help   bool
	}{
		{args: []string{"job", "submit", "echo", "--no-wait", "hi"}, // interspersed
			values: map[string]any{"no_wait": true}, words: []string{"echo", "hi"}},
		{args: strings.Fields("job submit --address=http://a:1 --submission-id=id -vv --entrypoint-num-gpus 0.500000 -- python x.py --foo"),
			values: map[string]any{"address": "http://a:1", "submission_id": "id", "verbose": 2, "entrypoint_num_gpus": 0.5},
			words:  []string{"python", "x.py", "--foo"}},
		{args: strings.Fields("job submit --address -- --no-wait e"), // an option's value is the next word, whatever it is
			values: map[string]any{"address": "--", "no_wait": true}, words: []string{"e"}},
		{args: strings.Fields("job submit -- --address"), values: map[string]any{}, words: []string{"--address"}},
		{args: strings.Fields("job logs -f id"), values: map[string]any{"follow": true}, words: []string{"id"}},
		{args: strings.Fields("job submit --entrypoint-memory 1_000 --entrypoint-num-cpus 1.000000 -- e"),
			values: map[string]any{"entrypoint_memory": int64(1000), "entrypoint_num_cpus": 1.0}, words: []string{"e"}},
		{args: strings.Fields("job submit --entrypoint-num-cpus abc --help"), values: map[string]any{}, help: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			call, err := Parse(tc.args)
			if err != nil {
				t.Fatal(err.Output)
			}
			if call.Help != tc.help {
				t.Fatalf("help %v", call.Help)
			}
			if tc.help {
				return
			}
			if !reflect.DeepEqual(call.Values, tc.values) || !reflect.DeepEqual(call.Args, tc.words) {
				t.Fatalf("values %v words %q, want %v %q", call.Values, call.Args, tc.values, tc.words)
			}
		})
	}
}

func TestParseLeavesOtherRayCommandsToTheCaller(t *testing.T) {
	if _, err := Parse([]string{"status"}); err == nil || err.Code != 0 {
		t.Fatalf("%v", err)
	}
}

func mustSubmit(t *testing.T, args ...string) *Submit {
	t.Helper()
	call, perr := Parse(append([]string{"job", "submit"}, args...))
	if perr != nil {
		t.Fatal(perr.Output)
	}
	s, perr := call.Submit()
	if perr != nil {
		t.Fatal(perr.Output)
	}
	return s
}

func submitError(t *testing.T, args ...string) *Error {
	t.Helper()
	call, perr := Parse(append([]string{"job", "submit"}, args...))
	if perr != nil {
		t.Fatal(perr.Output)
	}
	s, perr := call.Submit()
	if perr == nil {
		t.Fatalf("accepted %+v", s)
	}
	return perr
}

// TestSubmitChecksJSONOptions: cli.py submit() checks the JSON of
// --entrypoint-resources, --entrypoint-label-selector and --metadata-json
// before connecting (utils.py parse_resources_json), exit 1.
func TestSubmitChecksJSONOptions(t *testing.T) {
	e := submitError(t, "--entrypoint-resources", `{"TPU": 1`, "--", "e")
	if e.Code != 1 || e.Output != "`entrypoint-resources` is not a valid JSON string.\n"+
		"Valid values look like this: `entrypoint-resources='{\"CustomResource3\": 1, \"CustomResource2\": 2}'`\n" {
		t.Fatalf("%d %q", e.Code, e.Output)
	}
	if e := submitError(t, "--metadata-json", `["a"]`, "--", "e"); e.Code != 1 || !strings.HasPrefix(e.Output, "`metadata-json` is not a valid JSON string.") {
		t.Fatalf("%d %q", e.Code, e.Output)
	}
	if e := submitError(t, "--entrypoint-label-selector", ``, "--", "e"); e.Code != 1 || !strings.Contains(e.Output, "`entrypoint-label-selector`") {
		t.Fatalf("%d %q", e.Code, e.Output)
	}
	s := mustSubmit(t, "--job-id", "old", "--metadata-json", `{"k":"v","n":1}`, "--entrypoint-resources", `{"TPU": 1.5}`, "--", "e")
	if s.SubmissionID != "old" || !strings.Contains(s.Output, "--job-id option is deprecated") ||
		s.Metadata["k"] != "v" || s.Metadata["n"] != json.Number("1") || s.EntrypointResources["TPU"] != json.Number("1.5") {
		t.Fatalf("%+v", s)
	}
	if s := mustSubmit(t, "--job-id", "old", "--submission-id", "new", "--", "e"); s.SubmissionID != "new" {
		t.Fatalf("submission_id or job_id: %q", s.SubmissionID)
	}
}

func noFiles(string) ([]byte, error) { return nil, ErrUnsupported }

// TestRuntimeEnv: dashboard_sdk.py parse_runtime_env_args and sdk.py
// submit_job's use of the result.
func TestRuntimeEnv(t *testing.T) {
	s := mustSubmit(t, "--runtime-env", "env.yaml", "--runtime-env-json", "{}", "--", "e")
	if _, err := s.RuntimeEnv(noFiles); err == nil || err.(*Error).Code != 1 ||
		!strings.HasSuffix(err.(*Error).Output, "ValueError: Only one of --runtime_env and --runtime-env-json can be provided.\n") {
		t.Fatalf("%v", err)
	}
	s = mustSubmit(t, "--runtime-env", "env.yaml", "--", "e")
	if _, err := s.RuntimeEnv(noFiles); err != ErrUnsupported {
		t.Fatalf("%v", err)
	}
	s = mustSubmit(t, "--runtime-env", "env.yaml", "--", "e")
	if env, err := s.RuntimeEnv(func(string) ([]byte, error) { return []byte("env_vars:\n  A: b\n"), nil }); err != nil ||
		env["env_vars"].(map[string]any)["A"] != "b" {
		t.Fatalf("%v %v", env, err)
	}
	s = mustSubmit(t, "--runtime-env-json", `{"env_vars": {"A": "x"}, "working_dir": "/a"}`, "--working-dir", "s3://b/c.zip", "--", "e")
	if env, err := s.RuntimeEnv(noFiles); err != nil || env["working_dir"] != "s3://b/c.zip" || env["env_vars"].(map[string]any)["A"] != "x" {
		t.Fatalf("%v %v", env, err)
	}
	s = mustSubmit(t, "--runtime-env-json", `{"env_vars": {"A": "x"},}`, "--", "e")
	if _, err := s.RuntimeEnv(noFiles); err == nil ||
		!strings.HasSuffix(err.(*Error).Output, "json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 25 (char 24)\n") {
		t.Fatalf("%v", err)
	}
	s = mustSubmit(t, "--runtime-env-json", `null`, "--", "e")
	if env, err := s.RuntimeEnv(noFiles); err != nil || len(env) != 0 {
		t.Fatalf("null is `runtime_env or {}`: %v %v", env, err)
	}
	s = mustSubmit(t, "--runtime-env-json", `["a"]`, "--", "e")
	if _, err := s.RuntimeEnv(noFiles); err == nil || !strings.HasSuffix(err.(*Error).Output, "AttributeError: 'list' object has no attribute 'get'\n") {
		t.Fatalf("%v", err)
	}
}

// TestPyJSONError: the words and positions are Python's json module's
// (checked with CPython 3.11's json.loads).
func TestPyJSONError(t *testing.T) {
	for doc, want := range map[string]string{
		``:              "Expecting value: line 1 column 1 (char 0)",
		`{"a": }`:       "Expecting value: line 1 column 7 (char 6)",
		`{"a" 1}`:       "Expecting ':' delimiter: line 1 column 6 (char 5)",
		`{"a": 1 "b"}`:  "Expecting ',' delimiter: line 1 column 9 (char 8)",
		`{a: 1}`:        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
		`{} x`:          "Extra data: line 1 column 4 (char 3)",
		"{\n \"a\":\n}": "Expecting value: line 3 column 1 (char 8)",
	} {
		_, err := loads(doc)
		if err == nil {
			t.Fatalf("%q decoded", doc)
		}
		if got := pyJSONError(doc, err); got != want {
			t.Errorf("%q: %s, want %s", doc, got, want)
		}
	}
}

// TestShlexJoin: Python's shlex.join (checked with CPython 3.11).
func TestShlexJoin(t *testing.T) {
	got := ShlexJoin([]string{"echo", "no", "quote", "single quote", "double quote", "it's", ""})
	if want := `echo no quote 'single quote' 'double quote' 'it'"'"'s' ''`; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	if got := ShlexJoin([]string{"python", "-c", "import ray; ray.init()", "a=b,c:d/e@f%g+h"}); got != `python -c 'import ray; ray.init()' a=b,c:d/e@f%g+h` {
		t.Fatal(got)
	}
}
