/*
 * bcryptprimitives.dll for a Wine prefix that runs adapterkit's Windows test binaries
 * (`make test-windows`). Go >= 1.22 draws its random numbers from ProcessPrng, which
 * Wine 8's bcryptprimitives.dll does not export; without it a Go program aborts at
 * start. This DLL exports ProcessPrng on top of RtlGenRandom (SystemFunction036 in
 * advapi32), which Wine has. It is only ever copied into the throwaway prefix under
 * build/, never into a Windows installation.
 *
 *   x86_64-w64-mingw32-gcc -shared -o bcryptprimitives.dll processprng.c -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
	while (length > 0) {
		ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}
