package jobspec

import (
	"bytes"
	"encoding/json"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The HCL parsers and evaluators recurse once or more per level of
// nesting, and a Go stack overflow kills the process: no recover() can
// catch it. So the source is scanned, without recursion and stopping at
// the first level too deep, before anything parses it. The depth counted
// is an upper bound of the syntax tree's depth, which is what the parser
// and evaluator recurse over.
//
// The scanner follows the modes of hclsyntax's lexer (code, quoted
// string, heredoc, bare template) so that brackets inside strings and
// comments do not count. Where it cannot be sure, it reads text as code,
// which can only count more. Non-ASCII text in code is the exception:
// the lexer's Unicode identifier tables can take the bytes after such a
// character into the identifier, so the scanner hands the source to
// tokenNesting, which counts hclsyntax's own tokens.

type lexMode int

const (
	lexConfig lexMode = iota
	lexExpression
	lexTemplate
)

// checkNesting scans native or JSON source.
func checkNesting(filename string, src []byte, limit int) *LimitError {
	if isJSON(filename, src) {
		return checkJSONNesting(filename, src, limit)
	}
	return checkNativeNesting(filename, src, hcl.InitialPos, lexConfig, limit)
}

// nestLevel is one open bracket, brace, parenthesis, quote, heredoc or
// template sequence. chain counts what nests without brackets inside it:
// binary operators (a+b+c parses as ((a+b)+c)), unary operators,
// conditionals, and postfix indexes and splats.
type nestLevel struct {
	open  byte
	chain int
}

type scanMode struct {
	kind        byte   // 'c' code, '"' quoted, 'h' heredoc, 'b' bare template
	marker      []byte // heredoc end marker
	startOfLine bool   // heredoc: at the start of a line
}

type nestScanner struct {
	src []byte
	i   int

	levels     []nestLevel
	depth      int
	directives int

	modes     []scanMode
	braces    int
	retBraces []int // brace counts at which a '}' ends a template sequence

	termEnd    bool // the last token can end a term: a '[' after it indexes
	afterBrk   bool // the last token was '[': a '*' after it is a splat
	noBlockEnd bool // no "*/" follows: no later "/*" starts a comment
	nonASCII   bool // met non-ASCII code, which only the lexer reads right
}

func checkNativeNesting(filename string, src []byte, start hcl.Pos, mode lexMode, limit int) *LimitError {
	deepest, at := scanNesting(src, mode, limit)
	if deepest < 0 {
		_, at = tokenNesting(src, mode, limit)
	}
	if at >= 0 {
		return (limits{depth: limit}).depthError(offsetRange(filename, src, start, at))
	}
	return nil
}

// scanNesting returns the deepest nesting of src and the offset of the
// token that first nests deeper than limit (else -1), or -1 for deepest
// if it met text only the lexer can read.
func scanNesting(src []byte, mode lexMode, limit int) (deepest, at int) {
	s := &nestScanner{src: src}
	if mode == lexTemplate {
		s.modes = []scanMode{{kind: 'b'}}
	} else {
		s.modes = []scanMode{{kind: 'c'}}
	}
	for s.i < len(s.src) {
		start := s.i
		switch m := &s.modes[len(s.modes)-1]; m.kind {
		case 'c':
			s.code()
		case '"':
			s.quoted()
		default:
			s.template(m)
		}
		if s.nonASCII {
			return -1, -1
		}
		deepest = max(deepest, s.depth+s.directives)
		if deepest > limit {
			return deepest, start
		}
	}
	return deepest, -1
}

// tokenNesting counts as scanNesting does, over hclsyntax's tokens.
func tokenNesting(src []byte, mode lexMode, limit int) (deepest, at int) {
	var tokens hclsyntax.Tokens
	switch mode {
	case lexTemplate:
		tokens, _ = hclsyntax.LexTemplate(src, "", hcl.InitialPos)
	case lexExpression:
		tokens, _ = hclsyntax.LexExpression(src, "", hcl.InitialPos)
	default:
		tokens, _ = hclsyntax.LexConfig(src, "", hcl.InitialPos)
	}
	s := &nestScanner{}
	prev := hclsyntax.TokenNil
	for i, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenTemplateInterp,
			hclsyntax.TokenTemplateControl, hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			if tok.Type == hclsyntax.TokenOBrack && isTermEnd(prev) {
				s.chainUp()
			}
			open := byte('(')
			if tok.Type == hclsyntax.TokenOBrace {
				open = '{'
			}
			s.push(open)
			if tok.Type == hclsyntax.TokenTemplateControl && i+1 < len(tokens) {
				s.directives = max(0, s.directives+directiveStep(string(tokens[i+1].Bytes)))
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd,
			hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			s.pop()
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenSlash, hclsyntax.TokenPercent,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq,
			hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq, hclsyntax.TokenAnd, hclsyntax.TokenOr,
			hclsyntax.TokenBang, hclsyntax.TokenQuestion:
			s.chainUp()
		case hclsyntax.TokenStar:
			if prev != hclsyntax.TokenOBrack {
				s.chainUp()
			}
		case hclsyntax.TokenComma, hclsyntax.TokenEqual, hclsyntax.TokenFatArrow:
			s.chainReset()
		case hclsyntax.TokenNewline:
			if n := len(s.levels); n == 0 || s.levels[n-1].open == '{' {
				s.chainReset()
			}
		}
		if tok.Type != hclsyntax.TokenNewline && tok.Type != hclsyntax.TokenComment {
			prev = tok.Type
		}
		deepest = max(deepest, s.depth+s.directives)
		if deepest > limit {
			return deepest, tok.Range.Start.Byte
		}
	}
	return deepest, -1
}

func isTermEnd(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenIdent, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCBrace,
		hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenNumberLit:
		return true
	}
	return false
}

func (s *nestScanner) at(k int) byte {
	if s.i+k < len(s.src) {
		return s.src[s.i+k]
	}
	return 0
}

func (s *nestScanner) push(open byte) {
	s.levels = append(s.levels, nestLevel{open: open})
	s.depth++
}

func (s *nestScanner) pop() {
	if n := len(s.levels); n > 0 {
		s.depth -= 1 + s.levels[n-1].chain
		s.levels = s.levels[:n-1]
	}
}

func (s *nestScanner) chainUp() {
	if n := len(s.levels); n > 0 {
		s.levels[n-1].chain++
	}
	s.depth++
}

func (s *nestScanner) chainReset() {
	if n := len(s.levels); n > 0 {
		s.depth -= s.levels[n-1].chain
		s.levels[n-1].chain = 0
	}
	// Outside any bracket the chain is counted in depth alone.
	if len(s.levels) == 0 {
		s.depth = 0
	}
}

// token records what a significant token means for the next one.
func (s *nestScanner) token(termEnd, bracket bool) {
	s.termEnd, s.afterBrk = termEnd, bracket
}

func (s *nestScanner) code() {
	c, next := s.src[s.i], s.at(1)
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		s.i++
	case c == '\n':
		s.i++
		// A newline ends an expression in a body or object, not inside
		// parentheses, brackets or a template sequence.
		if n := len(s.levels); n == 0 || s.levels[n-1].open == '{' {
			s.chainReset()
		}
	case c == '#' || c == '/' && next == '/':
		s.skipLine()
	case c == '/' && next == '*' && s.blockComment():
	case c == '"':
		s.i++
		s.push('"')
		s.modes = append(s.modes, scanMode{kind: '"'})
		s.token(false, false)
	case c == '<' && next == '<' && s.heredoc():
	case c == '{':
		s.i++
		s.braces++
		s.push('{')
		s.token(false, false)
	case c == '}' || c == '~' && next == '}':
		s.i++
		if c == '~' {
			s.i++
		}
		s.closeBrace()
		s.token(true, false)
	case c == '(' || c == '[':
		if c == '[' && s.termEnd {
			s.chainUp()
		}
		s.i++
		s.push(c)
		s.token(false, c == '[')
	case c == ')' || c == ']':
		s.i++
		s.pop()
		s.token(true, false)
	case c >= '0' && c <= '9':
		s.number()
		s.token(true, false)
	case c >= 0x80:
		s.nonASCII = true
	case isIdentStart(c):
		for s.i++; s.i < len(s.src) && isIdentPart(s.src[s.i]); s.i++ {
		}
		s.token(true, false)
	default:
		s.operator(c, next)
	}
}

func (s *nestScanner) operator(c, next byte) {
	s.i++
	switch c {
	case '=':
		switch next {
		case '=':
			s.i++
			s.chainUp()
		case '>':
			s.i++
			s.chainReset()
		default:
			s.chainReset()
		}
	case '!', '<', '>':
		if next == '=' {
			s.i++
		}
		s.chainUp()
	case '&', '|':
		if next == c {
			s.i++
			s.chainUp()
		}
	case '+', '-', '/', '%', '?':
		s.chainUp()
	case '*':
		if !s.afterBrk {
			s.chainUp()
		}
	case ',':
		s.chainReset()
	}
	s.token(false, false)
}

// closeBrace ends a template sequence if the brace count says so, as the
// lexer decides, or else a brace.
func (s *nestScanner) closeBrace() {
	if n := len(s.retBraces); n > 0 && s.retBraces[n-1] == s.braces {
		s.retBraces = s.retBraces[:n-1]
		if len(s.modes) > 1 {
			s.modes = s.modes[:len(s.modes)-1]
		}
	}
	s.braces--
	s.pop()
}

// blockComment skips a /* */ comment. Without its "*/" it is no
// comment: the lexer reads '/' and '*' as operators.
func (s *nestScanner) blockComment() bool {
	if s.noBlockEnd {
		return false
	}
	j := bytes.Index(s.src[s.i+2:], []byte("*/"))
	if j < 0 {
		// Nor is there one for any later "/*".
		s.noBlockEnd = true
		return false
	}
	s.i += 2 + j + 2
	return true
}

func (s *nestScanner) skipLine() {
	if j := bytes.IndexByte(s.src[s.i:], '\n'); j >= 0 {
		s.i += j + 1
	} else {
		s.i = len(s.src)
	}
}

// number skips a number literal as the lexer reads it: an exponent is
// part of it only when a digit follows the 'e' and its sign.
func (s *nestScanner) number() {
	for s.i < len(s.src) {
		switch c := s.src[s.i]; {
		case c >= '0' && c <= '9' || c == '.':
			s.i++
		case c == 'e' || c == 'E':
			j := s.i + 1
			if j < len(s.src) && (s.src[j] == '+' || s.src[j] == '-') {
				j++
			}
			if j >= len(s.src) || s.src[j] < '0' || s.src[j] > '9' {
				return
			}
			s.i = j + 1
		default:
			return
		}
	}
}

// heredoc starts a heredoc if "<<" begins an introducer: an optional
// '-', an identifier and a newline. Only ASCII markers are recognized;
// anything else stays code.
func (s *nestScanner) heredoc() bool {
	j := s.i + 2
	if j < len(s.src) && s.src[j] == '-' {
		j++
	}
	start := j
	if j >= len(s.src) || !(isASCIILetter(s.src[j]) || s.src[j] == '_') {
		return false
	}
	for j < len(s.src) && (isASCIILetter(s.src[j]) || s.src[j] >= '0' && s.src[j] <= '9' || s.src[j] == '_' || s.src[j] == '-') {
		j++
	}
	marker := s.src[start:j]
	if j < len(s.src) && s.src[j] == '\r' {
		j++
	}
	if j >= len(s.src) || s.src[j] != '\n' {
		return false
	}
	s.i = j + 1
	s.push('h')
	s.modes = append(s.modes, scanMode{kind: 'h', marker: marker, startOfLine: true})
	s.token(false, false)
	return true
}

func (s *nestScanner) quoted() {
	switch s.src[s.i] {
	case '"':
		s.i++
		s.pop()
		s.modes = s.modes[:len(s.modes)-1]
		s.token(true, false)
	case '\\':
		s.i++
		if c := s.at(0); c != 0 && c != '\n' && c != '\r' {
			s.i++
		}
	case '$', '%':
		s.sequence(nil)
	default:
		s.i++
	}
}

// template scans heredoc and bare template text.
func (s *nestScanner) template(m *scanMode) {
	if m.kind == 'h' && m.startOfLine {
		end := bytes.IndexByte(s.src[s.i:], '\n')
		if end < 0 {
			end = len(s.src) - s.i
		}
		if bytes.Equal(bytes.TrimSpace(s.src[s.i:s.i+end]), m.marker) {
			s.i += end
			s.pop()
			s.modes = s.modes[:len(s.modes)-1]
			s.token(true, false)
			return
		}
		m.startOfLine = false
	}
	switch s.src[s.i] {
	case '\n':
		s.i++
		m.startOfLine = true
	case '$', '%':
		s.sequence(m)
	default:
		s.i++
	}
}

// sequence handles '$' or '%' in a template: "${" and "%{" open a
// sequence of code, "$${" and "%%{" are literal.
func (s *nestScanner) sequence(m *scanMode) {
	c := s.src[s.i]
	switch {
	case s.at(1) == '{':
		s.i += 2
		if s.at(0) == '~' {
			s.i++
		}
		if m != nil {
			m.startOfLine = false
		}
		if c == '%' {
			s.directives = max(0, s.directives+s.directive())
		}
		s.braces++
		s.retBraces = append(s.retBraces, s.braces)
		s.push('$')
		s.modes = append(s.modes, scanMode{kind: 'c'})
		s.token(false, false)
	case s.at(1) == c && s.at(2) == '{':
		s.i += 3
	default:
		s.i++
	}
}

// directive reads the keyword after "%{".
func (s *nestScanner) directive() int {
	j := s.i
	for j < len(s.src) && (s.src[j] == ' ' || s.src[j] == '\t') {
		j++
	}
	k := j
	for k < len(s.src) && isASCIILetter(s.src[k]) {
		k++
	}
	return directiveStep(string(s.src[j:k]))
}

// directiveStep is +1 for a template directive that opens (if, for), -1
// for one that closes (endif, endfor): directives nest without brackets.
func directiveStep(keyword string) int {
	switch keyword {
	case "if", "for":
		return 1
	case "endif", "endfor":
		return -1
	}
	return 0
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isIdentStart(c byte) bool { return isASCIILetter(c) || c == '_' }

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '-' }

// checkJSONNesting scans HCL's JSON syntax: arrays and objects nest, and
// strings are parsed as native templates when evaluated, so those with a
// template sequence are scanned with the depth left at their position.
func checkJSONNesting(filename string, src []byte, limit int) *LimitError {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '{', '[':
			depth++
			if depth > limit {
				return (limits{depth: limit}).depthError(offsetRange(filename, src, hcl.InitialPos, i))
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		case '"':
			end := jsonStringEnd(src, i)
			if err := checkJSONString(filename, src, i, end, limit-depth); err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// jsonStringEnd is the index of the quote closing the string opened at
// start, or the last index if it is unterminated.
func jsonStringEnd(src []byte, start int) int {
	for j := start + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(src) - 1
}

func checkJSONString(filename string, src []byte, start, end, limit int) *LimitError {
	raw := src[start : end+1]
	text := raw[1:]
	if len(text) > 0 && text[len(text)-1] == '"' {
		text = text[:len(text)-1]
	}
	if bytes.IndexByte(raw, '\\') >= 0 {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			text = []byte(s)
		}
	}
	if !bytes.Contains(text, []byte("${")) && !bytes.Contains(text, []byte("%{")) {
		return nil
	}
	pos := offsetRange(filename, src, hcl.InitialPos, start).Start
	return checkNativeNesting(filename, text, pos, lexTemplate, limit)
}

// offsetRange is the position of byte offset off of src, which begins at
// start, for error messages.
func offsetRange(filename string, src []byte, start hcl.Pos, off int) hcl.Range {
	lines := bytes.Count(src[:off], []byte{'\n'})
	pos := hcl.Pos{Line: start.Line + lines, Byte: start.Byte + off}
	if lines == 0 {
		pos.Column = start.Column + off
	} else {
		pos.Column = off - bytes.LastIndexByte(src[:off], '\n')
	}
	return hcl.Range{Filename: filename, Start: pos, End: pos}
}
