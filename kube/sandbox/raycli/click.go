package raycli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Error is how a Ray CLI invocation ends when it fails: what it prints (on
// stderr) and its exit status.
type Error struct {
	Code   int    // 2 for click's usage errors, 1 for Ray's own
	Output string // ends with a newline
}

// Error is the output, without its trailing newline.
func (e *Error) Error() string { return strings.TrimSpace(e.Output) }

// kind is how click converts an option's value.
type kind int

const (
	kString kind = iota
	kFloat
	kInt
	kFlag  // is_flag: takes no value
	kCount // count=True (-v -vv): takes no value
	kChoice
	kBoolOrString // cli_utils.py BoolOrStringParam (--verify)
)

// param is one click option.
type param struct {
	names   []string // as declared: "--address"; "-v", "--verbose"
	dest    string
	kind    kind
	choices []string
}

func (p param) takesValue() bool { return p.kind != kFlag && p.kind != kCount }

// command is one `ray job` subcommand: its options in declaration order
// and its one positional parameter.
type command struct {
	name   string
	params []param
	arg    string // metavar: "ENTRYPOINT..." (nargs=-1, required) or "JOB_ID" (nargs=1); "" for none
}

var addressParam = param{names: []string{"--address"}, dest: "address"}

// commonParams are cli_utils.py add_common_job_options (--verify,
// --headers) and cli_logger.py CLICK_LOGGING_OPTIONS (--log-style,
// --log-color, -v/--verbose), which every `ray job` command has.
var commonParams = []param{
	{names: []string{"--verify"}, dest: "verify", kind: kBoolOrString},
	{names: []string{"--headers"}, dest: "headers"},
	{names: []string{"--log-style"}, dest: "log_style", kind: kChoice, choices: []string{"auto", "record", "pretty"}},
	{names: []string{"--log-color"}, dest: "log_color", kind: kChoice, choices: []string{"auto", "false", "true"}},
	{names: []string{"-v", "--verbose"}, dest: "verbose", kind: kCount},
}

func withCommon(ps ...param) []param { return append(ps, commonParams...) }

// commands are the subcommands of cli.py's job_cli_group with their click
// options (cli.py: submit, status, stop, delete, logs, list).
var commands = map[string]command{
	"submit": {name: "submit", arg: "ENTRYPOINT...", params: withCommon(
		addressParam,
		param{names: []string{"--job-id"}, dest: "job_id"},
		param{names: []string{"--submission-id"}, dest: "submission_id"},
		param{names: []string{"--runtime-env"}, dest: "runtime_env"},
		param{names: []string{"--runtime-env-json"}, dest: "runtime_env_json"},
		param{names: []string{"--working-dir"}, dest: "working_dir"},
		param{names: []string{"--metadata-json"}, dest: "metadata_json"},
		param{names: []string{"--entrypoint-num-cpus"}, dest: "entrypoint_num_cpus", kind: kFloat},
		param{names: []string{"--entrypoint-num-gpus"}, dest: "entrypoint_num_gpus", kind: kFloat},
		param{names: []string{"--entrypoint-memory"}, dest: "entrypoint_memory", kind: kInt},
		param{names: []string{"--entrypoint-resources"}, dest: "entrypoint_resources"},
		param{names: []string{"--entrypoint-label-selector"}, dest: "entrypoint_label_selector"},
		param{names: []string{"--no-wait"}, dest: "no_wait", kind: kFlag},
	)},
	"status": {name: "status", arg: "JOB_ID", params: withCommon(addressParam)},
	"stop": {name: "stop", arg: "JOB_ID", params: withCommon(addressParam,
		param{names: []string{"--no-wait"}, dest: "no_wait", kind: kFlag})},
	"delete": {name: "delete", arg: "JOB_ID", params: withCommon(addressParam)},
	"logs": {name: "logs", arg: "JOB_ID", params: withCommon(addressParam,
		param{names: []string{"-f", "--follow"}, dest: "follow", kind: kFlag})},
	"list": {name: "list", params: withCommon(addressParam)},
}

// helpParam is the --help option click adds to every command.
var helpParam = param{names: []string{"--help"}, dest: "help", kind: kFlag}

// Call is one parsed `ray job <command>` invocation.
type Call struct {
	Command string         // submit, status, stop, delete, logs, list
	Values  map[string]any // by option dest: string, float64, int64, bool (flags), int (counts)
	Args    []string       // the positional words (the entrypoint's, or the job ID)
	Help    bool           // --help: click prints the help and exits 0
}

// String returns an option's value ("" and false when not given).
func (c *Call) String(dest string) (string, bool) {
	v, ok := c.Values[dest].(string)
	return v, ok
}

// Flag reports whether a flag was given.
func (c *Call) Flag(dest string) bool { v, _ := c.Values[dest].(bool); return v }

// Usage is click's usage line of the command.
func (c *Call) Usage() string { return usageOf(commands[c.Command]) }

func usageOf(cmd command) string {
	u := "Usage: ray job " + cmd.name + " [OPTIONS]"
	if cmd.arg != "" {
		u += " " + cmd.arg
	}
	return u
}

// usageError is click's UsageError.show: the usage, the hint, and the
// message, exit status 2 (click/exceptions.py).
func usageError(cmd command, msg string) *Error {
	return &Error{Code: 2, Output: fmt.Sprintf("%s\nTry 'ray job %s --help' for help.\n\nError: %s\n", usageOf(cmd), cmd.name, msg)}
}

// badOptionUsage is click's BadOptionUsage as the parser raises it, without
// a context: the message alone, exit status 2.
func badOptionUsage(msg string) *Error { return &Error{Code: 2, Output: "Error: " + msg + "\n"} }

// Parse parses the words after `ray` (args[0] is "job") as Ray's CLI does.
// Subcommands of `ray` other than `job` are not Parse's: it says so in a
// plain (non-click) error with Code 0, for the caller to refuse.
func Parse(args []string) (*Call, *Error) {
	if len(args) == 0 || args[0] != "job" {
		what := "ray"
		if len(args) > 0 {
			what += " " + args[0]
		}
		return nil, &Error{Code: 0, Output: what + "\n"}
	}
	if len(args) < 2 {
		// A click group without its command prints its help (exit 0 in
		// click 8.1, 2 from 8.2): either way nothing is submitted.
		return &Call{Help: true}, nil
	}
	cmd, ok := commands[args[1]]
	if !ok {
		if strings.HasPrefix(args[1], "-") && args[1] != "--help" {
			return nil, &Error{Code: 2, Output: fmt.Sprintf("Usage: ray job [OPTIONS] COMMAND [ARGS]...\nTry 'ray job --help' for help.\n\nError: No such option %s.\n", pyRepr(args[1]))}
		}
		if args[1] == "--help" {
			return &Call{Help: true}, nil
		}
		return nil, &Error{Code: 2, Output: fmt.Sprintf("Usage: ray job [OPTIONS] COMMAND [ARGS]...\nTry 'ray job --help' for help.\n\nError: No such command '%s'.\n", args[1])}
	}
	return parseCommand(cmd, args[2:])
}

// parseCommand is click's OptionParser (parser.py: parse_args,
// _process_args_for_options, _process_opts, _match_long_opt,
// _match_short_opt, _get_value_from_state) followed by the conversion and
// the checks of the parameters (core.py Command.parse_args).
func parseCommand(cmd command, args []string) (*Call, *Error) {
	params := append(append([]param(nil), cmd.params...), helpParam)
	long := map[string]param{}
	short := map[string]param{}
	var longNames []string
	for _, p := range params {
		for _, n := range p.names {
			if strings.HasPrefix(n, "--") {
				long[n] = p
				longNames = append(longNames, n)
			} else {
				short[n] = p
			}
		}
	}
	type given struct {
		p     param
		opt   string // the name used
		value string
	}
	var (
		order []given
		largs []string
		rargs = append([]string(nil), args...)
	)
	// value pops an option's value from the remaining words.
	value := func(opt string) (string, *Error) {
		if len(rargs) == 0 {
			return "", badOptionUsage(fmt.Sprintf("Option %s requires an argument.", pyRepr(opt)))
		}
		v := rargs[0]
		rargs = rargs[1:]
		return v, nil
	}
	for len(rargs) > 0 {
		arg := rargs[0]
		rargs = rargs[1:]
		if arg == "--" {
			break
		}
		if !strings.HasPrefix(arg, "-") || len(arg) == 1 {
			largs = append(largs, arg) // allow_interspersed_args
			continue
		}
		opt, explicit, hasExplicit := arg, "", false
		if i := strings.Index(arg, "="); i >= 0 {
			opt, explicit, hasExplicit = arg[:i], arg[i+1:], true
		}
		if p, ok := long[opt]; ok {
			switch {
			case p.takesValue():
				if hasExplicit {
					rargs = append([]string{explicit}, rargs...)
				}
				v, err := value(opt)
				if err != nil {
					return nil, err
				}
				order = append(order, given{p, opt, v})
			case hasExplicit:
				return nil, badOptionUsage(fmt.Sprintf("Option %s does not take a value.", pyRepr(opt)))
			default:
				order = append(order, given{p: p, opt: opt})
			}
			continue
		}
		if strings.HasPrefix(arg, "--") {
			return nil, usageError(cmd, noSuchOption(opt, closeMatches(opt, longNames)))
		}
		// One dash: a cluster of short options ("-vv", "-f").
		for i := 1; i < len(arg); i++ {
			name := "-" + arg[i:i+1]
			p, ok := short[name]
			if !ok {
				return nil, usageError(cmd, noSuchOption(name, nil))
			}
			if p.takesValue() {
				if i+1 < len(arg) {
					rargs = append([]string{arg[i+1:]}, rargs...)
				}
				v, err := value(name)
				if err != nil {
					return nil, err
				}
				order = append(order, given{p, name, v})
				break
			}
			order = append(order, given{p: p, opt: name})
		}
	}
	largs = append(largs, rargs...)

	call := &Call{Command: cmd.name, Values: map[string]any{}}
	// --help is eager: it wins over every other problem.
	for _, g := range order {
		if g.p.dest == "help" {
			call.Help = true
			return call, nil
		}
	}
	// Parameters are converted in the order they were given (core.py
	// iter_params_for_processing), so the first bad value is reported.
	for _, g := range order {
		switch g.p.kind {
		case kString:
			call.Values[g.p.dest] = g.value
		case kFlag:
			call.Values[g.p.dest] = true
		case kCount:
			n, _ := call.Values[g.p.dest].(int)
			call.Values[g.p.dest] = n + 1
		case kFloat:
			f, ok := pyFloat(g.value)
			if !ok {
				return nil, usageError(cmd, fmt.Sprintf("Invalid value for %s: %s is not a valid float.", pyRepr(optionHint(g.p)), pyRepr(g.value)))
			}
			call.Values[g.p.dest] = f
		case kInt:
			n, ok := pyInt(g.value)
			if !ok {
				return nil, usageError(cmd, fmt.Sprintf("Invalid value for %s: %s is not a valid integer.", pyRepr(optionHint(g.p)), pyRepr(g.value)))
			}
			call.Values[g.p.dest] = n
		case kChoice:
			v := strings.ToLower(g.value) // case_sensitive=False
			found := false
			for _, c := range g.p.choices {
				found = found || c == v
			}
			if !found {
				quoted := make([]string, len(g.p.choices))
				for i, c := range g.p.choices {
					quoted[i] = pyRepr(c)
				}
				return nil, usageError(cmd, fmt.Sprintf("Invalid value for %s: %s is not one of %s.", pyRepr(optionHint(g.p)), pyRepr(g.value), strings.Join(quoted, ", ")))
			}
			call.Values[g.p.dest] = v
		case kBoolOrString:
			call.Values[g.p.dest] = g.value
		}
	}
	switch {
	case cmd.arg == "ENTRYPOINT...":
		if len(largs) == 0 {
			return nil, usageError(cmd, "Missing argument 'ENTRYPOINT...'.")
		}
		call.Args = largs
	case cmd.arg != "":
		if len(largs) == 0 {
			return nil, usageError(cmd, fmt.Sprintf("Missing argument '%s'.", cmd.arg))
		}
		call.Args = largs[:1]
		largs = largs[1:]
		fallthrough
	default:
		if len(largs) > 0 {
			word := "argument"
			if len(largs) > 1 {
				word = "arguments"
			}
			return nil, usageError(cmd, fmt.Sprintf("Got unexpected extra %s (%s)", word, strings.Join(largs, " ")))
		}
	}
	return call, nil
}

// optionHint is how click names an option in a message: its names joined
// by " / " (core.py Parameter.get_error_hint).
func optionHint(p param) string { return strings.Join(p.names, " / ") }

// noSuchOption is click's NoSuchOption.format_message: the option, then
// the close matches, each repr'd, sorted (click/exceptions.py
// _format_possibilities).
func noSuchOption(opt string, possibilities []string) string {
	msg := "No such option " + pyRepr(opt) + "."
	sort.Strings(possibilities)
	quoted := make([]string, len(possibilities))
	for i, p := range possibilities {
		quoted[i] = pyRepr(p)
	}
	switch len(possibilities) {
	case 0:
		return msg
	case 1:
		return msg + " Did you mean " + quoted[0] + "?"
	default:
		return msg + " (Did you mean one of: " + strings.Join(quoted, ", ") + "?)"
	}
}

// closeMatches is Python's difflib.get_close_matches(word, possibilities)
// (n=3, cutoff=0.6), which click uses to suggest options: candidates whose
// SequenceMatcher ratio against the word is at least 0.6, best three.
func closeMatches(word string, possibilities []string) []string {
	type scored struct {
		score float64
		s     string
	}
	var out []scored
	for _, x := range possibilities {
		m := difflib.NewMatcher(chars(x), chars(word))
		if m.RealQuickRatio() >= 0.6 && m.QuickRatio() >= 0.6 && m.Ratio() >= 0.6 {
			out = append(out, scored{m.Ratio(), x})
		}
	}
	// heapq.nlargest on (score, x) tuples: by score, then by string.
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].s > out[j].s
	})
	if len(out) > 3 {
		out = out[:3]
	}
	res := make([]string, len(out))
	for i, o := range out {
		res[i] = o.s
	}
	return res
}

func chars(s string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// pyFloat is Python's float(str) for the forms a command line carries.
func pyFloat(s string) (float64, bool) {
	raw := strings.TrimSpace(s)
	if raw == "" || strings.HasPrefix(raw, "_") || strings.HasSuffix(raw, "_") || strings.Contains(raw, "__") {
		return 0, false
	}
	t := strings.ReplaceAll(raw, "_", "")
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "inf", "infinity", "nan":
	default:
		if strings.ContainsAny(t, "xXpP") { // Go reads hex floats, Python does not
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	return f, err == nil
}

// pyInt is Python's int(str): decimal only, surrounding spaces and single
// underscores between digits allowed.
func pyInt(s string) (int64, bool) {
	t := strings.TrimSpace(s)
	if t == "" || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") || strings.Contains(t, "__") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(t, "_", ""), 10, 64)
	return n, err == nil
}

// pyRepr is Python's repr() of a str: single quotes unless the string
// holds a single quote and no double quote.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
