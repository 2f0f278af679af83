package nvml

import "testing"

func TestReturnNames(t *testing.T) {
	for r, want := range map[Return]string{
		Success: "SUCCESS", ErrorLibraryNotFound: "ERROR_LIBRARY_NOT_FOUND",
		ErrorDriverNotLoaded: "ERROR_DRIVER_NOT_LOADED", ErrorLibRMVersionMismatch: "ERROR_LIB_RM_VERSION_MISMATCH",
		ErrorUnknown: "ERROR_UNKNOWN", Return(77): "ERROR_CODE_77",
	} {
		if got := r.String(); got != want {
			t.Errorf("Return(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}

func TestUsedMiB(t *testing.T) {
	if got := (ProcessInfo{UsedGPUMemory: 5 << 20}).UsedMiB(); got != 5 {
		t.Errorf("5 MiB read as %d", got)
	}
	if got := (ProcessInfo{UsedGPUMemory: ValueNotAvailable}).UsedMiB(); got != 0 {
		t.Errorf("WDDM's not-available read as %d MiB, want 0", got)
	}
}

func TestCString(t *testing.T) {
	if got := cString([]int8{'a', 'b', 0, 'c'}); got != "ab" {
		t.Errorf("%q", got)
	}
	if got := cString([]byte{'x', 'y'}); got != "xy" {
		t.Errorf("unterminated: %q", got)
	}
}
