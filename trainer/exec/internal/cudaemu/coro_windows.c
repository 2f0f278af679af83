//go:build cgo

// The block's coroutines on Windows (see emu.go): fibers. Each fiber runs
// the body in a loop, going back to the scheduler after each, so a fiber
// made once serves every block; the scheduler is the calling thread, made
// a fiber on first use (it stays one: the emulator is for tests).
#include <stdlib.h>
#include <windows.h>

#define EMU_STACK_COMMIT (64 * 1024)
#define EMU_STACK_RESERVE (256 * 1024)

static LPVOID *fibers;
static unsigned cap;
static LPVOID sched;
static void (*body_fn)(void);

static VOID CALLBACK fiber_main(LPVOID arg) {
	(void)arg;
	for (;;) {
		body_fn();
		SwitchToFiber(sched);
	}
}

int emu_coro_alloc(unsigned nt) {
	if (nt <= cap) return 1;
	LPVOID *grown = realloc(fibers, nt * sizeof *fibers);
	if (!grown) return 0;
	fibers = grown;
	for (; cap < nt; cap++) {
		fibers[cap] = CreateFiberEx(EMU_STACK_COMMIT, EMU_STACK_RESERVE, 0, fiber_main, NULL);
		if (!fibers[cap]) return 0;
	}
	return 1;
}

// A fiber is always back at the top of its loop when a block starts (the
// previous block ran every fiber to the end of the body).
void emu_coro_init(unsigned t, void (*body)(void)) {
	(void)t;
	body_fn = body;
}

void emu_coro_resume(unsigned t) {
	sched = IsThreadAFiber() ? GetCurrentFiber() : ConvertThreadToFiber(NULL);
	SwitchToFiber(fibers[t]);
}

void emu_coro_yield(unsigned t) {
	(void)t;
	SwitchToFiber(sched);
}
