package skillrun

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// ScriptPATH is the PATH a script runs with, and where interpreters are
// looked up first.
const ScriptPATH = "/usr/local/bin:/usr/bin:/bin"

// ResolveScript finds script in the skill folder dir and returns its path
// relative to dir, slash-separated. "x.py" (no slash) is looked up under
// scripts/ first, then at the root; "scripts/x.py" is taken as it is. A
// script that is absolute, climbs with "..", or resolves (through links)
// outside dir is ErrScriptOutsideSkill; one that is missing or not a file
// is ErrScriptNotFound.
func ResolveScript(dir, script string) (string, error) {
	if script == "" {
		return "", newError(ErrScriptNotFound, "no script named: give a path such as scripts/run.py")
	}
	if strings.ContainsRune(script, 0) {
		return "", newError(ErrScriptOutsideSkill, "script %q holds a NUL byte: no file of the skill is named so", script)
	}
	if strings.HasPrefix(script, "/") || strings.Contains(script, "\\") || filepath.IsAbs(script) {
		return "", newError(ErrScriptOutsideSkill, "script %q is an absolute path: name it relative to the skill folder, e.g. scripts/run.py", script)
	}
	for _, part := range strings.Split(script, "/") {
		if part == ".." {
			return "", newError(ErrScriptOutsideSkill, "script %q climbs out of the skill folder with \"..\": name a file inside the skill", script)
		}
	}
	clean := path.Clean(script)
	candidates := []string{clean}
	if !strings.Contains(clean, "/") {
		candidates = []string{"scripts/" + clean, clean}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	for _, rel := range candidates {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", newError(ErrScriptOutsideSkill, "script %q is a link to a missing file: skill scripts must be files inside the skill", script)
			}
			return "", err
		}
		if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", newError(ErrScriptOutsideSkill, "script %q is a link leading outside the skill folder: only files inside the skill run", script)
		}
		st, err := os.Stat(real)
		if err != nil {
			return "", err
		}
		if !st.Mode().IsRegular() {
			return "", newError(ErrScriptNotFound, "script %q is not a file: name a script file, e.g. scripts/run.py", script)
		}
		return rel, nil
	}
	return "", newError(ErrScriptNotFound, "script %q is not in the skill (looked for %s): list the skill's files to find its scripts", script, strings.Join(candidates, " and "))
}

// byExtension names the interpreter of each known extension.
var byExtension = map[string]string{
	".py": "python3", ".js": "node", ".mjs": "node", ".cjs": "node", ".sh": "bash",
}

// Interpreter returns the command that runs the script file at p (the
// script path itself is appended by the caller): overrides (extension ->
// interpreter) first, then the extension, then the shebang (#!/usr/bin/env
// X too), then the file itself when it is executable; else
// ErrUnknownInterpreter. Names are looked up on ScriptPATH, then the
// caller's PATH.
func Interpreter(p string, overrides map[string]string) ([]string, error) {
	ext := strings.ToLower(filepath.Ext(p))
	if in, ok := overrides[ext]; ok && in != "" {
		bin, err := lookInterpreter(in)
		if err != nil {
			return nil, err
		}
		return []string{bin}, nil
	}
	if name, ok := byExtension[ext]; ok {
		bin, err := lookInterpreter(name)
		if err != nil {
			return nil, err
		}
		return []string{bin}, nil
	}
	if argv := shebang(p); len(argv) > 0 {
		if path.Base(argv[0]) == "env" && len(argv) > 1 {
			argv = argv[1:]
			if argv[0] == "-S" && len(argv) > 1 {
				argv = argv[1:]
			}
		}
		bin, err := lookInterpreter(argv[0])
		if err != nil {
			return nil, err
		}
		return append([]string{bin}, argv[1:]...), nil
	}
	// Only a program runs itself: a text file without a #! line would be
	// run by /bin/sh or not at all, depending on who execs it.
	if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o111 != 0 && isELF(p) {
		return nil, nil // runs directly
	}
	return nil, newError(ErrUnknownInterpreter, "no interpreter for %s: give the script a .py, .js or .sh extension or a #! line", path.Base(filepath.ToSlash(p)))
}

// shebang returns the words of p's "#!" line, if it has one.
func shebang(p string) []string {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return nil
	}
	return strings.Fields(rest)
}

// isELF reports whether p is an ELF binary.
func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == "\x7fELF"
}

// lookInterpreter finds name (a path or a command name) on ScriptPATH, then
// the caller's PATH.
func lookInterpreter(name string) (string, error) {
	if strings.Contains(name, "/") {
		if st, err := os.Stat(name); err == nil && !st.IsDir() && st.Mode().Perm()&0o111 != 0 {
			return name, nil
		}
		return "", newError(ErrUnknownInterpreter, "interpreter %s is not installed on this machine", name)
	}
	for _, dir := range filepath.SplitList(ScriptPATH) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	return "", newError(ErrUnknownInterpreter, "interpreter %s is not installed on this machine (looked on %s and PATH)", name, ScriptPATH)
}
