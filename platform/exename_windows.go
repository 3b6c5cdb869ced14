package platform

import (
	"os"
	"strings"
)

// checkExeName applies R62 on Windows: the portable rule of checkWindowsExeName (an
// explicit ".exe", no trailing dot or space, no stream), plus what only matters to the
// Win32 path parser (checkWin32Path).
func checkExeName(path string) error {
	if err := checkWindowsExeName(path); err != nil {
		return err
	}
	return checkWin32Path(path)
}

// checkExecutable: Windows has no execute bit; the .exe rule and CreateProcess decide.
func checkExecutable(os.FileInfo) error { return nil }

// checkWin32Path refuses what Win32 would not take as the plain file the name shows:
//   - characters no file name may hold (control characters, `"<>|?*`): wildcards and
//     quotes have no place in an explicit path, and a quote could not be represented in
//     the program name of the command line;
//   - the NT object prefix `\??\` and the device and verbatim prefixes written with any
//     mix of slashes (`//./`, `//?/`), which bypass the usual normalisation or name
//     devices;
//   - a last element that is a reserved DOS device name (CON, NUL, COM1, ...): before
//     Windows 11, "NUL.exe" or "con .exe" in any directory opens the device.
//
// Short (8.3) names are accepted: CreateProcess falls back to cmd.exe for a batch file
// by the extension of the name it is given, so "PROGRA~1.EXE" is loaded as an image (and
// refused unless it is one) whatever its long name.
func checkWin32Path(path string) error {
	if strings.ContainsFunc(path, func(r rune) bool { return r < 0x20 || strings.ContainsRune(`"<>|?*`, r) }) {
		// '?' also refuses every spelling of `\\?\` and `\??\`.
		return errNotExe
	}
	sep := func(c byte) bool { return c == '\\' || c == '/' }
	if len(path) >= 4 && sep(path[0]) && sep(path[1]) && path[2] == '.' && sep(path[3]) {
		return errNotExe
	}
	base := path[strings.LastIndexAny(path, `\/`)+1:]
	if isDOSDeviceName(base) {
		return errNotExe
	}
	return nil
}

// isDOSDeviceName reports whether Win32 may read the file name as a reserved device: the
// part before the first dot, trailing spaces removed, compared without case.
func isDOSDeviceName(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(stem) >= 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) {
		switch stem[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}
