package resp

// globMatch reports whether s matches the glob pattern p as Redis's
// stringmatchlen (util.c, Redis 7.0) matches KEYS and SCAN MATCH patterns:
// '*' any run of bytes, '?' one byte, "[abc]", "[^abc]" and "[a-z]" one
// byte of (or not of) a set, '\' quotes the next byte. It is a port of
// that function, quirks included: an unterminated '[' set ends with the
// pattern, and an empty string matches no pattern but ones Redis
// special-cases before calling it ("*" alone, see matchAll).
func globMatch(p, s []byte) bool {
	skipLonger := false
	return globMatchAt(p, s, &skipLonger, 0)
}

// matchAll reports whether p is "*", which Redis's KEYS and SCAN treat as
// matching every key without calling the matcher.
func matchAll(p []byte) bool { return len(p) == 1 && p[0] == '*' }

// globMatchAt is stringmatchlen_impl. skipLonger is set once the rest of
// the pattern after a '*' matched nowhere in the rest of the string: then
// no earlier '*' can help by matching more, which keeps patterns like
// "*a*a*a*b" from taking exponential time. nesting bounds the recursion,
// as Redis bounds it.
func globMatchAt(p, s []byte, skipLonger *bool, nesting int) bool {
	if nesting > 1000 {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for ; len(s) > 0; s = s[1:] {
				if globMatchAt(p[1:], s, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) >= 2 && p[0] == '\\' {
					p = p[1:]
					match = match || p[0] == s[0]
				} else if len(p) == 0 {
					// Unterminated: the set ends with the pattern. Keep
					// one byte for the step past ']' below to consume.
					p = []byte{']'}
					break
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					match = match || lo <= s[0] && s[0] <= hi
					p = p[2:]
				} else {
					match = match || p[0] == s[0]
				}
				p = p[1:]
			}
			if match == not {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}
