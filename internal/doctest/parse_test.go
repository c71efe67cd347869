package doctest

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	page := "# Title\n" +
		"<!-- doctest: server minio redis -->\n" +
		"Some text with `inline` code.\n" +
		"```sh\n" +
		"echo hi\n" +
		"```\n" +
		"```yaml file=conf/skillsvc.yaml\n" +
		"storage: s3\n" +
		"```\n" +
		"```bash skip=\"needs a Kubernetes cluster\"\n" +
		"kubectl get pods\n" +
		"```\n" +
		"1. In a list:\n" +
		"   ```sh background ready=127.0.0.1:8080\n" +
		"   python3 -m http.server 8080\n" +
		"     indented more\n" +
		"   ```\n" +
		"~~~python fails skip_not='x'\n" +
		"~~~\n"
	_, err := Parse("p.md", []byte(page))
	if err == nil || !strings.Contains(err.Error(), `p.md:18: unknown attribute "skip_not"`) {
		t.Fatalf("unknown attribute: got %v", err)
	}
	page = strings.Replace(page, " skip_not='x'", "", 1)
	p, err := Parse("p.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := &Page{Path: "p.md", Server: true, MinIO: true, Redis: true, Blocks: []Block{
		{Line: 4, Lang: "sh", Text: "echo hi\n"},
		{Line: 7, Lang: "yaml", Text: "storage: s3\n", File: "conf/skillsvc.yaml"},
		{Line: 10, Lang: "bash", Text: "kubectl get pods\n", Skip: "needs a Kubernetes cluster"},
		{Line: 14, Lang: "sh", Text: "python3 -m http.server 8080\n  indented more\n", Background: true, Ready: "127.0.0.1:8080"},
		{Line: 18, Lang: "python", Fails: true},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got\n%+v\nwant\n%+v", p, want)
	}
	var runs []int
	for _, b := range p.Blocks {
		if b.Runs() {
			runs = append(runs, b.Line)
		}
	}
	if !reflect.DeepEqual(runs, []int{4, 14, 18}) {
		t.Errorf("blocks that run: %v", runs)
	}
}

func TestParseAttributes(t *testing.T) {
	for _, tc := range []struct {
		name, info string
		want       Block // Line and Text left out
		err        string
	}{
		{name: "language only", info: "sh", want: Block{Lang: "sh"}},
		{name: "no language", info: "", want: Block{}},
		{name: "language lower-cased", info: "Python", want: Block{Lang: "python"}},
		{name: "double-quoted reason", info: `sh skip="needs a cluster, and AWS"`, want: Block{Lang: "sh", Skip: "needs a cluster, and AWS"}},
		{name: "single-quoted reason", info: `sh skip='an "external" IdP'`, want: Block{Lang: "sh", Skip: `an "external" IdP`}},
		{name: "bare value", info: "json file=values.json", want: Block{Lang: "json", File: "values.json"}},
		{name: "quoted file", info: `text file="a b.txt"`, want: Block{Lang: "text", File: "a b.txt"}},
		{name: "several", info: "bash background ready=localhost:9999", want: Block{Lang: "bash", Background: true, Ready: "localhost:9999"}},
		{name: "extra spaces", info: "  ts   fails  ", want: Block{Lang: "ts", Fails: true}},
		{name: "skip without reason", info: "sh skip", err: "skip needs the reason"},
		{name: "skip with empty reason", info: `sh skip=""`, err: "skip needs the reason"},
		{name: "skip with blank reason", info: `sh skip="  "`, err: "skip needs the reason"},
		{name: "unknown attribute", info: "sh slow", err: `unknown attribute "slow"`},
		{name: "unterminated quote", info: `sh skip="oops`, err: "unterminated quote"},
		{name: "junk after quote", info: `sh skip="a"b`, err: "a space must follow"},
		{name: "twice", info: "sh fails fails", err: "given twice"},
		{name: "flag with value", info: "sh fails=yes", err: "takes no value"},
		{name: "ready without background", info: "sh ready=127.0.0.1:1", err: "ready= applies to background"},
		{name: "ready without port", info: "sh background ready=localhost", err: "want ready=HOST:PORT"},
		{name: "background python", info: "python background", err: "background applies to sh"},
		{name: "background fails", info: "sh background fails", err: "cannot be checked to fail"},
		{name: "fails on shown-only", info: "yaml fails", err: "fails applies to blocks that run"},
		{name: "skip with file", info: `yaml skip="x" file=a`, err: "skip goes alone"},
		{name: "file with fails", info: "sh file=a.sh fails", err: "written, not run"},
		{name: "absolute file", info: "yaml file=/etc/x", err: "must be relative"},
		{name: "escaping file", info: "yaml file=../x", err: "must stay inside"},
		{name: "empty file", info: "yaml file=", err: "needs a path"},
		{name: "py alias", info: "py", err: `write "python"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("p.md", []byte("```"+tc.info+"\nx\n```\n"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "p.md:1: ") {
					t.Fatalf("got error %v, want p.md:1: ...%s...", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := p.Blocks[0]
			got.Line, got.Text = 0, ""
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseDirective(t *testing.T) {
	for _, tc := range []struct {
		name, page string
		want       Page
		err        string
	}{
		{name: "none", page: "```sh\n```\n", want: Page{}},
		{name: "server only", page: "<!-- doctest: server -->\n", want: Page{Server: true}},
		{name: "spacing", page: "  <!--doctest:   redis   minio-->  \n", want: Page{Redis: true, MinIO: true}},
		{name: "unknown word", page: "<!-- doctest: server postgres -->\n", err: `p.md:1: unknown doctest directive "postgres"`},
		{name: "after a block", page: "```sh\n```\n<!-- doctest: server -->\n", err: "p.md:3: the doctest directive must come before the first code block"},
		{name: "twice", page: "<!-- doctest: server -->\n<!-- doctest: redis -->\n", err: "p.md:2: a second doctest directive (the first is on line 1)"},
		{name: "split over lines", page: "<!-- doctest: server\n-->\n", err: "p.md:1: malformed directive"},
		{name: "inside a block is content", page: "```markdown\n<!-- doctest: postgres -->\n```\n", want: Page{}},
		{name: "mentioned in prose", page: "Write `<!-- doctest: server -->` first.\n", want: Page{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("p.md", []byte(tc.page))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Server != tc.want.Server || p.MinIO != tc.want.MinIO || p.Redis != tc.want.Redis {
				t.Errorf("got server=%v minio=%v redis=%v, want %+v", p.Server, p.MinIO, p.Redis, tc.want)
			}
		})
	}
}

func TestParseFences(t *testing.T) {
	page := "````markdown\n" + // line 1: a longer fence holds a shorter one
		"```sh\n" +
		"echo inner\n" +
		"```\n" +
		"````\n" +
		"\n" +
		"```sh\n" + // line 7
		"a\n" +
		"```\n" +
		"```python\n" + // line 10: never closed
		"print()\n"
	p, err := Parse("p.md", []byte(page))
	if err == nil || !strings.Contains(err.Error(), "p.md:10: code block never closed") {
		t.Fatalf("unclosed block: got %v", err)
	}
	if len(p.Blocks) != 3 || p.Blocks[0].Text != "```sh\necho inner\n```\n" || p.Blocks[1].Line != 7 || p.Blocks[2].Line != 10 {
		t.Errorf("blocks: %+v", p.Blocks)
	}
}
