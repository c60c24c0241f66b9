package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
)

// LoadConfigFiles decodes each path onto c in order: a file, or a
// directory whose *.hcl and *.json files are read in lexical order
// (subdirectories are not descended into). Later files override earlier
// ones key by key. Every problem of every file is reported, each naming
// its file:line:column.
func LoadConfigFiles(c *Config, paths []string) error {
	var files []string
	for _, p := range paths {
		found, err := configFilesAt(p)
		if err != nil {
			return err
		}
		files = append(files, found...)
	}
	var diags hcl.Diagnostics
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("reading config file: %w", err)
		}
		diags = append(diags, decodeConfigSource(c, f, src)...)
		c.Files = append(c.Files, f)
	}
	return diagsError(diags)
}

// ParseConfig decodes one file's content onto c; name is used in error
// positions. A ".json" suffix selects JSON syntax, and so does content
// that opens with "{" (Nomad reads a JSON file of any name, and tools
// such as the api package's test harness write one without an
// extension); HCL's native syntax cannot start with a brace.
func ParseConfig(c *Config, name string, src []byte) error {
	return diagsError(decodeConfigSource(c, name, src))
}

func decodeConfigSource(c *Config, name string, src []byte) hcl.Diagnostics {
	var file *hcl.File
	var diags hcl.Diagnostics
	// Editors on some systems start a file with a byte order mark, which
	// neither parser accepts.
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	if isJSONConfig(name, src) {
		file, diags = hcljson.Parse(src, name)
	} else {
		file, diags = hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	}
	if diags.HasErrors() {
		return diags
	}
	d := &configDecoder{cfg: c}
	d.decodeStruct(file.Body, reflect.ValueOf(c).Elem(), "")
	return d.diags
}

// configFilesAt lists the configuration files a -config path names.
func configFilesAt(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config path: %w", err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("reading config directory: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if ext := filepath.Ext(name); ext != ".hcl" && ext != ".json" {
			continue
		}
		out = append(out, filepath.Join(path, name))
	}
	sort.Strings(out)
	return out, nil
}

// isJSONConfig reports whether a configuration file is JSON: by its
// extension, or by its first non-blank byte when it has none we know.
func isJSONConfig(name string, src []byte) bool {
	switch filepath.Ext(name) {
	case ".json":
		return true
	case ".hcl":
		return false
	}
	trimmed := bytes.TrimLeft(src, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}
