//go:build !windows && !(linux && cgo)

package nvml

// New returns NVML where gpuwizard has no binding for it (macOS, the BSDs,
// Linux without cgo, which go-nvml needs): a library that is not there, as
// on a machine without the driver.
func New() Library { return absent{} }

// absent is an NVML that cannot be loaded: Init answers
// ErrorLibraryNotFound, every other call ErrorUninitialized.
type absent struct{}

func (absent) Init() Return                                 { return ErrorLibraryNotFound }
func (absent) Shutdown() Return                             { return ErrorUninitialized }
func (absent) SystemGetDriverVersion() (string, Return)     { return "", ErrorUninitialized }
func (absent) SystemGetNVMLVersion() (string, Return)       { return "", ErrorUninitialized }
func (absent) SystemGetCudaDriverVersion_v2() (int, Return) { return 0, ErrorUninitialized }
func (absent) SystemGetCudaDriverVersion() (int, Return)    { return 0, ErrorUninitialized }
func (absent) DeviceGetCount() (int, Return)                { return 0, ErrorUninitialized }
func (absent) DeviceGetHandleByIndex(int) (Device, Return)  { return nil, ErrorUninitialized }
