/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Go programs
 * under Wine 8 (Debian 12), whose own copy lacks ProcessPrng: the Go
 * runtime (1.24 and newer) takes its random numbers from ProcessPrng and
 * stops at start-up without it. ProcessPrng is implemented here with
 * RtlGenRandom (advapi32's SystemFunction036), which Wine has.
 *
 * Built with mingw by tools/wine/prefix.sh and placed in the test prefix's
 * system32 only; never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
	while (length > 0) {
		ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}
