//go:build cgo && unix

// The block's coroutines on Unix (see emu.go): on x86-64 a switch saves
// and restores the callee-saved registers and the stack pointer (a few
// nanoseconds); elsewhere it is swapcontext, which also makes a system
// call to save the signal mask.
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>

#define EMU_STACK (64 * 1024)

static char *stacks;
static unsigned cap;
static void (*body_fn)(void);

#if defined(__x86_64__)
// emu_swap(from, to) saves this coroutine's stack pointer in *from and
// continues the one whose stack pointer is to (System V ABI).
void emu_swap(void **from, void *to);
__asm__(
	".text\n"
	".p2align 4\n"
	"emu_swap:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n");
static void *sched_sp, **sp;
static unsigned running;

// start is where a new coroutine begins (emu_swap returns into it); after
// the body it goes back to the scheduler for good.
static void start(void) {
	body_fn();
	for (;;) emu_swap(&sp[running], sched_sp);
}

int emu_coro_alloc(unsigned nt) {
	if (nt <= cap) return 1;
	free(stacks);
	free(sp);
	stacks = malloc((size_t)nt * EMU_STACK);
	sp = calloc(nt, sizeof *sp);
	cap = stacks && sp ? nt : 0;
	return cap != 0;
}

void emu_coro_init(unsigned t, void (*body)(void)) {
	body_fn = body;
	char *top = stacks + (size_t)(t + 1) * EMU_STACK;
	uintptr_t a = ((uintptr_t)top - 16) & ~(uintptr_t)15; // as if called: (rsp after ret) % 16 == 8
	void **s = (void **)a;
	s[0] = (void *)start; // the return address of emu_swap
	for (int r = 1; r <= 6; r++) s[-r] = 0; // rbp rbx r12 r13 r14 r15
	sp[t] = (void *)(s - 6);
}

void emu_coro_resume(unsigned t) {
	running = t;
	emu_swap(&sched_sp, sp[t]);
}

void emu_coro_yield(unsigned t) { emu_swap(&sp[t], sched_sp); }
#else
static ucontext_t sched, *ctx;

static void start(void) { body_fn(); }

int emu_coro_alloc(unsigned nt) {
	if (nt <= cap) return 1;
	free(stacks);
	free(ctx);
	stacks = malloc((size_t)nt * EMU_STACK);
	ctx = calloc(nt, sizeof *ctx);
	cap = stacks && ctx ? nt : 0;
	return cap != 0;
}

void emu_coro_init(unsigned t, void (*body)(void)) {
	body_fn = body;
	getcontext(&ctx[t]);
	ctx[t].uc_stack.ss_sp = stacks + (size_t)t * EMU_STACK;
	ctx[t].uc_stack.ss_size = EMU_STACK;
	ctx[t].uc_link = &sched;
	makecontext(&ctx[t], start, 0);
}

void emu_coro_resume(unsigned t) { swapcontext(&sched, &ctx[t]); }

void emu_coro_yield(unsigned t) { swapcontext(&ctx[t], &sched); }
#endif
