package testkit

import (
	"sync"

	"golang.org/x/sys/windows"
)

// Wine reports whether this process runs under Wine: Wine's ntdll exports
// wine_get_version, which Windows' ntdll does not.
var Wine = sync.OnceValue(func() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
})
