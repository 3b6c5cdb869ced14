package platform

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
)

// envBlock builds a Windows CREATE_UNICODE_ENVIRONMENT block from env: each "name=value"
// as UTF-16, NUL-terminated, then one more NUL. It is used by the Windows launcher and is
// platform-neutral so that its rules are tested everywhere.
//
//   - Entries are sorted by name, case-insensitively, as the Win32 documentation on
//     environment blocks requires ("sorted alphabetically by name, case-insensitive,
//     Unicode order, without regard to locale"): each UTF-16 code unit is compared in
//     upper case. The sort is stable, so duplicated names keep their order and
//     GetEnvironmentVariable, like getenv on POSIX, finds the first one given.
//   - An empty env gives two NULs, never nil: nil would make the adapter inherit the
//     host's environment.
//   - An empty entry would end the block early, silently dropping what follows, and an
//     entry without a name is not a variable: both are refused, as is a NUL inside an
//     entry. A leading "=" belongs to the name (the per-drive current directories,
//     "=C:=C:\dir").
func envBlock(env []string) ([]uint16, error) {
	type entry struct{ key, kv []uint16 }
	entries := make([]entry, 0, len(env))
	for _, kv := range env {
		name, ok := envName(kv)
		if !ok {
			return nil, fmt.Errorf("environment entry %q is not name=value", kv)
		}
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("environment entry %q contains NUL", kv)
		}
		entries = append(entries, entry{key: upperUTF16(name), kv: utf16.Encode([]rune(kv))})
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return slices.Compare(a.key, b.key) })
	var block []uint16
	for _, e := range entries {
		block = append(append(block, e.kv...), 0)
	}
	if len(block) == 0 {
		block = append(block, 0)
	}
	return append(block, 0), nil
}

// envName returns the name of a "name=value" entry; a leading "=" is part of the name.
func envName(kv string) (string, bool) {
	i := strings.IndexByte(kv, '=')
	if i == 0 {
		i = strings.IndexByte(kv[1:], '=') + 1
	}
	if i <= 0 || (kv[0] == '=' && i == 1) {
		return "", false
	}
	return kv[:i], true
}

// upperUTF16 is s as UTF-16 with each code unit mapped to upper case by its simple case
// mapping (a surrogate is left as it is, as Windows' per-unit upcase table does).
func upperUTF16(s string) []uint16 {
	u := utf16.Encode([]rune(s))
	for i, c := range u {
		if !utf16.IsSurrogate(rune(c)) {
			if up := unicode.ToUpper(rune(c)); up <= 0xFFFF {
				u[i] = uint16(up)
			}
		}
	}
	return u
}
