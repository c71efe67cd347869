package main

import (
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/pluginpb"

	_ "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// TestRenderCoversTheAPI renders the page from the descriptors compiled
// into gen/ (without comments: those stay in the protos' source) and checks
// that every service, method, message, field and enum value is on it and
// that every link leads to a heading of the page.
func TestRenderCoversTheAPI(t *testing.T) {
	req := &pluginpb.CodeGeneratorRequest{}
	var ours []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage("skillsvc.v1", func(fd protoreflect.FileDescriptor) bool {
		ours = append(ours, fd)
		return true
	})
	if len(ours) == 0 {
		t.Fatal("no skillsvc.v1 descriptors registered")
	}
	// Every dependency first, as protoc sends them.
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := range fd.Imports().Len() {
			add(fd.Imports().Get(i).FileDescriptor)
		}
		req.ProtoFile = append(req.ProtoFile, protodesc.ToFileDescriptorProto(fd))
	}
	for _, fd := range ours {
		add(fd)
		req.FileToGenerate = append(req.FileToGenerate, fd.Path())
	}
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	var files []*protogen.File
	for _, f := range plugin.Files {
		if f.Generate {
			files = append(files, f)
		}
	}
	page := render(files)

	headings := map[string]bool{}
	for _, h := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(page, -1) {
		headings[anchor(h[1])] = true
	}
	for _, l := range regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(page, -1) {
		if !headings[l[1]] {
			t.Errorf("link to #%s, which no heading has", l[1])
		}
	}

	var want []string
	for _, fd := range ours {
		for i := range fd.Services().Len() {
			s := fd.Services().Get(i)
			want = append(want, "### "+string(s.Name())+"\n")
			for j := range s.Methods().Len() {
				want = append(want, "| "+string(s.Methods().Get(j).Name())+" |")
			}
		}
		var messages func(ms protoreflect.MessageDescriptors)
		messages = func(ms protoreflect.MessageDescriptors) {
			for i := range ms.Len() {
				m := ms.Get(i)
				if m.IsMapEntry() {
					continue
				}
				want = append(want, "### "+localName(m)+"\n")
				for j := range m.Fields().Len() {
					want = append(want, "| `"+string(m.Fields().Get(j).Name())+"` |")
				}
				enums(m.Enums(), &want)
				messages(m.Messages())
			}
		}
		messages(fd.Messages())
		enums(fd.Enums(), &want)
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", strings.TrimSpace(w))
		}
	}
}

func enums(es protoreflect.EnumDescriptors, want *[]string) {
	for i := range es.Len() {
		e := es.Get(i)
		*want = append(*want, "### "+localName(e)+"\n")
		for j := range e.Values().Len() {
			*want = append(*want, "| `"+string(e.Values().Get(j).Name())+"` |")
		}
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		`"team:<id>"`:             `"team:&lt;id&gt;"`,
		`"*" and "**" and "\."`:   `"\*" and "\*\*" and "\\."`,
		"`<code>` stays, <x> not": "`<code>` stays, &lt;x&gt; not",
	} {
		if got := escape(in); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
}
