package evalctl_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	codeSpan  = regexp.MustCompile("`[^`\n]*`")
)

// TestDocLinks: every relative link of README.md and docs/*.md names a
// file of the repository, and its #anchor a heading of that file (as
// GitHub makes anchors from headings).
func TestDocLinks(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append([]string{"README.md"}, files...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(data)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(l.target, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), path)
			}
			info, err := os.Stat(target)
			if err != nil {
				t.Errorf("%s:%d: link %q: no such file %s", f, l.line, l.target, target)
				continue
			}
			if anchor == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into %s, which is not a Markdown file", f, l.line, l.target, target)
				continue
			}
			doc, _ := os.ReadFile(target)
			if !anchors(string(doc))[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", f, l.line, l.target, target, anchor)
			}
		}
	}
}

type mdLinkAt struct {
	line   int
	target string
}

// markdownLinks lists the link targets of a Markdown text outside code
// blocks and code spans.
func markdownLinks(text string) []mdLinkAt {
	var links []mdLinkAt
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			links = append(links, mdLinkAt{i + 1, m[1]})
		}
	}
	return links
}

// anchors returns the anchors GitHub gives a Markdown text's headings:
// lower case, punctuation dropped but for - and _, spaces as -, a -N
// suffix for a repeat.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestAnchors(t *testing.T) {
	got := anchors("# The version\n## A run: in progress (`phases.json`)\n```\n# not a heading\n```\n## The version\n")
	for _, want := range []string{"the-version", "a-run-in-progress-phasesjson", "the-version-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a line in a code block made an anchor")
	}
}
