package jobspec

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the functions available in job files: the names and
// behaviour Nomad's job language offers. baseDir anchors relative paths of
// the file functions, which only work when allowFS is set.
func functions(baseDir string, allowFS bool) map[string]function.Function {
	funcs := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"base64decode":    base64DecodeFunc,
		"base64encode":    base64EncodeFunc,
		"can":             tryfunc.CanFunc,
		"ceil":            stdlib.CeilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"cidrhost":        cidrHostFunc,
		"cidrnetmask":     cidrNetmaskFunc,
		"cidrsubnet":      cidrSubnetFunc,
		"cidrsubnets":     cidrSubnetsFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"convert":         typeexpr.ConvertFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"floor":           stdlib.FloorFunc,
		"format":          stdlib.FormatFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"index":           stdlib.IndexFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          stdlib.LengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"md5":             hashFunc(md5.New),
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           stdlib.RangeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"regex_replace":   stdlib.RegexReplaceFunc,
		"replace":         stdlib.ReplaceFunc,
		"reverse":         stdlib.ReverseFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setunion":        stdlib.SetUnionFunc,
		"sha1":            hashFunc(sha1.New),
		"sha256":          hashFunc(sha256.New),
		"sha512":          hashFunc(sha512.New),
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"strlen":          stdlib.StrlenFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"title":           stdlib.TitleFunc,
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"try":             tryfunc.TryFunc,
		"upper":           stdlib.UpperFunc,
		"urlencode":       urlEncodeFunc,
		"uuidv4":          uuidV4Func,
		"uuidv5":          uuidV5Func,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
	}
	fs := map[string]function.Function{
		"abspath":    absPathFunc(baseDir),
		"basename":   basenameFunc,
		"dirname":    dirnameFunc,
		"file":       fileFunc(baseDir, false),
		"filebase64": fileFunc(baseDir, true),
		"fileexists": fileExistsFunc(baseDir),
		"fileset":    fileSetFunc(baseDir),
		"pathexpand": pathExpandFunc,
	}
	for name, fn := range fs {
		if !allowFS {
			fn = disabledFS(name, fn)
		}
		funcs[name] = fn
	}
	return funcs
}

// disabledFS keeps a file function's signature but fails every call, so a
// job parsed by a server cannot read the server's files.
func disabledFS(name string, fn function.Function) function.Function {
	return function.New(&function.Spec{
		Params:   fn.Params(),
		VarParam: fn.VarParam(),
		Type: func([]cty.Value) (cty.Type, error) {
			return cty.NilType, fmt.Errorf("the %s function reads the file system, which is disabled for this parse", name)
		},
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			return cty.DynamicVal, fmt.Errorf("the %s function reads the file system, which is disabled for this parse", name)
		},
	})
}

func stringFunc(param string, impl func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: param, Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			out, err := impl(args[0].AsString())
			if err != nil {
				return cty.UnknownVal(cty.String), err
			}
			return cty.StringVal(out), nil
		},
	})
}

var base64EncodeFunc = stringFunc("str", func(s string) (string, error) {
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
})

var base64DecodeFunc = stringFunc("str", func(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("failed to decode base64 data: %w", err)
	}
	if !utf8.Valid(b) {
		return "", errors.New("the decoded data is not valid UTF-8")
	}
	return string(b), nil
})

var urlEncodeFunc = stringFunc("str", func(s string) (string, error) {
	return url.QueryEscape(s), nil
})

func hashFunc(h func() hash.Hash) function.Function {
	return stringFunc("str", func(s string) (string, error) {
		sum := h()
		sum.Write([]byte(s))
		return hex.EncodeToString(sum.Sum(nil)), nil
	})
}

var uuidV4Func = function.New(&function.Spec{
	Type: function.StaticReturnType(cty.String),
	Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return cty.UnknownVal(cty.String), err
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return cty.StringVal(formatUUID(b)), nil
	},
})

// uuidNamespaces are the RFC 4122 well-known namespaces uuidv5 accepts by
// name.
var uuidNamespaces = map[string]string{
	"dns":  "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
	"url":  "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
	"oid":  "6ba7b812-9dad-11d1-80b4-00c04fd430c8",
	"x500": "6ba7b814-9dad-11d1-80b4-00c04fd430c8",
}

var uuidV5Func = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "namespace", Type: cty.String},
		{Name: "name", Type: cty.String},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		ns := args[0].AsString()
		if known, ok := uuidNamespaces[ns]; ok {
			ns = known
		}
		nsBytes, err := parseUUID(ns)
		if err != nil {
			return cty.UnknownVal(cty.String), fmt.Errorf("uuidv5 namespace %q: %w", args[0].AsString(), err)
		}
		h := sha1.New()
		h.Write(nsBytes[:])
		h.Write([]byte(args[1].AsString()))
		var b [16]byte
		copy(b[:], h.Sum(nil))
		b[6] = b[6]&0x0f | 0x50
		b[8] = b[8]&0x3f | 0x80
		return cty.StringVal(formatUUID(b)), nil
	},
})

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func parseUUID(s string) ([16]byte, error) {
	var out [16]byte
	clean := strings.ReplaceAll(s, "-", "")
	if len(clean) != 32 || len(s) != 36 {
		return out, errors.New("not a UUID")
	}
	b, err := hex.DecodeString(clean)
	if err != nil {
		return out, errors.New("not a UUID")
	}
	copy(out[:], b)
	return out, nil
}

// resolvePath makes path absolute against baseDir.
func resolvePath(baseDir, path string) string {
	path = expandHome(path)
	if !filepath.IsAbs(path) {
		path = filepath.Join(baseDir, path)
	}
	return filepath.Clean(path)
}

func expandHome(path string) string {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return filepath.Join(home, strings.TrimPrefix(path, "~"))
}

func fileFunc(baseDir string, asBase64 bool) function.Function {
	return stringFunc("path", func(path string) (string, error) {
		b, err := os.ReadFile(resolvePath(baseDir, path))
		if err != nil {
			return "", fmt.Errorf("failed to read file: %w", err)
		}
		if asBase64 {
			return base64.StdEncoding.EncodeToString(b), nil
		}
		if !utf8.Valid(b) {
			return "", fmt.Errorf("contents of %s are not valid UTF-8; use the filebase64 function instead", path)
		}
		return string(b), nil
	})
}

func fileExistsFunc(baseDir string) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			st, err := os.Stat(resolvePath(baseDir, args[0].AsString()))
			if err != nil {
				if os.IsNotExist(err) {
					return cty.False, nil
				}
				return cty.UnknownVal(cty.Bool), fmt.Errorf("failed to stat %s: %w", args[0].AsString(), err)
			}
			if !st.Mode().IsRegular() {
				return cty.UnknownVal(cty.Bool), fmt.Errorf("%s is not a regular file", args[0].AsString())
			}
			return cty.True, nil
		},
	})
}

// fileSetFunc lists the regular files under path matching a glob pattern
// (path.Match syntax, applied per path segment), relative to path.
func fileSetFunc(baseDir string) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			{Name: "path", Type: cty.String},
			{Name: "pattern", Type: cty.String},
		},
		Type: function.StaticReturnType(cty.Set(cty.String)),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			root := resolvePath(baseDir, args[0].AsString())
			matches, err := filepath.Glob(filepath.Join(root, args[1].AsString()))
			if err != nil {
				return cty.UnknownVal(cty.Set(cty.String)), fmt.Errorf("invalid pattern %q: %w", args[1].AsString(), err)
			}
			sort.Strings(matches)
			var vals []cty.Value
			for _, m := range matches {
				st, err := os.Stat(m)
				if err != nil || !st.Mode().IsRegular() {
					continue
				}
				rel, err := filepath.Rel(root, m)
				if err != nil {
					continue
				}
				vals = append(vals, cty.StringVal(filepath.ToSlash(rel)))
			}
			if len(vals) == 0 {
				return cty.SetValEmpty(cty.String), nil
			}
			return cty.SetVal(vals), nil
		},
	})
}

func absPathFunc(baseDir string) function.Function {
	return stringFunc("path", func(path string) (string, error) {
		return filepath.ToSlash(resolvePath(baseDir, path)), nil
	})
}

var basenameFunc = stringFunc("path", func(path string) (string, error) {
	return filepath.Base(path), nil
})

var dirnameFunc = stringFunc("path", func(path string) (string, error) {
	return filepath.Dir(path), nil
})

var pathExpandFunc = stringFunc("path", func(path string) (string, error) {
	return expandHome(path), nil
})
