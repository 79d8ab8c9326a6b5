package docs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's top directory, two levels above this package.
var root = filepath.Join("..", "..")

const (
	maxReadmeLines = 250
	// The quick start must be on the first screen.
	quickStartLines   = 60
	maxParagraphWords = 80
)

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func TestReadmeIsAFrontDoor(t *testing.T) {
	lines := readLines(t, filepath.Join(root, "README.md"))
	if len(lines) > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the depth to docs/", len(lines), maxReadmeLines)
	}
	for _, cmd := range []string{"make demo", "make test"} {
		found := false
		for i := 0; i < len(lines) && i < quickStartLines; i++ {
			if strings.HasPrefix(strings.TrimSpace(lines[i]), cmd) && strings.HasPrefix(lines[i], "    ") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md does not show the command %q in its first %d lines", cmd, quickStartLines)
		}
	}
}

// paragraph is a run of prose lines: not a heading, a code block or a table;
// each list item is a paragraph of its own.
type paragraph struct {
	line int // 1-based, of its first line
	text string
}

var (
	headingRE     = regexp.MustCompile(`^#+\s+(.*)$`)
	orderedItemRE = regexp.MustCompile(`^\d+\. `)
)

func paragraphs(lines []string) []paragraph {
	var out []paragraph
	var cur *paragraph
	inFence := false
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
			flush()
			continue
		}
		if inFence {
			continue
		}
		if headingRE.MatchString(l) {
			flush()
			continue
		}
		if trimmed == "" || strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(trimmed, "|") {
			flush()
			continue
		}
		if strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* ") || orderedItemRE.MatchString(trimmed) {
			flush()
		}
		if cur == nil {
			cur = &paragraph{line: i + 1}
		}
		cur.text += " " + trimmed
	}
	flush()
	return out
}

func TestReadmeParagraphsAreShort(t *testing.T) {
	lines := readLines(t, filepath.Join(root, "README.md"))
	ps := paragraphs(lines)
	if len(ps) == 0 {
		t.Fatal("README.md has no paragraphs: the parser is broken")
	}
	for _, p := range ps {
		if n := len(strings.Fields(p.text)); n > maxParagraphWords {
			t.Errorf("README.md:%d: a paragraph of %d words, more than %d: split it or move it to docs/ (%.60s…)",
				p.line, n, maxParagraphWords, strings.TrimSpace(p.text))
		}
	}
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

// prose is the file's text without fenced code blocks and code spans,
// where brackets are not links. Indented lines stay: in docs/ they are as
// often a list item's continuation as code.
func prose(lines []string) string {
	var b strings.Builder
	inFence := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		b.WriteString(codeSpanRE.ReplaceAllString(l, ""))
		b.WriteByte('\n')
	}
	return b.String()
}

// anchor is GitHub's id for a heading: lower case, punctuation other than
// '-' and '_' dropped, spaces made '-'.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	out := map[string]bool{}
	inFence := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if m := headingRE.FindStringSubmatch(l); m != nil && !inFence {
			a := anchor(m[1])
			if n := seen[a]; n > 0 {
				out[a+"-"+strconv.Itoa(n)] = true
			} else {
				out[a] = true
			}
			seen[a]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRelativeLinksResolve(t *testing.T) {
	files := []string{filepath.Join(root, "README.md")}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	checked := 0
	for _, file := range files {
		name, _ := filepath.Rel(root, file)
		for _, m := range linkRE.FindAllStringSubmatch(prose(readLines(t, file)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file", name, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[frag] {
				t.Errorf("%s: link %q: no heading with the id %q in %s", name, target, frag, filepath.Base(dest))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the link parser is broken")
	}
}
