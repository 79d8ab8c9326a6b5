// Package raycli reads `ray job …` command lines as Ray's CLI reads them, for
// the sandbox's stand-in submitter (kube/sandbox/headsim), which has no Ray
// installed and runs what a RayJob submitter's command says instead.
//
// [Parse] parses the words after `ray` with the options, values and
// positional arguments of Ray's click commands (python/ray/dashboard/modules/
// job/cli.py and cli_utils.py; the logging options of
// ray/autoscaler/_private/cli_logger.py), and refuses what click refuses with
// click's words and exit status 2: an unknown option ("No such option
// '--no-wiat'. Did you mean '--no-wait'?", with the suggestions Python's
// difflib.get_close_matches makes), an option without its value, a value
// that is not a float or an integer, a flag given a value, a missing or extra
// argument. The words are click 8.4's, checked against click 8.4.0 running a
// copy of Ray's option declarations (click 8.1, which older Ray images
// carry, words an unknown option "No such option: --no-wiat"). [Call.Submit] then applies what `ray job
// submit` checks before and after it connects (the JSON of
// --entrypoint-resources, --entrypoint-label-selector and --metadata-json;
// --runtime-env against --runtime-env-json; the runtime env's JSON), with the
// words and exit status 1 Ray prints, and joins the entrypoint's words as
// Ray does (shlex.join).
//
// The references to Ray's sources name files and functions of
// github.com/ray-project/ray as read at the commits given there (by
// function rather than line: the files were read from an index at differing
// commits); the behaviour of click is click 8.4's (core.py, parser.py,
// exceptions.py).
//
// Known differences: a JSON syntax error is worded as Python's json module
// words it, derived from Go's decoder's error (the common cases checked
// against CPython 3.11; rarer ones can differ); Python's json accepts NaN and Infinity, Go's does
// not; `--help` prints a one-line usage, not Ray's whole help text.
package raycli
