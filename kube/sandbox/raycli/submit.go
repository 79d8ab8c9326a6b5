package raycli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Ray sources read for this file (github.com/ray-project/ray):
//   - python/ray/dashboard/modules/job/cli.py @0718d5b: submit() — the
//     order of the checks, shlex.join of the entrypoint (list2cmdline on
//     Windows only), `submission_id or job_id`, the --job-id warning;
//   - python/ray/_private/utils.py @f0cfdad: parse_resources_json — the
//     value must decode to a JSON object, else cli_logger.error and abort
//     (exit 1) with the example; parse_metadata_json, which cli.py imports
//     from the same module, is taken to check the same way;
//   - python/ray/dashboard/modules/dashboard_sdk.py: parse_runtime_env_args
//     — --runtime-env and --runtime-env-json exclude each other (ValueError),
//     the JSON is json.loads'ed, --working-dir overrides working_dir.

// Submit is a `ray job submit` as cli.py's submit() has it once click has
// parsed it and the JSON options are decoded.
type Submit struct {
	Address      string // --address; "" when not given (HasAddress false)
	HasAddress   bool
	SubmissionID string // --submission-id, else the deprecated --job-id
	NoWait       bool

	EntrypointNumCPUs *float64
	EntrypointNumGPUs *float64
	EntrypointMemory  *int64
	// EntrypointResources, EntrypointLabelSelector and Metadata are the
	// decoded JSON objects of their options (nil when not given); numbers
	// are json.Number, as Python keeps int and float apart.
	EntrypointResources     map[string]any
	EntrypointLabelSelector map[string]any
	Metadata                map[string]any
	Headers                 string // --headers, "" when not given
	Verify                  string

	// RuntimeEnvFile is --runtime-env, a YAML file on the submitter's disk.
	RuntimeEnvFile string
	runtimeEnvJSON *string
	workingDir     *string

	// Entrypoint is what Ray submits: shlex.join of the words after the
	// options (cli.py submit()).
	Entrypoint string
	// Output is what the CLI prints before it connects (the --job-id
	// deprecation warning).
	Output string
}

// Submit checks a parsed `ray job submit` as cli.py submit() does before it
// connects to the cluster: --entrypoint-resources, then
// --entrypoint-label-selector, then --metadata-json must each be a JSON
// object. Its error exits 1 with Ray's words.
func (c *Call) Submit() (*Submit, *Error) {
	if c.Command != "submit" {
		return nil, &Error{Code: 1, Output: "not a ray job submit\n"}
	}
	s := &Submit{Entrypoint: ShlexJoin(c.Args), NoWait: c.Flag("no_wait"), Verify: "True"}
	s.Address, s.HasAddress = c.String("address")
	if v, ok := c.String("verify"); ok {
		s.Verify = v
	}
	if id, ok := c.String("job_id"); ok && id != "" {
		s.Output += "--job-id option is deprecated. Please use --submission-id instead.\n"
		s.SubmissionID = id
	}
	if id, ok := c.String("submission_id"); ok && id != "" {
		s.SubmissionID = id // submission_id or job_id
	}
	if f, ok := c.Values["entrypoint_num_cpus"].(float64); ok {
		s.EntrypointNumCPUs = &f
	}
	if f, ok := c.Values["entrypoint_num_gpus"].(float64); ok {
		s.EntrypointNumGPUs = &f
	}
	if n, ok := c.Values["entrypoint_memory"].(int64); ok {
		s.EntrypointMemory = &n
	}
	s.Headers, _ = c.String("headers")
	var err *Error
	if v, ok := c.String("entrypoint_resources"); ok {
		if s.EntrypointResources, err = jsonObjectOption(v, "entrypoint-resources", `{"CustomResource3": 1, "CustomResource2": 2}`); err != nil {
			return nil, err
		}
	}
	if v, ok := c.String("entrypoint_label_selector"); ok {
		if s.EntrypointLabelSelector, err = jsonObjectOption(v, "entrypoint-label-selector", `{"CustomResource3": 1, "CustomResource2": 2}`); err != nil {
			return nil, err
		}
	}
	if v, ok := c.String("metadata_json"); ok {
		if s.Metadata, err = jsonObjectOption(v, "metadata-json", `{"key1": "value1", "key2": "value2"}`); err != nil {
			return nil, err
		}
	}
	s.RuntimeEnvFile, _ = c.String("runtime_env")
	if v, ok := c.String("runtime_env_json"); ok {
		s.runtimeEnvJSON = &v
	}
	if v, ok := c.String("working_dir"); ok {
		s.workingDir = &v
	}
	return s, nil
}

// jsonObjectOption is utils.py parse_resources_json: a JSON object, or
// cli_logger.error + cli_logger.abort (exit 1).
func jsonObjectOption(v, arg, example string) (map[string]any, *Error) {
	m, ok := decodeJSON(v).(map[string]any)
	if !ok {
		return nil, &Error{Code: 1, Output: fmt.Sprintf("`%s` is not a valid JSON string.\nValid values look like this: `%s='%s'`\n", arg, arg, example)}
	}
	return m, nil
}

// decodeJSON is json.loads, nil for anything it refuses; numbers stay
// json.Number.
func decodeJSON(s string) any {
	v, err := loads(s)
	if err != nil {
		return nil
	}
	return v
}

func loads(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errExtraData{off: d.InputOffset()}
	}
	return v, nil
}

type errExtraData struct{ off int64 }

func (e errExtraData) Error() string { return "extra data" }

// ErrUnsupported marks what the sandbox's stand-in cannot do as a real
// submitter would (read a file on the submitter's disk).
var ErrUnsupported = errors.New("the sandbox's stand-in submitter cannot do this")

// RuntimeEnv is the runtime env `ray job submit` sends:
// dashboard_sdk.py parse_runtime_env_args (--runtime-env and
// --runtime-env-json exclude each other; the JSON is json.loads'ed;
// --working-dir overrides working_dir), then sdk.py submit_job's
// `runtime_env or {}` and its .get on it. readFile reads --runtime-env's
// file on the submitter's disk; an error it returns wrapping
// ErrUnsupported is passed on as is.
func (s *Submit) RuntimeEnv(readFile func(path string) ([]byte, error)) (map[string]any, error) {
	var env any
	switch {
	case s.RuntimeEnvFile != "" && s.runtimeEnvJSON != nil:
		return nil, pyException("submit", "ValueError: Only one of --runtime_env and --runtime-env-json can be provided.")
	case s.RuntimeEnvFile != "":
		b, err := readFile(s.RuntimeEnvFile)
		if err != nil {
			if errors.Is(err, ErrUnsupported) {
				return nil, err
			}
			return nil, pyException("submit", fmt.Sprintf("FileNotFoundError: [Errno 2] No such file or directory: %s", pyRepr(s.RuntimeEnvFile)))
		}
		js, err := yaml.YAMLToJSON(b)
		if err != nil {
			return nil, pyException("submit", "yaml.scanner.ScannerError: "+err.Error())
		}
		if env, err = loads(string(js)); err != nil {
			return nil, pyException("submit", "yaml.scanner.ScannerError: "+err.Error())
		}
	case s.runtimeEnvJSON != nil:
		var err error
		if env, err = loads(*s.runtimeEnvJSON); err != nil {
			return nil, pyException("submit", "json.decoder.JSONDecodeError: "+pyJSONError(*s.runtimeEnvJSON, err))
		}
	}
	if s.workingDir != nil {
		m, ok := env.(map[string]any)
		if env == nil {
			m, ok = map[string]any{}, true
		}
		if !ok {
			return nil, pyException("submit", fmt.Sprintf("TypeError: %s object does not support item assignment", pyRepr(pyType(env))))
		}
		m["working_dir"] = *s.workingDir
		env = m
	}
	if !pyTruthy(env) {
		return map[string]any{}, nil
	}
	m, ok := env.(map[string]any)
	if !ok {
		return nil, pyException("submit", fmt.Sprintf("AttributeError: %s object has no attribute 'get'", pyRepr(pyType(env))))
	}
	return m, nil
}

// pyException is an uncaught Python exception: its traceback's head and
// last line, exit status 1.
func pyException(fn, last string) *Error {
	return &Error{Code: 1, Output: "Traceback (most recent call last):\n  File \"ray/dashboard/modules/job/cli.py\", in " + fn + "\n" + last + "\n"}
}

// PyType is the Python type name of a decoded JSON value.
func PyType(v any) string { return pyType(v) }

func pyType(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "float"
		}
		return "int"
	case float64:
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, _ := x.Float64()
		return f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

var invalidChar = regexp.MustCompile(`invalid character '.*' (.*)$`)

// pyJSONError words a JSON syntax error as Python's json module does
// ("Expecting value: line 1 column 1 (char 0)"), from Go's decoder's error
// and offset.
func pyJSONError(doc string, err error) string {
	pos := len(doc)
	msg := "Expecting value"
	var se *json.SyntaxError
	var extra errExtraData
	switch {
	case errors.As(err, &extra):
		pos, msg = int(extra.off), "Extra data"
		for pos < len(doc) && strings.ContainsRune(" \t\r\n", rune(doc[pos])) {
			pos++
		}
	case errors.As(err, &se):
		pos = int(se.Offset) - 1
		if m := invalidChar.FindStringSubmatch(se.Error()); m != nil {
			switch {
			case strings.Contains(m[1], "beginning of object key"):
				msg = "Expecting property name enclosed in double quotes"
			case strings.HasSuffix(m[1], "after object key"):
				msg = "Expecting ':' delimiter"
			case strings.Contains(m[1], "after object key:value pair"), strings.Contains(m[1], "after array element"):
				msg = "Expecting ',' delimiter"
			case strings.Contains(m[1], "in string literal"):
				msg = "Invalid control character at"
			case strings.Contains(m[1], "after top-level value"):
				msg = "Extra data"
			}
		} else if strings.Contains(se.Error(), "unexpected end") {
			pos = len(doc)
		}
	}
	if pos < 0 {
		pos = 0
	}
	if pos > len(doc) {
		pos = len(doc)
	}
	line := strings.Count(doc[:pos], "\n") + 1
	col := pos - strings.LastIndex(doc[:pos], "\n")
	return fmt.Sprintf("%s: line %d column %d (char %d)", msg, line, col, pos)
}

// ShlexJoin is Python's shlex.join: each word as shlex.quote leaves it
// (unchanged when it holds only [A-Za-z0-9_@%+=:,./-], else in single
// quotes with each ' as '"'"'), joined by spaces.
func ShlexJoin(words []string) string {
	var b bytes.Buffer
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shlexQuote(w))
	}
	return b.String()
}

func shlexQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_@%+=:,./-", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
